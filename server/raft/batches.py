"""The record batches a ``RaftLog`` keeps, and the core's entries that point at them.

The core holds one ``Entry`` per offset; the driver makes each entry's data the batch it lies in
(``LogBatch``), so a Fetch is answered with whole batches and every log ends between batches. The
KRaftVersionRecord and VotersRecord control records are the exception: their entries carry them
decoded (the core's voter history follows them), as a ``ControlEntry`` that keeps its batch.
"""
from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from kraftwire.codec import MalformedError, records
from kraftwire.codec.message import Message
from kraftwire.codec.records import (ATTR_CONTROL, LeaderChangeMessage, check_batch, decode_control, decode_frame,
                                     read_batch)

from . import voters as voter_sets
from .core import Entry

VOTER_CONTROL_RECORDS = (records.KRaftVersionRecord, records.VotersRecord)  # control record types 5 and 6
VOTER_DATA = (voter_sets.KRaftVersionRecord, voter_sets.VotersRecord)


def metadata_frame(value: bytes | None) -> bytes:
    """A metadata record's framed value (a record without one is malformed)."""
    if value is None:
        raise MalformedError("a metadata record without a value", 0)
    return value


@dataclass(eq=False)
class LogBatch:
    """One record batch of the log: its offsets, bytes and epoch, and (decoded on demand) its records."""
    base: int
    last: int
    data: bytes
    epoch: int
    timestamp: int
    control: bool
    records: list[tuple[int, Message]] | None = None  # a local append's until committed; else decoded when read
    future: asyncio.Future[int] | None = None  # a local append's, resolved once committed

    def decoded(self) -> list[tuple[int, Message]]:
        if self.records is not None:
            return self.records
        batch = read_batch(self.data, 0)
        if batch.is_control:
            return []
        return [(offset, decode_frame(metadata_frame(value))[0]) for offset, _ts, _key, value in batch.records]


@dataclass(frozen=True)
class ControlEntry(Entry):
    """A KRaftVersionRecord or VotersRecord entry read from a log or a Fetch answer, with its batch."""
    batch: LogBatch | None = None


def logged_batch(entry: Entry) -> LogBatch | None:
    """The batch an entry read from a log (or a local metadata append) lies in; None for the core's own
    control entries, whose batches the leader builds."""
    if isinstance(entry.data, LogBatch):
        return entry.data
    return entry.batch if isinstance(entry, ControlEntry) else None


def control_record(data: object, voter_ids: tuple[int, ...], node_id: int) -> Message:
    """The control record of a core control entry: its LeaderChange, KRaftVersionRecord or VotersRecord."""
    if isinstance(data, VOTER_DATA):
        return voter_sets.to_control_record(data)
    voters = [LeaderChangeMessage.Voter(voter_id=v) for v in voter_ids]
    return LeaderChangeMessage(version=0, leader_id=node_id, voters=voters, granting_voters=voters)


def past_batch(entries: Sequence[Entry], i: int, offset: int, batch: LogBatch) -> int:
    """The index past the entries of ``batch`` from ``entries[i]`` on (``entries`` start at ``offset``):
    a batch's entries are consecutive, so a 10,000-record batch is stepped over at once, checked by
    the identity of its last entry's batch there (else one entry at a time)."""
    end = min(batch.last - offset + 1, len(entries))
    if end > i + 1 and logged_batch(entries[end - 1]) is batch:
        return end
    return i + 1


def batches_from(data: bytes) -> list[LogBatch]:
    """The record batches of a Fetch answer (or a log), as the log keeps them: each batch's framing and
    CRC are checked here, as Kafka's follower checks what it appends; its records are read when they
    are used (committed, or a control batch's entries)."""
    found, position = [], 0
    while position < len(data):
        batch = check_batch(data, position)
        found.append(LogBatch(batch.base_offset, batch.base_offset + batch.last_offset_delta,
                              bytes(data[position:position + batch.size]), batch.partition_leader_epoch,
                              batch.base_timestamp, bool(batch.attributes & ATTR_CONTROL)))
        position += batch.size
    return found


def entries_of(batch: LogBatch) -> list[Entry]:
    """The core's entries for a batch read from the log or a Fetch answer, one per offset. An entry's
    data is its batch, except for KRaftVersion and Voters control records, whose entries carry them
    decoded (the core's voter history follows them), as ``ControlEntry`` holding their batch."""
    if not batch.control:
        return [Entry(batch.epoch, batch)] * (batch.last - batch.base + 1)
    entries: list[Entry] = []
    for _offset, _timestamp, key, value in read_batch(batch.data, 0).records:
        record = decode_control(key, value)
        if isinstance(record, VOTER_CONTROL_RECORDS):
            entries.append(ControlEntry(batch.epoch, voter_sets.from_control_record(record), True, batch))
        else:
            entries.append(Entry(batch.epoch, batch, True))
    return entries


def decode_records(data: bytes) -> list[Entry]:
    """The core's entries for the batches of a Fetch answer."""
    entries: list[Entry] = []
    for batch in batches_from(data):
        entries.extend(entries_of(batch))
    return entries
