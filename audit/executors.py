"""What a Spark audit needs besides the driver: the interpreter the Python workers run, the kraftwire
code on their path, the C libraries they import, and storage that every node sees.

* Interpreter: ``spark.pyspark.python`` when given; on a local master this very interpreter (so a
  virtualenv that is not activated, pipx or docker work); otherwise ``PYSPARK_PYTHON`` or Spark's
  default, ``python3`` on the executors' PATH. A driver started by plain Python reads only the
  environment variable, so the choice is put there before the SparkContext starts.
* Code: on a cluster master the driver zips ``kraftwire`` (its codec, audit and schemas, and the package's
  lazy ``__init__``; the server is not needed) and adds it with ``addPyFile``, whichever way the job started.
* Libraries: executors import pyarrow, crc32c and construct, and nothing else of ours (no pyspark,
  pandas or matplotlib). ``kraftwire audit pack-env`` packs just those into a tar.gz that the driver
  ships with ``spark.archives`` and puts on the workers' PYTHONPATH; without it the executors must
  have them installed. A probe job checks this before the audit and names the fix.
* Storage: every executor reads the log and writes its own parts of the tables, so on a cluster
  master a plain path, which names each node's own disk, is refused (``file://`` asserts a shared mount).

Imports nothing beyond the standard library: the probe runs on executors before anything is known
about them.
"""
from __future__ import annotations

import importlib
import os
import platform
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from importlib import metadata
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the probe must import nothing of pyspark on executors
    from pyspark import SparkContext

ProbeResult = tuple[str, str, str, list[str]]  # host, Python version, interpreter, libraries that fail

EXECUTOR_LIBRARIES = ("pyarrow", "crc32c", "construct")  # distribution names, also their import names
ENV_DIRECTORY = "kraftwire_env"  # where executors unpack the pack-env archive (spark.archives' #alias)
# What executors import of ours: the audit, the codec it decodes with and the JSON schemas the codec is built
# from at import (``codec.schema.load_package``), each package's folder whole. Of ``kraftwire`` itself only its
# ``__init__``, which imports nothing of the server until a name of the public API is asked for.
ROOT_PACKAGE = "kraftwire"
CODE_PACKAGES = ("kraftwire.codec", "kraftwire.audit", "kraftwire.schemas")
_CODE_SUFFIXES = (".py", ".json")
MIN_PYTHON = (3, 11)
_NOT_PACKED = ("/include/", "/tests/", "/src/", "__pycache__")
_NOT_PACKED_SUFFIXES = (".pxd", ".pyx", ".pxi", ".h", ".hpp", ".pyc")


def is_local(master: str | None) -> bool:
    return master is None or master.startswith("local")


def executor_python(master: str | None, settings: dict[str, str]) -> str | None:
    """The interpreter the Python workers should run (None: leave Spark's default)."""
    if settings.get("spark.pyspark.python"):
        return settings["spark.pyspark.python"]
    if is_local(master):
        return sys.executable
    return os.environ.get("PYSPARK_PYTHON")


def refuse_node_local(master: str | None, uris: list[str]) -> None:
    """ValueError if a cluster master is given a plain path: each node would see its own disk."""
    if is_local(master):
        return
    plain = [uri for uri in uris if "://" not in uri]
    if plain:
        raise ValueError(
            f"{', '.join(plain)}: a plain path names each node's own disk, but with master {master} every "
            "executor reads the log and writes its part of the tables. Use shared storage: hdfs://..., "
            "s3a://..., gs://..., or file:///... on a mount that every node shares (the file:// prefix "
            "asserts it is shared)")


def code_files() -> dict[str, str]:
    """The archive's entries (``kraftwire/codec/records.py``...) and the files they are read from, once each.

    A strict editable install lays ``kraftwire`` out as a tree of links whose root also holds the server, so
    only the named packages' own folders are walked, and each link is resolved to the file it names."""
    root = _package_folder(ROOT_PACKAGE)
    files = {f"{ROOT_PACKAGE}/__init__.py": os.path.realpath(os.path.join(root, "__init__.py"))}
    for package in CODE_PACKAGES:
        source = _package_folder(package)
        prefix = package.replace(".", "/")
        for folder, dirs, names in os.walk(source):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(names):
                if name.endswith(_CODE_SUFFIXES):
                    full = os.path.join(folder, name)
                    entry = f"{prefix}/{os.path.relpath(full, source)}".replace(os.sep, "/")
                    files.setdefault(entry, os.path.realpath(full))
    return files


def code_zip(directory: str) -> str:
    """A zip of the kraftwire code executors import (``code_files``), from wherever this driver loads it; the
    entries hold the files' contents (never links)."""
    path = os.path.join(directory, "kraftwire.zip")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for entry, source in code_files().items():
            with open(source, "rb") as f:
                z.writestr(entry, f.read())
    return path


def _package_folder(package: str) -> str:
    init = importlib.import_module(package).__file__
    if init is None:
        raise RuntimeError(f"{package} is not a regular package (no __init__.py): it cannot be shipped")
    return os.path.dirname(init)


def env_settings(archive: str) -> dict[str, str]:
    """Spark settings that unpack a pack-env archive next to every executor and put it on the
    Python workers' path (relative: a worker starts in its executor's working directory)."""
    return {"spark.archives": f"{archive}#{ENV_DIRECTORY}", "spark.executorEnv.PYTHONPATH": ENV_DIRECTORY}


def probe(_partition: Iterable[int]) -> Iterator[ProbeResult]:
    """Run on an executor: (host, Python version, interpreter, libraries that do not import)."""
    missing: list[str] = []
    for name in EXECUTOR_LIBRARIES:
        try:
            importlib.import_module(name)
        except Exception as exc:  # an ImportError, or a library built for another Python
            missing.append(f"{name} ({type(exc).__name__}: {exc})")
    yield socket.gethostname(), platform.python_version(), sys.executable, missing


def check_executors(sc: SparkContext) -> None:
    """RuntimeError naming the fix if an executor's Python is too old or lacks a library."""
    tasks = max(1, sc.defaultParallelism)
    sc.setJobDescription("kraftwire audit: check the executors' Python")
    try:
        found: set[tuple[str, str, str, tuple[str, ...]]] = set()
        for host, version, executable, failing in sc.parallelize(range(tasks), tasks).mapPartitions(probe).collect():
            found.add((host, version, executable, tuple(failing)))
    except Exception as exc:
        first_line = str(exc).splitlines()[0]
        raise RuntimeError(
            "the executors could not run the audit's Python (set spark.pyspark.python or PYSPARK_PYTHON to a "
            f"Python >= {'.'.join(map(str, MIN_PYTHON))} that every executor has): {first_line}") from None
    for host, version, executable, missing in sorted(found):
        if tuple(map(int, version.split(".")[:2])) < MIN_PYTHON:
            raise RuntimeError(f"executor {host} runs Python {version} ({executable}); kraftwire needs "
                               f"{'.'.join(map(str, MIN_PYTHON))} or later: set spark.pyspark.python or PYSPARK_PYTHON")
        if missing:
            raise RuntimeError(
                f"executor {host} ({executable}, Python {version}) cannot import {', '.join(missing)}: build "
                "the executors' libraries with `kraftwire audit pack-env kraftwire_env.tar.gz` and pass "
                "--executor-env kraftwire_env.tar.gz (or install pyarrow, crc32c and construct there)")


def pack_env(target: str, python_version: str | None = None, platform_tag: str | None = None) -> int:
    """Write a tar.gz of the executors' libraries (their site-packages content, nothing else) and
    return its size. By default copies this interpreter's installed distributions; with a Python
    version or platform, pip fetches wheels built for the executors instead."""
    with tempfile.TemporaryDirectory() as tmp:
        site = os.path.join(tmp, "site")
        if python_version is None and platform_tag is None:
            _copy_installed(site)
        else:
            _pip_install(site, python_version, platform_tag)
        with tarfile.open(target, "w:gz", compresslevel=1) as tar:
            for name in sorted(os.listdir(site)):
                tar.add(os.path.join(site, name), name, filter=_packed)
    return os.path.getsize(target)


def _packed(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    path = "/" + info.name + ("/" if info.isdir() else "")
    if any(part in path for part in _NOT_PACKED) or info.name.endswith(_NOT_PACKED_SUFFIXES):
        return None
    return info


def _copy_installed(site: str) -> None:
    for name in EXECUTOR_LIBRARIES:
        dist = metadata.distribution(name)
        for file in dist.files or ():
            if file.parts[0] == ".." or "__pycache__" in file.parts:
                continue  # scripts outside site-packages, bytecode
            source = str(dist.locate_file(file))
            destination = os.path.join(site, *file.parts)
            os.makedirs(os.path.dirname(destination), exist_ok=True)
            shutil.copy2(source, destination)


def _pip_install(site: str, python_version: str | None, platform_tag: str | None) -> None:
    pins = [f"{name}=={metadata.version(name)}" for name in EXECUTOR_LIBRARIES]
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--only-binary=:all:",
               "--implementation", "cp", "--target", site]
    if python_version:
        command += ["--python-version", python_version]
    if platform_tag:
        command += ["--platform", platform_tag]
    done = subprocess.run(command + pins, capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(f"pip could not fetch {' '.join(pins)}: {last}")

