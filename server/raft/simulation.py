"""A seeded, deterministic simulation of a KRaft quorum in virtual time, and the invariants it checks.

Voters and observers each run a ``RaftCore`` (server/raft/core.py) over a simulated network that loses,
duplicates, delays and so reorders messages, and that can be partitioned; a simulated disk that fsyncs
after a delay (now and then a long one); pauses (a frozen replica handles nothing, then everything that
waited); graceful resignations of the leader; and crashes, of one replica or of all at once, that lose
what was not fsync'd (a random part of the unsynced tail survives, as a page cache might), followed by
restarts from the persisted state: quorum-state and the log left on disk. Clients submit writes to
whichever replica believes it leads; a write is acknowledged once that leader's high watermark passes
it while it still leads its epoch.

After every event the checker asserts (one method per invariant, named in ``INVARIANTS`` as Kafka's
RaftEventSimulationTest names its own where they are the same; a ``Violation`` names the invariant, the
seed and the command that replays it):

* at most one leader per epoch, also across the quorum-state of every replica (SingleLeader);
* the epoch a replica has persisted never goes back, and it runs in that epoch (MonotonicEpoch);
* a replica's high watermark never goes back while it runs (MonotonicHighWatermark; it is not persisted,
  so a restart starts from 0, as in Kafka), and is never beyond its log end (HighWatermarkWithinLog);
* a majority of voters have the leader's high watermark fsync'd (MajorityReachedHighWatermark; only
  fsync'd data counts);
* committed entries never change: every entry below any replica's high watermark equals the first
  entry ever committed at that offset, and no replica truncates or overwrites below its high watermark
  (ConsistentCommittedData; AppendAtLogEnd);
* log matching: every replica's snapshot and log up to its high watermark is a prefix of the newest
  leader's (LogMatching, checked every 20 events, as it costs a pass over the logs);
* snapshots (KIP-630): now and then a replica snapshots a committed prefix and retires the log below it;
  a snapshot's contents equal the committed entries it replaces, when taken and when a lagging replica
  has downloaded it by FetchSnapshot (in small chunks, over the same faulty network; a crash loses a
  partial download) and installs it (SnapshotHoldsCommittedData, ServesOwnSnapshot, DownloadsInOrder;
  a leader never installs one, LeaderNeverLoadSnapshot); with ``reconfigure`` it also holds the voter
  records the core names (``voters_at``), which must be kraft.version 1 and the voter set of the latest
  committed VotersRecord below its end (else the bootstrap set), and a replica that starts from it or
  installs it learns its voters from them alone (SnapshotHoldsVoters); every replica's log start equals
  its snapshot's end (SnapshotAtLogStart);
* with ``reconfigure`` (an operator adds observers as voters, removes voters, the leader too, and updates
  their listeners): every replica's voter set is that of the latest VotersRecord in its log
  (LatestVoterSet); a leader appends a voter set only once the previous one in its log is committed, and
  only one voter apart (OneVoterChangeAtATime); consecutive committed voter sets differ by at most one
  voter, so no two majorities are disjoint (OverlappingMajorities); a change answered as committed is in
  the leader's committed set (VoterChangeAnsweredWhenDone); and when a leader's high watermark moves, a
  majority of its latest set has it fsync'd.

Whatever the faults, the network keeps two rules of the real path: the answers of one connection go out
in request order, as the Listener writes them (a long poll the core never answers holds the later ones
until RaftLog's handler answers it NOT_LEADER_OR_FOLLOWER at its timeout), and an answer that comes later
than the request timeout (plus a Fetch's MaxWaitMs) is dropped, as RaftLog's driver drops it.
``Faults.under_load()`` (``--under-load``, with ``--kafka-timers``) models an overloaded machine instead
of the default faults: replicas frozen for 0.5-3 s that fire their overdue timers before handling what
waited, and a third of the messages taking up to 2.5 s.

Then the faults stop and the network heals; within a bounded virtual time a leader must be elected
(LeaderElectedAfterHealing), a new write must commit (WriteCommitsAfterHealing), and every replica must
catch up (AllReachedHighWatermark). Finally every acknowledged write, and every voter change answered as
committed, must be in the log of every replica at the offset it was acknowledged at, in its snapshot or
its log (AcknowledgedWritesKept, CommittedVoterChangesKept).

Soak: ``python -m kraftwire.server.raft.simulation --seeds 1000`` (``--seed N`` replays one;
``--reconfigure`` changes the voters as it goes; ``--kafka-timers --under-load`` for load).
"""
from __future__ import annotations

import argparse
import bisect
import dataclasses
import heapq
import pickle
import random
import sys
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

from kraftwire.codec.error_codes import ErrorCode

from .core import (NO_ID, AddRaftVoterRequest, AddRaftVoterResponse, AppendLog, BeginQuorumEpochResponse, Commit,
                   EndQuorumEpochResponse, Entry, FetchRequest, FetchResponse, FetchSnapshotResponse, FlushLog,
                   InstallSnapshot, Message, NotLeaderError, PersistState, RaftCore, RemoveRaftVoterRequest,
                   RemoveRaftVoterResponse, RetireLog, Role, Send, SnapshotChunk, SnapshotId, Timers, TruncateLog,
                   UpdateRaftVoterRequest, UpdateRaftVoterResponse, VoteResponse, WriteSnapshotChunk)
from .voters import ReplicaKey, SnapshotVoters, VoterNode, VoterSet, VotersRecord

ADMIN = 0  # the node id voter changes come from; their answers are recorded, not delivered
_RESPONSES = (AddRaftVoterResponse, BeginQuorumEpochResponse, EndQuorumEpochResponse, FetchResponse,
              FetchSnapshotResponse, RemoveRaftVoterResponse, UpdateRaftVoterResponse, VoteResponse)
SNAPSHOT_CHUNK_BYTES = 4096  # small, so a download takes several FetchSnapshot round trips


# The invariants the checker holds the run to, each checked by the method of the same name in snake case;
# the first six are named as Kafka's RaftEventSimulationTest names its own (MonotonicHighWatermark there
# watches the leader's high watermark, here every replica's), the others are kraftwire's.
INVARIANTS = {
    "SingleLeader": "at most one leader per epoch, across running replicas and every quorum-state",
    "MonotonicEpoch": "the persisted epoch never goes back; a running replica runs in the epoch it persisted",
    "MonotonicHighWatermark": "a replica's high watermark never goes back while it runs",
    "MajorityReachedHighWatermark": "when a leader's high watermark moves, a majority of its voters has it fsync'd",
    "ConsistentCommittedData": "committed entries never change, and no replica truncates below its high watermark",
    "SnapshotAtLogStart": "a replica's log starts at its snapshot's end, and is retired only below its own snapshot",
    "LeaderNeverLoadSnapshot": "a leader never replaces its log by a downloaded snapshot",
    "HighWatermarkWithinLog": "a replica's high watermark is never beyond its log end",
    "LogMatching": "every replica's log up to its high watermark is a prefix of the newest leader's",
    "AppendAtLogEnd": "a replica appends only at the end of its log",
    "SnapshotHoldsCommittedData": "a snapshot taken or installed holds exactly the committed entries below its end",
    "SnapshotHoldsVoters": "a snapshot holds the voter records in force at its end (none with static voters)",
    "ServesOwnSnapshot": "a replica answers FetchSnapshot only from a snapshot it holds",
    "DownloadsInOrder": "a download's chunks are written in order, and it is installed only once whole",
    "LatestVoterSet": "a replica's voter set is that of the latest VotersRecord in its log",
    "OneVoterChangeAtATime": "a leader appends a voter set only once the previous one committed, one voter apart",
    "OverlappingMajorities": "consecutive committed voter sets differ by at most one voter",
    "VoterChangeAnsweredWhenDone": "a voter change answered as committed is in the leader's committed voter set",
    "AcknowledgedWritesKept": "a write is acknowledged only as held, and is in every final log at its offset",
    "CommittedVoterChangesKept": "a voter change answered as committed is in every final log",
    "LeaderElectedAfterHealing": "once the faults stop, a leader is elected in bounded time",
    "WriteCommitsAfterHealing": "once a leader is elected after healing, a new write commits in bounded time",
    "AllReachedHighWatermark": "after healing, every replica reaches the leader's high watermark in bounded time",
}


class Violation(AssertionError):
    """An invariant broke: ``invariant`` is its name (``INVARIANTS``), ``seed`` the run's; the message names
    both, the command that replays the run and its last events."""

    def __init__(self, invariant: str, seed: int, message: str):
        super().__init__(message)
        self.invariant = invariant
        self.seed = seed


@dataclass(frozen=True)
class Faults:
    """How hostile the run is; probabilities per message, mean intervals in virtual ms."""
    loss: float = 0.05
    duplicate: float = 0.02
    max_delay_ms: int = 15
    max_fsync_ms: int = 8
    fsync_stall: float = 0.05        # the odd fsync takes far longer than a round trip
    fsync_stall_ms: int = 150
    crash_every_ms: int = 1500
    down_ms: tuple[int, int] = (50, 800)
    partition_every_ms: int = 1200
    partition_ms: tuple[int, int] = (100, 1500)
    resign_every_ms: int = 3000
    pause_every_ms: int = 2500       # a replica freezes (as under SIGSTOP or a long GC) and resumes
    pause_ms: tuple[int, int] = (50, 1200)
    crash_all_every_ms: int = 12_000  # every replica crashes at once, and each restarts on its own
    write_every_ms: int = 15
    reconfigure_every_ms: int = 100   # with ``reconfigure``: an AddRaftVoter, RemoveRaftVoter or UpdateRaftVoter
    snapshot_every_ms: int = 400      # a replica snapshots part of its committed log and retires it
    slow: float = 0.0                 # under load: this share of messages takes up to ``slow_delay_ms``
    slow_delay_ms: int = 0
    timers_first: bool = False        # a resumed replica fires its overdue timers before the messages that waited

    @classmethod
    def under_load(cls) -> Faults:
        """An overloaded machine, for Kafka's timers: replicas freeze for 0.5-3 s (a starved event loop or
        process) and then fire their overdue timers before they handle what arrived meanwhile, as asyncio
        runs due timers before the handlers of data read in the same pass; a third of the messages take up to
        2.5 s; fewer crashes and partitions, so that timing, not loss, is what the run tests."""
        return cls(pause_every_ms=2000, pause_ms=(500, 3000), slow=0.3, slow_delay_ms=2500, timers_first=True,
                   crash_every_ms=8000, down_ms=(500, 3000), partition_every_ms=8000, partition_ms=(500, 3000),
                   resign_every_ms=8000, crash_all_every_ms=60_000, write_every_ms=50, snapshot_every_ms=1000)


@dataclass(frozen=True)
class Snapshot:
    """A snapshot file: its bytes (the pickled voter records and entries, what FetchSnapshot moves), the
    voter records and the entries themselves."""
    snapshot_id: SnapshotId
    data: bytes
    voters: SnapshotVoters
    entries: tuple[Entry, ...]


@dataclass
class Disk:
    """What survives a crash: quorum-state and the snapshot (both written atomically), and the log from
    the snapshot's end (``start``), fsync'd up to ``synced``; a partial snapshot download does not."""
    quorum_state: PersistState = PersistState(0, NO_ID, NO_ID)
    snapshot: Snapshot | None = None
    start: int = 0
    entries: list[Entry] = field(default_factory=list)
    synced: int = 0
    truncations: list[int] = field(default_factory=list)  # every truncation point, so a late fsync stops at them
    voters_at: list[int] = field(default_factory=list)    # the offsets of the VotersRecords in ``entries``
    partial: tuple[SnapshotId, bytearray] | None = None   # a snapshot being downloaded

    @property
    def end(self) -> int:
        return self.start + len(self.entries)

    def cut(self, offset: int) -> None:
        """Keep the entries below ``offset``."""
        del self.entries[offset - self.start:]
        del self.voters_at[bisect.bisect_left(self.voters_at, offset):]

    def latest_voters(self, bootstrap: VoterSet) -> VoterSet:
        """The set of the latest VotersRecord in the log, else the snapshot's, else the bootstrap set."""
        if self.voters_at:
            record = self.entries[self.voters_at[-1] - self.start].data
            assert isinstance(record, VotersRecord)  # voters_at holds the offsets of VotersRecords
            return record.voters
        if self.snapshot is not None and self.snapshot.voters.voters is not None:
            return self.snapshot.voters.voters
        return bootstrap

    def entry(self, core: RaftCore, offset: int) -> Entry:
        """The entry at ``offset``: from the snapshot below the core's log start."""
        if offset < core.log_start:
            assert self.snapshot is not None  # the log starts at the snapshot's end
            return self.snapshot.entries[offset]
        return core.entry(offset)

    def full_log(self, core: RaftCore) -> list[Entry]:
        """The snapshot's entries, then the core's log: every offset from 0."""
        return list(self.snapshot.entries if self.snapshot else ()) + core.log


@dataclass
class Node:
    node_id: int
    directory_id: uuid.UUID | None = None
    disk: Disk = field(default_factory=Disk)
    core: RaftCore | None = None
    incarnation: int = 0
    paused_until: int = 0
    last_high_watermark: int = 0
    pending_writes: dict[int, tuple[int, object]] = field(default_factory=dict)  # offset → (epoch, value)

    @property
    def live(self) -> RaftCore:
        """The core of a running replica."""
        assert self.core is not None, f"replica {self.node_id} is down"
        return self.core


DEFAULT_FAULTS = Faults()
DEFAULT_TIMERS = Timers()


class Simulation:
    def __init__(self, seed: int, voters: int = 3, observers: int = 1, *, duration_ms: int = 20_000,
                 faults: Faults = DEFAULT_FAULTS, timers: Timers = DEFAULT_TIMERS,
                 core_class: type[RaftCore] = RaftCore, reconfigure: bool = False):
        """``core_class`` lets a test hand in a deliberately broken core to prove the checker catches it;
        ``reconfigure`` runs a dynamic quorum (kraft.version 1) whose voters are added, removed and updated."""
        self.seed, self.voter_count, self.observer_count, self.duration_ms = seed, voters, observers, duration_ms
        self.faults, self.timers, self.core_class, self.reconfigure = faults, timers, core_class, reconfigure
        self.rng = random.Random(seed)
        self.nodes = {i: Node(i, uuid.UUID(int=i)) for i in range(1, voters + observers + 1)}
        self.bootstrap = (VoterSet(tuple(VoterNode(ReplicaKey(i, self.nodes[i].directory_id), self._listeners(i, 0))
                                         for i in range(1, voters + 1)))
                          if reconfigure else VoterSet.static(range(1, voters + 1)))
        self.committed_voters: list[tuple[int, VoterSet]] = [(-1, self.bootstrap)]  # along the committed log
        self.voter_changes = 0                                      # committed VotersRecords that changed the set
        self.acknowledged_voters: dict[int, Entry] = {}             # offset → VotersRecord answered as committed
        self.voter_answers: Counter[str] = Counter()                # "AddRaftVoter NONE" → how many
        self._voter_requests: dict[int, object] = {}                # correlation id → request in flight
        self.now = 0
        self.events_checked = 0
        self.recovery_ms = -1  # virtual time from healing to the first acknowledged write
        self.faults_injected: Counter[str] = Counter()
        self._queue: list = []
        self._sequence = 0
        self._cut: set[frozenset[int]] = set()
        self._sent_at: dict[tuple[int, int], tuple[int, int]] = {}  # (requester, correlation id) → (sent, MaxWaitMs)
        self._answers: dict[tuple[int, int], deque[list]] = {}  # (requester, responder) → [request, answer] in order
        self.faulty = True
        self.leader_of_epoch: dict[int, int] = {}
        self.committed: list[Entry] = []
        self.acknowledged: dict[int, object] = {}  # offset → value
        self._next_value = 0
        self._recent: deque[tuple[int, str, object]] = deque(maxlen=25)
        for node in self.nodes.values():
            self._boot(node)
        self._schedule(0, "write")
        self._schedule(self._interval(faults.crash_every_ms), "crash")
        self._schedule(self._interval(faults.partition_every_ms), "partition")
        self._schedule(self._interval(faults.resign_every_ms), "resign")
        self._schedule(self._interval(faults.pause_every_ms), "pause")
        self._schedule(self._interval(faults.crash_all_every_ms), "crash_all")
        if reconfigure:
            self._schedule(self._interval(faults.reconfigure_every_ms), "reconfigure")
        self._schedule(self._interval(faults.snapshot_every_ms), "snapshot")

    # ------------------------------------------------------------------ running

    def run(self) -> Simulation:
        self._run_until(self.duration_ms)
        self._heal()
        heal_time = self.now
        bound = 20 * self.timers.election_timeout_ms + 4 * self.timers.fetch_timeout_ms
        probe = self._commit_probe(heal_time + bound)
        self.recovery_ms = self.now - heal_time
        self._all_reached_high_watermark(probe, heal_time + 2 * bound)
        self._check_final()
        return self

    def _run_until(self, end_ms: int, until: Callable[[], bool] = lambda: False) -> bool:
        while self._queue and self._queue[0][0] <= end_ms:
            when, _, kind, args = heapq.heappop(self._queue)
            self.now = when
            getattr(self, f"_on_{kind}")(*args)
            self.events_checked += 1
            self._check()
            if until():
                return True
        self.now = max(self.now, end_ms)
        return until()

    def _commit_probe(self, deadline: int) -> tuple[int, object]:
        """After healing, a leader must be elected and a write must commit before ``deadline``."""
        while True:
            leader = self._leader_elected_after_healing(deadline)
            probe = self._write_commits_after_healing(leader, deadline)
            if probe is not None:
                return probe

    def _leader_elected_after_healing(self, deadline: int) -> Node:
        """LeaderElectedAfterHealing: once the faults stop, a leader is elected before ``deadline``."""
        if not self._run_until(deadline, lambda: self._leader() is not None):
            self._fail("LeaderElectedAfterHealing", f"liveness: no leader elected by {deadline} ms")
        leader = self._leader()
        assert leader is not None  # as just waited for
        return leader

    def _write_commits_after_healing(self, leader: Node, deadline: int) -> tuple[int, object] | None:
        """WriteCommitsAfterHealing: a write the leader takes commits before ``deadline``, unless the leader
        loses its epoch first (then None: the next leader is tried)."""
        epoch, value = leader.live.epoch, ("probe", self.now)
        offset = self._submit(leader, value)

        def settled() -> bool:
            return (self.acknowledged.get(offset) == value or leader.core is None
                    or leader.core.role is not Role.LEADER or leader.core.epoch != epoch)

        if not self._run_until(deadline, settled):
            self._fail("WriteCommitsAfterHealing",
                       f"liveness: write {value!r} at offset {offset} not committed by {deadline} ms")
        return (offset, value) if self.acknowledged.get(offset) == value else None

    def _all_reached_high_watermark(self, probe: tuple[int, object], deadline: int) -> None:
        """AllReachedHighWatermark: after healing, every replica reaches the probe's high watermark before
        ``deadline`` (Kafka's simulation runs until ``allReachedHighWatermark``)."""
        end = probe[0] + 1

        def caught_up() -> bool:
            return all(n.core is not None and n.core.high_watermark >= end for n in self.nodes.values())

        if not self._run_until(deadline, caught_up):
            behind = {n.node_id: n.live.high_watermark for n in self.nodes.values()}
            self._fail("AllReachedHighWatermark",
                       f"liveness: not every replica reached high watermark {end} by {deadline} ms: {behind}")

    def _heal(self) -> None:
        self.faulty = False
        self._cut.clear()
        for node in self.nodes.values():
            node.paused_until = min(node.paused_until, self.now)
            if node.core is None:
                self._boot(node)

    # ------------------------------------------------------------------ events

    def _schedule(self, delay: int, kind: str, *args: Any) -> None:
        self._sequence += 1
        heapq.heappush(self._queue, (self.now + delay, self._sequence, kind, args))

    def _interval(self, mean_ms: int) -> int:
        return 1 + int(self.rng.expovariate(1 / mean_ms))

    def _boot(self, node: Node) -> None:
        node.incarnation += 1
        state = node.disk.quorum_state
        node.core = self.core_class(node.node_id, self.bootstrap, random.Random(self.rng.random()), self.now,
                                    timers=dataclasses.replace(self.timers, snapshot_chunk_bytes=SNAPSHOT_CHUNK_BYTES),
                                    epoch=state.epoch, leader_id=state.leader_id,
                                    voted_id=state.voted_id, log=node.disk.entries, directory_id=node.directory_id,
                                    kraft_version=1 if self.reconfigure else 0, snapshot=self._snapshot_of(node.disk),
                                    snapshot_voters=(node.disk.snapshot.voters if node.disk.snapshot
                                                     else SnapshotVoters()))
        node.last_high_watermark = 0
        node.pending_writes.clear()
        self._record(f"boot {node.node_id}", f"as {node.core.role.value} in epoch {state.epoch}, "
                                              f"log end {node.core.log_end}")
        self._arm_timer(node)

    def _arm_timer(self, node: Node) -> None:
        deadline = node.live.next_deadline()
        if deadline is not None:
            self._schedule(max(0, deadline - self.now), "timer", node.node_id, node.incarnation, deadline)

    def _postponed(self, node: Node, kind: str, *args: Any) -> bool:
        """A frozen replica handles nothing until it resumes; then it handles all that waited, in order."""
        if node.paused_until > self.now:
            after_timers = self.faults.timers_first and kind != "timer"
            self._schedule(node.paused_until - self.now + after_timers, kind, *args)
            return True
        return False

    def _on_timer(self, node_id: int, incarnation: int, deadline: int) -> None:
        node = self.nodes[node_id]
        if self._postponed(node, "timer", node_id, incarnation, deadline):
            return
        if node.core is None or node.incarnation != incarnation or node.core.next_deadline() != deadline:
            return  # a timer of an earlier incarnation, or one the core has moved since
        self._apply(node, node.core.on_timer(self.now))

    def _on_deliver(self, node_id: int, incarnation: int, message: Message) -> None:
        node = self.nodes[node_id]
        if self._postponed(node, "deliver", node_id, incarnation, message):
            return
        if node.core is None or node.incarnation != incarnation:
            return  # the connection it travelled on died with the replica
        self._record("deliver", message)
        if not isinstance(message, _RESPONSES):
            self._await_answer(node, message)
        self._apply(node, node.core.receive(self.now, message))

    def _await_answer(self, node: Node, request: Message) -> None:
        """The answers of one connection go out in request order, as the Listener writes them; one the core
        never gives (a long poll it dropped) is given by RaftLog's handler at its timeout."""
        entry = [request, None]
        self._answers.setdefault((request.src, node.node_id), deque()).append(entry)
        if isinstance(request, FetchRequest):
            self._schedule(self.timers.request_timeout_ms + request.max_wait_ms, "unanswered", node.node_id,
                           node.incarnation, entry)

    def _on_unanswered(self, node_id: int, incarnation: int, entry: list) -> None:
        node = self.nodes[node_id]
        if self._postponed(node, "unanswered", node_id, incarnation, entry):
            return
        if node.core is None or node.incarnation != incarnation or entry[1] is not None:
            return
        request, core = entry[0], node.core
        self.faults_injected["long polls answered by the driver's timeout"] += 1
        entry[1] = FetchResponse(src=node_id, dst=request.src, correlation_id=request.correlation_id,
                                 error_code=int(ErrorCode.NOT_LEADER_OR_FOLLOWER), high_watermark=core.high_watermark,
                                 base_offset=request.fetch_offset, records=(), diverging_epoch=None,
                                 current_leader=(core.leader_id, core.epoch))
        self._flush_answers((request.src, node_id))

    def _answer(self, response: Message) -> None:
        """Queue a core's answer behind the earlier requests of its connection still unanswered."""
        key = (response.dst, response.src)
        entry = next((e for e in self._answers.get(key, ()) if e[1] is None
                      and e[0].correlation_id == response.correlation_id), None)
        if entry is None:
            return self._send(response)
        entry[1] = response
        self._flush_answers(key)

    def _flush_answers(self, key: tuple[int, int]) -> None:
        queue = self._answers.get(key)
        while queue and queue[0][1] is not None:
            self._send(queue.popleft()[1])

    def _on_fsync(self, node_id: int, incarnation: int, end_offset: int, truncations_seen: int) -> None:
        node = self.nodes[node_id]
        if self._postponed(node, "fsync", node_id, incarnation, end_offset, truncations_seen):
            return
        if node.core is None or node.incarnation != incarnation:
            return
        disk = node.disk
        synced = min([end_offset, disk.end] + disk.truncations[truncations_seen:])
        disk.synced = max(disk.synced, synced)
        self._apply(node, node.core.flush_completed(self.now, synced))

    def _on_write(self) -> None:
        if self.faulty:
            leaders = [n for n in self.nodes.values()
                       if n.core is not None and n.core.role is Role.LEADER and n.paused_until <= self.now]
            if leaders:
                self._submit(self.rng.choice(leaders), ("w", self._next_value))
                self._next_value += 1
            self._schedule(self._interval(self.faults.write_every_ms), "write")

    def _submit(self, node: Node, value: object) -> int:
        try:
            offset, actions = node.live.append(self.now, value)
        except NotLeaderError:
            raise AssertionError("submit to a replica that does not lead") from None
        node.pending_writes[offset] = (node.live.epoch, value)
        self._apply(node, actions)
        return offset

    def _on_crash(self) -> None:
        if self.faulty:
            self._crash(self.rng.choice(list(self.nodes.values())))
            self._schedule(self._interval(self.faults.crash_every_ms), "crash")

    def _on_crash_all(self) -> None:
        if self.faulty:
            self.faults_injected["crashes of all replicas"] += 1
            for node in self.nodes.values():
                self._crash(node)
            self._schedule(self._interval(self.faults.crash_all_every_ms), "crash_all")

    def _crash(self, node: Node) -> None:
        """Stop the replica; of its log, the fsync'd part and a random part of the rest survive."""
        if node.core is None:
            return
        self.faults_injected["crashes"] += 1
        disk = node.disk
        survivors = disk.synced + self.rng.randint(0, disk.end - disk.synced)
        self._record(f"crash {node.node_id}: log {disk.end} → {survivors} (fsync'd {disk.synced})")
        disk.cut(survivors)
        disk.truncations.clear()
        disk.synced = disk.end
        disk.partial = None
        node.core = None
        node.paused_until = 0
        node.pending_writes.clear()
        for key in [k for k in self._answers if node.node_id in k]:  # its connections died with it
            del self._answers[key]
        self._schedule(self.rng.randint(*self.faults.down_ms), "restart", node.node_id)

    @staticmethod
    def _snapshot_of(disk: Disk) -> tuple[SnapshotId, int] | None:
        return (disk.snapshot.snapshot_id, len(disk.snapshot.data)) if disk.snapshot else None

    def _on_snapshot(self) -> None:
        """A running replica snapshots a committed prefix of its log and retires the log below its end."""
        if not self.faulty:
            return
        self._schedule(self._interval(self.faults.snapshot_every_ms), "snapshot")
        node = self.rng.choice(list(self.nodes.values()))
        core = node.core
        if core is None or node.paused_until > self.now or core.high_watermark <= core.log_start:
            return
        end = self.rng.randint(core.log_start + 1, core.high_watermark)
        entries = tuple(node.disk.full_log(core)[:end])
        snapshot_id = SnapshotId(end, entries[-1].epoch)
        voters = core.voters_at(end)
        self._snapshot_holds_committed_data(node, entries, "took", checked=core.log_start)  # below: checked before
        self._snapshot_holds_voters(node, entries, voters, "took")
        node.disk.snapshot = Snapshot(snapshot_id, pickle.dumps((voters, entries)), voters, entries)
        self.faults_injected["snapshots"] += 1
        self._record(f"snapshot {node.node_id}", snapshot_id)
        self._apply(node, core.snapshot_taken(self.now, end, len(node.disk.snapshot.data)))

    def _on_pause(self) -> None:
        if self.faulty:
            node = self.rng.choice(list(self.nodes.values()))
            if node.core is not None and node.paused_until <= self.now:
                self.faults_injected["pauses"] += 1
                node.paused_until = self.now + self.rng.randint(*self.faults.pause_ms)
                self._record(f"pause {node.node_id} until {node.paused_until}")
            self._schedule(self._interval(self.faults.pause_every_ms), "pause")

    def _on_restart(self, node_id: int) -> None:
        node = self.nodes[node_id]
        if node.core is None:
            self._boot(node)

    def _on_partition(self) -> None:
        if not self.faulty:
            return
        ids = list(self.nodes)
        self.rng.shuffle(ids)
        if self.rng.random() < 0.5:
            side = {ids[0]}  # isolate one replica
        else:
            side = set(ids[:self.rng.randint(1, len(ids) - 1)])
        cut = {frozenset((a, b)) for a in side for b in self.nodes if b not in side}
        self._cut |= cut
        self.faults_injected["partitions"] += 1
        self._record(f"partition {sorted(side)} from the rest")
        self._schedule(self.rng.randint(*self.faults.partition_ms), "heal_partition", frozenset(cut))
        self._schedule(self._interval(self.faults.partition_every_ms), "partition")

    def _on_heal_partition(self, cut: frozenset) -> None:
        self._cut -= cut

    def _on_resign(self) -> None:
        if not self.faulty:
            return
        leader = self._leader()
        if leader is not None and leader.paused_until <= self.now:
            self.faults_injected["resignations"] += 1
            self._record(f"resign {leader.node_id}")
            self._apply(leader, leader.live.resign(self.now))
        self._schedule(self._interval(self.faults.resign_every_ms), "resign")

    @staticmethod
    def _listeners(node_id: int, generation: int) -> tuple[tuple[str, str, int], ...]:
        return (("CONTROLLER", f"controller-{node_id}", 9093 + generation),)

    def _on_reconfigure(self) -> None:
        """An operator adds a node as a voter, removes one (the leader too) or updates a voter's listeners; now and
        then it names a node that does not fit, and the core decides what is allowed, so duplicates, unknown
        voters and changes in flight are tried too."""
        if not self.faulty:
            return
        self._schedule(self._interval(self.faults.reconfigure_every_ms), "reconfigure")
        leader = self._leader()
        if leader is None or leader.paused_until > self.now:
            return
        kind = self.rng.choices(("add", "remove", "update"), (2, 2, 1))[0]
        voters = leader.live.voters
        fitting = [i for i in self.nodes if (i in voters) != (kind == "add")]
        target = self.nodes[self.rng.choice(fitting if fitting and self.rng.random() < 0.8 else list(self.nodes))]
        self._sequence += 1
        envelope = dict(src=ADMIN, dst=leader.node_id, correlation_id=self._sequence)
        request: AddRaftVoterRequest | RemoveRaftVoterRequest | UpdateRaftVoterRequest
        if kind == "add":
            request = AddRaftVoterRequest(**envelope, timeout_ms=self.rng.randint(100, 2000), voter_id=target.node_id,
                                          voter_directory_id=target.directory_id,
                                          listeners=self._listeners(target.node_id, 0),
                                          ack_when_committed=self.rng.random() < 0.8)
        elif kind == "remove":
            if len(leader.live.voters) <= 2:
                return  # keep the quorum able to survive the odd fault
            request = RemoveRaftVoterRequest(**envelope, voter_id=target.node_id,
                                             voter_directory_id=target.directory_id)
        else:
            request = UpdateRaftVoterRequest(**envelope, current_leader_epoch=leader.live.epoch,
                                             voter_id=target.node_id, voter_directory_id=target.directory_id,
                                             listeners=self._listeners(target.node_id, self._sequence),
                                             kraft_versions=(0, 1))
        self._voter_requests[request.correlation_id] = request
        self._record(f"{type(request).__name__} to {leader.node_id}", request)
        self._apply(leader, leader.live.receive(self.now, request))

    def _voter_answer(self, response: AddRaftVoterResponse | RemoveRaftVoterResponse | UpdateRaftVoterResponse) -> None:
        """A voter change answered; one answered as committed must be in the leader's committed log."""
        request = self._voter_requests.pop(response.correlation_id)
        kind = type(request).__name__.removesuffix("Request")
        error = ErrorCode(response.error_code)
        self.voter_answers[f"{kind} {error.name}"] += 1
        self._record(f"answer to {kind}", response)
        if response.error_code != ErrorCode.NONE or isinstance(request, UpdateRaftVoterRequest):
            return  # UpdateRaftVoter is answered at append, as in Kafka
        if isinstance(request, AddRaftVoterRequest) and not request.ack_when_committed:
            return
        leader = self.nodes[response.src].live
        offset = next((o for o in range(leader.high_watermark - 1, -1, -1)
                       if isinstance(leader.entry(o).data, VotersRecord)), None)
        record = leader.entry(offset).data if offset is not None else None
        voters = record.voters if isinstance(record, VotersRecord) else None
        assert isinstance(request, (AddRaftVoterRequest, RemoveRaftVoterRequest))  # UpdateRaftVoter returned above
        assert not isinstance(response, UpdateRaftVoterResponse)
        self._voter_change_answered_when_done(response, request, kind, voters)
        assert offset is not None  # else the check above failed
        self.acknowledged_voters[offset] = leader.entry(offset)
        if request.voter_id == response.src:
            self.voter_answers["RemoveRaftVoter of the leader itself, committed"] += 1

    def _leader(self) -> Node | None:
        """The leader of the highest epoch any running replica leads."""
        leaders = [n for n in self.nodes.values() if n.core is not None and n.core.role is Role.LEADER]
        return max(leaders, key=lambda n: n.live.epoch, default=None)

    # ------------------------------------------------------------------ actions

    def _apply(self, node: Node, actions: list) -> None:
        core, disk = node.core, node.disk
        for action in actions:
            if isinstance(action, PersistState):
                self._monotonic_epoch(node, persisting=action)
                disk.quorum_state = action
            elif isinstance(action, TruncateLog):
                self._consistent_committed_data(node, truncating=action.offset)
                disk.cut(action.offset)
                disk.synced = min(disk.synced, action.offset)
                disk.truncations.append(action.offset)
            elif isinstance(action, AppendLog):
                self._append_at_log_end(node, action)
                for offset, entry in enumerate(action.entries, action.offset):
                    if isinstance(entry.data, VotersRecord):
                        if core is not None and core.role is Role.LEADER:
                            self._one_voter_change_at_a_time(node, offset, entry.data.voters)
                        disk.voters_at.append(offset)
                    disk.entries.append(entry)
            elif isinstance(action, FlushLog):
                slow = self.faulty and self.rng.random() < self.faults.fsync_stall
                delay = self.rng.randint(0, self.faults.fsync_stall_ms if slow else self.faults.max_fsync_ms)
                self._schedule(delay, "fsync", node.node_id,
                               node.incarnation, action.end_offset, len(disk.truncations))
            elif isinstance(action, RetireLog):
                self._retire(node, action.log_start)
            elif isinstance(action, WriteSnapshotChunk):
                self._write_chunk(node, action)
            elif isinstance(action, InstallSnapshot):
                self._install(node, action)
            elif isinstance(action, Send):
                message = self._read_chunk(node, action.message)
                self._answer(message) if isinstance(message, _RESPONSES) else self._send(message)
            elif isinstance(action, Commit):
                self._acknowledge(node, action.high_watermark)
        self._arm_timer(node)

    def _retire(self, node: Node, log_start: int) -> None:
        disk = node.disk
        self._snapshot_at_log_start(node, retiring=log_start)
        del disk.entries[:log_start - disk.start]
        del disk.voters_at[:bisect.bisect_left(disk.voters_at, log_start)]
        disk.start = log_start
        disk.synced = max(disk.synced, log_start)

    def _read_chunk(self, node: Node, message: Message) -> Message:
        """The driver's part of a FetchSnapshot answer: the bytes the core names, read from its snapshot."""
        chunk = message.unaligned_records if isinstance(message, FetchSnapshotResponse) else None
        if not isinstance(message, FetchSnapshotResponse) or not isinstance(chunk, SnapshotChunk):
            return message
        snapshot = self._serves_own_snapshot(node, chunk)
        data = snapshot.data[chunk.position:chunk.position + chunk.length]
        return dataclasses.replace(message, unaligned_records=data)

    def _write_chunk(self, node: Node, action: WriteSnapshotChunk) -> None:
        disk = node.disk
        if action.position == 0 or disk.partial is None or disk.partial[0] != action.snapshot_id:
            disk.partial = (action.snapshot_id, bytearray())
        self._downloads_in_order(node, action)
        disk.partial[1].extend(action.data)

    def _install(self, node: Node, action: InstallSnapshot) -> None:
        """The downloaded snapshot replaces the log; its contents must be the committed prefix."""
        disk = node.disk
        self._leader_never_load_snapshot(node, action)
        self._downloads_in_order(node, action)
        assert disk.partial is not None  # as just checked
        data = bytes(disk.partial[1])
        voters, entries = pickle.loads(data)
        if len(entries) != action.snapshot_id.end_offset:
            self._fail("SnapshotHoldsCommittedData",
                       f"node {node.node_id} installed {action.snapshot_id} holding {len(entries)} entries")
        self._snapshot_holds_committed_data(node, entries, "installed")
        self._snapshot_holds_voters(node, entries, voters, "installed")
        self.faults_injected["snapshot installs"] += 1
        self._record(f"install {node.node_id}", action.snapshot_id)
        node.live.installed_snapshot_voters(voters)  # the driver reads them from the file it installed
        disk.snapshot = Snapshot(action.snapshot_id, data, voters, entries)
        disk.partial = None
        disk.entries.clear()
        disk.voters_at.clear()
        disk.start = disk.synced = action.snapshot_id.end_offset
        disk.truncations.append(disk.start)

    def _send(self, message: Message) -> None:
        if message.dst == ADMIN:
            assert isinstance(message, (AddRaftVoterResponse, RemoveRaftVoterResponse, UpdateRaftVoterResponse))
            return self._voter_answer(message)
        link = frozenset((message.src, message.dst))
        if self.faulty and (link in self._cut or self.rng.random() < self.faults.loss):
            return
        destination = self.nodes[message.dst]
        if destination.core is None:
            return
        copies = 2 if self.faulty and self.rng.random() < self.faults.duplicate else 1
        for _ in range(copies):
            delay = self.rng.randint(1, self.faults.max_delay_ms)
            if self.faulty and self.faults.slow and self.rng.random() < self.faults.slow:
                self.faults_injected["slow messages"] += 1
                delay = self.rng.randint(1, self.faults.slow_delay_ms)
            if self._answered_too_late(message, delay):
                self.faults_injected["answers past the request timeout"] += 1
                continue
            self._schedule(delay, "deliver", message.dst, destination.incarnation, message)

    def _answered_too_late(self, message: Message, delay: int) -> bool:
        """RaftLog's driver waits for an answer for the request timeout (plus a Fetch's MaxWaitMs) and then
        drops it, and so does this network: a request's send time is kept until its answer arrives."""
        if not isinstance(message, _RESPONSES):
            self._sent_at[(message.src, message.correlation_id)] = (self.now, getattr(message, "max_wait_ms", 0))
            return False
        sent = self._sent_at.pop((message.dst, message.correlation_id), None)
        if sent is None:
            return False
        sent_ms, max_wait_ms = sent
        return self.now + delay - sent_ms > self.timers.request_timeout_ms + max_wait_ms

    def _acknowledge(self, node: Node, high_watermark: int) -> None:
        core = node.live
        for offset in [o for o in node.pending_writes if o < high_watermark]:
            epoch, value = node.pending_writes.pop(offset)
            if core.role is Role.LEADER and core.epoch == epoch:
                self._acknowledged_writes_kept(leader=node, offset=offset, epoch=epoch, value=value)
                self.acknowledged[offset] = value
                self._record(f"ack offset {offset} = {value!r} by {node.node_id}")

    # ------------------------------------------------------------------ invariants
    #
    # One function per invariant, named after it (``INVARIANTS``); a broken one raises ``Violation`` naming
    # it. The ones checked after every event run in ``_check``; the others where what they guard happens
    # (an action carried out, a snapshot taken or installed, an answer, the end of the run).

    def _check(self) -> None:
        """The invariants that hold after every event, replica by replica, then log matching."""
        leaders_now: dict[int, int] = {}
        for node in self.nodes.values():
            self._single_leader(node, leaders_now)
            core = node.core
            if core is None:
                continue
            self._monotonic_epoch(node, core)
            self._monotonic_high_watermark(node, core)
            self._high_watermark_within_log(node, core)
            self._snapshot_at_log_start(node, core)
            self._consistent_committed_data(node, core)
            latest = self._latest_voter_set(node, core)
            self._majority_reached_high_watermark(node, core, latest)
            node.last_high_watermark = core.high_watermark
        newest = max(self.leader_of_epoch, default=None)
        if newest in leaders_now and self.events_checked % 20 == 0:
            # Only the leader of the newest epoch is sure to hold every committed entry (a deposed one
            # may still believe it leads).
            self._log_matching(self.nodes[leaders_now[newest]])

    def _single_leader(self, node: Node, leaders_now: dict[int, int]) -> None:
        """SingleLeader: at most one leader per epoch, across running replicas and every quorum-state."""
        state = node.disk.quorum_state
        if state.leader_id != NO_ID:
            self._one_leader(state.epoch, state.leader_id, f"quorum-state of node {node.node_id}")
        if node.core is not None and node.core.role is Role.LEADER:
            self._one_leader(node.core.epoch, node.node_id, f"node {node.node_id}")
            leaders_now[node.core.epoch] = node.node_id

    def _one_leader(self, epoch: int, leader_id: int, where: str) -> None:
        known = self.leader_of_epoch.setdefault(epoch, leader_id)
        if known != leader_id:
            self._fail("SingleLeader", f"two leaders in epoch {epoch}: {known} and {leader_id} ({where})")

    def _monotonic_epoch(self, node: Node, core: RaftCore | None = None,
                         persisting: PersistState | None = None) -> None:
        """MonotonicEpoch: the epoch a replica persists never goes back (checked as it persists one), and a
        running replica runs in the epoch it persisted (checked after every event)."""
        state = node.disk.quorum_state
        if persisting is not None and persisting.epoch < state.epoch:
            self._fail("MonotonicEpoch", f"node {node.node_id} persisted epoch {persisting.epoch} after {state.epoch}")
        if core is not None and core.epoch != state.epoch:
            self._fail("MonotonicEpoch", f"node {node.node_id} runs in epoch {core.epoch} but persisted {state.epoch}")

    def _monotonic_high_watermark(self, node: Node, core: RaftCore) -> None:
        """MonotonicHighWatermark: a replica's high watermark never goes back while it runs (it is not
        persisted, so a restart starts from 0, as in Kafka)."""
        if core.high_watermark < node.last_high_watermark:
            self._fail("MonotonicHighWatermark", f"node {node.node_id}'s high watermark went back from "
                                                 f"{node.last_high_watermark} to {core.high_watermark}")

    def _high_watermark_within_log(self, node: Node, core: RaftCore) -> None:
        """HighWatermarkWithinLog: a replica's high watermark is never beyond its log end."""
        if core.high_watermark > core.log_end:
            self._fail("HighWatermarkWithinLog", f"node {node.node_id}'s high watermark {core.high_watermark} is "
                                                 f"beyond its log end {core.log_end}")

    def _snapshot_at_log_start(self, node: Node, core: RaftCore | None = None, retiring: int | None = None) -> None:
        """SnapshotAtLogStart: a replica retires its log only below a snapshot of its own that ends there
        (checked as it retires), and its core's log start is its disk's (after every event)."""
        disk = node.disk
        if retiring is not None and (disk.snapshot is None or disk.snapshot.snapshot_id.end_offset != retiring):
            self._fail("SnapshotAtLogStart", f"node {node.node_id} retired its log below {retiring}, which no "
                                             f"snapshot of its own ends at")
        if core is not None and core.log_start != disk.start:
            self._fail("SnapshotAtLogStart", f"node {node.node_id}'s log starts at {core.log_start} but its disk's "
                                             f"at {disk.start}")

    def _consistent_committed_data(self, node: Node, core: RaftCore | None = None,
                                   truncating: int | None = None) -> None:
        """ConsistentCommittedData: committed entries never change: every entry below any replica's high
        watermark equals the first entry ever committed at that offset (after every event), and no replica
        truncates below its high watermark (as it truncates)."""
        if truncating is not None and truncating < node.last_high_watermark:
            self._fail("ConsistentCommittedData", f"node {node.node_id} truncated to {truncating}, below its high "
                                                  f"watermark {node.last_high_watermark}")
        if core is None:
            return
        for offset in range(node.last_high_watermark, core.high_watermark):
            entry = node.disk.entry(core, offset)
            if offset < len(self.committed):
                if self.committed[offset] != entry:
                    self._fail("ConsistentCommittedData",
                               f"committed entry at offset {offset} changed: first {self.committed[offset]}, "
                               f"now {entry} on node {node.node_id}")
            else:
                self._commit(offset, entry)

    def _commit(self, offset: int, entry: Entry) -> None:
        """The first commit of an offset."""
        self.committed.append(entry)
        if isinstance(entry.data, VotersRecord):
            previous = self.committed_voters[-1][1]
            self._overlapping_majorities(offset, previous, entry.data.voters)
            self.voter_changes += previous != entry.data.voters
            self.committed_voters.append((offset, entry.data.voters))

    def _overlapping_majorities(self, offset: int, previous: VoterSet, voters: VoterSet) -> None:
        """OverlappingMajorities: consecutive committed voter sets differ by at most one voter, so no two
        majorities are disjoint."""
        if not previous.differs_by_at_most_one(voters):
            self._fail("OverlappingMajorities", f"committed voter sets {previous.ids} and then {voters.ids} at offset "
                                                f"{offset} may have disjoint majorities")

    def _latest_voter_set(self, node: Node, core: RaftCore) -> VoterSet:
        """LatestVoterSet: every replica's voter set is that of the latest VotersRecord in its log (else its
        snapshot's, else the bootstrap set); returns that set."""
        latest = node.disk.latest_voters(self.bootstrap)
        if core.voter_set != latest:
            self._fail("LatestVoterSet", f"node {node.node_id} counts voters {core.voters} but the latest "
                                         f"VotersRecord in its log holds {latest.ids}")
        return latest

    def _majority_reached_high_watermark(self, leader: Node, core: RaftCore, voters: VoterSet) -> None:
        """MajorityReachedHighWatermark: when a leader's high watermark moves, a majority of its latest
        voter set has it fsync'd (only fsync'd data counts)."""
        hw = core.high_watermark
        if core.role is not Role.LEADER or hw <= leader.last_high_watermark:
            return
        durable = [v for v in voters.ids if self.nodes[v].disk.synced >= hw]
        if len(durable) < voters.majority():
            self._fail("MajorityReachedHighWatermark",
                       f"leader {leader.node_id} has high watermark {hw} but only voters {durable} of {voters.ids} "
                       f"have it fsync'd ({ {v: self.nodes[v].disk.synced for v in voters.ids} })")

    def _log_matching(self, leader: Node) -> None:
        """LogMatching: every replica's log up to its high watermark is a prefix of the newest leader's.
        Below either log start, both hold snapshots checked against the committed entries: compare above."""
        leader_core = leader.live
        for node in self.nodes.values():
            if node.core is not None:
                core = node.core
                hw = min(core.high_watermark, leader_core.log_end)
                low = max(core.log_start, leader_core.log_start)
                if low >= hw:
                    continue
                log = core.log[low - core.log_start:hw - core.log_start]
                if log != leader_core.log[low - leader_core.log_start:hw - leader_core.log_start]:
                    first = next(o for o in range(low, hw) if core.entry(o) != leader_core.entry(o))
                    self._fail("LogMatching", f"node {node.node_id}'s log differs from leader {leader.node_id}'s at "
                                              f"offset {first}, below its high watermark {core.high_watermark}")

    def _append_at_log_end(self, node: Node, action: AppendLog) -> None:
        """AppendAtLogEnd: a replica appends only at the end of its log."""
        if action.offset != node.disk.end:
            self._fail("AppendAtLogEnd", f"node {node.node_id} appended at {action.offset} to a log ending at "
                                         f"{node.disk.end}")

    def _one_voter_change_at_a_time(self, leader: Node, offset: int, voters: VoterSet) -> None:
        """OneVoterChangeAtATime: a leader appends a voter set only once the previous one in its log is
        committed, and only one voter apart from it."""
        disk = leader.disk
        before = disk.voters_at[-1] if disk.voters_at else -1
        previous = disk.latest_voters(self.bootstrap)  # below the log, in a snapshot: committed
        if before >= 0 and (before >= len(self.committed)
                            or self.committed[before] != disk.entries[before - disk.start]):
            self._fail("OneVoterChangeAtATime",
                       f"leader {leader.node_id} appended voters {voters.ids} at offset {offset} while the voter set "
                       f"{previous.ids} at offset {before} is not committed: two changes in flight")
        if not previous.differs_by_at_most_one(voters):
            self._fail("OneVoterChangeAtATime", f"leader {leader.node_id} changed voters {previous.ids} to "
                                                f"{voters.ids} at offset {offset}")

    def _snapshot_holds_committed_data(self, node: Node, entries: tuple[Entry, ...], how: str,
                                       checked: int = 0) -> None:
        """SnapshotHoldsCommittedData: a snapshot's contents are the committed entries below its end (from
        ``checked`` on), when taken and when installed."""
        for offset in range(checked, len(entries)):
            entry = entries[offset]
            if offset >= len(self.committed):
                self._fail("SnapshotHoldsCommittedData", f"node {node.node_id} {how} a snapshot ending at "
                                                         f"{len(entries)} but only {len(self.committed)} entries "
                                                         f"are committed")
            if self.committed[offset] != entry:
                self._fail("SnapshotHoldsCommittedData", f"node {node.node_id} {how} a snapshot whose entry at offset "
                                                         f"{offset} is {entry}, committed as {self.committed[offset]}")

    def _snapshot_holds_voters(self, node: Node, entries: tuple[Entry, ...], voters: SnapshotVoters,
                               how: str) -> None:
        """SnapshotHoldsVoters: a dynamic quorum's snapshot holds kraft.version 1 and the latest voter set of
        the entries it replaces (else the bootstrap set); a static one's holds no voter records."""
        latest = next((e.data.voters for e in reversed(entries) if isinstance(e.data, VotersRecord)), self.bootstrap)
        expected = SnapshotVoters(1, latest) if self.reconfigure else SnapshotVoters()
        if voters != expected:
            def short(held: SnapshotVoters) -> str:
                return f"kraft.version {held.kraft_version}, voters {held.voters and held.voters.voters}"
            self._fail("SnapshotHoldsVoters", f"node {node.node_id} {how} a snapshot ending at {len(entries)} "
                                              f"holding {short(voters)}, not {short(expected)}")

    def _serves_own_snapshot(self, node: Node, chunk: SnapshotChunk) -> Snapshot:
        """ServesOwnSnapshot: a replica answers FetchSnapshot only from a snapshot it holds; returns it."""
        snapshot = node.disk.snapshot
        if snapshot is None or snapshot.snapshot_id != chunk.snapshot_id:
            self._fail("ServesOwnSnapshot", f"node {node.node_id} answered FetchSnapshot for {chunk.snapshot_id}, "
                                            f"which it does not hold")
        assert snapshot is not None
        return snapshot

    def _downloads_in_order(self, node: Node, action: WriteSnapshotChunk | InstallSnapshot) -> None:
        """DownloadsInOrder: a downloaded snapshot's chunks are written one after the other, and it is
        installed only once whole."""
        partial = node.disk.partial
        if isinstance(action, WriteSnapshotChunk):
            if partial is not None and action.position != len(partial[1]):
                self._fail("DownloadsInOrder", f"node {node.node_id} wrote a chunk of {action.snapshot_id} at "
                                               f"{action.position}, but holds {len(partial[1])} bytes of it")
        elif partial is None or partial[0] != action.snapshot_id or len(partial[1]) != action.size:
            self._fail("DownloadsInOrder", f"node {node.node_id} installed {action.snapshot_id} ({action.size} "
                                           f"bytes) without having downloaded it whole")

    def _leader_never_load_snapshot(self, node: Node, action: InstallSnapshot) -> None:
        """LeaderNeverLoadSnapshot: a leader never replaces its log by a downloaded snapshot."""
        if node.core is not None and node.core.role is Role.LEADER:
            self._fail("LeaderNeverLoadSnapshot", f"leader {node.node_id} installed {action.snapshot_id}")

    def _voter_change_answered_when_done(self, response: AddRaftVoterResponse | RemoveRaftVoterResponse,
                                         request: AddRaftVoterRequest | RemoveRaftVoterRequest, kind: str,
                                         voters: VoterSet | None) -> None:
        """VoterChangeAnsweredWhenDone: a voter change answered NONE (as committed) is in the leader's
        committed voter set."""
        present = voters is not None and voters.node(request.voter_id) is not None
        if voters is None or present != isinstance(request, AddRaftVoterRequest):
            self._fail("VoterChangeAnsweredWhenDone", f"{kind} for {request.voter_id} answered NONE by "
                                                      f"{response.src} but its committed voter set is "
                                                      f"{voters and voters.ids}")

    def _acknowledged_writes_kept(self, logs: dict[int, list[Entry]] | None = None, *, leader: Node | None = None,
                                  offset: int = -1, epoch: int = -1, value: object = None) -> None:
        """AcknowledgedWritesKept: a leader acknowledges a write only if it holds it (as it acknowledges),
        and every acknowledged write is in the log of every replica at its offset (at the end)."""
        if leader is not None:
            held = leader.disk.entry(leader.live, offset)
            if held != Entry(epoch, value):
                self._fail("AcknowledgedWritesKept", f"leader {leader.node_id} acknowledged offset {offset} but "
                                                     f"holds {held}")
            return
        for node in self.nodes.values():
            log, end = (logs or {})[node.node_id], node.live.log_end
            for acknowledged_offset, acknowledged in self.acknowledged.items():
                if acknowledged_offset >= end or log[acknowledged_offset].data != acknowledged:
                    found = log[acknowledged_offset] if acknowledged_offset < end else "nothing"
                    self._fail("AcknowledgedWritesKept", f"acknowledged write {acknowledged!r} at offset "
                                                         f"{acknowledged_offset} is lost on node {node.node_id} "
                                                         f"(it holds {found})")

    def _committed_voter_changes_kept(self, logs: dict[int, list[Entry]]) -> None:
        """CommittedVoterChangesKept: every voter change answered as committed is in every final log."""
        for offset, entry in self.acknowledged_voters.items():
            for node in self.nodes.values():
                if offset >= node.live.log_end or logs[node.node_id][offset] != entry:
                    voters = entry.data.voters.ids if isinstance(entry.data, VotersRecord) else entry.data
                    self._fail("CommittedVoterChangesKept", f"voter change {voters} answered as committed at offset "
                                                            f"{offset} is lost on node {node.node_id}")

    def _check_final(self) -> None:
        """Once healed and caught up: log matching with the leader, then the changes and writes answered."""
        leader = self._leader()
        assert leader is not None  # _commit_probe found one
        self._log_matching(leader)
        logs = {node.node_id: node.disk.full_log(node.live) for node in self.nodes.values()}
        self._committed_voter_changes_kept(logs)
        self._acknowledged_writes_kept(logs)

    # ------------------------------------------------------------------ reporting

    def _record(self, what: str, detail: object = "") -> None:
        """Keep the last events for a failure report; formatted only then, as most runs never need them."""
        self._recent.append((self.now, what, detail))

    def replay_command(self) -> str:
        kafka_timers = " --kafka-timers" if self.timers == Timers.kafka_defaults() else ""
        under_load = " --under-load" if self.faults == Faults.under_load() else ""
        reconfigure = " --reconfigure" if self.reconfigure else ""
        return (f"python -m kraftwire.server.raft.simulation --seed {self.seed} --voters {self.voter_count} "
                f"--observers {self.observer_count} --duration-ms {self.duration_ms}{kafka_timers}{under_load}"
                f"{reconfigure}")

    def _fail(self, invariant: str, problem: str) -> NoReturn:
        assert invariant in INVARIANTS, invariant
        recent = "\n".join(f"{when:>7} ms  {what} {detail}" for when, what, detail in self._recent)
        raise Violation(invariant, self.seed,
                        f"seed {self.seed} ({self.voter_count} voters, {self.observer_count} observers), "
                        f"t={self.now} ms, event {self.events_checked}: {invariant} broken: {problem}\n"
                        f"replay: {self.replay_command()}\nlast events:\n{recent}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Soak the Raft core in a seeded simulation.")
    parser.add_argument("--seed", type=int, help="replay one seed")
    parser.add_argument("--seeds", type=int, default=100, help="run seeds --first .. --first + N - 1")
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--voters", type=int, nargs="+", default=[3, 5])
    parser.add_argument("--observers", type=int, default=1)
    parser.add_argument("--duration-ms", type=int, default=20_000, help="virtual time with faults, per seed")
    parser.add_argument("--kafka-timers", action="store_true", help="Kafka's default timers instead of short ones")
    parser.add_argument("--under-load", action="store_true",
                        help="an overloaded machine (Faults.under_load): long freezes, slow messages, late timers")
    parser.add_argument("--reconfigure", action="store_true",
                        help="dynamic voters: add, remove and update voters while the faults run")
    args = parser.parse_args(argv)
    seeds = [args.seed] if args.seed is not None else range(args.first, args.first + args.seeds)
    timers = Timers.kafka_defaults() if args.kafka_timers else Timers()
    started, runs, events, writes, failures, epochs, voter_changes = time.monotonic(), 0, 0, 0, 0, 0, 0
    faults: Counter[str] = Counter()
    answers: Counter[str] = Counter()
    recoveries: list[int] = []
    for seed in seeds:
        for voters in args.voters:
            simulation = Simulation(seed, voters, args.observers, duration_ms=args.duration_ms, timers=timers,
                                    faults=Faults.under_load() if args.under_load else Faults(),
                                    reconfigure=args.reconfigure)
            try:
                simulation.run()
            except Violation as violation:
                failures += 1
                print(violation, file=sys.stderr)
            runs += 1
            events += simulation.events_checked
            writes += len(simulation.acknowledged)
            epochs += len(simulation.leader_of_epoch)
            faults += simulation.faults_injected
            voter_changes += simulation.voter_changes
            answers += simulation.voter_answers
            if simulation.recovery_ms >= 0:
                recoveries.append(simulation.recovery_ms)
    print(f"{runs} runs ({len(seeds)} seeds × voters {args.voters}, {args.observers} observers, "
          f"{args.duration_ms} virtual ms each): {events} events checked, {writes} acknowledged writes, "
          f"{epochs} elected leaders, faults {dict(faults)}, {failures} failures, {time.monotonic() - started:.1f} s")
    if args.reconfigure:
        print(f"{voter_changes} committed voter changes; answers {dict(sorted(answers.items()))}")
    if recoveries:
        recoveries.sort()
        print(f"healing → first acknowledged write (virtual ms): median {recoveries[len(recoveries) // 2]}, "
              f"p99 {recoveries[len(recoveries) * 99 // 100]}, max {recoveries[-1]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
