"""KRaft's Raft as a pure state machine: inputs in, actions out; no sockets, clocks, files or asyncio.

A ``RaftCore`` is one replica of the metadata partition. Its driver calls it with the current time (ms)
and one input at a time: ``receive`` (a message from another replica), ``on_timer`` (the deadline
``next_deadline`` named has passed), ``append`` (a local write, on the leader), ``flush_completed``
(the log is fsync'd up to an end offset) and ``resign`` (graceful shutdown). Each call returns the
actions to carry out, **in order**: ``PersistState`` (write ``quorum-state`` before anything that
depends on it), ``TruncateLog``, ``AppendLog``, ``FlushLog``, ``Send`` and ``Commit`` (the high
watermark moved). Randomness (election timeouts) comes from a ``random.Random`` the driver hands in, so
a seeded simulation (server/raft/simulation.py) replays exactly.

The protocol is KRaft's variant of Raft (KIP-595, KIP-996):

* roles Unattached, Prospective (pre-vote), Candidate, Leader, Follower and Resigned; observers (not in
  the voter set) only ever follow;
* Vote with pre-vote: a voter whose fetch or election timer fires asks for pre-votes without bumping
  its epoch, and only a majority of them lets it become a candidate in ``epoch + 1``;
* BeginQuorumEpoch announces a new leader (and is resent to voters that stop fetching);
  EndQuorumEpoch announces a resignation, naming the best-replicated voters first;
* pull replication by Fetch: the leader answers ``DivergingEpoch`` with the end offset of the largest
  epoch not above the fetcher's last fetched epoch, and the fetcher truncates to it;
* a voter fetches from an offset only once its log is fsync'd up to it, so the fetch offset is a
  durable acknowledgement; the leader counts its own log end only once fsync'd. The high watermark is
  the majority point of those offsets and moves only past the leader's epoch start offset (its own
  ``LeaderChange`` entry), so a leader exposes older entries only after committing one of its own;
* check-quorum: a leader that has not heard a Fetch from a majority within 1.5 × the fetch timeout
  resigns; a resigned leader leaves its epoch for the next (Unattached) after an election timeout, and a
  leader that loses its role answers its parked fetches NOT_LEADER_OR_FOLLOWER at once, both as Kafka;
* dynamic voters (KIP-853, server/raft/voters.py): with kraft.version 1 the voter set is that of the
  latest VotersRecord in the log, committed or not, else the bootstrap set (which a dynamic quorum's
  first leader writes after its LeaderChange, with a KRaftVersionRecord); a truncation past a
  VotersRecord brings the earlier set back. Majorities (high watermark, elections, check-quorum) count
  the latest set; a leader counts its own log only while it is in it. The leader answers AddRaftVoter,
  RemoveRaftVoter and UpdateRaftVoter (``receive``, answered by ``Send``) with Kafka's checks in Kafka's
  order: NOT_LEADER_OR_FOLLOWER (or FENCED/UNKNOWN_LEADER_EPOCH), INVALID_REQUEST without a directory id
  or the controller listener, REQUEST_TIMED_OUT while a change is in flight, before the leader has
  committed an entry of its epoch, while the latest VotersRecord is uncommitted or for an observer that
  is not caught up, UNSUPPORTED_VERSION with kraft.version 0, DUPLICATE_VOTER, VOTER_NOT_FOUND. Each
  appends one VotersRecord changing one voter; AddRaftVoter (with AckWhenCommitted) and RemoveRaftVoter
  are answered when it commits, UpdateRaftVoter when it is appended; a leader that loses its leadership
  first answers NOT_LEADER_OR_FOLLOWER. A leader that removed itself leads until the removal commits,
  then resigns and follows as an observer. Replicas vote even when their own log does not list them,
  as in Kafka: a voter just added may be needed before it has fetched the record that adds it.

Snapshots (KIP-630): the log lives here as a list of ``Entry`` from ``log_start``, the end of the latest
snapshot (everything below it is folded into that snapshot). The driver mirrors every ``TruncateLog``/
``AppendLog`` onto the durable log and reports fsyncs back, and calls ``snapshot_taken`` once a local
snapshot of the committed state is durable: the log start moves to its end (``RetireLog``), so a replica
that fetches below it, or whose divergence falls below it, is answered with the leader's SnapshotId, as
Kafka does, and downloads the snapshot by FetchSnapshot: the leader's core names the bytes
(``SnapshotChunk``) and its driver reads them; the fetcher's core hands them on (``WriteSnapshotChunk``)
and, once whole, ``InstallSnapshot``: its log starts again at the snapshot's end and its high watermark
follows. The core never sees a snapshot's contents but its voter records: with kraft.version 1 a snapshot
holds the KRaftVersionRecord and VotersRecord in force at its end (``voters_at``, which the driver writes
after the header), and the driver hands them in when it starts from a snapshot (``snapshot_voters``) and
right after it carries out an ``InstallSnapshot`` (``installed_snapshot_voters``), so the voter history
before the log start is not needed. ``RaftLog`` (server/raft/log.py) drives it with real
files, timers and the wire (ARCHITECTURE.md, "The quorum core").

Deliberate differences from Kafka, all in the direction of simplicity:

* a Prospective whose round is rejected tries again after a random backoff (Kafka waits an election
  timeout as Unattached), or, if it knew a leader in its epoch, first follows that leader again for a
  fetch timeout, as Kafka does; a Candidate whose election times out goes back to Prospective, as in
  Kafka since KIP-996;
* a voter that receives EndQuorumEpoch from its leader stays its follower (so no other leader can be
  voted in for that epoch) but grants pre-votes at once, and campaigns after a backoff set by its place
  in the preferred-successor list;
* the leader keeps the high watermark it knew as a follower instead of starting it unknown (it is
  committed either way, and followers only take ``min(high watermark, own log end)``);
* a message carries ``correlation_id``, the request header's field, so a response is matched to the
  request it answers; responses to requests of an earlier state are ignored;
* AddRaftVoter sends the new voter no ApiVersions first: its kraft.version range is taken as 0-1, and it
  is caught up when, within a fetch timeout, a fetch of it reached the leader's log end as of its fetch
  before (Kafka's lastCaughtUpTimestamp, over a longer window); a voter change that has not committed within
  its time (AddRaftVoter's TimeoutMs, else the request timeout) is answered REQUEST_TIMED_OUT by a timer
  rather than on the next request; UpdateRaftVoter with kraft.version 0 is answered NONE and changes
  nothing (Kafka keeps it in memory for a kraft.version upgrade, which this core does not do);
* the log start moves to every snapshot's end at once (Kafka waits for its retention size or time):
  a replica that lags behind it downloads the snapshot, as it would in Kafka after retention.
"""
from __future__ import annotations

import enum
import random
from collections.abc import Callable
from typing import Any
from dataclasses import dataclass, field

from kraftwire.codec.error_codes import ErrorCode

from .snapshots import SnapshotId
from .voters import (NO_DIRECTORY, DirectoryId, KRaftVersionRecord, ReplicaKey, SnapshotVoters, VoterHistory, VoterNode,
                     VoterSet, VotersRecord)

NO_ID = -1


class Role(enum.Enum):
    UNATTACHED = "Unattached"
    PROSPECTIVE = "Prospective"
    CANDIDATE = "Candidate"
    LEADER = "Leader"
    FOLLOWER = "Follower"
    RESIGNED = "Resigned"


@dataclass(frozen=True)
class Entry:
    """One record of the log; ``control`` marks the LeaderChange record a new leader starts its epoch with."""
    epoch: int
    data: object
    control: bool = False


@dataclass(frozen=True)
class Timers:
    """KRaft's ``controller.quorum.*`` timers (ms); ``kafka_defaults`` are Kafka's, the default ones short for tests."""
    election_timeout_ms: int = 150
    fetch_timeout_ms: int = 300
    election_backoff_max_ms: int = 150
    request_timeout_ms: int = 200
    retry_backoff_ms: int = 20
    fetch_max_wait_ms: int = 50
    fetch_max_entries: int = 64
    snapshot_chunk_bytes: int = 8 << 20   # FetchSnapshot's MaxBytes: KafkaRaftClient's MAX_FETCH_SIZE_BYTES

    @classmethod
    def kafka_defaults(cls) -> Timers:
        return cls(election_timeout_ms=1000, fetch_timeout_ms=2000, election_backoff_max_ms=1000,
                   request_timeout_ms=2000, retry_backoff_ms=20, fetch_max_wait_ms=500, fetch_max_entries=1024)

    @property
    def check_quorum_ms(self) -> int:
        return self.fetch_timeout_ms * 3 // 2


# --- messages: the fields of Kafka's Vote (52), BeginQuorumEpoch (53), EndQuorumEpoch (54) and Fetch (1)
# for the one partition of __cluster_metadata, plus the envelope (source, destination, correlation id).

@dataclass(frozen=True)
class Message:
    src: int
    dst: int
    correlation_id: int


@dataclass(frozen=True)
class VoteRequest(Message):
    replica_epoch: int          # the epoch campaigned in: a candidate's own, a prospective's epoch + 1
    replica_id: int
    last_offset_epoch: int
    last_offset: int            # the log end offset
    pre_vote: bool


@dataclass(frozen=True)
class VoteResponse(Message):
    error_code: int
    leader_id: int
    leader_epoch: int
    vote_granted: bool


@dataclass(frozen=True)
class BeginQuorumEpochRequest(Message):
    leader_id: int
    leader_epoch: int


@dataclass(frozen=True)
class BeginQuorumEpochResponse(Message):
    error_code: int
    leader_id: int
    leader_epoch: int


@dataclass(frozen=True)
class EndQuorumEpochRequest(Message):
    leader_id: int
    leader_epoch: int
    preferred_successors: tuple[int, ...]


@dataclass(frozen=True)
class EndQuorumEpochResponse(Message):
    error_code: int
    leader_id: int
    leader_epoch: int


@dataclass(frozen=True)
class FetchRequest(Message):
    replica_id: int
    current_leader_epoch: int
    fetch_offset: int
    last_fetched_epoch: int
    max_wait_ms: int
    replica_directory_id: DirectoryId = NO_DIRECTORY   # v17's ReplicaDirectoryId: the fetcher's replica key


@dataclass(frozen=True)
class FetchResponse(Message):
    error_code: int
    high_watermark: int
    base_offset: int                        # the records' base offset (the batches carry it on the wire)
    records: tuple[Entry, ...]
    diverging_epoch: tuple[int, int] | None  # (Epoch, EndOffset)
    current_leader: tuple[int, int]         # (LeaderId, LeaderEpoch)
    snapshot_id: SnapshotId | None = None   # the fetch is below the leader's log start: fetch this snapshot


@dataclass(frozen=True)
class FetchSnapshotRequest(Message):
    replica_id: int
    current_leader_epoch: int
    snapshot_id: SnapshotId
    position: int
    max_bytes: int


@dataclass(frozen=True)
class SnapshotChunk:
    """Bytes ``[position, position + length)`` of a snapshot: the leader's core names them, its driver reads them."""
    snapshot_id: SnapshotId
    position: int
    length: int


@dataclass(frozen=True)
class FetchSnapshotResponse(Message):
    error_code: int
    snapshot_id: SnapshotId
    size: int                               # the whole snapshot's size in bytes
    position: int
    unaligned_records: SnapshotChunk | bytes  # a SnapshotChunk as the leader's core sends it, bytes as received
    current_leader: tuple[int, int]


# --- KIP-853's AddRaftVoter (80), RemoveRaftVoter (81) and UpdateRaftVoter (82), answered by the leader.
# Listeners are (name, host, port); directory ids are the driver's Uuid, NO_DIRECTORY for Kafka's ZERO_UUID.

@dataclass(frozen=True)
class AddRaftVoterRequest(Message):
    timeout_ms: int
    voter_id: int
    voter_directory_id: DirectoryId
    listeners: tuple[tuple[str, str, int], ...]
    ack_when_committed: bool = True


@dataclass(frozen=True)
class AddRaftVoterResponse(Message):
    error_code: int
    error_message: str | None


@dataclass(frozen=True)
class RemoveRaftVoterRequest(Message):
    voter_id: int
    voter_directory_id: DirectoryId


@dataclass(frozen=True)
class RemoveRaftVoterResponse(Message):
    error_code: int
    error_message: str | None


@dataclass(frozen=True)
class UpdateRaftVoterRequest(Message):
    current_leader_epoch: int
    voter_id: int
    voter_directory_id: DirectoryId
    listeners: tuple[tuple[str, str, int], ...]
    kraft_versions: tuple[int, int]   # KRaftVersionFeature (MinSupportedVersion, MaxSupportedVersion)


@dataclass(frozen=True)
class UpdateRaftVoterResponse(Message):
    error_code: int
    current_leader: tuple[int, int]   # (LeaderId, LeaderEpoch); the driver adds the leader's host and port


# --- actions, carried out by the driver in the order given

@dataclass(frozen=True)
class PersistState:
    """Write quorum-state (leaderEpoch, leaderId, votedId) durably before acting on it."""
    epoch: int
    leader_id: int
    voted_id: int


@dataclass(frozen=True)
class TruncateLog:
    offset: int  # keep the entries below it


@dataclass(frozen=True)
class AppendLog:
    offset: int
    entries: tuple[Entry, ...]


@dataclass(frozen=True)
class FlushLog:
    end_offset: int  # fsync the log; answer with flush_completed(the end actually fsync'd)


@dataclass(frozen=True)
class RetireLog:
    log_start: int  # the entries below it are in a snapshot: the driver may delete them


@dataclass(frozen=True)
class WriteSnapshotChunk:
    """Write ``data`` at ``position`` of the snapshot being downloaded (a partial file)."""
    snapshot_id: SnapshotId
    position: int
    data: bytes


@dataclass(frozen=True)
class InstallSnapshot:
    """The download is whole: make it the latest snapshot and replace the log by it, durably, before the
    later actions (the log then starts, empty, at the snapshot's end)."""
    snapshot_id: SnapshotId
    size: int


@dataclass(frozen=True)
class Send:
    message: Message


@dataclass(frozen=True)
class Commit:
    high_watermark: int  # entries below it are committed


Action = (PersistState | TruncateLog | AppendLog | FlushLog | RetireLog | WriteSnapshotChunk | InstallSnapshot | Send
          | Commit)
VoterError = tuple[ErrorCode, str | None] | None  # a voter change's refusal, or None


class NotLeaderError(Exception):
    """``append`` on a replica that is not the leader; ``leader_id``/``epoch`` say who may be."""

    def __init__(self, leader_id: int, epoch: int):
        super().__init__(f"not the leader; the leader of epoch {epoch} is {leader_id}")
        self.leader_id = leader_id
        self.epoch = epoch


@dataclass
class _Progress:
    """A replica's position as the leader sees it in its epoch."""
    end_offset: int = 0
    last_fetch_ms: int = -1
    directory_id: DirectoryId = NO_DIRECTORY
    last_caught_up_ms: int = -1   # when it last had all the leader held at its fetch before (Kafka's rule)
    log_end_at_last_fetch: int = 0  # the leader's log end when it last fetched


@dataclass
class _VoterChange:
    """The one voter change in flight: the request to answer and where its VotersRecord sits."""
    request: Message
    offset: int
    answered: bool = False


@dataclass
class _Download:
    """A snapshot being fetched from the leader, and how much of it is written."""
    snapshot_id: SnapshotId
    position: int = 0


@dataclass
class _ParkedFetch:
    request: FetchRequest
    deadline_ms: int


@dataclass
class _Election:
    """An open Vote round (pre-vote or real) and its answers."""
    pre_vote: bool
    epoch: int
    correlation_ids: set[int] = field(default_factory=set)
    granted: set[int] = field(default_factory=set)
    rejected: set[int] = field(default_factory=set)


class RaftCore:
    def __init__(self, node_id: int, voters: tuple[int, ...] | VoterSet, rng: random.Random, now_ms: int, *,
                 timers: Timers = Timers(), epoch: int = 0, leader_id: int = NO_ID, voted_id: int = NO_ID,
                 log: list[Entry] | None = None, directory_id: DirectoryId = NO_DIRECTORY, kraft_version: int = 0,
                 listener: str = "CONTROLLER", snapshot: tuple[SnapshotId, int] | None = None,
                 snapshot_voters: SnapshotVoters | None = None, bootstrap: tuple[int, ...] = ()):
        """Start from the persisted state: quorum-state (epoch, leader, vote), the latest snapshot
        ((id, size in bytes), or None) with the voter records it holds, and the fsync'd log, whose entries
        start at the snapshot's end.

        ``voters`` is the bootstrap set (ids for ``controller.quorum.voters``, or the bootstrap
        checkpoint's ``VoterSet``) and ``kraft_version`` its kraft.version: 1 lets the voter set change.
        ``listener`` is the controller listener a new voter must name. ``bootstrap``: the ids under which
        the driver reaches ``controller.quorum.bootstrap.servers`` (Kafka's -2, -3, ...), which an observer
        asks for the leader while it knows no voter."""
        self.node_id = node_id
        self.key = ReplicaKey(node_id, directory_id)
        self.listener = listener
        self.bootstrap = bootstrap
        bootstrap_set = voters if isinstance(voters, VoterSet) else VoterSet.static(voters)
        self.rng = rng
        self.timers = timers
        self.log: list[Entry] = list(log or ())
        self.snapshot: SnapshotId | None = snapshot[0] if snapshot else None
        self.snapshot_size = snapshot[1] if snapshot else 0
        self.log_start = self.snapshot.end_offset if self.snapshot else 0
        self._history = VoterHistory(bootstrap_set, kraft_version)
        if self.snapshot is not None:
            self._history.loaded(self.log_start, snapshot_voters if snapshot_voters is not None else SnapshotVoters())
        self._history.appended(self.log_start, self.log)
        self._voter_change: _VoterChange | None = None
        self.durable_end = self.log_end
        self.high_watermark = self.log_start   # a snapshot holds only committed entries
        self._download: _Download | None = None
        self.epoch = epoch
        self.leader_id = NO_ID
        self.voted_id = voted_id
        self.role = Role.UNATTACHED
        self._actions: list = []
        self._next_correlation = 0
        self._deadlines: dict[str, int] = {}
        self._election: _Election | None = None
        self._fetch_in_flight: int | None = None   # the correlation id of the one outstanding Fetch
        self._fetch_waits_for_flush = False
        self._last_fetch_ok_ms: int | None = None
        self._discovery_index = 0
        self._successors: tuple[int, ...] = ()
        self._progress: dict[int, _Progress] = {}   # the leader's view of every replica that fetches, itself too
        self._epoch_start_offset = 0
        self._parked: dict[int, _ParkedFetch] = {}
        self._unacknowledged: set[int] = set()       # voters a resigned leader still awaits EndQuorumEpoch answers from
        self._start(now_ms, leader_id)

    def _start(self, now: int, leader_id: int) -> None:
        if leader_id == self.node_id:
            # A leader that restarts comes back Resigned in its epoch, so it never votes twice in it.
            self.role = Role.RESIGNED
            self.leader_id = self.node_id
            self._set_election_timer(now)
        elif leader_id != NO_ID:
            self._become_follower(now, self.epoch, leader_id, persist=False)
            # A constructor returns no actions: the first Fetch goes out on the first timer, due at once.
            self._fetch_in_flight = None
            self._deadlines["fetch_retry"] = now
        else:
            self._become_unattached(now, self.epoch, self.voted_id, persist=False)
        self._actions.clear()

    # ----------------------------------------------------------------- the log

    @property
    def log_end(self) -> int:
        return self.log_start + len(self.log)

    def entry(self, offset: int) -> Entry:
        """The entry at ``offset`` (at or past the log start)."""
        if offset < self.log_start:
            raise IndexError(f"offset {offset} is below the log start {self.log_start} (in the snapshot)")
        return self.log[offset - self.log_start]

    @property
    def voter_set(self) -> VoterSet:
        """The set of the latest VotersRecord in the log, committed or not (else the bootstrap set)."""
        return self._history.latest

    @property
    def voters(self) -> tuple[int, ...]:
        return self._history.latest.ids

    @property
    def is_voter(self) -> bool:
        return self._history.latest.is_voter(self.key)

    @property
    def kraft_version(self) -> int:
        return self._history.kraft_version

    @property
    def last_epoch(self) -> int:
        if self.log:
            return self.log[-1].epoch
        return self.snapshot.epoch if self.snapshot else 0

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """(largest epoch ≤ ``epoch`` in the log, the offset where it ends): the DivergingEpoch answer.

        Below the log start only the snapshot's own epoch is known; an older one answers (0, 0)."""
        for index in range(len(self.log) - 1, -1, -1):  # epochs only grow along the log: search from its end
            if self.log[index].epoch <= epoch:
                return self.log[index].epoch, self.log_start + index + 1
        if self.snapshot is not None and self.snapshot.epoch <= epoch:
            return self.snapshot.epoch, self.log_start
        return 0, 0

    def _append_local(self, entries: list[Entry]) -> None:
        self._actions.append(AppendLog(self.log_end, tuple(entries)))
        self._history.appended(self.log_end, entries)
        self.log.extend(entries)
        self._actions.append(FlushLog(self.log_end))

    def _truncate_local(self, offset: int) -> None:
        offset = max(offset, self.log_start)  # a snapshot holds only committed entries: never cut into it
        if offset < self.log_end:
            self._actions.append(TruncateLog(offset))
            del self.log[offset - self.log_start:]
            self._history.truncated(offset)
            self.durable_end = min(self.durable_end, offset)

    # ----------------------------------------------------------------- inputs

    def receive(self, now: int, message: Message) -> list[Action]:
        handler = _HANDLERS[type(message)]
        handler(self, now, message)
        return self._drain()

    def on_timer(self, now: int) -> list[Action]:
        for name, deadline in sorted(self._deadlines.items(), key=lambda item: item[1]):
            if deadline <= now and self._deadlines.get(name) == deadline:
                del self._deadlines[name]
                getattr(self, f"_expired_{name}")(now)
        return self._drain()

    def append(self, now: int, data: object, count: int = 1) -> tuple[int, list]:
        """Append a write of ``count`` records on the leader, each an entry holding ``data`` (a batch's
        records share it): (the first one's offset, actions). It is committed once the high watermark
        passes it."""
        if self.role is not Role.LEADER:
            raise NotLeaderError(self.leader_id, self.epoch)
        offset = self.log_end
        self._append_local([Entry(self.epoch, data)] * count)
        self._complete_parked(now)
        return offset, self._drain()

    def flush_completed(self, now: int, end_offset: int) -> list[Action]:
        """The log is fsync'd up to ``end_offset`` (the driver never reports past a later truncation)."""
        self.durable_end = max(self.durable_end, min(end_offset, self.log_end))
        if self.role is Role.LEADER:
            self._progress[self.node_id].end_offset = self.durable_end
            self._maybe_advance_high_watermark(now)
        elif self._fetch_waits_for_flush and self.durable_end >= self.log_end:
            self._fetch_waits_for_flush = False
            self._send_fetch(now)
        return self._drain()

    def snapshot_taken(self, now: int, end_offset: int, size: int) -> list[Action]:
        """A local snapshot of every entry below ``end_offset`` (``size`` bytes) is durable; it becomes the
        one a lagging replica downloads, and the log start moves to its end. With kraft.version 1 it must
        hold ``voters_at(end_offset)``."""
        if not self.log_start < end_offset <= self.high_watermark:
            raise ValueError(f"a snapshot must end past the log start {self.log_start} and at or below the high "
                             f"watermark {self.high_watermark}, not at {end_offset}")
        self.snapshot, self.snapshot_size = SnapshotId(end_offset, self.entry(end_offset - 1).epoch), size
        del self.log[:end_offset - self.log_start]
        self.log_start = end_offset
        self._history.retired(end_offset)
        self._actions.append(RetireLog(end_offset))
        return self._drain()

    def voters_at(self, end_offset: int) -> SnapshotVoters:
        """The voter records a snapshot ending at ``end_offset`` (at or past the log start) holds: with
        kraft.version 1 the kraft.version and voter set in force there, with 0 none."""
        return self._history.in_force(end_offset)

    def installed_snapshot_voters(self, voters: SnapshotVoters) -> None:
        """The voter records of the snapshot the last ``InstallSnapshot`` installed, as the driver read them
        from its file; told at once, before any other input. They rule from the snapshot's last offset on."""
        self._history.loaded(self.log_start, voters)

    def resign(self, now: int) -> list[Action]:
        """Graceful shutdown of a leader: EndQuorumEpoch names the best-replicated voters first."""
        if self.role is Role.LEADER:
            self._become_resigned(now)
        return self._drain()

    def next_deadline(self) -> int | None:
        return min(self._deadlines.values(), default=None)

    def _drain(self) -> list[Action]:
        actions, self._actions = self._actions, []
        return actions

    # ----------------------------------------------------------------- transitions

    def _persist(self) -> None:
        self._actions.append(PersistState(self.epoch, self.leader_id, self.voted_id))

    def _reset_role_state(self) -> None:
        if self._voter_change is not None and not self._voter_change.answered:
            self._answer_voter_change(ErrorCode.NOT_LEADER_OR_FOLLOWER, "the leader lost its leadership first")
        self._voter_change = None
        self._deadlines.clear()
        self._election = None
        self._fetch_in_flight = None
        self._fetch_waits_for_flush = False
        self._download = None
        for parked in self._parked.values():
            # As Kafka's fetch purgatory on a change of role: answered at once, not left to the fetcher's
            # request timeout (the connection's later answers, Vote's among them, would wait behind it).
            self._reply_fetch(parked.request, ErrorCode.NOT_LEADER_OR_FOLLOWER)
        self._parked.clear()
        self._progress.clear()
        self._unacknowledged.clear()

    def _become_unattached(self, now: int, epoch: int, voted_id: int = NO_ID, *, persist: bool = True) -> None:
        self._reset_role_state()
        self.role = Role.UNATTACHED
        self.epoch, self.leader_id, self.voted_id = epoch, NO_ID, voted_id
        if persist:
            self._persist()
        if not self.is_voter:
            self._deadlines["discovery"] = now
        else:
            self._set_election_timer(now)

    def _become_follower(self, now: int, epoch: int, leader_id: int, *, persist: bool = True) -> None:
        voted = self.voted_id if epoch == self.epoch else NO_ID
        self._reset_role_state()
        self.role = Role.FOLLOWER
        self.epoch, self.leader_id, self.voted_id = epoch, leader_id, voted
        if persist:
            self._persist()
        self._last_fetch_ok_ms = None
        self._deadlines["fetch_timeout"] = now + self.timers.fetch_timeout_ms
        self._send_fetch(now)

    def _become_prospective(self, now: int) -> None:
        """Ask for pre-votes in ``epoch + 1`` without bumping or persisting anything.

        The leader known in this epoch, if any, is kept: a replica that has seen a leader of an epoch
        must never vote for another in it, and may go back to following it if the round fails."""
        self._reset_role_state()
        self.role = Role.PROSPECTIVE
        self._start_election(now, pre_vote=True, campaign_epoch=self.epoch + 1)

    def _become_candidate(self, now: int) -> None:
        self._reset_role_state()
        self.role = Role.CANDIDATE
        self.epoch, self.leader_id, self.voted_id = self.epoch + 1, NO_ID, self.node_id
        self._persist()
        self._start_election(now, pre_vote=False, campaign_epoch=self.epoch)

    def _become_leader(self, now: int) -> None:
        self._reset_role_state()
        self.role = Role.LEADER
        self.leader_id = self.node_id
        self._persist()
        self._progress = {v.key.id: _Progress(directory_id=v.key.directory_id) for v in self.voter_set.voters}
        self._progress[self.node_id] = _Progress(self.durable_end, now, self.key.directory_id)
        self._epoch_start_offset = self.log_end
        entries = [Entry(self.epoch, ("LeaderChange", self.node_id), control=True)]
        if self.kraft_version >= 1 and self._history.latest_offset < 0:
            # As Kafka, the first leader of a dynamic quorum writes the bootstrap set into the log.
            entries += [Entry(self.epoch, KRaftVersionRecord(self.kraft_version), control=True),
                        Entry(self.epoch, VotersRecord(self.voter_set), control=True)]
        self._append_local(entries)
        for voter in self.voters:
            if voter != self.node_id:
                self._send(BeginQuorumEpochRequest, voter, leader_id=self.node_id, leader_epoch=self.epoch)
        self._deadlines["begin_quorum"] = now + self.timers.fetch_timeout_ms // 2
        self._deadlines["check_quorum"] = now + self.timers.check_quorum_ms
        self._maybe_advance_high_watermark(now)

    def _become_resigned(self, now: int) -> None:
        successors = sorted((v for v in self.voters if v != self.node_id),
                            key=lambda v: (-self._progress.get(v, _Progress()).end_offset, v))
        self._reset_role_state()
        self.role = Role.RESIGNED
        self._unacknowledged = set(self.voters) - {self.node_id}
        self._successors = tuple(successors)
        self._send_end_quorum_epoch()
        self._deadlines["end_quorum"] = now + self.timers.request_timeout_ms
        self._set_election_timer(now)

    def _transition_to_newer_epoch(self, now: int, epoch: int, leader_id: int) -> None:
        if leader_id not in (NO_ID, self.node_id):
            self._become_follower(now, epoch, leader_id)
        else:
            self._become_unattached(now, epoch)

    def _set_election_timer(self, now: int) -> None:
        if self.voters == (self.node_id,):  # a sole voter has nobody to wait for: it campaigns at once
            self._deadlines["election"] = now
            return
        timeout = self.timers.election_timeout_ms
        self._deadlines["election"] = now + timeout + self.rng.randrange(timeout)

    # ----------------------------------------------------------------- timers

    def _expired_election(self, now: int) -> None:
        if self.role is Role.RESIGNED and self.voters == (self.node_id,):
            self._become_prospective(now)  # a sole voter campaigns at once, as Kafka's does at start-up
        elif self.role is Role.RESIGNED:
            # As Kafka's pollResigned: after an election timeout a resigned leader leaves its epoch, so that
            # its answers stop naming it the leader (voters that hear them would follow it again, for a fetch
            # timeout each time, while nobody leads). A voter campaigns after the next election timeout, a
            # leader removed from the voters follows as an observer.
            self._become_unattached(now, self.epoch + 1)
        elif self.role is Role.PROSPECTIVE and self.leader_id not in (NO_ID, self.node_id):
            self._become_follower(now, self.epoch, self.leader_id, persist=False)
        elif self.is_voter and self.role is not Role.LEADER:
            self._become_prospective(now)

    def _expired_fetch_timeout(self, now: int) -> None:
        if self.is_voter:
            self._become_prospective(now)
        else:
            self._become_unattached(now, self.epoch, persist=False)

    def _expired_fetch_retry(self, now: int) -> None:
        self._send_fetch(now)

    def _expired_discovery(self, now: int) -> None:
        """An observer without a leader asks the voters in turn (the bootstrap servers while it knows no
        voter); a Fetch answer names the leader."""
        candidates = self.voters or self.bootstrap
        if not candidates:
            self._deadlines["discovery"] = now + self.timers.request_timeout_ms
            return
        voter = candidates[self._discovery_index % len(candidates)]
        self._discovery_index += 1
        self._send(FetchRequest, voter, replica_id=self.node_id, current_leader_epoch=self.epoch,
                   fetch_offset=self.log_end, last_fetched_epoch=self.last_epoch, max_wait_ms=0,
                   replica_directory_id=self.key.directory_id)
        self._deadlines["discovery"] = now + self.timers.request_timeout_ms

    def _expired_begin_quorum(self, now: int) -> None:
        quiet_since = now - self.timers.fetch_timeout_ms // 2
        for voter in self.voters:
            if voter != self.node_id and self._progress.get(voter, _Progress()).last_fetch_ms < quiet_since:
                self._send(BeginQuorumEpochRequest, voter, leader_id=self.node_id, leader_epoch=self.epoch)
        self._deadlines["begin_quorum"] = now + self.timers.fetch_timeout_ms // 2

    def _expired_check_quorum(self, now: int) -> None:
        window_start = now - self.timers.check_quorum_ms
        heard = sum(1 for v in self.voters
                    if v == self.node_id or self._progress.get(v, _Progress()).last_fetch_ms >= window_start)
        if heard < self._majority():
            self._become_resigned(now)
        else:
            self._deadlines["check_quorum"] = now + self.timers.check_quorum_ms

    def _expired_end_quorum(self, now: int) -> None:
        self._send_end_quorum_epoch()
        self._deadlines["end_quorum"] = now + self.timers.request_timeout_ms

    def _expired_parked(self, now: int) -> None:
        for replica, parked in list(self._parked.items()):
            if parked.deadline_ms <= now:
                del self._parked[replica]
                self._answer_fetch(now, parked.request)
        self._schedule_parked()

    # ----------------------------------------------------------------- sending

    def _send(self, message_type: type[Message], dst: int, **fields: Any) -> int:
        self._next_correlation += 1
        self._actions.append(Send(message_type(src=self.node_id, dst=dst, correlation_id=self._next_correlation,
                                               **fields)))
        return self._next_correlation

    def _reply(self, request: Message, message_type: type[Message], **fields: Any) -> None:
        self._actions.append(Send(message_type(src=self.node_id, dst=request.src,
                                               correlation_id=request.correlation_id, **fields)))

    def _send_fetch(self, now: int) -> None:
        if self._download is not None:
            return self._send_fetch_snapshot(now)
        if self.durable_end < self.log_end:
            # The fetch offset acknowledges the log up to it: only once it is fsync'd.
            self._fetch_waits_for_flush = True
            return
        self._fetch_in_flight = self._send(
            FetchRequest, self.leader_id, replica_id=self.node_id, current_leader_epoch=self.epoch,
            fetch_offset=self.log_end, last_fetched_epoch=self.last_epoch, max_wait_ms=self.timers.fetch_max_wait_ms,
            replica_directory_id=self.key.directory_id)
        self._deadlines["fetch_retry"] = now + self.timers.fetch_max_wait_ms + self.timers.request_timeout_ms

    def _send_fetch_snapshot(self, now: int) -> None:
        assert self._download is not None  # a download under way
        self._fetch_in_flight = self._send(
            FetchSnapshotRequest, self.leader_id, replica_id=self.node_id, current_leader_epoch=self.epoch,
            snapshot_id=self._download.snapshot_id, position=self._download.position,
            max_bytes=self.timers.snapshot_chunk_bytes)
        self._deadlines["fetch_retry"] = now + self.timers.request_timeout_ms

    def _send_end_quorum_epoch(self) -> None:
        for voter in sorted(self._unacknowledged):
            self._send(EndQuorumEpochRequest, voter, leader_id=self.node_id, leader_epoch=self.epoch,
                       preferred_successors=self._successors)

    def _start_election(self, now: int, *, pre_vote: bool, campaign_epoch: int) -> None:
        self._election = _Election(pre_vote, campaign_epoch, granted={self.node_id})
        for voter in self.voters:
            if voter != self.node_id:
                self._election.correlation_ids.add(self._send(
                    VoteRequest, voter, replica_epoch=campaign_epoch, replica_id=self.node_id,
                    last_offset_epoch=self.last_epoch, last_offset=self.log_end, pre_vote=pre_vote))
        self._set_election_timer(now)
        self._count_votes(now)

    def _majority(self) -> int:
        return len(self.voters) // 2 + 1

    # ----------------------------------------------------------------- Vote

    def _log_is_at_least(self, last_epoch: int, last_offset: int) -> bool:
        return (last_epoch, last_offset) >= (self.last_epoch, self.log_end)

    def _on_vote_request(self, now: int, request: VoteRequest) -> None:
        if (request.last_offset < 0 or request.last_offset_epoch < 0
                or request.last_offset_epoch >= request.replica_epoch):
            return self._answer_vote(request, ErrorCode.INVALID_REQUEST, False)
        # A replica votes whether or not its own log makes it a voter, as in Kafka: a voter just added may
        # not hold the VotersRecord that adds it yet, and the new majority may need its vote to elect anyone.
        if request.replica_epoch < self.epoch:
            return self._answer_vote(request, ErrorCode.FENCED_LEADER_EPOCH, False)
        if request.pre_vote:
            return self._answer_vote(request, ErrorCode.NONE, self._grants_pre_vote(now, request))
        if request.replica_epoch > self.epoch:
            self._transition_to_newer_epoch(now, request.replica_epoch, NO_ID)
        granted = (self.role in (Role.UNATTACHED, Role.PROSPECTIVE) and self.leader_id == NO_ID
                   and self.voted_id in (NO_ID, request.replica_id)
                   and self._log_is_at_least(request.last_offset_epoch, request.last_offset))
        if granted and self.voted_id == NO_ID:
            self.voted_id = request.replica_id
            self._persist()
            self._set_election_timer(now)
        self._answer_vote(request, ErrorCode.NONE, granted)

    def _grants_pre_vote(self, now: int, request: VoteRequest) -> bool:
        if self.role is Role.LEADER:
            return False
        if (self.role is Role.FOLLOWER and self._last_fetch_ok_ms is not None
                and now - self._last_fetch_ok_ms < self.timers.fetch_timeout_ms):
            return False  # a healthy leader is not to be disturbed
        return self._log_is_at_least(request.last_offset_epoch, request.last_offset)

    def _answer_vote(self, request: VoteRequest, error: ErrorCode, granted: bool) -> None:
        self._reply(request, VoteResponse, error_code=int(error), leader_id=self.leader_id,
                    leader_epoch=self.epoch, vote_granted=granted)

    def _on_vote_response(self, now: int, response: VoteResponse) -> None:
        election = self._election
        if election is None or response.correlation_id not in election.correlation_ids:
            return  # an answer to an earlier round
        if response.leader_epoch > self.epoch:
            return self._transition_to_newer_epoch(now, response.leader_epoch, response.leader_id)
        if response.leader_epoch == self.epoch and response.leader_id not in (NO_ID, self.node_id, self.leader_id):
            return self._become_follower(now, self.epoch, response.leader_id)
        election.correlation_ids.discard(response.correlation_id)
        (election.granted if response.vote_granted else election.rejected).add(response.src)
        self._count_votes(now)

    def _count_votes(self, now: int) -> None:
        election = self._election
        assert election is not None  # an election under way
        if len(election.granted) >= self._majority():
            if election.pre_vote:
                self._become_candidate(now)
            else:
                self._become_leader(now)
        elif len(election.rejected) > len(self.voters) - self._majority():
            # Lost: retry after a randomised backoff rather than the full election timeout.
            self._election = None
            self._deadlines["election"] = now + self.timers.retry_backoff_ms + self.rng.randrange(
                self.timers.election_backoff_max_ms)

    # ----------------------------------------------------------------- BeginQuorumEpoch / EndQuorumEpoch

    def _on_begin_quorum_epoch(self, now: int, request: BeginQuorumEpochRequest) -> None:
        if request.leader_epoch < self.epoch:
            return self._reply(request, BeginQuorumEpochResponse, error_code=int(ErrorCode.FENCED_LEADER_EPOCH),
                               leader_id=self.leader_id, leader_epoch=self.epoch)
        if request.leader_epoch > self.epoch or self.role is not Role.FOLLOWER:
            if not (self.role is Role.LEADER and request.leader_epoch == self.epoch):
                self._become_follower(now, request.leader_epoch, request.leader_id)
        self._reply(request, BeginQuorumEpochResponse, error_code=int(ErrorCode.NONE),
                    leader_id=self.leader_id, leader_epoch=self.epoch)

    def _on_begin_quorum_epoch_response(self, now: int, response: BeginQuorumEpochResponse) -> None:
        if response.leader_epoch > self.epoch:
            return self._transition_to_newer_epoch(now, response.leader_epoch, response.leader_id)

    def _on_end_quorum_epoch(self, now: int, request: EndQuorumEpochRequest) -> None:
        if request.leader_epoch < self.epoch:
            return self._reply(request, EndQuorumEpochResponse, error_code=int(ErrorCode.FENCED_LEADER_EPOCH),
                               leader_id=self.leader_id, leader_epoch=self.epoch)
        if request.leader_epoch > self.epoch or self.role in (Role.UNATTACHED, Role.PROSPECTIVE, Role.CANDIDATE):
            self._become_follower(now, request.leader_epoch, request.leader_id)
        if self.role is Role.FOLLOWER and self.leader_id == request.leader_id:
            # Stay a follower of the resigned leader (so no other leader can be voted in for its epoch),
            # but grant pre-votes and campaign after a backoff set by the place in the successor list.
            successors = request.preferred_successors
            place = successors.index(self.node_id) if self.node_id in successors else len(successors)
            self._last_fetch_ok_ms = None
            backoff = self.timers.election_backoff_max_ms * place // max(1, len(successors))
            self._deadlines["fetch_timeout"] = now + backoff
        self._reply(request, EndQuorumEpochResponse, error_code=int(ErrorCode.NONE),
                    leader_id=self.leader_id, leader_epoch=self.epoch)

    def _on_end_quorum_epoch_response(self, now: int, response: EndQuorumEpochResponse) -> None:
        if response.leader_epoch > self.epoch:
            return self._transition_to_newer_epoch(now, response.leader_epoch, response.leader_id)
        if self.role is Role.RESIGNED:
            self._unacknowledged.discard(response.src)

    # ----------------------------------------------------------------- Fetch, on the leader

    def _on_fetch_request(self, now: int, request: FetchRequest) -> None:
        invalid = (request.max_wait_ms < 0 or request.fetch_offset < 0 or request.last_fetched_epoch < 0
                   or request.last_fetched_epoch > request.current_leader_epoch)
        error = (ErrorCode.INVALID_REQUEST if invalid
                 else ErrorCode.FENCED_LEADER_EPOCH if request.current_leader_epoch < self.epoch
                 else ErrorCode.UNKNOWN_LEADER_EPOCH if request.current_leader_epoch > self.epoch
                 else ErrorCode.NOT_LEADER_OR_FOLLOWER if self.role is not Role.LEADER
                 else ErrorCode.NONE)
        if error is not ErrorCode.NONE:
            return self._reply_fetch(request, error)
        diverging = self._diverging(request)
        if request.fetch_offset < self.log_start or (diverging is not None and diverging[1] < self.log_start):
            return self._reply_fetch(request, ErrorCode.NONE, snapshot_id=self.snapshot)
        if diverging is not None:
            return self._reply_fetch(request, ErrorCode.NONE, diverging=diverging)
        progress = self._progress.get(request.replica_id)
        if progress is None or progress.directory_id != request.replica_directory_id:
            # A new replica, or a node whose log directory was replaced: it starts from nothing.
            progress = self._progress[request.replica_id] = _Progress(directory_id=request.replica_directory_id)
        if request.fetch_offset >= self.log_end:
            progress.last_caught_up_ms = now
        elif request.fetch_offset >= progress.log_end_at_last_fetch:
            progress.last_caught_up_ms = max(progress.last_caught_up_ms, progress.last_fetch_ms)
        progress.log_end_at_last_fetch = self.log_end
        progress.last_fetch_ms = now
        if self.voter_set.is_voter(ReplicaKey(request.replica_id, request.replica_directory_id)):
            progress.end_offset = max(progress.end_offset, request.fetch_offset)
            self._maybe_advance_high_watermark(now)
        else:
            progress.end_offset = request.fetch_offset
        earlier = self._parked.pop(request.replica_id, None)
        if earlier is not None:
            # The replica fetches anew (it gave up on that one): its earlier long poll is answered now, not
            # dropped. Kafka reads a connection's next request only once it answered the last; here the
            # answers of one connection go out in order, and a dropped one held every later one until the
            # driver's timeout, the new Fetch's answer and the Vote answers among them.
            self._answer_fetch(now, earlier.request)
        if request.fetch_offset >= self.log_end and request.max_wait_ms > 0:
            self._parked[request.replica_id] = _ParkedFetch(request, now + request.max_wait_ms)
            self._schedule_parked()
        else:
            self._answer_fetch(now, request)

    def _diverging(self, request: FetchRequest) -> tuple[int, int] | None:
        if request.fetch_offset == 0 and request.last_fetched_epoch == 0:
            return None
        epoch, end = self.end_offset_for_epoch(request.last_fetched_epoch)
        if epoch != request.last_fetched_epoch or end < request.fetch_offset:
            return epoch, end
        return None

    def _answer_fetch(self, now: int, request: FetchRequest) -> None:
        if request.fetch_offset < self.log_start:  # the log start moved while the fetch was parked
            return self._reply_fetch(request, ErrorCode.NONE, snapshot_id=self.snapshot)
        index = request.fetch_offset - self.log_start
        records = tuple(self.log[index:index + self.timers.fetch_max_entries])
        self._reply_fetch(request, ErrorCode.NONE, records=records)

    def _reply_fetch(self, request: FetchRequest, error: ErrorCode, *, records: tuple[Entry, ...] = (),
                     diverging: tuple[int, int] | None = None, snapshot_id: SnapshotId | None = None) -> None:
        self._reply(request, FetchResponse, error_code=int(error), high_watermark=self.high_watermark,
                    base_offset=request.fetch_offset, records=records, diverging_epoch=diverging,
                    current_leader=(self.leader_id, self.epoch), snapshot_id=snapshot_id)

    # ----------------------------------------------------------------- FetchSnapshot, on the leader

    def _on_fetch_snapshot_request(self, now: int, request: FetchSnapshotRequest) -> None:
        """Kafka's checks in Kafka's order: the leader and epoch, the snapshot, then the position."""
        error = self._not_leader_error(request.current_leader_epoch)
        if error is None and request.snapshot_id != self.snapshot:
            error = ErrorCode.SNAPSHOT_NOT_FOUND, None
        if error is None and not 0 <= request.position < self.snapshot_size:
            error = ErrorCode.POSITION_OUT_OF_RANGE, None
        if error is None and request.max_bytes <= 0:
            error = ErrorCode.INVALID_REQUEST, None
        if error is not None:
            return self._reply(request, FetchSnapshotResponse, error_code=int(error[0]),
                               snapshot_id=request.snapshot_id, size=0, position=request.position,
                               unaligned_records=b"", current_leader=(self.leader_id, self.epoch))
        progress = self._progress.get(request.replica_id)
        if progress is not None:
            progress.last_fetch_ms = now  # a voter downloading a snapshot counts for check-quorum, as in Kafka
        length = min(request.max_bytes, self.snapshot_size - request.position)
        assert self.snapshot is not None  # SNAPSHOT_NOT_FOUND otherwise
        self._reply(request, FetchSnapshotResponse, error_code=int(ErrorCode.NONE), snapshot_id=self.snapshot,
                    size=self.snapshot_size, position=request.position,
                    unaligned_records=SnapshotChunk(self.snapshot, request.position, length),
                    current_leader=(self.leader_id, self.epoch))

    def _schedule_parked(self) -> None:
        if self._parked:
            self._deadlines["parked"] = min(p.deadline_ms for p in self._parked.values())
        else:
            self._deadlines.pop("parked", None)

    def _complete_parked(self, now: int) -> None:
        """New entries or a new high watermark answer the long polls at once."""
        parked, self._parked = self._parked, {}
        for entry in parked.values():
            self._answer_fetch(now, entry.request)
        self._schedule_parked()

    def _maybe_advance_high_watermark(self, now: int) -> None:
        """The majority point of the latest voter set's durable ends; the leader counts only if it votes."""
        ends = sorted((self._progress.get(v, _Progress()).end_offset for v in self.voters), reverse=True)
        majority_end = ends[len(self.voters) // 2]
        if majority_end > self._epoch_start_offset and majority_end > self.high_watermark:
            self.high_watermark = majority_end
            self._actions.append(Commit(majority_end))
            self._complete_parked(now)
            self._voter_change_maybe_committed(now)

    # ----------------------------------------------------------------- Fetch, on a follower or observer

    def _accepts_fetch_answer(self, now: int, response: FetchResponse | FetchSnapshotResponse) -> bool:
        """Learn of a newer leader from the answer; True if it answers the fetch in flight without error."""
        leader_id, leader_epoch = response.current_leader
        if leader_epoch > self.epoch or (leader_epoch == self.epoch and self.leader_id == NO_ID
                                         and leader_id not in (NO_ID, self.node_id)
                                         and self.role in (Role.UNATTACHED, Role.PROSPECTIVE)):
            if leader_id not in (NO_ID, self.node_id) or leader_epoch > self.epoch:
                self._transition_to_newer_epoch(now, leader_epoch, leader_id)
                return False
        if self.role is not Role.FOLLOWER or response.correlation_id != self._fetch_in_flight:
            return False  # an answer to an earlier fetch, or to an observer's discovery
        self._fetch_in_flight = None
        if response.error_code in (ErrorCode.SNAPSHOT_NOT_FOUND, ErrorCode.POSITION_OUT_OF_RANGE):
            self._download = None  # the leader has a newer snapshot: ask again with a Fetch
        if response.error_code != ErrorCode.NONE:
            self._deadlines["fetch_retry"] = now + self.timers.retry_backoff_ms
            return False
        self._last_fetch_ok_ms = now
        self._deadlines["fetch_timeout"] = now + self.timers.fetch_timeout_ms
        return True

    def _on_fetch_response(self, now: int, response: FetchResponse) -> None:
        if not self._accepts_fetch_answer(now, response):
            return
        if response.snapshot_id is not None:
            self._download = _Download(response.snapshot_id)
            return self._send_fetch_snapshot(now)
        if response.diverging_epoch is not None:
            # Keep only what both logs hold: up to the leader's end of that epoch and this log's own end
            # of it, as Kafka's truncateToEndOffset does. Cutting only to the log end is not enough: this
            # log may hold a later epoch the leader never had, and would then diverge forever.
            epoch, end_offset = response.diverging_epoch
            self._truncate_local(min(end_offset, self.end_offset_for_epoch(epoch)[1]))
            return self._send_fetch(now)
        if response.base_offset != self.log_end:
            return self._send_fetch(now)
        if response.records:
            self._append_local(list(response.records))
        new_high_watermark = min(response.high_watermark, self.log_end)
        if new_high_watermark > self.high_watermark:
            self.high_watermark = new_high_watermark
            self._actions.append(Commit(new_high_watermark))
        self._send_fetch(now)

    def _on_fetch_snapshot_response(self, now: int, response: FetchSnapshotResponse) -> None:
        if not self._accepts_fetch_answer(now, response) or self._download is None:
            return
        download, data = self._download, response.unaligned_records
        assert isinstance(data, bytes)  # as received (a SnapshotChunk only as the leader's core sends it)
        if response.snapshot_id != download.snapshot_id or response.position != download.position or (
                not data and download.position < response.size):
            return self._send_fetch_snapshot(now)
        self._actions.append(WriteSnapshotChunk(download.snapshot_id, download.position, data))
        download.position += len(data)
        if download.position < response.size:
            return self._send_fetch_snapshot(now)
        self._install_snapshot(now, download.snapshot_id, response.size)

    def _install_snapshot(self, now: int, snapshot_id: SnapshotId, size: int) -> None:
        """The log is replaced by the snapshot: it starts, empty, at its end; the high watermark follows."""
        self._download = None
        self._actions.append(InstallSnapshot(snapshot_id, size))
        self._history.truncated(snapshot_id.end_offset)
        self.snapshot, self.snapshot_size = snapshot_id, size
        self.log.clear()
        self.log_start = self.durable_end = snapshot_id.end_offset
        if snapshot_id.end_offset > self.high_watermark:
            self.high_watermark = snapshot_id.end_offset
            self._actions.append(Commit(self.high_watermark))
        self._send_fetch(now)

    # ----------------------------------------------------------------- voter changes (KIP-853), on the leader

    def _on_add_raft_voter(self, now: int, request: AddRaftVoterRequest) -> None:
        key = ReplicaKey(request.voter_id, request.voter_directory_id)
        error = _first_error(
            lambda: self._not_leader_error(self.epoch), lambda: _invalid_key_error(key),
            lambda: self._missing_listener_error(request.listeners), self._change_not_allowed_yet,
            self._static_voters_error, self._uncommitted_voters_error,
            lambda: self.voter_set.node(key.id) is not None and (
                ErrorCode.DUPLICATE_VOTER, f"voter {key.id} is already one of the voters {self.voters}"),
            lambda: not self._caught_up(key, now) and (
                ErrorCode.REQUEST_TIMED_OUT, f"replica {key.id} is not a caught-up observer: within "
                                             f"{self.timers.fetch_timeout_ms} ms a fetch of it must have reached the "
                                             f"leader's log end as of its fetch before"))
        if error:
            return self._reply(request, AddRaftVoterResponse, error_code=int(error[0]), error_message=error[1])
        # The new voter's kraft.version range is taken as 0-1 (Kafka asks it with ApiVersions first).
        self._append_voters(now, request, self.voter_set.adding(VoterNode(key, tuple(request.listeners))),
                            request.timeout_ms, answer_at_append=not request.ack_when_committed)

    def _on_remove_raft_voter(self, now: int, request: RemoveRaftVoterRequest) -> None:
        key = ReplicaKey(request.voter_id, request.voter_directory_id)
        error = _first_error(
            lambda: self._not_leader_error(self.epoch), lambda: _invalid_key_error(key), self._change_not_allowed_yet,
            self._static_voters_error, self._uncommitted_voters_error,
            lambda: self.voter_set.removing(key) is None and (
                ErrorCode.VOTER_NOT_FOUND, f"replica {key.id} (directory {key.directory_id}) is not a voter of "
                                           f"{self.voters} that can be removed"))
        if error:
            return self._reply(request, RemoveRaftVoterResponse, error_code=int(error[0]), error_message=error[1])
        self._append_voters(now, request, self.voter_set.removing(key), self.timers.request_timeout_ms,
                            answer_at_append=False)

    def _on_update_raft_voter(self, now: int, request: UpdateRaftVoterRequest) -> None:
        key = ReplicaKey(request.voter_id, request.voter_directory_id)
        low, high = request.kraft_versions
        node = VoterNode(key, tuple(request.listeners), (low, high))
        error = _first_error(
            lambda: self._not_leader_error(request.current_leader_epoch), lambda: _invalid_key_error(key),
            lambda: (low < 0 or high < low) and (
                ErrorCode.INVALID_REQUEST, f"invalid kraft.version range {low}-{high}"),
            self._change_not_allowed_yet, lambda: self._missing_listener_error(request.listeners),
            lambda: not low <= self.kraft_version <= high and (
                ErrorCode.INVALID_REQUEST, f"kraft.version range {low}-{high} excludes {self.kraft_version}"),
            # A static set is not in the log: Kafka keeps the update in memory for an upgrade this core lacks.
            lambda: self.kraft_version == 0 and (ErrorCode.NONE, None),
            self._uncommitted_voters_error,
            lambda: self.voter_set.updating(node) is None and (
                ErrorCode.VOTER_NOT_FOUND, f"replica {key.id} is not one of the voters {self.voters}"))
        if error:
            return self._reply(request, UpdateRaftVoterResponse, error_code=int(error[0]),
                               current_leader=(self.leader_id, self.epoch))
        self._append_voters(now, request, self.voter_set.updating(node), self.timers.request_timeout_ms,
                            answer_at_append=True)

    def _not_leader_error(self, request_epoch: int) -> VoterError:
        if request_epoch < self.epoch:
            return ErrorCode.FENCED_LEADER_EPOCH, f"epoch {request_epoch} is older than {self.epoch}"
        if request_epoch > self.epoch:
            return ErrorCode.UNKNOWN_LEADER_EPOCH, f"epoch {request_epoch} is newer than {self.epoch}"
        if self.role is not Role.LEADER:
            return ErrorCode.NOT_LEADER_OR_FOLLOWER, f"replica {self.node_id} does not lead epoch {self.epoch}"
        return None

    def _missing_listener_error(self, listeners: tuple[tuple[str, str, int], ...]) -> VoterError:
        if not any(name == self.listener for name, _, _ in listeners):
            return ErrorCode.INVALID_REQUEST, f"the voter's listeners do not include {self.listener}"
        return None

    def _change_not_allowed_yet(self) -> VoterError:
        if self._voter_change is not None:
            return ErrorCode.REQUEST_TIMED_OUT, "another voter change is in flight"
        if self.high_watermark <= self._epoch_start_offset:
            return ErrorCode.REQUEST_TIMED_OUT, "the leader has not committed an entry of its epoch yet"
        return None

    def _static_voters_error(self) -> VoterError:
        if self.kraft_version < 1:
            return ErrorCode.UNSUPPORTED_VERSION, f"kraft.version is {self.kraft_version}: the voters are static"
        return None

    def _uncommitted_voters_error(self) -> VoterError:
        if self._history.latest_offset >= self.high_watermark:
            return ErrorCode.REQUEST_TIMED_OUT, "the latest voter set is not committed yet"
        return None

    def _caught_up(self, key: ReplicaKey, now: int) -> bool:
        """An observer that, within a fetch timeout, had all the leader held at its fetch before, as
        Kafka's lastCaughtUpTimestamp counts (so one that keeps up with steady writes is caught up)."""
        progress = self._progress.get(key.id)
        return (progress is not None and progress.directory_id == key.directory_id
                and now - progress.last_caught_up_ms <= self.timers.fetch_timeout_ms)

    def _append_voters(self, now: int, request: Message, voters: VoterSet | None, timeout_ms: int, *,
                       answer_at_append: bool) -> None:
        assert voters is not None  # the checks before found the change possible
        self._voter_change = _VoterChange(request, self.log_end)
        self._deadlines["voter_change"] = now + timeout_ms
        self._append_local([Entry(self.epoch, VotersRecord(voters), control=True)])
        if answer_at_append:
            self._answer_voter_change(ErrorCode.NONE, None)
        self._complete_parked(now)
        self._maybe_advance_high_watermark(now)  # the new majority may already hold more

    def _answer_voter_change(self, error: ErrorCode, message: str | None) -> None:
        change = self._voter_change
        assert change is not None  # a change under way
        response: type[Message]
        change.answered = True
        if isinstance(change.request, UpdateRaftVoterRequest):
            self._reply(change.request, UpdateRaftVoterResponse, error_code=int(error),
                        current_leader=(self.leader_id, self.epoch))
        else:
            response = (AddRaftVoterResponse if isinstance(change.request, AddRaftVoterRequest)
                        else RemoveRaftVoterResponse)
            self._reply(change.request, response, error_code=int(error), error_message=message)

    def _voter_change_maybe_committed(self, now: int) -> None:
        change = self._voter_change
        if change is not None and change.offset < self.high_watermark:
            if not change.answered:
                self._answer_voter_change(ErrorCode.NONE, None)
            self._voter_change = None
            self._deadlines.pop("voter_change", None)
        if not self.is_voter and self._history.latest_offset < self.high_watermark:
            # Removed, and the removal committed: resign (on the next timer, not in the middle of a Fetch).
            self._deadlines["removed"] = now

    def _expired_voter_change(self, now: int) -> None:
        """The change did not commit in time: answer so; its VotersRecord still blocks the next until it commits."""
        if self._voter_change is not None and not self._voter_change.answered:
            self._answer_voter_change(ErrorCode.REQUEST_TIMED_OUT, "the new voter set did not commit in time")
        self._voter_change = None

    def _expired_removed(self, now: int) -> None:
        self._become_resigned(now)


def _first_error(*checks: Callable[[], VoterError | bool]) -> VoterError:
    """The first of the checks, in order, that finds something: (error code, message) or a falsy value."""
    for check in checks:
        error = check()
        if error:
            return error  # type: ignore[return-value]  # a truthy check result is an error
    return None


def _invalid_key_error(key: ReplicaKey) -> VoterError:
    if key.id < 0 or key.directory_id is NO_DIRECTORY:
        return ErrorCode.INVALID_REQUEST, "the request names no valid voter (an id and a directory id)"
    return None


_HANDLERS: dict[type[Message], Callable[[RaftCore, int, Any], None]] = {
    VoteRequest: RaftCore._on_vote_request,
    VoteResponse: RaftCore._on_vote_response,
    BeginQuorumEpochRequest: RaftCore._on_begin_quorum_epoch,
    BeginQuorumEpochResponse: RaftCore._on_begin_quorum_epoch_response,
    EndQuorumEpochRequest: RaftCore._on_end_quorum_epoch,
    EndQuorumEpochResponse: RaftCore._on_end_quorum_epoch_response,
    FetchRequest: RaftCore._on_fetch_request,
    FetchResponse: RaftCore._on_fetch_response,
    FetchSnapshotRequest: RaftCore._on_fetch_snapshot_request,
    FetchSnapshotResponse: RaftCore._on_fetch_snapshot_response,
    AddRaftVoterRequest: RaftCore._on_add_raft_voter,
    RemoveRaftVoterRequest: RaftCore._on_remove_raft_voter,
    UpdateRaftVoterRequest: RaftCore._on_update_raft_voter,
}
