"""KRaft metadata records, their frame, and v2 record batches (the ``__cluster_metadata`` format).

* Metadata records (``schemas/records``, type ``metadata``) are classes like ``codec.records.TopicRecord``
  (declared in the generated ``codec.record_types``).
  In the log each is the value of a v2 record, framed as: unsigned varint frame version (1), unsigned
  varint record type (the schema's apiKey), unsigned varint record version, then the body.
* Raft control records (LeaderChangeMessage, SnapshotHeaderRecord, ...) live in control batches: the
  record key is int16 version 0 + int16 control type, the value is the body at version 0 (no frame).
* ``encode_batch``/``iter_batches`` read and write v2 RecordBatches with CRC-32C.
"""
from __future__ import annotations

import itertools
import struct
import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from .crc import crc32c

from .errors import MalformedError
from .message import Message
from .primitives import read_uvarint, read_varint, write_uvarint, write_varint
from .structs import Decoder
from .record_types import *  # noqa: F403 (the record classes: codec.records.TopicRecord and so on)
from .record_types import ALL


def metadata_type(cls: type[Message]) -> int:
    """A metadata record class's type (its schema's apiKey), which every metadata schema has."""
    if cls.API_KEY is None:
        raise TypeError(f"{cls.__name__} is not a metadata record")
    return cls.API_KEY


def latest_version(cls: type[Message]) -> int:
    """The highest version of a record schema (theirs are closed ranges)."""
    if cls.VALID_VERSIONS.high is None:
        raise TypeError(f"{cls.__name__} has an open version range")
    return cls.VALID_VERSIONS.high


METADATA_TYPES: dict[int, type[Message]] = {metadata_type(c): c for c in ALL.values() if c.SPEC.type == "metadata"}
CONTROL_TYPES: dict[int, type[Message]] = {
    c.SPEC.control_record_type: c for c in ALL.values() if c.SPEC.control_record_type is not None
}
FRAME_VERSION = 1
# record types whose body starts with the int32 partition id at every version: a bulk change's records of
# these types differ only there, and are encoded (``metadata_batch``) and decoded (``decode_frame``) once
_LEADING_PARTITION_ID = frozenset({PartitionRecord, PartitionChangeRecord})  # noqa: F405 (record_types)
_INT32 = struct.Struct(">i")
CONTROL_KEY_VERSION = 0
CONTROL_VALUE_VERSION = 0

# --- metadata record frame ------------------------------------------------------------------------


def encode_frame(record: Message, version: int | None = None) -> bytes:
    """Frame a metadata record; ``version`` defaults to the highest the schema has."""
    if version is None:
        version = latest_version(type(record))
    out = bytearray(_frame_prefix(metadata_type(type(record)), version))
    record.encode_into(out, version)
    return bytes(out)


def _frame_prefix(record_type: int, version: int) -> bytes:
    """The frame's three varints: frame version, record type, record version."""
    key = (record_type, version)
    prefix = _frame_prefixes.get(key)
    if prefix is None:
        out = bytearray()
        for value in (FRAME_VERSION, record_type, version):
            write_uvarint(out, value)
        prefix = _frame_prefixes[key] = bytes(out)
    return prefix


_frame_prefixes: dict[tuple[int, int], bytes] = {}  # (record type, version) -> the frame's three varints


class UnknownRecordType(MalformedError):
    """A framed metadata record of a type, or a version of a type, that ``schemas/records`` does not
    hold: what a newer Kafka may write. Readers may skip it (its frame says where it ends) instead of
    calling the log damaged."""

    def __init__(self, record_type: int, version: int, pos: int):
        known = METADATA_TYPES.get(record_type)
        what = (f"{known.__name__} has no version {version}" if known is not None
                else f"unknown metadata record type {record_type}")
        super().__init__(what, pos)
        self.record_type, self.version = record_type, version


_frame_decoders: dict[bytes, Decoder] = {}  # a frame's first 3 bytes (version, type, record version) -> decoder


def _frame_decoder(type_of_record: int, version: int, pos: int) -> Decoder:
    cls = METADATA_TYPES.get(type_of_record)
    if cls is None or version not in cls.VALID_VERSIONS:
        raise UnknownRecordType(type_of_record, version, pos)
    decoder = cls._decoder(version)
    return _decoding_alike(cls, decoder) if cls in _LEADING_PARTITION_ID else decoder


ALIKE_DECODES = 4096  # distinct partition records remembered per (type, version) before starting afresh


def _decoding_alike(cls: type[Message], decoder: Decoder) -> Decoder:
    """``decoder`` (of a record type whose body starts with its int32 partition id, behind a
    three-byte frame prefix) decoding each distinct rest of the frame once: a bulk change's thousands
    of records that differ only in their partition id (``metadata_batch`` wrote them so) are decoded
    once, the others are that record with their own id. Records are tuples and their fields tuples,
    UUIDs or scalars, so sharing them is safe. At most ``ALIKE_DECODES`` rests are remembered."""
    remembered: dict[bytes, Message] = {}
    partition_id = _INT32.unpack_from

    def decode(data: bytes, pos: int) -> tuple[Any, int]:
        if pos != 3 or type(data) is not bytes:
            return decoder(data, pos)
        rest = data[7:]
        found = remembered.get(rest)
        if found is not None:
            return tuple.__new__(cls, (partition_id(data, 3)[0], *found[1:])), len(data)
        record, end = decoder(data, pos)
        if end == len(data):
            if len(remembered) >= ALIKE_DECODES:
                remembered.clear()
            remembered[rest] = record
        return record, end
    return decode


def decode_frame(data: bytes) -> tuple[Message, int]:
    """Decode a framed metadata record that must fill ``data``; returns (record, record version)."""
    decoder = _frame_decoders.get(data[:3])  # the usual frame: three one-byte varints
    if decoder is not None:
        version, pos = data[2], 3
    else:
        frame, pos = read_uvarint(data, 0)
        if frame != FRAME_VERSION:
            raise MalformedError(f"unsupported metadata frame version {frame}", 0)
        record_type, pos = read_uvarint(data, pos)
        version, pos = read_uvarint(data, pos)
        decoder = _frame_decoder(record_type, version, pos)
        if pos == 3:
            _frame_decoders[data[:3]] = decoder
    record, end = decoder(data, pos)
    if end != len(data):
        raise MalformedError(f"{len(data) - end} bytes left over after {type(record).__name__}", end)
    return record, version


def control_key(record: Message) -> bytes:
    return struct.pack(">hh", CONTROL_KEY_VERSION, record.SPEC.control_record_type)


def decode_control(key: bytes | None, value: bytes | None) -> Message:
    if key is None or len(key) != 4 or value is None:
        raise MalformedError("control record without a 4-byte key and a value", 0)
    _, control_type = struct.unpack(">hh", key)
    cls = CONTROL_TYPES.get(control_type)
    if cls is None:
        raise MalformedError(f"unknown control record type {control_type}", 0)
    return cls.decode(value, CONTROL_VALUE_VERSION)


# --- v2 record batches ----------------------------------------------------------------------------

HEADER = struct.Struct(">qiibIhiqqqhii")  # the 61-byte v2 batch header
HEADER_SIZE = HEADER.size
CRC_START = 21  # the CRC covers everything from the attributes field on
ATTR_COMPRESSION_MASK = 0x07
ATTR_CONTROL = 0x20
NO_PRODUCER_ID = -1


class Record(NamedTuple):
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None


_new_record = tuple.__new__  # a Record from its fields in order, without the named tuple's keyword path


class Batch(NamedTuple):
    """One v2 record batch as read from a log: where it is, its header fields, and its records."""

    position: int  # byte position of the batch in the buffer it was read from
    size: int  # total bytes, header included
    base_offset: int
    partition_leader_epoch: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    records: tuple[Record, ...]

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & ATTR_CONTROL)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1


def encode_batch(base_offset: int, epoch: int, timestamp: int, entries: list[tuple[bytes | None, bytes | None]],
                 control: bool = False) -> bytes:
    """An uncompressed v2 batch of (key, value) records sharing one timestamp, as KRaft writes them."""
    if not entries:
        raise ValueError("a record batch needs at least one record")
    parts: list[bytes] = []
    add = parts.append
    small = _SMALL_VARINTS
    for delta, (key, value) in enumerate(entries):
        # record: attributes (0), timestamp delta (0), offset delta, key, value, header count (0)
        delta_bytes = small[delta + 1] if delta < _SMALL_LIMIT else _varint_bytes(delta)
        key_size = _varint_bytes(-1 if key is None else len(key))
        value_size = _varint_bytes(-1 if value is None else len(value))
        size = 3 + len(delta_bytes) + len(key_size) + len(value_size)
        if key is not None:
            size += len(key)
        if value is not None:
            size += len(value)
        add(small[size + 1] if size < _SMALL_LIMIT else _varint_bytes(size))
        add(b"\x00\x00")
        add(delta_bytes)
        add(key_size)
        if key is not None:
            add(key)
        add(value_size)
        if value is not None:
            add(value)
        add(b"\x00")
    return _framed_batch(base_offset, epoch, timestamp, b"".join(parts), len(entries), control)


def _framed_batch(base_offset: int, epoch: int, timestamp: int, body: bytes, count: int, control: bool) -> bytes:
    return batch_header(base_offset, epoch, timestamp, body, count, control) + body


def _varint_bytes(value: int) -> bytes:
    """A zig-zag varint as bytes; those of the first offsets and sizes are made once."""
    if -1 <= value < _SMALL_LIMIT:
        return _SMALL_VARINTS[value + 1]
    out = bytearray()
    write_varint(out, value)
    return bytes(out)


def _make_small_varints() -> list[bytes]:
    made = []
    for value in range(-1, 1 << 14):
        out = bytearray()
        write_varint(out, value)
        made.append(bytes(out))
    return made


# -1 (null) .. 16382: every offset delta of a 10,000-record batch (QuorumController.MAX_RECORDS_PER_USER_OP)
_SMALL_VARINTS = _make_small_varints()
_SMALL_LIMIT = len(_SMALL_VARINTS) - 1  # values below it are in _SMALL_VARINTS at value + 1


def batch_size_at(buf: bytes, pos: int) -> int | None:
    """The total size of the batch starting at ``pos``, or None if not even its length is there."""
    if pos + 12 > len(buf):
        return None
    return struct.unpack_from(">i", buf, pos + 8)[0] + 12


class BatchHeader(NamedTuple):
    """The header fields of a verified batch (see ``check_batch``)."""

    base_offset: int
    size: int  # total bytes, header included
    partition_leader_epoch: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    count: int  # type: ignore[assignment]  # Kafka's name for the field; it hides tuple.count


def check_batch(buf: bytes, pos: int) -> BatchHeader:
    """Verify the framing and CRC of the batch at ``pos`` without decoding its records (a log's
    recovery scan). Raises MalformedError (with the byte position) for a truncated batch, a bad magic,
    an impossible length or count, or a bad CRC."""
    if pos + HEADER_SIZE > len(buf):
        raise MalformedError("truncated record batch header", pos)
    (base_offset, length, epoch, magic, crc, attributes, last_delta, base_ts, max_ts,
     _pid, _pepoch, _seq, count) = HEADER.unpack_from(buf, pos)
    size = length + 12
    if magic != 2:
        raise MalformedError(f"record batch magic {magic} is not 2", pos)
    if length < HEADER_SIZE - 12 or count < 0:
        raise MalformedError(f"record batch length {length} or count {count} is impossible", pos)
    end = pos + size
    if end > len(buf):
        raise MalformedError(f"truncated record batch: {size} bytes declared, {len(buf) - pos} present", pos)
    if crc32c(memoryview(buf)[pos + CRC_START:end]) != crc:
        raise MalformedError(f"CRC mismatch in the record batch at offset {base_offset}", pos)
    return BatchHeader(base_offset, size, epoch, attributes, last_delta, base_ts, max_ts, count)


def read_batch(buf: bytes, pos: int) -> Batch:
    """Read and verify the batch at ``pos``. Raises MalformedError (with the byte position) for a
    truncated batch, a bad magic, a bad CRC or undecodable records."""
    header = check_batch(buf, pos)
    body = buf[pos + HEADER_SIZE:pos + header.size]
    compression = header.attributes & ATTR_COMPRESSION_MASK
    if compression == 1:
        body = zlib.decompress(body, wbits=31)
    elif compression:
        raise MalformedError(f"record batch compression {compression} is not supported", pos)
    return Batch(pos, header.size, header.base_offset, header.partition_leader_epoch, header.attributes,
                 header.last_offset_delta, header.base_timestamp, header.max_timestamp,
                 _read_records(body, header.count, header.base_offset, header.base_timestamp, pos))


def _read_records(body: bytes, count: int, base_offset: int, base_ts: int, batch_pos: int) -> tuple[Record, ...]:
    """The records of a batch body. This is the hot loop of every replay, so the varints, nearly all one
    or two bytes long in a metadata log, are decoded inline (zig-zag: (raw >> 1) ^ -(raw & 1)); longer
    ones go through ``read_varint``."""
    records = []
    p = 0
    size = len(body)
    try:
        for _ in range(count):
            b = body[p]
            if b < 0x80:
                length, p = (b >> 1) ^ -(b & 1), p + 1
            elif body[p + 1] < 0x80:
                raw = (b & 0x7F) | (body[p + 1] << 7)
                length, p = (raw >> 1) ^ -(raw & 1), p + 2
            else:
                length, p = read_varint(body, p)
            end = p + length
            if length < 0 or end > size:
                raise MalformedError("record length beyond its batch", batch_pos)
            b = body[p + 1]  # after the attributes byte: the timestamp delta
            if b < 0x80:
                ts_delta, p = (b >> 1) ^ -(b & 1), p + 2
            else:
                ts_delta, p = read_varint(body, p + 1, 10)
            b = body[p]
            if b < 0x80:
                offset_delta, p = (b >> 1) ^ -(b & 1), p + 1
            elif body[p + 1] < 0x80:
                raw = (b & 0x7F) | (body[p + 1] << 7)
                offset_delta, p = (raw >> 1) ^ -(raw & 1), p + 2
            else:
                offset_delta, p = read_varint(body, p)
            if body[p] == 1:  # the null key of every metadata record
                key, p = None, p + 1
            else:
                n, p = read_varint(body, p)
                key, p = (None, p) if n < 0 else (body[p:p + n], p + n)
            b = body[p]
            if b < 0x80:
                n, p = (b >> 1) ^ -(b & 1), p + 1
            elif body[p + 1] < 0x80:
                raw = (b & 0x7F) | (body[p + 1] << 7)
                n, p = (raw >> 1) ^ -(raw & 1), p + 2
            else:
                n, p = read_varint(body, p)
            value, p = (None, p) if n < 0 else (body[p:p + n], p + n)
            if body[p] == 0:
                headers, p = 0, p + 1
            else:
                headers, p = read_varint(body, p)
            if headers != 0 or p != end:
                raise MalformedError("record headers are not supported in metadata records", batch_pos)
            records.append(_new_record(Record, (base_offset + offset_delta, base_ts + ts_delta, key, value)))
    except MalformedError as exc:
        raise MalformedError(exc.what, batch_pos) from None
    except IndexError:
        raise MalformedError("truncated record", batch_pos) from None
    if p != size:
        raise MalformedError("bytes left over after the records of a batch", batch_pos)
    return tuple(records)


def iter_batches(buf: bytes, pos: int = 0) -> Iterator[Batch]:
    """Yield every batch from ``pos`` to the end of ``buf``; stops with MalformedError at damage."""
    while pos < len(buf):
        batch = read_batch(buf, pos)
        yield batch
        pos += batch.size


def decode_value(batch: Batch, record: Record) -> Message:
    """The metadata or control record carried by ``record`` of ``batch``."""
    if batch.is_control:
        return decode_control(record.key, record.value)
    if record.value is None:
        raise MalformedError("metadata record without a value", batch.position)
    try:
        return decode_frame(record.value)[0]
    except MalformedError as exc:
        raise MalformedError(f"record at offset {record.offset}: {exc.what}", batch.position) from None


def iter_records(buf: bytes, pos: int = 0) -> Iterator[tuple[int, int, int, Message]]:
    """Yield (offset, epoch, timestamp, record object) for every record of every batch."""
    for batch in iter_batches(buf, pos):
        for record in batch.records:
            yield record.offset, batch.partition_leader_epoch, record.timestamp, decode_value(batch, record)


def metadata_batch(base_offset: int, epoch: int, timestamp: int,
                   records: Sequence[tuple[Message, int | None]]) -> bytes:
    """A batch of framed metadata records, each given as (record, version or None for the latest):
    the bytes ``encode_batch`` makes of their frames (null keys), built without them."""
    return _framed_batch(base_offset, epoch, timestamp, metadata_records(records), len(records), False)


def metadata_records(records: Sequence[tuple[Message, int | None]]) -> bytes:
    """The records part of ``metadata_batch`` (what follows the batch header; offset deltas from 0).

    A bulk partition change writes thousands of records that differ only in their partition id, the
    first field of the body (an int32, at every version): each distinct rest is encoded once, with the
    record's bytes around it (the null key, the value's size, the frame prefix before the id; the rest
    and the header count after), and each record is its size and offset delta, then that with its own
    four id bytes spliced in."""
    if not records:
        raise ValueError("a record batch needs at least one record")
    parts: list[bytes] = []
    add = parts.append
    small, limit = _SMALL_VARINTS, _SMALL_LIMIT
    pack_id = _INT32.pack
    # (type, version, fields after the id) -> the bytes around the id: its record's starts by the offset
    # delta's length, the head and the tail
    shared: dict[tuple[type, int | None, tuple[Any, ...]], tuple[tuple[bytes, ...], bytes, bytes]] = {}
    last_kind = last_version = last_rest = None
    around: tuple[tuple[bytes, ...], bytes, bytes] = ((), b"", b"")
    for delta, (record, version) in enumerate(records):
        delta_bytes = small[delta + 1] if delta < limit else _varint_bytes(delta)
        kind = type(record)
        if kind in _LEADING_PARTITION_ID:
            rest = record[1:]
            # a bulk change's records come in runs with the same field objects: compared with the last
            # record's (equality meets identical objects) before hashing
            if rest != last_rest or kind is not last_kind or version != last_version:
                key = (kind, version, rest)
                last_kind, last_version, last_rest = key
                found = shared.get(key)
                if found is not None:
                    around = found
                else:
                    frame = encode_frame(record, version)
                    at = len(_frame_prefix(metadata_type(kind), latest_version(kind) if version is None else version))
                    head = b"\x01" + _varint_bytes(len(frame)) + frame[:at]
                    size = len(head) + len(frame) - at + 3  # without the offset delta
                    # by the offset delta's length (1 to 5 bytes: a controlled shutdown at millions of
                    # partitions writes batches of over 2^20 records): the record's size, attributes and
                    # timestamp delta (0)
                    starts = (b"", *(_varint_bytes(size + n) + b"\x00\x00" for n in (1, 2, 3, 4, 5)))
                    around = shared[key] = (starts, head, frame[at + 4:] + b"\x00")
            # start, offset delta, head, the id, tail (headers count 0 last)
            add(around[0][len(delta_bytes)])
            add(delta_bytes)
            add(around[1])
            add(pack_id(record[0]))
            add(around[2])
        else:
            frame = encode_frame(record, version)
            value_size = _varint_bytes(len(frame))
            size = 4 + len(delta_bytes) + len(value_size) + len(frame)
            add(small[size + 1] if size < limit else _varint_bytes(size))
            add(b"\x00\x00")
            add(delta_bytes)
            add(b"\x01")
            add(value_size)
            add(frame)
            add(b"\x00")
    return b"".join(parts)


SNAPSHOT_BATCH_RECORDS = 1024  # SnapshotEmitter.DEFAULT_BATCH_SIZE
SNAPSHOT_BATCH_BYTES = 8 << 20  # KafkaRaftClient.MAX_BATCH_SIZE_BYTES


def metadata_bodies(records: Iterable[tuple[Message, int | None]], max_records: int = SNAPSHOT_BATCH_RECORDS,
                    max_bytes: int = SNAPSHOT_BATCH_BYTES) -> Iterator[tuple[int, bytes]]:
    """(record count, ``metadata_records`` bytes) of consecutive batches holding ``records`` ((record,
    version) pairs) in order, each of at most ``max_records`` records and, header included,
    ``max_bytes`` bytes (a batch over it is split in halves; a record over it alone has a batch of its
    own), as a snapshot's data batches are cut."""
    remaining = iter(records)
    while chunk := list(itertools.islice(remaining, max_records)):
        yield from _bodies_within(chunk, max_bytes)


def _bodies_within(records: list[tuple[Message, int | None]], max_bytes: int) -> Iterator[tuple[int, bytes]]:
    body = metadata_records(records)
    if HEADER_SIZE + len(body) <= max_bytes or len(records) == 1:
        yield len(records), body
    else:
        half = len(records) // 2
        yield from _bodies_within(records[:half], max_bytes)
        yield from _bodies_within(records[half:], max_bytes)


def batch_header(base_offset: int, epoch: int, timestamp: int, body: bytes, count: int,
                 control: bool = False) -> bytes:
    """The v2 batch header (its CRC included) that goes before ``body``, the batch's ``count`` records
    (``metadata_records``): a batch is the two concatenated."""
    attributes = ATTR_CONTROL if control else 0
    header = HEADER.pack(base_offset, HEADER_SIZE - 12 + len(body), epoch, 2, 0, attributes, count - 1,
                         timestamp, timestamp, NO_PRODUCER_ID, -1, -1, count)
    crc = crc32c(body, crc32c(header[CRC_START:]))
    return header[:17] + struct.pack(">I", crc) + header[CRC_START:]


def control_batch(base_offset: int, epoch: int, timestamp: int, records: list[Message]) -> bytes:
    return encode_batch(base_offset, epoch, timestamp,
                        [(control_key(r), r.encode(CONTROL_VALUE_VERSION)) for r in records], control=True)
