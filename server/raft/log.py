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
deadline. The core holds one entry per offset from the latest snapshot's end; entries hold their
batch, so a Fetch is answered with whole batches, and the high watermark, every fetch offset, every
truncation and every snapshot's end fall between batches.

Snapshots through the quorum (KIP-630): every controller snapshots its own committed image and tells
the core (``snapshot_taken``), whose log start then moves to the snapshot's end. A replica that fetches
below the leader's log start is pointed at the leader's latest snapshot, and downloads it by
FetchSnapshot: the leader reads the chunks the core names from the snapshot file, the follower writes
them to ``<end>-<epoch>.checkpoint.part``; once whole it is checked and fsync'd, and the install is
queued as a truncation is (so the next Fetch waits until it is durable): in the I/O thread, an empty
segment at the snapshot's end is created, the older segments are deleted, and the ``.part`` file is
renamed to its ``.checkpoint`` name. The snapshot listeners (``add_snapshot_listener``) then hear the
snapshot's id and path: the controller rebuilds its committed image from ``replay()``, which now starts
there. A crash during the download leaves a ``.part`` file, deleted at start-up, and the old state; a
crash during the install leaves a whole ``.part`` file and an empty segment at its end, which start-up
takes as the sign to finish the install.

Dynamic voters (KIP-853): the core's KRaftVersionRecord and VotersRecord entries are written as control
records 5 and 6 (with a new leader's LeaderChange in one control batch), and entries read back from the
log or a Fetch answer carry them decoded, so the voter set is recovered from the log at every start;
every snapshot taken with kraft.version 1 holds the KRaftVersionRecord and VotersRecord in force at its end
after its header (the core's ``voters_at``), and the core gets them from the snapshot it starts from or
installs, so the log below a snapshot can go as with kraft.version 0; ``handle`` serves AddRaftVoter,
RemoveRaftVoter and UpdateRaftVoter, and a voter whose listeners changed sends UpdateRaftVoter to the
leader itself.

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
committed, from the data batches ``snapshot_source`` captures at the high watermark (the image encodes
only what changed since its last snapshot: server/metadata/snapshot_encoding.py), and written in a thread. Retention of the
files is off by default (the audit reads the whole history); with ``retention_bytes`` or
``retention_ms``, segments wholly below the newest snapshot are deleted, or moved to ``archive_dir``.

Differences from Kafka: the core keeps the log's batches in memory too (the metadata log is small);
the core's log start moves to every snapshot's end, whatever the retention of the files (a replica
that lags behind it downloads the snapshot); FetchSnapshot serves only the latest snapshot (Kafka serves
any it still has; a follower asking for an older one is answered SNAPSHOT_NOT_FOUND and fetches again);
an observer's Fetch is not held back while the high watermark has moved since its last answer (else it
could wait in vain to learn that what it holds is committed; Kafka 4.1's Fetch v18 carries the
fetcher's high watermark for this, the controllers speak v17); no ``.timeindex`` files; index files are
not pre-allocated, and are fsync'd at roll and close rather than with every commit (recovery rebuilds them); segments roll by size
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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Awaitable, Callable, Iterable, Iterator

from kraftwire.codec import ErrorCode, MalformedError
from kraftwire.codec.log_layout import (DEFAULT_INDEX_INTERVAL_BYTES, INDEX_SUFFIX, PARTIAL_SNAPSHOT_SUFFIX, PARTITION_DIR,
                                        SNAPSHOT_SUFFIX, parse_base_offset, parse_snapshot_name, segment_file_name)
from kraftwire.codec.records import (ATTR_CONTROL, LeaderChangeMessage, UnknownRecordType, check_batch, control_batch,
                                     decode_control, decode_frame, metadata_batch, read_batch)

from . import peer_wire
from . import voters as voter_sets
from .core import (AddRaftVoterRequest, AddRaftVoterResponse, AppendLog, BeginQuorumEpochResponse, Commit,
                   EndQuorumEpochResponse, Entry, FetchRequest, FetchResponse, FetchSnapshotResponse, FlushLog,
                   InstallSnapshot, NotLeaderError, PersistState, RaftCore, RemoveRaftVoterResponse, RetireLog, Role,
                   Send, SnapshotChunk, Timers, TruncateLog, UpdateRaftVoterRequest, UpdateRaftVoterResponse,
                   VoteResponse, WriteSnapshotChunk)
from .quorum_state import NO_ID, QuorumState, read_quorum_state, write_quorum_state
from .segments import Damage, Segment, UnknownRecordError, judge_damage, mapped, walk
from .snapshots import SnapshotError, SnapshotId, check_snapshot, list_snapshots, load_snapshot_frames, read_snapshot, \
    remove_partial, snapshot_control, write_snapshot_batches
from .storage import StorageError, fsync_dir
from .voters import NO_DIRECTORY, SnapshotVoters, VoterSet

log = logging.getLogger("kraftwire.raft")

SYNCED_LENGTHS = "synced-lengths.json"
VOTER_CONTROL_TYPES = (5, 6)  # KRaftVersionRecord, VotersRecord
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
    directory_id: object = NO_DIRECTORY


@dataclass(frozen=True)
class QuorumDescription:
    leader_id: int
    epoch: int
    high_watermark: int
    voters: list[ReplicaProgress]
    observers: list[ReplicaProgress]
    listeners: dict[int, tuple[tuple[str, str, int], ...]] = field(default_factory=dict)  # a voter's, when logged


@dataclass(eq=False)
class _Batch:
    """One record batch of the log: its offsets, bytes and epoch, and (decoded on demand) its records."""
    base: int
    last: int
    data: bytes
    epoch: int
    timestamp: int
    control: bool
    records: list | None = None  # [(offset, record)] of a local append until committed; else decoded when read
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


_RESPONSES = (BeginQuorumEpochResponse, EndQuorumEpochResponse, FetchResponse, FetchSnapshotResponse, VoteResponse,
              AddRaftVoterResponse, RemoveRaftVoterResponse, UpdateRaftVoterResponse)
_VOTER_DATA = (voter_sets.KRaftVersionRecord, voter_sets.VotersRecord)


def _unanswered_fetch(request: FetchRequest) -> FetchResponse:
    """The answer to a long poll the core dropped (its role changed while it waited)."""
    return FetchResponse(src=request.dst, dst=request.src, correlation_id=request.correlation_id,
                         error_code=int(ErrorCode.NOT_LEADER_OR_FOLLOWER), high_watermark=0,
                         base_offset=request.fetch_offset, records=(), diverging_epoch=None, current_leader=(NO_ID, 0))


@dataclass(frozen=True)
class _ControlEntry(Entry):
    """A KRaftVersionRecord or VotersRecord entry read from a log or a Fetch answer, with its batch."""
    batch: _Batch | None = None


def _logged_batch(entry: Entry) -> _Batch | None:
    """The batch an entry read from a log (or a local metadata append) lies in; None for the core's own
    control entries, whose batches the leader builds."""
    if isinstance(entry.data, _Batch):
        return entry.data
    return entry.batch if isinstance(entry, _ControlEntry) else None


def _control_record(data, voter_ids: tuple[int, ...], node_id: int):
    """The control record of a core control entry: its LeaderChange, KRaftVersionRecord or VotersRecord."""
    if isinstance(data, _VOTER_DATA):
        return voter_sets.to_control_record(data)
    voters = [LeaderChangeMessage.Voter(voter_id=v) for v in voter_ids]
    return LeaderChangeMessage(version=0, leader_id=node_id, voters=voters, granting_voters=voters)


def _voters_of(path: Path) -> SnapshotVoters:
    """The voter records a checked snapshot holds after its header."""
    return SnapshotVoters.of_records(snapshot_control(path))
def _past_batch(entries, i: int, offset: int, batch: _Batch) -> int:
    """The index past the entries of ``batch`` from ``entries[i]`` on (``entries`` start at ``offset``):
    a batch's entries are consecutive, so a 10,000-record batch is stepped over at once, checked by
    the identity of its last entry's batch there (else one entry at a time)."""
    end = min(batch.last - offset + 1, len(entries))
    if end > i + 1 and _logged_batch(entries[end - 1]) is batch:
        return end
    return i + 1


def batches_from(data: bytes) -> list[_Batch]:
    """The record batches of a Fetch answer (or a log), as the log keeps them: each batch's framing and
    CRC are checked here, as Kafka's follower checks what it appends; its records are read when they
    are used (committed, or a control batch's entries)."""
    found, position = [], 0
    while position < len(data):
        batch = check_batch(data, position)
        found.append(_Batch(batch.base_offset, batch.base_offset + batch.last_offset_delta,
                            bytes(data[position:position + batch.size]), batch.partition_leader_epoch,
                            batch.base_timestamp, bool(batch.attributes & ATTR_CONTROL)))
        position += batch.size
    return found


class RaftLog:
    def __init__(self, data_dir: str | Path, node_id: int, config: RaftConfig = RaftConfig(),
                 voters: list[int] | VoterSet | None = None, timers: Timers = Timers(),
                 rng: random.Random | None = None, cluster_id: str = "", kraft_version: int = 0,
                 directory_id: object = NO_DIRECTORY):
        """``voters``: the bootstrap voter set, ids (``controller.quorum.voters``) or a ``VoterSet`` with
        directory ids and listeners; ``kraft_version`` 1 lets the set change (KIP-853), and the log's
        VotersRecords then rule over the bootstrap set. ``directory_id``: this replica's metadata log
        directory id (meta.properties' ``directory.id``)."""
        self.directory = Path(data_dir) / PARTITION_DIR
        self.node_id = node_id
        self.config = config
        self.bootstrap_voters = voters if isinstance(voters, VoterSet) else VoterSet.static(voters or [node_id])
        self.bootstrap_kraft_version = kraft_version
        self.directory_id = directory_id
        self.endpoints: tuple[tuple[str, str, int], ...] = ()  # this replica's controller listeners, set by the host
        self.bootstrap_servers: tuple[int, ...] = ()  # the ids the transport reaches the bootstrap servers at
        self._leader_endpoints: dict[int, tuple[str, int]] = {}  # a leader's address, as an answer named it
        self.timers = timers
        self.rng = rng or random.Random()
        self.cluster_id = cluster_id
        self.transport: Transport | None = None  # how requests reach the other voters
        self.core: RaftCore | None = None
        self.high_watermark = 0
        self.active = False
        # -> the committed image's data batches, (record count, bytes): ``MetadataImage.snapshot_batches``
        self.snapshot_source: Callable[[], Iterable[tuple[int, bytes]]] | None = None
        self.fsync_count = 0
        self.commit_count = 0  # batches committed
        self._listeners: list[Callable] = []
        self._snapshot_listeners: list[Callable[[SnapshotId, Path], None]] = []
        self._retirable = 0  # the core's log start: files wholly below it may be retired
        self._installed: list[tuple[SnapshotId, Path]] = []  # installs the I/O thread carried out, to announce
        self._download: tuple[SnapshotId, Path, object] | None = None  # (id, .part path, open file)
        self._leadership_listeners: list[Callable[[bool], None]] = []
        self._recovered: list[_Batch] = []
        self._state: QuorumState | None = None
        # the control batches this replica wrote as leader (LeaderChange, KRaftVersion, Voters), by offset
        self._control: dict[int, _Batch] = {}
        self._voter_update_due = 0  # when this voter may next send UpdateRaftVoter (its listeners changed)
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
        self._told_observers: dict[int, int] = {}  # the high watermark each observer's last answer carried
        self._active_changed: asyncio.Event | None = None
        self._resumed: asyncio.Event | None = None  # set while the harness has the replica paused
        self._closed = False
        self._failed: str | None = None  # why appends are refused: a failed write, or the log is closed
        self.failure: str | None = None  # why a write or fsync failed, once one has
        self.on_failure: Callable[[str], None] | None = None  # told once, after the pending appends failed
        self._segments: list[Segment] = []
        self._snapshot: tuple[SnapshotId, Path] | None = None
        self._snapshot_voters = SnapshotVoters()  # the voter records the snapshot the log started from holds
        self._since_snapshot_records = 0
        self._since_snapshot_bytes = 0
        self._committed_epoch = 0
        self._committed_timestamp = -1
        self._io = ThreadPoolExecutor(1, thread_name_prefix="kraftwire-log-io")
        self._snapshot_io = ThreadPoolExecutor(1, thread_name_prefix="kraftwire-snapshot")

    # --- the core's view ------------------------------------------------------------------------------

    @property
    def voters(self) -> tuple[int, ...]:
        """The ids of the latest voter set in the log (the bootstrap set before the log is open)."""
        return self.core.voters if self.core is not None else self.bootstrap_voters.ids

    @property
    def kraft_version(self) -> int:
        return self.core.kraft_version if self.core is not None else self.bootstrap_kraft_version

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
        entries, below = [], []
        for batch in self._recovered:
            if batch.base >= start:  # below it, the snapshot holds the records
                entries.extend(self._entries_of(batch))
            elif batch.control:  # a snapshot without voter records: the log below it has them (see _recover)
                below.extend(e.data for e in self._entries_of(batch) if isinstance(e.data, _VOTER_DATA))
        self._recovered = []
        snapshot_voters = self._snapshot_voters
        if below and snapshot_voters.kraft_version is None:
            snapshot_voters = SnapshotVoters(
                next((d.kraft_version for d in reversed(below) if isinstance(d, voter_sets.KRaftVersionRecord)), None),
                next((d.voters for d in reversed(below) if isinstance(d, voter_sets.VotersRecord)), None))
        if self.bootstrap_kraft_version >= 1 and (self._snapshot or entries) and snapshot_voters.kraft_version is None \
                and not any(isinstance(e.data, voter_sets.KRaftVersionRecord) for e in entries):
            # As kafka-storage format fixes it, the first start does here: a log that holds records but no
            # KRaftVersionRecord was started at kraft.version 0 and keeps its static voters.
            log.info("%s was started with static voters (kraft.version 0): it keeps them", self.directory)
            self.bootstrap_kraft_version = 0
            self.bootstrap_voters = VoterSet.static(self.bootstrap_voters.ids)
        state = self._state
        last_epoch = max(entries[-1].epoch if entries else 0, self._snapshot[0].epoch if self._snapshot else 0)
        epoch, leader, voted = (state.leader_epoch, state.leader_id, state.voted_id) if state else (0, NO_ID, NO_ID)
        if last_epoch > epoch:  # a quorum-state older than the log: start unattached in the log's epoch
            epoch, leader, voted = last_epoch, NO_ID, NO_ID
        self.high_watermark = start
        self._active_changed = asyncio.Event()
        snapshot = (self._snapshot[0], self._snapshot[1].stat().st_size) if self._snapshot else None
        self.core = RaftCore(self.node_id, self.bootstrap_voters, self.rng, self._now(), timers=self.timers,
                             epoch=epoch, leader_id=leader, voted_id=voted, log=entries, directory_id=self.directory_id,
                             kraft_version=self.bootstrap_kraft_version, snapshot=snapshot,
                             snapshot_voters=snapshot_voters, bootstrap=self.bootstrap_servers)
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
        self._finish_interrupted_install()
        for path in remove_partial(directory):
            log.info("deleted the interrupted snapshot %s", path.name)
        self._snapshot = self._newest_valid_snapshot()
        start = self._snapshot[0].end_offset if self._snapshot else 0
        self._snapshot_voters = _voters_of(self._snapshot[1]) if self._snapshot else SnapshotVoters()
        # An older kraftwire kept a dynamic quorum's whole log and wrote its snapshots without voter records.
        whole = (self.bootstrap_kraft_version >= 1 and self._snapshot is not None
                 and self._snapshot_voters.kraft_version is None)
        self._recover_segments(start, read_synced_lengths(self.directory), whole)
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

    def _recover_segments(self, start: int, synced: dict[str, int], whole: bool = False) -> int:
        """Check every batch from the segment holding ``start`` on (from the first, if ``whole``) and keep
        them for the core; cut a torn tail; returns the epoch of the last batch (0 if none)."""
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
        first = 0 if whole else max(i for i, s in enumerate(segments) if s.base_offset <= start)
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

    def _finish_interrupted_install(self) -> None:
        """Runs in the I/O thread at start-up: a whole downloaded snapshot with an empty segment at its end
        is an install the crash interrupted: delete the segments below it and rename it, as the install would."""
        for part in sorted(self.directory.glob("*" + PARTIAL_SNAPSHOT_SUFFIX)):
            parsed = parse_snapshot_name(part.name.removesuffix(PARTIAL_SNAPSHOT_SUFFIX) + SNAPSHOT_SUFFIX)
            first = self.directory / segment_file_name(parsed[0]) if parsed else None
            if first is None or not first.exists() or first.stat().st_size:
                continue
            try:
                check_snapshot(part)
            except SnapshotError:
                continue
            log.warning("finishing the install of snapshot %s, interrupted by a crash", part.name)
            self._install_files(SnapshotId(*parsed), part)

    def _install_files(self, snapshot_id: SnapshotId, part: Path) -> Path:
        """Runs in the I/O thread: the log starts, empty, at the snapshot's end, and the snapshot gets its
        name. The empty segment comes first and the rename last, so a crash between is finished at start-up."""
        end = snapshot_id.end_offset
        for segment in self._segments:
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
        self._segments = [new]
        return final

    def _log_start_offset(self) -> int:
        return self._segments[0].base_offset if self._segments else 0

    # --- reading ------------------------------------------------------------------------------------

    def replay(self, frames: Callable[[list[bytes], int], None] | None = None) -> Iterator[tuple[int, object]]:
        """Committed metadata records: the snapshot's (at offset end - 1), then the log's up to the high
        watermark (everything, once a sole voter has opened the log). With ``frames``, the snapshot's
        records are not yielded but handed to ``frames(framed records, end - 1)`` undecoded, a batch at
        a time, before the first record is yielded (``MetadataImage.apply_frames``: a snapshot's load)."""
        start = 0
        if self._snapshot is not None:
            snapshot, path = self._snapshot
            start = snapshot.end_offset
            if frames is not None:
                load_snapshot_frames(path, lambda values: frames(values, start - 1))
            else:
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
        offset = max(start, self.core.log_start)
        while offset < end:
            batch = self._batch_at(offset, self.core.entry(offset))
            if batch is None:
                offset += 1
                continue
            if batch.last >= end:
                return
            yield batch
            offset = batch.last + 1

    def _batch_at(self, offset: int, entry: Entry) -> _Batch | None:
        batch = _logged_batch(entry)
        if batch is not None:
            return batch
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
        voters = []
        for node in self.core.voter_set.voters:
            replica_id = node.key.id
            progress = (ReplicaProgress(replica_id, self.core.durable_end, now, now) if replica_id == self.node_id
                        else self._progress.setdefault(replica_id, ReplicaProgress(replica_id)))
            voters.append(replace(progress, directory_id=node.key.directory_id))
        observers = [p for p in self._observers.values() if p.replica_id not in self.voters]  # not since it was added
        return QuorumDescription(self.node_id, self.epoch, self.high_watermark, voters,
                                 sorted(observers, key=lambda p: p.replica_id),
                                 {v.key.id: v.listeners for v in self.core.voter_set.voters if v.listeners})

    def _note_progress(self, progress: ReplicaProgress, end_offset: int, replace_end: bool = False) -> None:
        now = _wall_ms()
        progress.end_offset = end_offset if replace_end else max(progress.end_offset, end_offset)
        progress.last_fetch_ms = now
        if end_offset >= self.high_watermark:
            progress.last_caught_up_ms = now

    # --- listeners ---------------------------------------------------------------------------------

    def add_commit_listener(self, listener) -> None:
        self._listeners.append(listener)

    def add_snapshot_listener(self, listener: Callable[[SnapshotId, Path], None]) -> None:
        """Called with a snapshot downloaded from the leader once it replaced the log: what was committed
        before is that snapshot now, and ``replay()`` yields it (the brokers' view can reset from the path)."""
        self._snapshot_listeners.append(listener)

    @property
    def latest_snapshot(self) -> tuple[SnapshotId, Path] | None:
        """The newest snapshot (its id and ``.checkpoint`` file), taken here or downloaded."""
        return self._snapshot

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
        self._run(self.core.append(self._now(), batch, len(records))[1])
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
            elif isinstance(action, RetireLog):
                self._retirable = action.log_start  # _take_snapshot retires the files below it
            elif isinstance(action, WriteSnapshotChunk):
                self._write_chunk(action)
            elif isinstance(action, InstallSnapshot):
                self._install(action)
        self._arm_timer()
        self._follow_leadership()
        self._maybe_update_voter()

    def _persist(self, action: PersistState) -> None:
        try:
            if self.kraft_version >= 1:  # Kafka's quorum-state version 1: the vote names a directory too
                voted = next((v.key.directory_id for v in self.core.voter_set.voters if v.key.id == action.voted_id),
                             None)
                state = QuorumState(action.leader_id, action.epoch, action.voted_id, (), 1, voted)
            else:
                state = QuorumState(action.leader_id, action.epoch, action.voted_id, self.voters)
            write_quorum_state(self.directory, state)
        except OSError as exc:
            self._fail(exc)

    def _queue(self, kind: str, item) -> None:
        self._ops.append((kind, item))

    def _queue_entries(self, offset: int, entries: tuple[Entry, ...]) -> None:
        i = 0
        while i < len(entries):
            batch = _logged_batch(entries[i])
            if batch is not None:
                if batch.base == offset + i:
                    self._queue("write", batch)
                i = _past_batch(entries, i, offset, batch)
            else:  # the core's own control entries, written by this replica as leader
                i += self._queue_control(offset + i, entries[i:])

    def _queue_control(self, base: int, entries: tuple[Entry, ...]) -> int:
        """One control batch for a run of the core's control entries: a new leader's LeaderChange (with,
        in a dynamic quorum's first epoch, the bootstrap KRaftVersionRecord and VotersRecord, in one
        batch as Kafka writes them), or a leader's new VotersRecord."""
        run = []
        for entry in entries:
            if _logged_batch(entry) is not None:
                break
            run.append(entry)
        records = [_control_record(entry.data, self.voters, self.node_id) for entry in run]
        now = _wall_ms()
        batch = _Batch(base, base + len(run) - 1, control_batch(base, run[0].epoch, now, records), run[0].epoch,
                       now, True, [])
        for offset in range(base, base + len(run)):
            self._control[offset] = batch
        self._queue("write", batch)
        return len(run)

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
            truncations = sum(1 for kind, _ in group if kind in ("truncate", "install"))
            try:
                end = await loop.run_in_executor(self._io, self._write_and_sync, group)
            except OSError as exc:
                self._fail(exc)
                return
            self.fsync_count += 1
            await self._unfrozen()
            del self._truncating[:truncations]
            self._announce_installs()
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
            self._leader_endpoints.update(peer_wire.node_endpoints(answer))
        except (OSError, asyncio.TimeoutError, MalformedError) as exc:
            log.debug("node %d: %s to %d got no answer: %s", self.node_id, type(message).__name__, message.dst, exc)
            return
        await self._unfrozen()
        if response is not None and not self._closed:
            self._run(self.core.receive(self._now(), response))

    def _decode_records(self, data: bytes) -> list[Entry]:
        entries = []
        for batch in batches_from(data):
            entries.extend(self._entries_of(batch))
        return entries

    def _entries_of(self, batch: _Batch) -> list[Entry]:
        """The core's entries for a batch read from the log or a Fetch answer, one per offset. An entry's
        data is its batch, except for KRaftVersion and Voters control records, whose entries carry them
        decoded (the core's voter history follows them), as ``_ControlEntry`` holding their batch."""
        if not batch.control:
            return [Entry(batch.epoch, batch)] * (batch.last - batch.base + 1)
        entries = []
        for _offset, _timestamp, key, value in read_batch(batch.data, 0).records:
            record = decode_control(key, value)
            if record.SPEC.control_record_type in VOTER_CONTROL_TYPES:
                entries.append(_ControlEntry(batch.epoch, voter_sets.from_control_record(record), True, batch))
            else:
                entries.append(Entry(batch.epoch, batch, True))
        return entries

    def _encode_records(self, base_offset: int, entries: tuple[Entry, ...]) -> bytes:
        """The batches holding the entries, each whole (a batch cut by the core's entry limit goes out
        entire, so fetchers' logs end between batches)."""
        chunks, last = [], base_offset - 1
        i = 0
        while i < len(entries):
            batch = self._batch_at(base_offset + i, entries[i])
            if batch is None:
                i += 1
                continue
            if batch.base > last:
                chunks.append(batch.data)
                last = batch.last
            i = _past_batch(entries, i, base_offset, batch)
        return b"".join(chunks)

    async def handle(self, request, version: int):
        """Answer a Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch or FetchSnapshot request from another
        replica, or an AddRaftVoter, RemoveRaftVoter or UpdateRaftVoter (answered by the leader's core once the
        new voter set is appended or committed)."""
        await self._unfrozen()
        if self.core is None or self._closed or self.failure is not None:
            raise LogFailedError(self._failed or "the metadata log is not open")
        try:
            message = peer_wire.from_request(request, version, self.cluster_id, next(self._incoming_ids))
        except peer_wire.Refused as refused:
            return refused.response
        if isinstance(message, FetchRequest) and self.active:
            observer = message.replica_id not in self.voters
            if observer and self.core.high_watermark > self._told_observers.get(message.replica_id, -1):
                message = replace(message, max_wait_ms=0)  # the observer is not told the newest one yet
            progress = (self._observers if observer else self._progress).setdefault(
                message.replica_id, ReplicaProgress(message.replica_id))
            progress.directory_id = message.replica_directory_id
            self._note_progress(progress, message.fetch_offset, replace_end=observer)
        timeout = self.timers.request_timeout_ms / 1000 + getattr(message, "max_wait_ms", 0) / 1000
        if isinstance(message, AddRaftVoterRequest):
            timeout += message.timeout_ms / 1000  # the core answers REQUEST_TIMED_OUT at TimeoutMs
        try:
            reply = await self._ask_core(message, timeout)
        except asyncio.TimeoutError:  # a long poll the core dropped when its role changed
            if not isinstance(message, FetchRequest):
                raise
            return peer_wire.to_response(replace(
                _unanswered_fetch(message), high_watermark=self.high_watermark,
                current_leader=(self.core.leader_id, self.core.epoch)), version)
        if isinstance(reply, FetchResponse) and message.replica_id not in self.voters:
            self._told_observers[message.replica_id] = reply.high_watermark
        return peer_wire.to_response(reply, version, self._encode_records, self.core.log_start, self._read_chunk,
                                     self._leader_endpoint())

    async def _ask_core(self, message, timeout: float):
        """Hand a request to the core and wait for its reply (TimeoutError when it drops the request)."""
        waiting = self._incoming[(message.src, message.correlation_id)] = asyncio.get_running_loop().create_future()
        self._run(self.core.receive(self._now(), message))
        try:
            return await asyncio.wait_for(waiting, timeout)
        finally:
            self._incoming.pop((message.src, message.correlation_id), None)

    def voter_endpoints(self) -> dict[int, tuple[str, int]]:
        """Where the voters (and the leaders answers named) are reached: the listener named like this
        replica's own, as the latest voter set logs it (KIP-853); the host's transport uses it."""
        if self.core is None:
            return dict(self._leader_endpoints)
        own = self.endpoints[0][0] if self.endpoints else None
        found = dict(self._leader_endpoints)
        for node in self.core.voter_set.voters:
            named = [(host, port) for name, host, port in node.listeners if name == own] or [
                (host, port) for _name, host, port in node.listeners]
            if named:
                found[node.key.id] = named[0]
        return found

    def _leader_endpoint(self) -> tuple[str, int]:
        """The leader's listener (the one named like this replica's own) as the voter set logs it."""
        node = self.core.voter_set.node(self.core.leader_id)
        own = self.endpoints[0][0] if self.endpoints else None
        found = [(host, port) for name, host, port in (node.listeners if node else ()) if name == own]
        return found[0] if found else ("", -1)

    def _maybe_update_voter(self) -> None:
        """A voter whose listeners differ from those the voter set logs (it restarted on another port)
        sends UpdateRaftVoter to the leader, as Kafka's voters do once they know the leader; the leader
        hands it to its own core. Retried after a fetch timeout until the set shows the new listeners."""
        core = self.core
        if core.kraft_version < 1 or not self.endpoints or core.role not in (Role.LEADER, Role.FOLLOWER):
            return
        node = core.voter_set.node(self.node_id)
        now = self._now()
        if (node is None or not core.is_voter or node.listeners == self.endpoints or now < self._voter_update_due
                or self._closed or (self.transport is None and core.leader_id != self.node_id)):
            return
        self._voter_update_due = now + self.timers.fetch_timeout_ms
        request = UpdateRaftVoterRequest(src=self.node_id, dst=core.leader_id, correlation_id=next(self._incoming_ids),
                                         current_leader_epoch=core.epoch, voter_id=self.node_id,
                                         voter_directory_id=self.directory_id, listeners=self.endpoints,
                                         kraft_versions=(0, 1))
        task = asyncio.get_running_loop().create_task(self._update_voter(request))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _update_voter(self, request: UpdateRaftVoterRequest) -> None:
        try:
            if request.dst == self.node_id:
                answer = await self._ask_core(request, self.timers.request_timeout_ms / 1000)
            else:
                wire, version = peer_wire.to_request(request, self.cluster_id)
                answer = peer_wire.from_response(request, await asyncio.wait_for(
                    self.transport(request.dst, wire, version), self.timers.request_timeout_ms / 1000))
        except (OSError, asyncio.TimeoutError, MalformedError) as exc:
            log.debug("node %d: UpdateRaftVoter got no answer: %s", self.node_id, exc)
            return
        log.info("node %d: UpdateRaftVoter with listeners %s: %s", self.node_id, list(request.listeners),
                 ErrorCode(answer.error_code).name)

    def _read_chunk(self, chunk: SnapshotChunk) -> bytes:
        """The bytes of the latest snapshot a FetchSnapshot answer names (the core names only that one)."""
        with open(self._snapshot[1], "rb") as snapshot_file:
            snapshot_file.seek(chunk.position)
            return snapshot_file.read(chunk.length)

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
            while start > core.log_start and core.entry(start - 1).epoch == core.epoch:
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
        for offset in range(max(self.high_watermark, self.core.log_start), self.core.log_end):
            batch = self.core.entry(offset).data
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
            # a local append's records were for its commit: from now on they are read from its bytes
            # (a replay), not kept alive (a 10,000-record batch holds 20,000 objects)
            batch.records = None
        self._maybe_snapshot()

    def _write_and_sync(self, group: list[tuple[str, object]]) -> int:
        """Runs in the I/O thread: carry out the writes (rolling segments by size) and truncations in
        order, then one fsync; returns the end offset now durable."""
        for kind, item in group:
            if kind == "truncate":
                self._truncate_files(item)
                continue
            if kind == "install":
                self._installed.append((item[0], self._install_files(*item)))
                self._segments[-1].open_for_append()
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
        batches = self.snapshot_source()  # captured now, consistent with the high watermark
        voters = self.core.voters_at(snapshot.end_offset).control_records()
        self._since_snapshot_records = self._since_snapshot_bytes = 0
        loop = asyncio.get_running_loop()
        try:
            path = await loop.run_in_executor(self._snapshot_io, write_snapshot_batches, self.directory, snapshot,
                                              self._committed_timestamp, _wall_ms(), batches, voters)
        except Exception:  # the log goes on without this snapshot; the next one is due as usual
            log.exception("could not write snapshot %s", snapshot.file_name)
            return None
        if self._closed or self.core.log_start >= snapshot.end_offset:
            return snapshot  # a snapshot downloaded meanwhile already covers it
        self._snapshot = (snapshot, path)
        log.info("wrote snapshot %s", path.name)
        self._run(self.core.snapshot_taken(self._now(), snapshot.end_offset, path.stat().st_size))
        if self._retirable and (self.config.retention_bytes is not None or self.config.retention_ms is not None):
            await loop.run_in_executor(self._io, self._retire, self._retirable)
        return snapshot

    def _write_chunk(self, action: WriteSnapshotChunk) -> None:
        """Write a downloaded chunk to the snapshot's ``.part`` file (a new download starts a new file)."""
        if self.failure is not None:
            return
        try:
            if action.position == 0 or self._download is None or self._download[0] != action.snapshot_id:
                self._abandon_download()
                name = action.snapshot_id.file_name[:-len(SNAPSHOT_SUFFIX)] + PARTIAL_SNAPSHOT_SUFFIX
                path = self.directory / name
                self._download = (action.snapshot_id, path, open(path, "wb"))
            self._download[2].write(action.data)
        except OSError as exc:
            self._fail(exc)

    def _abandon_download(self) -> None:
        if self._download is not None:
            _, path, partial = self._download
            partial.close()
            path.unlink(missing_ok=True)
            self._download = None

    def _install(self, action: InstallSnapshot) -> None:
        """The download is whole: check it and fsync it, then queue its install (``_install_files``)."""
        if self._download is None or self.failure is not None:  # a chunk's write failed: nothing more is written
            return
        snapshot_id, path, partial = self._download
        self._download = None
        try:
            partial.flush()
            os.fsync(partial.fileno())
            partial.close()
            check_snapshot(path)
            self.core.installed_snapshot_voters(_voters_of(path))
        except (OSError, SnapshotError) as exc:
            return self._fail(exc)
        end = snapshot_id.end_offset
        self._queue("install", (snapshot_id, path))
        self._truncating.append(end)
        self._start_flush()
        self._control.clear()
        self.high_watermark = end
        self._committed_epoch = snapshot_id.epoch
        self._since_snapshot_records = self._since_snapshot_bytes = 0

    def _announce_installs(self) -> None:
        """Installs are durable: the snapshot is the latest, and the listeners reset to it."""
        installed, self._installed = self._installed, []
        for snapshot_id, final in installed:
            log.info("installed snapshot %s from the leader", final.name)
            self._snapshot = (snapshot_id, final)
            for listener in self._snapshot_listeners:
                try:
                    listener(snapshot_id, final)
                except Exception:
                    log.exception("a snapshot listener failed")

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
        self._abandon_download()
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
        if self._download is not None:  # a download cut short: its .part file stays, as a crash leaves it
            self._download[2].close()
            self._download = None
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
