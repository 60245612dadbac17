"""The audit's replay of a KRaft metadata log: pure Python on decoded records, no Spark.

Two kinds of state machine, fed raw records (see ``audit.reader``) in log order:

* ``PartitionReplay``, one per (topic id, partition): PartitionRecord and PartitionChangeRecord with
  Kafka's replay rules (``PartitionRegistration.merge``): absent (null) lists are unchanged; the
  leader epoch goes up exactly when the record carries a Leader other than -2; the partition epoch
  goes up on every change; directories that end up empty or all MIGRATING mean MIGRATING for every
  replica. It checks the invariants after every record, follows reassignments and RF changes, and
  counts under-replicated (ISR smaller than replicas minus removing, as a broker's metric does) and
  leaderless partitions.
* ``GlobalReplay``: everything else: topics (names, deletions), broker registrations, fencing,
  online directories, throttle configs, control records.

A partition's replay needs only its own records, its topic's name and its topic's deletion offset
(``Topics``), so the partitions can be replayed apart, e.g. one group per Spark task, once the global
records are replayed: the single-process run and the Spark job feed the same classes and get the
same rows. ``throttle_rows`` and ``under_replicated_rows`` join the two at the end.

Reassignments as seen in the log (reference §2.3-2.6): one starts when AddingReplicas/RemovingReplicas
become non-empty (original = the replicas before, target = replicas minus removing); a record that
changes replicas, adding or removing while one is in flight supersedes it (a new one starts from replicas
minus adding); one ends when both lists are empty again: ``completed`` when the replicas are the replicas
minus removing of the state before, ``cancelled`` when they are its replicas minus adding (Kafka's
revert, which after a superseding request may differ from the original). A replica change with no
reassignment in flight (a removal or reorder that completed at once) is a reassignment that starts and
completes at the same record. One still in flight at the end of the log is ``running``; one whose topic
was deleted is ``deleted``.

Violations are reported when they appear (a state that stays broken is reported once, at the record
that broke it) with the offset and a detail.
"""
from __future__ import annotations

import gc
import heapq
import json
import uuid
from bisect import bisect_left, bisect_right
from itertools import accumulate
from operator import itemgetter
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass

from kraftwire.codec import MalformedError
from kraftwire.codec import records as rec

Raw = tuple  # (offset, timestamp, epoch, control type or -1, from a snapshot, value bytes)

MIGRATING = uuid.UUID(int=0)
LEADER_UNCHANGED = -2
NEVER = -1 << 63  # below any timestamp
NO_LEADER = -1
TOPIC_RESOURCE = 2
BROKER_RESOURCE = 4
THROTTLE_RATES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
THROTTLED_REPLICAS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")

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


def violation(offset, timestamp, kind, *, topic=None, topic_id=None, partition=None, broker=None, detail=None,
              file=None, position=None) -> tuple:
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

    def overlaps(self, start_offset, start_time, end_offset, end_time) -> bool:
        """Whether [start, end] meets the window; end None means still open."""
        start, end = (start_time, end_time) if self.by_time else (start_offset, end_offset)
        if self.hi is not None and start is not None and start > self.hi:
            return False
        return self.lo is None or end is None or end >= self.lo


EVERYTHING = Window()


class Output:
    """Rows per table, as tuples in ``COLUMNS`` order; the caller drains the big tables as they grow."""

    def __init__(self, window: Window = EVERYTHING):
        self.window = window
        self.rows: dict[str, list] = {name: [] for name in COLUMNS}
        self.urp: dict[int, list] = {}  # timestamp -> [last offset, change of under-replicated, of offline]
        self.record_types: Counter = Counter()

    def count_urp(self, offset: int, timestamp: int, under: int, offline: int) -> None:
        entry = self.urp.get(timestamp)
        if entry is None:
            self.urp[timestamp] = [offset, under, offline]
        else:
            entry[0] = max(entry[0], offset)
            entry[1] += under
            entry[2] += offline

    def drain(self, table: str) -> list:
        rows = self.rows[table]
        self.rows[table] = []
        return rows


@contextmanager
def few_collections():
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


def decode(raw: Raw):
    """(record object, record version) of a raw record; MalformedError if it does not decode."""
    control_type = raw[3]
    if control_type < 0:
        return rec.decode_frame(raw[5])
    cls = rec.CONTROL_TYPES.get(control_type)
    if cls is None:
        raise MalformedError(f"unknown control record type {control_type}", 0)
    return cls.decode(raw[5], rec.CONTROL_VALUE_VERSION), rec.CONTROL_VALUE_VERSION


_ENCODE = json.JSONEncoder(separators=(",", ":"), check_circular=False, default=str).encode
_NESTED = {cls for cls in rec.ALL.values() if any(f.struct is not None for f in cls._spec.fields)}


def fields_json(record) -> str:
    """The record's fields as a JSON object (snake_case names, UUIDs as strings)."""
    if type(record) in _NESTED or record.unknown_tagged_fields:
        values = record.to_dict()
    else:
        values = dict(zip(record._fields, record))
    if not values["unknown_tagged_fields"]:
        del values["unknown_tagged_fields"]
    return _ENCODE(values)


def partition_fields_json(record, topic_id_text: str, directory_texts: tuple | None) -> str:
    """``fields_json`` of a PartitionRecord/PartitionChangeRecord, with its ids already as text."""
    values = dict(zip(record._fields, record))
    values["topic_id"] = topic_id_text
    if directory_texts is not None:
        values["directories"] = directory_texts
    if record.unknown_tagged_fields:
        return fields_json(record)
    del values["unknown_tagged_fields"]
    return _ENCODE(values)


def record_row(raw: Raw, record, version: int, topic=None, topic_id=None, partition=None, fields=None) -> tuple:
    return (raw[0], raw[1], raw[2], raw[4], raw[3] >= 0, type(record).__name__, version, topic, topic_id,
            partition, fields_json(record) if fields is None else fields)


def _undecodable(out: Output, raw: Raw, exc: MalformedError, **where) -> None:
    """A record that does not decode is a violation, unless it is well framed and only of a type (or
    version) the schemas lack, as a newer Kafka writes: that one is counted, not judged."""
    if isinstance(exc, rec.UnknownRecordType):
        out.record_types[f"UnknownRecordType{exc.record_type}v{exc.version}"] += 1
        return
    if out.window.contains(raw[0], raw[1]):
        out.rows["violations"].append(violation(raw[0], raw[1], "undecodable_record", detail=exc.what, **where))


# --- topics -----------------------------------------------------------------------------------------


class Topics:
    """Topic id -> [name, created offset, deleted offset, deleted timestamp]; what a partition's replay
    needs from the global one. Picklable, to broadcast."""

    def __init__(self):
        self.by_id: dict[uuid.UUID, list] = {}

    def name_at(self, topic_id: uuid.UUID, offset: int) -> str | None:
        """The topic's name if it exists at ``offset``."""
        topic = self.by_id.get(topic_id)
        if topic is None or offset < topic[1] or (topic[2] is not None and offset >= topic[2]):
            return None
        return topic[0]

    def deletion(self, topic_id: uuid.UUID) -> tuple[int, int] | None:
        topic = self.by_id.get(topic_id)
        return None if topic is None or topic[2] is None else (topic[2], topic[3])


# --- partitions -------------------------------------------------------------------------------------

_INVARIANTS = ("duplicate_replicas", "isr_not_in_replicas", "leader_not_in_isr", "adding_not_in_replicas",
               "removing_not_in_replicas", "adding_removing_overlap", "directories_misaligned")


class PartitionReplay:
    """One partition's history. ``state`` is None before its PartitionRecord and after its topic is
    deleted; otherwise (replicas, isr, removing, adding, leader, leader recovery state, leader epoch,
    partition epoch, directories, directories as text)."""

    __slots__ = ("topic_id", "partition", "topic_id_text", "out", "state", "topic", "reassignment",
                 "settled_rf", "broken", "under_replicated", "offline")

    @classmethod
    def for_key(cls, key: bytes, out: Output) -> "PartitionReplay":
        """The replay for a reader key (PartitionId int32 + TopicId bytes)."""
        return cls(uuid.UUID(bytes=key[4:20]), int.from_bytes(key[:4], "big", signed=True), out)

    def __init__(self, topic_id: uuid.UUID, partition: int, out: Output):
        self.topic_id = topic_id
        self.partition = partition
        self.topic_id_text = str(topic_id)
        self.out = out
        self.state = None
        self.topic = None
        self.reassignment = None  # the open reassignment row, as a list
        self.settled_rf = None  # replica count when no reassignment was in flight
        self.broken: frozenset[str] = frozenset()  # invariants currently violated
        self.under_replicated = self.offline = False

    def feed(self, raw: Raw, topics: Topics) -> None:
        out = self.out
        try:
            record, version = decode(raw)
        except MalformedError as exc:
            _undecodable(out, raw, exc, topic_id=self.topic_id_text, partition=self.partition)
            return
        offset, timestamp = raw[0], raw[1]
        out.record_types[type(record).__name__] += 1
        name = topics.name_at(self.topic_id, offset)
        in_window = out.window.contains(offset, timestamp)
        texts = None if record.directories is None else tuple(map(str, record.directories))
        if in_window:
            out.rows["records"].append(record_row(raw, record, version, name, self.topic_id_text, self.partition,
                                                  partition_fields_json(record, self.topic_id_text, texts)))
        if name is None:
            self._violation(offset, timestamp, "unknown_topic",
                            f"{type(record).__name__} for topic id {self.topic_id_text}, which does not exist here")
            return
        self.topic = name
        if type(record) is rec.PartitionRecord:
            self._create(offset, timestamp, record, texts)
        elif self.state is None:
            self._violation(offset, timestamp, "unknown_partition",
                            "PartitionChangeRecord for a partition that does not exist")
            return
        else:
            self._change(offset, timestamp, record, texts)
        if in_window:
            s = self.state
            out.rows["partition_states"].append((
                offset, timestamp, name, self.topic_id_text, self.partition, type(record).__name__, s[0], s[1], s[4],
                s[6], s[7], s[3], s[2], s[9], s[5]))

    def _create(self, offset, timestamp, r, texts) -> None:
        old = self.state
        directories = _directories(r.directories, r.replicas)
        state = (r.replicas, r.isr, r.removing_replicas, r.adding_replicas, r.leader, r.leader_recovery_state,
                 r.leader_epoch, r.partition_epoch, directories,
                 texts if directories is r.directories else tuple(map(str, directories)))
        if old is not None and (state[6] < old[6] or state[7] < old[7]):
            self._violation(offset, timestamp, "epoch_went_back", (
                f"PartitionRecord sets leader epoch {old[6]} -> {state[6]}, partition epoch {old[7]} -> {state[7]}"))
        if self.reassignment is not None:
            self._close(offset, timestamp, "superseded", None)
        self.state = state
        if r.adding_replicas or r.removing_replicas:
            self._open(offset, timestamp, state, [b for b in r.replicas if b not in r.adding_replicas])
        else:
            self.settled_rf = len(r.replicas)
        self._check(offset, timestamp, state)

    def _change(self, offset, timestamp, r, texts) -> None:
        old = self.state
        replicas = old[0] if r.replicas is None else r.replicas
        if r.directories is None and r.replicas is None:
            directories, texts = old[8], old[9]
        else:
            directories = _directories(old[8] if r.directories is None else r.directories, replicas)
            if directories is old[8]:
                texts = old[9]
            elif directories is not r.directories:
                texts = tuple(map(str, directories))
        leader, leader_epoch = (old[4], old[6]) if r.leader == LEADER_UNCHANGED else (r.leader, old[6] + 1)
        state = (replicas,
                 old[1] if r.isr is None else r.isr,
                 old[2] if r.removing_replicas is None else r.removing_replicas,
                 old[3] if r.adding_replicas is None else r.adding_replicas,
                 leader,
                 old[5] if r.leader_recovery_state == -1 else r.leader_recovery_state,
                 leader_epoch, old[7] + 1, directories, texts)
        self.state = state
        was, now = bool(old[2] or old[3]), bool(state[2] or state[3])
        if was or now or replicas != old[0]:
            self._follow_reassignment(offset, timestamp, old, state, was, now)
        self._check(offset, timestamp, state)

    # --- reassignments -----------------------------------------------------------------------------

    def _follow_reassignment(self, offset, timestamp, old, new, was, now) -> None:
        if not was:
            self._open(offset, timestamp, new, old[0])
            if not now:
                self._end(offset, timestamp, new, "completed")
            return
        if now:
            if (new[0], new[2], new[3]) != (old[0], old[2], old[3]):
                self._close(offset, timestamp, "superseded", None)
                self._open(offset, timestamp, new, [b for b in old[0] if b not in old[3]])
            return
        # Kafka completes to R - RR and reverts to R - AR, both of the state just before
        completed = {b for b in old[0] if b not in old[2]}
        reverted = {b for b in old[0] if b not in old[3]}
        final = set(new[0])
        if completed == reverted or final == reverted:
            self._end(offset, timestamp, new, "cancelled")
        elif final == completed:
            self._end(offset, timestamp, new, "completed")
        else:
            self._close(offset, timestamp, "superseded", None)
            self._open(offset, timestamp, new, [b for b in old[0] if b not in old[3]])
            self._end(offset, timestamp, new, "completed")

    def _open(self, offset, timestamp, state, original) -> None:
        replicas, removing = state[0], state[2]
        target = tuple(b for b in replicas if b not in removing)
        original = tuple(original)
        adding = state[3] if state[3] else tuple(b for b in target if b not in original)
        removing = removing if removing else tuple(b for b in original if b not in target)
        self.reassignment = [self.topic, self.topic_id_text, self.partition, offset, timestamp, None, None, None,
                             original, target, None, adding, removing, len(original), None, None]

    def _end(self, offset, timestamp, new, outcome) -> None:
        """Close the open reassignment as completed or cancelled at a record that settles the partition."""
        ra = self.reassignment
        if outcome == "completed":
            missing = [b for b in ra[11] if b not in new[1]]
            if missing:
                self._violation(offset, timestamp, "completed_before_in_sync", (
                    f"reassignment to {list(ra[9])} completed while adding replicas {missing} were not in the "
                    f"ISR {list(new[1])}"))
        self._close(offset, timestamp, outcome, new[0])
        rf = len(new[0])
        if self.settled_rf is not None and rf != self.settled_rf:
            self.out.rows["rf_changes"].append((
                self.topic, self.topic_id_text, self.partition, offset, timestamp, self.settled_rf, rf, ra[8],
                tuple(new[0]), ra[3], outcome))
        self.settled_rf = rf

    def _close(self, offset, timestamp, outcome, final) -> None:
        ra = self.reassignment
        ra[5], ra[6], ra[7] = offset, timestamp, outcome
        if final is not None:
            ra[10], ra[14] = tuple(final), len(final)
        if outcome != "running" and timestamp is not None and ra[4] is not None:
            ra[15] = timestamp - ra[4]
        if outcome == "running":
            ra[5] = ra[6] = None
        self.out.rows["reassignments"].append(tuple(ra))
        self.reassignment = None

    # --- invariants and counts ---------------------------------------------------------------------

    def _check(self, offset, timestamp, state) -> None:
        replicas, isr, removing, adding, leader = state[0], state[1], state[2], state[3], state[4]
        members = set(replicas)
        broken = set()
        if len(members) != len(replicas):
            broken.add("duplicate_replicas")
        if not members.issuperset(isr):
            broken.add("isr_not_in_replicas")
        if leader != NO_LEADER and leader not in isr:
            broken.add("leader_not_in_isr")
        if adding and not members.issuperset(adding):
            broken.add("adding_not_in_replicas")
        if removing and not members.issuperset(removing):
            broken.add("removing_not_in_replicas")
        if adding and removing and not set(adding).isdisjoint(removing):
            broken.add("adding_removing_overlap")
        if len(state[8]) != len(replicas):
            broken.add("directories_misaligned")
        if broken or self.broken:
            for kind in _INVARIANTS:
                if kind in broken and kind not in self.broken:
                    self._violation(offset, timestamp, kind, _describe(kind, state))
            self.broken = frozenset(broken)
        under = len(isr) < len(replicas) - len(removing)
        offline = leader == NO_LEADER
        if under != self.under_replicated or offline != self.offline:
            self.out.count_urp(offset, timestamp, under - self.under_replicated, offline - self.offline)
            self.under_replicated, self.offline = under, offline

    def _violation(self, offset, timestamp, kind, detail) -> None:
        if self.out.window.contains(offset, timestamp):
            self.out.rows["violations"].append(violation(offset, timestamp, kind, topic=self.topic,
                                                         topic_id=self.topic_id_text, partition=self.partition,
                                                         detail=detail))

    def delete(self, offset: int, timestamp: int) -> None:
        """The topic was deleted at ``offset``."""
        if self.state is None:
            return
        if self.reassignment is not None:
            self._close(offset, timestamp, "deleted", None)
        if self.under_replicated or self.offline:
            self.out.count_urp(offset, timestamp, -self.under_replicated, -self.offline)
        self.state = None
        self.broken = frozenset()
        self.under_replicated = self.offline = False
        self.settled_rf = None

    def finish(self) -> None:
        """The end of the log: a reassignment still in flight is reported as running."""
        if self.reassignment is not None:
            self._close(None, None, "running", None)


def replay_partition(key: bytes, raws, topics: Topics, out: Output) -> PartitionReplay:
    """Replay one partition's raw records (in log order) apart from the others, its topic's deletion
    taking effect at its offset; the single-process run gets the same result by interleaving."""
    replay = PartitionReplay.for_key(key, out)
    deletion = topics.deletion(replay.topic_id)
    for raw in raws:
        if deletion is not None and raw[0] > deletion[0]:
            replay.delete(*deletion)
            deletion = None
        replay.feed(raw, topics)
    if deletion is not None:
        replay.delete(*deletion)
    replay.finish()
    return replay


def _directories(directories, replicas) -> tuple:
    if not directories or all(d == MIGRATING for d in directories):
        return (MIGRATING,) * len(replicas)
    return directories


def _describe(kind: str, state) -> str:
    replicas, isr, removing, adding, leader = (list(state[0]), list(state[1]), list(state[2]), list(state[3]),
                                               state[4])
    subsets = {"isr_not_in_replicas": ("ISR", isr), "adding_not_in_replicas": ("adding", adding),
               "removing_not_in_replicas": ("removing", removing)}
    if kind in subsets:
        label, values = subsets[kind]
        return f"{label} {values} has {[b for b in values if b not in replicas]} outside replicas {replicas}"
    if kind == "duplicate_replicas":
        return f"replicas {replicas} name a broker twice"
    if kind == "leader_not_in_isr":
        return f"leader {leader} is not in ISR {isr}"
    if kind == "adding_removing_overlap":
        return f"{[b for b in adding if b in removing]} both adding {adding} and removing {removing}"
    return f"{len(state[8])} directories for {len(replicas)} replicas {replicas}"


# --- everything else --------------------------------------------------------------------------------


class GlobalReplay:
    """Topics, brokers, directories, throttle configs and log statistics."""

    def __init__(self, out: Output):
        self.out = out
        self.topics = Topics()
        self.topic_ids: dict[str, uuid.UUID] = {}
        self.brokers: dict[int, dict] = {}
        self.throttles: dict[tuple, list] = {}  # open episodes by (resource type, name, config)
        self.episodes: list[list] = []  # closed and open throttle episodes, in the order they started
        self.leader_changes = 0

    def feed(self, raw: Raw) -> uuid.UUID | None:
        """Apply one record; returns the topic id when the record deletes a topic."""
        out = self.out
        try:
            record, version = decode(raw)
        except MalformedError as exc:
            _undecodable(out, raw, exc)
            return None
        kind = type(record)
        out.record_types[kind.__name__] += 1
        offset, timestamp = raw[0], raw[1]
        if out.window.contains(offset, timestamp):
            topic = topic_id = None
            if kind is rec.TopicRecord:
                topic, topic_id = record.name, str(record.topic_id)
            elif kind is rec.RemoveTopicRecord:
                topic_id = str(record.topic_id)
                topic = self.topics.name_at(record.topic_id, offset)
            out.rows["records"].append(record_row(raw, record, version, topic, topic_id))
        handler = _GLOBAL_HANDLERS.get(kind)
        return handler(self, offset, timestamp, record) if handler else None

    # --- topics and configs --------------------------------------------------------------------------

    def _topic(self, offset, timestamp, r) -> None:
        self.topics.by_id[r.topic_id] = [r.name, offset, None, None]
        self.topic_ids[r.name] = r.topic_id

    def _remove_topic(self, offset, timestamp, r) -> uuid.UUID | None:
        topic = self.topics.by_id.get(r.topic_id)
        if topic is None or topic[2] is not None:
            self._violation(offset, timestamp, "unknown_topic", f"RemoveTopicRecord for unknown topic id {r.topic_id}")
            return None
        topic[2], topic[3] = offset, timestamp
        self.topic_ids.pop(topic[0], None)
        for config in THROTTLED_REPLICAS:
            self._end_throttle((TOPIC_RESOURCE, topic[0], config), offset, timestamp, "topic_deleted")
        return r.topic_id

    def _config(self, offset, timestamp, r) -> None:
        if r.name not in (THROTTLE_RATES if r.resource_type == BROKER_RESOURCE else
                          THROTTLED_REPLICAS if r.resource_type == TOPIC_RESOURCE else ()):
            return
        key = (r.resource_type, r.resource_name, r.name)
        if r.value is None:
            self._end_throttle(key, offset, timestamp, "deleted")
            return
        episode = self.throttles.get(key)
        if episode is None:
            episode = self.throttles[key] = [key, r.value, offset, timestamp, None, None, None]
            self.episodes.append(episode)
        episode[1] = r.value

    def _end_throttle(self, key, offset, timestamp, removed_by) -> None:
        episode = self.throttles.pop(key, None)
        if episode is not None:
            episode[4], episode[5], episode[6] = offset, timestamp, removed_by

    # --- brokers and directories -------------------------------------------------------------------

    def _register(self, offset, timestamp, r) -> None:
        broker = {"epoch": r.broker_epoch, "fenced": r.fenced, "shutdown": r.in_controlled_shutdown, "rack": r.rack,
                  "dirs": tuple(r.log_dirs), "incarnation": str(r.incarnation_id)}
        old = self.brokers.get(r.broker_id)
        self.brokers[r.broker_id] = broker
        self._broker_row(offset, timestamp, r.broker_id, "registered", broker)
        self._directory_changes(offset, timestamp, r.broker_id, old["dirs"] if old else (), broker["dirs"],
                                "registered")

    def _unregister(self, offset, timestamp, r) -> None:
        broker = self.brokers.pop(r.broker_id, None)
        if broker is None:
            self._violation(offset, timestamp, "unknown_broker", f"UnregisterBrokerRecord for broker {r.broker_id}",
                            broker=r.broker_id)
            return
        self._broker_row(offset, timestamp, r.broker_id, "unregistered", broker)
        self._directory_changes(offset, timestamp, r.broker_id, broker["dirs"], (), "unregistered")

    def _fence(self, offset, timestamp, broker_id, fenced: bool) -> None:
        self._broker_change(offset, timestamp, broker_id, "fenced" if fenced else "unfenced", fenced=fenced)

    def _registration_change(self, offset, timestamp, r) -> None:
        if r.fenced:
            self._fence(offset, timestamp, r.broker_id, r.fenced == 1)
        if r.in_controlled_shutdown == 1:
            self._broker_change(offset, timestamp, r.broker_id, "controlled_shutdown", shutdown=True)
        if r.log_dirs:
            broker = self.brokers.get(r.broker_id)
            old = broker["dirs"] if broker else ()
            if self._broker_change(offset, timestamp, r.broker_id, "log_dirs_changed", dirs=tuple(r.log_dirs)):
                self._directory_changes(offset, timestamp, r.broker_id, old, tuple(r.log_dirs), "broker_change")

    def _broker_change(self, offset, timestamp, broker_id, event, **changes) -> bool:
        broker = self.brokers.get(broker_id)
        if broker is None:
            self._violation(offset, timestamp, "unknown_broker", f"{event} for unregistered broker {broker_id}",
                            broker=broker_id)
            return False
        broker.update(changes)
        self._broker_row(offset, timestamp, broker_id, event, broker)
        return True

    def _broker_row(self, offset, timestamp, broker_id, event, b) -> None:
        if self.out.window.contains(offset, timestamp):
            self.out.rows["brokers"].append((offset, timestamp, broker_id, event, b["epoch"], b["fenced"],
                                             b["shutdown"], b["rack"], tuple(map(str, b["dirs"])), b["incarnation"]))

    def _directory_changes(self, offset, timestamp, broker_id, old, new, cause) -> None:
        if not self.out.window.contains(offset, timestamp):
            return
        rows = self.out.rows["directories"]
        rows.extend((offset, timestamp, broker_id, str(d), "offline", cause) for d in old if d not in new)
        rows.extend((offset, timestamp, broker_id, str(d), "online", cause) for d in new if d not in old)

    def _leader_change(self, offset, timestamp, r) -> None:
        self.leader_changes += 1

    def _violation(self, offset, timestamp, kind, detail, **where) -> None:
        if self.out.window.contains(offset, timestamp):
            self.out.rows["violations"].append(violation(offset, timestamp, kind, detail=detail, **where))


_GLOBAL_HANDLERS = {
    rec.TopicRecord: GlobalReplay._topic,
    rec.RemoveTopicRecord: GlobalReplay._remove_topic,
    rec.ConfigRecord: GlobalReplay._config,
    rec.RegisterBrokerRecord: GlobalReplay._register,
    rec.UnregisterBrokerRecord: GlobalReplay._unregister,
    rec.FenceBrokerRecord: lambda g, o, t, r: g._fence(o, t, r.id, True),
    rec.UnfenceBrokerRecord: lambda g, o, t, r: g._fence(o, t, r.id, False),
    rec.BrokerRegistrationChangeRecord: GlobalReplay._registration_change,
    rec.LeaderChangeMessage: GlobalReplay._leader_change,
}


# --- joins at the end -------------------------------------------------------------------------------


class Digest:
    """What the end of an audit needs from the reassignments and RF changes the partition replays
    write themselves; mergeable, so that each Spark task sends one back instead of the rows:

    * ``spans``: (start offset, end offset or None, end time, topic, brokers) of every reassignment,
      for the throttle join (``throttle_rows``);
    * within the window: reassignments by outcome, the durations of completed and cancelled ones, the
      ``SAMPLE`` first reassignments and RF changes (by offset), the ``LONGEST`` reassignments (a running
      one lasting to the end of the log) and the number of RF changes."""

    SAMPLE = 200
    LONGEST = 60

    def __init__(self, window: Window = EVERYTHING):
        self.window = window
        self.spans: list[tuple] = []
        self.outcomes: Counter = Counter()
        self.durations: dict[str, list] = {"completed": [], "cancelled": []}
        self.first: list[tuple] = []
        self.longest: list[tuple] = []  # (length in ms, row)
        self.rf_changes = 0
        self.rf_first: list[tuple] = []

    def add(self, reassignments: list[tuple], rf_changes: list[tuple], end_timestamp: int | None):
        """Take in rows; returns (reassignments, RF changes) within the window: the rows to write."""
        self.spans.extend((ra[3], ra[5], ra[6], ra[0], tuple({*ra[8], *ra[9]})) for ra in reassignments)
        shown = in_window("reassignments", reassignments, self.window)
        for ra in shown:
            self.outcomes[ra[7]] += 1
            if ra[7] in self.durations:
                self.durations[ra[7]].append(ra[15])
        self.first = heapq.nsmallest(self.SAMPLE, self.first + shown, key=ROW_ORDER["reassignments"])
        lasted = [(_lasted(ra, end_timestamp), ra) for ra in shown]
        self.longest = heapq.nlargest(self.LONGEST, self.longest + lasted, key=itemgetter(0))
        rf_shown = in_window("rf_changes", rf_changes, self.window)
        self.rf_changes += len(rf_shown)
        self.rf_first = heapq.nsmallest(self.SAMPLE, self.rf_first + rf_shown, key=ROW_ORDER["rf_changes"])
        return shown, rf_shown

    def merge(self, other: "Digest") -> None:
        self.spans.extend(other.spans)
        self.outcomes.update(other.outcomes)
        for outcome, durations in other.durations.items():
            self.durations[outcome].extend(durations)
        self.first = heapq.nsmallest(self.SAMPLE, self.first + other.first, key=ROW_ORDER["reassignments"])
        self.longest = heapq.nlargest(self.LONGEST, self.longest + other.longest, key=itemgetter(0))
        self.rf_changes += other.rf_changes
        self.rf_first = heapq.nsmallest(self.SAMPLE, self.rf_first + other.rf_first, key=ROW_ORDER["rf_changes"])


def _lasted(ra: tuple, end_timestamp: int | None) -> int:
    if ra[4] is None:
        return 0
    end = ra[6] if ra[6] is not None else end_timestamp
    return 0 if end is None else end - ra[4]


class _Intervals:
    """Reassignments (start offset, end offset or None while running, end time) of one resource,
    answering "which of them overlap [first, last]" in O(log n): how many, whether one still runs,
    and the last end time among them (timestamps follow log order)."""

    def __init__(self, spans: list[tuple]):
        spans.sort(key=itemgetter(0))
        starts, ends, end_times = zip(*spans) if spans else ((), (), ())
        self.starts = starts
        self.ends = sorted(e for e in ends if e is not None)
        self.first_running = next((s for s, e in zip(starts, ends) if e is None), None)
        self.last_end_time = list(accumulate((NEVER if t is None else t for t in end_times), max))  # of spans[:i + 1]

    def overlapping(self, first: int, last: int | None) -> tuple[int, bool, int | None]:
        started = len(self.starts) if last is None else bisect_right(self.starts, last)
        count = started - bisect_left(self.ends, first)  # started by ``last``, minus those ended before ``first``
        running = self.first_running is not None and (last is None or self.first_running <= last)
        latest = self.last_end_time[started - 1] if count else NEVER
        return count, running, None if latest == NEVER else latest


def throttle_rows(episodes: list[list], spans: list[tuple], end_timestamp: int | None,
                  window: Window = EVERYTHING) -> list[tuple]:
    """One row per throttle episode (a config set, until deleted or the end of the log) with the
    reassignments that needed it: on the topic for a replicas list, moving to or from the broker for
    a rate (any broker for the cluster-wide default ""). A throttle that stayed after the last of them
    ended lingered that long; one still set at the end of the log with none in flight is left behind.
    ``spans`` are ``Digest.spans``."""
    throttled = {(key[0], key[1]) for key, *_ in episodes}
    every = (BROKER_RESOURCE, "") in throttled
    by_resource: dict[tuple, list] = {resource: [] for resource in throttled}
    for start, end, end_time, topic, brokers in spans:
        span = (start, end, end_time)
        if every:
            by_resource[BROKER_RESOURCE, ""].append(span)
        on_topic = by_resource.get((TOPIC_RESOURCE, topic))
        if on_topic is not None:
            on_topic.append(span)
        for broker in brokers:
            on_broker = by_resource.get((BROKER_RESOURCE, str(broker)))
            if on_broker is not None:
                on_broker.append(span)
    indexes = {resource: _Intervals(found) for resource, found in by_resource.items()}
    rows = []
    for key, value, set_offset, set_time, removed_offset, removed_time, removed_by in episodes:
        resource_type, name, config = key
        if not window.overlaps(set_offset, set_time, removed_offset, removed_time):
            continue
        needed, running, last_end = indexes[resource_type, name].overlapping(set_offset, removed_offset)
        until = removed_time if removed_time is not None else end_timestamp
        since = set_time if last_end is None else max(last_end, set_time)
        lingered = None if running or until is None else max(0, until - since)
        rows.append(("broker" if resource_type == BROKER_RESOURCE else "topic", name, config, value, set_offset,
                     set_time, removed_offset, removed_time, removed_by, needed, last_end, lingered,
                     removed_offset is None and not running))
    return rows


def merge_urp(into: dict[int, list], other: dict[int, list]) -> None:
    """Add the under-replicated counts of another replay (``Output.urp``) to ``into``."""
    for timestamp, (offset, under, offline) in other.items():
        entry = into.get(timestamp)
        if entry is None:
            into[timestamp] = [offset, under, offline]
        else:
            entry[0] = max(entry[0], offset)
            entry[1] += under
            entry[2] += offline


def under_replicated_rows(changes: dict[int, list], window: Window = EVERYTHING) -> list[tuple]:
    """The number of under-replicated and of leaderless partitions at every timestamp (a batch's append
    time) where one changed, with the last offset at that time."""
    rows = []
    under = offline = 0
    for timestamp in sorted(changes):
        offset, d_under, d_offline = changes[timestamp]
        under += d_under
        offline += d_offline
        if (d_under or d_offline) and window.contains(offset, timestamp):
            rows.append((offset, timestamp, under, offline))
    return rows


def in_window(table: str, rows: list[tuple], window: Window) -> list[tuple]:
    """The rows of a small table that fall in the window (reassignments: those that overlap it)."""
    if window == EVERYTHING:
        return rows
    c = _R[table]
    if table == "reassignments":
        return [r for r in rows if window.overlaps(r[c["start_offset"]], r[c["start_time"]], r[c["end_offset"]],
                                                   r[c["end_time"]])]
    return [r for r in rows if window.contains(r[c["offset"]], r[c["timestamp"]])]
