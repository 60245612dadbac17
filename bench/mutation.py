"""Mutation testing of the decision modules with cosmic-ray: does each one-token change of the code fail
a test?

    python bench/mutation.py [--module NAME ...] [--sample N] [--seed S] [--jobs J] [--out DIR]

The modules, the fast pure tests that cover each, and the functions mutated where a module also holds
tables or I/O, are in pyproject.toml under ``[tool.kraftwire.mutation]``. Each module runs in its own
copy of the source tree (cosmic-ray mutates files in place; the checkout is never touched), imported
through a ``kraftwire`` package of symlinks into that copy, so several modules can run at once.
``--sample N`` runs N mutants per module drawn at random (with ``--seed``), the others are marked
skipped: the score printed is then over the sample. Prints killed/run per module and writes every
survivor's diff to DIR/<module>-survivors.txt and each module's cosmic-ray session to
DIR/<module>.sqlite (DIR defaults to a new temporary directory).

A mutant costs one pytest start plus its tests, so the start is kept small: no plugins but
pytest-asyncio (autoloaded plugins would also make pytest rewrite the asserts of every kraftwire module,
since the kraftwire distribution registers one), no conftest.py (it imports the whole cluster; the
listed tests use none of its fixtures), and byte code compiled once per copy (cosmic-ray runs the tests
with PYTHONDONTWRITEBYTECODE, so nothing would ever be cached): checked-hash .pyc files for the sources,
which Python recompiles when a mutant changes the source, and pytest's rewritten tests, written by the
unmutated run that also checks the tests pass and sets the timeout.
Needs ``pip install cosmic-ray`` (not part of the test extra). Not run by CI.
"""
from __future__ import annotations

import argparse
import ast
import concurrent.futures
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE_DIRS = {"codec": "codec", "server": "server", "audit": "audit", "schemas": "schemas"}  # kraftwire.<name>
COPIED = ["codec", "server", "audit", "schemas", "tests", "pyproject.toml"]
IGNORED = shutil.ignore_patterns("__pycache__", "node_modules", "*.pyc", ".hypothesis")
PYTEST = ["-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "pytest_asyncio.plugin", "--noconftest"]
TIMEOUT_FACTOR = 5  # a mutant's tests may take this many times the unmutated run before counting as killed


def settings() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["kraftwire"]["mutation"]


def make_tree(where: Path) -> tuple[Path, Path]:
    """A copy of the sources and tests, and a directory whose ``kraftwire`` package resolves to that copy
    (found before the editable install's finder, which maps ``kraftwire`` to the checkout)."""
    tree = where / "tree"
    tree.mkdir(parents=True)
    for name in COPIED:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, tree / name, ignore=IGNORED)
        else:
            shutil.copy2(source, tree / name)
    imports = where / "import"
    package = imports / "kraftwire"
    package.mkdir(parents=True)
    for item in (tree / "server" / "public").iterdir():
        (package / item.name).symlink_to(item)
    for name, folder in PACKAGE_DIRS.items():
        (package / name).symlink_to(tree / folder)
    return tree, imports


def function_lines(path: Path, names: list[str]) -> list[tuple[int, int]]:
    """Line spans of the named functions (``name`` or ``Class.method``) of a module."""
    spans, found = [], set()

    def visit(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qualified = prefix + node.name
                if qualified in names:
                    spans.append((node.lineno, node.end_lineno))
                    found.add(qualified)
                if isinstance(node, ast.ClassDef):
                    visit(node.body, qualified + ".")

    visit(ast.parse(path.read_text()).body, "")
    missing = set(names) - found
    if missing:
        raise SystemExit(f"{path}: no function named {sorted(missing)}")
    return spans


def annotation_spans(path: Path) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) positions of the annotations of a module that never evaluates them (``from __future__
    import annotations``): a mutant there cannot change behaviour, so it is not run."""
    tree = ast.parse(path.read_text())
    if not any(isinstance(node, ast.ImportFrom) and node.module == "__future__"
               and any(alias.name == "annotations" for alias in node.names) for node in tree.body):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.arg, ast.AnnAssign)):
            found.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append(node.returns)
    return [((a.lineno, a.col_offset), (a.end_lineno, a.end_col_offset)) for a in found if a is not None]


def select(session: Path, module_file: Path, functions: list[str] | None, sample: int | None,
           seed: int) -> tuple[int, int]:
    """Mark as skipped the mutants outside ``functions``, in annotations and outside the sample; returns
    how many remain and how many there are in ``functions`` outside annotations."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    spans = function_lines(module_file, functions) if functions else None
    with use_db(str(session), WorkDB.Mode.open) as db:
        # in source order (job ids are random): the same seed samples the same mutants in every run
        items = sorted(db.pending_work_items, key=lambda item: (
            item.mutations[0].start_pos, item.mutations[0].operator_name, item.mutations[0].occurrence))
        annotations = annotation_spans(module_file)
        inside = [item for item in items
                  if (spans is None or any(low <= item.mutations[0].start_pos[0] <= high for low, high in spans))
                  and not any(low <= tuple(item.mutations[0].start_pos) < high for low, high in annotations)]
        kept = inside if sample is None or sample >= len(inside) else random.Random(seed).sample(inside, sample)
        kept_ids = {item.job_id for item in kept}
        skipped = [item.job_id for item in items if item.job_id not in kept_ids]
        if skipped:
            db.set_multiple_results(skipped, WorkResult(worker_outcome=WorkerOutcome.SKIPPED))
        return len(kept), len(inside)


def run_module(name: str, spec: dict, options, scratch: Path) -> dict:
    where = scratch / name
    tree, imports = make_tree(where)
    env = {**os.environ, "PYTHONPATH": str(imports), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    test_command = [sys.executable, *PYTEST, *spec["tests"]]
    subprocess.run([sys.executable, "-m", "compileall", "-q", "--invalidation-mode", "checked-hash",
                    *PACKAGE_DIRS.values()], cwd=tree, env=env, check=True, capture_output=True)
    started = time.monotonic()
    unmutated = subprocess.run(test_command, cwd=tree, capture_output=True, text=True,
                               env={key: value for key, value in env.items() if key != "PYTHONDONTWRITEBYTECODE"})
    seconds = time.monotonic() - started
    if unmutated.returncode != 0:
        return {"name": name, "error": "the tests fail on the unmutated code:\n" + unmutated.stdout + unmutated.stderr}
    timeout = options.timeout or max(settings()["timeout"], TIMEOUT_FACTOR * seconds)
    config = where / "cosmic-ray.toml"
    config.write_text(
        "[cosmic-ray]\n"
        f'module-path = "{spec["path"]}"\n'
        f"timeout = {float(timeout)}\n"
        "excluded-modules = []\n"
        f'test-command = "{" ".join(test_command)}"\n'
        '[cosmic-ray.distributor]\nname = "local"\n')
    session = options.out / f"{name}.sqlite"
    session.unlink(missing_ok=True)
    cosmic = [sys.executable, "-m", "cosmic_ray.cli"]
    subprocess.run([*cosmic, "init", str(config), str(session)], cwd=tree, env=env, check=True,
                   capture_output=True)
    runs, mutants = select(session, tree / spec["path"], spec.get("functions"), options.sample, options.seed)
    started = time.monotonic()
    subprocess.run([*cosmic, "exec", str(config), str(session)], cwd=tree, env=env, check=True, capture_output=True)
    elapsed = time.monotonic() - started
    result = {**summarize(name, session, options.out), "path": spec["path"], "mutants": mutants, "sampled": runs,
              "unmutated": seconds, "per mutant": elapsed / max(runs, 1)}
    print(f"{name}: {result['killed']} of {runs} killed in {elapsed / 60:.1f} min "
          f"(the unmutated tests {seconds:.1f} s)", flush=True)
    return result


def summarize(name: str, session: Path, out: Path) -> dict:
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome

    counts = {"killed": 0, "survived": 0, "incompetent": 0, "not run": 0, "timeouts": 0}
    survivors = []
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            if result.worker_outcome != WorkerOutcome.NORMAL:
                counts["not run"] += 1
            elif result.test_outcome == TestOutcome.KILLED:
                counts["killed"] += 1
                counts["timeouts"] += result.output == "timeout"
            elif result.test_outcome == TestOutcome.SURVIVED:
                counts["survived"] += 1
                mutation = item.mutations[0]
                survivors.append(f"--- {name} line {mutation.start_pos[0]}: {mutation.operator_name}\n{result.diff}\n")
            else:
                counts["incompetent"] += 1
    (out / f"{name}-survivors.txt").write_text("".join(survivors))
    return {"name": name, **counts}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", action="append", help="a module's name in pyproject (default: all)")
    parser.add_argument("--sample", type=int, help="mutants per module, drawn at random (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="modules run at once")
    parser.add_argument("--timeout", type=float, help="seconds per mutant's test run (default: five times the "
                        "unmutated run, at least pyproject's timeout)")
    parser.add_argument("--out", type=Path, help="where survivors and sessions are written (default: a new "
                        "temporary dir)")
    options = parser.parse_args(argv)
    modules = settings()["modules"]
    names = options.module or list(modules)
    unknown = set(names) - set(modules)
    if unknown:
        parser.error(f"unknown modules {sorted(unknown)}; known: {', '.join(modules)}")
    options.out = options.out or Path(tempfile.mkdtemp(prefix="kraftwire-mutation-"))
    options.out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="kraftwire-mutation-trees-"))
    try:
        with concurrent.futures.ThreadPoolExecutor(options.jobs) as pool:
            results = list(pool.map(lambda name: run_module(name, modules[name], options, scratch), names))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{'module':<17} {'path':<52} {'mutants':>7} {'run':>5} {'killed':>6} {'survived':>8} {'other':>5} "
          f"{'score':>6} {'s/mutant':>8}")
    failed = False
    for result in results:
        if "error" in result:
            print(f"{result['name']}: {result['error']}")
            failed = True
            continue
        run = result["killed"] + result["survived"]
        score = f"{100 * result['killed'] / run:.1f}%" if run else "-"
        print(f"{result['name']:<17} {result['path']:<52} {result['mutants']:>7} {run:>5} {result['killed']:>6} "
              f"{result['survived']:>8} {result['incompetent'] + result['not run']:>5} {score:>6} "
              f"{result['per mutant']:>8.1f}")
    timeouts = sum(result.get("timeouts", 0) for result in results)
    print(f"killed by a timeout: {timeouts}; survivors: {options.out}/<module>-survivors.txt")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
