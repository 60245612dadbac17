"""Files by URI for the audit: local paths, ``file://``, ``hdfs://``, ``s3://``/``s3a://``, ``gs://``.

Everything goes through ``pyarrow.fs``, so the same reader runs on a laptop and on Spark executors
that read from a cluster store; nothing here goes through the JVM. pyarrow does not know Hadoop's
``s3a`` alias, so it is mapped to ``s3``. Plain paths are made absolute.
"""
from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlparse

import pyarrow.fs as pafs


@dataclass(frozen=True)
class FileEntry:
    name: str
    uri: str
    size: int


def resolve(uri: str) -> tuple[pafs.FileSystem, str]:
    """The file system and the path inside it for ``uri``."""
    scheme = urlparse(uri).scheme
    if len(scheme) <= 1:  # a plain path (a one-letter "scheme" is a Windows drive)
        return pafs.LocalFileSystem(), os.path.abspath(uri)
    if scheme == "s3a":
        uri = "s3" + uri[3:]
    return pafs.FileSystem.from_uri(uri)


def join(uri: str, *names: str) -> str:
    """``uri`` with path components appended (URIs keep their scheme and authority)."""
    return posixpath.join(uri.rstrip("/"), *names) if "://" in uri else os.path.join(uri, *names)


def list_files(directory: str) -> list[FileEntry]:
    """The regular files directly inside ``directory``, by name."""
    fs, path = resolve(directory)
    infos = fs.get_file_info(pafs.FileSelector(path, allow_not_found=False))
    return sorted((FileEntry(info.base_name, join(directory, info.base_name), info.size)
                   for info in infos if info.type == pafs.FileType.File), key=lambda e: e.name)


def read_bytes(uri: str, start: int = 0, end: int | None = None) -> bytes:
    """Bytes [start, end) of a file (to its end when ``end`` is None)."""
    fs, path = resolve(uri)
    with fs.open_input_file(path) as f:
        size = f.size() if end is None else end
        return f.read_at(size - start, start) if size > start else b""


def exists(uri: str) -> bool:
    fs, path = resolve(uri)
    return fs.get_file_info(path).type != pafs.FileType.NotFound


def write_bytes(uri: str, data: bytes) -> None:
    fs, path = resolve(uri)
    fs.create_dir(posixpath.dirname(path), recursive=True)
    with fs.open_output_stream(path) as f:
        f.write(data)


class OutputStream(Protocol):
    """What the tables write through (a ``pyarrow`` output stream)."""

    def write(self, data: bytes) -> int: ...

    def close(self) -> None: ...


def open_output(uri: str) -> OutputStream:
    """A writable binary stream; parent directories are created."""
    fs, path = resolve(uri)
    fs.create_dir(posixpath.dirname(path), recursive=True)
    return fs.open_output_stream(path)


def remove_tree(uri: str) -> None:
    """Delete a directory and what it holds, if it exists."""
    fs, path = resolve(uri)
    if fs.get_file_info(path).type == pafs.FileType.Directory:
        fs.delete_dir(path)
