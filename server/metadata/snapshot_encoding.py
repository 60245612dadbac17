"""A snapshot's data batches, encoded once per change: what a controller's snapshot costs the process is
what changed since the last one, not the whole image.

A snapshot holds the whole image (``MetadataImage.to_records``); written from scratch, its encoding
holds the GIL for seconds at millions of partitions (2.5-7 µs a partition), every 20 MiB of log. Kafka
writes its snapshots from the immutable image on a thread of their own, in parallel with its
controller; kraftwire's snapshot thread shares the interpreter with the event loop, so it keeps the
bytes instead: the image's topics are cut into groups, each group's records are encoded into whole
batches (``codec.records.metadata_records``: the records part of a batch, offset deltas from 0), and
an image keeps each group's batches with what it was encoded from (its topics' states, by identity,
and their change counts, ``TopicState.changes``, and the metadata.version level). The next snapshot
encodes only the groups one of whose topics changed (or appeared, or went); the other groups' bytes
are written as they are, framed with the snapshot's offsets, epoch and time by
``raft.snapshots.write_snapshot_batches`` (a batch header and its CRC: C-fast). The records and their
order are those of ``to_records``; features and brokers before the topics and configs, ACLs and SCRAM
credentials after them are encoded every time (a few records a broker, topic config or user).

Groups: a topic of ``ALONE`` records or more (its TopicRecord and PartitionRecords) is a group of its
own; a run of smaller topics is cut after a topic with a chance of its records in ``GROUP_RECORDS``,
drawn from its topic id (so ~``GROUP_RECORDS`` records a group, a handful of batches). A cut depends on
the topic before and the topic after it only, so a topic created, grown or deleted moves no cut but
its own: a change re-encodes its group (or the two its cut joined, or the one it split), whatever else
the image holds. A data batch never spans two groups: against one stream of 1,024-record batches that
is one batch header (61 bytes) more for every group, under 0.3 % of a snapshot's bytes.

Consistency: ``capture`` runs on the thread that applies records (the event loop), at the offset the
snapshot is taken at: it takes the kept bytes of the unchanged groups and copies the partitions of the
changed topics (their states are immutable tuples, shared), so what the snapshot thread encodes later
is the image at that offset whatever is applied meanwhile. Bytes the thread encodes are kept with the
states and change counts captured, so a topic changed meanwhile is encoded again next time. An image
rebuilt from records (a restart, a snapshot installed) starts with none kept: its ``TopicState``
objects are new.
"""
from __future__ import annotations

import uuid

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from kraftwire.codec import records as rec
from kraftwire.codec.message import Message

from .partition_state import PartitionState

from .fast_paths import topic_records
from .record_versions import at_level

if TYPE_CHECKING:  # the image imports this module
    from .image import MetadataImage, TopicState

__all__ = ["SnapshotEncodings", "encode", "groups", "topic_records"]

Batches = list[tuple[int, bytes]]  # (record count, records' bytes) of each batch
# what a group's capture is keyed by: each topic's state object and change count
GroupKey = tuple[tuple["TopicState", int], ...]

ALONE = 256  # a topic of this many records or more is a group of its own
GROUP_RECORDS = 1024  # a run of smaller topics is cut every ~this many records

def encode(records: Iterable[Message], level: int) -> Batches:
    """``records`` at metadata.version ``level``, as (record count, records' bytes) of snapshot batches."""
    return list(rec.metadata_bodies(at_level(r, level) for r in records))


def groups(topics: Iterable[TopicState]) -> Iterator[list[TopicState]]:
    """The image's topics (``TopicState``s, in the image's order) cut into groups (module docstring)."""
    group: list[TopicState] = []
    for topic in topics:
        size = 1 + len(topic.partitions)
        if size >= ALONE:
            if group:
                yield group
                group = []
            yield [topic]
            continue
        group.append(topic)
        if topic.topic_id.int % GROUP_RECORDS < size:
            yield group
            group = []
    if group:
        yield group


class SnapshotEncodings:
    """The batches an image's topic groups were last encoded into, by the group's first topic id:
    (((topic state, change count), ...), metadata.version level, [(record count, bytes), ...])."""

    __slots__ = ("kept",)

    def __init__(self) -> None:
        self.kept: dict[uuid.UUID, tuple[GroupKey, int, Batches]] = {}

    def capture(self, image: MetadataImage) -> Iterator[tuple[int, bytes]]:
        """The snapshot of ``image`` as it is now, as data batches (record count, records' bytes) for
        ``write_snapshot_batches``; to be called on the thread that applies records, and the result
        iterated anywhere. Only the groups changed since the last capture are encoded, as it is iterated."""
        level = image.metadata_version_level
        head = list(image.head_records())
        parts: list[Batches | tuple[GroupKey, list[tuple[str, uuid.UUID, dict[int, PartitionState]]]]] = []
        # kept batches, or (group key, [(name, id, partitions copy)]) to encode
        kept, self.kept = self.kept, {}
        for group in groups(image.topics.values()):
            key = tuple((topic, topic.changes) for topic in group)
            entry = kept.get(group[0].topic_id)
            if entry is not None and entry[1] == level and len(entry[0]) == len(key) and all(
                    was is topic and changes == now for (was, changes), (topic, now) in zip(entry[0], key)):
                self.kept[group[0].topic_id] = entry
                parts.append(entry[2])
            else:
                parts.append((key, [(t.name, t.topic_id, dict(t.partitions)) for t in group]))
        tail = list(image.tail_records())
        return self._batches(level, head, parts, tail)

    def _batches(self, level: int, head: list[Message],
                 parts: list[Batches | tuple[GroupKey, list[tuple[str, uuid.UUID, dict[int, PartitionState]]]]],
                 tail: list[Message]) -> Iterator[tuple[int, bytes]]:
        if head:
            yield from encode(head, level)
        for part in parts:
            if isinstance(part, tuple):
                key, captured = part
                part = encode((r for name, topic_id, partitions in captured
                               for r in topic_records(name, topic_id, partitions)), level)
                self.kept[key[0][0].topic_id] = (key, level, part)
            yield from part
        if tail:
            yield from encode(tail, level)
