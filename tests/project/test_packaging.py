"""``pip install .`` (the README's first command) must ship every package of the source tree.

pyproject.toml lists packages by hand (each top-level folder is mapped onto its ``kraftwire.`` name), so a
new subpackage that is not listed would install a ``kraftwire`` whose ``kraftwire serve`` cannot import it.
"""
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_source_package_is_listed_in_pyproject():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    mapped = {package: ROOT / directory for package, directory in config["package-dir"].items()}
    roots = {package: ROOT / package for package in listed if "." not in package and package not in mapped}
    roots.update(mapped)
    mapped_dirs = set(mapped.values())
    found = set()
    for package, directory in roots.items():
        for init in directory.rglob("__init__.py"):
            parts = init.parent.relative_to(directory).parts
            inner_root = any(parent in mapped_dirs for parent in init.parents if parent != directory
                             and directory in parent.parents)  # a folder mapped to a package of its own
            if "__pycache__" not in parts and not inner_root:
                found.add(".".join((package, *parts)))
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
