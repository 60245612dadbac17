"""The metadata image: cluster state built only by applying metadata records, in log order.

Brokers, topics with their partitions, dynamic configs, feature levels, access control entries and
users' SCRAM credentials. ``apply`` is the one way the
image changes; the controller keeps two images (committed, and working = committed + appended but not
yet committed records) and both are fed the same records (``adopt_or_apply`` lets the committed image take
a partition state the working image already built from the same record). A snapshot's load goes through
``apply_frames``, which takes the framed records and builds the state of each distinct PartitionRecord
once (a restart at millions of partitions is mostly these).

Partition state follows Kafka's replay rules (``PartitionRegistration.merge``): every
PartitionChangeRecord bumps the partition epoch; the leader epoch goes up exactly when the record
carries a Leader (-2 means unchanged); absent (null) lists mean unchanged; directories that end up
missing are MIGRATING for every replica.
"""
from __future__ import annotations

import struct
import uuid
import weakref
from dataclasses import dataclass, field, replace
from functools import partial
from typing import NamedTuple

from kraftwire.codec import records as rec
from kraftwire.codec.constants import (ENTER_CONTROLLED_SHUTDOWN, FENCE, LEADER_RECOVERY_UNCHANGED, LEADER_UNCHANGED,
                                       LOST, MIGRATING, UNASSIGNED, UNFENCE, ConfigResourceType)

from .acls import Acl
from .record_versions import DEFAULT_METADATA_VERSION, METADATA_VERSION_FEATURE, METADATA_VERSIONS, version_for
from .snapshot_encoding import SnapshotEncodings, topic_records


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


class PartitionState(NamedTuple):
    """A partition's registration. A named tuple: it is built for every record applied, twice (the
    working and the committed image), and a tuple builds in a fifth of a frozen dataclass's time."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    removing: tuple[int, ...]
    adding: tuple[int, ...]
    leader: int
    leader_recovery_state: int
    leader_epoch: int
    partition_epoch: int
    directories: tuple[uuid.UUID, ...]
    # Eligible leader replicas (KIP-966), kept by the controller where eligible.leader.replicas.version
    # is on (server/controller/partition_change.py), or as a Kafka log holds them.
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()

    @property
    def reassigning(self) -> bool:
        return bool(self.adding or self.removing)

    def directory_of(self, broker_id: int) -> uuid.UUID:
        return self.directories[self.replicas.index(broker_id)]


@dataclass(slots=True)
class TopicState:
    name: str
    topic_id: uuid.UUID
    partitions: dict[int, PartitionState] = field(default_factory=dict)
    # bumped whenever a partition changes: readers keep per-topic encodings by it (not part of equality:
    # an image rebuilt from a snapshot counts from 0)
    changes: int = field(default=0, compare=False)


# Replica lists, ISRs and directory lists repeat across partitions (a few brokers make few distinct
# lists): each partition holds the one shared tuple, not a copy of its own. The table is emptied when it
# grows large, so churning lists cannot grow it without bound (tuples already handed out stay valid).
_SHARED: dict[tuple, tuple] = {}
_SHARED_LIMIT = 1 << 16


def shared(values) -> tuple:
    """``values`` as a tuple, the same object for equal contents."""
    values = tuple(values)
    found = _SHARED.get(values)
    if found is None:
        if len(_SHARED) >= _SHARED_LIMIT:
            _SHARED.clear()
        found = _SHARED[values] = values
    return found


def _directories(directories, replicas) -> tuple[uuid.UUID, ...]:
    # all MIGRATING (0) is checked without UUID.__eq__, and past the first directory only when it is 0
    if not directories or (not directories[0].int and not any(d.int for d in directories)):
        return shared((MIGRATING,) * len(replicas))
    return shared(directories)


_new_partition = partial(tuple.__new__, PartitionState)  # a PartitionState from all its fields in order


def _partition_state(r) -> PartitionState:
    """The state a PartitionRecord ``r`` registers, built positionally (not by the named tuple's
    keywords): a snapshot's replay at restart is mostly these, millions of them."""
    replicas = shared(r.replicas)
    return _new_partition((
        replicas, shared(r.isr), tuple(r.removing_replicas), tuple(r.adding_replicas), r.leader,
        r.leader_recovery_state, r.leader_epoch, r.partition_epoch, _directories(r.directories, replicas),
        tuple(r.eligible_leader_replicas or ()), tuple(r.last_known_elr or ())))


# A PartitionRecord's frame: three one-byte varints (frame version, type 3, record version), then the
# int32 partition id. (bytes after the id) -> (topic id, state) for ``MetadataImage.apply_frames``; the
# state is immutable, so partitions may share it. Emptied when it grows large.
_PARTITION_FRAME_PREFIXES = frozenset(
    bytes((rec.FRAME_VERSION, rec.PartitionRecord.API_KEY, version))
    for version in range(rec.PartitionRecord.VALID_VERSIONS.low, rec.PartitionRecord.VALID_VERSIONS.high + 1))
_PARTITION_ID = struct.Struct(">i").unpack_from
_PARTITION_FRAMES: dict[bytes, tuple[uuid.UUID, PartitionState]] = {}
_PARTITION_FRAMES_LIMIT = 1 << 12


# (state before, a PartitionChangeRecord's fields after its two ids) -> state after: a bulk change turns
# thousands of partitions alike into alike states, and every image that applies it (the controllers'
# working and committed images, the brokers') merges each distinct case once. Emptied when it grows large.
_MERGES: dict[tuple, PartitionState] = {}
_MERGES_LIMIT = 1 << 12
_last_merge: tuple = (None, None, None)  # (state, change fields, state after) of the latest merge asked for


def merged_partition(state: PartitionState, r) -> PartitionState:
    """The partition after a PartitionChangeRecord ``r`` (Kafka's PartitionRegistration.merge); the
    same state object for the same state and change (``_MERGES``; hashing the key costs a sixth of a
    merge). The records of a bulk change come one after another onto one shared state, with the same
    field objects: the latest merge is checked first, by identity and an equality that meets
    identical fields, without hashing."""
    global _last_merge
    rest = r[2:]
    last_state, last_rest, after = _last_merge
    if state is last_state and rest == last_rest:
        return after
    key = (state, rest)
    try:
        after = _MERGES.get(key)
    except TypeError:  # a record built around the constructor with a list in it: unhashable
        return _merge(state, r)
    if after is None:
        if len(_MERGES) >= _MERGES_LIMIT:
            _MERGES.clear()
        after = _MERGES[key] = _merge(state, r)
    _last_merge = (state, rest, after)
    return after


def _merge(state: PartitionState, r) -> PartitionState:
    replicas = state.replicas if r.replicas is None else shared(r.replicas)
    directories = state.directories if r.directories is None else tuple(r.directories)
    if len(directories) != len(replicas):
        directories = _directories(None, replicas) if r.directories is None else directories
    return _new_partition((  # in PartitionState's field order
        replicas,
        state.isr if r.isr is None else shared(r.isr),
        state.removing if r.removing_replicas is None else tuple(r.removing_replicas),
        state.adding if r.adding_replicas is None else tuple(r.adding_replicas),
        state.leader if r.leader == LEADER_UNCHANGED else r.leader,
        state.leader_recovery_state if r.leader_recovery_state == LEADER_RECOVERY_UNCHANGED else r.leader_recovery_state,
        state.leader_epoch + (r.leader != LEADER_UNCHANGED),
        state.partition_epoch + 1,
        directories if directories is state.directories else _directories(directories, replicas),
        state.elr if r.eligible_leader_replicas is None else tuple(r.eligible_leader_replicas),
        state.last_known_elr if r.last_known_elr is None else tuple(r.last_known_elr)))


class MetadataImage:
    """Cluster state as of ``offset`` (the last applied record's offset, -1 when empty)."""

    def __init__(self):
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
        self.version = 0  # bumped on every apply: lets readers cache encodings of the image
        # Records of an open metadata transaction (KIP-868), held back until its EndTransactionRecord.
        self.pending_transaction: list | None = None
        self._run = _TopicRun(self)  # the topic the last partition changes were applied to
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

    def reassigning_partitions(self):
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

    def partitions(self):
        """Every (topic, partition index, state)."""
        for topic in self.topics.values():
            for index, state in topic.partitions.items():
                yield topic, index, state

    # --- copies and snapshots ------------------------------------------------------------------------

    def copy(self) -> "MetadataImage":
        """An independent image equal to this one (the immutable broker and partition states are shared):
        cheap enough to take on the event loop and hand to a snapshot thread."""
        other = MetadataImage()
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
        other.version = self.version
        other.pending_transaction = None if self.pending_transaction is None else list(self.pending_transaction)
        return other

    def to_records(self):
        """The image as (record, version) pairs at its metadata.version, the content of a snapshot:
        applied in order to an empty image they rebuild this one. Features, brokers (with their fencing state), topics each followed
        by their partitions, then configs, ACLs and SCRAM credentials, as Kafka's image writer orders them."""
        level = self.metadata_version_level
        return ((record, version_for(record, level)) for record in self._snapshot_records())

    def snapshot_batches(self):
        """The snapshot of the image as it is now: its ``to_records`` as data batches (record count,
        records' bytes) for ``raft.snapshots.write_snapshot_batches``, to be iterated on any thread.
        Called on the thread that applies records; the topics unchanged since the last call are not
        encoded again (server/metadata/snapshot_encoding.py)."""
        return self._encodings.capture(self)

    def _snapshot_records(self):
        yield from self.head_records()
        for topic in self.topics.values():
            yield from topic_records(topic.name, topic.topic_id, topic.partitions)
        yield from self.tail_records()

    def head_records(self):
        """The snapshot's records before the topics: features, then brokers."""
        # metadata.version first, as Kafka's FeaturesImage writes it: a reader needs it before the rest
        for name, level in sorted(self.features.items(), key=lambda item: (item[0] != METADATA_VERSION_FEATURE, item[0])):
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

    def tail_records(self):
        """The snapshot's records after the topics: configs, ACLs, SCRAM credentials."""
        for (resource_type, resource_name), values in self.configs.items():
            for name, value in values.items():
                yield rec.ConfigRecord(resource_type=resource_type, resource_name=resource_name, name=name,
                                       value=value)
        for acl_id, a in self.acls.items():
            yield rec.AccessControlEntryRecord(
                id=acl_id, resource_type=a.resource_type, resource_name=a.resource_name, pattern_type=a.pattern_type,
                principal=a.principal, host=a.host, operation=a.operation, permission_type=a.permission)
        for (mechanism, name), (salt, stored_key, server_key, iterations) in self.scram.items():
            yield rec.UserScramCredentialRecord(name=name, mechanism=mechanism, salt=salt, stored_key=stored_key,
                                                server_key=server_key, iterations=iterations)

    # --- applying records ------------------------------------------------------------------------

    def apply(self, record, offset: int) -> None:
        """Apply one committed record. Records inside a metadata transaction (written by Kafka's
        controller, never by kraftwire's) take effect together at its end, or not at all if aborted,
        as Kafka's MetadataLoader replays them. Record types that carry no state kraftwire keeps
        (quotas, producer ids, delegation tokens, controller registrations, ...) change nothing."""
        if self.pending_transaction is not None and type(record) not in _TRANSACTION_ENDS:
            self.pending_transaction.append(record)
        else:
            handler = _APPLY.get(type(record))
            if handler is not None:
                handler(self, record)
        self.offset = offset
        self.version += 1

    def apply_appended(self, records, base: int) -> dict[int, tuple]:
        """Apply a batch appended at offsets ``base``.. (the controller's working image) and return, for
        each partition record that left a partition state, offset -> (record, state before, state
        after), what ``adopt_or_apply`` lets another image take. Partitions alike that a change turns
        alike share one merge and one resulting state (``merged_partition``)."""
        outcomes = {}
        run = self._run
        for offset, record in enumerate(records, base):
            kind = type(record)
            if kind is rec.PartitionChangeRecord and self.pending_transaction is None:
                partitions = run.partitions(record[1])
                before = None if partitions is None else partitions.get(record[0])
                if before is not None:
                    after = merged_partition(before, record)
                    run.put(record[0], after)
                    self.offset = offset
                    self.version += 1
                    outcomes[offset] = (record, before, after)
                    continue
            if kind is rec.PartitionRecord:
                before = self.partition_state(record.topic_id, record.partition_id)
                self.apply(record, offset)
                after = self.partition_state(record.topic_id, record.partition_id)
                if after is not None:
                    outcomes[offset] = (record, before, after)
            else:
                self.apply(record, offset)
        return outcomes

    def partition_state(self, topic_id: uuid.UUID, partition: int) -> PartitionState | None:
        topic = self.topics.get(topic_id)
        return None if topic is None else topic.partitions.get(partition)

    def adopt_or_apply(self, committed, known: dict[int, tuple]) -> None:
        """Apply committed (offset, record) pairs, taking the outcomes another image already built:
        ``known`` maps offsets to (record, state before, state after) from that image's
        ``apply_appended`` (each entry read is removed; empty where no image did: a standby
        controller). Where the committed record is that very record and this image holds that very
        state before (and no transaction is open), the state after is exactly what ``apply`` would
        build, so it is taken as it is; other partition changes are merged here as ``apply`` merges
        them, any other record is applied."""
        run = self._run
        for offset, record in committed:
            outcome = known.pop(offset, None) if known else None
            kind = type(record)
            if self.pending_transaction is None and (kind is rec.PartitionChangeRecord or outcome is not None):
                partitions = run.partitions(record[1])
                if partitions is not None:
                    before = partitions.get(record[0])
                    if outcome is not None and outcome[0] is record and before is outcome[1]:
                        after = outcome[2]
                    elif kind is rec.PartitionChangeRecord and before is not None:
                        after = merged_partition(before, record)
                    else:
                        after = None
                    if after is not None:
                        run.put(record[0], after)
                        self.offset = offset
                        self.version += 1
                        continue
            self.apply(record, offset)

    def _begin_transaction(self, _record) -> None:
        self.pending_transaction = []

    def _end_transaction(self, record) -> None:
        held, self.pending_transaction = self.pending_transaction or [], None
        if type(record) is rec.EndTransactionRecord:
            for pending in held:
                handler = _APPLY.get(type(pending))
                if handler is not None:
                    handler(self, pending)

    def _register_broker(self, r) -> None:
        self.brokers[r.broker_id] = BrokerState(
            broker_id=r.broker_id, epoch=r.broker_epoch, incarnation_id=r.incarnation_id,
            endpoints=tuple(Endpoint(e.name, e.host, e.port, e.security_protocol) for e in r.end_points),
            rack=r.rack, fenced=r.fenced, in_controlled_shutdown=r.in_controlled_shutdown,
            log_dirs=tuple(r.log_dirs),
            features=tuple((f.name, f.min_supported_version, f.max_supported_version) for f in r.features),
            cordoned_log_dirs=None if r.cordoned_log_dirs is None else tuple(r.cordoned_log_dirs))

    def _unregister_broker(self, r) -> None:
        self.brokers.pop(r.broker_id, None)

    def _set_fenced(self, broker_id: int, fenced: bool) -> None:
        broker = self.brokers.get(broker_id)
        if broker is not None:
            self.brokers[broker_id] = replace(broker, fenced=fenced)

    def _change_broker(self, r) -> None:
        broker = self.brokers.get(r.broker_id)
        if broker is None:
            return
        changes = {}
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

    def _add_topic(self, r) -> None:
        self._run.end()
        self.topics[r.topic_id] = TopicState(r.name, r.topic_id)
        self.reassigning.pop(r.topic_id, None)  # a topic record again starts it without partitions
        self.topic_ids[r.name] = r.topic_id

    def _remove_topic(self, r) -> None:
        self._run.end()
        topic = self.topics.pop(r.topic_id, None)
        if topic is not None:
            del self.topic_ids[topic.name]
            self.reassigning.pop(r.topic_id, None)
            self.configs.pop((ConfigResourceType.TOPIC, topic.name), None)

    def _add_partition(self, r) -> None:
        self._run.end()  # the index of reassigning partitions may change below
        topic = self.topics.get(r.topic_id)
        if topic is None:
            return
        topic.changes += 1
        topic.partitions[r.partition_id] = state = _partition_state(r)
        if state.removing or state.adding or r.topic_id in self.reassigning:
            self._track_reassignment(r.topic_id, r.partition_id, state)

    def apply_frames(self, frames: list[bytes], offset: int) -> None:
        """Apply framed metadata records (a snapshot's, every one at ``offset``) as ``apply`` applies
        them decoded, without decoding most of them: a snapshot is mostly PartitionRecords, and those of
        partitions alike (a topic's replica lists, ISRs, epochs and directories repeat) differ only in
        the partition id that starts their body. The state a PartitionRecord builds depends only on
        its bytes after that id, so each distinct rest is decoded and built once (``_PARTITION_FRAMES``)
        and the other partitions take that state. Codec errors (``UnknownRecordType``,
        ``MalformedError``) are raised as ``decode_frame`` raises them; the frames before stay applied."""
        self._run.end()
        known = _PARTITION_FRAMES
        partition_id = _PARTITION_ID
        topic_id, topic, tracked = None, None, False
        for frame in frames:
            if frame[:3] not in _PARTITION_FRAME_PREFIXES or self.pending_transaction is not None:
                self.apply(rec.decode_frame(frame)[0], offset)
                topic_id = None  # the record may have added or removed a topic
                continue
            found = known.get(rest := frame[7:])
            if found is None:
                record = rec.decode_frame(frame)[0]
                if len(known) >= _PARTITION_FRAMES_LIMIT:
                    known.clear()
                found = known[rest] = (record.topic_id, _partition_state(record))
            if found[0] is not topic_id:
                topic_id = found[0]
                topic = self.topics.get(topic_id)
                tracked = topic_id in self.reassigning
            if topic is None:
                continue
            state = found[1]
            index = partition_id(frame, 3)[0]
            topic.changes += 1
            topic.partitions[index] = state
            if tracked or state.removing or state.adding:
                self._track_reassignment(topic_id, index, state)
                tracked = topic_id in self.reassigning
        self.offset = offset
        self.version += 1

    def _change_partition(self, r) -> None:
        run = self._run
        partitions = run.partitions(r[1])
        state = None if partitions is None else partitions.get(r[0])
        if state is not None:
            run.put(r[0], merged_partition(state, r))

    def _clear_elr(self, r) -> None:
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

    def _set_config(self, r) -> None:
        key = (r.resource_type, r.resource_name)
        if r.value is None:
            values = self.configs.get(key)
            if values is not None:
                values.pop(r.name, None)
                if not values:
                    del self.configs[key]
        else:
            self.configs.setdefault(key, {})[r.name] = r.value

    def _set_feature(self, r) -> None:
        self.features[r.name] = r.feature_level

    def _add_acl(self, r) -> None:
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

    def __init__(self, image: MetadataImage):
        self.image, self.topic_id, self.topic, self.indexes = weakref.ref(image), None, None, None

    def partitions(self, topic_id: uuid.UUID) -> dict[int, PartitionState] | None:
        if topic_id is not self.topic_id:
            self.topic_id = topic_id
            image = self.image()
            self.topic = image.topics.get(topic_id)
            self.indexes = image.reassigning.get(topic_id)
        return None if self.topic is None else self.topic.partitions

    def end(self) -> None:
        self.topic_id = None

    def put(self, index: int, after: PartitionState) -> None:
        topic = self.topic
        topic.changes += 1
        topic.partitions[index] = after
        if after.adding or after.removing:
            if self.indexes is None:
                self.indexes = self.image().reassigning[self.topic_id] = set()
            self.indexes.add(index)
        elif self.indexes is not None and index in self.indexes:
            self.indexes.discard(index)
            if not self.indexes:
                del self.image().reassigning[self.topic_id]
                self.indexes = None


_APPLY = {
    rec.RegisterBrokerRecord: MetadataImage._register_broker,
    rec.UnregisterBrokerRecord: MetadataImage._unregister_broker,
    rec.FenceBrokerRecord: lambda image, r: image._set_fenced(r.id, True),
    rec.UnfenceBrokerRecord: lambda image, r: image._set_fenced(r.id, False),
    rec.BrokerRegistrationChangeRecord: MetadataImage._change_broker,
    rec.TopicRecord: MetadataImage._add_topic,
    rec.RemoveTopicRecord: MetadataImage._remove_topic,
    rec.PartitionRecord: MetadataImage._add_partition,
    rec.PartitionChangeRecord: MetadataImage._change_partition,
    rec.ConfigRecord: MetadataImage._set_config,
    rec.FeatureLevelRecord: MetadataImage._set_feature,
    rec.AccessControlEntryRecord: MetadataImage._add_acl,
    rec.RemoveAccessControlEntryRecord: lambda image, r: image.acls.pop(r.id, None),
    rec.UserScramCredentialRecord: lambda image, r: image.scram.__setitem__(
        (r.mechanism, r.name), (bytes(r.salt), bytes(r.stored_key), bytes(r.server_key), r.iterations)),
    rec.RemoveUserScramCredentialRecord: lambda image, r: image.scram.pop((r.mechanism, r.name), None),
    rec.ClearElrRecord: MetadataImage._clear_elr,
    rec.BeginTransactionRecord: MetadataImage._begin_transaction,
    rec.EndTransactionRecord: MetadataImage._end_transaction,
    rec.AbortTransactionRecord: MetadataImage._end_transaction,
}
_TRANSACTION_ENDS = (rec.EndTransactionRecord, rec.AbortTransactionRecord)
# what merged_partition's key leaves out, and where apply_appended and adopt_or_apply read the ids
assert rec.PartitionChangeRecord._fields[:2] == rec.PartitionRecord._fields[:2] == ("partition_id", "topic_id")
