"""fsync'd directory entries and atomic file replacement, as Kafka's log layer makes its checkpoints and
renames durable (write a ``.tmp``, fsync it, rename over the old file, fsync the directory)."""
from __future__ import annotations

import os
from pathlib import Path


def fsync_dir(path: Path) -> None:
    """Make a creation, rename or deletion inside ``path`` durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes | str) -> None:
    """Replace ``path`` by ``data`` (text is written as UTF-8) all at once: ``<path>.tmp``, fsync, rename,
    fsync of the directory. A crash leaves the old file or the new one, never a mix."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data.encode() if isinstance(data, str) else data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)
