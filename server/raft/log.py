"""``RaftLog``: the durable metadata log of one controller, and the driver of its Raft core.

Layout under ``<data-dir>/__cluster_metadata-0/``: segments and their indexes (``segments``),
snapshots (``snapshots``), ``quorum-state`` (``quorum_state``), and ``synced-lengths.json``, which
says how many bytes of the active segment are known to be fsync'd (crash tests cut files back to no
less than that; recovery treats damage at or past it as an unsynced tail).

The log is the ``MetadataLog`` the controller writes through, and it drives a ``RaftCore``
(server/raft/core.py) with real files, timers and, given ``transport``, the wire (peer_wire.py): every
core action is carried out in order. ``PersistState`` writes ``quorum-state`` (fsync'd) before the
next action; ``AppendLog`` queues the entries' record batches, whose partition leader epoch is the
entries' epoch (a new leader's ``LeaderChange`` entry becomes a LeaderChangeMessage control batch);
``TruncateLog`` queues a truncation; ``FlushLog`` starts the one flush at a time that runs in the I/O
thread: it carries out every queued write and truncation, fsyncs once (group commit), and reports the
end fsync'd back with ``flush_completed``. A Fetch the core sends after a truncation waits until that
truncation is fsync'd. ``Send`` goes out through ``transport`` (an answer to a request this replica
received resolves that request), and ``Commit`` hands the newly committed records to the commit
listeners, then resolves the appends' futures. One ``loop.call_at`` is armed for the core's next
deadline. The core holds one entry per offset; entries hold their batch, so a Fetch is answered
with whole batches, and the high watermark, every fetch offset and every truncation fall between
batches.

The controller on this log is active once the core leads and its ``LeaderChange`` is committed
(``active``; the leadership listeners hear each change); ``append`` anywhere else raises
``NotLeaderError``, and a leader that loses its epoch fails the appends not yet committed with it.
With one voter (the default) the core elects itself at once and ``open`` returns once it is active.

Start-up (``open``): read ``quorum-state`` (a damaged one stops start-up), load the newest valid
snapshot, check every batch after it (torn tails are cut away, damage in the middle stops start-up),
then build the core from the log and the quorum state. Only bytes past the length recorded as fsync'd
can be a torn tail (``segments.judge_damage``, shared with ``log verify``): damage below it, in the
last batch too, or a file cut short of it, stops start-up. ``replay`` yields the snapshot's records
and the committed part of the log after it; a record of a type or version kraftwire has no schema for
stops it (``segments.UnknownRecordError``, as Kafka's metadata loader fails on one).

Snapshots are taken every ``snapshot_every_records`` records or ``snapshot_every_bytes`` bytes
committed, from an image copy given by ``snapshot_source``, and written in a thread. Retention is
off by default (the audit reads the whole history); with ``retention_bytes`` or ``retention_ms``,
segments wholly below the newest snapshot are deleted, or moved to ``archive_dir`` (one voter only:
followers cannot fetch snapshots yet).

Differences from Kafka: the core keeps the log's batches in memory too (the metadata log is small);
FetchSnapshot is served (``fetch_snapshot``) but no Fetch answer points at a snapshot yet, so a quorum of
several voters keeps its whole log; no ``.timeindex`` files; index files are not pre-allocated, and are
fsync'd at roll and close rather than with every commit (recovery rebuilds them); segments roll by size
only (no ``segment.ms``); damage in the middle of the log stops start-up instead of truncating the log
there; ``synced-lengths.json`` is kraftwire's own file. As in Kafka, snapshots are deleted only once the
log start moves past them, so with retention off they accumulate (one per 20 MiB of records by default).
"""
from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import random
import shutil
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Awaitable, Callable, Iterator

from kraftwire.codec import ErrorCode, MalformedError
from kraftwire.codec.constants import ZERO_UUID
from kraftwire.codec.log_layout import (DEFAULT_INDEX_INTERVAL_BYTES, METADATA_PARTITION, METADATA_TOPIC, PARTITION_DIR,
                                        parse_base_offset)
from kraftwire.codec.messages import FetchSnapshotResponse
from kraftwire.codec.records import (ATTR_CONTROL, LeaderChangeMessage, UnknownRecordType, control_batch, decode_frame,
                                     metadata_batch, read_batch)

from . import peer_wire
from .core import (AppendLog, BeginQuorumEpochResponse, Commit, EndQuorumEpochResponse, Entry, FetchRequest,
                   FetchResponse, FlushLog, NotLeaderError, PersistState, RaftCore, Role, Send, Timers, TruncateLog,
                   VoteResponse)
from .quorum_state import NO_ID, QuorumState, read_quorum_state, write_quorum_state
from .segments import Damage, Segment, UnknownRecordError, judge_damage, mapped, walk
from .snapshots import SnapshotError, SnapshotId, check_snapshot, list_snapshots, read_snapshot, remove_partial, \
    write_snapshot
from .storage import StorageError, fsync_dir

log = logging.getLogger("kraftwire.raft")

SYNCED_LENGTHS = "synced-lengths.json"
OBSERVER_SESSION_MS = 300_000  # LeaderState.OBSERVER_SESSION_TIMEOUT_MS
# transport(destination id, request, version) -> response; raises (or never answers) when the link is down
Transport = Callable[[int, object, int], Awaitable[object]]


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


@dataclass
class ReplicaProgress:
    """A replica as the leader sees it, for DescribeQuorum (times in wall-clock ms, -1: never)."""
    replica_id: int
    end_offset: int = -1
    last_fetch_ms: int = -1
    last_caught_up_ms: int = -1
    directory_id: uuid.UUID = ZERO_UUID  # the fetcher's log directory (Fetch v17's ReplicaDirectoryId)


@dataclass(frozen=True)
class QuorumDescription:
    leader_id: int
    epoch: int
    high_watermark: int
    voters: list[ReplicaProgress]
    observers: list[ReplicaProgress]


@dataclass(eq=False)
class _Batch:
    """One record batch of the log: its offsets, bytes and epoch, and (decoded on demand) its records."""
    base: int
    last: int
    data: bytes
    epoch: int
    timestamp: int
    control: bool
    records: list | None = None  # [(offset, record)] of a local append; others are decoded when read
    future: asyncio.Future | None = None  # a local append's, resolved once committed

    def decoded(self) -> list:
        if self.records is not None:
            return self.records
        batch = read_batch(self.data, 0)
        if batch.is_control:
            return []
        return [(offset, decode_frame(value)[0]) for offset, _ts, _key, value in batch.records]


def read_synced_lengths(directory: Path) -> dict[str, int]:
    """``synced-lengths.json``: bytes of the active segment known to be fsync'd (empty when unreadable)."""
    try:
        synced = json.loads((directory / SYNCED_LENGTHS).read_text())
    except (OSError, ValueError):
        return {}
    return synced if isinstance(synced, dict) else {}


def _wall_ms() -> int:
    return int(time.time() * 1000)


_RESPONSES = (BeginQuorumEpochResponse, EndQuorumEpochResponse, FetchResponse, VoteResponse)


def _unanswered_fetch(request: FetchRequest) -> FetchResponse:
    """The answer to a long poll the core dropped (its role changed while it waited)."""
    return FetchResponse(src=request.dst, dst=request.src, correlation_id=request.correlation_id,
                         error_code=int(ErrorCode.NOT_LEADER_OR_FOLLOWER), high_watermark=0,
                         base_offset=request.fetch_offset, records=(), diverging_epoch=None, current_leader=(NO_ID, 0))


def _snapshot_id(asked) -> FetchSnapshotResponse.SnapshotId:
    return FetchSnapshotResponse.SnapshotId(end_offset=asked.end_offset, epoch=asked.epoch)


def batches_from(data: bytes) -> list[_Batch]:
    """The record batches of a Fetch answer (or a log), as the log keeps them."""
    found, position = [], 0
    while position < len(data):
        batch = read_batch(data, position)
        found.append(_Batch(batch.base_offset, batch.last_offset, bytes(data[position:position + batch.size]),
                            batch.partition_leader_epoch, batch.base_timestamp, batch.is_control))
        position += batch.size
    return found


class RaftLog:
    def __init__(self, data_dir: str | Path, node_id: int, config: RaftConfig = RaftConfig(),
                 voters: list[int] | None = None, timers: Timers = Timers(), rng: random.Random | None = None,
                 cluster_id: str = ""):
        self.directory = Path(data_dir) / PARTITION_DIR
        self.node_id = node_id
        self.config = config
        self.voters = tuple(sorted(voters or [node_id]))
        if len(self.voters) > 1 and (config.retention_bytes is not None or config.retention_ms is not None):
            raise ValueError("log retention needs a single voter: followers cannot fetch snapshots yet")
        self.timers = timers
        self.rng = rng or random.Random()
        self.cluster_id = cluster_id
        self.transport: Transport | None = None  # how requests reach the other voters
        self.core: RaftCore | None = None
        self.high_watermark = 0
        self.active = False
        self.snapshot_source: Callable[[], object] | None = None  # -> image copy with to_records()
        self.fsync_count = 0
        self.commit_count = 0  # batches committed
        self._listeners: list[Callable] = []
        self._leadership_listeners: list[Callable[[bool], None]] = []
        self._recovered: list[_Batch] = []
        self._state: QuorumState | None = None
        self._control: dict[int, _Batch] = {}  # the batches of this leader's LeaderChange entries, by offset
        self._ops: list[tuple[str, object]] = []  # ("write", batch) / ("truncate", offset), not carried out yet
        self._truncating: list[int] = []  # truncations queued or under way, not yet fsync'd
        self._held: list = []  # Fetch requests waiting for a truncation to be fsync'd
        self._flushing: asyncio.Task | None = None
        self._snapshotting: asyncio.Task | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task] = set()
        self._incoming: dict[tuple[int, int], asyncio.Future] = {}
        self._incoming_ids = itertools.count(1)
        self._leader_epoch = -1  # the epoch this replica last led
        self._leader_change_offset = -1
        self._progress: dict[int, ReplicaProgress] = {}
        self._observers: dict[int, ReplicaProgress] = {}
        self._active_changed: asyncio.Event | None = None
        self._resumed: asyncio.Event | None = None  # set while the harness has the replica paused
        self._closed = False
        self._failed: str | None = None  # why appends are refused: a failed write, or the log is closed
        self.failure: str | None = None  # why a write or fsync failed, once one has
        self.on_failure: Callable[[str], None] | None = None  # told once, after the pending appends failed
        self._segments: list[Segment] = []
        self._snapshot: tuple[SnapshotId, Path] | None = None
        self._since_snapshot_records = 0
        self._since_snapshot_bytes = 0
        self._committed_epoch = 0
        self._committed_timestamp = -1
        self._io = ThreadPoolExecutor(1, thread_name_prefix="kraftwire-log-io")
        self._snapshot_io = ThreadPoolExecutor(1, thread_name_prefix="kraftwire-snapshot")

    # --- the core's view ------------------------------------------------------------------------------

    @property
    def epoch(self) -> int:
        return self.core.epoch if self.core is not None else 0

    @property
    def end_offset(self) -> int:
        return self.core.log_end if self.core is not None else 0

    @property
    def leader_id(self) -> int:
        return self.core.leader_id if self.core is not None else NO_ID

    @property
    def role(self) -> Role | None:
        return self.core.role if self.core is not None else None

    # --- start-up ------------------------------------------------------------------------------------

    async def open(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._io, self._recover)
        start = self._snapshot[0].end_offset if self._snapshot else 0
        first = self._recovered[0].base if self._recovered else start
        filler = Entry(self._snapshot[0].epoch if self._snapshot else 0, None)
        entries = [filler] * first  # offsets retention removed: below the snapshot, never read again
        for batch in self._recovered:  # an entry's data is its batch: one Entry serves all the batch's offsets
            entries.extend([Entry(batch.epoch, batch, batch.control)] * (batch.last - batch.base + 1))
        self._recovered = []
        state = self._state
        last_epoch = max(entries[-1].epoch if entries else 0, filler.epoch)
        epoch, leader, voted = (state.leader_epoch, state.leader_id, state.voted_id) if state else (0, NO_ID, NO_ID)
        if last_epoch > epoch:  # a quorum-state older than the log: start unattached in the log's epoch
            epoch, leader, voted = last_epoch, NO_ID, NO_ID
        self.high_watermark = start
        self._active_changed = asyncio.Event()
        self.core = RaftCore(self.node_id, self.voters, self.rng, self._now(), timers=self.timers, epoch=epoch,
                             leader_id=leader, voted_id=voted, log=entries)
        self._arm_timer()
        if self.voters == (self.node_id,):
            while not self.active and self.failure is None:
                self._active_changed.clear()
                await self._active_changed.wait()
            if self.failure is not None:
                raise LogFailedError(self.failure)
        log.info("metadata log open at %s: epoch %d, offsets %d..%d, high watermark %d, voters %s", self.directory,
                 self.epoch, self._log_start_offset(), self.end_offset, self.high_watermark, list(self.voters))

    def _recover(self) -> None:
        """Runs in the I/O thread before anything else touches the files."""
        directory = self.directory
        directory.mkdir(parents=True, exist_ok=True)
        self._state = read_quorum_state(directory)
        for path in remove_partial(directory):
            log.info("deleted the interrupted snapshot %s", path.name)
        self._snapshot = self._newest_valid_snapshot()
        start = self._snapshot[0].end_offset if self._snapshot else 0
        self._recover_segments(start, read_synced_lengths(self.directory))
        if self._snapshot:
            self._committed_epoch = self._snapshot[0].epoch
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
        """Check every batch from the segment holding ``start`` on (from the first segment when there are
        several voters: a follower may need any of it) and keep them for the core; cut a torn tail;
        returns the epoch of the last batch (0 if none)."""
        interval = self.config.index_interval_bytes
        bases = sorted(b for p in self.directory.iterdir() if (b := parse_base_offset(p.name)) is not None)
        segments = [Segment(self.directory, base, interval) for base in bases]
        if not segments:
            segment = Segment(self.directory, start, interval)
            segment.path.touch()
            fsync_dir(self.directory)
            self._segments = [segment]
            return 0
        if segments[0].base_offset > start:
            raise LogCorruptError(f"{segments[0].path}: the log starts at offset {segments[0].base_offset}, but no "
                                  f"valid snapshot covers the offsets before it (newest usable ends at {start})")
        first = 0 if len(self.voters) > 1 else max(i for i, s in enumerate(segments) if s.base_offset <= start)
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
                        self._recovered.append(_Batch(
                            header.base_offset, expected - 1, bytes(buf[position:size]), epoch,
                            header.base_timestamp, bool(header.attributes & ATTR_CONTROL)))
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
        return epoch or 0

    def _log_start_offset(self) -> int:
        return self._segments[0].base_offset if self._segments else 0

    # --- reading ------------------------------------------------------------------------------------

    def replay(self) -> Iterator[tuple[int, object]]:
        """Committed metadata records: the snapshot's (at offset end - 1), then the log's up to the high
        watermark (everything, once a sole voter has opened the log)."""
        start = 0
        if self._snapshot is not None:
            snapshot, path = self._snapshot
            start = snapshot.end_offset
            for record in read_snapshot(path):
                yield start - 1, record
        for batch in self._batches(start, self.high_watermark):
            try:
                records = batch.decoded()
            except UnknownRecordType:
                raise self._unknown_record(batch) from None
            except MalformedError as exc:
                raise LogCorruptError(f"{self.directory}: a record of the batch at offset {batch.base} cannot be "
                                      f"decoded: {exc.what}") from None
            yield from ((offset, record) for offset, record in records if offset >= start)

    def _unknown_record(self, batch: _Batch) -> UnknownRecordError:
        """The refusal naming the segment file and offset of the first record of ``batch`` with no schema."""
        path = next(s.path for s in reversed(self._segments) if s.base_offset <= batch.base)
        for offset, _timestamp, _key, value in read_batch(batch.data, 0).records:
            try:
                decode_frame(value)
            except UnknownRecordType as exc:
                return UnknownRecordError(path, offset, exc)
        raise AssertionError("the batch decoded once and not again")

    def _batches(self, start: int, end: int) -> Iterator[_Batch]:
        """The batches that hold offsets ``start`` .. ``end - 1`` and end before ``end``."""
        log_entries = self.core.log
        offset = start
        while offset < end:
            batch = self._batch_at(offset, log_entries[offset])
            if batch is None:
                offset += 1
                continue
            if batch.last >= end:
                return
            yield batch
            offset = batch.last + 1

    def _batch_at(self, offset: int, entry: Entry) -> _Batch | None:
        if isinstance(entry.data, _Batch):
            return entry.data
        return self._control.get(offset)  # a LeaderChange this replica wrote as leader; None below the log start

    def synced_lengths(self) -> dict[str, int]:
        """Bytes of each segment file known to be fsync'd."""
        return {s.path.name: s.synced_size for s in self._segments}

    def describe(self) -> QuorumDescription:
        """The quorum as the leader sees it; NotLeaderError elsewhere."""
        if not self.active:
            raise NotLeaderError(self.core.leader_id, self.core.epoch)
        now = _wall_ms()
        for replica_id in [r for r, p in self._observers.items() if p.last_fetch_ms < now - OBSERVER_SESSION_MS]:
            del self._observers[replica_id]
        voters = [ReplicaProgress(v, self.core.durable_end, now, now) if v == self.node_id
                  else self._progress.setdefault(v, ReplicaProgress(v)) for v in self.voters]
        return QuorumDescription(self.node_id, self.epoch, self.high_watermark, voters,
                                 sorted(self._observers.values(), key=lambda p: p.replica_id))

    def _note_progress(self, progress: ReplicaProgress, end_offset: int, replace_end: bool = False) -> None:
        now = _wall_ms()
        progress.end_offset = end_offset if replace_end else max(progress.end_offset, end_offset)
        progress.last_fetch_ms = now
        if end_offset >= self.high_watermark:
            progress.last_caught_up_ms = now

    # --- listeners ---------------------------------------------------------------------------------

    def add_commit_listener(self, listener) -> None:
        self._listeners.append(listener)

    def add_leadership_listener(self, listener: Callable[[bool], None]) -> None:
        """Called with True once this replica's controller is active, with False when it stops being so."""
        self._leadership_listeners.append(listener)

    # --- appending -----------------------------------------------------------------------------------

    def append(self, records: list) -> tuple[int, asyncio.Future]:
        """Append one batch on the active controller: (base offset, future resolved with its last offset
        once committed). NotLeaderError when this controller is not the active one."""
        loop = asyncio.get_running_loop()
        base = self.end_offset
        if self._failed is not None:
            future = loop.create_future()
            future.set_exception(LogFailedError(self._failed))
            return base, future
        if not self.active:
            raise NotLeaderError(self.core.leader_id, self.core.epoch)
        now = _wall_ms()
        batch = _Batch(base, base + len(records) - 1, metadata_batch(base, self.core.epoch, now, records),
                       self.core.epoch, now, False,
                       [(base + i, record) for i, (record, _version) in enumerate(records)],
                       loop.create_future())
        actions = []
        for _ in records:
            actions += self.core.append(self._now(), batch)[1]
        self._run(actions)
        return base, batch.future

    # --- driving the core ------------------------------------------------------------------------------

    def resign(self) -> None:
        """Step down as leader (EndQuorumEpoch to the voters, best-replicated first); a no-op elsewhere."""
        self._run(self.core.resign(self._now()))

    def _now(self) -> int:
        return int(asyncio.get_running_loop().time() * 1000)

    def _run(self, actions: list) -> None:
        """Carry out the core's actions in order, then re-arm the timer and follow leadership."""
        for action in actions:
            if isinstance(action, PersistState):
                self._persist(action)
            elif isinstance(action, TruncateLog):
                self._queue("truncate", action.offset)
                self._truncating.append(action.offset)
                self._start_flush()  # the Fetch the core sends next waits for this truncation's fsync
                for offset in [o for o in self._control if o >= action.offset]:
                    del self._control[offset]
            elif isinstance(action, AppendLog):
                self._queue_entries(action.offset, action.entries)
            elif isinstance(action, FlushLog):
                self._start_flush()
            elif isinstance(action, Send):
                self._send(action.message)
            elif isinstance(action, Commit):
                self._deliver(action.high_watermark)
        self._arm_timer()
        self._follow_leadership()

    def _persist(self, action: PersistState) -> None:
        try:
            write_quorum_state(self.directory, QuorumState(action.leader_id, action.epoch, action.voted_id,
                                                           self.voters))
        except OSError as exc:
            self._fail(exc)

    def _queue(self, kind: str, item) -> None:
        self._ops.append((kind, item))

    def _queue_entries(self, offset: int, entries: tuple[Entry, ...]) -> None:
        for i, entry in enumerate(entries):
            if isinstance(entry.data, _Batch):
                if entry.data.base == offset + i:
                    self._queue("write", entry.data)
            elif entry.control:  # the core's LeaderChange: this replica leads the entry's epoch
                voters = [LeaderChangeMessage.Voter(voter_id=v) for v in self.voters]
                message = LeaderChangeMessage(version=0, leader_id=self.node_id, voters=voters, granting_voters=voters)
                now = _wall_ms()
                batch = _Batch(offset + i, offset + i, control_batch(offset + i, entry.epoch, now, [message]),
                               entry.epoch, now, True, [])
                self._control[offset + i] = batch
                self._queue("write", batch)

    def _start_flush(self) -> None:
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self) -> None:
        loop = asyncio.get_running_loop()
        while self._ops and self.failure is None:
            if self.config.group_commit:
                group, self._ops = self._ops, []
            else:
                cut = next((i + 1 for i, (kind, _) in enumerate(self._ops) if kind == "write"), len(self._ops))
                group, self._ops = self._ops[:cut], self._ops[cut:]
            truncations = sum(1 for kind, _ in group if kind == "truncate")
            try:
                end = await loop.run_in_executor(self._io, self._write_and_sync, group)
            except OSError as exc:
                self._fail(exc)
                return
            self.fsync_count += 1
            await self._unfrozen()
            del self._truncating[:truncations]
            if self._truncating:  # a truncation queued meanwhile: only what lies below it stays durable
                end = min(end, *self._truncating)
            else:
                held, self._held = self._held, []
                for message in held:
                    self._send(message)
            self._run(self.core.flush_completed(self._now(), end))

    def _send(self, message) -> None:
        if isinstance(message, _RESPONSES):  # the answer to a request this replica received
            waiting = self._incoming.pop((message.dst, message.correlation_id), None)
            if waiting is not None and not waiting.done():
                waiting.set_result(message)
        elif isinstance(message, FetchRequest) and self._truncating:
            self._held.append(message)
        elif self.transport is not None:
            task = asyncio.get_running_loop().create_task(self._exchange(message))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _exchange(self, message) -> None:
        """Send one request and hand the answer to the core; a lost one is the core's timers' business."""
        request, version = peer_wire.to_request(message, self.cluster_id)
        timeout = self.timers.request_timeout_ms / 1000
        if isinstance(message, FetchRequest):
            timeout += message.max_wait_ms / 1000
        try:
            answer = await asyncio.wait_for(self.transport(message.dst, request, version), timeout)
            response = peer_wire.from_response(message, answer, self._decode_records)
        except (OSError, asyncio.TimeoutError, MalformedError) as exc:
            log.debug("node %d: %s to %d got no answer: %s", self.node_id, type(message).__name__, message.dst, exc)
            return
        await self._unfrozen()
        if response is not None and not self._closed:
            self._run(self.core.receive(self._now(), response))

    def _decode_records(self, data: bytes) -> list[Entry]:
        entries = []
        for batch in batches_from(data):
            entries.extend([Entry(batch.epoch, batch, batch.control)] * (batch.last - batch.base + 1))
        return entries

    def _encode_records(self, base_offset: int, entries: tuple[Entry, ...]) -> bytes:
        """The batches holding the entries, each whole (a batch cut by the core's entry limit goes out
        entire, so fetchers' logs end between batches)."""
        chunks, last = [], base_offset - 1
        for offset, entry in enumerate(entries, base_offset):
            batch = self._batch_at(offset, entry)
            if batch is not None and batch.base > last:
                chunks.append(batch.data)
                last = batch.last
        return b"".join(chunks)

    async def handle(self, request, version: int):
        """Answer a Vote, BeginQuorumEpoch, EndQuorumEpoch or Fetch request from another replica."""
        await self._unfrozen()
        if self.core is None or self._closed or self.failure is not None:
            raise LogFailedError(self._failed or "the metadata log is not open")
        try:
            message = peer_wire.from_request(request, version, self.cluster_id, next(self._incoming_ids))
        except peer_wire.Refused as refused:
            return refused.response
        loop = asyncio.get_running_loop()
        waiting = self._incoming[(message.src, message.correlation_id)] = loop.create_future()
        if isinstance(message, FetchRequest) and self.active:
            progress = self._progress if message.replica_id in self.voters else self._observers
            replica = progress.setdefault(message.replica_id, ReplicaProgress(message.replica_id))
            if version >= 17:
                replica.directory_id = request.topics[0].partitions[0].replica_directory_id
            self._note_progress(replica, message.fetch_offset, replace_end=message.replica_id not in self.voters)
        self._run(self.core.receive(self._now(), message))
        timeout = self.timers.request_timeout_ms / 1000 + getattr(message, "max_wait_ms", 0) / 1000
        try:
            reply = await asyncio.wait_for(waiting, timeout)
        except asyncio.TimeoutError:  # a long poll the core dropped when its role changed
            self._incoming.pop((message.src, message.correlation_id), None)
            return peer_wire.to_response(replace(
                _unanswered_fetch(message), high_watermark=self.high_watermark,
                current_leader=(self.core.leader_id, self.core.epoch)), version)
        log_start = self._segments[0].base_offset if self._segments else 0
        return peer_wire.to_response(reply, version, self._encode_records, log_start)

    def fetch_snapshot(self, request, version: int):
        """Answer FetchSnapshot (59): a chunk of one of the leader's snapshot files (KIP-630)."""
        if request.cluster_id is not None and request.cluster_id != self.cluster_id:
            return FetchSnapshotResponse(error_code=ErrorCode.INCONSISTENT_CLUSTER_ID, topics=[])
        topics = request.topics
        if (len(topics) != 1 or topics[0].name != METADATA_TOPIC or len(topics[0].partitions) != 1
                or topics[0].partitions[0].partition != METADATA_PARTITION):
            return FetchSnapshotResponse(error_code=ErrorCode.NONE, topics=[
                FetchSnapshotResponse.TopicSnapshot(name=t.name, partitions=[FetchSnapshotResponse.PartitionSnapshot(
                    index=p.partition, error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                    snapshot_id=_snapshot_id(p.snapshot_id), unaligned_records=b"") for p in t.partitions])
                for t in topics])
        asked = topics[0].partitions[0]
        error, chunk, size = ErrorCode.NONE, b"", 0
        if self.core is None or asked.current_leader_epoch < self.core.epoch:
            error = ErrorCode.FENCED_LEADER_EPOCH
        elif asked.current_leader_epoch > self.core.epoch:
            error = ErrorCode.UNKNOWN_LEADER_EPOCH
        elif not self.active:
            error = ErrorCode.NOT_LEADER_OR_FOLLOWER
        else:
            wanted = SnapshotId(asked.snapshot_id.end_offset, asked.snapshot_id.epoch)
            path = dict(list_snapshots(self.directory)).get(wanted)
            size = path.stat().st_size if path is not None else 0
            if path is None:
                error = ErrorCode.SNAPSHOT_NOT_FOUND
            elif not 0 <= asked.position < size:
                error = ErrorCode.POSITION_OUT_OF_RANGE
            else:
                with open(path, "rb") as snapshot_file:
                    snapshot_file.seek(asked.position)
                    chunk = snapshot_file.read(max(0, min(request.max_bytes, size - asked.position)))
        partition = FetchSnapshotResponse.PartitionSnapshot(
            index=METADATA_PARTITION, error_code=error, snapshot_id=_snapshot_id(asked.snapshot_id),
            current_leader=FetchSnapshotResponse.LeaderIdAndEpoch(leader_id=self.leader_id, leader_epoch=self.epoch),
            size=size, position=asked.position, unaligned_records=chunk)
        return FetchSnapshotResponse(error_code=ErrorCode.NONE, topics=[
            FetchSnapshotResponse.TopicSnapshot(name=METADATA_TOPIC, partitions=[partition])])

    def _arm_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        frozen = self._resumed is not None or self._closed or self.failure is not None
        deadline = self.core.next_deadline() if self.core is not None and not frozen else None
        if deadline is not None:
            self._timer = asyncio.get_running_loop().call_at((deadline + 1) / 1000, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self._run(self.core.on_timer(self._now()))

    def _follow_leadership(self) -> None:
        core = self.core
        leading = core.role is Role.LEADER
        if leading and self._leader_epoch != core.epoch:
            self._leader_epoch = core.epoch
            start = core.log_end
            while start > 0 and core.log[start - 1].epoch == core.epoch:
                start -= 1
            self._leader_change_offset = start
            self._progress = {}
        active = leading and core.epoch == self._leader_epoch and self.high_watermark > self._leader_change_offset
        if active == self.active:
            return
        self.active = active
        log.info("node %d %s the active controller (epoch %d)", self.node_id, "is now" if active else "is no longer",
                 core.epoch)
        if not active:
            error = NotLeaderError(core.leader_id, core.epoch)
            for batch in self._batches_awaiting():
                batch.future.set_exception(error)
        self._active_changed.set()
        for listener in self._leadership_listeners:
            try:
                listener(active)
            except Exception:
                log.exception("a leadership listener failed")

    def _batches_awaiting(self) -> list[_Batch]:
        """This replica's appends past the high watermark whose futures are still open."""
        found, seen = [], set()
        for offset in range(self.high_watermark, self.core.log_end):
            batch = self.core.log[offset].data
            if isinstance(batch, _Batch) and id(batch) not in seen:
                seen.add(id(batch))
                if batch.future is not None and not batch.future.done():
                    found.append(batch)
        return found

    def _deliver(self, high_watermark: int) -> None:
        """Hand the records below the new high watermark to the listeners, then resolve their appends."""
        done = list(self._batches(self.high_watermark, high_watermark))
        if not done:
            return
        # decoded only for listeners: a log opened with one voter commits its whole tail before any listens
        committed = [record for batch in done for record in batch.decoded()] if self._listeners else []
        self.high_watermark = done[-1].last + 1
        self._committed_epoch = done[-1].epoch
        self._committed_timestamp = done[-1].timestamp
        self._since_snapshot_records += sum(b.last - b.base + 1 for b in done if not b.control)
        self._since_snapshot_bytes += sum(len(b.data) for b in done)
        if committed:
            for listener in self._listeners:
                try:
                    listener(committed)
                except Exception:
                    log.exception("a commit listener failed")
        self.commit_count += len(done)
        for batch in done:
            if batch.future is not None and not batch.future.done():
                batch.future.set_result(batch.last)
        self._maybe_snapshot()

    def _write_and_sync(self, group: list[tuple[str, object]]) -> int:
        """Runs in the I/O thread: carry out the writes (rolling segments by size) and truncations in
        order, then one fsync; returns the end offset now durable."""
        for kind, item in group:
            if kind == "truncate":
                self._truncate_files(item)
                continue
            segment = self._segments[-1]
            if segment.size and segment.size + len(item.data) > self.config.segment_bytes:
                segment = self._roll(segment, item.base)
            segment.append(item.data, item.last, item.last + 1, item.epoch)
        self._segments[-1].sync()
        self._publish_synced_lengths()
        return self._segments[-1].next_offset

    def _truncate_files(self, offset: int) -> None:
        """Runs in the I/O thread: drop every batch at or past ``offset`` (a batch boundary); the
        active segment is rebuilt from the batches it keeps (made durable by the group's fsync)."""
        dropped = False
        while len(self._segments) > 1 and self._segments[-1].base_offset >= offset:
            segment = self._segments.pop()
            segment.close()
            segment.delete()
            dropped = True
        if dropped:
            fsync_dir(self.directory)
        old = self._segments[-1]
        old.close()
        segment = Segment(self.directory, old.base_offset, self.config.index_interval_bytes)
        size = 0
        with mapped(old.path) as buf:
            for position, header in walk(buf[:old.size], 0, old.base_offset):
                if header.base_offset >= offset:
                    break
                segment.note_recovered(position, header)
                size = position + header.size
        if size < old.size:
            log.info("%s: truncating to offset %d (byte %d): the leader's log diverges there", old.path.name,
                     offset, size)
            segment.truncate(size)
        segment.finish_recovery(size)
        segment.synced_size = min(old.synced_size, size)
        segment.open_for_append()
        self._segments[-1] = segment

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

    def _fail(self, exc: BaseException) -> None:
        """A write or fsync failed (ENOSPC, EIO): nothing more is written, not even at close, and every
        append not yet committed fails; what was fsync'd before stays the log's durable end."""
        log.critical("metadata log write failed, accepting no more appends: %s", exc)
        self.failure = f"cannot write the metadata log in {self.directory}: {exc}"
        self._failed = f"an earlier write of the metadata log failed: {exc}"
        self._ops = []
        error = LogFailedError(self.failure)
        for batch in self._batches_awaiting():
            batch.future.set_exception(error)
        self._arm_timer()
        if self._active_changed is not None:
            self._active_changed.set()  # an open waiting to lead gives up
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
                                              self._committed_timestamp, _wall_ms(), image.to_records())
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
        """Finish the writes under way (their appends commit), then close the files; later appends fail.
        A leader of several voters resigns first (EndQuorumEpoch), so another takes over at once."""
        if self._closed:
            return
        self._closed = True
        if self.active and len(self.voters) > 1:
            self._run(self.core.resign(self._now()))
            if self._tasks:
                await asyncio.wait(list(self._tasks), timeout=self.timers.request_timeout_ms / 1000)
        self._failed = self._failed or "the metadata log is closed"
        self._stop_driving()
        if self._flushing is not None:
            await self._flushing
        if self._snapshotting is not None:
            await self._snapshotting
        if self._segments:
            await asyncio.get_running_loop().run_in_executor(self._io, self._close_files)
        self._io.shutdown()
        self._snapshot_io.shutdown()

    async def kill(self) -> None:
        """Stop as a killed process stops: nothing more is written, sent or answered, and what was
        written but not fsync'd is lost (the active segment is cut back to its fsync'd length)."""
        if self._closed:
            return
        self._closed = True
        self._failed = "the controller was killed"
        self._ops = []
        self._stop_driving()
        if self._flushing is not None:
            self._flushing.cancel()
        if self._snapshotting is not None:
            self._snapshotting.cancel()
        if self._segments:
            await asyncio.get_running_loop().run_in_executor(self._io, self._drop_unsynced)
        self._io.shutdown()
        self._snapshot_io.shutdown(wait=False)

    def _drop_unsynced(self) -> None:
        active = self._segments[-1]
        active.close()
        active.truncate(active.synced_size)

    def _stop_driving(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for task in list(self._tasks):
            task.cancel()
        for waiting in self._incoming.values():
            waiting.cancel()
        if self._resumed is not None:
            self._resumed.set()

    # --- freezing (the harness's pause) --------------------------------------------------------------

    def pause(self) -> None:
        """Freeze the replica: its timer stops, and nothing reaches its core (answers to its requests,
        finished fsyncs, other replicas' requests) until ``resume``."""
        if self._resumed is None:
            self._resumed = asyncio.Event()
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    def resume(self) -> None:
        if self._resumed is not None:
            self._resumed.set()
            self._resumed = None
            if not self._closed:
                self._arm_timer()

    async def _unfrozen(self) -> None:
        while self._resumed is not None and not self._closed:
            await self._resumed.wait()

    def _close_files(self) -> None:
        active = self._segments[-1]
        if active.is_open and self.failure is None:
            active.sync(index_too=True)
            self._publish_synced_lengths()
        active.close()
