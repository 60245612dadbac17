"""The consumer groups' ``__consumer_offsets`` records (KIP-848), as Kafka 4.3.1's group coordinator writes
them: a key is its int16 type (3 group metadata, 4 partition metadata, 5 member metadata, 6 target
assignment metadata, 7 target assignment of a member, 8 current assignment of a member, 16 regular
expression) then the key at version 0; a value is int16 version 0 then the value; a tombstone has no
value. kraftwire writes types 3, 5, 6, 7 and 8; 4 and 16 are read (and skipped) on load."""
from __future__ import annotations

import struct
import uuid
from typing import Any, NamedTuple

from kraftwire.codec import records as rec
from kraftwire.codec.message import Message

from .records import decode_value, prefixed

GROUP_METADATA = 3
PARTITION_METADATA = 4
MEMBER_METADATA = 5
TARGET_METADATA = 6
TARGET_MEMBER = 7
CURRENT_ASSIGNMENT = 8
REGULAR_EXPRESSION = 16
TYPES = frozenset({GROUP_METADATA, PARTITION_METADATA, MEMBER_METADATA, TARGET_METADATA, TARGET_MEMBER,
                   CURRENT_ASSIGNMENT, REGULAR_EXPRESSION})
_INT16 = struct.Struct(">h")
Assignment = dict[uuid.UUID, frozenset[int]]
Record = tuple[bytes, bytes | None]

_KEYS: dict[int, type[Message]] = {
    GROUP_METADATA: rec.ConsumerGroupMetadataKey, PARTITION_METADATA: rec.ConsumerGroupPartitionMetadataKey,
    MEMBER_METADATA: rec.ConsumerGroupMemberMetadataKey, TARGET_METADATA: rec.ConsumerGroupTargetAssignmentMetadataKey,
    TARGET_MEMBER: rec.ConsumerGroupTargetAssignmentMemberKey,
    CURRENT_ASSIGNMENT: rec.ConsumerGroupCurrentMemberAssignmentKey,
    REGULAR_EXPRESSION: rec.ConsumerGroupRegularExpressionKey}
_VALUES: dict[int, type[Message]] = {
    GROUP_METADATA: rec.ConsumerGroupMetadataValue, PARTITION_METADATA: rec.ConsumerGroupPartitionMetadataValue,
    MEMBER_METADATA: rec.ConsumerGroupMemberMetadataValue,
    TARGET_METADATA: rec.ConsumerGroupTargetAssignmentMetadataValue,
    TARGET_MEMBER: rec.ConsumerGroupTargetAssignmentMemberValue,
    CURRENT_ASSIGNMENT: rec.ConsumerGroupCurrentMemberAssignmentValue,
    REGULAR_EXPRESSION: rec.ConsumerGroupRegularExpressionValue}


class Decoded(NamedTuple):
    kind: int
    key: Message
    value: Message | None


def record_type(key: bytes) -> int:
    return _INT16.unpack_from(key)[0] if len(key) >= 2 else -1


def decode(key: bytes, value: bytes | None) -> Decoded:
    kind = record_type(key)
    decoded_key = _KEYS[kind].decode(key[2:], 0)
    decoded_value = None if value is None else decode_value(_VALUES[kind], value)
    return Decoded(kind, decoded_key, decoded_value)


def _record(kind: int, key: Message, value: Message | None) -> Record:
    return prefixed(kind, key, 0), None if value is None else prefixed(0, value, 0)


def group_metadata(group_id: str, epoch: int | None, metadata_hash: int = 0) -> Record:
    value = None if epoch is None else rec.ConsumerGroupMetadataValue(epoch=epoch, metadata_hash=metadata_hash)
    return _record(GROUP_METADATA, rec.ConsumerGroupMetadataKey(group_id=group_id), value)


def member_metadata(group_id: str, member_id: str, value: rec.ConsumerGroupMemberMetadataValue | None) -> Record:
    return _record(MEMBER_METADATA, rec.ConsumerGroupMemberMetadataKey(group_id=group_id, member_id=member_id), value)


def target_metadata(group_id: str, epoch: int | None, now_ms: int = 0) -> Record:
    value = None if epoch is None else rec.ConsumerGroupTargetAssignmentMetadataValue(
        assignment_epoch=epoch, assignment_timestamp=now_ms)
    return _record(TARGET_METADATA, rec.ConsumerGroupTargetAssignmentMetadataKey(group_id=group_id), value)


def target_member(group_id: str, member_id: str, assignment: Assignment | None) -> Record:
    cls = rec.ConsumerGroupTargetAssignmentMemberValue
    value = None if assignment is None else cls(topic_partitions=[
        cls.TopicPartition(topic_id=t, partitions=sorted(p)) for t, p in sorted(assignment.items()) if p])
    return _record(TARGET_MEMBER, rec.ConsumerGroupTargetAssignmentMemberKey(group_id=group_id, member_id=member_id),
                   value)


def current_assignment(group_id: str, member_id: str, state: tuple[int, int, int, Assignment, Assignment] | None
                       ) -> Record:
    """``state``: (member epoch, previous member epoch, member state, assigned, pending revocation)."""
    cls = rec.ConsumerGroupCurrentMemberAssignmentValue
    value = None
    if state is not None:
        epoch, previous, member_state, assigned, pending = state
        value = cls(member_epoch=epoch, previous_member_epoch=previous, state=member_state,
                    assigned_partitions=_partitions(cls, assigned),
                    partitions_pending_revocation=_partitions(cls, pending))
    key = rec.ConsumerGroupCurrentMemberAssignmentKey(group_id=group_id, member_id=member_id)
    return _record(CURRENT_ASSIGNMENT, key, value)


def _partitions(cls: type[rec.ConsumerGroupCurrentMemberAssignmentValue], assignment: Assignment) -> list[Any]:
    return [cls.TopicPartitions(topic_id=t, partitions=sorted(p)) for t, p in sorted(assignment.items()) if p]


def assignment_of(topic_partitions: list[Any]) -> Assignment:
    return {tp.topic_id: frozenset(tp.partitions) for tp in topic_partitions if tp.partitions}
