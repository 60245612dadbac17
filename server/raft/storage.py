"""Small durable files of a data directory: atomic replacement and Kafka's ``meta.properties``.

``meta.properties`` is the Java-properties file Kafka keeps at the root of every log directory
(``version=1``, ``cluster.id``, ``node.id``, ``directory.id``); kraftwire keeps one at the root of the
data directory (the controller's metadata log directory) and one per simulated broker directory, so
that a restarted server keeps its cluster id and its brokers keep their directory ids.

``DirectoryLocks`` holds Kafka's ``.lock`` file in each of those directories for the life of the
server: an exclusive ``flock``, which the kernel drops when the process dies (kill -9 included), so a
second server on the same directories refuses to start instead of appending to the same log.
"""
from __future__ import annotations

import base64
import fcntl
import os
import time
import uuid
from pathlib import Path
from collections.abc import Callable

from ..durable.files import atomic_write

META_PROPERTIES = "meta.properties"
LOCK_FILE = ".lock"
META_VERSION = "1"


class StorageError(Exception):
    """A data-directory file is unreadable or disagrees with the configuration: start-up stops."""


def random_kafka_uuid() -> uuid.UUID:
    """A random id drawn as Kafka's Uuid.randomUuid draws one: never the zero id or the metadata topic's
    (1), and never one whose text starts with "-", which a command line takes for an option
    (``kraftwire format -t $(kraftwire random-uuid)``)."""
    while True:
        value = uuid.uuid4()
        if value.int > 1 and not kafka_uuid(value).startswith("-"):
            return value


def kafka_uuid(value: uuid.UUID) -> str:
    """Kafka's text form of a Uuid: URL-safe base64 of the 16 bytes, without padding."""
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


def parse_kafka_uuid(text: str) -> uuid.UUID:
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if len(raw) != 16:
        raise ValueError(f"{text!r} is not a 16-byte Uuid")
    return uuid.UUID(bytes=raw)


def read_properties(path: Path) -> dict[str, str]:
    """``key=value`` lines; ``#`` and ``!`` lines are comments (the subset of Java properties Kafka writes)."""
    values = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise StorageError(f"{path}: line {number} is not key=value: {line!r}")
        values[key.strip()] = value.strip()
    return values


def write_properties(path: Path, values: dict[str, str]) -> None:
    lines = ["#", "#" + time.strftime("%a %b %d %H:%M:%S %Z %Y")]
    lines += [f"{key}={value}" for key, value in sorted(values.items())]
    atomic_write(path, ("\n".join(lines) + "\n").encode())


def load_meta_properties(directory: Path, cluster_id: str | None, node_id: int,
                         new_uuid: Callable[[], uuid.UUID] = uuid.uuid4) -> dict[str, str]:
    """Read ``directory/meta.properties``, creating it on first use; returns its values.

    ``cluster_id`` None adopts the stored cluster id (or makes a new one); a different stored cluster id
    or node id is an error, as in Kafka, because it means the directory belongs to another cluster.
    """
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / META_PROPERTIES
    if not path.exists():
        values = {"version": META_VERSION, "node.id": str(node_id),
                  "cluster.id": cluster_id or kafka_uuid(new_uuid()),
                  "directory.id": kafka_uuid(new_uuid())}
        write_properties(path, values)
        return values
    values = read_properties(path)
    for key in ("version", "cluster.id", "node.id", "directory.id"):
        if key not in values:
            raise StorageError(f"{path} has no {key}")
    if values["version"] != META_VERSION:
        raise StorageError(f"{path}: unsupported version {values['version']}")
    if cluster_id is not None and values["cluster.id"] != cluster_id:
        raise StorageError(f"{path}: the directory belongs to cluster {values['cluster.id']}, "
                           f"not to the configured cluster {cluster_id}")
    if values["node.id"] != str(node_id):
        raise StorageError(f"{path}: the directory belongs to node {values['node.id']}, not to node {node_id}")
    try:
        parse_kafka_uuid(values["directory.id"])
    except ValueError as exc:
        raise StorageError(f"{path}: bad directory.id: {exc}") from None
    return values


def directory_id(directory: Path, cluster_id: str, node_id: int,
                 new_uuid: Callable[[], uuid.UUID] = uuid.uuid4) -> uuid.UUID:
    """The stable id of a log directory (created on first use, from ``new_uuid``)."""
    return parse_kafka_uuid(load_meta_properties(directory, cluster_id, node_id, new_uuid)["directory.id"])


class DirectoryLocks:
    """Exclusive locks on directories (created if missing), held until ``release``."""

    def __init__(self) -> None:
        self._fds: list[int] = []

    def acquire(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise StorageError(f"{directory} is in use by another kraftwire server (its {LOCK_FILE} file is "
                               f"locked): refusing to start") from None
        self._fds.append(fd)

    def release(self) -> None:
        for fd in self._fds:
            os.close(fd)
        self._fds = []
