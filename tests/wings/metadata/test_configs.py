"""The config catalogue: DescribeConfigs entries, AlterConfigs/IncrementalAlterConfigs validation with
Kafka's codes and texts, incremental operations and typed accessors."""

import pytest

from kraftwire.server.metadata import configs
from kraftwire.server.controller.config_validation import (
    AlterOp, apply_incremental, legacy_alter_ops, validate_broker_changes, validate_topic_changes,
    validate_topic_creation,
)
from kraftwire.server.metadata.config_describe import ConfigSource, describe
from kraftwire.server.metadata.config_values import ConfigType
from kraftwire.server.metadata.configs import (
    BROKER_CONFIGS, DEFAULT_BROKER_BANDWIDTH, DEFAULT_PARTITION_SIZE_BYTES, LONG_MAX,
    TOPIC_CONFIGS, broker_value, throttled_replicas, topic_value,
)
from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.constants import ConfigResourceType

TOPIC, BROKER = ConfigResourceType.TOPIC, ConfigResourceType.BROKER
SET, DELETE, APPEND, SUBTRACT = AlterOp.SET, AlterOp.DELETE, AlterOp.APPEND, AlterOp.SUBTRACT
MAX = str(LONG_MAX)


def entries(resource_type, name, dynamic, broker_defaults, keys=None, synonyms=True, documentation=False):
    return {entry.name: entry for entry in describe(resource_type, name, dynamic, broker_defaults, keys,
                                                      synonyms, documentation)}


def topic_error(ops, current=None, broker_defaults=None):
    with pytest.raises(KafkaError) as raised:
        validate_topic_changes(current or {}, ops, broker_defaults or {})
    return raised.value.code, raised.value.message


def broker_error(ops, name="1", current=None, **kwargs):
    with pytest.raises(KafkaError) as raised:
        validate_broker_changes(name, current or {}, ops, **kwargs)
    return raised.value.code, raised.value.message


# ---- Catalogue ---------------------------------------------------------------------------------------

def test_topic_catalogue_matches_kafka_4_3_1():
    assert list(TOPIC_CONFIGS) == [
        "segment.bytes", "segment.ms", "segment.jitter.ms", "segment.index.bytes", "flush.messages", "flush.ms",
        "retention.bytes", "retention.ms", "max.message.bytes", "index.interval.bytes", "delete.retention.ms",
        "min.compaction.lag.ms", "max.compaction.lag.ms", "file.delete.delay.ms", "min.cleanable.dirty.ratio",
        "cleanup.policy", "unclean.leader.election.enable", "min.insync.replicas", "compression.type",
        "compression.gzip.level", "compression.lz4.level", "compression.zstd.level", "preallocate",
        "message.timestamp.type", "message.timestamp.before.max.ms", "message.timestamp.after.max.ms",
        "leader.replication.throttled.replicas", "follower.replication.throttled.replicas",
        "remote.storage.enable", "local.retention.ms", "local.retention.bytes", "remote.log.copy.disable",
        "remote.log.delete.on.disable", "kraftwire.partition.size.bytes", "kraftwire.partition.sizes.bytes",
        "kraftwire.partition.ingress.bytes.per.sec", "kraftwire.partition.ingress.rates"]


def test_every_broker_synonym_is_a_broker_config():
    for key in TOPIC_CONFIGS.values():
        for synonym in key.broker_synonyms:
            assert synonym in BROKER_CONFIGS
        if key.broker_synonyms:
            assert not BROKER_CONFIGS[key.broker_synonyms[0]].read_only
            assert all(BROKER_CONFIGS[other].read_only for other in key.broker_synonyms[1:])


def test_kraftwire_configs_and_defaults():
    assert TOPIC_CONFIGS["kraftwire.partition.size.bytes"].default == DEFAULT_PARTITION_SIZE_BYTES == 100 << 20
    assert BROKER_CONFIGS["kraftwire.replication.bandwidth.bytes.per.second"].default == DEFAULT_BROKER_BANDWIDTH
    assert DEFAULT_BROKER_BANDWIDTH == 100 << 20
    assert BROKER_CONFIGS["kraftwire.throttle.auto.remove.enable"].cluster_only
    for name in ("kraftwire.partition.size.bytes", "kraftwire.partition.sizes.bytes",
                 "kraftwire.replication.bandwidth.bytes.per.second",
                 "kraftwire.throttle.auto.remove.enable"):
        assert name in configs.__doc__


# ---- DescribeConfigs: topics ------------------------------------------------------------------------

def test_topic_defaults():
    found = entries(TOPIC, "t", {}, {})
    assert list(found) == list(TOPIC_CONFIGS)
    expected = {
        "retention.ms": ("604800000", ConfigType.LONG), "segment.bytes": ("1073741824", ConfigType.INT),
        "cleanup.policy": ("delete", ConfigType.LIST), "min.cleanable.dirty.ratio": ("0.5", ConfigType.DOUBLE),
        "max.message.bytes": ("1048588", ConfigType.INT), "flush.ms": (MAX, ConfigType.LONG),
        "unclean.leader.election.enable": ("false", ConfigType.BOOLEAN),
        "compression.type": ("producer", ConfigType.STRING), "compression.gzip.level": ("-1", ConfigType.INT),
        "leader.replication.throttled.replicas": ("", ConfigType.LIST),
        "local.retention.bytes": ("-2", ConfigType.LONG),
        "kraftwire.partition.size.bytes": ("104857600", ConfigType.LONG),
    }
    for name, (value, config_type) in expected.items():
        assert (found[name].value, found[name].config_type) == (value, config_type)
    for entry in found.values():
        assert entry.source == ConfigSource.DEFAULT_CONFIG and entry.is_default
        assert not entry.read_only and not entry.is_sensitive and entry.documentation is None


def test_topic_default_synonyms_follow_kafka():
    found = entries(TOPIC, "t", {}, {})
    assert found["cleanup.policy"].synonyms == [("log.cleanup.policy", "delete", 5)]
    assert found["min.insync.replicas"].synonyms == [("min.insync.replicas", "1", 5)]
    assert found["max.message.bytes"].synonyms == [("message.max.bytes", "1048588", 5)]
    # log.retention.ms and log.roll.ms have no default: Kafka drops the hours fallback from the list.
    assert found["retention.ms"].synonyms == []
    assert found["segment.ms"].synonyms == []
    assert found["remote.storage.enable"].synonyms == []


def test_topic_override():
    found = entries(TOPIC, "t", {"retention.ms": "1000", "cleanup.policy": "compact"}, {})
    assert found["retention.ms"].value == "1000"
    assert found["retention.ms"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG
    assert not found["retention.ms"].is_default
    assert found["retention.ms"].synonyms == [("retention.ms", "1000", 1)]
    assert found["cleanup.policy"].synonyms == [("cleanup.policy", "compact", 1), ("log.cleanup.policy", "delete", 5)]


def test_topic_value_from_cluster_default():
    cluster = {"log.retention.ms": "5000", "log.segment.bytes": "3145728"}
    found = entries(TOPIC, "t", {"segment.bytes": "2097152"}, cluster)
    assert found["retention.ms"].value == "5000"
    assert found["retention.ms"].source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
    assert found["retention.ms"].synonyms == [("log.retention.ms", "5000", 3), ("log.retention.hours", "168", 5)]
    assert found["segment.bytes"].value == "2097152"
    assert found["segment.bytes"].synonyms == [
        ("segment.bytes", "2097152", 1), ("log.segment.bytes", "3145728", 3), ("log.segment.bytes", "1073741824", 5)]


def test_topic_values_are_rendered_as_kafka_parses_them():
    found = entries(TOPIC, "t", {"retention.ms": " +0100 ", "cleanup.policy": "compact , delete,compact",
                                 "preallocate": "TRUE", "min.cleanable.dirty.ratio": "1e-4"}, {})
    assert found["retention.ms"].value == "100"
    assert found["cleanup.policy"].value == "compact,delete"
    assert found["preallocate"].value == "true"
    assert found["min.cleanable.dirty.ratio"].value == "1.0E-4"
    for raw, shown in [(".5", "0.5"), ("1", "1.0"), ("0.001", "0.001"), ("1d", "1.0"), ("-0", "-0.0")]:
        assert entries(TOPIC, "t", {"min.cleanable.dirty.ratio": raw}, {})["min.cleanable.dirty.ratio"].value == shown


def test_negative_cluster_retention_means_unlimited():
    assert entries(TOPIC, "t", {}, {"log.retention.ms": "-5"})["retention.ms"].value == "-1"


def test_requested_keys_unknown_ones_omitted():
    found = describe(TOPIC, "t", {}, {}, ["retention.ms", "no.such.config", "cleanup.policy"], False, True)
    assert [entry.name for entry in found] == ["retention.ms", "cleanup.policy"]
    assert found[0].synonyms == [] and found[0].documentation == TOPIC_CONFIGS["retention.ms"].doc
    assert found[0].documentation


def test_unsupported_resource_type():
    with pytest.raises(ValueError):
        describe(16, "x", {}, {})


# ---- DescribeConfigs: brokers -----------------------------------------------------------------------

def test_broker_lists_throttle_keys_even_when_unset():
    found = entries(BROKER, "1", {}, {})
    assert list(found) == list(BROKER_CONFIGS)
    for name in (configs.LEADER_THROTTLED_RATE, configs.FOLLOWER_THROTTLED_RATE, configs.ALTER_LOG_DIRS_IO_MAX_BYTES):
        entry = found[name]
        assert (entry.value, entry.source, entry.config_type, entry.read_only) == (MAX, 5, ConfigType.LONG, False)
        assert entry.synonyms == []


def test_broker_sources_and_synonyms():
    found = entries(BROKER, "1", {"leader.replication.throttled.rate": "10", "log.retention.ms": "7"},
                    {"leader.replication.throttled.rate": "20", "follower.replication.throttled.rate": "30",
                     "log.retention.ms": "5000"})
    assert found["leader.replication.throttled.rate"].value == "10"
    assert found["leader.replication.throttled.rate"].source == ConfigSource.DYNAMIC_BROKER_CONFIG
    assert found["leader.replication.throttled.rate"].synonyms == [
        ("leader.replication.throttled.rate", "10", 2), ("leader.replication.throttled.rate", "20", 3)]
    assert found["follower.replication.throttled.rate"].value == "30"
    assert found["follower.replication.throttled.rate"].source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
    assert found["log.retention.ms"].synonyms == [
        ("log.retention.ms", "7", 2), ("log.retention.ms", "5000", 3), ("log.retention.hours", "168", 5)]
    assert found["log.retention.hours"].synonyms == [("log.retention.hours", "168", 5)]


def test_broker_defaults_read_only_flags_and_broker_id():
    found = entries(BROKER, "3", {}, {})
    assert (found["broker.id"].value, found["broker.id"].source, found["broker.id"].read_only) == ("3", 4, True)
    assert found["broker.id"].synonyms == [("broker.id", "3", 4), ("broker.id", "-1", 5)]
    assert found["log.retention.ms"].value is None and found["log.retention.ms"].source == 5
    assert found["log.retention.ms"].synonyms == []
    assert found["log.retention.hours"].value == "168" and found["log.retention.hours"].read_only
    assert not found["log.retention.ms"].read_only
    assert found["num.partitions"].value == "1" and found["num.partitions"].read_only
    assert found["default.replication.factor"].value == "1" and found["default.replication.factor"].read_only
    assert found["kraftwire.replication.bandwidth.bytes.per.second"].value == "104857600"
    assert found["kraftwire.throttle.auto.remove.enable"].value == "false"


def test_broker_sees_cluster_wide_kraftwire_switch():
    found = entries(BROKER, "1", {}, {"kraftwire.throttle.auto.remove.enable": "true"})
    assert found["kraftwire.throttle.auto.remove.enable"].value == "true"
    assert found["kraftwire.throttle.auto.remove.enable"].source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG


def test_custom_broker_configs_are_hidden_like_kafka_does():
    found = entries(BROKER, "1", {"my.plugin.setting": "secret"}, {"other.plugin": "x"})
    custom = found["my.plugin.setting"]
    assert (custom.value, custom.is_sensitive, custom.read_only, custom.config_type, custom.source) == (
        None, True, True, ConfigType.UNKNOWN, 2)
    assert custom.synonyms == [("my.plugin.setting", None, 2)]
    assert found["other.plugin"].source == 3


def test_cluster_default_resource_lists_only_what_is_set():
    cluster = {"log.retention.ms": "5000", "leader.replication.throttled.rate": " 100", "custom": "x"}
    found = describe(BROKER, "", cluster, cluster, None, True, False)
    # in catalogue order: Kafka's broker configs, then the quota keys it defines apart, then custom ones
    assert [entry.name for entry in found] == ["log.retention.ms", "leader.replication.throttled.rate", "custom"]
    assert all(entry.source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG for entry in found)
    assert found[1].value == " 100"  # Kafka shows the stored string here
    assert found[0].synonyms == [("log.retention.ms", "5000", 3)]
    assert describe(BROKER, "", {}, {}) == []


# ---- Topic validation ---------------------------------------------------------------------------------

def test_valid_topic_change_returns_new_configs():
    current = {"retention.ms": "1000", "cleanup.policy": "compact"}
    assert validate_topic_changes(current, [("retention.ms", SET, "2000"), ("cleanup.policy", DELETE, None)], {}) == {
        "retention.ms": "2000"}
    assert current == {"retention.ms": "1000", "cleanup.policy": "compact"}


def test_unknown_topic_config():
    assert topic_error([("retention.hours", SET, "1")]) == (
        ErrorCode.INVALID_CONFIG, "Unknown topic config name: retention.hours")
    # Removed from Kafka 4.0's LogConfig.
    assert topic_error([("message.downconversion.enable", SET, "true")])[1] == (
        "Unknown topic config name: message.downconversion.enable")
    assert topic_error([("kraftwire.no.such", SET, "1")])[1] == "Unknown topic config name: kraftwire.no.such"


def test_deleting_an_unset_unknown_topic_config_is_harmless():
    assert validate_topic_changes({"retention.ms": "5"}, [("nothing.here", DELETE, None)], {}) == {"retention.ms": "5"}


@pytest.mark.parametrize("name, value, reason", [
    ("retention.ms", "abc", "Not a number of type LONG"),
    ("retention.ms", "1_000", "Not a number of type LONG"),
    ("retention.ms", "9223372036854775808", "Not a number of type LONG"),
    ("retention.ms", "-5", "Value must be at least -1"),
    ("segment.bytes", "2147483648", "Not a number of type INT"),
    ("segment.bytes", "1000", "Value must be at least 1048576"),
    ("preallocate", "yes", "Expected value to be either true or false"),
    ("min.cleanable.dirty.ratio", "half", "Not a number of type DOUBLE"),
    ("min.insync.replicas", "0", "Value must be at least 1"),
    ("compression.lz4.level", "18", "Value must be no more than 17"),
    ("compression.zstd.level", "-131073", "Value must be at least -131072"),
    ("compression.gzip.level", "0", "Value must be between 1 and 9 or equal to -1"),
    ("compression.type", "brotli", "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer"),
    ("message.timestamp.type", "createtime", "String must be one of: CreateTime, LogAppendTime"),
    ("cleanup.policy", "compact,forever", "String must be one of: compact, delete"),
    ("local.retention.ms", "-3", "Value must be at least -2"),
    ("kraftwire.partition.size.bytes", "-1", "Value must be at least 0"),
    ("kraftwire.partition.sizes.bytes", "0:1,1:x",
     "kraftwire.partition.sizes.bytes must be a list of partition sizes in the following format: "
     "[partitionId]:[bytes],[partitionId]:[bytes],..."),
])
def test_bad_topic_values(name, value, reason):
    shown = {"cleanup.policy": "forever", "kraftwire.partition.sizes.bytes": "[0:1, 1:x]"}.get(name, value)
    assert topic_error([(name, SET, value)]) == (
        ErrorCode.INVALID_CONFIG, f"Invalid value {shown} for configuration {name}: {reason}")


def test_range_errors_show_the_parsed_value():
    assert topic_error([("min.cleanable.dirty.ratio", SET, "2")]) == (
        ErrorCode.INVALID_CONFIG, "Invalid value 2.0 for configuration min.cleanable.dirty.ratio: Value must be no more than 1")
    assert topic_error([("retention.ms", SET, " -7 ")])[1] == (
        "Invalid value -7 for configuration retention.ms: Value must be at least -1")


def test_accepted_topic_value_forms():
    ops = [("retention.ms", SET, " +42 "), ("preallocate", SET, "True"), ("cleanup.policy", SET, ""),
           ("min.cleanable.dirty.ratio", SET, "NaN"), ("compression.gzip.level", SET, "-1")]
    # stored as given, as Kafka stores them: parsing only checks them
    assert validate_topic_changes({}, ops, {}) == {name: value for name, _, value in ops}
    assert validate_topic_changes({"retention.ms": "5"}, [("cleanup.policy", SET, "compact,delete,compact")], {}) == {
        "retention.ms": "5", "cleanup.policy": "compact,delete,compact"}


def test_empty_cleanup_policy_item():
    assert topic_error([("cleanup.policy", SET, "compact,")]) == (
        ErrorCode.INVALID_CONFIG, "Configuration 'cleanup.policy' values must not be empty.")


@pytest.mark.parametrize("value", ["*", "", "0:1", "0:1,1:2", " 0:1 , 12:300 ", "0:1,", "*,"])
def test_valid_throttled_replicas(value):
    for name in (configs.LEADER_THROTTLED_REPLICAS, configs.FOLLOWER_THROTTLED_REPLICAS):
        assert validate_topic_changes({}, [(name, SET, value)], {}) == {name: value}


@pytest.mark.parametrize("value, shown", [
    ("all", "[all]"), ("0:1,*", "[0:1, *]"), ("0-1", "[0-1]"), ("0:1:2", "[0:1:2]"), ("a:1", "[a:1]"),
    ("-1:2", "[-1:2]")])
def test_invalid_throttled_replicas(value, shown):
    name = configs.FOLLOWER_THROTTLED_REPLICAS
    assert topic_error([(name, SET, value)]) == (
        ErrorCode.INVALID_CONFIG,
        f"Invalid value {shown} for configuration {name}: {name} must be the literal '*' or a list of replicas "
        "in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")


def test_first_bad_config_in_kafka_order_is_reported():
    assert "segment.bytes" in topic_error([("retention.ms", SET, "x"), ("segment.bytes", SET, "x")])[1]


def test_compaction_lag_conflict_uses_cluster_defaults():
    assert topic_error([("min.compaction.lag.ms", SET, "200"), ("max.compaction.lag.ms", SET, "100")]) == (
        ErrorCode.INVALID_CONFIG, "conflict topic config setting min.compaction.lag.ms (200) > max.compaction.lag.ms (100)")
    assert topic_error([("min.compaction.lag.ms", SET, "200")],
                       broker_defaults={"log.cleaner.max.compaction.lag.ms": "150"})[1] == (
        "conflict topic config setting min.compaction.lag.ms (200) > max.compaction.lag.ms (150)")


def test_tiered_storage_is_off():
    assert topic_error([("remote.storage.enable", SET, "true")]) == (
        ErrorCode.INVALID_CONFIG,
        "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.")
    validate_topic_changes({}, [("remote.storage.enable", SET, "false")], {})


@pytest.mark.parametrize("op", [APPEND, SUBTRACT])
def test_list_operations_on_non_list_topic_configs(op):
    word = "APPEND" if op == APPEND else "SUBTRACT"
    assert topic_error([("retention.ms", op, "1")]) == (
        ErrorCode.INVALID_CONFIG, f"Can't {word} to key retention.ms because its type is not LIST.")
    # The controller checks the type before it looks at the name.
    assert topic_error([("no.such", op, "1")])[1] == f"Can't {word} to key no.such because its type is not LIST."


def test_oversized_value():
    assert topic_error([("leader.replication.throttled.replicas", SET, "1:1," * 8192)]) == (
        ErrorCode.INVALID_CONFIG,
        "The configuration value cannot be added because it exceeds the maximum value size of 32767 bytes.")


def test_malformed_operations():
    assert topic_error([("retention.ms", SET, "1"), ("retention.ms", DELETE, None)]) == (
        ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
    assert topic_error([("retention.ms", SET, None), ("segment.ms", APPEND, None), ("flush.ms", DELETE, None)]) == (
        ErrorCode.INVALID_REQUEST, "Null value not supported for : retention.ms, segment.ms")
    assert topic_error([("retention.ms", 7, "1")]) == (ErrorCode.INVALID_REQUEST, "Unknown operations type 7")
    assert broker_error([("log.retention.ms", 9, "1")]) == (ErrorCode.INVALID_REQUEST, "Unknown operations type 9")


def test_legacy_alter_configs_replaces_everything():
    current = {"retention.ms": "1", "segment.ms": "2"}
    ops = legacy_alter_ops(current, [("retention.ms", "5"), ("cleanup.policy", "compact")])
    assert ops == [("retention.ms", SET, "5"), ("cleanup.policy", SET, "compact"), ("segment.ms", DELETE, None)]
    assert validate_topic_changes(current, ops, {}) == {"retention.ms": "5", "cleanup.policy": "compact"}
    assert topic_error(legacy_alter_ops({}, [("retention.ms", None)]))[1] == (
        "Null value not supported for : retention.ms")


def test_topic_creation_configs():
    assert validate_topic_creation([("retention.ms", "1"), ("cleanup.policy", "compact"), ("retention.ms", "2")],
                                   {}) == {"retention.ms": "2", "cleanup.policy": "compact"}
    with pytest.raises(KafkaError) as raised:
        validate_topic_creation([("retention.ms", None), ("segment.ms", None)], {})
    assert (raised.value.code, raised.value.message) == (
        ErrorCode.INVALID_CONFIG, "Null value not supported for topic configs: retention.ms,segment.ms")
    with pytest.raises(KafkaError) as raised:
        validate_topic_creation([("retention.ms", "soon")], {})
    assert raised.value.message == "Invalid value soon for configuration retention.ms: Not a number of type LONG"


# ---- Broker validation --------------------------------------------------------------------------------

def test_valid_broker_change():
    assert validate_broker_changes("1", {"leader.replication.throttled.rate": "5"}, [
        ("follower.replication.throttled.rate", SET, "1000"), ("leader.replication.throttled.rate", DELETE, None),
        ("kraftwire.replication.bandwidth.bytes.per.second", SET, "2048")]) == {
        "follower.replication.throttled.rate": "1000", "kraftwire.replication.bandwidth.bytes.per.second": "2048"}
    assert validate_broker_changes("", {}, [("kraftwire.throttle.auto.remove.enable", SET, "true")]) == {
        "kraftwire.throttle.auto.remove.enable": "true"}


@pytest.mark.parametrize("name, value, reason", [
    ("leader.replication.throttled.rate", "abc", "Not a number of type LONG"),
    ("follower.replication.throttled.rate", "-1", "Value must be at least 0"),
    ("replica.alter.log.dirs.io.max.bytes.per.second", "-2", "Value must be at least 0"),
    ("log.cleanup.policy", "keep", "String must be one of: compact, delete"),
    ("message.max.bytes", "-1", "Value must be at least 0"),
    ("kraftwire.replication.bandwidth.bytes.per.second", "0", "Value must be at least 1"),
    ("kraftwire.throttle.auto.remove.enable", "maybe", "Expected value to be either true or false"),
])
def test_bad_broker_values_are_invalid_request(name, value, reason):
    resource = "" if name == "kraftwire.throttle.auto.remove.enable" else "1"
    assert broker_error([(name, SET, value)], name=resource) == (
        ErrorCode.INVALID_REQUEST, f"Invalid value {value} for configuration {name}: {reason}")


def test_kafka_config_rules():
    assert broker_error([("log.roll.ms", SET, "0")]) == (
        ErrorCode.INVALID_REQUEST, "requirement failed: log.roll.ms must be greater than or equal to 1")
    assert broker_error([("log.roll.jitter.ms", SET, "-1")])[1] == (
        "requirement failed: log.roll.jitter.ms must be greater than or equal to 0")
    assert broker_error([("log.retention.ms", SET, "0")])[1] == (
        "requirement failed: log.retention.ms must be unlimited (-1) or, greater than or equal to 1")
    validate_broker_changes("", {}, [("log.retention.ms", SET, "-5")])


def test_read_only_broker_configs():
    assert broker_error([("num.partitions", SET, "3"), ("log.retention.hours", SET, "1"), ("broker.id", SET, "2")]) == (
        ErrorCode.INVALID_REQUEST, "Cannot update these configs dynamically: [broker.id, log.retention.hours, num.partitions]")


def test_custom_broker_configs_are_accepted_but_not_unknown_kraftwire_ones():
    assert validate_broker_changes("1", {}, [("my.plugin.setting", SET, "x")]) == {"my.plugin.setting": "x"}
    assert broker_error([("kraftwire.replication.bandwith", SET, "1")]) == (
        ErrorCode.INVALID_REQUEST, "Unknown kraftwire config name: kraftwire.replication.bandwith")


def test_cluster_only_config_on_a_broker():
    assert broker_error([("kraftwire.throttle.auto.remove.enable", SET, "true")], name="2") == (
        ErrorCode.INVALID_REQUEST, "Cannot update these configs for a single broker, only as the cluster default "
                         "(empty broker id): [kraftwire.throttle.auto.remove.enable]")


def test_list_operations_on_broker_configs():
    assert broker_error([("message.max.bytes", APPEND, "1")]) == (
        ErrorCode.INVALID_CONFIG, "Config value append is not allowed for config key: message.max.bytes")
    assert broker_error([("message.max.bytes", SUBTRACT, "1")]) == (
        ErrorCode.INVALID_CONFIG, "Config value subtract is not allowed for config key: message.max.bytes")
    assert broker_error([("no.such", APPEND, "1")]) == (ErrorCode.INVALID_CONFIG, "Unknown config name: no.such")
    # Kafka's quota keys are missing from KafkaConfig's definitions.
    assert broker_error([("leader.replication.throttled.rate", APPEND, "1")]) == (
        ErrorCode.INVALID_CONFIG, "Unknown config name: leader.replication.throttled.rate")
    assert validate_broker_changes("", {}, [("log.cleanup.policy", APPEND, "compact")]) == {
        "log.cleanup.policy": "delete,compact"}


def test_broker_records_are_checked_even_when_unchanged():
    big = "x" * 32768
    assert broker_error([("my.plugin", SET, big)], current={"my.plugin": big})[0] == ErrorCode.INVALID_CONFIG
    validate_topic_changes({"cleanup.policy": "delete"}, [("cleanup.policy", SET, "delete")], {})


def test_eligible_leader_replicas_pin_min_insync_replicas_to_the_cluster_level():
    assert broker_error([("min.insync.replicas", SET, "2")], elr_enabled=True) == (
        ErrorCode.INVALID_CONFIG, "Broker-level min.insync.replicas cannot be altered while ELR is enabled.")
    assert broker_error([("min.insync.replicas", DELETE, None)], elr_enabled=True)[1] == (
        "Broker-level min.insync.replicas cannot be altered while ELR is enabled.")
    assert broker_error([("min.insync.replicas", DELETE, None)], name="", elr_enabled=True) == (
        ErrorCode.INVALID_CONFIG, "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.")
    assert validate_broker_changes("", {}, [("min.insync.replicas", SET, "2")], elr_enabled=True) == {
        "min.insync.replicas": "2"}
    assert validate_broker_changes("1", {}, [("min.insync.replicas", SET, "2")]) == {"min.insync.replicas": "2"}


# ---- Incremental operations ---------------------------------------------------------------------------

THROTTLE = configs.LEADER_THROTTLED_REPLICAS


def test_set_and_delete():
    current = {"retention.ms": "1", "segment.ms": "2"}
    assert apply_incremental(TOPIC, current, [("retention.ms", SET, "3"), ("segment.ms", DELETE, None),
                                              ("flush.ms", DELETE, None)]) == {"retention.ms": "3"}
    assert current == {"retention.ms": "1", "segment.ms": "2"}


def test_append_adds_missing_items_in_order():
    assert apply_incremental(TOPIC, {THROTTLE: "0:1,1:2"}, [(THROTTLE, APPEND, "1:2,2:3,0:4")]) == {
        THROTTLE: "0:1,1:2,2:3,0:4"}
    assert apply_incremental(TOPIC, {}, [(THROTTLE, APPEND, "0:1")]) == {THROTTLE: "0:1"}


def test_append_starts_from_kafkas_default():
    assert apply_incremental(TOPIC, {}, [("cleanup.policy", APPEND, "compact")]) == {"cleanup.policy": "delete,compact"}
    assert apply_incremental(TOPIC, {}, [("cleanup.policy", SUBTRACT, "delete")]) == {"cleanup.policy": ""}


def test_subtract_removes_items():
    assert apply_incremental(TOPIC, {THROTTLE: "0:1,1:2,2:3"}, [(THROTTLE, SUBTRACT, "1:2,9:9")]) == {
        THROTTLE: "0:1,2:3"}
    assert apply_incremental(TOPIC, {THROTTLE: "0:1"}, [(THROTTLE, SUBTRACT, "0:1")]) == {THROTTLE: ""}


def test_list_operations_split_like_java():
    # Empty items already stored are dropped; trailing empty items of the operand are ignored.
    assert apply_incremental(TOPIC, {THROTTLE: "0:1,,1:2"}, [(THROTTLE, APPEND, "2:3,,")]) == {THROTTLE: "0:1,1:2,2:3"}
    assert apply_incremental(TOPIC, {THROTTLE: "0:1"}, [(THROTTLE, APPEND, ",2:3")]) == {THROTTLE: "0:1,,2:3"}


def test_apply_incremental_refuses_lists_operations_on_scalars():
    with pytest.raises(KafkaError) as raised:
        apply_incremental(BROKER, {}, [("message.max.bytes", APPEND, "1")])
    assert raised.value.message == "Can't APPEND to key message.max.bytes because its type is not LIST."


# ---- Typed accessors ----------------------------------------------------------------------------------

def test_topic_value():
    assert topic_value({}, {}, "kraftwire.partition.size.bytes") == DEFAULT_PARTITION_SIZE_BYTES
    assert topic_value({"kraftwire.partition.size.bytes": "5"}, {}, "kraftwire.partition.size.bytes") == 5
    assert configs.partition_sizes(" 0:5, 2:0 ") == {0: 5, 2: 0}
    assert topic_value({}, {"unclean.leader.election.enable": "true"}, "unclean.leader.election.enable") is True
    assert topic_value({"unclean.leader.election.enable": "false"}, {"unclean.leader.election.enable": "true"},
                       "unclean.leader.election.enable") is False
    assert topic_value({}, {}, "cleanup.policy") == ("delete",)
    assert topic_value({}, {}, "min.cleanable.dirty.ratio") == 0.5
    assert topic_value({}, {"log.retention.ms": "9"}, "retention.ms") == 9


def test_broker_value():
    rate = configs.LEADER_THROTTLED_RATE
    assert broker_value({}, {}, rate) == LONG_MAX
    assert broker_value({}, {rate: "10"}, rate) == 10
    assert broker_value({rate: "5"}, {rate: "10"}, rate) == 5
    assert broker_value({}, {}, configs.REPLICATION_BANDWIDTH) == DEFAULT_BROKER_BANDWIDTH
    assert broker_value({}, {}, configs.THROTTLE_AUTO_REMOVE_ENABLE) is False
    assert broker_value({}, {}, "log.retention.ms") is None


def test_throttled_replicas():
    assert throttled_replicas("*") == "all"
    assert throttled_replicas(" * ") == "all"
    assert throttled_replicas("") == frozenset()
    assert throttled_replicas("0:1, 3:12,0:1,") == {(0, 1), (3, 12)}
    with pytest.raises(ValueError):
        throttled_replicas("0-1")
