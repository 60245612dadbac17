"""The dynamic configs of topics (resource type 2) and brokers (resource type 4): which exist, their
types and defaults, how DescribeConfigs reports them and how AlterConfigs and IncrementalAlterConfigs
validate changes to them.

Admin clients read and write these configs and must get Kafka's answers, so names, types, defaults,
synonyms, sources, error codes and error texts follow Apache Kafka trunk (LogConfig, TopicConfig,
ServerTopicConfigSynonyms, QuotaConfig, DynamicBrokerConfig, ConfigHelper, ConfigAdminManager,
ConfigurationControlManager). Everything here is pure: it works on plain dicts of the string values that
ConfigRecords store, one dict per resource (the broker resource "" holds the cluster-wide defaults).

kraftwire adds its own simulation configs. They all start with ``kraftwire.`` and do not exist in Kafka:

* ``kraftwire.partition.size.bytes`` (topic, LONG, default ``DEFAULT_PARTITION_SIZE_BYTES`` = 100 MiB):
  the simulated size of each partition of the topic, i.e. how many bytes a new replica has to copy.
* ``kraftwire.replication.bandwidth.bytes.per.second`` (broker, LONG >= 1, default
  ``DEFAULT_BROKER_BANDWIDTH`` = 100 MiB/s): the simulated network bandwidth of a broker; set per broker
  or as the cluster default.
* ``kraftwire.throttle.auto.remove.enable`` (cluster default only, broker resource "", BOOLEAN, default
  false): when true, kraftwire removes replication throttles that no ongoing reassignment needs any
  more (the automatic removal KIP-179 proposed; Kafka itself leaves that to ``--verify``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import IntEnum
from itertools import dropwhile
from typing import Literal, NamedTuple

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.constants import ConfigResourceType



class ConfigType(IntEnum):
    """DescribeConfigs ConfigType ids."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class ConfigSource(IntEnum):
    """DescribeConfigs ConfigSource ids."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5


class AlterOp(IntEnum):
    """IncrementalAlterConfigs ConfigOperation ids."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


LEADER_THROTTLED_RATE = "leader.replication.throttled.rate"
FOLLOWER_THROTTLED_RATE = "follower.replication.throttled.rate"
ALTER_LOG_DIRS_IO_MAX_BYTES = "replica.alter.log.dirs.io.max.bytes.per.second"
LEADER_THROTTLED_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_THROTTLED_REPLICAS = "follower.replication.throttled.replicas"
MIN_INSYNC_REPLICAS = "min.insync.replicas"
UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable"
PARTITION_SIZE_BYTES = "kraftwire.partition.size.bytes"
REPLICATION_BANDWIDTH = "kraftwire.replication.bandwidth.bytes.per.second"
THROTTLE_AUTO_REMOVE_ENABLE = "kraftwire.throttle.auto.remove.enable"

DEFAULT_PARTITION_SIZE_BYTES = 100 * 1024 * 1024
DEFAULT_BROKER_BANDWIDTH = 100 * 1024 * 1024
LONG_MAX = (1 << 63) - 1

# The controller refuses longer values (ConfigurationControlManager), counted in Java chars.
_MAX_VALUE_CHARS = 32767
_OWN_PREFIX = "kraftwire."


# ---------------------------------------------------------------------------------------------------
# Values: parsed and printed the way Kafka's ConfigDef does, so that error texts and rendered values
# match Kafka's to the character.

class InvalidValue(ValueError):
    """A value Kafka's ConfigDef rejects; the text is Kafka's ConfigException message."""


def _rejected(name: str, value: object, reason: str) -> InvalidValue:
    return InvalidValue(f"Invalid value {_java_str(value)} for configuration {name}: {reason}")


_JAVA_TRIMMED = "".join(map(chr, range(0x21)))  # String.trim() drops every char <= ' '
_INTEGER_SYNTAX = re.compile(r"[+-]?[0-9]+")
_DOUBLE_SYNTAX = re.compile(r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?)")
_LIST_SEPARATOR = re.compile(r"[ \t\n\x0b\f\r]*,[ \t\n\x0b\f\r]*")
_INTEGER_BITS = {ConfigType.SHORT: 15, ConfigType.INT: 31, ConfigType.LONG: 63}


def _java_double(number: float) -> str:
    """Double.toString: shortest digits, plain between 1e-3 and 1e7, else d.dddE<n>."""
    if math.isnan(number):
        return "NaN"
    sign = "-" if math.copysign(1.0, number) < 0 else ""
    if math.isinf(number):
        return sign + "Infinity"
    if number == 0:
        return sign + "0.0"
    _, digit_tuple, exponent = Decimal(repr(abs(number))).as_tuple()
    point = len(digit_tuple) + exponent - 1  # power of ten of the first digit
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    if not 1e-3 <= abs(number) < 1e7:
        return f"{sign}{digits[0]}.{digits[1:] or '0'}E{point}"
    if point < 0:
        return f"{sign}0.{'0' * (-point - 1)}{digits}"
    return f"{sign}{digits[:point + 1].ljust(point + 1, '0')}.{digits[point + 1:] or '0'}"


def _java_str(value: object) -> str:
    """How Java's toString prints the parsed value (a list prints as [a, b])."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _java_double(value)
    if isinstance(value, tuple):
        return "[" + ", ".join(value) + "]"
    return str(value)


def _render(value: object) -> str:
    """ConfigDef.convertToString: the string DescribeConfigs reports (a list joins with commas)."""
    return ",".join(value) if isinstance(value, tuple) else _java_str(value)


def _java_split_commas(text: str) -> list[str]:
    """String.split(","): like str.split, but trailing empty parts are dropped."""
    if "," not in text:
        return [text]
    parts = text.split(",")
    while parts and not parts[-1]:
        parts.pop()
    return parts


# ---------------------------------------------------------------------------------------------------
# Validators: called with (config name, parsed value); raise InvalidValue with Kafka's text.

class _Range:
    def __init__(self, low: int | None = None, high: int | None = None):
        self.low, self.high = low, high

    def __call__(self, name: str, value: float) -> None:
        # Comparisons with NaN are false, so NaN passes, as it does in Kafka.
        if self.low is not None and value < self.low:
            raise _rejected(name, value, f"Value must be at least {self.low}")
        if self.high is not None and value > self.high:
            raise _rejected(name, value, f"Value must be no more than {self.high}")


class _OneOf:
    def __init__(self, *choices: str):
        self.choices = choices

    def __call__(self, name: str, value: str) -> None:
        if value not in self.choices:
            raise _rejected(name, value, "String must be one of: " + ", ".join(self.choices))


class _ListOf(_OneOf):
    """A list whose items are each one of the choices; the empty list is allowed. Kafka drops
    duplicate items before checking (see _parse)."""

    def __call__(self, name: str, values: tuple[str, ...]) -> None:
        for value in values:
            if not value:
                raise InvalidValue(f"Configuration '{name}' values must not be empty.")
            super().__call__(name, value)


class _Requirement:
    """A broker-level consistency rule that KafkaConfig enforces with Scala's require()."""

    def __init__(self, holds: Callable[[int], bool], rule: str):
        self.holds, self.rule = holds, rule

    def __call__(self, name: str, value: int) -> None:
        if not self.holds(value):
            raise InvalidValue(f"requirement failed: {self.rule}")


_THROTTLED_REPLICA = re.compile(r"(?:[0-9]+:[0-9]+)?")


def _check_throttled_replicas(name: str, items: tuple[str, ...]) -> None:
    """Either exactly '*' or partition:broker pairs; empty items are tolerated."""
    trimmed = [item.strip(_JAVA_TRIMMED) for item in items]
    if not (all(_THROTTLED_REPLICA.fullmatch(item) for item in trimmed) or "".join(trimmed) == "*"):
        raise _rejected(name, items, f"{name} must be the literal '*' or a list of replicas in the "
                                     "following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")


def _check_gzip_level(name: str, level: int) -> None:
    if level > 9 or (level < 1 and level != -1):
        raise _rejected(name, level, "Value must be between 1 and 9 or equal to -1")


# ---------------------------------------------------------------------------------------------------
# The catalogue

@dataclass(frozen=True)
class ConfigKey:
    """One config as Kafka defines it, plus where kraftwire lets it be set.

    ``default`` is the parsed default (bool, int, float, str or tuple of str for LIST) or None when
    Kafka has none. ``broker_synonyms`` (topic configs) lists the broker configs that supply the
    value when the topic does not set it, most important first; only the first can be set
    dynamically. ``read_only`` (broker configs) means Kafka cannot update it dynamically;
    ``cluster_only`` means it may be set only on the cluster default (broker resource "")."""

    name: str
    type: ConfigType
    default: object
    doc: str
    validator: Callable[[str, object], None] | None = None
    broker_synonyms: tuple[str, ...] = ()
    read_only: bool = False
    cluster_only: bool = False

    @property
    def default_string(self) -> str | None:
        return None if self.default is None else _render(self.default)


def _parse(key: ConfigKey, raw: str) -> object:
    """Parse and check a stored or requested string as Kafka's ConfigDef.parseValue does."""
    text = raw.strip(_JAVA_TRIMMED)
    if key.type is ConfigType.BOOLEAN:
        if text.lower() not in ("true", "false"):
            raise _rejected(key.name, raw, "Expected value to be either true or false")
        value: object = text.lower() == "true"
    elif key.type in _INTEGER_BITS:
        bits = _INTEGER_BITS[key.type]
        if not _INTEGER_SYNTAX.fullmatch(text) or not -(1 << bits) <= int(text) < (1 << bits):
            raise _rejected(key.name, raw, f"Not a number of type {key.type.name}")
        value = int(text)
    elif key.type is ConfigType.DOUBLE:
        if not _DOUBLE_SYNTAX.fullmatch(text):
            raise _rejected(key.name, raw, f"Not a number of type {key.type.name}")
        value = float(text.rstrip("fFdD"))
    elif key.type is ConfigType.LIST:
        value = tuple(_LIST_SEPARATOR.split(text)) if text else ()
        if isinstance(key.validator, _ListOf):
            value = tuple(dict.fromkeys(value))
    else:
        value = text
    if key.validator is not None:
        key.validator(key.name, value)
    return value


_BOOLEAN, _STRING, _INT, _LONG, _DOUBLE, _LIST = (ConfigType.BOOLEAN, ConfigType.STRING, ConfigType.INT,
                                                  ConfigType.LONG, ConfigType.DOUBLE, ConfigType.LIST)
_AT_LEAST_0, _AT_LEAST_1, _AT_LEAST_MINUS_1, _AT_LEAST_MINUS_2 = _Range(0), _Range(1), _Range(-1), _Range(-2)
_SEGMENT_BYTES, _INDEX_BYTES, _RATIO = _Range(1024 * 1024), _Range(4), _Range(0, 1)
_LZ4_LEVEL, _ZSTD_LEVEL = _Range(1, 17), _Range(-131072, 22)
_CLEANUP_POLICY = _ListOf("compact", "delete")
_COMPRESSION_TYPE = _OneOf("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
_TIMESTAMP_TYPE = _OneOf("CreateTime", "LogAppendTime")
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
              _check_gzip_level, ("compression.gzip.level",)),
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
              _check_throttled_replicas),
    ConfigKey(FOLLOWER_THROTTLED_REPLICAS, _LIST, (),
              "Replicas (partition:broker, or * for all) whose replication is throttled on the follower side.",
              _check_throttled_replicas),
    ConfigKey("remote.storage.enable", _BOOLEAN, False,
              "Whether the topic uses tiered storage (not available in kraftwire)."),
    ConfigKey("local.retention.ms", _LONG, -2, "With tiered storage, time kept locally; -2 means retention.ms.",
              _AT_LEAST_MINUS_2, ("log.local.retention.ms",)),
    ConfigKey("local.retention.bytes", _LONG, -2, "With tiered storage, bytes kept locally; -2 means retention.bytes.",
              _AT_LEAST_MINUS_2, ("log.local.retention.bytes",)),
    ConfigKey("remote.log.copy.disable", _BOOLEAN, False,
              "With tiered storage, stop copying segments to remote storage."),
    ConfigKey("remote.copy.lag.ms", _LONG, 0, "With tiered storage, how long a segment may wait before being copied.",
              _AT_LEAST_MINUS_1, ("log.remote.copy.lag.ms",)),
    ConfigKey("remote.copy.lag.bytes", _LONG, -1, "With tiered storage, how many bytes may wait before being copied.",
              _AT_LEAST_MINUS_1, ("log.remote.copy.lag.bytes",)),
    ConfigKey("remote.log.delete.on.disable", _BOOLEAN, False, "Delete remote data when tiered storage is turned off."),
    ConfigKey("errors.deadletterqueue.group.enable", _BOOLEAN, False,
              "Whether share groups may use the topic as a dead-letter queue."),
    ConfigKey(PARTITION_SIZE_BYTES, _LONG, DEFAULT_PARTITION_SIZE_BYTES,
              "kraftwire: simulated size in bytes of each partition, the amount a new replica has to copy.",
              _AT_LEAST_0),
)

BROKER_CONFIGS: dict[str, ConfigKey] = _keyed(
    ConfigKey("broker.id", _INT, -1, "The id of this broker.", read_only=True),
    ConfigKey(LEADER_THROTTLED_RATE, _LONG, LONG_MAX,
              "Cap in bytes/s on replication sent by this broker as leader for throttled replicas.", _AT_LEAST_0),
    ConfigKey(FOLLOWER_THROTTLED_RATE, _LONG, LONG_MAX,
              "Cap in bytes/s on replication fetched by this broker as follower for throttled replicas.", _AT_LEAST_0),
    ConfigKey(ALTER_LOG_DIRS_IO_MAX_BYTES, _LONG, LONG_MAX,
              "Cap in bytes/s on disk IO for moving replicas between log directories of this broker.", _AT_LEAST_0),
    ConfigKey("log.segment.bytes", _INT, 1 << 30, "Default of segment.bytes.", _SEGMENT_BYTES),
    ConfigKey("log.roll.ms", _LONG, None, "Default of segment.ms; if unset, log.roll.hours applies.",
              _Requirement(lambda ms: ms >= 1, "log.roll.ms must be greater than or equal to 1")),
    ConfigKey("log.roll.hours", _INT, 168, "Default of segment.ms in hours, used when log.roll.ms is unset.",
              _AT_LEAST_1, read_only=True),
    ConfigKey("log.roll.jitter.ms", _LONG, None,
              "Default of segment.jitter.ms; if unset, log.roll.jitter.hours applies.",
              _Requirement(lambda ms: ms >= 0, "log.roll.jitter.ms must be greater than or equal to 0")),
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
              _Requirement(lambda ms: ms != 0,
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
    ConfigKey("compression.gzip.level", _INT, -1, "Default of the topic config of the same name.", _check_gzip_level),
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
    ConfigKey("log.remote.copy.lag.ms", _LONG, 0, "Default of remote.copy.lag.ms.", _AT_LEAST_MINUS_1),
    ConfigKey("log.remote.copy.lag.bytes", _LONG, -1, "Default of remote.copy.lag.bytes.", _AT_LEAST_MINUS_1),
    ConfigKey("num.partitions", _INT, 1, "Partition count of topics created without one.", _AT_LEAST_1, read_only=True),
    ConfigKey("default.replication.factor", _INT, 1,
              "Replication factor of topics created without one.", read_only=True),
    ConfigKey(REPLICATION_BANDWIDTH, _LONG, DEFAULT_BROKER_BANDWIDTH,
              "kraftwire: simulated network bandwidth of the broker in bytes/s.", _AT_LEAST_1),
    ConfigKey(THROTTLE_AUTO_REMOVE_ENABLE, _BOOLEAN, False,
              "kraftwire: remove replication throttles once no reassignment needs them (cluster default only).",
              cluster_only=True),
)

# Kafka's quota keys are not in KafkaConfig's own definitions: APPEND/SUBTRACT call them unknown and
# DescribeConfigs shows no default synonym for them.
_QUOTA_CONFIGS = frozenset({LEADER_THROTTLED_RATE, FOLLOWER_THROTTLED_RATE, ALTER_LOG_DIRS_IO_MAX_BYTES})

# Broker configs that stand for the same setting (DynamicBrokerConfig.brokerConfigSynonyms).
_SYNONYM_GROUPS: dict[str, tuple[str, ...]] = {
    name: key.broker_synonyms
    for key in TOPIC_CONFIGS.values() if len(key.broker_synonyms) > 1
    for name in key.broker_synonyms
}


def _catalogue(resource_type: int) -> dict[str, ConfigKey]:
    if resource_type == ConfigResourceType.TOPIC:
        return TOPIC_CONFIGS
    if resource_type == ConfigResourceType.BROKER:
        return BROKER_CONFIGS
    raise ValueError(f"no dynamic configs for resource type {resource_type}")


# ---------------------------------------------------------------------------------------------------
# Effective values

def topic_value(dynamic: Mapping[str, str], broker_defaults: Mapping[str, str], name: str) -> object:
    """The value a topic config takes: the topic's own, else the cluster default of its broker
    synonym, else Kafka's default. Parsed: bool, int, float, str, or tuple of str for LIST."""
    key = TOPIC_CONFIGS[name]
    if name in dynamic:
        return _parse(key, dynamic[name])
    synonym = key.broker_synonyms[0] if key.broker_synonyms else None
    if synonym in broker_defaults:
        value = _parse(BROKER_CONFIGS[synonym], broker_defaults[synonym])
        # KafkaConfig turns any negative log.retention.ms into -1 (unlimited).
        return -1 if name == "retention.ms" and value < 0 else value
    return key.default


def broker_value(per_broker: Mapping[str, str], cluster_defaults: Mapping[str, str], name: str) -> object:
    """The value a broker config takes: the broker's own, else the cluster default, else Kafka's."""
    key = BROKER_CONFIGS[name]
    for values in (per_broker, cluster_defaults):
        if name in values:
            return _parse(key, values[name])
    return key.default


def throttled_replicas(value: str) -> Literal["all"] | frozenset[tuple[int, int]]:
    """Read a *.replication.throttled.replicas value: "all" for '*', else the (partition, broker)
    pairs it names."""
    items = [item.strip(_JAVA_TRIMMED) for item in _parse(TOPIC_CONFIGS[LEADER_THROTTLED_REPLICAS], value)]
    if "".join(items) == "*":
        return "all"
    pairs = (item.split(":") for item in items if item)
    return frozenset((int(partition), int(broker)) for partition, broker in pairs)


# ---------------------------------------------------------------------------------------------------
# DescribeConfigs

Synonym = tuple[str, str | None, int]


@dataclass(frozen=True)
class ConfigEntry:
    """One DescribeConfigs result entry. ``synonyms`` holds (name, value, source), most specific first."""

    name: str
    value: str | None
    read_only: bool
    is_default: bool
    is_sensitive: bool
    source: int
    config_type: int
    documentation: str | None
    synonyms: list[Synonym]


def _synonym_chain(name: str, layers: Sequence[tuple[Mapping[str, str], ConfigSource]]) -> list[Synonym]:
    """Kafka's synonym list for a broker config: every setting of it or of its synonyms, by source
    and then by synonym priority, with Kafka's defaults last, starting at the first entry that names
    the config itself (so log.retention.ms with only log.retention.hours known has none)."""
    group = _SYNONYM_GROUPS.get(name, (name,))
    found = [(synonym, values[synonym], source) for values, source in layers
             for synonym in group if synonym in values]
    # Kafka knows no static default for its quota keys, so they never get a DEFAULT_CONFIG synonym.
    found += [(synonym, BROKER_CONFIGS[synonym].default_string, ConfigSource.DEFAULT_CONFIG)
              for synonym in group
              if synonym in BROKER_CONFIGS and BROKER_CONFIGS[synonym].default is not None
              and synonym not in _QUOTA_CONFIGS]
    return list(dropwhile(lambda synonym: synonym[0] != name, found))


class _Row(NamedTuple):
    """What a DescribeConfigs entry is made from."""

    name: str
    key: ConfigKey | None
    value: str | None
    chain: list[Synonym]
    read_only: bool


def _entry(row: _Row, include_synonyms: bool, include_documentation: bool) -> ConfigEntry:
    # Kafka treats a config it has no definition for as sensitive: it never shows the value.
    sensitive = row.key is None
    value, chain = row.value, row.chain
    if sensitive:
        value = None
        chain = [(synonym, None, source) for synonym, _, source in chain]
    source = chain[0][2] if chain else ConfigSource.DEFAULT_CONFIG
    return ConfigEntry(
        name=row.name,
        value=value,
        read_only=row.read_only,
        is_default=source == ConfigSource.DEFAULT_CONFIG,
        is_sensitive=sensitive,
        source=int(source),
        config_type=int(row.key.type if row.key else ConfigType.UNKNOWN),
        documentation=row.key.doc if include_documentation and row.key else None,
        synonyms=[(synonym, text, int(source)) for synonym, text, source in chain] if include_synonyms else [],
    )


def describe(resource_type: int, resource_name: str, dynamic: Mapping[str, str],
             broker_defaults: Mapping[str, str], keys: Sequence[str] | None = None,
             include_synonyms: bool = False, include_documentation: bool = False) -> list[ConfigEntry]:
    """The DescribeConfigs entries of one resource, in catalogue order.

    ``dynamic`` holds the resource's own dynamic configs (for the broker resource "" these are the
    cluster defaults); ``broker_defaults`` the cluster defaults. A topic lists every topic config; a
    broker every broker config of the catalogue (so the throttle rates always show, where Kafka shows
    them only once set) plus any custom keys set on it or cluster-wide; the cluster default resource
    only what is set there. ``keys`` (None or empty for all) filters the
    result; names that do not exist are left out, as Kafka does."""
    def selected(names):
        return [name for name in names if not keys or name in keys]

    if resource_type == ConfigResourceType.TOPIC:
        rows = [_topic_row(name, dynamic, broker_defaults) for name in selected(TOPIC_CONFIGS)]
    elif resource_type == ConfigResourceType.BROKER and resource_name == "":
        names = [name for name in BROKER_CONFIGS if name in dynamic]
        names += sorted(dynamic.keys() - BROKER_CONFIGS.keys())
        rows = [_cluster_default_row(name, dynamic) for name in selected(names)]
    elif resource_type == ConfigResourceType.BROKER:
        names = [*BROKER_CONFIGS, *sorted((dynamic.keys() | broker_defaults.keys()) - BROKER_CONFIGS.keys())]
        rows = [_broker_row(name, resource_name, dynamic, broker_defaults) for name in selected(names)]
    else:
        raise ValueError(f"no dynamic configs for resource type {resource_type}")
    return [_entry(row, include_synonyms, include_documentation) for row in rows]


def _topic_row(name: str, dynamic: Mapping[str, str], broker_defaults: Mapping[str, str]) -> _Row:
    key = TOPIC_CONFIGS[name]
    value = _render(topic_value(dynamic, broker_defaults, name))
    chain = [(name, value, ConfigSource.DYNAMIC_TOPIC_CONFIG)] if name in dynamic else []
    if key.broker_synonyms:
        chain += _synonym_chain(key.broker_synonyms[0],
                                [(broker_defaults, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)])
    return _Row(name, key, value, chain, False)


def _broker_row(name: str, broker_id: str, per_broker: Mapping[str, str],
                cluster_defaults: Mapping[str, str]) -> _Row:
    key = BROKER_CONFIGS.get(name)
    layers = [(per_broker, ConfigSource.DYNAMIC_BROKER_CONFIG),
              (cluster_defaults, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
              ({"broker.id": broker_id}, ConfigSource.STATIC_BROKER_CONFIG)]
    raw = next((values[name] for values, _ in layers if name in values), None)
    if key is None:
        value = raw
    else:
        value = key.default_string if raw is None else _render(_parse(key, raw))
    return _Row(name, key, value, _synonym_chain(name, layers), key is None or key.read_only)


def _cluster_default_row(name: str, cluster_defaults: Mapping[str, str]) -> _Row:
    key = BROKER_CONFIGS.get(name)
    layer = [(cluster_defaults, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)]
    chain = [synonym for synonym in _synonym_chain(name, layer)
             if synonym[2] == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]
    return _Row(name, key, cluster_defaults[name], chain, key is None or key.read_only)


# ---------------------------------------------------------------------------------------------------
# AlterConfigs and IncrementalAlterConfigs

Op = tuple[str, int, str | None]
_OPERATION_IDS = frozenset(AlterOp)


def legacy_alter_ops(current: Mapping[str, str], configs: Sequence[tuple[str, str | None]]) -> list[Op]:
    """The incremental form of a (non-incremental) AlterConfigs resource: it sets every config given
    and deletes every other one the resource has."""
    given = {name for name, _ in configs}
    return ([(name, AlterOp.SET, value) for name, value in configs]
            + [(name, AlterOp.DELETE, None) for name in current if name not in given])


def apply_incremental(resource_type: int, current: Mapping[str, str], ops: Sequence[Op]) -> dict[str, str]:
    """The resource's dynamic configs after the operations, as Kafka's controller computes them.

    APPEND and SUBTRACT work on the comma-separated items of LIST configs, starting from Kafka's
    default when the config is unset: APPEND adds each item not yet present, in order; SUBTRACT
    removes the first occurrence of each. Raises KafkaError INVALID_CONFIG for them on other configs."""
    catalogue = _catalogue(resource_type)
    updated = dict(current)
    for name, op, value in ops:
        if op == AlterOp.SET:
            updated[name] = value
        elif op == AlterOp.DELETE:
            updated.pop(name, None)
        else:
            key = catalogue.get(name)
            if key is None or key.type is not ConfigType.LIST:
                raise KafkaError(ErrorCode.INVALID_CONFIG,
                                 f"Can't {AlterOp(op).name} to key {name} because its type is not LIST.")
            base = updated.get(name, key.default_string)
            items = [item for item in base.split(",") if item] if base is not None else []
            for item in _java_split_commas(value):
                if op == AlterOp.APPEND and item not in items:
                    items.append(item)
                elif op == AlterOp.SUBTRACT and item in items:
                    items.remove(item)
            updated[name] = ",".join(items)
    return updated


def validate_topic_changes(current: Mapping[str, str], ops: Sequence[Op],
                           broker_defaults: Mapping[str, str]) -> dict[str, str]:
    """Check an alteration of a topic's configs as Kafka's broker and controller do, and return the
    topic's new dynamic configs. Raises KafkaError: INVALID_REQUEST for malformed operations,
    INVALID_CONFIG for anything Kafka's LogConfig rejects."""
    check_operations(ops)
    updated = apply_incremental(ConfigResourceType.TOPIC, current, ops)
    _check_records(current, updated, ops, only_changes=True)
    unknown = next((name for name in updated if name not in TOPIC_CONFIGS), None)
    if unknown is not None:
        raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown topic config name: {unknown}")
    _parse_all(TOPIC_CONFIGS, updated, ErrorCode.INVALID_CONFIG)
    min_lag = topic_value(updated, broker_defaults, "min.compaction.lag.ms")
    max_lag = topic_value(updated, broker_defaults, "max.compaction.lag.ms")
    if min_lag > max_lag:
        raise KafkaError(ErrorCode.INVALID_CONFIG, "conflict topic config setting min.compaction.lag.ms "
                                         f"({min_lag}) > max.compaction.lag.ms ({max_lag})")
    if topic_value(updated, broker_defaults, "remote.storage.enable"):
        raise KafkaError(ErrorCode.INVALID_CONFIG, "Tiered Storage functionality is disabled in the broker. "
                                         "Topic cannot be configured with remote log storage.")
    return updated


def validate_topic_creation(configs: Sequence[tuple[str, str | None]],
                            broker_defaults: Mapping[str, str]) -> dict[str, str]:
    """Check the configs of a CreateTopics topic as Kafka's controller does and return them as the
    new topic's dynamic configs (a repeated name keeps its last value). Raises KafkaError
    INVALID_CONFIG, also for null values, which only this path words this way."""
    missing = [name for name, value in configs if value is None]
    if missing:
        raise KafkaError(ErrorCode.INVALID_CONFIG, "Null value not supported for topic configs: " + ",".join(missing))
    return validate_topic_changes({}, [(name, AlterOp.SET, value) for name, value in dict(configs).items()],
                                  broker_defaults)


def validate_broker_changes(resource_name: str, current: Mapping[str, str], ops: Sequence[Op], *,
                            elr_enabled: bool = False) -> dict[str, str]:
    """Check an alteration of a broker's configs ("<id>", or "" for the cluster default) as the
    receiving broker and then the controller do, and return the resource's new dynamic configs.

    Values Kafka's broker rejects come back as INVALID_REQUEST, not INVALID_CONFIG (KAFKA-13609).
    Names Kafka does not know are accepted as custom configs, except under the kraftwire. prefix.
    ``elr_enabled`` adds the controller's min.insync.replicas rules for eligible leader replicas."""
    check_operations(ops)
    for name, op, _ in ops:
        if op in (AlterOp.APPEND, AlterOp.SUBTRACT):
            key = BROKER_CONFIGS.get(name)
            if key is None or name in _QUOTA_CONFIGS:
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown config name: {name}")
            if key.type is not ConfigType.LIST:
                raise KafkaError(ErrorCode.INVALID_CONFIG,
                                 f"Config value {AlterOp(op).name.lower()} is not allowed for config key: {name}")
    updated = apply_incremental(ConfigResourceType.BROKER, current, ops)
    fixed = sorted(name for name in updated if name in BROKER_CONFIGS and BROKER_CONFIGS[name].read_only)
    if fixed:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Cannot update these configs dynamically: [{', '.join(fixed)}]")
    unknown_own = next((name for name in updated if name.startswith(_OWN_PREFIX) and name not in BROKER_CONFIGS), None)
    if unknown_own is not None:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown kraftwire config name: {unknown_own}")
    cluster_only = sorted(name for name in updated if name in BROKER_CONFIGS and BROKER_CONFIGS[name].cluster_only)
    if resource_name and cluster_only:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Cannot update these configs for a single broker, only as the "
                                          f"cluster default (empty broker id): [{', '.join(cluster_only)}]")
    _parse_all(BROKER_CONFIGS, updated, ErrorCode.INVALID_REQUEST)
    _check_records(current, updated, ops, only_changes=False, elr_resource=resource_name if elr_enabled else None)
    return updated


def check_operations(ops: Sequence[Op]) -> None:
    """The receiving broker's checks of a resource's operations, before anything else."""
    names = [name for name, _, _ in ops]
    if len(set(names)) != len(names):
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
    missing = [name for name, op, value in ops if op != AlterOp.DELETE and value is None]
    if missing:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Null value not supported for : " + ", ".join(missing))
    bad_op = next((op for _, op, _ in ops if op not in _OPERATION_IDS), None)
    if bad_op is not None:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown operations type {bad_op}")


def _check_records(current: Mapping[str, str], updated: Mapping[str, str], ops: Sequence[Op], *,
                   only_changes: bool, elr_resource: str | None = None) -> None:
    """The controller's checks of each ConfigRecord it would write. Topic records are written only
    for changed values, broker records always (KAFKA-14136). ``elr_resource`` names the broker
    resource when eligible leader replicas are on: min.insync.replicas then lives only on the
    cluster default."""
    for name, _, _ in ops:
        value = updated.get(name)
        if only_changes and value == current.get(name):
            continue
        if elr_resource is not None and name == MIN_INSYNC_REPLICAS:
            if elr_resource:
                raise KafkaError(ErrorCode.INVALID_CONFIG,
                                 "Broker-level min.insync.replicas cannot be altered while ELR is enabled.")
            if value is None:
                raise KafkaError(ErrorCode.INVALID_CONFIG,
                                 "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.")
        if value is not None and len(value.encode("utf-16-le")) // 2 > _MAX_VALUE_CHARS:
            raise KafkaError(ErrorCode.INVALID_CONFIG, "The configuration value cannot be added because it exceeds "
                                             f"the maximum value size of {_MAX_VALUE_CHARS} bytes.")


def _parse_all(catalogue: Mapping[str, ConfigKey], configs: Mapping[str, str], error_code: int) -> None:
    """Parse every known config that is set, in definition order, so the first failure reported is
    the one Kafka would report."""
    try:
        for name, key in catalogue.items():
            if name in configs:
                _parse(key, configs[name])
    except InvalidValue as invalid:
        raise KafkaError(error_code, str(invalid)) from None
