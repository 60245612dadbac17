"""pytest imports each test module by its file name alone (tests/ has no __init__.py files, so "prepend"
import mode puts each test's folder on sys.path): two test files of one name in different folders break
the collection of the whole suite with an import-file-mismatch error. This says which, up front."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_two_test_modules_share_a_file_name():
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("*.py"):
        if "node_modules" in path.parts or path.name in ("conftest.py", "__init__.py"):
            continue
        by_name[path.name].append(str(path.relative_to(TESTS)))
    shared = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert not shared, f"test modules share a file name (rename one of each): {shared}"
