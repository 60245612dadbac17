"""Kafka's small text files of a log directory and of a partition directory.

* ``LogDirCheckpoints``: ``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint`` and
  ``replication-offset-checkpoint`` (the high watermarks) of a log directory: "0" (version), the count,
  then one "topic partition offset" line per partition.
* ``leader-epoch-checkpoint`` of a partition: "0", the count, then "epoch start_offset" lines.
* ``partition.metadata``: "version: 0" and "topic_id: <the id as Kafka prints it>".

Every write is atomic: a ``.tmp`` file, fsync, rename, fsync of the directory (as Kafka's
CheckpointFile). A file that does not parse raises ``CheckpointError``."""
from __future__ import annotations

import base64
import uuid
from collections.abc import Mapping
from pathlib import Path

from ..durable.files import atomic_write

RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
PARTITION_METADATA = "partition.metadata"
CHECKPOINT_VERSION = 0


class CheckpointError(ValueError):
    """A checkpoint file that is not in Kafka's format."""


def _read_lines(path: Path, fields: int) -> list[list[str]]:
    """The entry lines of a versioned, counted checkpoint file, each split into ``fields`` words."""
    lines = path.read_text().splitlines()
    if not lines:
        return []  # Kafka creates its checkpoint files empty and reads an empty one as no entries
    if len(lines) < 2 or lines[0].strip() != str(CHECKPOINT_VERSION) or not lines[1].strip().isdigit():
        raise CheckpointError(f"{path}: not a version {CHECKPOINT_VERSION} checkpoint file")
    count = int(lines[1])
    entries = [line.split() for line in lines[2:] if line.strip()]
    if len(entries) != count or any(len(entry) != fields for entry in entries):
        raise CheckpointError(f"{path}: {count} entries declared, {len(entries)} well-formed lines found")
    return entries


def _render(entries: list[str]) -> str:
    return "".join(f"{line}\n" for line in [str(CHECKPOINT_VERSION), str(len(entries)), *entries])


def read_epoch_checkpoint(path: Path) -> list[tuple[int, int]]:
    """(epoch, start offset) entries of a ``leader-epoch-checkpoint``; [] if there is none."""
    if not path.exists():
        return []
    try:
        return [(int(epoch), int(offset)) for epoch, offset in _read_lines(path, 2)]
    except ValueError as exc:
        raise CheckpointError(f"{path}: {exc}") from None


def write_epoch_checkpoint(path: Path, entries: list[tuple[int, int]]) -> None:
    atomic_write(path, _render([f"{epoch} {offset}" for epoch, offset in entries]))


def kafka_uuid(value: uuid.UUID) -> str:
    """A Uuid as Kafka prints it: URL-safe base64 of its 16 bytes, without padding."""
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


def parse_kafka_uuid(text: str) -> uuid.UUID:
    try:
        return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except ValueError as exc:
        raise CheckpointError(f"{text!r} is not a Kafka Uuid: {exc}") from None


def read_partition_metadata(path: Path) -> uuid.UUID | None:
    """The topic id of a ``partition.metadata`` file; None if there is none."""
    if not path.exists():
        return None
    fields = dict(line.split(": ", 1) for line in path.read_text().splitlines() if ": " in line)
    if fields.get("version") != "0" or "topic_id" not in fields:
        raise CheckpointError(f"{path}: not a version 0 partition.metadata file")
    return parse_kafka_uuid(fields["topic_id"].strip())


def write_partition_metadata(path: Path, topic_id: uuid.UUID) -> None:
    atomic_write(path, f"version: 0\ntopic_id: {kafka_uuid(topic_id)}\n")


class LogDirCheckpoints:
    """The per-log-directory offset checkpoints: what the broker writes at each checkpoint interval and
    at shutdown, and reads back at start-up to open each partition's log."""

    FILES = (RECOVERY_POINT_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT, REPLICATION_OFFSET_CHECKPOINT)

    def __init__(self, log_dir: Path):
        self.log_dir = Path(log_dir)

    def read(self, name: str) -> dict[tuple[str, int], int]:
        """{(topic, partition): offset} of checkpoint ``name`` (one of FILES); {} if it is absent."""
        path = self.log_dir / name
        if not path.exists():
            return {}
        try:
            return {(topic, int(partition)): int(offset) for topic, partition, offset in _read_lines(path, 3)}
        except ValueError as exc:
            raise CheckpointError(f"{path}: {exc}") from None

    def write(self, name: str, offsets: Mapping[tuple[str, int], int]) -> None:
        if name not in self.FILES:
            raise ValueError(f"{name} is not a log directory checkpoint")
        lines = [f"{topic} {partition} {offset}" for (topic, partition), offset in sorted(offsets.items())]
        atomic_write(self.log_dir / name, _render(lines))

    def recovery_points(self) -> dict[tuple[str, int], int]:
        return self.read(RECOVERY_POINT_CHECKPOINT)

    def log_start_offsets(self) -> dict[tuple[str, int], int]:
        return self.read(LOG_START_OFFSET_CHECKPOINT)

    def high_watermarks(self) -> dict[tuple[str, int], int]:
        return self.read(REPLICATION_OFFSET_CHECKPOINT)
