"""The group shard as a pure state machine: requests and times in, an Outcome (records, answer, the
waiting answers it completes) out; its records replayed as the runtime replays them. Session expiry,
the rebalance timeout, a static member's replacement (FENCED_INSTANCE_ID), ILLEGAL_GENERATION and
REBALANCE_IN_PROGRESS on a heartbeat, UNKNOWN_MEMBER_ID, DeleteGroups of a live group, OffsetDelete
while subscribed."""
from __future__ import annotations

from typing import Any

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import (HeartbeatRequest, JoinGroupRequest, OffsetCommitRequest,
                                      SyncGroupRequest)
from kraftwire.server.groups.classic import State
from kraftwire.server.groups.shard import GroupLimits, GroupShard, Outcome

G = "g"
SESSION, REBALANCE = 10_000, 5_000  # a rebalance ends before an idle session does
# A ConsumerProtocolSubscription v0 of topic "t": version, one topic, its name, no user data.
SUBSCRIPTION = b"\x00\x00" + b"\x00\x00\x00\x01" + b"\x00\x01t" + b"\xff\xff\xff\xff"


def new_shard() -> GroupShard:
    return GroupShard(GroupLimits(initial_rebalance_delay_ms=0))


def settle(shard: GroupShard, outcome: Outcome) -> Outcome:
    """What the runtime does with an outcome once its records are committed: replay them."""
    for key, value in outcome.records:
        shard.replay(key, value)
    return outcome


def answer(outcome: Outcome) -> Any:
    """The request's own answer: at once, or the completion of its waiter."""
    if outcome.response is not None:
        return outcome.response
    return dict(outcome.completions).get(outcome.waiter)


def join(shard: GroupShard, now: int, member_id: str = "", instance: str | None = None, version: int = 5,
         session: int = SESSION) -> Outcome:
    request = JoinGroupRequest(group_id=G, session_timeout_ms=session, rebalance_timeout_ms=REBALANCE,
                               member_id=member_id, group_instance_id=instance, protocol_type="consumer",
                               protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="range",
                                                                                    metadata=SUBSCRIPTION)])
    return settle(shard, shard.join(request, version, "client", "/127.0.0.1", now))


def heartbeat(shard: GroupShard, now: int, member_id: str, generation: int, instance: str | None = None) -> int:
    request = HeartbeatRequest(group_id=G, generation_id=generation, member_id=member_id, group_instance_id=instance)
    return shard.heartbeat(request, now).response.error_code


def sync(shard: GroupShard, now: int, member_id: str, generation: int, instance: str | None = None) -> Outcome:
    request = SyncGroupRequest(group_id=G, generation_id=generation, member_id=member_id, group_instance_id=instance,
                               assignments=[SyncGroupRequest.SyncGroupRequestAssignment(member_id=member_id,
                                                                                        assignment=b"a")])
    return settle(shard, shard.sync(request, 5, now))


def stable_member(shard: GroupShard, now: int = 0, instance: str | None = None) -> tuple[str, int]:
    """A member joined (through MEMBER_ID_REQUIRED when dynamic) and synced: (its id, the generation)."""
    first = answer(join(shard, now, instance=instance))
    if instance is None:
        assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED and first.member_id
        first = answer(join(shard, now, member_id=first.member_id))
    assert first.error_code == ErrorCode.NONE, first
    assert answer(sync(shard, now, first.member_id, first.generation_id, instance)).error_code == ErrorCode.NONE
    assert shard.groups[G].state == State.STABLE
    return first.member_id, first.generation_id


def test_member_id_required_then_a_generation():
    shard = new_shard()
    required = answer(join(shard, 0))
    assert (required.error_code, required.generation_id) == (ErrorCode.MEMBER_ID_REQUIRED, -1)
    assert required.member_id.startswith("client-")
    assert G in shard.groups and not shard.groups[G].members  # pending only, not a member yet
    joined = answer(join(shard, 1, member_id=required.member_id))
    assert (joined.error_code, joined.generation_id, joined.leader) == (ErrorCode.NONE, 1, required.member_id)
    assert [m.member_id for m in joined.members] == [required.member_id]  # the leader is told the members
    late = join(shard, 2, version=3)  # before v4 a new member is taken at once, into a new rebalance
    assert late.waiter is not None and late.waiter[1] in shard.groups[G].members
    assert shard.groups[G].state == State.PREPARING_REBALANCE


def test_session_expiry_removes_the_member_and_empties_the_group():
    shard = new_shard()
    member, generation = stable_member(shard, now=0)
    assert heartbeat(shard, SESSION - 1, member, generation) == ErrorCode.NONE  # the session restarts here
    assert shard.next_deadline() == 2 * SESSION - 1
    assert not settle(shard, shard.tick(2 * SESSION - 2)).records  # not yet
    assert member in shard.groups[G].members
    expired = settle(shard, shard.tick(2 * SESSION - 1))
    group = shard.groups[G]
    assert member not in group.members
    assert (group.state, group.generation) == (State.EMPTY, generation + 1)
    assert expired.records  # the emptied group's metadata is written
    assert heartbeat(shard, 2 * SESSION, member, generation) == ErrorCode.UNKNOWN_MEMBER_ID


def test_rebalance_timeout_drops_members_that_do_not_rejoin():
    shard = new_shard()
    first, _ = stable_member(shard, now=0)
    second = answer(join(shard, 0, version=3))  # a second member: the group rebalances, waiting for the first
    assert second is None and shard.groups[G].state == State.PREPARING_REBALANCE
    assert heartbeat(shard, 1, first, 1) == ErrorCode.REBALANCE_IN_PROGRESS  # told to rejoin
    pending = shard.groups[G].rebalance_deadline_ms
    assert pending == REBALANCE
    assert not shard.tick(REBALANCE - 1).completions
    ended = settle(shard, shard.tick(REBALANCE))
    group = shard.groups[G]
    assert first not in group.members and len(group.members) == 1  # the first never rejoined: it is gone
    (waiter, joined), = ended.completions
    assert joined.error_code == ErrorCode.NONE and joined.generation_id == 2 and waiter[2] == "join"
    assert group.state == State.COMPLETING_REBALANCE
    assert heartbeat(shard, REBALANCE + 1, first, 1) == ErrorCode.UNKNOWN_MEMBER_ID


def test_completing_rebalance_times_out_when_the_leader_never_syncs():
    shard = new_shard()
    required = answer(join(shard, 0))
    joined = answer(join(shard, 0, member_id=required.member_id))
    assert shard.groups[G].state == State.COMPLETING_REBALANCE
    settle(shard, shard.tick(REBALANCE))
    assert joined.member_id not in shard.groups[G].members and shard.groups[G].state == State.EMPTY


def test_static_member_replaced_fences_the_old_id():
    shard = new_shard()
    old, generation = stable_member(shard, now=0, instance="i1")
    replaced = answer(join(shard, 5, instance="i1"))  # the same instance restarts: no member id
    assert replaced.error_code == ErrorCode.NONE and replaced.member_id != old
    assert replaced.member_id.startswith("i1-")
    group = shard.groups[G]
    assert group.static["i1"] == replaced.member_id and old not in group.members
    assert heartbeat(shard, 6, old, generation, instance="i1") == ErrorCode.FENCED_INSTANCE_ID
    assert answer(sync(shard, 6, old, generation, instance="i1")).error_code == ErrorCode.FENCED_INSTANCE_ID
    assert heartbeat(shard, 6, replaced.member_id, group.generation, instance="i1") in (
        ErrorCode.NONE, ErrorCode.REBALANCE_IN_PROGRESS)


def test_illegal_generation_on_heartbeat_sync_and_commit():
    shard = new_shard()
    member, generation = stable_member(shard)
    assert heartbeat(shard, 1, member, generation + 1) == ErrorCode.ILLEGAL_GENERATION
    assert answer(sync(shard, 1, member, generation - 1)).error_code == ErrorCode.ILLEGAL_GENERATION
    commit = OffsetCommitRequest(group_id=G, generation_id_or_member_epoch=generation + 5, member_id=member, topics=[
        OffsetCommitRequest.OffsetCommitRequestTopic(name="t", partitions=[
            OffsetCommitRequest.OffsetCommitRequestPartition(partition_index=0, committed_offset=3)])])
    refused = shard.commit(commit, 9, {}, 1)
    assert not refused.records
    assert refused.response.topics[0].partitions[0].error_code == ErrorCode.ILLEGAL_GENERATION
    taken = settle(shard, shard.commit(commit.replace(generation_id_or_member_epoch=generation), 9, {}, 1))
    assert taken.response.topics[0].partitions[0].error_code == ErrorCode.NONE
    assert shard.fetch_offsets(G, None).response[("t", 0)].offset == 3  # through replay


def test_unknown_member_heartbeat_and_unknown_group():
    shard = new_shard()
    assert heartbeat(shard, 0, "nobody", 1) == ErrorCode.UNKNOWN_MEMBER_ID  # no such group
    stable_member(shard)
    assert heartbeat(shard, 0, "nobody", 1) == ErrorCode.UNKNOWN_MEMBER_ID


def test_delete_and_offset_delete_of_a_live_group():
    shard = new_shard()
    member, generation = stable_member(shard)
    assert shard.delete_group(G).response == ErrorCode.NON_EMPTY_GROUP
    assert shard.delete_group("missing").response == ErrorCode.GROUP_ID_NOT_FOUND
    subscribed = shard.delete_offsets(G, [("t", [0]), ("other", [0])]).response
    assert [(t.name, t.partitions[0].error_code) for t in subscribed.topics] == [
        ("t", ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC), ("other", ErrorCode.NONE)]
    assert shard.delete_offsets("missing", []).response.error_code == ErrorCode.GROUP_ID_NOT_FOUND
    described = shard.describe(G, 6).response
    assert (described.group_state, described.protocol_data, described.members[0].member_id) == (
        "Stable", "range", member)
    missing = shard.describe("missing", 6).response
    assert (missing.error_code, missing.group_state, missing.error_message) == (
        ErrorCode.GROUP_ID_NOT_FOUND, "Dead", "Group missing not found.")
    assert shard.describe("missing", 5).response.error_code == ErrorCode.NONE
    assert [g.group_id for g in shard.list_groups(["STABLE"], [])] == [G]
    assert shard.list_groups(["Empty"], []) == [] and shard.list_groups([], ["consumer"]) == []
