"""What admin clients ask of a shard (Kafka's GroupMetadataManager.listGroups/describeGroups and
OffsetMetadataManager.deleteOffsets), as pure functions of the shard: ListGroups' listing with its
state and type filters, DescribeGroups' answer per group, OffsetDelete's tombstones."""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import DescribeGroupsResponse, ListGroupsResponse, OffsetDeleteResponse

from . import records
from .classic import State
from .offsets import subscribed_topics
from .records import OffsetKey
from .shard import GroupShard, Outcome, Record

CLASSIC = "classic"  # Kafka's GroupType of a classic group
CONSUMER = "consumer"  # of a KIP-848 consumer group (server/groups/consumer.py)
FIRST_VERSION_WITH_NOT_FOUND = 6
Described = DescribeGroupsResponse.DescribedGroup


def list_groups(shard: GroupShard, states: list[str], types: list[str]) -> list[ListGroupsResponse.ListedGroup]:
    """The shard's groups whose state (case-insensitive) and type are in the filters (empty: any)."""
    wanted_states = {s.strip().lower() for s in states}
    wanted_types = {t.strip().lower() for t in types}
    return [ListGroupsResponse.ListedGroup(group_id=g.group_id, protocol_type=g.protocol_type or "",
                                           group_state=g.state.value, group_type=CLASSIC)
            for g in shard.groups.values() if g.state != State.DEAD
            and (not wanted_states or g.state.value.lower() in wanted_states)
            and (not wanted_types or CLASSIC in wanted_types)] + [
        ListGroupsResponse.ListedGroup(group_id=g.group_id, protocol_type=CONSUMER, group_state=g.state.value,
                                       group_type=CONSUMER)
        for g in shard.consumer.groups.values()
        if (not wanted_states or g.state.value.lower() in wanted_states)
        and (not wanted_types or CONSUMER in wanted_types)]


def describe(shard: GroupShard, group_id: str, version: int) -> Described:
    """One group: a Stable group's members carry their metadata of the chosen protocol, other states'
    only their assignments; a missing group is Dead (from v6 with GROUP_ID_NOT_FOUND), as Kafka answers."""
    group = shard.groups.get(group_id)
    if group is None or group.state == State.DEAD:
        if version >= FIRST_VERSION_WITH_NOT_FOUND:
            return Described(group_id=group_id, group_state=State.DEAD.value, error_code=ErrorCode.GROUP_ID_NOT_FOUND,
                             error_message=f"Group {group_id} not found.")
        return Described(group_id=group_id, group_state=State.DEAD.value)
    stable = group.state == State.STABLE
    members = [DescribeGroupsResponse.DescribedGroupMember(
        member_id=m.member_id, group_instance_id=m.instance_id, client_id=m.client_id, client_host=m.client_host,
        member_metadata=m.metadata(group.protocol) if stable else b"", member_assignment=m.assignment)
        for m in group.members.values()]
    return Described(group_id=group_id, group_state=group.state.value, protocol_type=group.protocol_type or "",
                     protocol_data=(group.protocol or "") if stable else "", members=members)


def delete_offsets(shard: GroupShard, group_id: str, topics: list[tuple[str, list[int]]]) -> Outcome:
    """OffsetDelete of partitions the handler found: GROUP_ID_NOT_FOUND for a missing group,
    NON_EMPTY_GROUP for a live group of another protocol type than ``consumer``, GROUP_SUBSCRIBED_TO_TOPIC
    for a topic its members subscribe to; a tombstone for each other partition with a commit."""
    group = shard.groups.get(group_id)
    modern = shard.consumer.groups.get(group_id)
    if modern is not None:
        return _delete_offsets(shard, group_id, topics, {t for m in modern.members.values() for t in m.subscribed})
    if group is None or group.state == State.DEAD:
        return Outcome(response=OffsetDeleteResponse(error_code=ErrorCode.GROUP_ID_NOT_FOUND))
    if group.state != State.EMPTY and group.protocol_type != "consumer":
        return Outcome(response=OffsetDeleteResponse(error_code=ErrorCode.NON_EMPTY_GROUP))
    return _delete_offsets(shard, group_id, topics, subscribed_topics(shard, group_id))


def _delete_offsets(shard: GroupShard, group_id: str, topics: list[tuple[str, list[int]]],
                    subscribed: set[str] | None) -> Outcome:
    tombstones: list[Record] = []
    answers = []
    for name, partitions in topics:
        refused = subscribed is None or name in subscribed
        code = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC if refused else ErrorCode.NONE
        for index in partitions if not refused else ():
            key = OffsetKey(group_id, name, index)
            if key in shard.offsets:
                tombstones.append((records.offset_key(key), None))
        answers.append(OffsetDeleteResponse.OffsetDeleteResponseTopic(name=name, partitions=[
            OffsetDeleteResponse.OffsetDeleteResponsePartition(partition_index=i, error_code=code)
            for i in partitions]))
    return Outcome(records=tombstones, response=OffsetDeleteResponse(error_code=ErrorCode.NONE, topics=answers))
