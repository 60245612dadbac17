"""kraftwire's speed tricks outside the codec's own decoder, in one place, each with what it is worth:
the image's apply (below), bulk reassignments' records and answers, and Metadata's unknown-topic entries
(the last two sections). Everywhere else objects are built by keyword and read by name.

The image's apply:

Everything here is a cache or a byte-level shortcut around the plain rules of
``partition_state.py``; none of it changes a result. ``PartitionStates`` is owned by an image and shared
with its copies (``MetadataImage.copy``: the controller's working image is a copy of its committed one,
so both merge each distinct change once, and the committed image can take the working image's very
state objects). Measured in-process against the plain rules (tmp bench of the 10,000-partition
reassignment batch and the 100k-partition snapshot, min of 7):

* ``shared``: equal replica lists, ISRs and directory lists are one tuple (a few brokers make few
  distinct lists), so a million partitions hold a few thousand lists, not millions. Memory, not time.
* ``merged``: a bulk change turns thousands of partitions alike into alike states; each distinct
  (state, change) is merged once, keyed by the state and the change's fields after its two ids (a
  slice: building that key by name costs as much as the merge). The latest merge is checked first by
  identity, without hashing: the records of one bulk change come one after another onto one shared
  state with the same field objects. About 2x on the 10k-change batch.
* ``from_record``: a PartitionRecord's state is built by ``tuple.__new__`` from its fields in order, not
  through the named tuple's constructor (a Python-level ``__new__``): replaying a 100k-partition log
  is mostly these, and the plain ``build_partition_state`` cost that replay about a quarter more.
* ``topic_records``: a snapshot's PartitionRecords are built from their fields in PartitionRecord's
  order, by ``tuple.__new__`` (the order asserted below), not through the keyword constructor: millions
  of them make a snapshot, and the keyword constructor costs several times as much per record.
* ``from_frame``: a snapshot is mostly PartitionRecords, and those of partitions alike differ only in
  the int32 partition id right after their 3-byte frame prefix; each distinct rest of the bytes is
  decoded and built once. About 3x on loading the 100k-partition snapshot.

Each table is emptied when it grows large, so churning states cannot grow it without bound (what was
handed out stays valid: states are immutable).
"""
from __future__ import annotations

import functools
import struct
import uuid
from collections.abc import Iterable, Iterator
from typing import Any, NewType, TypeVar

from kraftwire.codec import records as rec
from kraftwire.codec.messages import AlterPartitionReassignmentsResponse, MetadataResponse
from kraftwire.codec.records import PartitionChangeRecord
from kraftwire.codec.constants import MIGRATING

from .partition_state import PartitionState, merge_change

T = TypeVar("T")

# A PartitionRecord's frame: three one-byte varints (frame version, type 3, record version), then the
# int32 partition id, then the rest of its body.
_VERSIONS = rec.PartitionRecord.VALID_VERSIONS
assert rec.PartitionRecord.API_KEY is not None and _VERSIONS.high is not None
PARTITION_FRAME_PREFIXES = frozenset(bytes((rec.FRAME_VERSION, rec.PartitionRecord.API_KEY, version))
                                     for version in range(_VERSIONS.low, _VERSIONS.high + 1))
PREFIX_END = 3
REST_START = PREFIX_END + 4
partition_id_of_frame = struct.Struct(">i").unpack_from

# the fields of a PartitionChangeRecord that ``merged`` keys by: all but partition_id and topic_id
_CHANGE_FIELDS_START = 2
assert rec.PartitionChangeRecord._fields[:_CHANGE_FIELDS_START] == ("partition_id", "topic_id")


_new_tuple = tuple.__new__
_new_state = functools.partial(tuple.__new__, PartitionState)  # a PartitionState from its fields in order
assert PartitionState._fields == ("replicas", "isr", "removing", "adding", "leader", "leader_recovery_state",
                                  "leader_epoch", "partition_epoch", "directories", "elr", "last_known_elr")
_NO_TAGS = rec.PartitionRecord().unknown_tagged_fields
# the field order topic_records builds PartitionRecords in
assert rec.PartitionRecord._fields == (
    "partition_id", "topic_id", "replicas", "isr", "removing_replicas", "adding_replicas", "leader",
    "leader_recovery_state", "leader_epoch", "partition_epoch", "directories", "eligible_leader_replicas",
    "last_known_elr", "unknown_tagged_fields")


def topic_records(name: str, topic_id: uuid.UUID, partitions: dict[int, PartitionState]
                  ) -> Iterator[rec.TopicRecord | rec.PartitionRecord]:
    """A topic's snapshot records: its TopicRecord, then a PartitionRecord for each partition, built
    positionally."""
    yield rec.TopicRecord(name=name, topic_id=topic_id)
    kind = rec.PartitionRecord
    for index, p in partitions.items():
        yield _new_tuple(kind, (index, topic_id, p.replicas, p.isr, p.removing, p.adding, p.leader,
                                p.leader_recovery_state, p.leader_epoch, p.partition_epoch, p.directories,
                                p.elr or None, p.last_known_elr or None, _NO_TAGS))


class PartitionStates:
    """The interning table and memos one family of images (an image and its copies) builds partition
    states through."""

    __slots__ = ("_lists", "_merges", "_last_merge", "_frames")
    LIMIT_LISTS = 1 << 16
    LIMIT_MERGES = 1 << 12
    LIMIT_FRAMES = 1 << 12

    def __init__(self) -> None:
        self._lists: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self._merges: dict[tuple[PartitionState, tuple[Any, ...]], PartitionState] = {}
        # (state, change fields, state after) of the latest merge asked for
        self._last_merge: tuple[PartitionState | None, tuple[Any, ...] | None, PartitionState | None] = (
            None, None, None)
        self._frames: dict[bytes, tuple[uuid.UUID, PartitionState]] = {}

    def shared(self, values: Iterable[T]) -> tuple[T, ...]:
        """``values`` as a tuple, the same object for equal contents."""
        values = tuple(values)
        found = self._lists.get(values)
        if found is None:
            if len(self._lists) >= self.LIMIT_LISTS:
                self._lists.clear()
            found = self._lists[values] = values
        return found

    def from_record(self, r: rec.PartitionRecord) -> PartitionState:
        """``build_partition_state(r, self.shared)``, built positionally (``tuple.__new__`` in the field
        order asserted above): a snapshot's or a log's replay is mostly these."""
        share = self.shared
        replicas = share(r.replicas)
        directories = r.directories
        if not directories or (not directories[0].int and not any(d.int for d in directories)):
            kept = share((MIGRATING,) * len(replicas))
        else:
            kept = share(directories)
        return _new_state((replicas, share(r.isr), tuple(r.removing_replicas), tuple(r.adding_replicas), r.leader,
                           r.leader_recovery_state, r.leader_epoch, r.partition_epoch, kept,
                           tuple(r.eligible_leader_replicas or ()), tuple(r.last_known_elr or ())))

    def merged(self, state: PartitionState, change: rec.PartitionChangeRecord) -> PartitionState:
        """``merge_change(state, change)``, the same object for the same state and change."""
        fields = change[_CHANGE_FIELDS_START:]
        last_state, last_fields, after = self._last_merge
        if state is last_state and fields == last_fields and after is not None:
            return after
        key = (state, fields)
        try:
            after = self._merges.get(key)
        except TypeError:  # a record built around the constructor with a list in it: unhashable
            return merge_change(state, change, self.shared)
        if after is None:
            if len(self._merges) >= self.LIMIT_MERGES:
                self._merges.clear()
            after = self._merges[key] = merge_change(state, change, self.shared)
        self._last_merge = (state, fields, after)
        return after

    def from_frame(self, frame: bytes) -> tuple[uuid.UUID, PartitionState]:
        """The topic id and state of a PartitionRecord's ``frame`` (one whose prefix is in
        ``PARTITION_FRAME_PREFIXES``), whatever its partition id."""
        rest = frame[REST_START:]
        found = self._frames.get(rest)
        if found is None:
            record = rec.decode_frame(frame)[0]
            assert isinstance(record, rec.PartitionRecord)
            if len(self._frames) >= self.LIMIT_FRAMES:
                self._frames.clear()
            found = self._frames[rest] = (record.topic_id, self.from_record(record))
        return found


# --- Bulk reassignments -------------------------------------------------------------------------------
# A bulk move of 10,000 partitions writes 10,000 PartitionChangeRecords that differ only in their partition
# id, and answers 10,000 partitions without error. Built with keywords (the generated classes' ``__new__``
# parses them, ~1.9 us each) that is two thirds of the whole decision's time; built as tuples of their
# fields, ~0.3 us. So these two classes are built positionally here: a record from a shared template (the
# fields after the id) and an accepted answer kept per index. The field positions come from the classes'
# ``_fields`` at import, so a schema that reorders them still builds correct objects (an id that is not a
# record's first field takes the slower keyword path).

PartitionResponse = AlterPartitionReassignmentsResponse.ReassignablePartitionResponse

_ID_FIRST = PartitionChangeRecord._fields[0] == "partition_id"
_ANSWER_FIELDS = ("partition_index", "error_code", "error_message", "unknown_tagged_fields")
_ANSWER_IN_ORDER = PartitionResponse._fields == _ANSWER_FIELDS

ChangeTemplate = NewType("ChangeTemplate", tuple)
"""A PartitionChangeRecord without its partition id: what partitions in the same state with the same
target share."""


if _ID_FIRST:
    def change_template(record: PartitionChangeRecord) -> ChangeTemplate:
        """What ``record`` says, less its partition id, to stamp on other partitions."""
        return ChangeTemplate(record[1:])

    def stamped_change(partition_id: int, template: ChangeTemplate) -> PartitionChangeRecord:
        """The record of ``template`` for partition ``partition_id``."""
        return _new_tuple(PartitionChangeRecord, (partition_id,) + template)
else:  # the slower, keyword path
    _AFTER_ID = tuple(f for f in PartitionChangeRecord._fields if f != "partition_id")

    def change_template(record: PartitionChangeRecord) -> ChangeTemplate:
        return ChangeTemplate(tuple(getattr(record, f) for f in _AFTER_ID))

    def stamped_change(partition_id: int, template: ChangeTemplate) -> PartitionChangeRecord:
        return PartitionChangeRecord(partition_id=partition_id, **dict(zip(_AFTER_ID, template)))


if _ANSWER_IN_ORDER:
    def partition_answer(index: int, error_code: int, error_message: str | None) -> PartitionResponse:
        """An AlterPartitionReassignments partition answer."""
        return _new_tuple(PartitionResponse, (index, error_code, error_message, ()))
else:
    def partition_answer(index: int, error_code: int, error_message: str | None) -> PartitionResponse:
        return PartitionResponse(partition_index=index, error_code=error_code, error_message=error_message)


class AcceptedAnswers(dict[int, PartitionResponse]):
    """The answer without error of each partition index (``ACCEPTED[index]``, a plain dict lookup once
    built). Answers are immutable, so every request shares them; only indexes of existing partitions are
    asked for (at most the largest topic's count)."""

    def __missing__(self, index: int) -> PartitionResponse:
        answer = self[index] = partition_answer(index, 0, None)
        return answer


ACCEPTED = AcceptedAnswers()


# --- Metadata's unknown topics ------------------------------------------------------------------------
MetadataTopic = MetadataResponse.MetadataResponseTopic
_ERROR_AT, _NAME_AT, _ID_AT = (MetadataTopic._fields.index(f) for f in ("error_code", "name", "topic_id"))


def missing_topic(error_code: int, name: str | None, topic_id: uuid.UUID) -> MetadataTopic:
    """An unknown topic's Metadata entry, built as the decoder builds structs (one ``tuple.__new__``): a
    request naming hundreds of thousands of unknown topics costs the event loop a tenth of the keyword path."""
    values = list(MetadataTopic._defaults)
    values[_ERROR_AT], values[_NAME_AT], values[_ID_AT] = error_code, name, topic_id
    return _new_tuple(MetadataTopic, values)
