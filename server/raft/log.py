"""``RaftLog``: the durable metadata log, a Raft leader's log in KRaft's on-disk format.

Layout under ``<data-dir>/__cluster_metadata-0/``: segments and their indexes (``segments``),
snapshots (``snapshots``), ``quorum-state`` (``quorum_state``), and ``synced-lengths.json``, which
says how many bytes of the active segment are known to be fsync'd (crash tests cut files back to no
less than that; recovery treats damage at or past it as an unsynced tail).

Life of an append: the controller calls ``append`` (on the event loop); the batch is encoded at once
with the next offsets and the current epoch, and queued. One flush at a time runs in the I/O thread:
it writes every queued batch and fsyncs once (group commit; appends made meanwhile wait for the next
flush), then the leader's fsync'd end moves, the quorum recomputes the high watermark, and committed
records go to the commit listeners before the append futures resolve. With ``group_commit=False``
each batch gets its own write and fsync (the benchmark's baseline).

Start-up (``open``): read ``quorum-state`` (a damaged one stops start-up), load the newest valid
snapshot, check every batch after it (torn tails are cut away, damage in the middle stops start-up),
bump the epoch, persist it, and commit a LeaderChangeMessage control batch. Only bytes past the
length recorded as fsync'd can be a torn tail (``segments.judge_damage``, shared with ``log verify``):
damage below it, in the last batch too, or a file cut short of it, stops start-up. ``replay`` then yields the
snapshot's records and the log's tail, all of it committed; a record of a type or version kraftwire has no
schema for stops it (``segments.UnknownRecordError``, as Kafka's metadata loader fails on one).

Snapshots are taken every ``snapshot_every_records`` records or ``snapshot_every_bytes`` bytes
committed, from an image copy given by ``snapshot_source``, and written in a thread. Retention is
off by default (the audit reads the whole history); with ``retention_bytes`` or ``retention_ms``,
segments wholly below the newest snapshot are deleted, or moved to ``archive_dir``.

Differences from Kafka: one voter only (the quorum code takes a voter set, so more can join later);
no ``.timeindex`` files; index files are not pre-allocated, and are fsync'd at roll and close rather
than with every commit (recovery rebuilds them); segments roll by size only (no ``segment.ms``);
damage in the middle of the log stops start-up instead of truncating the log there;
``synced-lengths.json`` is kraftwire's own file. As in Kafka, snapshots are deleted only once the log
start moves past them, so with retention off they accumulate (one per 20 MiB of records by default).
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from kraftwire.codec import MalformedError
from kraftwire.codec.log_layout import DEFAULT_INDEX_INTERVAL_BYTES, PARTITION_DIR, parse_base_offset
from kraftwire.codec.records import (ATTR_CONTROL, LeaderChangeMessage, UnknownRecordType, control_batch, decode_frame,
                                     metadata_batch, read_batch)

from .quorum import Quorum, ReplicaProgress
from .quorum_state import NO_ID, QuorumState, read_quorum_state, write_quorum_state
from .segments import Damage, Segment, UnknownRecordError, judge_damage, mapped, walk
from .snapshots import SnapshotError, SnapshotId, check_snapshot, list_snapshots, read_snapshot, remove_partial, \
    write_snapshot
from .storage import StorageError, fsync_dir

log = logging.getLogger("kraftwire.raft")

SYNCED_LENGTHS = "synced-lengths.json"
OBSERVER_SESSION_MS = 300_000  # LeaderState.OBSERVER_SESSION_TIMEOUT_MS


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
class QuorumDescription:
    leader_id: int
    epoch: int
    high_watermark: int
    voters: list[ReplicaProgress]
    observers: list[ReplicaProgress]


@dataclass
class _Append:
    base: int
    last: int
    data: bytes
    epoch: int
    timestamp: int
    records: list = field(default_factory=list)  # (offset, record) to deliver; none for control batches
    future: asyncio.Future | None = None


def read_synced_lengths(directory: Path) -> dict[str, int]:
    """``synced-lengths.json``: bytes of the active segment known to be fsync'd (empty when unreadable)."""
    try:
        synced = json.loads((directory / SYNCED_LENGTHS).read_text())
    except (OSError, ValueError):
        return {}
    return synced if isinstance(synced, dict) else {}


def _now_ms() -> int:
    return int(time.time() * 1000)


class RaftLog:
    def __init__(self, data_dir: str | Path, node_id: int, config: RaftConfig = RaftConfig(),
                 voters: list[int] | None = None):
        self.directory = Path(data_dir) / PARTITION_DIR
        self.node_id = node_id
        self.config = config
        self.voters = voters or [node_id]
        self.epoch = 0
        self.high_watermark = 0
        self.end_offset = 0
        self.snapshot_source: Callable[[], object] | None = None  # -> image copy with to_records()
        self.fsync_count = 0
        self.commit_count = 0  # appends committed
        self._listeners: list[Callable] = []
        self._pending: list[_Append] = []  # offsets assigned, not written yet
        self._unacked: deque[_Append] = deque()  # fsync'd here, not yet below the high watermark
        self._flushing: asyncio.Task | None = None
        self._snapshotting: asyncio.Task | None = None
        self._failed: str | None = None  # why appends are refused: a failed write, or the log is closed
        self.failure: str | None = None  # why a write or fsync failed, once one has
        self.on_failure: Callable[[str], None] | None = None  # told once, after the pending appends failed
        self._segments: list[Segment] = []
        self._replay_from = 0  # index of the first segment with records at or past the snapshot
        self._snapshot: tuple[SnapshotId, Path] | None = None
        self._quorum: Quorum | None = None
        self._since_snapshot_records = 0
        self._since_snapshot_bytes = 0
        self._committed_epoch = 0
        self._committed_timestamp = -1
        self._io = ThreadPoolExecutor(1, thread_name_prefix="kraftwire-log-io")
        self._snapshot_io = ThreadPoolExecutor(1, thread_name_prefix="kraftwire-snapshot")

    # --- start-up ------------------------------------------------------------------------------------

    async def open(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._io, self._recover)
        self._quorum = Quorum(self.node_id, self.voters, self.epoch, self.end_offset, self.high_watermark)
        voters = [LeaderChangeMessage.Voter(voter_id=v) for v in self.voters]
        leader_change = LeaderChangeMessage(version=0, leader_id=self.node_id, voters=voters,
                                            granting_voters=voters)
        base = self.end_offset
        now = _now_ms()
        await self._enqueue(_Append(base, base, control_batch(base, self.epoch, now, [leader_change]),
                                    self.epoch, now))
        log.info("metadata log open at %s: epoch %d, offsets %d..%d, high watermark %d", self.directory,
                 self.epoch, self._log_start_offset(), self.end_offset, self.high_watermark)

    def _recover(self) -> None:
        """Runs in the I/O thread before anything else touches the files."""
        directory = self.directory
        directory.mkdir(parents=True, exist_ok=True)
        state = read_quorum_state(directory)
        for path in remove_partial(directory):
            log.info("deleted the interrupted snapshot %s", path.name)
        self._snapshot = self._newest_valid_snapshot()
        start = self._snapshot[0].end_offset if self._snapshot else 0
        last_epoch = self._recover_segments(start, read_synced_lengths(self.directory))
        self.high_watermark = start
        if self._snapshot:
            self._committed_epoch = self._snapshot[0].epoch
        self.epoch = 1 + max(state.leader_epoch if state else 0, last_epoch,
                             self._snapshot[0].epoch if self._snapshot else 0)
        write_quorum_state(directory, QuorumState(self.node_id, self.epoch, NO_ID, tuple(self.voters)))
        active = self._segments[-1]
        active.open_for_append()
        active.sync()  # what a killed process left in the page cache is part of the log from now on
        self._publish_synced_lengths()

    def _newest_valid_snapshot(self) -> tuple[SnapshotId, Path] | None:
        for snapshot, path in reversed(list_snapshots(self.directory)):
            try:
                check_snapshot(path)
                return snapshot, path
            except SnapshotError as exc:
                log.error("ignoring snapshot %s: %s", path, exc)
        return None

    def _recover_segments(self, start: int, synced: dict[str, int]) -> int:
        """Check every batch from the segment holding ``start`` on; cut a torn tail; returns the epoch
        of the last batch (0 if none)."""
        interval = self.config.index_interval_bytes
        bases = sorted(b for p in self.directory.iterdir() if (b := parse_base_offset(p.name)) is not None)
        segments = [Segment(self.directory, base, interval) for base in bases]
        if not segments:
            segment = Segment(self.directory, start, interval)
            segment.path.touch()
            fsync_dir(self.directory)
            self._segments = [segment]
            self.end_offset = start
            return 0
        if segments[0].base_offset > start:
            raise LogCorruptError(f"{segments[0].path}: the log starts at offset {segments[0].base_offset}, but no "
                                  f"valid snapshot covers the offsets before it (newest usable ends at {start})")
        first = max(i for i, s in enumerate(segments) if s.base_offset <= start)
        for segment in segments[:first]:
            segment.adopt_closed()
        expected = segments[first].base_offset
        epoch = None
        for i in range(first, len(segments)):
            segment = segments[i]
            if segment.base_offset != expected:
                raise LogCorruptError(f"{segment.path}: starts at offset {segment.base_offset}, but the segment "
                                      f"before it ends at offset {expected}: records are missing")
            size = 0
            torn_at = None
            with mapped(segment.path) as buf:
                length = len(buf)
                try:
                    for position, header in walk(buf, 0, expected, epoch):
                        segment.note_recovered(position, header)
                        size = position + header.size
                        expected = header.base_offset + header.count
                        epoch = header.partition_leader_epoch
                except Damage as damage:
                    torn_at = damage
                refusal = judge_damage(segment.path, buf, torn_at, size, is_last=i == len(segments) - 1,
                                       snapshot_end=start, synced_bytes=synced.get(segment.path.name))
                if refusal is not None:
                    raise LogCorruptError(refusal)
            if torn_at is not None:
                log.warning("%s: torn write at the tail: truncating at byte %d (offset %d), dropping %d bytes (%s)",
                            segment.path, size, expected, length - size, torn_at.reason)
                segment.truncate(size)
            if segment.finish_recovery(size):
                log.info("%s: rebuilt the offset index", segment.index_path.name)
        if expected < start:
            raise LogCorruptError(f"{segments[-1].path}: the log ends at offset {expected}, before the end of the "
                                  f"newest snapshot ({start}): records are missing")
        self._segments = segments
        self._replay_from = first
        self.end_offset = expected
        return epoch or 0

    def _log_start_offset(self) -> int:
        return self._segments[0].base_offset if self._segments else 0

    # --- reading ------------------------------------------------------------------------------------

    def replay(self) -> Iterator[tuple[int, object]]:
        """Committed metadata records: the snapshot's (at offset end - 1) then the log's tail. Appends
        commit whole, so the high watermark falls between batches."""
        start = 0
        if self._snapshot is not None:
            snapshot, path = self._snapshot
            start = snapshot.end_offset
            for record in read_snapshot(path):
                yield start - 1, record
        limit = self.high_watermark
        for segment in self._segments[self._replay_from:]:
            with mapped(segment.path) as buf:
                position = 0
                while position < segment.size:
                    batch = read_batch(buf, position)
                    position += batch.size
                    if batch.base_offset >= limit:
                        return
                    if batch.attributes & ATTR_CONTROL or batch.next_offset <= start:
                        continue
                    records = batch.records if batch.base_offset >= start else [
                        r for r in batch.records if r.offset >= start]
                    offset = batch.base_offset
                    try:
                        for offset, _timestamp, _key, value in records:
                            yield offset, decode_frame(value)[0]
                    except UnknownRecordType as exc:
                        raise UnknownRecordError(segment.path, offset, exc) from None
                    except MalformedError as exc:
                        raise LogCorruptError(f"{segment.path}: record at offset {offset} cannot be decoded: "
                                              f"{exc.what}") from None

    def synced_lengths(self) -> dict[str, int]:
        """Bytes of each segment file known to be fsync'd."""
        return {s.path.name: s.synced_size for s in self._segments}

    def describe(self) -> QuorumDescription:
        quorum = self._quorum
        now = _now_ms()
        quorum.forget_observers(now - OBSERVER_SESSION_MS)
        voters = []
        for progress in quorum.voters.values():
            if progress.replica_id == self.node_id:  # the leader is always caught up with itself
                progress = ReplicaProgress(progress.replica_id, self.end_offset, now, now)
            voters.append(progress)
        return QuorumDescription(self.node_id, self.epoch, self.high_watermark, voters,
                                 sorted(quorum.observers.values(), key=lambda p: p.replica_id))

    def observe(self, replica_id: int, end_offset: int) -> None:
        """An observer (a broker) reported the end of the log it has."""
        if self._quorum is not None:
            self._quorum.observe(replica_id, end_offset, _now_ms())

    # --- appending -----------------------------------------------------------------------------------

    def add_commit_listener(self, listener) -> None:
        self._listeners.append(listener)

    def append(self, records: list) -> tuple[int, asyncio.Future]:
        base = self.end_offset
        now = _now_ms()
        data = metadata_batch(base, self.epoch, now, records)
        entry = _Append(base, base + len(records) - 1, data, self.epoch, now,
                        [(base + i, record) for i, (record, _version) in enumerate(records)])
        return base, self._enqueue(entry)

    def _enqueue(self, entry: _Append) -> asyncio.Future:
        loop = asyncio.get_running_loop()
        entry.future = loop.create_future()
        if self._failed is not None:
            entry.future.set_exception(LogFailedError(self._failed))
            return entry.future
        self.end_offset = entry.last + 1
        self._pending.append(entry)
        if self._flushing is None or self._flushing.done():
            self._flushing = loop.create_task(self._flush())
        return entry.future

    async def _flush(self) -> None:
        loop = asyncio.get_running_loop()
        while self._pending:
            if self.config.group_commit:
                group, self._pending = self._pending, []
            else:
                group, self._pending = self._pending[:1], self._pending[1:]
            try:
                await loop.run_in_executor(self._io, self._write_and_sync, group)
            except OSError as exc:
                self._fail(exc, group)
                return
            self.fsync_count += 1
            self._unacked.extend(group)
            self._quorum.update_voter(self.node_id, group[-1].last + 1, _now_ms())
            self._commit(self._quorum.high_watermark)

    def _write_and_sync(self, group: list[_Append]) -> None:
        """Runs in the I/O thread: write the batches (rolling segments by size), then one fsync."""
        segment = self._segments[-1]
        for entry in group:
            if segment.size and segment.size + len(entry.data) > self.config.segment_bytes:
                segment = self._roll(segment, entry.base)
            segment.append(entry.data, entry.last, entry.last + 1, entry.epoch)
        segment.sync()
        self._publish_synced_lengths()

    def _roll(self, segment: Segment, base: int) -> Segment:
        segment.sync(index_too=True)
        self._publish_synced_lengths()  # the old segment is whole on disk before a newer one exists
        segment.close()
        new = Segment(self.directory, base, self.config.index_interval_bytes)
        new.open_for_append()
        fsync_dir(self.directory)
        self._segments.append(new)
        self._publish_synced_lengths()
        return new

    def _publish_synced_lengths(self) -> None:
        """Write the active segment's fsync'd length, for crash tests and for recovery's torn-tail rule.
        Not fsync'd itself: after a power loss it is stale, never ahead of the truth."""
        active = self._segments[-1]
        tmp = self.directory / (SYNCED_LENGTHS + ".tmp")
        tmp.write_text(json.dumps({active.path.name: active.synced_size}))
        os.replace(tmp, self.directory / SYNCED_LENGTHS)

    def _commit(self, high_watermark: int) -> None:
        committed = []
        acknowledged = []
        while self._unacked and self._unacked[0].last < high_watermark:
            entry = self._unacked.popleft()
            committed.extend(entry.records)
            acknowledged.append(entry)
            self._since_snapshot_records += len(entry.records)
            self._since_snapshot_bytes += len(entry.data)
        if not acknowledged:
            return
        self.high_watermark = high_watermark
        self._committed_epoch = acknowledged[-1].epoch
        self._committed_timestamp = acknowledged[-1].timestamp
        if committed:
            for listener in self._listeners:
                try:
                    listener(committed)
                except Exception:
                    log.exception("a commit listener failed")
        self.commit_count += len(acknowledged)
        for entry in acknowledged:
            if not entry.future.done():
                entry.future.set_result(entry.last)
        self._maybe_snapshot()

    def _fail(self, exc: BaseException, group: list[_Append]) -> None:
        """A write or fsync failed (ENOSPC, EIO): nothing more is written, not even at close, and every
        append not yet committed fails; what was fsync'd before stays the log's durable end."""
        log.critical("metadata log write failed, accepting no more appends: %s", exc)
        self.failure = f"cannot write the metadata log in {self.directory}: {exc}"
        self._failed = f"an earlier write of the metadata log failed: {exc}"
        error = LogFailedError(self.failure)
        for entry in [*self._unacked, *group, *self._pending]:
            if not entry.future.done():
                entry.future.set_exception(error)
        self._unacked.clear()
        self._pending = []
        if self.on_failure is not None:
            self.on_failure(self.failure)

    # --- snapshots and retention ------------------------------------------------------------------

    def _maybe_snapshot(self) -> None:
        every_records, every_bytes = self.config.snapshot_every_records, self.config.snapshot_every_bytes
        due = ((every_records is not None and self._since_snapshot_records >= every_records)
               or (every_bytes is not None and self._since_snapshot_bytes >= every_bytes))
        if due and self.snapshot_source is not None and (self._snapshotting is None or self._snapshotting.done()):
            self._snapshotting = asyncio.get_running_loop().create_task(self._take_snapshot())

    async def snapshot(self) -> SnapshotId | None:
        """Take a snapshot of everything committed now (waiting for one under way first)."""
        if self._snapshotting is not None and not self._snapshotting.done():
            await self._snapshotting
        self._snapshotting = asyncio.get_running_loop().create_task(self._take_snapshot())
        return await self._snapshotting

    async def _take_snapshot(self) -> SnapshotId | None:
        if self.snapshot_source is None:
            return None
        snapshot = SnapshotId(self.high_watermark, self._committed_epoch)
        if self._snapshot is not None and self._snapshot[0].end_offset >= snapshot.end_offset:
            return self._snapshot[0]
        image = self.snapshot_source()  # a copy, taken now, consistent with the high watermark
        self._since_snapshot_records = self._since_snapshot_bytes = 0
        loop = asyncio.get_running_loop()
        try:
            path = await loop.run_in_executor(self._snapshot_io, write_snapshot, self.directory, snapshot,
                                              self._committed_timestamp, _now_ms(), image.to_records())
        except Exception:  # the log goes on without this snapshot; the next one is due as usual
            log.exception("could not write snapshot %s", snapshot.file_name)
            return None
        self._snapshot = (snapshot, path)
        log.info("wrote snapshot %s", path.name)
        if self.config.retention_bytes is not None or self.config.retention_ms is not None:
            await loop.run_in_executor(self._io, self._retire, snapshot.end_offset)
        return snapshot

    def _retire(self, snapshot_end: int) -> None:
        """Runs in the I/O thread: delete or archive the oldest segments wholly below the snapshot while
        the log is over ``retention_bytes`` or they are older than ``retention_ms``; then snapshots
        older than the new log start (the newest is always kept)."""
        retention_bytes, retention_ms = self.config.retention_bytes, self.config.retention_ms
        total = sum(s.size for s in self._segments)
        oldest_kept = time.time() - retention_ms / 1000 if retention_ms is not None else None
        retired = 0
        for segment, following in zip(self._segments, self._segments[1:]):
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
        self._segments = self._segments[retired:]
        self._replay_from = max(0, self._replay_from - retired)
        log_start = self._segments[0].base_offset
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

    # --- shutting down ------------------------------------------------------------------------------

    async def close(self) -> None:
        """Finish the writes under way (their appends commit), then close the files; later appends fail."""
        self._failed = self._failed or "the metadata log is closed"
        if self._flushing is not None:
            await self._flushing
        if self._snapshotting is not None:
            await self._snapshotting
        if self._segments:
            await asyncio.get_running_loop().run_in_executor(self._io, self._close_files)
        self._io.shutdown()
        self._snapshot_io.shutdown()

    def _close_files(self) -> None:
        active = self._segments[-1]
        if active.is_open and self.failure is None:
            active.sync(index_too=True)
            self._publish_synced_lengths()
        active.close()
