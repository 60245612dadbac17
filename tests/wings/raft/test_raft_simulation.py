"""The Raft core (server/raft/core.py): single rules driven message by message, dynamic voters (KIP-853)
too, then whole quorums in the seeded simulation (server/raft/simulation.py) under loss, delay,
partitions, crashes and restarts, with the invariants checked after every event. A failure names the
seed and the command that replays it; ``python -m kraftwire.server.raft.simulation --seeds 1000`` is the
long soak, ``... --reconfigure`` the one with voter changes."""
from __future__ import annotations

import random
import re
import uuid

import pytest

from kraftwire.codec import ErrorCode, records
from kraftwire.server.raft.core import (NO_ID, AddRaftVoterRequest, AddRaftVoterResponse, AppendLog, BeginQuorumEpochRequest,
                                        Commit, EndQuorumEpochRequest, Entry, FetchRequest, FetchResponse,
                                        FetchSnapshotRequest, FetchSnapshotResponse, FlushLog, InstallSnapshot,
                                        NotLeaderError, PersistState, RaftCore, RemoveRaftVoterRequest,
                                        RemoveRaftVoterResponse, RetireLog, Role, Send, SnapshotChunk, SnapshotId,
                                        Timers, TruncateLog, UpdateRaftVoterRequest, UpdateRaftVoterResponse,
                                        VoteRequest, VoteResponse, WriteSnapshotChunk)
from kraftwire.server.raft.simulation import INVARIANTS, Faults, Simulation, Violation
from kraftwire.server.raft.voters import (KRaftVersionRecord, ReplicaKey, SnapshotVoters, VoterNode, VoterSet,
                                          VotersRecord, from_control_record, to_control_record)

TIMERS = Timers()


def sent(actions, message_type) -> list:
    return [a.message for a in actions if isinstance(a, Send) and isinstance(a.message, message_type)]


def core(node_id=1, voters=(1, 2, 3), now=0, **state) -> RaftCore:
    return RaftCore(node_id, voters, random.Random(0), now, timers=TIMERS, **state)


def answer_first_fetch(follower: RaftCore, now: int, **fields) -> list:
    """Answer a restarted follower's first Fetch (its first timer sends it) as its leader would."""
    (fetch,) = sent(fire(follower), FetchRequest)
    answer = dict(error_code=0, high_watermark=0, base_offset=fetch.fetch_offset, records=(), diverging_epoch=None,
                  current_leader=(fetch.dst, follower.epoch)) | fields
    return follower.receive(now, FetchResponse(src=fetch.dst, dst=follower.node_id,
                                               correlation_id=fetch.correlation_id, **answer))


def fire(replica: RaftCore) -> list:
    """Run the replica's next timer."""
    return replica.on_timer(replica.next_deadline())


def elect(leader: RaftCore) -> list:
    """Run ``leader``'s timers (of voters 1-3) until it asks for pre-votes, then grant one pre-vote and one
    vote from a peer; returns the actions of the last step."""
    requests = []
    while not requests:
        now = leader.next_deadline()
        requests = sent(leader.on_timer(now), VoteRequest)
    for pre_vote in (True, False):
        assert {r.pre_vote for r in requests} == {pre_vote}
        actions = leader.receive(now, VoteResponse(src=requests[0].dst, dst=leader.node_id,
                                                   correlation_id=requests[0].correlation_id, error_code=0,
                                                   leader_id=-1, leader_epoch=leader.epoch, vote_granted=True))
        requests = sent(actions, VoteRequest)
    assert leader.role is Role.LEADER
    return actions


def test_a_single_voter_commits_only_what_it_has_fsynced():
    replica = core(voters=(1,))
    actions = fire(replica)
    assert replica.role is Role.LEADER and replica.epoch == 1
    assert actions[0] == PersistState(1, -1, 1)  # the candidate's own vote, before anything else
    assert AppendLog(0, (Entry(1, ("LeaderChange", 1), control=True),)) in actions
    assert not any(isinstance(a, Commit) for a in actions)
    offset, actions = replica.append(5, "write")
    assert offset == 1 and FlushLog(2) in actions and replica.high_watermark == 0
    assert replica.flush_completed(6, 1) == [Commit(1)]
    assert replica.flush_completed(7, 2) == [Commit(2)]


def test_the_leader_commits_on_a_majority_of_fetch_offsets_and_only_its_own_epoch():
    leader = core(log=[Entry(1, "old")], epoch=1, leader_id=2)
    elect(leader)
    assert leader.epoch == 2 and leader.log_end == 2  # "old" plus its LeaderChange at offset 1
    leader.flush_completed(10, 2)
    fetch = dict(dst=1, max_wait_ms=0, current_leader_epoch=2)
    # Voter 2 has "old" only: a majority has offset 1, but that is not past the epoch start, so nothing commits.
    actions = leader.receive(11, FetchRequest(src=2, correlation_id=1, replica_id=2, fetch_offset=1,
                                              last_fetched_epoch=1, **fetch))
    assert leader.high_watermark == 0 and sent(actions, FetchResponse)[0].records == (leader.log[1],)
    actions = leader.receive(12, FetchRequest(src=2, correlation_id=2, replica_id=2, fetch_offset=2,
                                              last_fetched_epoch=2, **fetch))
    assert Commit(2) in actions and sent(actions, FetchResponse)[0].high_watermark == 2
    # An observer's fetch never counts.
    leader.append(13, "w")
    leader.flush_completed(14, 3)
    leader.receive(15, FetchRequest(src=9, correlation_id=1, replica_id=9, fetch_offset=3, last_fetched_epoch=2,
                                    **fetch))
    assert leader.high_watermark == 2


def test_the_leader_answers_a_diverging_fetch_with_the_end_of_the_largest_epoch_not_above_it():
    leader = core(log=[Entry(1, "a"), Entry(1, "b"), Entry(3, "c")], epoch=3, leader_id=2)
    elect(leader)
    actions = leader.receive(1000, FetchRequest(src=2, dst=1, correlation_id=7, replica_id=2, current_leader_epoch=4,
                                                fetch_offset=3, last_fetched_epoch=2, max_wait_ms=50))
    (response,) = sent(actions, FetchResponse)
    assert response.diverging_epoch == (1, 2) and response.records == ()


def test_a_follower_truncates_to_what_both_logs_hold_and_fetches_again():
    follower = core(node_id=2, log=[Entry(1, "a"), Entry(2, "x"), Entry(2, "y")], epoch=3, leader_id=1)
    # The leader never had epoch 2; its epoch 1 ends at offset 5 (past this log's end), this log's at 1.
    actions = answer_first_fetch(follower, 10, high_watermark=1, diverging_epoch=(1, 5))
    assert actions[0] == TruncateLog(1)
    (fetch,) = sent(actions, FetchRequest)
    assert (fetch.fetch_offset, fetch.last_fetched_epoch) == (1, 1)


def test_a_follower_fetches_past_new_entries_only_once_they_are_fsynced():
    follower = core(node_id=2, epoch=1, leader_id=1)
    entries = (Entry(1, ("LeaderChange", 1), control=True), Entry(1, "w"))
    actions = answer_first_fetch(follower, 10, records=entries)
    assert AppendLog(0, entries) in actions and not sent(actions, FetchRequest)
    assert not sent(follower.flush_completed(11, 1), FetchRequest)
    (fetch,) = sent(follower.flush_completed(12, 2), FetchRequest)
    assert fetch.fetch_offset == 2


def test_pre_votes_leave_the_epoch_alone_and_a_follower_of_a_live_leader_refuses_them():
    follower = core(node_id=2, epoch=4, leader_id=1)
    answer_first_fetch(follower, 10)
    pre_vote = VoteRequest(src=3, dst=2, correlation_id=1, replica_epoch=5, replica_id=3, last_offset_epoch=4,
                           last_offset=9, pre_vote=True)
    actions = follower.receive(20, pre_vote)
    assert sent(actions, VoteResponse)[0].vote_granted is False
    assert not any(isinstance(a, PersistState) for a in actions) and follower.epoch == 4
    # Once the leader has been silent for a fetch timeout, the same pre-vote is granted, still without a new epoch.
    actions = follower.receive(20 + TIMERS.fetch_timeout_ms, pre_vote)
    assert sent(actions, VoteResponse)[0].vote_granted is True and follower.epoch == 4


def test_a_vote_goes_only_to_a_log_at_least_as_up_to_date_and_only_once_per_epoch():
    voter = core(node_id=2, log=[Entry(1, "a"), Entry(2, "b")], epoch=2)
    def vote(candidate, last_epoch, last_offset):
        request = VoteRequest(src=candidate, dst=2, correlation_id=1, replica_epoch=3, replica_id=candidate,
                              last_offset_epoch=last_epoch, last_offset=last_offset, pre_vote=False)
        return voter.receive(10, request)
    assert sent(vote(3, 1, 5), VoteResponse)[0].vote_granted is False  # a longer log of an older epoch
    assert voter.epoch == 3 and voter.voted_id == -1
    actions = vote(1, 2, 2)
    answer = next(i for i, a in enumerate(actions) if isinstance(a, Send) and isinstance(a.message, VoteResponse))
    assert actions[answer].message.vote_granted is True
    assert actions.index(PersistState(3, -1, 1)) < answer  # the vote is on disk before it is answered
    assert sent(vote(3, 2, 2), VoteResponse)[0].vote_granted is False
    assert sent(vote(1, 2, 2), VoteResponse)[0].vote_granted is True  # a retry from the same candidate


def test_a_restarted_leader_comes_back_resigned_and_never_votes_again_in_its_epoch():
    replica = core(epoch=7, leader_id=1, voted_id=1)
    assert replica.role is Role.RESIGNED
    actions = replica.receive(1, VoteRequest(src=2, dst=1, correlation_id=1, replica_epoch=7, replica_id=2,
                                             last_offset_epoch=6, last_offset=100, pre_vote=False))
    assert sent(actions, VoteResponse)[0].vote_granted is False


def test_check_quorum_makes_a_leader_without_fetches_resign():
    leader = core()
    elect(leader)
    elected_at = leader.next_deadline() - TIMERS.fetch_timeout_ms // 2
    now = elected_at
    while leader.role is Role.LEADER:
        now = leader.next_deadline()
        actions = leader.on_timer(now)
    assert now - elected_at >= TIMERS.check_quorum_ms
    assert leader.role is Role.RESIGNED
    assert {m.dst for m in sent(actions, EndQuorumEpochRequest)} == {2, 3}
    with pytest.raises(NotLeaderError):
        leader.append(now, "late")


def test_a_resigned_leader_leaves_its_epoch_after_an_election_timeout_as_kafka():
    """While it stayed in its epoch, every Fetch and Vote answer named it the leader, and voters that heard
    one followed it again for a fetch timeout while nobody led."""
    leader = core()
    elect(leader)
    now = leader.next_deadline()
    leader.resign(now)
    epoch = leader.epoch
    actions = []
    while leader.role is Role.RESIGNED:
        actions = fire(leader)
    assert (leader.role, leader.epoch, leader.leader_id, leader.voted_id) == (Role.UNATTACHED, epoch + 1, NO_ID, NO_ID)
    assert PersistState(epoch + 1, NO_ID, NO_ID) in actions
    answer = leader.receive(now, FetchRequest(src=2, dst=1, correlation_id=9, replica_id=2, current_leader_epoch=epoch,
                                              fetch_offset=1, last_fetched_epoch=epoch, max_wait_ms=0))
    assert sent(answer, FetchResponse)[0].current_leader == (NO_ID, epoch + 1)
    while leader.role is Role.UNATTACHED:  # and it campaigns after an election timeout, in the next epoch
        requests = sent(fire(leader), VoteRequest)
    assert leader.role is Role.PROSPECTIVE and {(r.replica_epoch, r.pre_vote) for r in requests} == {(epoch + 2, True)}


def test_a_leader_that_loses_its_role_answers_its_parked_fetches_at_once():
    """As Kafka's fetch purgatory: a long poll is not left to the fetcher's request timeout, which held every
    later answer of that connection (its Vote answers too) behind it."""
    leader = core()
    elect(leader)
    now = leader.next_deadline()
    leader.flush_completed(now, leader.log_end)
    parked = leader.receive(now, FetchRequest(src=2, dst=1, correlation_id=7, replica_id=2,
                                              current_leader_epoch=leader.epoch, fetch_offset=leader.log_end,
                                              last_fetched_epoch=leader.epoch, max_wait_ms=500))
    assert not sent(parked, FetchResponse)
    (answer,) = sent(leader.resign(now), FetchResponse)
    assert (answer.dst, answer.correlation_id, answer.error_code) == (2, 7, ErrorCode.NOT_LEADER_OR_FOLLOWER)


def test_a_new_fetch_from_a_replica_answers_its_earlier_parked_one():
    """The earlier long poll was dropped, and its connection's later answers waited behind it."""
    leader = core()
    elect(leader)
    now = leader.next_deadline()
    leader.flush_completed(now, leader.log_end)
    fetch = dict(src=2, dst=1, replica_id=2, current_leader_epoch=leader.epoch, fetch_offset=leader.log_end,
                 last_fetched_epoch=leader.epoch, max_wait_ms=500)
    assert not sent(leader.receive(now, FetchRequest(correlation_id=7, **fetch)), FetchResponse)
    (answer,) = sent(leader.receive(now + 10, FetchRequest(correlation_id=8, **fetch)), FetchResponse)
    assert (answer.correlation_id, answer.error_code, answer.records) == (7, ErrorCode.NONE, ())
    (answer,) = sent(leader.on_timer(now + 10 + 500), FetchResponse)
    assert answer.correlation_id == 8


def test_a_new_leader_announces_itself_and_fetch_from_an_old_epoch_is_fenced():
    leader = core()
    actions = elect(leader)
    assert {m.dst for m in sent(actions, BeginQuorumEpochRequest)} == {2, 3}
    actions = leader.receive(1000, FetchRequest(src=2, dst=1, correlation_id=3, replica_id=2, current_leader_epoch=0,
                                                fetch_offset=0, last_fetched_epoch=0, max_wait_ms=50))
    (response,) = sent(actions, FetchResponse)
    assert response.error_code == ErrorCode.FENCED_LEADER_EPOCH and response.current_leader == (1, 1)


def test_a_graceful_resignation_names_the_best_replicated_voter_first_and_it_campaigns_at_once():
    leader = core()
    elect(leader)
    now = leader.next_deadline()
    leader.receive(now, FetchRequest(src=3, dst=1, correlation_id=1, replica_id=3, current_leader_epoch=1,
                                     fetch_offset=1, last_fetched_epoch=1, max_wait_ms=0))
    ends = sent(leader.resign(now), EndQuorumEpochRequest)
    assert leader.role is Role.RESIGNED
    assert {m.dst: m.preferred_successors for m in ends} == {2: (3, 2), 3: (3, 2)}
    successor = core(node_id=3, epoch=1, leader_id=1, now=now)
    successor.receive(now, next(m for m in ends if m.dst == 3))
    assert successor.next_deadline() == now
    requests = sent(successor.on_timer(now), VoteRequest)
    assert {(r.dst, r.replica_epoch, r.pre_vote) for r in requests} == {(1, 2, True), (2, 2, True)}


def test_an_observer_finds_the_leader_through_any_voter_and_never_campaigns():
    observer = core(node_id=9)
    (fetch,) = sent(observer.on_timer(0), FetchRequest)
    voter = core(node_id=fetch.dst, epoch=3, leader_id=2)
    (answer,) = sent(voter.receive(1, fetch), FetchResponse)
    assert answer.error_code == ErrorCode.FENCED_LEADER_EPOCH and answer.current_leader == (2, 3)
    (fetch,) = sent(observer.receive(2, answer), FetchRequest)
    assert observer.role is Role.FOLLOWER and (fetch.dst, fetch.current_leader_epoch) == (2, 3)
    votes = []
    while observer.role is Role.FOLLOWER:  # the leader stays silent: the observer looks for another
        votes += sent(observer.on_timer(observer.next_deadline()), VoteRequest)
    assert observer.role is Role.UNATTACHED and not votes
    assert sent(observer.on_timer(observer.next_deadline()), FetchRequest)


SEEDS = (0, 1, 2, 4, 5, 6, 7, 8)  # seeds in which every replica took or installed a snapshot


@pytest.mark.parametrize("voters,observers", [(3, 2), (5, 1)])
@pytest.mark.parametrize("seed", SEEDS)
def test_the_invariants_hold_under_faults(seed, voters, observers):
    simulation = Simulation(seed, voters, observers, duration_ms=15_000).run()
    # The run did real work: writes were acknowledged through several elections and faults of every kind.
    assert len(simulation.acknowledged) > 300
    assert len(simulation.leader_of_epoch) >= 3
    assert set(simulation.faults_injected) >= {"crashes", "partitions", "resignations", "pauses", "snapshots"}
    assert all(node.core.log_start > 0 for node in simulation.nodes.values())  # every log was retired in part


@pytest.mark.parametrize("voters", [3, 5])
@pytest.mark.parametrize("seed", range(6))
def test_a_quorum_on_kafkas_timers_elects_a_leader_soon_after_the_load_stops(seed, voters):
    """Under load (long freezes that fire overdue timers first, messages of up to 2.5 s, answers past the request
    timeout dropped), the invariants hold, and once the load stops a write commits within three fetch timeouts."""
    timers = Timers.kafka_defaults()
    simulation = Simulation(seed, voters, 1, duration_ms=30_000, faults=Faults.under_load(), timers=timers).run()
    assert 0 <= simulation.recovery_ms <= 3 * timers.fetch_timeout_ms
    assert len(simulation.leader_of_epoch) >= 2 and len(simulation.acknowledged) > 20
    assert {"pauses", "slow messages", "answers past the request timeout"} <= set(simulation.faults_injected)


def test_lagging_replicas_catch_up_by_installing_the_leaders_snapshot():
    """A seed of the test above in which replicas fell behind the leader's log start and downloaded its snapshot."""
    assert Simulation(4, 3, 2, duration_ms=15_000).run().faults_injected["snapshot installs"] >= 2


@pytest.mark.parametrize("reconfigure", [False, True])
def test_a_seed_replays_exactly(reconfigure):
    def run(seed):
        simulation = Simulation(seed, 3, 1, duration_ms=5_000, reconfigure=reconfigure).run()
        return simulation.events_checked, simulation.acknowledged, simulation.leader_of_epoch, simulation.committed
    assert run(11) == run(11) != run(12)


class CountsUnsyncedEntries(RaftCore):
    """A leader that counts its log end before it is fsync'd."""

    def _maybe_advance_high_watermark(self, now):
        self._progress[self.node_id].end_offset = self.log_end
        super()._maybe_advance_high_watermark(now)


class VotesWithoutComparingLogs(RaftCore):
    """A voter that grants votes to any log."""

    def _log_is_at_least(self, last_epoch, last_offset):
        return True


class IndexesTheLogFromOffsetZero(RaftCore):
    """A leader that serves a Fetch as if its log still started at offset 0 after a snapshot retired its start."""

    def _answer_fetch(self, now, request):
        self._reply_fetch(request, ErrorCode.NONE, records=tuple(
            self.log[request.fetch_offset:request.fetch_offset + self.timers.fetch_max_entries]))


LOST_COMMITTED_ENTRY = ("committed entry at offset", "below its high watermark", "differs from leader", "is lost")


@pytest.mark.parametrize("broken_core,invariants", [
    (CountsUnsyncedEntries, ("fsync'd",)),
    (VotesWithoutComparingLogs, LOST_COMMITTED_ENTRY),
    (IndexesTheLogFromOffsetZero, LOST_COMMITTED_ENTRY + ("high watermark",)),
])
def test_the_checker_catches_a_broken_core_and_names_the_replay(broken_core, invariants):
    """Which seed exposes the bug, and which safety invariant trips first, depend on the schedule: any of
    the first ten seeds, and any invariant the bug breaks, will do."""
    for seed in range(10):
        try:
            Simulation(seed, 3, 1, duration_ms=15_000, core_class=broken_core).run()
        except Violation as violation:
            problem = str(violation).splitlines()[0]
            assert any(invariant in problem for invariant in invariants), problem
            assert f"replay: python -m kraftwire.server.raft.simulation --seed {seed} --voters 3" in str(violation)
            return
    pytest.fail(f"{broken_core.__name__} went unnoticed in ten seeds")


def test_a_violation_names_its_invariant_and_seed():
    """A leader that counts its unsynced log end breaks MajorityReachedHighWatermark (named as Kafka's
    RaftEventSimulationTest names it); the violation carries the name and the seed, and says both."""
    for seed in range(10):
        try:
            Simulation(seed, 3, 1, duration_ms=15_000, core_class=CountsUnsyncedEntries).run()
        except Violation as violation:
            assert (violation.invariant, violation.seed) == ("MajorityReachedHighWatermark", seed)
            assert str(violation).startswith(f"seed {seed} ")
            assert "MajorityReachedHighWatermark broken: " in str(violation).splitlines()[0]
            return
    pytest.fail("CountsUnsyncedEntries went unnoticed in ten seeds")


def test_every_invariant_has_its_own_check():
    """Each named invariant is checked by the method named after it (MonotonicEpoch: _monotonic_epoch)."""
    for name in INVARIANTS:
        method = "_" + re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
        assert callable(getattr(Simulation, method, None)), name
    assert {"SingleLeader", "MonotonicEpoch", "MonotonicHighWatermark", "MajorityReachedHighWatermark",
            "ConsistentCommittedData", "SnapshotAtLogStart", "LeaderNeverLoadSnapshot"} <= set(INVARIANTS)


# --- snapshots (KIP-630)

def snapshotted_leader(entries=5) -> RaftCore:
    """Leader 1 of voters 1-3 in epoch 2 whose log (LeaderChange of epoch 2 at offset ``entries``) is committed
    by voter 2 and snapshotted to its end: its log start is there, and the snapshot is 1000 bytes."""
    leader = core(log=[Entry(1, f"w{i}") for i in range(entries)], epoch=1, leader_id=2)
    elect(leader)
    leader.flush_completed(1000, leader.log_end)
    leader.receive(1000, FetchRequest(src=2, dst=1, correlation_id=1, replica_id=2, current_leader_epoch=2,
                                      fetch_offset=leader.log_end, last_fetched_epoch=2, max_wait_ms=0))
    assert leader.high_watermark == leader.log_end == entries + 1
    assert leader.snapshot_taken(1000, entries + 1, 1000) == [RetireLog(entries + 1)]
    assert (leader.log_start, leader.log, leader.snapshot) == (entries + 1, [], SnapshotId(entries + 1, 2))
    return leader


def test_a_snapshot_may_only_hold_committed_entries():
    leader = core(log=[Entry(1, "w")], epoch=1, leader_id=2)
    elect(leader)
    with pytest.raises(ValueError, match="high watermark"):
        leader.snapshot_taken(1000, 1, 100)


def test_a_fetch_below_the_log_start_or_diverging_below_it_is_pointed_at_the_snapshot():
    leader = snapshotted_leader()
    for offset, epoch in ((0, 0), (3, 1), (6, 1)):  # behind; behind; diverging below the log start
        actions = leader.receive(1001, FetchRequest(src=3, dst=1, correlation_id=2, replica_id=3,
                                                    current_leader_epoch=2, fetch_offset=offset,
                                                    last_fetched_epoch=epoch, max_wait_ms=0))
        (response,) = sent(actions, FetchResponse)
        assert response.snapshot_id == SnapshotId(6, 2) and response.records == () and response.error_code == 0
    # At the snapshot's end, with its epoch, the fetcher is where the log starts: nothing to download.
    actions = leader.receive(1002, FetchRequest(src=2, dst=1, correlation_id=3, replica_id=2, current_leader_epoch=2,
                                                fetch_offset=6, last_fetched_epoch=2, max_wait_ms=0))
    (response,) = sent(actions, FetchResponse)
    assert response.snapshot_id is None and response.diverging_epoch is None


def test_fetch_snapshot_answers_chunks_and_kafkas_codes():
    leader = snapshotted_leader()

    def ask(snapshot_id=SnapshotId(6, 2), position=0, epoch=2, max_bytes=400):
        actions = leader.receive(1001, FetchSnapshotRequest(src=3, dst=1, correlation_id=9, replica_id=3,
                                                            current_leader_epoch=epoch, snapshot_id=snapshot_id,
                                                            position=position, max_bytes=max_bytes))
        (response,) = sent(actions, FetchSnapshotResponse)
        return response

    response = ask(position=800)
    assert (response.error_code, response.size, response.position) == (0, 1000, 800)
    assert response.unaligned_records == SnapshotChunk(SnapshotId(6, 2), 800, 200)  # the driver reads these bytes
    assert ask(snapshot_id=SnapshotId(5, 1)).error_code == ErrorCode.SNAPSHOT_NOT_FOUND
    assert ask(position=1000).error_code == ErrorCode.POSITION_OUT_OF_RANGE
    assert ask(position=-1).error_code == ErrorCode.POSITION_OUT_OF_RANGE
    assert ask(epoch=1).error_code == ErrorCode.FENCED_LEADER_EPOCH
    assert ask(epoch=3).error_code == ErrorCode.UNKNOWN_LEADER_EPOCH
    follower = core(node_id=1, epoch=2, leader_id=2, snapshot=(SnapshotId(6, 2), 1000))
    leader = follower
    assert ask().error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER


def test_a_follower_downloads_the_snapshot_installs_it_and_fetches_from_its_end():
    follower = core(node_id=3, log=[Entry(1, "w0"), Entry(1, "stale")], epoch=2, leader_id=1)
    actions = answer_first_fetch(follower, 10, high_watermark=8, snapshot_id=SnapshotId(6, 2))
    (ask,) = sent(actions, FetchSnapshotRequest)
    assert (ask.snapshot_id, ask.position, ask.max_bytes) == (SnapshotId(6, 2), 0, TIMERS.snapshot_chunk_bytes)
    data = bytes(range(256)) * 5
    position = 0
    while True:
        chunk = data[position:position + 600]
        actions = follower.receive(20 + position, FetchSnapshotResponse(
            src=1, dst=3, correlation_id=ask.correlation_id, error_code=0, snapshot_id=SnapshotId(6, 2),
            size=len(data), position=position, unaligned_records=chunk, current_leader=(1, 2)))
        assert actions[0] == WriteSnapshotChunk(SnapshotId(6, 2), position, chunk)
        position += len(chunk)
        if position == len(data):
            break
        (ask,) = sent(actions, FetchSnapshotRequest)
        assert ask.position == position
    assert actions[1:3] == [InstallSnapshot(SnapshotId(6, 2), len(data)), Commit(6)]
    assert (follower.log_start, follower.log_end, follower.high_watermark, follower.log) == (6, 6, 6, [])
    (fetch,) = sent(actions, FetchRequest)
    assert (fetch.fetch_offset, fetch.last_fetched_epoch) == (6, 2)


def test_a_follower_asks_again_when_the_leader_no_longer_has_the_snapshot():
    follower = core(node_id=3, epoch=2, leader_id=1)
    (ask,) = sent(answer_first_fetch(follower, 10, snapshot_id=SnapshotId(6, 2)), FetchSnapshotRequest)
    follower.receive(11, FetchSnapshotResponse(src=1, dst=3, correlation_id=ask.correlation_id,
                                               error_code=int(ErrorCode.SNAPSHOT_NOT_FOUND), snapshot_id=ask.snapshot_id,
                                               size=0, position=0, unaligned_records=b"", current_leader=(1, 2)))
    (fetch,) = sent(fire(follower), FetchRequest)  # a Fetch again, which names the leader's newer snapshot
    assert fetch.fetch_offset == 0


def test_a_restart_starts_the_log_at_the_snapshots_end():
    replica = core(node_id=2, log=[Entry(3, "w")], epoch=3, snapshot=(SnapshotId(10, 2), 500))
    assert (replica.log_start, replica.log_end, replica.high_watermark, replica.last_epoch) == (10, 11, 10, 3)
    assert replica.entry(10) == Entry(3, "w") and replica.end_offset_for_epoch(2) == (2, 10)
    assert replica.end_offset_for_epoch(1) == (0, 0)


# --- dynamic voters (KIP-853)

DIRECTORIES = {i: uuid.UUID(int=i) for i in range(1, 10)}


def listeners(node_id: int, port: int = 9093) -> tuple:
    return (("CONTROLLER", f"controller-{node_id}", port),)


def dynamic_voters(*ids) -> VoterSet:
    return VoterSet(tuple(VoterNode(ReplicaKey(i, DIRECTORIES[i]), listeners(i)) for i in ids))


def fetch_from(leader: RaftCore, now: int, replica: int, offset: int | None = None) -> list:
    """A Fetch by ``replica`` at ``offset`` (default: the leader's log end), as a caught-up replica sends it."""
    offset = leader.log_end if offset is None else offset
    return leader.receive(now, FetchRequest(
        src=replica, dst=leader.node_id, correlation_id=now, replica_id=replica, current_leader_epoch=leader.epoch,
        fetch_offset=offset, last_fetched_epoch=leader.log[offset - 1].epoch if offset else 0, max_wait_ms=0,
        replica_directory_id=DIRECTORIES[replica]))


def committed_leader(voters=dynamic_voters(1, 2, 3), kraft_version=1) -> tuple[RaftCore, int]:
    """Leader 1, elected and with its epoch's first entries committed by voter 2's Fetch."""
    leader = core(voters=voters, kraft_version=kraft_version, directory_id=DIRECTORIES[1])
    elect(leader)
    now = leader.next_deadline()
    leader.flush_completed(now, leader.log_end)
    fetch_from(leader, now, 2)
    assert leader.high_watermark == leader.log_end
    return leader, now


def change(leader: RaftCore, now: int, request_type, **fields) -> tuple[list, list]:
    """Hand a voter change to ``leader``: (its actions, the answers among them)."""
    actions = leader.receive(now, request_type(src=0, dst=leader.node_id, correlation_id=now, **fields))
    answers = [m for m in sent(actions, object) if m.dst == 0]
    return actions, answers


def add(leader: RaftCore, now: int, voter: int, **fields) -> tuple[list, list]:
    return change(leader, now, AddRaftVoterRequest, **({"timeout_ms": 1000, "voter_id": voter,
                                                         "voter_directory_id": DIRECTORIES[voter],
                                                         "listeners": listeners(voter)} | fields))


def answer_code(answers) -> ErrorCode:
    (answer,) = answers
    return ErrorCode(answer.error_code)


def test_a_dynamic_quorums_first_leader_writes_the_bootstrap_voters_into_its_epochs_first_batch():
    leader = core(voters=dynamic_voters(1, 2, 3), kraft_version=1, directory_id=DIRECTORIES[1])
    actions = elect(leader)
    (append,) = [a for a in actions if isinstance(a, AppendLog)]
    assert [e.data for e in append.entries] == [("LeaderChange", 1), KRaftVersionRecord(1),
                                                VotersRecord(dynamic_voters(1, 2, 3))]
    assert all(e.control for e in append.entries)


def test_voter_entries_go_to_the_logs_control_records_and_back():
    voters = VotersRecord(VoterSet(dynamic_voters(1, 2).voters + (VoterNode(ReplicaKey(3)),)))
    for data, control_type in ((voters, 6), (KRaftVersionRecord(1), 5)):
        record = to_control_record(data)
        assert record.SPEC.control_record_type == control_type
        assert from_control_record(records.decode_control(records.control_key(record), record.encode(0))) == data
    assert to_control_record(voters).voters[2].voter_directory_id == uuid.UUID(int=0)  # unknown: ZERO_UUID


def test_add_raft_voter_answers_kafkas_codes_and_only_once_the_new_set_commits():
    follower = core(node_id=2, voters=dynamic_voters(1, 2, 3), kraft_version=1, epoch=1, leader_id=1)
    assert answer_code(add(follower, 0, 4)[1]) == ErrorCode.NOT_LEADER_OR_FOLLOWER
    static, now = committed_leader(voters=VoterSet.static((1, 2, 3)), kraft_version=0)
    assert answer_code(add(static, now, 4)[1]) == ErrorCode.UNSUPPORTED_VERSION
    fresh = core(voters=dynamic_voters(1, 2, 3), kraft_version=1, directory_id=DIRECTORIES[1])
    elect(fresh)
    assert answer_code(add(fresh, fresh.next_deadline(), 4)[1]) == ErrorCode.REQUEST_TIMED_OUT  # epoch uncommitted

    leader, now = committed_leader()
    assert answer_code(add(leader, now, 4, voter_directory_id=None)[1]) == ErrorCode.INVALID_REQUEST
    assert answer_code(add(leader, now, 4, listeners=(("PLAINTEXT", "h", 9092),))[1]) == ErrorCode.INVALID_REQUEST
    assert answer_code(add(leader, now, 2)[1]) == ErrorCode.DUPLICATE_VOTER
    assert answer_code(add(leader, now, 4)[1]) == ErrorCode.REQUEST_TIMED_OUT  # never fetched
    fetch_from(leader, now, 4, offset=1)
    assert answer_code(add(leader, now, 4)[1]) == ErrorCode.REQUEST_TIMED_OUT  # behind the high watermark
    fetch_from(leader, now, 4)
    actions, answers = add(leader, now, 4)
    (append,) = [a for a in actions if isinstance(a, AppendLog)]
    assert append.entries == (Entry(1, VotersRecord(dynamic_voters(1, 2, 3, 4)), control=True),) and not answers
    assert leader.voters == (1, 2, 3, 4)  # the latest set counts at once, committed or not
    assert answer_code(add(leader, now, 5)[1]) == ErrorCode.REQUEST_TIMED_OUT  # one change at a time
    leader.flush_completed(now, leader.log_end)
    fetch_from(leader, now, 2)
    assert leader.high_watermark < leader.log_end  # 2 of 4 voters are no majority
    actions = fetch_from(leader, now, 4)
    assert Commit(leader.log_end) in actions
    assert [(type(m), m.error_code) for m in sent(actions, object) if m.dst == 0] == [(AddRaftVoterResponse, 0)]


def test_a_removed_leader_leads_until_its_removal_commits_then_resigns_and_only_observes():
    leader, now = committed_leader()
    epoch = leader.epoch
    remove = dict(voter_id=1, voter_directory_id=DIRECTORIES[1])
    assert answer_code(change(leader, now, RemoveRaftVoterRequest, voter_id=5,
                              voter_directory_id=DIRECTORIES[5])[1]) == ErrorCode.VOTER_NOT_FOUND
    assert answer_code(change(leader, now, RemoveRaftVoterRequest, voter_id=1,
                              voter_directory_id=DIRECTORIES[7])[1]) == ErrorCode.VOTER_NOT_FOUND  # another disk
    _, answers = change(leader, now, RemoveRaftVoterRequest, **remove)
    assert not answers and leader.voters == (2, 3) and leader.role is Role.LEADER
    leader.append(now, "still taking writes")
    leader.flush_completed(now, leader.log_end)
    fetch_from(leader, now, 2)
    assert leader.high_watermark < leader.log_end  # its own log no longer counts: 2 and 3 must both have it
    actions = fetch_from(leader, now, 3)
    assert [(type(m), m.error_code) for m in sent(actions, object) if m.dst == 0] == [(RemoveRaftVoterResponse, 0)]
    assert leader.role is Role.LEADER and leader.next_deadline() == now  # resigns on its next timer
    actions = fire(leader)
    assert leader.role is Role.RESIGNED and {m.dst for m in sent(actions, EndQuorumEpochRequest)} == {2, 3}
    requests = []
    while leader.role is not Role.FOLLOWER and len(requests) < 3:
        requests += sent(fire(leader), (VoteRequest, FetchRequest))
    assert requests and all(isinstance(r, FetchRequest) and r.dst in (2, 3) for r in requests)
    # As Kafka's resigned replica, it leaves its epoch: its answers no longer name it the leader.
    assert leader.role is Role.UNATTACHED and leader.epoch == epoch + 1 and leader.voted_id == NO_ID


def test_update_raft_voter_is_answered_at_append_and_checks_epoch_range_and_voter():
    leader, now = committed_leader()
    update = dict(current_leader_epoch=1, voter_id=2, voter_directory_id=DIRECTORIES[2],
                  listeners=listeners(2, 19093), kraft_versions=(0, 1))
    for wrong, code in (({"current_leader_epoch": 0}, ErrorCode.FENCED_LEADER_EPOCH),
                        ({"current_leader_epoch": 2}, ErrorCode.UNKNOWN_LEADER_EPOCH),
                        ({"kraft_versions": (1, 0)}, ErrorCode.INVALID_REQUEST),
                        ({"kraft_versions": (0, 0)}, ErrorCode.INVALID_REQUEST),   # excludes kraft.version 1
                        ({"voter_id": 4, "voter_directory_id": DIRECTORIES[4]}, ErrorCode.VOTER_NOT_FOUND)):
        assert answer_code(change(leader, now, UpdateRaftVoterRequest, **(update | wrong))[1]) == code
    _, answers = change(leader, now, UpdateRaftVoterRequest, **update)
    assert [(type(m), m.error_code, m.current_leader) for m in answers] == [(UpdateRaftVoterResponse, 0, (1, 1))]
    assert leader.voter_set.node(2).listeners == listeners(2, 19093)
    assert answer_code(change(leader, now, UpdateRaftVoterRequest, **update)[1]) == ErrorCode.REQUEST_TIMED_OUT


def test_a_dynamic_quorums_snapshot_holds_the_voter_set_in_force_at_its_end_and_a_restart_counts_it():
    leader, now = committed_leader()
    fetch_from(leader, now, 4)
    fetch_from(leader, now, 4)  # a caught-up observer
    add(leader, now, 4)
    leader.flush_completed(now, leader.log_end)
    fetch_from(leader, now, 2)
    fetch_from(leader, now, 4)
    assert leader.high_watermark == leader.log_end and leader.voters == (1, 2, 3, 4)
    added_at = leader.log_end - 1
    # A snapshot ending before the VotersRecord holds the bootstrap set, one past it the new set; static: none.
    assert leader.voters_at(added_at) == SnapshotVoters(1, dynamic_voters(1, 2, 3))
    assert leader.voters_at(added_at + 1) == SnapshotVoters(1, dynamic_voters(1, 2, 3, 4))
    assert committed_leader(VoterSet.static((1, 2, 3)), 0)[0].voters_at(1) == SnapshotVoters()
    assert leader.snapshot_taken(now, leader.log_end, 100) == [RetireLog(added_at + 1)]  # kraft.version 1 retires too
    assert leader.log == [] and leader.voters == (1, 2, 3, 4)
    # A replica that starts from that snapshot knows the set without the log below it, whatever its bootstrap set.
    restarted = core(node_id=2, voters=dynamic_voters(1, 2, 3), kraft_version=0, directory_id=DIRECTORIES[2],
                     snapshot=(SnapshotId(added_at + 1, 1), 100),
                     snapshot_voters=SnapshotVoters(1, dynamic_voters(1, 2, 3, 4)))
    assert (restarted.voters, restarted.kraft_version, restarted.log_start) == ((1, 2, 3, 4), 1, added_at + 1)
    # A leader started from a snapshot does not write its bootstrap set: the snapshot's is in the log already.
    voter = core(voters=dynamic_voters(1, 2, 3), kraft_version=1, directory_id=DIRECTORIES[1],
                 snapshot=(SnapshotId(added_at, 1), 100), snapshot_voters=SnapshotVoters(1, dynamic_voters(1, 2, 3)))
    elect(voter)
    assert [e.data for e in voter.log] == [("LeaderChange", 1)]


def test_the_latest_voter_set_in_the_log_counts_and_truncation_brings_back_the_earlier_one():
    log = [Entry(1, ("LeaderChange", 1), control=True), Entry(1, KRaftVersionRecord(1), control=True),
           Entry(1, VotersRecord(dynamic_voters(1, 2, 3)), control=True),
           Entry(2, VotersRecord(dynamic_voters(1, 2, 3, 4)), control=True)]
    new_voter = core(node_id=4, voters=dynamic_voters(1, 2, 3), kraft_version=1, directory_id=DIRECTORIES[4], log=log)
    assert new_voter.is_voter and new_voter.voters == (1, 2, 3, 4)  # uncommitted, but the latest
    other_disk = core(node_id=4, voters=dynamic_voters(1, 2, 3), kraft_version=1, directory_id=DIRECTORIES[8], log=log)
    assert not other_disk.is_voter
    follower = core(node_id=2, voters=dynamic_voters(1, 2, 3), kraft_version=1, directory_id=DIRECTORIES[2],
                    log=log, epoch=3, leader_id=1)
    actions = answer_first_fetch(follower, 10, diverging_epoch=(1, 3))  # the leader never had epoch 2
    assert actions[0] == TruncateLog(3) and follower.voters == (1, 2, 3)


@pytest.mark.parametrize("voters,observers", [(3, 2), (5, 1)])
@pytest.mark.parametrize("seed", range(4))
def test_the_invariants_hold_while_voters_are_added_removed_and_updated(seed, voters, observers):
    simulation = Simulation(seed, voters, observers, duration_ms=15_000, reconfigure=True).run()
    assert len(simulation.acknowledged) > 200 and len(simulation.leader_of_epoch) >= 3
    assert simulation.voter_changes >= 5
    assert {"AddRaftVoter NONE", "RemoveRaftVoter NONE", "UpdateRaftVoter NONE"} <= set(simulation.voter_answers)
    # Snapshots hold the voter set, so a dynamic quorum retires its log as a static one does.
    assert simulation.faults_injected["snapshots"] >= 10
    assert all(node.core.log_start > 0 for node in simulation.nodes.values())


def test_replicas_of_a_dynamic_quorum_learn_the_voters_from_an_installed_snapshot():
    """A seed in which replicas fell behind the leader's log start while voters changed: each installed
    snapshot's voter records were checked against the committed log, and the replica's set after it too."""
    simulation = Simulation(0, 3, 2, duration_ms=15_000, reconfigure=True).run()
    assert simulation.faults_injected["snapshot installs"] >= 2 and simulation.voter_changes >= 5


def test_the_simulation_removes_leaders_and_keeps_every_committed_voter_change():
    simulation = Simulation(5, 3, 2, duration_ms=15_000, reconfigure=True).run()
    assert simulation.voter_answers["RemoveRaftVoter of the leader itself, committed"] >= 1
    assert simulation.acknowledged_voters  # each checked against every final log by the run


class AllowsTwoVoterChangesInFlight(RaftCore):
    """A leader that appends a voter change while the previous one is uncommitted."""

    def _change_not_allowed_yet(self):
        return self.high_watermark <= self._epoch_start_offset and (ErrorCode.REQUEST_TIMED_OUT, "epoch uncommitted")

    def _uncommitted_voters_error(self):
        return None


class CountsTheCommittedVoterSet(RaftCore):
    """Majorities (commits, elections, check-quorum) of the committed voter set instead of the latest."""

    @property
    def voters(self):
        return self._history.in_force_at(self.high_watermark).ids


class KeepsTruncatedVoterSets(RaftCore):
    """A truncation that leaves the voter set of the truncated entries in force."""

    def _truncate_local(self, offset):
        history, self._history.truncated = self._history.truncated, lambda offset: None
        try:
            super()._truncate_local(offset)
        finally:
            self._history.truncated = history


class IgnoresAnInstalledSnapshotsVoters(RaftCore):
    """A replica that keeps the voter set of its own log when a downloaded snapshot replaces it."""

    def installed_snapshot_voters(self, voters):
        pass


class SnapshotsTheLatestVoterSet(RaftCore):
    """Snapshots that hold the latest voter set, uncommitted or past their end, instead of the one in force there."""

    def voters_at(self, end_offset):
        return SnapshotVoters(self.kraft_version, self.voter_set)


@pytest.mark.parametrize("broken_core,invariant", [
    (AllowsTwoVoterChangesInFlight, "two changes in flight"),
    (CountsTheCommittedVoterSet, "fsync'd"),
    (KeepsTruncatedVoterSets, "the latest VotersRecord in its log"),
    (IgnoresAnInstalledSnapshotsVoters, "the latest VotersRecord in its log"),
    (SnapshotsTheLatestVoterSet, "a snapshot ending at"),
])
def test_the_checker_catches_a_broken_voter_change(broken_core, invariant):
    for seed in range(10):
        try:
            Simulation(seed, 3, 2, duration_ms=15_000, core_class=broken_core, reconfigure=True).run()
        except Violation as violation:
            assert invariant in str(violation).splitlines()[0], str(violation).splitlines()[0]
            assert f"--seed {seed} --voters 3 --observers 2 --duration-ms 15000 --reconfigure" in str(violation)
            return
    pytest.fail(f"{broken_core.__name__} went unnoticed in ten seeds")


def test_a_replica_its_own_log_does_not_list_still_votes():
    """Voter 4 was just added, but its log ends before the VotersRecord that adds it; the new majority
    (3 of 1-4) may need its vote, so it grants one to a candidate whose log is at least as long."""
    new_voter = core(node_id=4, voters=dynamic_voters(1, 2, 3), kraft_version=1, directory_id=DIRECTORIES[4], epoch=2)
    assert not new_voter.is_voter
    request = VoteRequest(src=2, dst=4, correlation_id=1, replica_epoch=3, replica_id=2, last_offset_epoch=2,
                          last_offset=5, pre_vote=False)
    actions = new_voter.receive(10, request)
    assert sent(actions, VoteResponse)[0].vote_granted is True and PersistState(3, -1, 2) in actions


def test_an_observer_that_knows_no_voter_asks_the_bootstrap_servers_for_the_leader():
    """A ``--no-initial-controllers`` controller: no voter set yet, so its discovery goes to the
    bootstrap servers' ids (Kafka's -2, -3, ...), in turn, and the answer naming the leader is followed."""
    observer = core(node_id=4, voters=VoterSet(()), kraft_version=1, directory_id=DIRECTORIES[4], bootstrap=(-2, -3))
    asked = [sent(fire(observer), FetchRequest)[0].dst for _ in range(3)]
    assert asked == [-2, -3, -2] and observer.role is Role.UNATTACHED
    (fetch,) = sent(fire(observer), FetchRequest)
    actions = observer.receive(1000, FetchResponse(
        src=fetch.dst, dst=4, correlation_id=fetch.correlation_id, error_code=int(ErrorCode.NOT_LEADER_OR_FOLLOWER),
        high_watermark=0, base_offset=0, records=(), diverging_epoch=None, current_leader=(1, 3)))
    assert (observer.role, observer.leader_id, observer.epoch) == (Role.FOLLOWER, 1, 3)
    assert [f.dst for f in sent(actions, FetchRequest)] == [1]
    lonely = core(node_id=5, voters=VoterSet(()), kraft_version=1)  # nobody to ask: it waits and asks again
    assert sent(fire(lonely), FetchRequest) == [] and lonely.next_deadline() is not None
