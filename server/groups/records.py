"""``__consumer_offsets`` records: a key is an int16 record type (1 offset commit, 2 group metadata)
then the key at version 0; a value is an int16 version then the value; a tombstone has no value.
Versions written are Kafka 4.3.1's: OffsetCommitValue 4 (1 when an expire timestamp is kept, which
no served OffsetCommit version carries), GroupMetadataValue 3."""
from __future__ import annotations

import struct
from typing import NamedTuple

from kraftwire.codec import records as rec
from kraftwire.codec.errors import MalformedError
from kraftwire.codec.message import Message

OFFSET_COMMIT = 1
GROUP_METADATA = 2
OFFSET_COMMIT_VALUE_VERSION = 4
GROUP_METADATA_VALUE_VERSION = 3
_INT16 = struct.Struct(">h")


class OffsetKey(NamedTuple):
    group: str
    topic: str
    partition: int


def prefixed(prefix: int, message: Message, version: int) -> bytes:
    """A key (prefix: its type, at version 0) or a value (prefix: its version) as the topic holds it."""
    return _INT16.pack(prefix) + message.encode(version)


def offset_key(key: OffsetKey) -> bytes:
    return prefixed(OFFSET_COMMIT, rec.OffsetCommitKey(group=key.group, topic=key.topic, partition=key.partition), 0)


def group_key(group: str) -> bytes:
    return prefixed(GROUP_METADATA, rec.GroupMetadataKey(group=group), 0)


def offset_value(value: rec.OffsetCommitValue) -> bytes:
    return prefixed(OFFSET_COMMIT_VALUE_VERSION, value, OFFSET_COMMIT_VALUE_VERSION)


def group_value(value: rec.GroupMetadataValue) -> bytes:
    return prefixed(GROUP_METADATA_VALUE_VERSION, value, GROUP_METADATA_VALUE_VERSION)


def decode_key(data: bytes) -> OffsetKey | str | None:
    """An offset commit's key, a classic group's id, or None for another type (consumer groups' records
    are read by ``consumer_records``; share and streams groups' are skipped on load)."""
    if len(data) < 2:
        raise MalformedError("a __consumer_offsets key shorter than its type", 0)
    kind = _INT16.unpack_from(data)[0]
    if kind == OFFSET_COMMIT:
        key = rec.OffsetCommitKey.decode(data[2:], 0)
        return OffsetKey(key.group, key.topic, key.partition)
    if kind == GROUP_METADATA:
        return rec.GroupMetadataKey.decode(data[2:], 0).group
    return None


def decode_value(cls: type[Message], data: bytes) -> Message:
    """A value: its int16 version, then the value at that version."""
    version = _INT16.unpack_from(data)[0]
    return cls.decode(data[2:], version)


def decode_offset_value(data: bytes) -> rec.OffsetCommitValue:
    value = decode_value(rec.OffsetCommitValue, data)
    assert isinstance(value, rec.OffsetCommitValue)
    return value


def decode_group_value(data: bytes) -> rec.GroupMetadataValue:
    value = decode_value(rec.GroupMetadataValue, data)
    assert isinstance(value, rec.GroupMetadataValue)
    return value
