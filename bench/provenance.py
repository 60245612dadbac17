"""What every benchmark prints first: the command that reproduces it, the commit it ran and the load."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def commit() -> str:
    """The checked-out commit, with ``+changes`` when the tree differs from it."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else "")


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def header(argv: list[str] | None = None) -> None:
    """Print the command (this script and its arguments as given), the commit and the load average."""
    argv = sys.argv if argv is None else argv
    script = os.path.relpath(os.path.abspath(argv[0]), ROOT)
    print(f"command: python {' '.join([script, *argv[1:]])}")
    print(f"commit: {commit()}")
    print(f"load average at start: {load_average()}", flush=True)


def export_commit(rev: str, into: Path) -> tuple[str, Path]:
    """``git archive`` of ``rev`` under ``into``, with a directory whose ``kraftwire`` package resolves to
    that copy (laid out by the copy's own pyproject package-dir; put it first on PYTHONPATH, where it is
    found before the editable install's finder): (the commit's short hash, that directory)."""
    import tomllib

    short = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.strip()
    tree, imports = into / "tree", into / "import"
    tree.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", short], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    package_dir = tomllib.loads((tree / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    for name, folder in sorted(package_dir.items()):  # "kraftwire" before "kraftwire.codec"...
        target = imports.joinpath(*name.split("."))
        if name == "kraftwire":
            target.mkdir(parents=True)
            for item in (tree / folder).iterdir():
                (target / item.name).symlink_to(item)
        else:
            target.symlink_to(tree / folder)
    return short, imports


def rerun_at(rev: str, script: str, argv: list[str]) -> int:
    """Run ``script`` again with ``argv`` on an exported copy of commit ``rev`` (``export_commit``), in a
    process of its own; its exit code."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="kraftwire-bench-") as scratch:
        short, imports = export_commit(rev, Path(scratch))
        sys.stdout.flush()
        return subprocess.run([sys.executable, script, *argv, "--label", short],
                              env={**os.environ, "PYTHONPATH": str(imports)}).returncode
