"""The catalogue of the dynamic configs of topics (resource type 2) and brokers (resource type 4):
which exist, their types, defaults and synonyms, and the value each takes. What brokers and the
controller both read; ``config_values`` parses and renders the values, ``config_describe`` makes
DescribeConfigs entries, and the controller's ``config_validation`` judges alterations.

Admin clients read and write these configs and must get Kafka's answers, so names, types, defaults,
synonyms and read-only flags follow Apache Kafka trunk (LogConfig, TopicConfig, ServerTopicConfigSynonyms,
QuotaConfig, DynamicBrokerConfig, KafkaConfig). Everything here is pure: it works on plain dicts of the
string values that ConfigRecords store, one dict per resource (the broker resource "" holds the
cluster-wide defaults). A broker's startup configs (node.id, listeners, log.dirs, ...) are in the
catalogue too; their values come from the node itself, never from the log.

kraftwire adds its own simulation configs. They all start with ``kraftwire.`` and do not exist in Kafka:

* ``kraftwire.partition.size.bytes`` (topic, LONG, default ``DEFAULT_PARTITION_SIZE_BYTES`` = 100 MiB):
  the simulated size of each partition of the topic, i.e. how many bytes a new replica has to copy.
* ``kraftwire.partition.sizes.bytes`` (topic, LIST of ``partition:bytes``, default empty): the simulated
  sizes of single partitions, overriding ``kraftwire.partition.size.bytes`` for those it names (a
  production twin's ``--sizes`` sets it from ``kafka-log-dirs --describe``).
* ``kraftwire.partition.ingress.bytes.per.sec`` (topic, LONG >= 0, default 0): the simulated produce rate
  of each partition of the topic, bytes per second of the cluster's clock: the leader's log grows by it
  (within ``retention.bytes``, and ``retention.ms`` times the rate) and every follower copies it.
* ``kraftwire.partition.ingress.rates`` (topic, LIST of ``partition:bytes-per-second``, default empty):
  the simulated produce rates of single partitions, overriding ``kraftwire.partition.ingress.bytes.per.sec``
  for those it names.
* ``kraftwire.replication.bandwidth.bytes.per.second`` (broker, LONG >= 1, default
  ``DEFAULT_BROKER_BANDWIDTH`` = 100 MiB/s): the simulated network bandwidth of a broker; set per broker
  or as the cluster default.
* ``kraftwire.throttle.auto.remove.enable`` (cluster default only, broker resource "", BOOLEAN, default
  false): when true, kraftwire removes replication throttles that no ongoing reassignment needs any
  more (the automatic removal KIP-179 proposed; Kafka itself leaves that to ``--verify``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from kraftwire.codec.constants import ConfigResourceType

from .config_values import (JAVA_TRIMMED, ConfigType, InvalidValue, ListOf, OneOf, Range, Requirement, Validator,
                            check_gzip_level, check_partition_sizes, check_throttled_replicas, parse, render)
from .kafka_broker_configs import BROKER_CONFIG_FACTS


LEADER_THROTTLED_RATE = "leader.replication.throttled.rate"
FOLLOWER_THROTTLED_RATE = "follower.replication.throttled.rate"
ALTER_LOG_DIRS_IO_MAX_BYTES = "replica.alter.log.dirs.io.max.bytes.per.second"
LEADER_THROTTLED_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_THROTTLED_REPLICAS = "follower.replication.throttled.replicas"
MIN_INSYNC_REPLICAS = "min.insync.replicas"
CORDONED_LOG_DIRS = "cordoned.log.dirs"
CORDONED_LOG_DIRS_ALL = "*"
UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable"
PARTITION_SIZE_BYTES = "kraftwire.partition.size.bytes"
PARTITION_SIZES_BYTES = "kraftwire.partition.sizes.bytes"
SIZE_CONFIGS = (PARTITION_SIZE_BYTES, PARTITION_SIZES_BYTES)
INGRESS_BYTES_PER_SEC = "kraftwire.partition.ingress.bytes.per.sec"
INGRESS_RATES = "kraftwire.partition.ingress.rates"
# the topic configs a partition's simulated growth depends on (its rate, its bounds, the size it grows from)
INGRESS_CONFIGS = frozenset({INGRESS_BYTES_PER_SEC, INGRESS_RATES, "retention.bytes", "retention.ms", *SIZE_CONFIGS})
REPLICATION_BANDWIDTH = "kraftwire.replication.bandwidth.bytes.per.second"
THROTTLE_AUTO_REMOVE_ENABLE = "kraftwire.throttle.auto.remove.enable"

DEFAULT_PARTITION_SIZE_BYTES = 100 * 1024 * 1024
DEFAULT_BROKER_BANDWIDTH = 100 * 1024 * 1024
LONG_MAX = (1 << 63) - 1
# SocketServerConfigs' default: every security protocol mapped to a listener of its own name.
DEFAULT_SECURITY_PROTOCOL_MAP = "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL"


@dataclass(frozen=True)
class ConfigKey:
    """One config as Kafka defines it, plus where kraftwire lets it be set.

    ``default`` is the parsed default (bool, int, float, str or tuple of str for LIST) or None when
    Kafka has none. ``broker_synonyms`` (topic configs) lists the broker configs that supply the
    value when the topic does not set it, most important first; only the first can be set
    dynamically. ``read_only`` (broker configs) means Kafka cannot update it dynamically;
    ``cluster_only`` means it may be set only on the cluster default (broker resource "").
    ``startup_only`` (broker configs) marks what a simulated broker is started with and kraftwire
    cannot change while it runs, where Kafka can (its listeners); Kafka's read-only flag still shows."""

    name: str
    type: ConfigType
    default: object
    doc: str
    validator: Validator | None = None
    broker_synonyms: tuple[str, ...] = ()
    read_only: bool = False
    cluster_only: bool = False
    startup_only: bool = False
    per_broker_only: bool = False  # Kafka's per-broker dynamic configs: not settable as the cluster default
    shown_default: str | None = None  # the default as Kafka's DescribeConfigs renders it, where known

    @property
    def default_string(self) -> str | None:
        if self.shown_default is not None:
            return self.shown_default
        return None if self.default is None else render(self.default)

    @property
    def sensitive(self) -> bool:
        """A PASSWORD config: DescribeConfigs never shows its value (KafkaConfig.maybeSensitive)."""
        return self.type is ConfigType.PASSWORD


_BOOLEAN, _STRING, _INT, _LONG, _DOUBLE, _LIST = (ConfigType.BOOLEAN, ConfigType.STRING, ConfigType.INT,
                                                  ConfigType.LONG, ConfigType.DOUBLE, ConfigType.LIST)
_AT_LEAST_0, _AT_LEAST_1, _AT_LEAST_MINUS_1, _AT_LEAST_MINUS_2 = Range(0), Range(1), Range(-1), Range(-2)
_SEGMENT_BYTES, _INDEX_BYTES, _RATIO = Range(1024 * 1024), Range(4), Range(0, 1)
_LZ4_LEVEL, _ZSTD_LEVEL = Range(1, 17), Range(-131072, 22)
_CLEANUP_POLICY = ListOf("compact", "delete")
_COMPRESSION_TYPE = OneOf("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
_TIMESTAMP_TYPE = OneOf("CreateTime", "LogAppendTime")
_WEEK_MS, _DAY_MS, _HOUR_MS = 7 * 24 * 3600 * 1000, 24 * 3600 * 1000, 3600 * 1000
_MAX_MESSAGE_BYTES = 1024 * 1024 + 12  # 1 MiB plus the record batch log overhead


def _keyed(*keys: ConfigKey) -> dict[str, ConfigKey]:
    return {key.name: key for key in keys}


# Kafka's definition order: validation reports the first bad config in this order.
TOPIC_CONFIGS: dict[str, ConfigKey] = _keyed(
    ConfigKey("segment.bytes", _INT, 1 << 30, "Size in bytes at which a log segment is closed and a new one started.",
              _SEGMENT_BYTES, ("log.segment.bytes",)),
    ConfigKey("segment.ms", _LONG, _WEEK_MS, "Time after which a segment is rolled even if it is not full.",
              _AT_LEAST_1, ("log.roll.ms", "log.roll.hours")),
    ConfigKey("segment.jitter.ms", _LONG, 0,
              "Random amount subtracted from segment.ms so segments do not all roll at once.",
              _AT_LEAST_0, ("log.roll.jitter.ms", "log.roll.jitter.hours")),
    ConfigKey("segment.index.bytes", _INT, 10 * 1024 * 1024, "Size in bytes of the offset index of each segment.",
              _INDEX_BYTES, ("log.index.size.max.bytes",)),
    ConfigKey("flush.messages", _LONG, LONG_MAX, "Number of messages written before the log is forced to disk.",
              _AT_LEAST_1, ("log.flush.interval.messages",)),
    ConfigKey("flush.ms", _LONG, LONG_MAX, "Time in ms after which the log is forced to disk.",
              _AT_LEAST_0, ("log.flush.interval.ms", "log.flush.scheduler.interval.ms")),
    ConfigKey("retention.bytes", _LONG, -1,
              "Size a partition may grow to before old segments are deleted; -1 is unlimited.",
              None, ("log.retention.bytes",)),
    ConfigKey("retention.ms", _LONG, _WEEK_MS,
              "Time a record is kept before its segment may be deleted; -1 is unlimited.",
              _AT_LEAST_MINUS_1, ("log.retention.ms", "log.retention.minutes", "log.retention.hours")),
    ConfigKey("max.message.bytes", _INT, _MAX_MESSAGE_BYTES, "Largest record batch size the topic accepts.",
              _AT_LEAST_0, ("message.max.bytes",)),
    ConfigKey("index.interval.bytes", _INT, 4096, "Bytes of log between two entries of the offset index.",
              _AT_LEAST_0, ("log.index.interval.bytes",)),
    ConfigKey("delete.retention.ms", _LONG, _DAY_MS, "Time tombstones are kept on compacted topics.",
              _AT_LEAST_0, ("log.cleaner.delete.retention.ms",)),
    ConfigKey("min.compaction.lag.ms", _LONG, 0, "Minimum time a record stays uncompacted.",
              _AT_LEAST_0, ("log.cleaner.min.compaction.lag.ms",)),
    ConfigKey("max.compaction.lag.ms", _LONG, LONG_MAX, "Maximum time a record may stay uncompacted.",
              _AT_LEAST_1, ("log.cleaner.max.compaction.lag.ms",)),
    ConfigKey("file.delete.delay.ms", _LONG, 60000, "Delay before a deleted segment file is removed from disk.",
              _AT_LEAST_0, ("log.segment.delete.delay.ms",)),
    ConfigKey("min.cleanable.dirty.ratio", _DOUBLE, 0.5,
              "Share of uncompacted log that makes the log eligible for cleaning.",
              _RATIO, ("log.cleaner.min.cleanable.ratio",)),
    ConfigKey("cleanup.policy", _LIST, ("delete",), "How old segments are discarded: delete, compact, both or neither.",
              _CLEANUP_POLICY, ("log.cleanup.policy",)),
    ConfigKey(UNCLEAN_LEADER_ELECTION_ENABLE, _BOOLEAN, False,
              "Whether a replica outside the ISR may become leader when no ISR member can, at the risk of data loss.",
              None, (UNCLEAN_LEADER_ELECTION_ENABLE,)),
    ConfigKey(MIN_INSYNC_REPLICAS, _INT, 1, "Fewest in-sync replicas that must acknowledge a write with acks=all.",
              _AT_LEAST_1, (MIN_INSYNC_REPLICAS,)),
    ConfigKey("compression.type", _STRING, "producer",
              "Compression the broker applies to stored batches; producer keeps theirs.",
              _COMPRESSION_TYPE, ("compression.type",)),
    ConfigKey("compression.gzip.level", _INT, -1, "Compression level used with gzip.",
              check_gzip_level, ("compression.gzip.level",)),
    ConfigKey("compression.lz4.level", _INT, 9, "Compression level used with lz4.",
              _LZ4_LEVEL, ("compression.lz4.level",)),
    ConfigKey("compression.zstd.level", _INT, 3, "Compression level used with zstd.",
              _ZSTD_LEVEL, ("compression.zstd.level",)),
    ConfigKey("preallocate", _BOOLEAN, False, "Whether segment files are allocated in full when created.",
              None, ("log.preallocate",)),
    ConfigKey("message.timestamp.type", _STRING, "CreateTime",
              "Whether record timestamps are the producer's or the append time.",
              _TIMESTAMP_TYPE, ("log.message.timestamp.type",)),
    ConfigKey("message.timestamp.before.max.ms", _LONG, LONG_MAX, "How far in the past a CreateTime timestamp may be.",
              _AT_LEAST_0, ("log.message.timestamp.before.max.ms",)),
    ConfigKey("message.timestamp.after.max.ms", _LONG, _HOUR_MS, "How far in the future a CreateTime timestamp may be.",
              _AT_LEAST_0, ("log.message.timestamp.after.max.ms",)),
    ConfigKey(LEADER_THROTTLED_REPLICAS, _LIST, (),
              "Replicas (partition:broker, or * for all) whose replication is throttled on the leader side.",
              check_throttled_replicas),
    ConfigKey(FOLLOWER_THROTTLED_REPLICAS, _LIST, (),
              "Replicas (partition:broker, or * for all) whose replication is throttled on the follower side.",
              check_throttled_replicas),
    ConfigKey("remote.storage.enable", _BOOLEAN, False,
              "Whether the topic uses tiered storage (not available in kraftwire)."),
    ConfigKey("local.retention.ms", _LONG, -2, "With tiered storage, time kept locally; -2 means retention.ms.",
              _AT_LEAST_MINUS_2, ("log.local.retention.ms",)),
    ConfigKey("local.retention.bytes", _LONG, -2, "With tiered storage, bytes kept locally; -2 means retention.bytes.",
              _AT_LEAST_MINUS_2, ("log.local.retention.bytes",)),
    ConfigKey("remote.log.copy.disable", _BOOLEAN, False,
              "With tiered storage, stop copying segments to remote storage."),
    ConfigKey("remote.log.delete.on.disable", _BOOLEAN, False, "Delete remote data when tiered storage is turned off."),
    ConfigKey(PARTITION_SIZE_BYTES, _LONG, DEFAULT_PARTITION_SIZE_BYTES,
              "kraftwire: simulated size in bytes of each partition, the amount a new replica has to copy.",
              _AT_LEAST_0),
    ConfigKey(PARTITION_SIZES_BYTES, _LIST, (),
              "kraftwire: simulated sizes of single partitions (partition:bytes), overriding "
              "kraftwire.partition.size.bytes for the partitions listed.", check_partition_sizes),
    ConfigKey(INGRESS_BYTES_PER_SEC, _LONG, 0,
              "kraftwire: simulated produce rate of each partition, in bytes per second: the leader's log grows "
              "by it (within retention) and every follower copies it.", _AT_LEAST_0),
    ConfigKey(INGRESS_RATES, _LIST, (),
              "kraftwire: simulated produce rates of single partitions (partition:bytes-per-second), overriding "
              "kraftwire.partition.ingress.bytes.per.sec for the partitions listed.", check_partition_sizes),
)

BROKER_CONFIGS: dict[str, ConfigKey] = _keyed(
    ConfigKey("broker.id", _INT, -1, "The id of this broker.", read_only=True),
    # What a KRaft broker's server.properties holds; DescribeConfigs shows them as STATIC_BROKER_CONFIG.
    ConfigKey("node.id", _INT, None, "The node id of this broker or controller in the KRaft cluster.", _AT_LEAST_0,
              read_only=True),
    ConfigKey("process.roles", _LIST, None, "The roles this node plays: broker, controller or both.",
              ListOf("broker", "controller"), read_only=True),
    ConfigKey("listeners", _LIST, ("PLAINTEXT://:9092",), "The addresses the node listens on, as NAME://host:port.",
              startup_only=True),
    ConfigKey("advertised.listeners", _LIST, None, "The listener addresses clients are told to connect to.",
              read_only=True),
    ConfigKey("listener.security.protocol.map", _STRING, DEFAULT_SECURITY_PROTOCOL_MAP,
              "The security protocol of each listener name.", startup_only=True),
    ConfigKey("inter.broker.listener.name", _STRING, None, "The listener brokers use to reach each other.",
              read_only=True),
    ConfigKey("controller.listener.names", _LIST, None, "The listener names of the controllers.", read_only=True),
    ConfigKey("controller.quorum.bootstrap.servers", _LIST, (), "The host:port addresses of the controllers.",
              read_only=True),
    ConfigKey("log.dir", _LIST, ("/tmp/kafka-logs",), "The log directory, used when log.dirs is not set.",
              read_only=True),
    ConfigKey("log.dirs", _LIST, None, "The log directories of the broker.", read_only=True),
    ConfigKey(CORDONED_LOG_DIRS, _LIST, (),
              "Log directories (entries of log.dirs, or * for all) where no new replica is placed "
              "(metadata.version 4.3-IV0 and later)."),
    ConfigKey(LEADER_THROTTLED_RATE, _LONG, LONG_MAX,
              "Cap in bytes/s on replication sent by this broker as leader for throttled replicas.", _AT_LEAST_0),
    ConfigKey(FOLLOWER_THROTTLED_RATE, _LONG, LONG_MAX,
              "Cap in bytes/s on replication fetched by this broker as follower for throttled replicas.", _AT_LEAST_0),
    ConfigKey(ALTER_LOG_DIRS_IO_MAX_BYTES, _LONG, LONG_MAX,
              "Cap in bytes/s on disk IO for moving replicas between log directories of this broker.", _AT_LEAST_0),
    ConfigKey("log.segment.bytes", _INT, 1 << 30, "Default of segment.bytes.", _SEGMENT_BYTES),
    ConfigKey("log.roll.ms", _LONG, None, "Default of segment.ms; if unset, log.roll.hours applies.",
              Requirement(lambda ms: ms >= 1, "log.roll.ms must be greater than or equal to 1")),
    ConfigKey("log.roll.hours", _INT, 168, "Default of segment.ms in hours, used when log.roll.ms is unset.",
              _AT_LEAST_1, read_only=True),
    ConfigKey("log.roll.jitter.ms", _LONG, None,
              "Default of segment.jitter.ms; if unset, log.roll.jitter.hours applies.",
              Requirement(lambda ms: ms >= 0, "log.roll.jitter.ms must be greater than or equal to 0")),
    ConfigKey("log.roll.jitter.hours", _INT, 0, "Default of segment.jitter.ms in hours.", _AT_LEAST_0, read_only=True),
    ConfigKey("log.index.size.max.bytes", _INT, 10 * 1024 * 1024, "Default of segment.index.bytes.", _INDEX_BYTES),
    ConfigKey("log.flush.interval.messages", _LONG, LONG_MAX, "Default of flush.messages.", _AT_LEAST_1),
    ConfigKey("log.flush.interval.ms", _LONG, None,
              "Default of flush.ms; if unset, log.flush.scheduler.interval.ms applies."),
    ConfigKey("log.flush.scheduler.interval.ms", _LONG, LONG_MAX, "How often the flusher looks for logs to flush.",
              read_only=True),
    ConfigKey("log.retention.bytes", _LONG, -1, "Default of retention.bytes."),
    # Negative values mean unlimited (-1), so only 0 breaks KafkaConfig's rule.
    ConfigKey("log.retention.ms", _LONG, None,
              "Default of retention.ms; if unset, log.retention.minutes or hours apply.",
              Requirement(lambda ms: ms != 0,
                           "log.retention.ms must be unlimited (-1) or, greater than or equal to 1")),
    ConfigKey("log.retention.minutes", _INT, None,
              "Default of retention.ms in minutes, used when log.retention.ms is unset.",
              read_only=True),
    ConfigKey("log.retention.hours", _INT, 168, "Default of retention.ms in hours, the last fallback.", read_only=True),
    ConfigKey("message.max.bytes", _INT, _MAX_MESSAGE_BYTES, "Default of max.message.bytes.", _AT_LEAST_0),
    ConfigKey("log.index.interval.bytes", _INT, 4096, "Default of index.interval.bytes.", _AT_LEAST_0),
    ConfigKey("log.cleaner.delete.retention.ms", _LONG, _DAY_MS, "Default of delete.retention.ms.", _AT_LEAST_0),
    ConfigKey("log.cleaner.min.compaction.lag.ms", _LONG, 0, "Default of min.compaction.lag.ms.", _AT_LEAST_0),
    ConfigKey("log.cleaner.max.compaction.lag.ms", _LONG, LONG_MAX, "Default of max.compaction.lag.ms.", _AT_LEAST_1),
    ConfigKey("log.segment.delete.delay.ms", _LONG, 60000, "Default of file.delete.delay.ms.", _AT_LEAST_0),
    ConfigKey("log.cleaner.min.cleanable.ratio", _DOUBLE, 0.5, "Default of min.cleanable.dirty.ratio.", _RATIO),
    ConfigKey("log.cleanup.policy", _LIST, ("delete",), "Default of cleanup.policy.", _CLEANUP_POLICY),
    ConfigKey(UNCLEAN_LEADER_ELECTION_ENABLE, _BOOLEAN, False, "Default of the topic config of the same name."),
    ConfigKey(MIN_INSYNC_REPLICAS, _INT, 1, "Default of the topic config of the same name.", _AT_LEAST_1),
    ConfigKey("compression.type", _STRING, "producer",
              "Default of the topic config of the same name.", _COMPRESSION_TYPE),
    ConfigKey("compression.gzip.level", _INT, -1, "Default of the topic config of the same name.", check_gzip_level),
    ConfigKey("compression.lz4.level", _INT, 9, "Default of the topic config of the same name.", _LZ4_LEVEL),
    ConfigKey("compression.zstd.level", _INT, 3, "Default of the topic config of the same name.", _ZSTD_LEVEL),
    ConfigKey("log.preallocate", _BOOLEAN, False, "Default of preallocate."),
    ConfigKey("log.message.timestamp.type", _STRING, "CreateTime",
              "Default of message.timestamp.type.", _TIMESTAMP_TYPE),
    ConfigKey("log.message.timestamp.before.max.ms", _LONG, LONG_MAX, "Default of message.timestamp.before.max.ms.",
              _AT_LEAST_0),
    ConfigKey("log.message.timestamp.after.max.ms", _LONG, _HOUR_MS, "Default of message.timestamp.after.max.ms.",
              _AT_LEAST_0),
    ConfigKey("log.local.retention.ms", _LONG, -2, "Default of local.retention.ms.", _AT_LEAST_MINUS_2),
    ConfigKey("log.local.retention.bytes", _LONG, -2, "Default of local.retention.bytes.", _AT_LEAST_MINUS_2),
    ConfigKey("auto.create.topics.enable", _BOOLEAN, True,
              "Whether a Metadata request naming a missing topic creates it (when the request allows it).",
              read_only=True),
    ConfigKey("num.partitions", _INT, 1, "Partition count of topics created without one.", _AT_LEAST_1, read_only=True),
    ConfigKey("default.replication.factor", _INT, 1,
              "Replication factor of topics created without one.", read_only=True),
    ConfigKey(REPLICATION_BANDWIDTH, _LONG, DEFAULT_BROKER_BANDWIDTH,
              "kraftwire: simulated network bandwidth of the broker in bytes/s.", _AT_LEAST_1),
    ConfigKey(THROTTLE_AUTO_REMOVE_ENABLE, _BOOLEAN, False,
              "kraftwire: remove replication throttles once no reassignment needs them (cluster default only).",
              cluster_only=True),
)


_RANGE = re.compile(r"\[(-?[0-9.]+),\.\.\.(?:,(-?[0-9.]+))?\]")


def _range_of(validator: str) -> Range | None:
    """Kafka's Range validator from its description ("[1,...]", "[0,...,10]"); None for any other kind."""
    found = _RANGE.fullmatch(validator)
    if found is None:
        return None
    low, high = (None if text is None else float(text) if "." in text else int(text) for text in found.groups())
    return Range(low, high)


def _with_kafka_catalogue(hand: dict[str, ConfigKey]) -> dict[str, ConfigKey]:
    """Every broker config of the emulated release (``kafka_broker_configs``), in Kafka's order, with Kafka's
    type, default, read-only flag and per-broker-only flag: those kraftwire defines by hand (above, with
    Kafka's validators and kraftwire's own flags) as they are but for Kafka's facts, the others from the
    facts alone (their values are checked by type); then the configs only kraftwire has."""
    catalogue: dict[str, ConfigKey] = {}
    for name, kind, default, mode, validator in BROKER_CONFIG_FACTS:
        read_only, per_broker_only = mode == "read-only", mode == "per-broker"
        if name in hand:
            key = hand[name]
        else:
            untyped = ConfigKey(name, ConfigType[kind], None, "")
            key = replace(untyped, default=None if default is None else parse(untyped, default),
                          validator=_range_of(validator))
        catalogue[name] = replace(key, read_only=read_only, per_broker_only=per_broker_only, shown_default=default)
    return {**catalogue, **{name: key for name, key in hand.items() if name not in catalogue}}


BROKER_CONFIGS = _with_kafka_catalogue(BROKER_CONFIGS)

# Kafka's quota keys are not in KafkaConfig's own definitions: APPEND/SUBTRACT call them unknown and
# DescribeConfigs shows no default synonym for them.
QUOTA_CONFIGS = frozenset({LEADER_THROTTLED_RATE, FOLLOWER_THROTTLED_RATE, ALTER_LOG_DIRS_IO_MAX_BYTES})

# Broker configs that stand for the same setting (DynamicBrokerConfig.brokerConfigSynonyms).
SYNONYM_GROUPS: dict[str, tuple[str, ...]] = {
    name: key.broker_synonyms
    for key in TOPIC_CONFIGS.values() if len(key.broker_synonyms) > 1
    for name in key.broker_synonyms
}


def catalogue_of(resource_type: int) -> dict[str, ConfigKey]:
    if resource_type == ConfigResourceType.TOPIC:
        return TOPIC_CONFIGS
    if resource_type == ConfigResourceType.BROKER:
        return BROKER_CONFIGS
    if resource_type == ConfigResourceType.GROUP:
        from .group_configs import as_config_keys  # it builds on this module's broker catalogue
        return as_config_keys()
    raise ValueError(f"no dynamic configs for resource type {resource_type}")


# ---------------------------------------------------------------------------------------------------
# Effective values

def topic_value(dynamic: Mapping[str, str], broker_defaults: Mapping[str, str], name: str) -> object:
    """The value a topic config takes: the topic's own, else the cluster default of its broker
    synonym, else Kafka's default. Parsed: bool, int, float, str, or tuple of str for LIST."""
    key = TOPIC_CONFIGS[name]
    if name in dynamic:
        return _parse_topic_value(name, dynamic[name])
    synonym = key.broker_synonyms[0] if key.broker_synonyms else None
    if synonym is not None and synonym in broker_defaults:
        try:
            value = parse(BROKER_CONFIGS[synonym], broker_defaults[synonym])
        except InvalidValue:  # stored without the broker's check (see broker_value): not in force
            return key.default
        # KafkaConfig turns any negative log.retention.ms into -1 (unlimited).
        return -1 if name == "retention.ms" and isinstance(value, int) and value < 0 else value
    return key.default


def broker_value(per_broker: Mapping[str, str], cluster_defaults: Mapping[str, str], name: str) -> object:
    """The value a broker config takes: the broker's own, else the cluster default, else Kafka's.

    A stored value that does not parse is passed over, as a Kafka broker keeps its config when a
    dynamic update fails validation: Kafka's controller does not check broker config values (a
    request sent to it directly may store any), the receiving broker does."""
    key = BROKER_CONFIGS[name]
    for values in (per_broker, cluster_defaults):
        if name in values:
            try:
                return parse(key, values[name])
            except InvalidValue:
                continue
    return key.default


@functools.lru_cache(maxsize=1024)
def _parse_topic_value(name: str, value: str) -> object:
    """A topic config's stored value, parsed and checked (cached: a value is a function of the config's
    name and the string alone, and every parse is immutable; a topic's per-partition size and rate lists
    hold an entry per partition, and every replica opened reads its topic's configs). A value that does
    not parse raises each time (exceptions are not cached)."""
    return parse(TOPIC_CONFIGS[name], value)


def _parse_list(name: str, value: str) -> tuple[str, ...]:
    """A LIST topic config's value, parsed."""
    items = _parse_topic_value(name, value)
    assert isinstance(items, tuple)
    return items


@functools.lru_cache(maxsize=256)
def partition_sizes(value: str) -> dict[int, int]:
    """Read a kraftwire.partition.sizes.bytes value: {partition: bytes} (cached: copies ask for every
    partition of a topic in turn; do not change the answer)."""
    pairs = (item.strip(JAVA_TRIMMED).split(":") for item in _parse_list(PARTITION_SIZES_BYTES, value))
    return {int(partition): int(size) for partition, size in pairs}


@functools.lru_cache(maxsize=256)
def partition_rates(value: str) -> dict[int, int]:
    """Read a kraftwire.partition.ingress.rates value: {partition: bytes per second} (cached, as above)."""
    pairs = (item.strip(JAVA_TRIMMED).split(":") for item in _parse_list(INGRESS_RATES, value))
    return {int(partition): int(rate) for partition, rate in pairs}


@functools.lru_cache(maxsize=1024)
def throttled_replicas(value: str) -> Literal["all"] | frozenset[tuple[int, int]]:
    """Read a *.replication.throttled.replicas value: "all" for '*', else the (partition, broker)
    pairs it names (cached, immutable: every rate computation reads every throttled topic's lists)."""
    items = [item.strip(JAVA_TRIMMED) for item in _parse_list(LEADER_THROTTLED_REPLICAS, value)]
    if "".join(items) == "*":
        return "all"
    pairs = (item.split(":") for item in items if item)
    return frozenset((int(partition), int(broker)) for partition, broker in pairs)
