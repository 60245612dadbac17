"""Kafka v2 record batches as the log layer sees them: the 61-byte header, Kafka's checks of a produced
batch (LogValidator's rules), and the leader's stamping of offsets, epoch and timestamps in place.

Header (big-endian): base offset int64 @0, batch length int32 @8 (bytes after it), partition leader epoch
int32 @12, magic int8 @16, CRC-32C uint32 @17 (of bytes 21..end), attributes int16 @21 (bits 0-2 codec,
3 LogAppendTime, 4 transactional, 5 control), last offset delta int32 @23, base timestamp int64 @27, max
timestamp int64 @35, producer id int64 @43, producer epoch int16 @51, base sequence int32 @53, record
count int32 @57."""
from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import NamedTuple

from kraftwire.codec.crc import crc32c

from kraftwire.codec import ErrorCode, MalformedError
from kraftwire.codec.primitives import read_varint

from . import compression
from .errors import LogError, RecordError

HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = HEADER.size  # 61
LOG_OVERHEAD = 12  # base offset + length: what precedes the length-counted part
CRC_START = 21
MAGIC_OFFSET = 16
ATTR_CODEC = 0x07
ATTR_LOG_APPEND_TIME = 0x08
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_TIMESTAMP = -1
NO_PARTITION_LEADER_EPOCH = -1
INT32_MAX = (1 << 31) - 1
DECOMPRESSED_LIMIT_FACTOR = 256  # a compressed batch may inflate to this many times max.message.bytes
_EPOCH = struct.Struct(">i")
_LAST_DELTA_TS = struct.Struct(">hiqq")  # attributes, last offset delta, base timestamp, max timestamp
_BASE_OFFSET = struct.Struct(">q")
_CRC = struct.Struct(">I")


class BatchHeader(NamedTuple):
    """The header fields of one v2 batch."""

    base_offset: int
    length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int

    @property
    def size(self) -> int:
        return self.length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def codec(self) -> int:
        return self.attributes & ATTR_CODEC

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & ATTR_TRANSACTIONAL)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & ATTR_CONTROL)

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id >= 0

    @property
    def last_sequence(self) -> int:
        """The sequence of the batch's last record, wrapping past Int32.MAX as Kafka's does."""
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return (self.base_sequence + self.last_offset_delta) % (INT32_MAX + 1)


def parse_header(buf: bytes | bytearray | memoryview, pos: int = 0) -> BatchHeader:
    return BatchHeader._make(HEADER.unpack_from(buf, pos))


def crc_valid(buf: bytes | memoryview, pos: int, header: BatchHeader) -> bool:
    return crc32c(memoryview(buf)[pos + CRC_START:pos + header.size]) == header.crc


def iter_headers(buf: bytes | memoryview) -> Iterator[tuple[int, BatchHeader]]:
    """(position, header) of every whole v2 batch in ``buf``; stops at a partial one (as Kafka's batch
    iterator does). Raises LogError(CORRUPT_MESSAGE) for a length below the header's size."""
    pos = 0
    while pos + LOG_OVERHEAD <= len(buf):
        (length,) = _EPOCH.unpack_from(buf, pos + 8)
        if length + LOG_OVERHEAD < HEADER_SIZE:
            raise LogError(ErrorCode.CORRUPT_MESSAGE, f"Record size {length + LOG_OVERHEAD} is less than the "
                                                      f"minimum record overhead ({HEADER_SIZE})")
        if pos + length + LOG_OVERHEAD > len(buf):
            return
        if buf[pos + MAGIC_OFFSET] != 2:
            raise LogError(ErrorCode.INVALID_RECORD, "Produce requests with version 3 and above are only "
                                                     "allowed to contain record batches with magic version 2")
        yield pos, parse_header(buf, pos)
        pos += length + LOG_OVERHEAD


class ValidatedRecords(NamedTuple):
    """What a batch's records say once checked: the max timestamp and the first record's offset with it."""

    max_timestamp: int
    offset_delta_of_max_timestamp: int


def check_client_batch(header: BatchHeader, compact: bool) -> None:
    """LogValidator's batch rules for a batch a client produced (INVALID_RECORD)."""
    count_from_offsets = header.last_offset_delta + 1
    if count_from_offsets <= 0:
        raise LogError(ErrorCode.INVALID_RECORD, f"Batch has an invalid offset range: [{header.base_offset}, "
                                                 f"{header.last_offset}]")
    if header.record_count <= 0:
        raise LogError(ErrorCode.INVALID_RECORD, f"Invalid reported count for record batch: {header.record_count}")
    if count_from_offsets != header.record_count:
        raise LogError(ErrorCode.INVALID_RECORD, f"Inconsistent batch offset range [{header.base_offset}, "
                                                 f"{header.last_offset}] and count of records {header.record_count}")
    if header.is_control:
        raise LogError(ErrorCode.INVALID_RECORD, "Clients are not allowed to write control records")
    if header.has_producer_id and header.base_sequence < 0:
        raise LogError(ErrorCode.INVALID_RECORD, f"Invalid sequence number {header.base_sequence} in record batch "
                                                 f"with producerId {header.producer_id}")


class RecordRules(NamedTuple):
    """What each record is checked against: the topic's timestamp rules and whether keys are required."""

    log_append_time: bool
    now_ms: int
    before_max_ms: int
    after_max_ms: int
    compact: bool


def validate_records(batch: bytes | memoryview, header: BatchHeader, rules: RecordRules,
                     limit: int) -> ValidatedRecords:
    """Decode every record of ``batch`` (decompressing its body) and check it as Kafka's validator does:
    the structure (INVALID_RECORD / CORRUPT_MESSAGE), consecutive offset deltas, keys of a compacted topic
    and timestamps (INVALID_TIMESTAMP, with the failing records listed)."""
    body = bytes(memoryview(batch)[HEADER_SIZE:header.size])
    if header.codec:
        try:
            body = compression.decompress(header.codec, body, limit)
        except compression.DecompressionError as exc:
            raise LogError(ErrorCode.CORRUPT_MESSAGE, str(exc)) from None
    try:
        deltas, null_keys = _walk_records(body, header.record_count)
    except (MalformedError, IndexError):
        raise LogError(ErrorCode.INVALID_RECORD, "Found invalid record structure") from None
    if header.attributes & ATTR_LOG_APPEND_TIME:  # its records have the batch's max timestamp, as Kafka reads them
        timestamps = [header.max_timestamp] * len(deltas)
    else:
        timestamps = [header.base_timestamp + delta for delta in deltas]
    errors = _record_errors(header, rules, timestamps, null_keys)
    if errors:
        if any(timestamp_error for timestamp_error, _ in errors):
            raise LogError(ErrorCode.INVALID_TIMESTAMP, "One or more records have been rejected due to invalid "
                                                        "timestamp", tuple(error for _, error in errors))
        raise LogError(ErrorCode.INVALID_RECORD, f"One or more records have been rejected due to {len(errors)} record "
                                                 "errors in total, and only showing the first three errors at most: "
                                                 f"{[error.message for _, error in errors[:3]]}",
                       tuple(error for _, error in errors))
    max_ts = max(timestamps, default=NO_TIMESTAMP)
    return ValidatedRecords(max_ts, timestamps.index(max_ts) if timestamps else 0)


def _record_errors(header: BatchHeader, rules: RecordRules, timestamps: list[int],
                   null_keys: list[int]) -> list[tuple[bool, RecordError]]:
    """(is a timestamp error, the error) of each record that fails, in record order."""
    errors: dict[int, tuple[bool, RecordError]] = {}
    if rules.compact:
        for index in null_keys:
            errors[index] = False, RecordError(index, "Compacted topic cannot accept message without key")
    low = rules.now_ms - rules.before_max_ms
    high = rules.now_ms + rules.after_max_ms
    claimed_log_append = bool(header.attributes & ATTR_LOG_APPEND_TIME)
    quick = timestamps and not claimed_log_append and low <= min(timestamps) and max(timestamps) <= high
    if rules.log_append_time and not claimed_log_append or quick:
        return [errors[i] for i in sorted(errors)]
    for index, timestamp in enumerate(timestamps):
        if index in errors:
            continue
        if not rules.log_append_time and timestamp != NO_TIMESTAMP:
            if rules.now_ms - timestamp > rules.before_max_ms or timestamp - rules.now_ms > rules.after_max_ms:
                errors[index] = True, RecordError(index, f"Timestamp {timestamp} of message with offset {index} "
                                                         f"is out of range. The timestamp should be within "
                                                         f"[{low}, {high}]")
        elif claimed_log_append:  # Kafka refuses a producer's LogAppendTime unless the check above ran
            errors[index] = True, RecordError(index, "Invalid timestamp type in message. Producer should not set "
                                                     "timestamp type to LogAppendTime.")
    return [errors[i] for i in sorted(errors)]


def _varint(body: bytes, pos: int) -> tuple[int, int]:
    """A zig-zag varint; the one- and two-byte ones (nearly all of a record's) without a loop."""
    first = body[pos]
    if first < 0x80:
        return (first >> 1) ^ -(first & 1), pos + 1
    second = body[pos + 1]
    if second < 0x80:
        raw = (first & 0x7F) | (second << 7)
        return (raw >> 1) ^ -(raw & 1), pos + 2
    return read_varint(body, pos, 10)


def _walk_records(body: bytes, count: int) -> tuple[list[int], list[int]]:
    """Check the structure of ``count`` records filling ``body`` exactly, their offset deltas 0, 1, ...;
    returns their timestamp deltas and the indexes of those with a null key. Raises MalformedError."""
    deltas: list[int] = []
    null_keys: list[int] = []
    varint = _varint
    pos, size = 0, len(body)
    for index in range(count):
        length, pos = varint(body, pos)
        end = pos + length
        if length < 0 or end > size:
            raise MalformedError("record length beyond its batch", pos)
        ts_delta, pos = varint(body, pos + 1)  # after the attributes byte
        offset_delta, pos = varint(body, pos)
        if offset_delta != index:
            raise MalformedError(f"record {index} has offset delta {offset_delta}", pos)
        key_length, pos = varint(body, pos)
        if key_length < 0:
            null_keys.append(index)
        value_length, pos = varint(body, pos + max(key_length, 0))
        headers, pos = varint(body, pos + max(value_length, 0))
        if headers:
            pos = _skip_headers(body, pos, headers)
        if pos != end:
            raise MalformedError("record fields do not fill its length", pos)
        deltas.append(ts_delta)
    if pos != size:
        raise MalformedError("Incorrect declared batch size, records still remaining in file", pos)
    return deltas, null_keys


def _skip_headers(body: bytes, pos: int, headers: int) -> int:
    if headers < 0:
        raise MalformedError("negative header count", pos)
    for _ in range(headers):
        name_length, pos = _varint(body, pos)
        if name_length < 0:
            raise MalformedError("null header key", pos)
        value_length, pos = _varint(body, pos + name_length)
        pos += max(value_length, 0)
    return pos


def stamp(batch: bytearray, base_offset: int, leader_epoch: int, max_timestamp: int, log_append_time: bool) -> None:
    """Set the leader's fields of a batch in place (base offset, partition leader epoch, the max timestamp
    and, for LogAppendTime, the timestamp type bit) and recompute its CRC, as Kafka's in-place path does."""
    _BASE_OFFSET.pack_into(batch, 0, base_offset)
    _EPOCH.pack_into(batch, 12, leader_epoch)
    attributes, last_delta, base_ts, _ = _LAST_DELTA_TS.unpack_from(batch, CRC_START)
    attributes = attributes | ATTR_LOG_APPEND_TIME if log_append_time else attributes & ~ATTR_LOG_APPEND_TIME
    _LAST_DELTA_TS.pack_into(batch, CRC_START, attributes, last_delta, base_ts, max_timestamp)
    _CRC.pack_into(batch, 17, crc32c(memoryview(batch)[CRC_START:]))


def record_timestamps(batch: bytes | memoryview, header: BatchHeader, limit: int) -> Iterator[tuple[int, int]]:
    """(offset, timestamp) of each record of a stored batch (LogAppendTime: the batch's max timestamp)."""
    body = bytes(memoryview(batch)[HEADER_SIZE:header.size])
    if header.codec:
        body = compression.decompress(header.codec, body, limit)
    deltas, _ = _walk_records(body, header.record_count)
    log_append = header.attributes & ATTR_LOG_APPEND_TIME
    for offset_delta, ts_delta in enumerate(deltas):
        timestamp = header.max_timestamp if log_append else header.base_timestamp + ts_delta
        yield header.base_offset + offset_delta, timestamp
