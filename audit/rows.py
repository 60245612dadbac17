"""The audit's rows: the tables' columns and order, the window they report, the sink the replays
fill (``Output``), and the ``records`` row of a decoded record. Shared by the readers (findings are
``violation`` rows) and both replays; knows nothing of replay rules."""
from __future__ import annotations

import gc
import json
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from kraftwire.codec import MalformedError
from kraftwire.codec import records as rec
from kraftwire.codec.message import Message

Raw = tuple  # (offset, timestamp, epoch, control type or -1, from a snapshot, value bytes)

COLUMNS = {
    "records": ("offset", "timestamp", "epoch", "snapshot", "control", "record_type", "version", "topic",
                "topic_id", "partition", "fields"),
    "partition_states": ("offset", "timestamp", "topic", "topic_id", "partition", "record_type", "replicas",
                         "isr", "leader", "leader_epoch", "partition_epoch", "adding", "removing",
                         "directories", "leader_recovery_state"),
    "reassignments": ("topic", "topic_id", "partition", "start_offset", "start_time", "end_offset", "end_time",
                      "outcome", "original_replicas", "target_replicas", "final_replicas", "adding", "removing",
                      "rf_before", "rf_after", "duration_ms"),
    "rf_changes": ("topic", "topic_id", "partition", "offset", "timestamp", "rf_before", "rf_after",
                   "replicas_before", "replicas_after", "reassignment_start_offset", "reassignment_outcome"),
    "throttles": ("resource_type", "resource_name", "config", "value", "set_offset", "set_time",
                  "removed_offset", "removed_time", "removed_by", "reassignments", "last_reassignment_end_time",
                  "lingered_ms", "left_behind"),
    "violations": ("offset", "timestamp", "kind", "topic", "topic_id", "partition", "broker", "detail", "file",
                   "position"),
    "brokers": ("offset", "timestamp", "broker_id", "event", "broker_epoch", "fenced", "in_controlled_shutdown",
                "rack", "log_dirs", "incarnation_id"),
    "directories": ("offset", "timestamp", "broker_id", "directory", "event", "cause"),
    "under_replicated": ("offset", "timestamp", "under_replicated", "offline"),
}
# written by whoever replays the partitions (each Spark task its part); the others by the driver
PARTITION_TABLES = ("records", "partition_states", "reassignments", "rf_changes")
_R = {name: {c: i for i, c in enumerate(cols)} for name, cols in COLUMNS.items()}
_NONE_FIRST = -1  # offsets and partitions are never negative
ROW_ORDER = {  # the order tables are shown and compared in
    "violations": lambda r: (_NONE_FIRST if r[0] is None else r[0], r[2], r[3] or "",
                             _NONE_FIRST if r[5] is None else r[5]),
    "reassignments": lambda r: (r[3], r[0] or "", r[2]),
    "rf_changes": lambda r: (r[3], r[0] or "", r[2]),
}


def violation(offset: int | None, timestamp: int | None, kind: str, *, topic: str | None = None,
              topic_id: str | None = None, partition: int | None = None, broker: int | None = None,
              detail: str | None = None, file: str | None = None, position: int | None = None) -> tuple[Any, ...]:
    return (offset, timestamp, kind, topic, topic_id, partition, broker, detail, file, position)


@dataclass(frozen=True)
class Window:
    """The part of the log the tables report: offsets, or timestamps in ms, both ends inclusive.
    The replay always starts at the beginning; only what is reported is cut."""

    lo: int | None = None
    hi: int | None = None
    by_time: bool = False

    def contains(self, offset: int, timestamp: int | None) -> bool:
        value = timestamp if self.by_time else offset
        if value is None:
            return True
        return (self.lo is None or value >= self.lo) and (self.hi is None or value <= self.hi)

    def overlaps(self, start_offset: int, start_time: int | None, end_offset: int | None,
                 end_time: int | None) -> bool:
        """Whether [start, end] meets the window; end None means still open."""
        start, end = (start_time, end_time) if self.by_time else (start_offset, end_offset)
        if self.hi is not None and start is not None and start > self.hi:
            return False
        return self.lo is None or end is None or end >= self.lo


EVERYTHING = Window()


class Output:
    """Rows per table, as tuples in ``COLUMNS`` order; the caller drains the big tables as they grow."""

    def __init__(self, window: Window = EVERYTHING) -> None:
        self.window = window
        self.rows: dict[str, list[tuple[Any, ...]]] = {name: [] for name in COLUMNS}
        self.urp: dict[int, list[int]] = {}  # timestamp -> [last offset, change of under-replicated, of offline]
        self.record_types: Counter[str] = Counter()

    def count_urp(self, offset: int, timestamp: int, under: int, offline: int) -> None:
        entry = self.urp.get(timestamp)
        if entry is None:
            self.urp[timestamp] = [offset, under, offline]
        else:
            entry[0] = max(entry[0], offset)
            entry[1] += under
            entry[2] += offline

    def drain(self, table: str) -> list[tuple[Any, ...]]:
        rows = self.rows[table]
        self.rows[table] = []
        return rows


@contextmanager
def few_collections() -> Iterator[None]:
    """Run with Python's cyclic garbage collector seldom: a replay allocates millions of short-lived
    tuples and makes no cycles, and with the default thresholds the collector keeps rescanning the
    long-lived partition states (~15 % of the time on a 1M-record log)."""
    thresholds = gc.get_threshold()
    gc.set_threshold(100_000, 50, 100)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


# --- decoding ---------------------------------------------------------------------------------------


def decode(raw: Raw) -> tuple[Message, int]:
    """(record object, record version) of a raw record; MalformedError if it does not decode."""
    control_type, value = raw[3], raw[5]
    if value is None:
        raise MalformedError("record without a value", 0)
    if control_type < 0:
        return rec.decode_frame(value)
    cls = rec.CONTROL_TYPES.get(control_type)
    if cls is None:
        raise MalformedError(f"unknown control record type {control_type}", 0)
    return cls.decode(value, rec.CONTROL_VALUE_VERSION), rec.CONTROL_VALUE_VERSION


_ENCODE = json.JSONEncoder(separators=(",", ":"), check_circular=False, default=str).encode
_NESTED = {cls for cls in rec.ALL.values() if any(f.struct is not None for f in cls._spec.fields)}


# What the audit's tables never show of a record (as the control plane's and ``log dump``'s rendering,
# server/metadata/redaction.py, which the audit may not import): a SCRAM credential's salt, StoredKey and
# ServerKey, enough for an offline attack on the password, and ServerKey lets anyone pose as the server.
# The user, mechanism and iterations stay. Config values are shown: judging which are passwords needs the
# broker's config catalogue (README, the audit's differences).
REDACTED = "(redacted)"
SECRET_FIELDS: dict[type, tuple[str, ...]] = {rec.UserScramCredentialRecord: ("salt", "stored_key", "server_key")}


def fields_json(record: Message) -> str:
    """The record's fields as a JSON object (snake_case names, UUIDs as strings), secrets redacted."""
    if type(record) in _NESTED or record.unknown_tagged_fields:
        values = record.to_dict()
    else:
        values = dict(zip(record._fields, record))
    for name in SECRET_FIELDS.get(type(record), ()):
        values[name] = REDACTED
    if not values["unknown_tagged_fields"]:
        del values["unknown_tagged_fields"]
    return _ENCODE(values)


def partition_fields_json(record: Message, topic_id_text: str, directory_texts: tuple[str, ...] | None) -> str:
    """``fields_json`` of a PartitionRecord/PartitionChangeRecord, with its ids already as text."""
    values = dict(zip(record._fields, record))
    values["topic_id"] = topic_id_text
    if directory_texts is not None:
        values["directories"] = directory_texts
    if record.unknown_tagged_fields:
        return fields_json(record)
    del values["unknown_tagged_fields"]
    return _ENCODE(values)


def record_row(raw: Raw, record: Message, version: int, topic: str | None = None, topic_id: str | None = None,
               partition: int | None = None, fields: str | None = None) -> tuple[Any, ...]:
    return (raw[0], raw[1], raw[2], raw[4], raw[3] >= 0, type(record).__name__, version, topic, topic_id,
            partition, fields_json(record) if fields is None else fields)


def undecodable(out: Output, raw: Raw, exc: MalformedError, *, topic_id: str | None = None,
                partition: int | None = None) -> None:
    """A record that does not decode is a violation, unless it is well framed and only of a type (or
    version) the schemas lack, as a newer Kafka writes: that one is counted, not judged."""
    if isinstance(exc, rec.UnknownRecordType):
        out.record_types[f"UnknownRecordType{exc.record_type}v{exc.version}"] += 1
        return
    if out.window.contains(raw[0], raw[1]):
        out.rows["violations"].append(violation(raw[0], raw[1], "undecodable_record", detail=exc.what,
                                                topic_id=topic_id, partition=partition))



def in_window(table: str, rows: list[tuple], window: Window) -> list[tuple]:
    """The rows of a small table that fall in the window (reassignments: those that overlap it)."""
    if window == EVERYTHING:
        return rows
    c = _R[table]
    if table == "reassignments":
        return [r for r in rows if window.overlaps(r[c["start_offset"]], r[c["start_time"]], r[c["end_offset"]],
                                                   r[c["end_time"]])]
    return [r for r in rows if window.contains(r[c["offset"]], r[c["timestamp"]])]
