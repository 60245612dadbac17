"""The production twin: a cluster booted from a copy of a real cluster's metadata log
(``kraftwire serve --from-log DIR``, ``Cluster(from_log=DIR)``), to rehearse a reassignment plan.

``read_source`` reads the source (the ``__cluster_metadata-0`` directory, or the directory holding
it): the newest snapshot, then every segment record after it, checked as ``kraftwire log verify``
checks them, into a ``MetadataImage``. The source is only read, never written or locked. A partial
batch at the very end (a copy taken while Kafka was writing) is left out; damage anywhere else, a
record of a type or version kraftwire has no schema for (Kafka's metadata loader fails on those too),
or a metadata.version kraftwire cannot run at (it runs every KRaft production level, 3.3-IV3 to
4.4-IV2) refuses the source with a one-line ``SourceError``. The notes say in one line each what the
source's level does that kraftwire does not model (``record_versions.unmodelled``); none changes a
reassignment's placement or completion, so none refuses. Below 3.7-IV2 brokers register no log
directory: each gets one. The cluster id is the one in the ``meta.properties`` beside the log.

``TwinSource.seed`` turns a new data directory into the twin's: a snapshot of the source's image at
the source's end offset and epoch (so the twin's own records follow the source's offsets), and a
``meta.properties`` with the registered directory id in each simulated broker's log directory. The
twin's brokers are the registered ones, at their ids, racks and directories; each first registers with
the incarnation id the source has for it, which amends the registration (Kafka's rule for a known
incarnation) rather than fencing the broker, so leaders and ISRs stay as logged. Controllers the
source registered are not simulated: the twin's own controller leads.

``read_sizes`` reads the JSON ``kafka-log-dirs --describe`` prints and gives every partition of the
source its size: the leader's replica's size as the file lists it, else the largest replica it lists,
else 0 (the file does not name the partition: said in a warning). The sizes go into the seeded
snapshot as each topic's ``kraftwire.partition.sizes.bytes`` config, where a reassignment's copies
read them.

Produce rates (the twin's ingress, each topic's ``kraftwire.partition.ingress.rates``) come from a
second ``kafka-log-dirs --describe`` taken ``sizes_interval_s`` seconds after the first
(``sizes_later``): each partition's growth between the two over the interval (a partition that shrank,
retention having deleted more than was written, is taken as 0 B/s, said in a note), or from a file of
rates (``read_rates``: JSON ``{"topic": bytes-per-second}`` or ``{"topic": {"partition": bytes-per-second}}``).
"""
from __future__ import annotations

import json
import logging
import dataclasses
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kraftwire.codec.message import Message
from kraftwire.codec import records as rec
from kraftwire.codec.constants import ConfigResourceType
from kraftwire.codec.log_layout import PARTITION_DIR
from kraftwire.server.metadata import configs
from kraftwire.server.metadata.image import BrokerState, MetadataImage
from kraftwire.server.metadata.record_versions import (DIRECTORY_ASSIGNMENT_LEVEL, METADATA_VERSION_FEATURE,
                                                       TWIN_LEVELS, level_name, unmodelled)
from kraftwire.server.raft.snapshots import SnapshotError, SnapshotId, check_snapshot, list_snapshots, write_snapshot
from kraftwire.server.raft.voters import SnapshotVoters
from kraftwire.server.raft.storage import (META_PROPERTIES, META_VERSION, StorageError, kafka_uuid, read_properties,
                                           write_properties)
from kraftwire.server.raft.tools import (Problem, TailRule, UnknownRecord, partition_directory, read_file,
                                         segment_paths)

log = logging.getLogger("kraftwire.twin")


class SourceError(StorageError):
    """A --from-log source the twin cannot boot from; the message is one line that says why."""


@dataclass
class TwinSource:
    """What a twin boots from: the source's image as of ``end_offset`` (exclusive) and ``epoch``."""

    directory: Path
    image: MetadataImage
    cluster_id: str | None
    end_offset: int
    epoch: int
    last_timestamp: int
    controllers: list[int] = field(default_factory=list)  # registered by RegisterControllerRecord
    kraft_version: int = 0  # the source's latest KRaftVersionRecord: a twin's quorum is as static or dynamic
    notes: list[str] = field(default_factory=list)  # what the operator should know (logged at start)

    @property
    def brokers(self) -> list[BrokerState]:
        return sorted(self.image.brokers.values(), key=lambda b: b.broker_id)

    @property
    def node_ids(self) -> list[int]:
        return [b.broker_id for b in self.brokers]

    @property
    def racks(self) -> list[str | None]:
        return [b.rack for b in self.brokers]

    def log_dir_count(self, broker_id: int) -> int:
        return len(self.image.brokers[broker_id].log_dirs)

    def incarnations(self, broker_id: int, new_uuid: Callable[[], uuid.UUID]) -> Callable[[], uuid.UUID]:
        """The broker's incarnation ids: the registered one first (its registration is then amended, not
        a restart), new ones for every later start. A broker the source has in controlled shutdown starts
        as a new incarnation, as that broker restarting would: an amended registration would keep it
        shutting down."""
        broker = self.image.brokers[broker_id]
        first = [] if broker.in_controlled_shutdown else [broker.incarnation_id]
        return lambda: first.pop() if first else new_uuid()

    def apply_sizes(self, sizes: dict[str, dict[int, int]]) -> None:
        """Each topic's partition sizes as its ``kraftwire.partition.sizes.bytes`` config."""
        for topic in self.image.topics.values():
            listed = sizes.get(topic.name, {})
            value = ",".join(f"{index}:{listed.get(index, 0)}" for index in sorted(topic.partitions))
            self.image.apply(rec.ConfigRecord(resource_type=ConfigResourceType.TOPIC, resource_name=topic.name,
                                              name=configs.PARTITION_SIZES_BYTES, value=value), self.image.offset)

    def apply_rates(self, rates: dict[str, dict[int, int]]) -> None:
        """Each topic's produce rates as its ``kraftwire.partition.ingress.rates`` config (topics with none
        listed, or all 0, keep none)."""
        for topic in self.image.topics.values():
            listed = {index: rate for index, rate in rates.get(topic.name, {}).items()
                      if rate and index in topic.partitions}
            if listed:
                value = ",".join(f"{index}:{rate}" for index, rate in sorted(listed.items()))
                self.image.apply(rec.ConfigRecord(resource_type=ConfigResourceType.TOPIC, resource_name=topic.name,
                                                  name=configs.INGRESS_RATES, value=value), self.image.offset)

    def seed(self, controller_dirs: list[Path], cluster_id: str, log_dirs: Callable[[int], list[Path]],
             kraft_version: int = 0) -> None:
        """Write the twin's first state into every controller's data directory (each the same snapshot;
        none may hold a metadata log yet), and log what the operator should know; ``log_dirs(broker id)``
        are the paths of a broker's log directories, one per registered one. With ``kraft_version`` 1 the
        snapshot holds a KRaftVersionRecord and no VotersRecord (as Kafka's writer allows): the twin's own
        controllers are the bootstrap voters, which its first leader writes to the log."""
        for data_dir in controller_dirs:
            partition = data_dir / PARTITION_DIR
            if partition.is_dir() and any(partition.iterdir()):
                raise SourceError(f"{data_dir} already holds a metadata log: --from-log starts a twin afresh in a "
                                  f"new data directory (choose another --data-dir, or remove this one)")
        for broker in self.brokers:
            for path, directory_id in zip(log_dirs(broker.broker_id), broker.log_dirs):
                path.mkdir(parents=True, exist_ok=True)
                write_properties(path / META_PROPERTIES, {"version": META_VERSION, "cluster.id": cluster_id,
                                                          "node.id": str(broker.broker_id),
                                                          "directory.id": kafka_uuid(directory_id)})
        for data_dir in controller_dirs:
            partition = data_dir / PARTITION_DIR
            partition.mkdir(parents=True, exist_ok=True)
            write_snapshot(partition, SnapshotId(self.end_offset, self.epoch), self.last_timestamp,
                           int(time.time() * 1000), self.image.to_records(),
                           SnapshotVoters(kraft_version if kraft_version >= 1 else None).control_records())
        for note in self.notes:
            log.warning("twin: %s", note)
        log.info("twin of cluster %s from %s: brokers %s, %d topics, %d partitions, metadata.version level %d, "
                 "up to offset %d; the brokers advertise the twin's own listeners, not the registered ones",
                 cluster_id, self.directory, self.node_ids, len(self.image.topics),
                 sum(len(t.partitions) for t in self.image.topics.values()),
                 self.image.features[METADATA_VERSION_FEATURE], self.end_offset - 1)


def load_twin(from_log: str | Path | TwinSource, sizes: str | Path | None, node_ids: Sequence[int] | None,
              cluster_id: str | None, sizes_later: str | Path | None = None, sizes_interval_s: float | None = None,
              rates: str | Path | None = None) -> TwinSource:
    """The source a ``Cluster(from_log=...)`` boots from, its partitions sized from ``sizes`` when given,
    and given produce rates from ``sizes_later`` (a second snapshot ``sizes_interval_s`` later) or ``rates``."""
    if node_ids is not None:
        raise ValueError("a twin's brokers are those its log registers: give no node ids (--node-ids)")
    source = from_log if isinstance(from_log, TwinSource) else read_source(from_log)
    if cluster_id is not None and source.cluster_id not in (None, cluster_id):
        raise ValueError(f"the source's cluster id is {source.cluster_id}, not {cluster_id}")
    source.cluster_id = source.cluster_id or cluster_id
    if sizes is not None:
        sized, notes = read_sizes(sizes, source.image)
        source.apply_sizes(sized)
        source.notes += notes
        if sizes_later is not None:
            later, later_notes = read_sizes(sizes_later, source.image)
            learnt, shrank = learn_rates(sized, later, sizes_interval_s or 0.0)
            source.apply_rates(learnt)
            source.notes += later_notes
            if shrank:
                source.notes.append(f"--sizes-later {sizes_later}: {shrank} partition(s) shrank between the two "
                                    f"snapshots (retention deleted more than was written): taken as 0 B/s")
    if rates is not None:
        source.apply_rates(read_rates(rates, source.image))
    return source


def learn_rates(earlier: dict[str, dict[int, int]], later: dict[str, dict[int, int]],
                interval_s: float) -> tuple[dict[str, dict[int, int]], int]:
    """Each partition's produce rate (bytes/s, whole) from its sizes in two snapshots ``interval_s`` apart,
    and how many shrank (taken as 0). ValueError unless the interval is a positive number of seconds."""
    if not interval_s > 0:
        raise ValueError("learning rates from two snapshots needs the seconds between them (--sizes-interval)")
    rates: dict[str, dict[int, int]] = {}
    shrank = 0
    for topic, sizes in later.items():
        for index, size in sizes.items():
            grown = size - earlier.get(topic, {}).get(index, 0)
            shrank += grown < 0
            rates.setdefault(topic, {})[index] = round(max(grown, 0) / interval_s)
    return rates, shrank


def read_rates(path: str | Path, image: MetadataImage) -> dict[str, dict[int, int]]:
    """A file of produce rates: JSON ``{"topic": bytes-per-second}`` (each partition) or ``{"topic":
    {"partition": bytes-per-second}}``; SourceError for another shape or a topic the log does not have."""
    try:
        given = json.loads(Path(path).read_text(encoding="utf-8"))
        rates: dict[str, dict[int, int]] = {}
        for topic_name, value in given.items():
            topic = image.topic(topic_name)
            if topic is None:
                raise SourceError(f"--rates {path}: the log has no topic {topic_name!r}")
            listed = {index: value for index in topic.partitions} if not isinstance(value, dict) \
                else {int(index): rate for index, rate in value.items()}
            if any(type(rate) is not int or rate < 0 for rate in listed.values()):
                raise ValueError(f"rates of {topic_name!r} must be whole numbers of bytes per second, at least 0")
            rates[topic_name] = listed
    except (OSError, UnicodeDecodeError, ValueError, AttributeError) as exc:
        raise SourceError(f"--rates {path}: not a JSON object of rates ({{\"topic\": bytes-per-second}} or "
                          f"{{\"topic\": {{\"partition\": bytes-per-second}}}}): {exc}") from None
    return rates


def read_source(path: str | Path) -> TwinSource:
    """Read a source metadata log directory (see the module docstring); SourceError if it cannot serve."""
    given = Path(path)
    if not given.exists():
        raise SourceError(f"--from-log {given}: no such directory")
    if not given.is_dir():
        raise SourceError(f"--from-log {given}: not a directory")
    directory = partition_directory(given)
    snapshots, segments = list_snapshots(directory), segment_paths(directory)
    if not snapshots and not segments:
        raise SourceError(f"--from-log {given}: not a metadata log directory (no .log segment or .checkpoint "
                          f"snapshot in {directory})")
    source = TwinSource(directory, MetadataImage(), _cluster_id(directory), 0, 0, -1)
    controllers: set[int] = set()

    def take(file: Path, offset: int, epoch: int, timestamp: int, control: bool, record: object) -> None:
        if isinstance(record, UnknownRecord):
            raise SourceError(f"--from-log {given}: {file.name}: offset {offset}: {record.describe(with_frame=False)}: "
                              f"kraftwire cannot replay it (nor can a Kafka whose metadata loader lacks it)")
        source.end_offset, source.epoch, source.last_timestamp = offset + 1, epoch, max(source.last_timestamp,
                                                                                        timestamp)
        if control:
            if isinstance(record, rec.KRaftVersionRecord):
                source.kraft_version = record.k_raft_version
            return
        if isinstance(record, rec.RegisterControllerRecord):
            controllers.add(record.controller_id)
        if not isinstance(record, Message):  # a record the reader could not decode (UnknownRecord is refused above)
            raise SourceError(f"--from-log {given}: {file.name}: offset {offset}: not a metadata record: {record!r}")
        source.image.apply(record, offset)

    snapshot_end = 0
    try:
        valid = [(snapshot, file) for snapshot, file in snapshots if _is_complete(file, source.notes)]
        if valid:
            snapshot, file = valid[-1]
            snapshot_end = snapshot.end_offset
            for _offset, _epoch, timestamp, control, record, _version in read_file(file, 0):
                take(file, snapshot_end - 1, snapshot.epoch, timestamp, control, record)
            source.end_offset, source.epoch = snapshot_end, snapshot.epoch
        if segments and _base_offset(segments[0]) > snapshot_end:
            raise SourceError(f"--from-log {given}: records are missing: the log starts at offset "
                              f"{_base_offset(segments[0])} and no complete snapshot covers the offsets before it")
        expected = epoch = None
        for i, file in enumerate(segments):
            tail = TailRule(snapshot_end, None) if i == len(segments) - 1 else None
            expected = _base_offset(file) if expected is None else expected
            for offset, batch_epoch, timestamp, control, record, _version in read_file(file, expected, epoch,
                                                                                        tail=tail):
                expected, epoch = offset + 1, batch_epoch
                if offset >= snapshot_end:
                    take(file, offset, batch_epoch, timestamp, control, record)
            if tail is not None and tail.torn is not None:
                source.notes.append(f"{file.name}: {tail.torn[2]} bytes of an unfinished batch at the end are left out")
    except Problem as problem:
        raise SourceError(f"--from-log {given}: damaged: {problem}") from None
    source.image.pending_transaction = None  # an unfinished metadata transaction is not part of the state
    source.image.offset = source.end_offset - 1
    source.controllers = sorted(controllers)
    _check_servable(given, source)
    return source


def _is_complete(file: Path, notes: list[str]) -> bool:
    try:
        check_snapshot(file)
        return True
    except SnapshotError as exc:
        notes.append(f"ignoring snapshot {exc}")
        return False


def _base_offset(segment: Path) -> int:
    return int(segment.name.split(".")[0])


def _cluster_id(directory: Path) -> str | None:
    """``cluster.id`` of the ``meta.properties`` beside the log (Kafka keeps it in the metadata log
    directory's root), or None."""
    for candidate in (directory.parent / META_PROPERTIES, directory / META_PROPERTIES):
        if candidate.is_file():
            try:
                return read_properties(candidate).get("cluster.id")
            except (StorageError, OSError, UnicodeDecodeError):
                return None
    return None


def _check_servable(given: Path, source: TwinSource) -> None:
    image = source.image
    level = image.features.get(METADATA_VERSION_FEATURE)
    if level is None:
        raise SourceError(f"--from-log {given}: no metadata.version record: not a KRaft metadata log")
    supported = sorted(TWIN_LEVELS.values())
    if not supported[0] <= level <= supported[-1]:
        raise SourceError(f"--from-log {given}: its metadata.version is feature level {level}; kraftwire runs at "
                          f"levels {supported[0]}-{supported[-1]} ({level_name(supported[0])} to "
                          f"{level_name(supported[-1])}) only")
    if not image.brokers:
        raise SourceError(f"--from-log {given}: the log registers no broker: there is nothing to simulate")
    missing_dirs = [b.broker_id for b in image.brokers.values() if not b.log_dirs]
    if missing_dirs and level >= DIRECTORY_ASSIGNMENT_LEVEL:
        raise SourceError(f"--from-log {given}: brokers {missing_dirs} registered no log directory")
    if missing_dirs:
        _give_log_dirs(source, missing_dirs)
    source.notes[:0] = [f"metadata.version {level_name(level)} (level {level}): {line}" for line in unmodelled(level)]
    if source.cluster_id is None:
        source.notes.append(f"no meta.properties beside {source.directory}: the twin takes a new cluster id")
    if source.controllers:
        source.notes.append(f"controllers {source.controllers} of the source are not simulated: the twin's own "
                            f"controllers lead")


def _give_log_dirs(source: TwinSource, broker_ids: list[int]) -> None:
    """Below 3.7-IV2 a broker registers no log directory (KRaft ran one per broker, not named in the log):
    the twin gives each such broker one, with a new id."""
    for broker_id in broker_ids:
        broker = source.image.brokers[broker_id]
        source.image.brokers[broker_id] = dataclasses.replace(broker, log_dirs=(uuid.uuid4(),))
    source.notes.append(f"brokers {broker_ids} registered no log directory (as below 3.7-IV2): each gets one")


def read_sizes(path: str | Path, image: MetadataImage) -> tuple[dict[str, dict[int, int]], list[str]]:
    """Partition sizes from ``kafka-log-dirs --describe``'s output (its text lines before the JSON are
    skipped), as {topic: {partition: bytes}}, and notes on what the file leaves out or names in vain."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(f"--sizes {path}: cannot read it: {exc}") from None
    start = text.find("{")
    try:
        described = json.loads(text[start:]) if start >= 0 else {}
        brokers = described["brokers"]
        listed = [(entry["broker"], p["partition"], int(p["size"])) for entry in brokers
                  for log_dir in entry["logDirs"] for p in (log_dir.get("partitions") or ())
                  if not p.get("isFuture", False)]
    except (ValueError, KeyError, TypeError) as exc:
        raise SourceError(f"--sizes {path}: not the JSON kafka-log-dirs --describe prints "
                          f"({{\"brokers\": [{{\"broker\", \"logDirs\": [{{\"partitions\": [...]}}]}}]}}): "
                          f"{type(exc).__name__} {exc}") from None
    replicas: dict[tuple[str, int], dict[int, int]] = {}
    unknown = set()
    for broker_id, name, size in listed:
        topic_name, _, number = str(name).rpartition("-")
        topic = image.topic(topic_name)
        if topic is None or not number.isdigit() or int(number) not in topic.partitions:
            unknown.add(name)
            continue
        replicas.setdefault((topic_name, int(number)), {})[broker_id] = size
    sizes: dict[str, dict[int, int]] = {}
    for (topic_name, index), by_broker in replicas.items():
        topic = image.topic(topic_name)
        assert topic is not None  # (only the image's partitions were kept above)
        leader = topic.partitions[index].leader
        sizes.setdefault(topic_name, {})[index] = by_broker.get(leader, max(by_broker.values()))
    notes = []
    unsized = sum(1 for topic, index, _ in image.partitions() if index not in sizes.get(topic.name, {}))
    if unsized:
        notes.append(f"--sizes {path} does not list {unsized} partition(s) of the log: they are taken as empty "
                     f"(0 bytes)")
    if unknown:
        notes.append(f"--sizes {path} lists {len(unknown)} partition(s) the log does not have, ignored: "
                     f"{', '.join(sorted(unknown)[:5])}{' ...' if len(unknown) > 5 else ''}")
    return sizes, notes
