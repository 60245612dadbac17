"""Reading one split: its v2 batches, verified with the codec, as raw records keyed for the replay.

A raw record is ``(offset, timestamp, epoch, control type or -1, from a snapshot, value bytes)``; its
value is decoded later, by whoever replays it. The key is what the replay groups by: the 20 bytes
``PartitionId + TopicId`` that open both PartitionRecord and PartitionChangeRecord bodies (right after
the 3-byte frame), or ``GLOBAL`` for every other record, control records included.

Damage never stops an audit; it becomes a finding (a violation row) with file, byte position and offset:
* a batch whose CRC, magic or records do not check out is skipped when its length is plausible
  (``corrupt_batch``); otherwise the rest of the split is unreadable;
* a batch cut short by the end of the file is ``torn_batch`` (an interrupted write);
* offsets that jump inside a split are ``offset_gap``.
Batches wholly outside the split's offset range are skipped unread (folded into the snapshot, or
read from another copy).
"""
from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from kraftwire.codec import MalformedError
from kraftwire.codec import records as rec

from . import storage
from .rows import Raw, violation
from .splits import Split

GLOBAL = b""
PARTITION_RECORD_TYPES = frozenset({rec.PartitionRecord.API_KEY, rec.PartitionChangeRecord.API_KEY})
_FRAME_BYTES = 3  # frame version, record type and record version: one uvarint byte each here
KEY_BYTES = 4 + 16
_KEY_END = _FRAME_BYTES + KEY_BYTES
_OFFSETS = struct.Struct(">qiibIhi")  # base offset ... last offset delta, unverified
_CONTROL_TYPE = struct.Struct(">hh")


@dataclass
class SplitStats:
    """What a split held: its offset range, last timestamp, record count and findings."""

    index: int
    name: str
    first_offset: int | None = None
    next_offset: int | None = None
    min_timestamp: int | None = None
    max_timestamp: int | None = None
    records: int = 0
    findings: list[tuple[Any, ...]] = field(default_factory=list)


TOPIC_RECORD_TYPES = frozenset({rec.TopicRecord.API_KEY, rec.RemoveTopicRecord.API_KEY})


def is_topic_record(raw: Raw) -> bool:
    """Whether a raw record is a TopicRecord or RemoveTopicRecord, without decoding it."""
    value = raw[5]
    return raw[3] < 0 and len(value) > 1 and value[0] == rec.FRAME_VERSION and value[1] in TOPIC_RECORD_TYPES


def partition_key(value: bytes | None) -> bytes:
    if (value is not None and len(value) >= _KEY_END and value[0] == rec.FRAME_VERSION
            and value[1] in PARTITION_RECORD_TYPES):
        return value[_FRAME_BYTES:_KEY_END]
    return GLOBAL


def read_split(split: Split, stats: SplitStats) -> Iterator[tuple[bytes, Raw]]:
    """(key, raw record) for every record of the split in log order; findings go to ``stats``."""
    buf = storage.read_bytes(split.uri, split.start, split.end)
    snapshot = split.snapshot_end is not None
    lo, hi = split.lo, split.hi
    pos, end = 0, len(buf)
    expected = None
    while pos < end:
        where = split.start + pos
        size = rec.batch_size_at(buf, pos)
        if size is None or pos + size > end:
            _damaged(split, stats, where, expected, buf, pos, size)
            return
        base, _, epoch, _, _, _, last_delta = _OFFSETS.unpack_from(buf, pos)
        if size < rec.HEADER_SIZE:
            stats.findings.append(violation(base, None, "corrupt_batch", file=split.name, position=where, detail=(
                f"batch length {size - 12} is impossible; the rest of the split is unreadable")))
            return
        if not snapshot and (base + last_delta < lo or (hi is not None and base >= hi)):
            pos += size
            continue
        try:
            batch = rec.read_batch(buf, pos)
            control_types = [_control_type(r.key, pos) for r in batch.records] if batch.is_control else None
        except MalformedError as exc:
            _unreadable(split, stats, where, base, last_delta, exc)
            pos += size
            expected = None
            continue
        if not snapshot:
            if expected is not None and batch.base_offset != expected:
                stats.findings.append(violation(expected, batch.base_timestamp, "offset_gap", file=split.name,
                                                position=where, detail=gap_detail(expected, batch.base_offset)))
            expected = batch.next_offset
        yield from _batch_records(split, stats, batch, epoch, control_types)
        pos += size


def _unreadable(split: Split, stats: SplitStats, where: int, base: int, last_delta: int,
                exc: MalformedError) -> None:
    """A batch whose length is plausible but whose CRC, magic or records do not check out: skipped."""
    stats.findings.append(violation(base, None, "corrupt_batch", file=split.name, position=where,
                                    detail=f"offsets {base}..{base + last_delta} unreadable: {exc.what}"))
    if split.snapshot_end is None:  # the offsets as claimed, so that no gap is reported for them as well
        if stats.first_offset is None:
            stats.first_offset = base
        stats.next_offset = base + last_delta + 1


def _batch_records(split: Split, stats: SplitStats, batch: rec.Batch, epoch: int,
                   control_types: list[int] | None) -> Iterator[tuple[bytes, Raw]]:
    """(key, raw record) for the records of a verified batch within the split's offsets (all of a
    snapshot's, which stand at the offset before its end)."""
    if stats.max_timestamp is None or batch.max_timestamp > stats.max_timestamp:
        stats.max_timestamp = batch.max_timestamp
    if stats.min_timestamp is None or batch.base_timestamp < stats.min_timestamp:
        stats.min_timestamp = batch.base_timestamp
    lo, hi = split.lo, split.hi
    snapshot_offset = None if split.snapshot_end is None else split.snapshot_end - 1
    snapshot = snapshot_offset is not None
    for i, record in enumerate(batch.records):
        offset = record.offset
        if snapshot_offset is not None:
            offset = snapshot_offset
        elif offset < lo or (hi is not None and offset >= hi):
            continue
        else:
            if stats.first_offset is None:
                stats.first_offset = offset
            stats.next_offset = offset + 1
        stats.records += 1
        if control_types is None:
            yield partition_key(record.value), (offset, record.timestamp, epoch, -1, snapshot, record.value)
        else:
            yield GLOBAL, (offset, record.timestamp, epoch, control_types[i], snapshot, record.value)


def gap_detail(expected: int, found: int) -> str:
    if found > expected:
        return f"offsets {expected}..{found - 1} are missing"
    return f"offset {found} follows {expected - 1}: offsets go back"


def _control_type(key: bytes | None, position: int) -> int:
    if key is None or len(key) != 4:
        raise MalformedError("control record without a 4-byte key", position)
    return _CONTROL_TYPE.unpack(key)[1]


def _damaged(split: Split, stats: SplitStats, where: int, expected: int | None, buf: bytes, pos: int,
             size: int | None) -> None:
    present = len(buf) - pos
    offset = _OFFSETS.unpack_from(buf, pos)[0] if present >= _OFFSETS.size else expected
    if split.file_end:
        declared = "its header" if size is None else f"{size} bytes"
        stats.findings.append(violation(offset, None, "torn_batch", file=split.name, position=where, detail=(
            f"the file ends {present} bytes into a batch that needs {declared}: an interrupted write")))
    else:
        stats.findings.append(violation(offset, None, "corrupt_batch", file=split.name, position=where, detail=(
            f"batch length {size} runs past the next indexed batch; the rest of the split is unreadable")))
