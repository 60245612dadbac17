"""The log's files under ``__cluster_metadata-0/`` as one ``RaftLog`` writes them: its segments, the
``synced-lengths.json`` beside them, and the file work of installs and retention.

``synced-lengths.json`` (``SyncedLengths``) says how many bytes of the active segment are fsync'd. It is
as durable as the data it vouches for: rewritten in place and fsync'd after the segment's fsync and
before ``write_and_sync`` returns, so before any batch below it is acknowledged (or counted by the
leader), and lowered, durably, before a truncation cuts below it. After a power loss it is therefore
never short of an acknowledged batch, nor ahead of what is on disk; recovery refuses damage below it.

``SegmentFiles`` is touched only in the log's I/O thread (or at ``open``, before anything else runs):
the event loop queues ``FileOp``s (``WriteBatch``, ``Truncate``, ``Install``) and the flush hands a group
of them to ``write_and_sync``, which carries them out in order and fsyncs once (group commit).
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from kraftwire.codec.log_layout import DEFAULT_INDEX_INTERVAL_BYTES, INDEX_SUFFIX, parse_base_offset, segment_file_name

from .batches import LogBatch
from .segments import Segment, mapped, walk
from .snapshots import SnapshotId, list_snapshots
from ..durable.files import atomic_write, fsync_dir
from .storage import StorageError

log = logging.getLogger("kraftwire.raft")

SYNCED_LENGTHS = "synced-lengths.json"


class LogCorruptError(StorageError):
    """Damage that cannot be a torn write: start-up stops rather than replay or drop committed data."""


class LogFailedError(Exception):
    """A write or fsync failed: the log accepts nothing more (the process should be restarted)."""


@dataclass(frozen=True)
class RaftConfig:
    segment_bytes: int = 1 << 30  # metadata.log.segment.bytes
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES
    snapshot_every_records: int | None = None
    snapshot_every_bytes: int | None = 20 << 20  # metadata.log.max.record.bytes.between.snapshots
    retention_bytes: int | None = None  # None: keep every segment
    retention_ms: int | None = None
    archive_dir: Path | None = None  # move retired segments and snapshots here instead of deleting them
    group_commit: bool = True


@dataclass(frozen=True)
class WriteBatch:
    """Append a batch to the active segment (rolling it first when it is full)."""
    batch: LogBatch


@dataclass(frozen=True)
class Truncate:
    """Drop every batch at or past ``offset`` (a batch boundary)."""
    offset: int


@dataclass(frozen=True)
class Install:
    """Replace the log by a downloaded, checked snapshot (its ``.part`` file)."""
    snapshot_id: SnapshotId
    part: Path


FileOp = WriteBatch | Truncate | Install


class SyncedLengths:
    """The durable record of the active segment's fsync'd length: ``{"<segment>.log": bytes}``, padded to
    a fixed size so that each update is one write inside one disk sector, then ``fdatasync``. The first
    update of an open replaces the file whole (written, fsync'd, renamed, directory fsync'd); a write torn
    anyway reads back as no record, which recovery treats as the strictest case."""

    SIZE = 128

    def __init__(self, directory: Path):
        self.path = directory / SYNCED_LENGTHS
        self._fd: int | None = None

    def publish(self, segment: str, length: int) -> None:
        text = json.dumps({segment: length}).encode()
        data = text.ljust(self.SIZE - 1) + b"\n" if len(text) < self.SIZE else text + b"\n"
        if self._fd is None or len(data) != self.SIZE:
            self.close()
            atomic_write(self.path, data)
            self._fd = os.open(self.path, os.O_WRONLY)
            return
        os.pwrite(self._fd, data, 0)
        os.fdatasync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class SegmentFiles:
    """The segments of one log, oldest first; the last is the active one."""

    def __init__(self, directory: Path, config: RaftConfig, segments: list[Segment] | None = None):
        self.directory = directory
        self.config = config
        self.segments: list[Segment] = segments or []
        self._synced_record = SyncedLengths(directory)

    @property
    def active(self) -> Segment:
        return self.segments[-1]

    def log_start_offset(self) -> int:
        return self.segments[0].base_offset if self.segments else 0

    def synced_lengths(self) -> dict[str, int]:
        """Bytes of each segment file known to be fsync'd."""
        return {s.path.name: s.synced_size for s in self.segments}

    def path_holding(self, offset: int) -> Path:
        """The segment file that holds ``offset``."""
        return next(s.path for s in reversed(self.segments) if s.base_offset <= offset)

    def write_and_sync(self, group: list[FileOp]) -> tuple[int, list[tuple[SnapshotId, Path]]]:
        """Carry out the writes (rolling segments by size), truncations and installs in order, then one
        fsync; returns the end offset now durable and the snapshots installed (id, final path)."""
        installed = []
        for op in group:
            if isinstance(op, Truncate):
                self.truncate(op.offset)
            elif isinstance(op, Install):
                installed.append((op.snapshot_id, self.install(op.snapshot_id, op.part)))
                self.active.open_for_append()
            else:
                segment, batch = self.active, op.batch
                if segment.size and segment.size + len(batch.data) > self.config.segment_bytes:
                    segment = self._roll(segment, batch.base)
                segment.append(batch.data, batch.last, batch.last + 1, batch.epoch)
        self.active.sync()
        self.publish_synced_lengths()
        return self.active.next_offset, installed

    def truncate(self, offset: int) -> None:
        """Drop every batch at or past ``offset`` (a batch boundary); the active segment is rebuilt from
        the batches it keeps (made durable by the group's fsync). The fsync'd-length record is lowered
        to what is kept first, durably, so a crash during the cut never finds it ahead of the file."""
        keep = len(self.segments)
        while keep > 1 and self.segments[keep - 1].base_offset >= offset:
            keep -= 1
        old = self.segments[keep - 1]
        segment = Segment(self.directory, old.base_offset, self.config.index_interval_bytes)
        size = 0
        with mapped(old.path) as buf:
            for position, header in walk(buf[:old.size], 0, old.base_offset):
                if header.base_offset >= offset:
                    break
                segment.note_recovered(position, header)
                size = position + header.size
        if keep < len(self.segments) or size < old.synced_size:
            self._synced_record.publish(old.path.name, min(old.synced_size, size))
        for dropped in self.segments[keep:]:
            dropped.close()
            dropped.delete()
        if keep < len(self.segments):
            del self.segments[keep:]
            fsync_dir(self.directory)
        old.close()
        if size < old.size:
            log.info("%s: truncating to offset %d (byte %d): the leader's log diverges there", old.path.name,
                     offset, size)
            segment.truncate(size)
        segment.finish_recovery(size)
        segment.synced_size = min(old.synced_size, size)
        segment.open_for_append()
        self.segments[-1] = segment

    def _roll(self, segment: Segment, base: int) -> Segment:
        segment.sync(index_too=True)
        self.publish_synced_lengths()  # the old segment is whole on disk before a newer one exists
        segment.close()
        new = Segment(self.directory, base, self.config.index_interval_bytes)
        new.open_for_append()
        fsync_dir(self.directory)
        self.segments.append(new)
        self.publish_synced_lengths()
        return new

    def publish_synced_lengths(self) -> None:
        """Record the active segment's fsync'd length durably (``SyncedLengths``): called once its fsync
        has returned, and before anything below it is acknowledged."""
        active = self.active
        self._synced_record.publish(active.path.name, active.synced_size)

    def install(self, snapshot_id: SnapshotId, part: Path) -> Path:
        """The log starts, empty, at the snapshot's end, and the snapshot gets its name. The empty
        segment comes first and the rename last, so a crash between is finished at start-up."""
        end = snapshot_id.end_offset
        for segment in self.segments:
            segment.close()
        new = Segment(self.directory, end, self.config.index_interval_bytes)
        with open(new.path, "wb"):
            pass
        new.index_path.write_bytes(b"")
        fsync_dir(self.directory)
        for path in self.directory.iterdir():
            base = parse_base_offset(path.name)
            if base is not None and base != end:
                path.unlink()
                path.with_name(segment_file_name(base, INDEX_SUFFIX)).unlink(missing_ok=True)
        fsync_dir(self.directory)
        final = self.directory / snapshot_id.file_name
        os.replace(part, final)
        fsync_dir(self.directory)
        self.segments = [new]
        return final

    def retire(self, snapshot_end: int) -> None:
        """Delete or archive the oldest segments wholly below the snapshot while the log is over
        ``retention_bytes`` or they are older than ``retention_ms``; then snapshots older than the new
        log start (the newest is always kept)."""
        retention_bytes, retention_ms = self.config.retention_bytes, self.config.retention_ms
        total = sum(s.size for s in self.segments)
        oldest_kept = time.time() - retention_ms / 1000 if retention_ms is not None else None
        retired = 0
        for segment, following in zip(self.segments, self.segments[1:]):
            if following.base_offset > snapshot_end:
                break
            too_big = retention_bytes is not None and total > retention_bytes
            too_old = oldest_kept is not None and segment.path.stat().st_mtime < oldest_kept
            if not (too_big or too_old):
                break
            self._dispose([segment.path, segment.index_path])
            total -= segment.size
            retired += 1
        if not retired:
            return
        self.segments = self.segments[retired:]
        log_start = self.segments[0].base_offset
        self._dispose([path for snapshot, path in list_snapshots(self.directory)[:-1]
                       if snapshot.end_offset < log_start])
        fsync_dir(self.directory)
        log.info("retention: %s %d segment(s); the log now starts at offset %d",
                 "archived" if self.config.archive_dir else "deleted", retired, log_start)

    def _dispose(self, paths: list[Path]) -> None:
        archive = self.config.archive_dir
        if archive is not None:
            Path(archive).mkdir(parents=True, exist_ok=True)
        for path in paths:
            if not path.exists():
                continue
            if archive is None:
                path.unlink()
            else:
                shutil.move(path, Path(archive) / path.name)

    def drop_unsynced(self) -> None:
        """A kill: the active segment is cut back to its fsync'd length."""
        active = self.active
        active.close()
        active.truncate(active.synced_size)
        self._synced_record.close()

    def close(self, failed: bool) -> None:
        """A clean close: the active segment and its index are fsync'd, unless a write failed."""
        active = self.active
        if active.is_open and not failed:
            active.sync(index_too=True)
            self.publish_synced_lengths()
        active.close()
        self._synced_record.close()
