"""Committed offsets of a shard (Kafka's OffsetMetadataManager): OffsetCommit's checks and records,
OffsetFetch's reads, OffsetDelete, and DeleteGroups' tombstones."""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec import records as rec
from kraftwire.codec.messages import OffsetCommitRequest, OffsetCommitResponse

from . import records
from .classic import State
from .records import OffsetKey
from .shard import Committed, GroupShard, Outcome, Record

NO_OFFSET = -1


FIRST_VERSION_WITH_GROUP_NOT_FOUND = 9


def check_commit(shard: GroupShard, group_id: str, member_id: str, instance_id: str | None, generation: int,
                 version: int) -> int:
    """Whether a commit of this member and generation is taken (Kafka's OffsetMetadataManager and
    ClassicGroup.validateOffsetCommit): a missing group takes a commit of generation < 0 (a simple
    group) and is GROUP_ID_NOT_FOUND otherwise (ILLEGAL_GENERATION before v9)."""
    group = shard.groups.get(group_id)
    if group is None:
        if generation < 0:
            return ErrorCode.NONE
        return ErrorCode.GROUP_ID_NOT_FOUND if version >= FIRST_VERSION_WITH_GROUP_NOT_FOUND \
            else ErrorCode.ILLEGAL_GENERATION
    if group.state == State.DEAD:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if generation < 0 and group.state == State.EMPTY:
        return ErrorCode.NONE
    if generation >= 0 or member_id or instance_id is not None:
        if instance_id is not None:
            known = group.static.get(instance_id)
            if known is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            if known != member_id:
                return ErrorCode.FENCED_INSTANCE_ID
        if member_id not in group.members:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if generation != group.generation:
            return ErrorCode.ILLEGAL_GENERATION
    elif group.state != State.EMPTY:
        return ErrorCode.UNKNOWN_MEMBER_ID
    if group.state == State.COMPLETING_REBALANCE:
        return ErrorCode.REBALANCE_IN_PROGRESS
    return ErrorCode.NONE


def commit_record(shard: GroupShard, key: OffsetKey, offset: int, leader_epoch: int, metadata: str | None,
                  now_ms: int) -> tuple[int, Record | None]:
    """One partition's commit: its error code and the record to append."""
    text = metadata or ""
    if len(text.encode("utf-16-le")) // 2 > shard.limits.metadata_max_bytes:  # Java's String.length()
        return ErrorCode.OFFSET_METADATA_TOO_LARGE, None
    value = rec.OffsetCommitValue(offset=offset, leader_epoch=leader_epoch, metadata=text, commit_timestamp=now_ms)
    return ErrorCode.NONE, (records.offset_key(key), records.offset_value(value))


def ensure_group(shard: GroupShard, group_id: str, now_ms: int) -> None:
    """A simple (admin) commit to an unknown group makes an empty classic group, as Kafka does."""
    from .classic import ClassicGroup
    if group_id not in shard.groups:
        shard.groups[group_id] = ClassicGroup(group_id, state_timestamp_ms=now_ms)


def committed(shard: GroupShard, group_id: str) -> dict[tuple[str, int], Committed]:
    return {(k.topic, k.partition): v for k, v in shard.offsets.items() if k.group == group_id}


def delete_group(shard: GroupShard, group_id: str) -> tuple[int, list[Record]]:
    """DeleteGroups for one group: GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, or tombstones of its offsets
    and its metadata (Kafka's order)."""
    group = shard.groups.get(group_id)
    if group is None or group.state == State.DEAD:
        return ErrorCode.GROUP_ID_NOT_FOUND, []
    if group.state != State.EMPTY:
        return ErrorCode.NON_EMPTY_GROUP, []
    tombstones: list[Record] = [(records.offset_key(k), None) for k in shard.offsets if k.group == group_id]
    tombstones.append((records.group_key(group_id), None))
    group.state = State.DEAD
    return ErrorCode.NONE, tombstones


def subscribed_topics(shard: GroupShard, group_id: str) -> set[str] | None:
    """The topics a group's members consume (from their consumer-protocol subscriptions), None when
    unknown (another protocol type): OffsetDelete refuses GROUP_SUBSCRIBED_TO_TOPIC for those."""
    group = shard.groups.get(group_id)
    if group is None or group.protocol_type != "consumer" or group.state == State.EMPTY:
        return set()
    topics: set[str] = set()
    for m in group.members.values():
        topics |= _subscription_topics(m.metadata(group.protocol))
    return topics


def _subscription_topics(data: bytes) -> set[str]:
    """The topic names of a ConsumerProtocolSubscription (int16 version, then an int32-counted array of
    int16-sized strings at every version)."""
    import struct
    try:
        count = struct.unpack_from(">i", data, 2)[0]
        pos, names = 6, set()
        for _ in range(count):
            size = struct.unpack_from(">h", data, pos)[0]
            names.add(data[pos + 2:pos + 2 + size].decode())
            pos += 2 + size
        return names
    except (struct.error, UnicodeDecodeError):
        return set()


def commit(shard: GroupShard, request: OffsetCommitRequest, version: int, refused: dict[tuple[str, int], int],
           now_ms: int) -> Outcome:
    """OffsetCommit: ``refused`` holds the handler's per-partition codes (authorization, unknown topics);
    the rest are checked against the group and written as OffsetCommitValue records."""
    if request.group_id in shard.consumer.groups:
        code = shard.consumer.check_commit(request.group_id, request.member_id,
                                           request.generation_id_or_member_epoch, version)
    else:
        code = check_commit(shard, request.group_id, request.member_id, request.group_instance_id,
                            request.generation_id_or_member_epoch, version)
    if code == ErrorCode.NONE and request.group_id not in shard.consumer.groups:
        ensure_group(shard, request.group_id, now_ms)
    outcome = Outcome()
    topics = []
    for topic in request.topics:
        name = topic.name
        answers = []
        for p in topic.partitions:
            own = refused.get((name, p.partition_index), code)
            if own == ErrorCode.NONE:
                own, record = commit_record(shard, OffsetKey(request.group_id, name, p.partition_index),
                                            p.committed_offset, p.committed_leader_epoch, p.committed_metadata, now_ms)
                if record is not None:
                    outcome.records.append(record)
            answers.append(OffsetCommitResponse.OffsetCommitResponsePartition(partition_index=p.partition_index,
                                                                              error_code=own))
        topics.append(OffsetCommitResponse.OffsetCommitResponseTopic(name=name, topic_id=topic.topic_id,
                                                                     partitions=answers))
    outcome.response = OffsetCommitResponse(topics=topics)
    return outcome


def fetch(shard: GroupShard, group_id: str, wanted: list[tuple[str, list[int]]] | None
          ) -> dict[tuple[str, int], Committed]:
    mine = committed(shard, group_id)
    if wanted is None:
        return mine
    return {(t, p): mine[(t, p)] for t, parts in wanted for p in parts if (t, p) in mine}
