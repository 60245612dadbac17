"""What a simulated broker keeps of its logs across a restart of its process, in Kafka's files.

A Kafka broker's logs are on disk; what kraftwire simulates of a log is its size (bytes, and offsets
are bytes), so that size is what a broker keeps. Each log directory holds, as Kafka's do:

- ``recovery-point-offset-checkpoint`` (Kafka's LogManager, written every
  ``log.flush.offset.checkpoint.interval.ms``, 60 s by default, and at a clean shutdown): a version line
  (0), a count line, then one ``topic partition offset`` line per log of the directory, written to a
  ``.tmp`` file, fsync'd and renamed over the old one (Kafka's CheckpointFile). The offset is the
  replica's log end offset: every byte a simulated replica holds counts as flushed.
- ``.kafka_cleanshutdown`` (KIP-966), written at a clean shutdown only: ``{"version":0,"brokerEpoch":N}``,
  fsync'd. At start the broker reads it from every directory (the epoch counts only if every directory
  has it, with the same epoch: Kafka's readBrokerEpochFromCleanShutdownFiles), deletes it (so a crash
  while starting counts as unclean) and sends the epoch as PreviousBrokerEpoch in its registration.

A replica a restarted broker learns of starts in the directory whose checkpoint lists it (JBOD: its
log is there), with the size that checkpoint gave it (at most the partition's size): after a clean
stop that is all it had, so an in-sync follower copies nothing; after kill -9 it is the last periodic
checkpoint, and the follower copies the difference.
Deliberate differences from Kafka: the log itself is not on disk, so nothing past the checkpoint
survives a crash (Kafka's log recovery reads past its recovery point); no
``replication-offset-checkpoint`` (high watermarks are not simulated apart from log sizes); a log is
matched by topic name and partition only (Kafka also checks the topic id in ``partition.metadata``);
future replicas of AlterReplicaLogDirs are not kept.
"""
from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

log = logging.getLogger("kraftwire.broker")

RECOVERY_POINT_FILE = "recovery-point-offset-checkpoint"
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
CHECKPOINT_VERSION = 0
CLEAN_SHUTDOWN_VERSION = 0
CHECKPOINT_INTERVAL_MS = 60_000  # log.flush.offset.checkpoint.interval.ms's default
NO_EPOCH = -1  # PreviousBrokerEpoch when the last shutdown was not clean


def _write_atomically(path: Path, write: Callable[[TextIO], object]) -> None:
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w", encoding="utf-8") as file:
        write(file)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)


def write_offsets(directory: str | Path, count: int, lines: Iterable[str]) -> None:
    """Write a directory's recovery-point checkpoint: ``count`` entries, given as texts of whole
    ``topic partition offset`` lines (a broker keeps each topic's text from one checkpoint to the next:
    ``CheckpointedTopic``)."""
    def write(file: TextIO) -> None:
        file.write(f"{CHECKPOINT_VERSION}\n{count}\n")
        file.writelines(lines)

    _write_atomically(Path(directory) / RECOVERY_POINT_FILE, write)


@dataclass(eq=False, slots=True)
class CheckpointedTopic:
    """One topic's logs on a broker as a checkpoint saw them: its replicas and, at the same index, their
    sizes and directories then; and, once a writing thread has formatted them, their checkpoint lines by
    directory, ``{directory: (count, text)}``. A topic whose logs are the same at the next checkpoint
    (compared by identity and value, a few list comparisons) is written from the same text: formatting
    every line every minute cost each broker ~0.75 s of CPU at 2M partitions (bench/README.md, ninth
    round), where Kafka's broker rewrites each file whole too but formats in the JVM. The same lines
    are written either way."""
    replicas: list
    sizes: list[float]
    directories: list
    lines: dict | None = None

    def unchanged(self, replicas: list, sizes: list[float], directories: list) -> bool:
        return self.replicas == replicas and self.sizes == sizes and self.directories == directories

    def formatted(self) -> dict:
        """The lines, formatted on first use (in the writing thread: the lists above are never changed)."""
        if self.lines is None:
            by_directory: dict = {}
            for replica, size, directory in zip(self.replicas, self.sizes, self.directories):
                if directory is not None:
                    by_directory.setdefault(directory, []).append(f"{replica.topic_name} {replica.partition} {int(size)}\n")
            self.lines = {directory: (len(lines), "".join(lines)) for directory, lines in by_directory.items()}
        return self.lines


def write_directories(directories: list, topics: list[CheckpointedTopic]) -> dict:
    """Write each directory's checkpoint (objects with a ``path``) from the topics' lines; the
    directories that could not be written, ``{directory: error}``, are left as they were."""
    texts: dict = {directory: [0, []] for directory in directories}
    for topic in topics:
        for directory, (count, text) in topic.formatted().items():
            entry = texts.get(directory)
            if entry is not None:
                entry[0] += count
                entry[1].append(text)
    failed = {}
    for directory, (count, lines) in texts.items():
        try:
            write_offsets(directory.path, count, lines)
        except OSError as exc:
            failed[directory] = exc
    return failed


def read_offsets(directory: str | Path) -> dict[tuple[str, int], int]:
    """The directory's recovery-point checkpoint, {(topic, partition): offset}; empty when there is
    none, and (with a warning) when it is malformed, as a checkpoint of another version is."""
    path = Path(directory) / RECOVERY_POINT_FILE
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return {}
    try:
        if int(lines[0]) != CHECKPOINT_VERSION:
            raise ValueError(f"unknown version {lines[0]!r}")
        count = int(lines[1])
        offsets = {}
        for line in lines[2:]:
            topic, partition, offset = line.split()
            offsets[topic, int(partition)] = int(offset)
        if len(offsets) != count:
            raise ValueError(f"{len(offsets)} entries where the count line says {count}")
        return offsets
    except (ValueError, IndexError) as exc:
        log.warning("ignoring the malformed %s: %s", path, exc)
        return {}


def write_clean_shutdown(directory: str | Path, broker_epoch: int) -> None:
    text = json.dumps({"version": CLEAN_SHUTDOWN_VERSION, "brokerEpoch": broker_epoch}, separators=(",", ":"))
    _write_atomically(Path(directory) / CLEAN_SHUTDOWN_FILE, lambda file: file.write(text))


def take_clean_shutdown_epoch(directories: list[str | Path]) -> int:
    """The broker epoch every directory's clean-shutdown file names, else ``NO_EPOCH``; the files are
    deleted."""
    epochs = set()
    for directory in directories:
        path = Path(directory) / CLEAN_SHUTDOWN_FILE
        try:
            epochs.add(int(json.loads(path.read_text(encoding="utf-8"))["brokerEpoch"]))
        except (OSError, ValueError, KeyError, TypeError):
            epochs.add(NO_EPOCH)
        path.unlink(missing_ok=True)
    return epochs.pop() if len(epochs) == 1 else NO_EPOCH
