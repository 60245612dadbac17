"""The KIP-848 consumer groups of a shard, pure (server/groups/consumer.py): joining, the uniform and
range assignors, revocation before assignment, epochs, Kafka's refusals, session expiry, and a group
read back from its records as a new coordinator reads it."""
from __future__ import annotations

import uuid

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import ConsumerGroupHeartbeatRequest as Request
from kraftwire.server.groups.consumer import (STABLE, UNRELEASED_PARTITIONS, UNREVOKED_PARTITIONS, ConsumerGroups,
                                              ConsumerLimits, GroupState)

TOPIC = uuid.UUID(int=7)
Part = Request.TopicPartitions


def topics(name: str):
    return (TOPIC, 4) if name == "t" else None


def join(groups: ConsumerGroups, member: str, now: int = 0, assignor: str | None = None):
    return groups.heartbeat(Request(group_id="g", member_id=member, member_epoch=0, rebalance_timeout_ms=30000,
                                    subscribed_topic_names=["t"], server_assignor=assignor, topic_partitions=[]),
                            member, "/127.0.0.1", topics, now)


def beat(groups: ConsumerGroups, member: str, epoch: int, owned: list[int] | None = None, now: int = 0):
    parts = None if owned is None else [Part(topic_id=TOPIC, partitions=owned)]
    return groups.heartbeat(Request(group_id="g", member_id=member, member_epoch=epoch, topic_partitions=parts),
                            member, "/127.0.0.1", topics, now)


def owned(step) -> list[int]:
    return sorted(p for tp in step.response.assignment.topic_partitions for p in tp.partitions)


def test_a_second_member_gets_its_partitions_only_after_the_first_revokes_them():
    groups = ConsumerGroups(ConsumerLimits(heartbeat_interval_ms=500))
    a = join(groups, "a")
    assert (a.response.error_code, a.response.member_epoch, owned(a)) == (0, 1, [0, 1, 2, 3])
    assert a.response.heartbeat_interval_ms == 500
    b = join(groups, "b")
    group = groups.groups["g"]
    assert (group.epoch, group.assignment_epoch, group.state) == (2, 2, GroupState.RECONCILING)
    assert b.response.member_epoch == 2 and owned(b) == []  # its target is still held by a
    assert group.members["b"].state == UNRELEASED_PARTITIONS
    revoke = beat(groups, "a", 1)
    assert revoke.response.member_epoch == 1 and len(owned(revoke)) == 2  # a keeps two, gives two up
    assert group.members["a"].state == UNREVOKED_PARTITIONS
    still = beat(groups, "b", 2)
    assert still.response.assignment is None and group.members["b"].assigned == {}
    kept = owned(revoke)
    acked = beat(groups, "a", 1, kept)
    assert acked.response.member_epoch == 2 and owned(acked) == kept and group.members["a"].state == STABLE
    handed = beat(groups, "b", 2)
    assert owned(handed) == sorted({0, 1, 2, 3} - set(kept))
    assert group.state == GroupState.STABLE
    left = groups.heartbeat(Request(group_id="g", member_id="b", member_epoch=-1), "b", "", topics, 0)
    assert left.response.member_epoch == -1 and group.epoch == 3
    assert owned(beat(groups, "a", 2)) == [0, 1, 2, 3]


def test_the_group_is_read_back_from_its_records():
    groups = ConsumerGroups(ConsumerLimits())
    written = []
    for step in (join(groups, "a"), join(groups, "b")):
        written += step.records
    step = beat(groups, "a", 1)
    written += step.records
    loaded = ConsumerGroups(ConsumerLimits())
    for key, value in written:
        loaded.replay(key, value)
    before, after = groups.groups["g"], loaded.groups["g"]
    assert (after.epoch, after.assignment_epoch, after.target) == (before.epoch, before.assignment_epoch, before.target)
    for member_id, m in before.members.items():
        again = after.members[member_id]
        assert again.assignment_state() == m.assignment_state() and again.subscribed == ("t",)


def test_range_assignor_and_refusals():
    groups = ConsumerGroups(ConsumerLimits())
    join(groups, "a", assignor="range")
    join(groups, "b", assignor="range")
    assert groups.groups["g"].target == {"a": {TOPIC: frozenset({0, 1})}, "b": {TOPIC: frozenset({2, 3})}}
    assert groups.groups["g"].assignor() == "range"
    assert beat(groups, "nobody", 3).response.error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert beat(groups, "a", 9).response.error_code == ErrorCode.FENCED_MEMBER_EPOCH
    assert join(groups, "", 0).response.error_code == ErrorCode.INVALID_REQUEST
    assert join(groups, "c", assignor="sticky").response.error_code == ErrorCode.UNSUPPORTED_ASSIGNOR
    regex = groups.heartbeat(Request(group_id="g", member_id="r", member_epoch=0, rebalance_timeout_ms=1,
                                     subscribed_topic_regex="t.*", topic_partitions=[]), "r", "", topics, 0)
    assert regex.response.error_code == ErrorCode.INVALID_REGULAR_EXPRESSION


def test_an_expired_session_removes_the_member():
    groups = ConsumerGroups(ConsumerLimits(session_timeout_ms=1000))
    join(groups, "a", now=0)
    join(groups, "b", now=500)
    assert groups.next_deadline() == 1000
    records = groups.tick(1000, topics)
    assert records and list(groups.groups["g"].members) == ["b"]
    assert groups.groups["g"].target == {"b": {TOPIC: frozenset({0, 1, 2, 3})}}


def test_a_v0_join_without_a_member_id_is_named_by_the_coordinator():
    from kraftwire.server.groups.shard import GroupLimits, GroupShard
    shard = GroupShard(GroupLimits())
    request = Request(group_id="g", member_id="", member_epoch=0, rebalance_timeout_ms=30000,
                      subscribed_topic_names=["t"], topic_partitions=[])
    named = shard.consumer_heartbeat(request, 0, "c", "/h", topics, 0).response
    assert named.error_code == ErrorCode.NONE and named.member_id and named.member_epoch == 1
    refused = shard.consumer_heartbeat(request, 1, "c", "/h", topics, 0).response
    assert (refused.error_code, refused.error_message) == (ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")
