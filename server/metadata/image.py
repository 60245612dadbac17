"""The metadata image: cluster state built only by applying metadata records, in log order.

Brokers, topics with their partitions, dynamic configs, feature levels, access control entries and
users' SCRAM credentials. Applying records is the one way the image changes, and every way in goes
through one core: ``apply(record, offset)``, what one committed record means (replay, a broker's view,
tests), with ``_apply_partition_change`` for the record a bulk change is made of. The callers need three
more faces of it:

* ``apply_frames(frames, offset)``: a snapshot's records undecoded, building the state of each distinct
  PartitionRecord once (a restart at millions of partitions is mostly these), the rest through ``apply``;
* ``apply_appended(records, base)``: the controller's working image, which also returns each partition
  record's ``Outcome`` (state before and after);
* ``adopt_or_apply(committed, known)``: the controller's committed image, which takes the state after of
  an ``Outcome`` where it holds that very state before, and otherwise applies.

The last two are one loop (``_apply_batch``). A PartitionChangeRecord for a partition the image does
not hold refuses (``UnknownPartitionError``, naming the record's offset), as Kafka's replay does.

Partition state and Kafka's replay rules live in ``partition_state.py``; the caches applying goes
through (shared lists, merges and snapshot frames built once) in ``fast_paths.py``, owned by the image.
"""
from __future__ import annotations

import uuid
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from kraftwire.codec import records as rec
from kraftwire.codec.constants import (ENTER_CONTROLLED_SHUTDOWN, FENCE, LOST, MIGRATING, UNASSIGNED, UNFENCE,
                                       ConfigResourceType)
from kraftwire.codec.message import Message

from .acls import Acl
from .fast_paths import PARTITION_FRAME_PREFIXES, PREFIX_END, PartitionStates, partition_id_of_frame
from .partition_state import PartitionState, merged_partition
from .record_versions import DEFAULT_METADATA_VERSION, METADATA_VERSION_FEATURE, METADATA_VERSIONS, at_level
from .snapshot_encoding import SnapshotEncodings, topic_records

__all__ = ["BrokerState", "Endpoint", "MetadataImage", "Outcome", "Outcomes", "PartitionState", "TopicState",
           "UnknownPartitionError", "merged_partition"]


@dataclass(frozen=True, slots=True)
class Endpoint:
    name: str
    host: str
    port: int
    security_protocol: int


@dataclass(frozen=True, slots=True)
class BrokerState:
    broker_id: int
    epoch: int
    incarnation_id: uuid.UUID
    endpoints: tuple[Endpoint, ...]
    rack: str | None
    fenced: bool
    in_controlled_shutdown: bool
    log_dirs: tuple[uuid.UUID, ...]  # the broker's online directories
    features: tuple[tuple[str, int, int], ...] = ()  # (name, min, max) supported, as registered
    # Cordoned directories (KIP-1066, from metadata.version 4.3-IV0): None until the broker reports them
    # in a heartbeat.
    cordoned_log_dirs: tuple[uuid.UUID, ...] | None = None

    @property
    def has_uncordoned_dirs(self) -> bool:
        """New replicas may be placed here: some directory is not cordoned (Kafka's hasUncordonedDirs)."""
        if not self.log_dirs or self.cordoned_log_dirs is None:
            return True
        return any(d not in self.cordoned_log_dirs for d in self.log_dirs)

    @property
    def active(self) -> bool:
        """Eligible to lead or join an ISR: registered, unfenced and not shutting down."""
        return not self.fenced and not self.in_controlled_shutdown

    def has_online_dir(self, directory: uuid.UUID) -> bool:
        """Kafka's DirectoryId.isOnline: the sentinels MIGRATING/UNASSIGNED are online, LOST is not."""
        if directory in (MIGRATING, UNASSIGNED):
            return True
        if directory == LOST:
            return False
        return not self.log_dirs or directory in self.log_dirs


@dataclass(slots=True)
class TopicState:
    name: str
    topic_id: uuid.UUID
    partitions: dict[int, PartitionState] = field(default_factory=dict)
    # bumped whenever a partition changes: readers keep per-topic encodings by it (not part of equality:
    # an image rebuilt from a snapshot counts from 0)
    changes: int = field(default=0, compare=False)


# What applying a partition record did to its partition, for another image to take
# (``MetadataImage.apply_appended`` gives them, ``adopt_or_apply`` takes them): (record, state before, state
# after), read by unpacking. A plain tuple, not a NamedTuple: one is built per record of a bulk change, and
# a NamedTuple's constructor cost the working image's apply a fifth more on a 10,000-partition reassignment.
Outcome = tuple[Message, PartitionState | None, PartitionState]
Outcomes = dict[int, Outcome]  # by the record's offset


class UnknownPartitionError(RuntimeError):
    """A PartitionChangeRecord names a partition the image does not hold: the log is not one this
    image's history explains (Kafka's replay throws likewise), so applying it refuses."""

    def __init__(self, offset: int, topic_id: uuid.UUID, partition: int) -> None:
        super().__init__(f"the PartitionChangeRecord at offset {offset} changes partition {partition} of topic "
                         f"{topic_id}, which the image does not hold")
        self.offset, self.topic_id, self.partition = offset, topic_id, partition


class MetadataImage:
    """Cluster state as of ``offset`` (the last applied record's offset, -1 when empty)."""

    def __init__(self, states: PartitionStates | None = None) -> None:
        self.offset = -1
        self.brokers: dict[int, BrokerState] = {}
        self.topics: dict[uuid.UUID, TopicState] = {}
        self.topic_ids: dict[str, uuid.UUID] = {}
        # topic id -> indexes of its partitions with adding or removing replicas: listing and ending
        # reassignments costs what is reassigning, not the whole image (Kafka's reassigningTopics)
        self.reassigning: dict[uuid.UUID, set[int]] = {}
        self.configs: dict[tuple[int, str], dict[str, str]] = {}
        self.features: dict[str, int] = {}
        # kraft.version of the metadata log (KIP-853): the log's control records, not a feature record, set it
        self.kraft_version = 0
        self.acls: dict[uuid.UUID, Acl] = {}  # access control entries by id (server/metadata/acls.py)
        # (mechanism id, user) -> (salt, stored key, server key, iterations): SCRAM credentials, no passwords
        self.scram: dict[tuple[int, str], tuple[bytes, bytes, bytes, int]] = {}
        # the first producer id no broker has been given yet (ProducerIdsRecord, KIP-730); 0 until one is
        self.next_producer_id = 0
        self.version = 0  # bumped on every apply: lets readers cache encodings of the image
        # (offset, record) of an open metadata transaction (KIP-868), held back until its EndTransactionRecord.
        self.pending_transaction: list[tuple[int, Message]] | None = None
        self._run = _TopicRun(self)  # the topic the last partition changes were applied to
        # the caches partition states are built through, shared with this image's copies
        self._states = PartitionStates() if states is None else states
        self._encodings = SnapshotEncodings()  # the snapshot batches last encoded from this image's topics

    # --- queries ---------------------------------------------------------------------------------

    @property
    def metadata_version_level(self) -> int:
        """The metadata.version feature level records are written at (the default until it is set)."""
        return self.features.get(METADATA_VERSION_FEATURE, METADATA_VERSIONS[DEFAULT_METADATA_VERSION])

    def topic(self, name: str) -> TopicState | None:
        topic_id = self.topic_ids.get(name)
        return None if topic_id is None else self.topics[topic_id]

    def topic_configs(self, name: str) -> dict[str, str]:
        return self.configs.get((ConfigResourceType.TOPIC, name), {})

    def broker_configs(self, broker: str) -> dict[str, str]:
        """Dynamic configs of one broker ("1") or the cluster-wide default ("")."""
        return self.configs.get((ConfigResourceType.BROKER, broker), {})

    def reassigning_partitions(self) -> Iterator[tuple[TopicState, int, PartitionState]]:
        """Every (topic, partition index, state) with adding or removing replicas."""
        for topic_id, indexes in self.reassigning.items():
            topic = self.topics[topic_id]
            for index in indexes:
                yield topic, index, topic.partitions[index]

    def _track_reassignment(self, topic_id: uuid.UUID, index: int, state: PartitionState) -> None:
        if state.adding or state.removing:
            self.reassigning.setdefault(topic_id, set()).add(index)
        elif (indexes := self.reassigning.get(topic_id)) is not None and index in indexes:
            indexes.discard(index)
            if not indexes:
                del self.reassigning[topic_id]

    def partitions(self) -> Iterator[tuple[TopicState, int, PartitionState]]:
        """Every (topic, partition index, state)."""
        for topic in self.topics.values():
            for index, state in topic.partitions.items():
                yield topic, index, state

    # --- copies and snapshots ------------------------------------------------------------------------

    def copy(self) -> MetadataImage:
        """An independent image equal to this one (the immutable broker and partition states are shared):
        cheap enough to take on the event loop and hand to a snapshot thread."""
        other = MetadataImage(self._states)
        other.offset = self.offset
        other.brokers = dict(self.brokers)
        other.topics = {tid: TopicState(t.name, t.topic_id, dict(t.partitions), t.changes)
                        for tid, t in self.topics.items()}
        other.topic_ids = dict(self.topic_ids)
        other.reassigning = {tid: set(indexes) for tid, indexes in self.reassigning.items()}
        other.configs = {key: dict(values) for key, values in self.configs.items()}
        other.features = dict(self.features)
        other.kraft_version = self.kraft_version
        other.acls = dict(self.acls)
        other.scram = dict(self.scram)
        other.next_producer_id = self.next_producer_id
        other.version = self.version
        other.pending_transaction = None if self.pending_transaction is None else list(self.pending_transaction)
        return other

    def to_records(self) -> Iterator[tuple[Message, int]]:
        """The image as (record, version) pairs at its metadata.version, the content of a snapshot:
        applied in order to an empty image they rebuild this one. Features, brokers (with their fencing
        state), topics each followed by their partitions, then configs, ACLs and SCRAM credentials, as
        Kafka's image writer orders them."""
        level = self.metadata_version_level
        return (at_level(record, level) for record in self._snapshot_records())

    def snapshot_batches(self) -> Iterator[tuple[int, bytes]]:
        """The snapshot of the image as it is now: its ``to_records`` as data batches (record count,
        records' bytes) for ``raft.snapshots.write_snapshot_batches``, to be iterated on any thread.
        Called on the thread that applies records; the topics unchanged since the last call are not
        encoded again (server/metadata/snapshot_encoding.py)."""
        return self._encodings.capture(self)

    def _snapshot_records(self) -> Iterator[Message]:
        yield from self.head_records()
        for topic in self.topics.values():
            yield from topic_records(topic.name, topic.topic_id, topic.partitions)
        yield from self.tail_records()

    def head_records(self) -> Iterator[Message]:
        """The snapshot's records before the topics: features, then brokers."""
        # metadata.version first, as Kafka's FeaturesImage writes it: a reader needs it before the rest
        def metadata_version_first(feature: tuple[str, int]) -> tuple[bool, str]:
            return feature[0] != METADATA_VERSION_FEATURE, feature[0]

        for name, level in sorted(self.features.items(), key=metadata_version_first):
            yield rec.FeatureLevelRecord(name=name, feature_level=level)
        for b in sorted(self.brokers.values(), key=lambda b: b.broker_id):
            yield rec.RegisterBrokerRecord(
                broker_id=b.broker_id, incarnation_id=b.incarnation_id,
                broker_epoch=b.epoch, rack=b.rack, fenced=b.fenced, in_controlled_shutdown=b.in_controlled_shutdown,
                end_points=[rec.RegisterBrokerRecord.BrokerEndpoint(
                    name=e.name, host=e.host, port=e.port, security_protocol=e.security_protocol) for e in b.endpoints],
                features=[rec.RegisterBrokerRecord.BrokerFeature(name=n, min_supported_version=lo,
                                                                 max_supported_version=hi)
                          for n, lo, hi in b.features],
                log_dirs=list(b.log_dirs), cordoned_log_dirs=b.cordoned_log_dirs)

    def tail_records(self) -> Iterator[Message]:
        """The snapshot's records after the topics: configs, the next producer id, ACLs, SCRAM credentials."""
        for (resource_type, resource_name), values in self.configs.items():
            for name, value in values.items():
                yield rec.ConfigRecord(resource_type=resource_type, resource_name=resource_name, name=name,
                                       value=value)
        if self.next_producer_id > 0:  # Kafka's ProducerIdsImage writes none while no block was given
            yield rec.ProducerIdsRecord(broker_id=-1, broker_epoch=-1, next_producer_id=self.next_producer_id)
        for acl_id, a in self.acls.items():
            yield rec.AccessControlEntryRecord(
                id=acl_id, resource_type=a.resource_type, resource_name=a.resource_name, pattern_type=a.pattern_type,
                principal=a.principal, host=a.host, operation=a.operation, permission_type=a.permission)
        for (mechanism, name), (salt, stored_key, server_key, iterations) in self.scram.items():
            yield rec.UserScramCredentialRecord(name=name, mechanism=mechanism, salt=salt, stored_key=stored_key,
                                                server_key=server_key, iterations=iterations)

    # --- applying records ------------------------------------------------------------------------

    def apply_appended(self, records: Iterable[Message], base: int) -> Outcomes:
        """Apply a batch appended at offsets ``base``.. (the controller's working image) and return the
        ``Outcome`` of each partition record that left a partition state, by offset: what
        ``adopt_or_apply`` lets another image take."""
        outcomes: Outcomes = {}
        self._apply_batch(enumerate(records, base), None, outcomes)
        return outcomes

    def adopt_or_apply(self, committed: Iterable[tuple[int, Message]], known: Outcomes) -> None:
        """Apply committed (offset, record) pairs, taking the outcomes another image already built:
        ``known`` holds that image's ``apply_appended`` outcomes (each entry read is removed; empty where
        no image did: a standby controller). Where the committed record is that very record and this
        image holds that very state before (and no transaction is open), the state after is exactly
        what applying would build, so it is taken as it is; anything else is applied."""
        self._apply_batch(committed, known, None)

    def apply_frames(self, frames: list[bytes], offset: int) -> None:
        """Apply framed metadata records (a snapshot's, every one at ``offset``) as ``apply`` applies
        them decoded, without decoding most of them: the state a PartitionRecord builds depends only on
        its bytes after the partition id, so each distinct rest is decoded and built once
        (``PartitionStates.from_frame``) and partitions alike take that state. Codec errors
        (``UnknownRecordType``, ``MalformedError``) are raised as ``decode_frame`` raises them; the
        frames before stay applied."""
        self._run.end()
        from_frame = self._states.from_frame
        topic_id: uuid.UUID | None = None
        topic: TopicState | None = None
        tracked = False
        for frame in frames:
            if frame[:PREFIX_END] not in PARTITION_FRAME_PREFIXES or self.pending_transaction is not None:
                self.apply(rec.decode_frame(frame)[0], offset)
                topic_id = None  # the record may have added or removed a topic
                continue
            frame_topic_id, state = from_frame(frame)
            if frame_topic_id is not topic_id:
                topic_id = frame_topic_id
                topic = self.topics.get(topic_id)
                tracked = topic_id in self.reassigning
            if topic is None:
                continue
            index = partition_id_of_frame(frame, PREFIX_END)[0]
            topic.changes += 1
            topic.partitions[index] = state
            if tracked or state.removing or state.adding:
                self._track_reassignment(frame_topic_id, index, state)
                tracked = frame_topic_id in self.reassigning
        self.offset = offset
        self.version += 1

    def partition_state(self, topic_id: uuid.UUID, partition: int) -> PartitionState | None:
        topic = self.topics.get(topic_id)
        return None if topic is None else topic.partitions.get(partition)

    def apply(self, record: Message, offset: int) -> None:
        """Apply one committed record, at ``offset``: the core, what one record means. Records inside a
        metadata transaction (written by Kafka's controller, never by kraftwire's) take effect together at
        its end, or not at all if aborted, as Kafka's MetadataLoader replays them. Record types that carry
        no state kraftwire keeps (quotas, delegation tokens, controller registrations, ...)
        change nothing."""
        kind = type(record)
        held = self.pending_transaction
        if held is not None and kind not in _TRANSACTION_ENDS:
            held.append((offset, record))
        elif held is not None:
            self.pending_transaction = None
            if kind is rec.EndTransactionRecord:
                for held_offset, held_record in held:
                    self.apply(held_record, held_offset)
        elif kind is _CHANGE_RECORD:
            self._apply_partition_change(record, offset, None, None)  # type: ignore[arg-type]  # its type, just checked
        else:
            handler = _APPLY.get(kind)
            if handler is not None:
                handler(self, record)
        self.offset = offset
        self.version += 1

    def _apply_partition_change(self, r: rec.PartitionChangeRecord, offset: int, known: Outcome | None,
                                outcomes: Outcomes | None) -> None:
        """Merge ``r`` into its partition, or take ``known``'s state after where it was built from this
        very record and this very state before; keep the ``Outcome`` in ``outcomes`` if given."""
        run = self._run
        partitions = run.partitions(r.topic_id)
        before = None if partitions is None else partitions.get(r.partition_id)
        if before is None:
            raise UnknownPartitionError(offset, r.topic_id, r.partition_id)
        if known is None:
            after = self._states.merged(before, r)
        else:
            built_from, built_before, after = known
            if built_from is not r or built_before is not before:
                after = self._states.merged(before, r)
        run.put(r.partition_id, after)
        if outcomes is not None:
            outcomes[offset] = (r, before, after)

    def _apply_batch(self, committed: Iterable[tuple[int, Message]], known: Outcomes | None,
                     outcomes: Outcomes | None) -> None:
        """``apply`` over (offset, record) pairs, taking ``known`` outcomes where they fit and
        keeping each partition record's in ``outcomes`` (either may be None)."""
        change_record, partition_record = rec.PartitionChangeRecord, rec.PartitionRecord
        apply_change = self._apply_partition_change
        for offset, record in committed:
            outcome = known.pop(offset, None) if known else None
            kind = type(record)
            if kind is change_record and self.pending_transaction is None:
                apply_change(record, offset, outcome, outcomes)  # type: ignore[arg-type]  # its type, just checked
                self.offset = offset
                self.version += 1
            elif kind is partition_record and self.pending_transaction is None:
                self._apply_partition_record(record, offset, outcome, outcomes)  # type: ignore[arg-type]  # as above
            else:
                self.apply(record, offset)

    def _apply_partition_record(self, r: rec.PartitionRecord, offset: int, known: Outcome | None,
                                outcomes: Outcomes | None) -> None:
        """Register ``r``'s partition, taking ``known``'s state after where it fits, as changes do."""
        before = self.partition_state(r.topic_id, r.partition_id)
        after: PartitionState | None
        built_from, built_before, after = (None, None, None) if known is None else known
        if built_from is r and built_before is before and r.topic_id in self.topics:
            run = self._run
            run.end()
            run.partitions(r.topic_id)
            assert after is not None  # an outcome's state after is a state
            run.put(r.partition_id, after)
            self.offset = offset
            self.version += 1
        else:
            self.apply(r, offset)
            after = self.partition_state(r.topic_id, r.partition_id)
        if outcomes is not None and after is not None:
            outcomes[offset] = (r, before, after)

    def _begin_transaction(self, _record: Message) -> None:
        self.pending_transaction = []

    def _register_broker(self, r: rec.RegisterBrokerRecord) -> None:
        self.brokers[r.broker_id] = BrokerState(
            broker_id=r.broker_id, epoch=r.broker_epoch, incarnation_id=r.incarnation_id,
            endpoints=tuple(Endpoint(e.name, e.host, e.port, e.security_protocol) for e in r.end_points),
            rack=r.rack, fenced=r.fenced, in_controlled_shutdown=r.in_controlled_shutdown,
            log_dirs=tuple(r.log_dirs),
            features=tuple((f.name, f.min_supported_version, f.max_supported_version) for f in r.features),
            cordoned_log_dirs=None if r.cordoned_log_dirs is None else tuple(r.cordoned_log_dirs))

    def _unregister_broker(self, r: rec.UnregisterBrokerRecord) -> None:
        self.brokers.pop(r.broker_id, None)

    def _set_fenced(self, broker_id: int, fenced: bool) -> None:
        broker = self.brokers.get(broker_id)
        if broker is not None:
            self.brokers[broker_id] = replace(broker, fenced=fenced)

    def _change_broker(self, r: rec.BrokerRegistrationChangeRecord) -> None:
        broker = self.brokers.get(r.broker_id)
        if broker is None:
            return
        changes: dict[str, Any] = {}  # BrokerState's fields by name
        if r.fenced == FENCE:
            changes["fenced"] = True
        elif r.fenced == UNFENCE:
            changes["fenced"] = False
        if r.in_controlled_shutdown == ENTER_CONTROLLED_SHUTDOWN:
            changes["in_controlled_shutdown"] = True
        if r.log_dirs:
            changes["log_dirs"] = tuple(r.log_dirs)
        if r.cordoned_log_dirs is not None:
            changes["cordoned_log_dirs"] = tuple(r.cordoned_log_dirs)
        self.brokers[r.broker_id] = replace(broker, **changes)

    def _add_topic(self, r: rec.TopicRecord) -> None:
        self._run.end()
        self.topics[r.topic_id] = TopicState(r.name, r.topic_id)
        self.reassigning.pop(r.topic_id, None)  # a topic record again starts it without partitions
        self.topic_ids[r.name] = r.topic_id

    def _remove_topic(self, r: rec.RemoveTopicRecord) -> None:
        self._run.end()
        topic = self.topics.pop(r.topic_id, None)
        if topic is not None:
            del self.topic_ids[topic.name]
            self.reassigning.pop(r.topic_id, None)
            self.configs.pop((ConfigResourceType.TOPIC, topic.name), None)

    def _add_partition(self, r: rec.PartitionRecord) -> None:
        self._run.end()  # the index of reassigning partitions may change below
        topic = self.topics.get(r.topic_id)
        if topic is None:
            return
        topic.changes += 1
        topic.partitions[r.partition_id] = state = self._states.from_record(r)
        if state.removing or state.adding or r.topic_id in self.reassigning:
            self._track_reassignment(r.topic_id, r.partition_id, state)

    def _clear_elr(self, r: rec.ClearElrRecord) -> None:
        """ClearElrRecord: the ELR of one topic's partitions (every topic's for an empty name) is
        emptied, each such partition's epoch going up as a change record's would."""
        if r.topic_name:
            topic = self.topic(r.topic_name)
            topics = [] if topic is None else [topic]
        else:
            topics = list(self.topics.values())
        for topic in topics:
            for index, state in topic.partitions.items():
                if state.elr or state.last_known_elr:
                    topic.changes += 1
                    topic.partitions[index] = state._replace(elr=(), last_known_elr=(),
                                                             partition_epoch=state.partition_epoch + 1)

    def _set_config(self, r: rec.ConfigRecord) -> None:
        key = (r.resource_type, r.resource_name)
        if r.value is None:
            values = self.configs.get(key)
            if values is not None:
                values.pop(r.name, None)
                if not values:
                    del self.configs[key]
        else:
            self.configs.setdefault(key, {})[r.name] = r.value

    def _set_feature(self, r: rec.FeatureLevelRecord) -> None:
        self.features[r.name] = r.feature_level

    def _add_acl(self, r: rec.AccessControlEntryRecord) -> None:
        self.acls[r.id] = Acl(r.resource_type, r.resource_name, r.pattern_type, r.principal, r.host, r.operation,
                              r.permission_type)


class _TopicRun:
    """Partition changes applied one after another to one topic: the topic and its index of
    reassigning partitions are looked up once (the records of a bulk change share their topic id
    object, so a run is told by identity), and each new state is kept with the topic's change count
    (the Metadata cache's key) and that index following. Whatever else may add or remove a topic or
    touch that index (topic records, partition records) ends the run first.

    The run refers to its image weakly: a strong reference would put every image in a reference cycle,
    so an image dropped (a restarted controller's, a snapshot's copy) would wait, with every partition
    state only it holds, for a full pass of the cyclic garbage collector: at 2M partitions seconds of
    holding the interpreter, and RSS grown meanwhile by the dropped image."""

    __slots__ = ("image", "topic_id", "topic", "indexes")

    def __init__(self, image: MetadataImage) -> None:
        self.image = weakref.ref(image)
        self.topic_id: uuid.UUID | None = None
        self.topic: TopicState | None = None
        self.indexes: set[int] | None = None

    def _image(self) -> MetadataImage:
        image = self.image()
        assert image is not None, "a run lives only as long as its image"
        return image

    def partitions(self, topic_id: uuid.UUID) -> dict[int, PartitionState] | None:
        if topic_id is not self.topic_id:
            self.topic_id = topic_id
            image = self._image()
            self.topic = image.topics.get(topic_id)
            self.indexes = image.reassigning.get(topic_id)
        return None if self.topic is None else self.topic.partitions

    def end(self) -> None:
        self.topic_id = None

    def put(self, index: int, after: PartitionState) -> None:
        """Set partition ``index`` of the run's topic (``partitions`` found it) to ``after``."""
        topic, topic_id = self.topic, self.topic_id
        assert topic is not None and topic_id is not None
        topic.changes += 1
        topic.partitions[index] = after
        if after.adding or after.removing:
            if self.indexes is None:
                self.indexes = self._image().reassigning[topic_id] = set()
            self.indexes.add(index)
        elif self.indexes is not None and index in self.indexes:
            self.indexes.discard(index)
            if not self.indexes:
                del self._image().reassigning[topic_id]
                self.indexes = None


def _set_scram(image: MetadataImage, r: rec.UserScramCredentialRecord) -> None:
    image.scram[(r.mechanism, r.name)] = (bytes(r.salt), bytes(r.stored_key), bytes(r.server_key), r.iterations)


def _set_next_producer_id(image: MetadataImage, r: rec.ProducerIdsRecord) -> None:
    """A block of producer ids was given: the next one starts after it (a record that would move it back,
    which Kafka's replay refuses, leaves it where it is)."""
    image.next_producer_id = max(image.next_producer_id, r.next_producer_id)


def _nothing(image: MetadataImage, r: Message) -> None:
    """A transaction's end outside a transaction: nothing to end."""


# What each record type does to the image (PartitionChangeRecords and transactions' ends are the core's,
# ``MetadataImage.apply``). Each handler takes the record of its key's type.
_APPLY: dict[type[Message], Callable[[MetadataImage, Any], object]] = {
    rec.RegisterBrokerRecord: MetadataImage._register_broker,
    rec.UnregisterBrokerRecord: MetadataImage._unregister_broker,
    rec.FenceBrokerRecord: lambda image, r: image._set_fenced(r.id, True),
    rec.UnfenceBrokerRecord: lambda image, r: image._set_fenced(r.id, False),
    rec.BrokerRegistrationChangeRecord: MetadataImage._change_broker,
    rec.TopicRecord: MetadataImage._add_topic,
    rec.RemoveTopicRecord: MetadataImage._remove_topic,
    rec.PartitionRecord: MetadataImage._add_partition,
    rec.ConfigRecord: MetadataImage._set_config,
    rec.FeatureLevelRecord: MetadataImage._set_feature,
    rec.AccessControlEntryRecord: MetadataImage._add_acl,
    rec.RemoveAccessControlEntryRecord: lambda image, r: image.acls.pop(r.id, None),
    rec.UserScramCredentialRecord: _set_scram,
    rec.RemoveUserScramCredentialRecord: lambda image, r: image.scram.pop((r.mechanism, r.name), None),
    rec.ClearElrRecord: MetadataImage._clear_elr,
    rec.ProducerIdsRecord: _set_next_producer_id,
    rec.BeginTransactionRecord: MetadataImage._begin_transaction,
    rec.EndTransactionRecord: _nothing,
    rec.AbortTransactionRecord: _nothing,
}
_TRANSACTION_ENDS = (rec.EndTransactionRecord, rec.AbortTransactionRecord)
_CHANGE_RECORD = rec.PartitionChangeRecord
