"""``pip install .`` (the README's first command) must ship every package of the source tree.

pyproject.toml lists packages by hand (``kraftwire_schemas`` is mapped onto ``schemas/``), so a new
subpackage that is not listed would install a ``kraftwire`` whose ``kraftwire serve`` cannot import it.
"""
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_source_package_is_listed_in_pyproject():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    mapped = {package: ROOT / directory for package, directory in config["package-dir"].items()}
    roots = {package: ROOT / package for package in listed if "." not in package and package not in mapped}
    roots.update(mapped)
    found = set()
    for package, directory in roots.items():
        for init in directory.rglob("__init__.py"):
            parts = init.parent.relative_to(directory).parts
            if "__pycache__" not in parts:
                found.add(".".join((package, *parts)))
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
