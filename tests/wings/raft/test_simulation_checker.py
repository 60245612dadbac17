"""The simulation's checker itself, rule by rule: each invariant's check is handed a state that breaks it
just past its boundary (it must raise a ``Violation`` naming that invariant) and the state at the boundary
(it must not). A checker rule weakened, inverted or made off by one fails here, not only in the rare run
whose schedule would reach it."""
from __future__ import annotations

from collections.abc import Callable

import pytest

from kraftwire.server.raft.core import (NO_ID, AppendLog, Entry, InstallSnapshot, PersistState, Role, SnapshotChunk,
                                        SnapshotId, WriteSnapshotChunk)
from kraftwire.server.raft.simulation import INVARIANTS, Simulation, Snapshot, Violation
from kraftwire.server.raft.voters import SnapshotVoters, VoterSet, VotersRecord


def simulation() -> Simulation:
    """Three voters and an observer, booted, no event run."""
    return Simulation(7, 3, 1, duration_ms=1_000)


def breaks(invariant: str, check: Callable[[], object]) -> None:
    assert invariant in INVARIANTS
    with pytest.raises(Violation) as raised:
        check()
    assert raised.value.invariant == invariant, str(raised.value).splitlines()[0]
    assert f"{invariant} broken: " in str(raised.value).splitlines()[0]


def holds(check: Callable[[], object]) -> None:
    check()  # raises Violation if the rule is too strict


def test_single_leader_across_replicas_and_quorum_states():
    sim = simulation()
    holds(lambda: sim._one_leader(3, 1, "node 1"))
    holds(lambda: sim._one_leader(3, 1, "quorum-state of node 1"))
    holds(lambda: sim._one_leader(4, 2, "node 2"))  # another epoch, another leader
    breaks("SingleLeader", lambda: sim._one_leader(3, 2, "node 2"))
    sim = simulation()
    sim.nodes[1].disk.quorum_state = PersistState(5, 1, 1)
    sim.nodes[2].disk.quorum_state = PersistState(5, 2, 2)
    holds(lambda: sim._single_leader(sim.nodes[1], {}))
    breaks("SingleLeader", lambda: sim._single_leader(sim.nodes[2], {}))


def test_monotonic_epoch_as_persisted_and_as_run():
    sim = simulation()
    node = sim.nodes[1]
    node.disk.quorum_state = PersistState(4, NO_ID, NO_ID)
    holds(lambda: sim._monotonic_epoch(node, persisting=PersistState(4, NO_ID, 2)))
    breaks("MonotonicEpoch", lambda: sim._monotonic_epoch(node, persisting=PersistState(3, NO_ID, NO_ID)))
    node.live.epoch = 4
    holds(lambda: sim._monotonic_epoch(node, node.live))
    node.live.epoch = 5
    breaks("MonotonicEpoch", lambda: sim._monotonic_epoch(node, node.live))


def test_monotonic_high_watermark_and_within_the_log():
    sim = simulation()
    node, core = sim.nodes[1], sim.nodes[1].live
    core.log = [Entry(1, "a"), Entry(1, "b")]
    core.high_watermark = node.last_high_watermark = 1
    holds(lambda: sim._monotonic_high_watermark(node, core))
    core.high_watermark = 0
    breaks("MonotonicHighWatermark", lambda: sim._monotonic_high_watermark(node, core))
    core.high_watermark = core.log_end
    holds(lambda: sim._high_watermark_within_log(node, core))
    core.high_watermark = core.log_end + 1
    breaks("HighWatermarkWithinLog", lambda: sim._high_watermark_within_log(node, core))


def test_snapshot_at_log_start_when_retiring_and_after_every_event():
    sim = simulation()
    node = sim.nodes[1]
    breaks("SnapshotAtLogStart", lambda: sim._snapshot_at_log_start(node, retiring=2))
    node.disk.snapshot = Snapshot(SnapshotId(2, 1), b"", SnapshotVoters(), (Entry(1, "a"), Entry(1, "b")))
    holds(lambda: sim._snapshot_at_log_start(node, retiring=2))
    breaks("SnapshotAtLogStart", lambda: sim._snapshot_at_log_start(node, retiring=1))
    holds(lambda: sim._snapshot_at_log_start(node, node.live))
    node.disk.start = 2
    breaks("SnapshotAtLogStart", lambda: sim._snapshot_at_log_start(node, node.live))


def test_consistent_committed_data_as_truncated_and_as_committed():
    sim = simulation()
    node, core = sim.nodes[1], sim.nodes[1].live
    node.last_high_watermark = 2
    holds(lambda: sim._consistent_committed_data(node, truncating=2))
    breaks("ConsistentCommittedData", lambda: sim._consistent_committed_data(node, truncating=1))
    node.last_high_watermark = 0
    core.log = [Entry(1, "a"), Entry(1, "b")]
    core.high_watermark = 2
    holds(lambda: sim._consistent_committed_data(node, core))  # first commits of offsets 0 and 1
    assert sim.committed == [Entry(1, "a"), Entry(1, "b")]
    other = sim.nodes[2]
    other.live.log = [Entry(1, "a"), Entry(2, "b")]
    other.live.high_watermark = 1
    holds(lambda: sim._consistent_committed_data(other, other.live))  # offset 1 is not below its high watermark
    other.live.high_watermark = 2
    breaks("ConsistentCommittedData", lambda: sim._consistent_committed_data(other, other.live))


def test_majority_reached_high_watermark_counts_only_fsynced_voters():
    sim = simulation()
    leader, core = sim.nodes[1], sim.nodes[1].live
    core.log = [Entry(1, "a"), Entry(1, "b"), Entry(1, "c")]
    core.role, core.high_watermark = Role.LEADER, 3
    voters = VoterSet.static((1, 2, 3))
    sim.nodes[1].disk.synced = 3
    sim.nodes[2].disk.synced = 2
    sim.nodes[4].disk.synced = 3  # the observer does not count
    breaks("MajorityReachedHighWatermark", lambda: sim._majority_reached_high_watermark(leader, core, voters))
    sim.nodes[2].disk.synced = 3
    holds(lambda: sim._majority_reached_high_watermark(leader, core, voters))
    sim.nodes[2].disk.synced = 0
    leader.last_high_watermark = 3  # it did not move: nothing to check
    holds(lambda: sim._majority_reached_high_watermark(leader, core, voters))


def test_log_matching_below_each_high_watermark():
    sim = simulation()
    leader = sim.nodes[1]
    leader.live.log = [Entry(1, "a"), Entry(1, "b"), Entry(2, "c")]
    follower = sim.nodes[2].live
    follower.log = [Entry(1, "a"), Entry(1, "b"), Entry(1, "x")]
    follower.high_watermark = 2
    holds(lambda: sim._log_matching(leader))
    follower.high_watermark = 3
    breaks("LogMatching", lambda: sim._log_matching(leader))


def test_append_at_log_end():
    sim = simulation()
    node = sim.nodes[1]
    node.disk.entries = [Entry(1, "a")]
    holds(lambda: sim._append_at_log_end(node, AppendLog(1, (Entry(1, "b"),))))
    breaks("AppendAtLogEnd", lambda: sim._append_at_log_end(node, AppendLog(2, (Entry(1, "b"),))))
    breaks("AppendAtLogEnd", lambda: sim._append_at_log_end(node, AppendLog(0, (Entry(1, "b"),))))


def test_overlapping_majorities_of_consecutive_voter_sets():
    sim = simulation()
    holds(lambda: sim._overlapping_majorities(5, VoterSet.static((1, 2, 3)), VoterSet.static((1, 2, 3, 4))))
    holds(lambda: sim._overlapping_majorities(5, VoterSet.static((1, 2, 3)), VoterSet.static((1, 2))))
    breaks("OverlappingMajorities",
           lambda: sim._overlapping_majorities(5, VoterSet.static((1, 2, 3)), VoterSet.static((1, 2, 3, 4, 5))))
    breaks("OverlappingMajorities",
           lambda: sim._overlapping_majorities(5, VoterSet.static((1, 2, 3)), VoterSet.static((1, 4, 5))))


def test_a_snapshot_holds_exactly_committed_data():
    sim = simulation()
    node = sim.nodes[1]
    sim.committed = [Entry(1, "a"), Entry(1, "b")]
    holds(lambda: sim._snapshot_holds_committed_data(node, (Entry(1, "a"), Entry(1, "b")), "took"))
    breaks("SnapshotHoldsCommittedData",
           lambda: sim._snapshot_holds_committed_data(node, (Entry(1, "a"), Entry(1, "b"), Entry(1, "c")), "took"))
    breaks("SnapshotHoldsCommittedData",
           lambda: sim._snapshot_holds_committed_data(node, (Entry(1, "a"), Entry(2, "b")), "installed"))


def test_a_snapshot_holds_the_voters_in_force_at_its_end():
    sim = simulation()  # static voters: no voter records
    node = sim.nodes[1]
    holds(lambda: sim._snapshot_holds_voters(node, (Entry(1, "a"),), SnapshotVoters(), "took"))
    breaks("SnapshotHoldsVoters",
           lambda: sim._snapshot_holds_voters(node, (Entry(1, "a"),), SnapshotVoters(1, sim.bootstrap), "took"))
    dynamic = Simulation(7, 3, 1, duration_ms=1_000, reconfigure=True)
    fewer = VoterSet(dynamic.bootstrap.voters[:2])
    entries = (Entry(1, "a"), Entry(1, VotersRecord(fewer)))
    holds(lambda: dynamic._snapshot_holds_voters(dynamic.nodes[1], entries, SnapshotVoters(1, fewer), "took"))
    breaks("SnapshotHoldsVoters", lambda: dynamic._snapshot_holds_voters(
        dynamic.nodes[1], entries, SnapshotVoters(1, dynamic.bootstrap), "took"))


def test_snapshots_are_served_from_one_held_and_installed_whole_and_never_by_a_leader():
    sim = simulation()
    node = sim.nodes[1]
    snapshot_id = SnapshotId(2, 1)
    breaks("ServesOwnSnapshot", lambda: sim._serves_own_snapshot(node, SnapshotChunk(snapshot_id, 0, 10)))
    node.disk.snapshot = Snapshot(snapshot_id, b"0123456789", SnapshotVoters(), (Entry(1, "a"), Entry(1, "b")))
    holds(lambda: sim._serves_own_snapshot(node, SnapshotChunk(snapshot_id, 0, 10)))
    breaks("ServesOwnSnapshot", lambda: sim._serves_own_snapshot(node, SnapshotChunk(SnapshotId(2, 2), 0, 10)))

    breaks("DownloadsInOrder", lambda: sim._downloads_in_order(node, InstallSnapshot(snapshot_id, 10)))
    node.disk.partial = (snapshot_id, bytearray(b"01234"))
    holds(lambda: sim._downloads_in_order(node, WriteSnapshotChunk(snapshot_id, 5, b"56789")))
    breaks("DownloadsInOrder", lambda: sim._downloads_in_order(node, WriteSnapshotChunk(snapshot_id, 4, b"456789")))
    breaks("DownloadsInOrder", lambda: sim._downloads_in_order(node, InstallSnapshot(snapshot_id, 10)))
    node.disk.partial = (snapshot_id, bytearray(b"0123456789"))
    holds(lambda: sim._downloads_in_order(node, InstallSnapshot(snapshot_id, 10)))

    holds(lambda: sim._leader_never_load_snapshot(node, InstallSnapshot(snapshot_id, 10)))
    node.live.role = Role.LEADER
    breaks("LeaderNeverLoadSnapshot", lambda: sim._leader_never_load_snapshot(node, InstallSnapshot(snapshot_id, 10)))


def test_acknowledged_writes_are_held_when_acknowledged_and_in_every_final_log():
    sim = simulation()
    leader = sim.nodes[1]
    leader.live.log = [Entry(1, "a"), Entry(1, "b")]
    holds(lambda: sim._acknowledged_writes_kept(leader=leader, offset=1, epoch=1, value="b"))
    breaks("AcknowledgedWritesKept", lambda: sim._acknowledged_writes_kept(leader=leader, offset=1, epoch=2, value="b"))
    breaks("AcknowledgedWritesKept", lambda: sim._acknowledged_writes_kept(leader=leader, offset=1, epoch=1, value="c"))
    for node in sim.nodes.values():
        node.live.log = [Entry(1, "a"), Entry(1, "b")]
    logs = {node_id: [Entry(1, "a"), Entry(1, "b")] for node_id in sim.nodes}
    sim.acknowledged = {1: "b"}
    holds(lambda: sim._acknowledged_writes_kept(logs))
    logs[3] = [Entry(1, "a"), Entry(2, "x")]
    breaks("AcknowledgedWritesKept", lambda: sim._acknowledged_writes_kept(logs))
    logs[3] = [Entry(1, "a"), Entry(1, "b")]
    sim.nodes[4].live.log = [Entry(1, "a")]  # a final log too short to hold it
    breaks("AcknowledgedWritesKept", lambda: sim._acknowledged_writes_kept(logs))


def test_committed_voter_changes_are_in_every_final_log():
    sim = simulation()
    change = Entry(1, VotersRecord(VoterSet.static((1, 2))))
    for node in sim.nodes.values():
        node.live.log = [Entry(1, "a"), change]
    logs = {node_id: [Entry(1, "a"), change] for node_id in sim.nodes}
    sim.acknowledged_voters = {1: change}
    holds(lambda: sim._committed_voter_changes_kept(logs))
    logs[2] = [Entry(1, "a"), Entry(1, "b")]
    breaks("CommittedVoterChangesKept", lambda: sim._committed_voter_changes_kept(logs))


def test_a_quorum_that_never_elects_breaks_liveness():
    sim = simulation()
    sim._heal()
    breaks("LeaderElectedAfterHealing", lambda: sim._leader_elected_after_healing(sim.now))


def test_every_named_invariant_is_broken_by_some_test_here():
    """A new invariant needs a test of its rule here (the liveness ones of healing aside, run by the soak)."""
    import inspect
    import sys

    source = inspect.getsource(sys.modules[__name__])
    untested = {name for name in INVARIANTS if f'breaks("{name}"' not in source}
    assert untested <= {"LatestVoterSet", "OneVoterChangeAtATime", "VoterChangeAnsweredWhenDone",
                        "WriteCommitsAfterHealing", "AllReachedHighWatermark"}, untested
