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
Deliberate differences from Kafka: the first periodic checkpoint comes after a fraction of the
interval set by the broker's id (``first_delay``), not 30 s after start; the log itself is not on
disk, so nothing past the checkpoint survives a crash (Kafka's log recovery reads past its recovery point); no
``replication-offset-checkpoint`` (high watermarks are not simulated apart from log sizes); a log is
matched by topic name and partition only (Kafka also checks the topic id in ``partition.metadata``);
future replicas of AlterReplicaLogDirs are not kept.
"""
from __future__ import annotations

import json
import logging
import operator
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

log = logging.getLogger("kraftwire.broker")

RECOVERY_POINT_FILE = "recovery-point-offset-checkpoint"
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
CHECKPOINT_VERSION = 0
CLEAN_SHUTDOWN_VERSION = 0
CHECKPOINT_INTERVAL_MS = 60_000  # log.flush.offset.checkpoint.interval.ms's default
NO_EPOCH = -1  # PreviousBrokerEpoch when the last shutdown was not clean


def first_delay(broker_id: int, interval_ms: int) -> float:
    """How long after its start a broker writes its first checkpoint, in ms: a fraction of the interval
    set by its id in golden-ratio steps (1: 0.62, 2: 0.24, 3: 0.85, 4: 0.47), so that the brokers of one
    process, which start together, spread their writes over the interval. Kafka's brokers start their
    schedules on their own (the first 30 s after start, then every interval); at 2M partitions the four
    brokers' writes in the same second held the event loop ~3 s (bench/README.md, Scale)."""
    return (broker_id * 0.6180339887498949) % 1.0 * interval_ms


def _write_atomically(path: Path, write: Callable[[TextIO], object]) -> None:
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w", encoding="utf-8") as file:
        write(file)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)


def write_offsets(directory: str | Path, count: int, lines: Iterable[str]) -> None:
    """Write a directory's recovery-point checkpoint: ``count`` entries, given as texts of whole
    ``topic partition offset`` lines."""
    def write(file: TextIO) -> None:
        file.write(f"{CHECKPOINT_VERSION}\n{count}\n")
        file.writelines(lines)

    _write_atomically(Path(directory) / RECOVERY_POINT_FILE, write)


_PARTITION, _SIZE, _DIRECTORY = (operator.attrgetter(name) for name in ("partition", "log_bytes", "log_dir"))


def _groups(replicas: list) -> Iterator[tuple[object, list, float | None]]:
    """One topic's replicas (objects with ``topic_name``, ``partition``, ``log_bytes`` and ``log_dir``)
    by directory, each directory read once (so that a group's count is its number of lines): ``(directory,
    replicas, the size they all have or None)``; those without a directory are left out."""
    directories = set(map(_DIRECTORY, replicas))
    groups: Iterable[tuple[object, list[Any]]]
    if len(directories) == 1:
        groups = [(directories.pop(), replicas)]
    else:
        by_directory: dict[object, list[Any]] = {}
        for replica in replicas:
            by_directory.setdefault(replica.log_dir, []).append(replica)
        groups = by_directory.items()
    for directory, members in groups:
        if directory is not None:
            sizes = set(map(_SIZE, members))
            yield directory, members, sizes.pop() if len(sizes) == 1 else None


def _lines(replicas: list, size: float | None) -> str:
    """The checkpoint lines of one topic's replicas; where they have one size, one join of their partition
    numbers (a few C-level passes, about a third of the CPU of formatting a line at a time: at 2M
    partitions that cost the brokers ~3 s a minute, bench/README.md, Scale)."""
    if size is None:
        return "".join([f"{r.topic_name} {r.partition} {int(r.log_bytes)}\n" for r in replicas])
    prefix, suffix = f"{replicas[0].topic_name} ", f" {int(size)}\n"
    return prefix + (suffix + prefix).join(map(str, map(_PARTITION, replicas))) + suffix


def write_directories(directories: list, topics: Iterable[list], clean_epoch: int | None = None) -> dict:
    """Write each directory's checkpoint (objects with a ``path``) from every topic's replicas, a list
    per topic, one topic's text at a time, then, given the epoch, its clean-shutdown file; the
    directories that could not be written, ``{directory: error}``, are left as they were."""
    groups = [group for replicas in topics for group in _groups(replicas)]
    failed = {}
    for directory in directories:
        mine = [(members, size) for placed, members, size in groups if placed is directory]
        try:
            write_offsets(directory.path, sum(len(members) for members, _ in mine),
                          (_lines(members, size) for members, size in mine))
            if clean_epoch is not None:
                write_clean_shutdown(directory.path, clean_epoch)
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
