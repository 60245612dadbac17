"""The config APIs' pure decisions: DescribeConfigs answers, what a broker refuses before forwarding
AlterConfigs/IncrementalAlterConfigs, and the controller's ConfigRecords and per-resource outcomes."""
from __future__ import annotations

import uuid

from kraftwire.codec import records as rec
from kraftwire.codec.messages import (AlterConfigsRequest, DescribeConfigsRequest, DescribeConfigsResponse,
                            IncrementalAlterConfigsRequest)
from kraftwire.server.controller import configuration_control as describe_api
from kraftwire.server.controller import configuration_control as legacy_api
from kraftwire.server.controller import configuration_control as incremental_api
from kraftwire.server.controller.config_validation import AlterOp
from kraftwire.server.metadata.config_describe import ConfigSource
from kraftwire.server.metadata.config_values import ConfigType
from kraftwire.server.metadata.configs import LONG_MAX, TOPIC_CONFIGS
from kraftwire.server.metadata.image import MetadataImage

TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8
SET, DELETE, APPEND, SUBTRACT = AlterOp.SET, AlterOp.DELETE, AlterOp.APPEND, AlterOp.SUBTRACT
CONTROLLER_ID = 3000
RATE = "leader.replication.throttled.rate"
REPLICAS = "leader.replication.throttled.replicas"


def image_of(*records) -> MetadataImage:
    """Brokers 1-3 and topic "orders", then ``records``, applied as the controller would."""
    topic_id = uuid.uuid4()
    image = MetadataImage()
    base = [rec.RegisterBrokerRecord(broker_id=b, incarnation_id=uuid.uuid4(), broker_epoch=b) for b in (1, 2, 3)]
    base += [rec.TopicRecord(name="orders", topic_id=topic_id),
             rec.PartitionRecord(partition_id=0, topic_id=topic_id, replicas=[1, 2], isr=[1, 2], leader=1)]
    for record in [*base, *records]:
        image.apply(record, image.offset + 1)
    return image


def config(resource_type, name, key, value):
    return rec.ConfigRecord(resource_type=resource_type, resource_name=name, name=key, value=value)


def describe(image, *resources, version=4, broker_id=1, synonyms=True, documentation=False):
    """resources: (type, name) or (type, name, keys)."""
    request = DescribeConfigsRequest(
        resources=[DescribeConfigsRequest.DescribeConfigsResource(
            resource_type=r[0], resource_name=r[1], configuration_keys=r[2] if len(r) > 2 else None)
            for r in resources],
        include_synonyms=synonyms, include_documentation=documentation)
    response = describe_api.describe_configs(image, request, version, broker_id)
    response.encode(version)  # every field set is valid in this version
    return response.results


def entries_of(result):
    return {entry.name: entry for entry in result.configs}


def incremental(*resources, validate_only=False):
    """resources: (type, name, [(key, op, value), ...])."""
    Resource = IncrementalAlterConfigsRequest.AlterConfigsResource
    Config = IncrementalAlterConfigsRequest.AlterableConfig
    return IncrementalAlterConfigsRequest(validate_only=validate_only, resources=[
        Resource(resource_type=t, resource_name=n, configs=[Config(name=k, config_operation=op, value=v)
                                                            for k, op, v in ops]) for t, n, ops in resources])


def legacy(*resources, validate_only=False):
    """resources: (type, name, {key: value})."""
    Resource, Config = AlterConfigsRequest.AlterConfigsResource, AlterConfigsRequest.AlterableConfig
    return AlterConfigsRequest(validate_only=validate_only, resources=[
        Resource(resource_type=t, resource_name=n, configs=[Config(name=k, value=v) for k, v in values.items()])
        for t, n, values in resources])


def outcomes(response):
    return [(r.resource_type, r.resource_name, r.error_code, r.error_message) for r in response.responses]


def written(records):
    return [(r.resource_type, r.resource_name, r.name, r.value) for r in records]


def refused_on_broker(image, request, ops_of=incremental_api.incremental_ops, broker_id=1):
    return incremental_api.preprocess_on_broker(image, broker_id, request.resources, ops_of)


# ---- DescribeConfigs ---------------------------------------------------------------------------------

def test_topic_lists_every_config_with_source_and_synonyms():
    image = image_of(config(TOPIC, "orders", "retention.ms", "1000"),
                     config(BROKER, "", "log.retention.bytes", "5000"))
    [result] = describe(image, (TOPIC, "orders"))
    assert (result.error_code, result.resource_type, result.resource_name) == (0, TOPIC, "orders")
    entries = entries_of(result)
    assert {REPLICAS, "follower.replication.throttled.replicas", "cleanup.policy"} <= entries.keys()
    retention = entries["retention.ms"]
    assert (retention.value, retention.config_source, retention.read_only) == (
        "1000", ConfigSource.DYNAMIC_TOPIC_CONFIG, False)
    assert [(s.name, s.value, s.source) for s in retention.synonyms] == [
        ("retention.ms", "1000", ConfigSource.DYNAMIC_TOPIC_CONFIG)]
    size = entries["retention.bytes"]
    assert (size.value, size.config_source) == ("5000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    assert [(s.name, s.value, s.source) for s in size.synonyms] == [
        ("log.retention.bytes", "5000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
        ("log.retention.bytes", "-1", ConfigSource.DEFAULT_CONFIG)]
    throttled = entries[REPLICAS]
    assert (throttled.value, throttled.config_source, throttled.config_type) == ("", ConfigSource.DEFAULT_CONFIG,
                                                                                 ConfigType.LIST)
    assert throttled.documentation is None


def test_synonyms_and_documentation_only_when_asked():
    entries = entries_of(describe(image_of(), (TOPIC, "orders", ["retention.bytes"]), synonyms=False,
                                  documentation=True)[0])
    assert list(entries) == ["retention.bytes"]
    assert entries["retention.bytes"].synonyms == ()
    assert entries["retention.bytes"].documentation == TOPIC_CONFIGS["retention.bytes"].doc


def described_at(image, version, **kwargs):
    """The entries of topic "orders" as a client decodes them at ``version``."""
    resource = DescribeConfigsRequest.DescribeConfigsResource(resource_type=TOPIC, resource_name="orders",
                                                              configuration_keys=["retention.ms"])
    response = describe_api.describe_configs(image, DescribeConfigsRequest(resources=[resource], **kwargs), version, 1)
    return DescribeConfigsResponse.decode(response.encode(version), version).results[0].configs


def test_version_0_says_is_default_instead_of_a_source():
    [default] = described_at(image_of(), 0)
    [explicit] = described_at(image_of(config(TOPIC, "orders", "retention.ms", "1000")), 0)
    assert (default.value, default.is_default) == ("604800000", True)
    assert (explicit.value, explicit.is_default) == ("1000", False)


def test_fields_by_version():
    image = image_of(config(TOPIC, "orders", "retention.ms", "1000"))
    for version in (1, 2):
        [entry] = described_at(image, version, include_synonyms=True)
        assert (entry.config_source, entry.config_type, len(entry.synonyms)) == (ConfigSource.DYNAMIC_TOPIC_CONFIG,
                                                                                  ConfigType.UNKNOWN, 1)
    for version in (3, 4):
        [entry] = described_at(image, version, include_documentation=True)
        assert (entry.config_type, entry.documentation) == (ConfigType.LONG, TOPIC_CONFIGS["retention.ms"].doc)
        assert entry.synonyms == ()


def test_unknown_and_illegal_topics():
    unknown, illegal, empty = describe(image_of(), (TOPIC, "nope"), (TOPIC, "a/b"), (TOPIC, ""))
    assert (unknown.error_code, unknown.error_message, unknown.configs) == (3, "", ())
    assert (illegal.error_code, illegal.error_message) == (
        17, "Topic name is invalid: 'a/b' contains one or more characters other than ASCII alphanumerics, '.', "
            "'_' and '-'")
    assert (empty.error_code, empty.error_message) == (17, "Topic name is invalid: the empty string is not allowed")


def test_broker_answers_only_for_itself_and_the_cluster_default():
    image = image_of(config(BROKER, "2", RATE, "100"), config(BROKER, "", "log.retention.bytes", "7"))
    own, other, not_a_number, cluster = describe(image, (BROKER, "2"), (BROKER, "1"), (BROKER, "x1"), (BROKER, ""),
                                                 broker_id=2)
    assert own.error_code == 0
    rate = entries_of(own)[RATE]
    assert (rate.value, rate.config_source, rate.read_only) == ("100", ConfigSource.DYNAMIC_BROKER_CONFIG, False)
    assert (other.error_code, other.error_message) == (
        42, "Unexpected broker id, expected 2 or empty string, but received 1")
    assert (not_a_number.error_code, not_a_number.error_message) == (
        42, "Broker id must be an integer, but it is: x1")
    assert [(e.name, e.value, e.config_source) for e in cluster.configs] == [
        ("log.retention.bytes", "7", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)]


def test_broker_lists_the_throttle_rates_when_unset():
    entries = entries_of(describe(image_of(), (BROKER, "1"))[0])
    for key in (RATE, "follower.replication.throttled.rate", "replica.alter.log.dirs.io.max.bytes.per.second"):
        assert (entries[key].value, entries[key].config_source, entries[key].read_only) == (
            str(LONG_MAX), ConfigSource.DEFAULT_CONFIG, False)
    assert entries["broker.id"].value == "1" and entries["broker.id"].read_only


def test_custom_broker_configs_are_listed_as_sensitive_and_read_only():
    image = image_of(config(BROKER, "1", "custom.key", "secret"), config(BROKER, "", "other.key", "x"))
    entries = entries_of(describe(image, (BROKER, "1"))[0])
    for key, source in (("custom.key", ConfigSource.DYNAMIC_BROKER_CONFIG),
                        ("other.key", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)):
        entry = entries[key]
        assert (entry.value, entry.is_sensitive, entry.read_only, entry.config_source) == (None, True, True, source)
        assert [(s.value, s.source) for s in entry.synonyms] == [(None, source)]


def test_group_resources_show_kafkas_group_configs():
    [group] = describe(image_of(config(32, "g", "consumer.session.timeout.ms", "50000")), (32, "g"))
    entries = entries_of(group)
    assert group.error_code == 0 and len(entries) == 17
    own = entries["consumer.session.timeout.ms"]
    assert (own.value, own.config_source) == ("50000", 8)
    assert [(s.name, s.value, s.source) for s in own.synonyms] == [
        ("consumer.session.timeout.ms", "50000", 8), ("group.consumer.session.timeout.ms", "45000", 5)]
    assert (entries["share.isolation.level"].value, entries["share.isolation.level"].config_source) == (
        "read_uncommitted", 5)


def test_resource_types_kraftwire_does_not_keep_and_unknown_ones():
    [metrics] = describe(image_of(), (16, "m"))
    assert (metrics.error_code, metrics.error_message) == (42, "Unsupported resource type: CLIENT_METRICS")
    # BROKER_LOGGER resources are a node's loggers (broker_loggers); with none given, there are none.
    [logger] = describe(image_of(), (BROKER_LOGGER, "1"))
    assert (logger.error_code, logger.configs) == (0, ())
    # A type Kafka does not know fails the whole request.
    results = describe(image_of(), (TOPIC, "orders"), (7, "x"))
    assert [(r.resource_type, r.error_code, r.configs) for r in results] == [(TOPIC, 42, ()), (7, 42, ())]
    assert results[0].error_message == describe_api.INVALID_REQUEST_TEXT


def test_broker_ids_are_read_like_java_integers():
    assert [describe_api.parse_broker_id(text) for text in ("1", "+1", "-1", "007", "2147483647")] == [
        1, 1, -1, 7, 2147483647]
    assert [describe_api.parse_broker_id(text) for text in ("", " 1", "1_0", "2147483648", "١")] == [None] * 5


# ---- What the receiving broker answers itself --------------------------------------------------------

def test_repeated_resources_are_refused_in_every_copy():
    request = incremental((TOPIC, "orders", [("retention.ms", SET, "1")]), (BROKER, "1", []),
                          (TOPIC, "orders", [("retention.ms", SET, "2")]))
    duplicate = (42, "Each resource must appear at most once.")
    assert refused_on_broker(image_of(), request) == {0: duplicate, 2: duplicate}


def test_malformed_operations_are_refused_by_the_broker():
    request = incremental((TOPIC, "orders", [("retention.ms", SET, "1"), ("retention.ms", DELETE, None)]),
                          (TOPIC, "t2", [("retention.ms", SET, None), ("segment.ms", APPEND, None)]),
                          (BROKER, "", [(RATE, 9, "1")]))
    assert refused_on_broker(image_of(), request) == {
        0: (42, "Error due to duplicate config keys"),
        1: (42, "Null value not supported for : retention.ms, segment.ms"),
        2: (42, "Unknown operations type 9")}


def test_broker_resources_must_name_the_receiving_broker():
    request = incremental((BROKER, "2", [(RATE, SET, "1")]), (BROKER, "b2", [(RATE, SET, "1")]),
                          (BROKER, "1", [(RATE, SET, "1")]), (BROKER, "", [(RATE, SET, "1")]))
    assert refused_on_broker(image_of(), request) == {
        0: (42, "Unexpected broker id, expected 1, but received 2"),
        1: (42, "Node id must be an integer, but it is: b2")}


def test_broker_values_are_checked_by_the_broker():
    request = incremental((BROKER, "1", [(RATE, SET, "-5")]), (BROKER, "", [(RATE, APPEND, "5")]),
                          (TOPIC, "orders", [("retention.ms", SET, "soon")]), (BROKER_LOGGER, "1", []))
    assert refused_on_broker(image_of(), request) == {
        0: (42, f"Invalid value -5 for configuration {RATE}: Value must be at least 0"),
        1: (40, f"Unknown config name: {RATE}"),
        3: (42, "Unknown resource type 8")}  # topics are the controller's to check


def test_legacy_null_values_are_refused_by_the_broker():
    request = legacy((TOPIC, "orders", {"retention.ms": None, "segment.ms": "1"}))
    assert refused_on_broker(image_of(), request, legacy_api.legacy_ops) == {
        0: (42, "Null value not supported for : retention.ms")}


# ---- The controller's records --------------------------------------------------------------------------

def test_topic_records_only_for_changes_broker_records_always():
    image = image_of(config(TOPIC, "orders", "retention.ms", "1000"), config(BROKER, "2", RATE, "50"))
    records, response = incremental_api.incremental_alter_configs(image, incremental(
        (TOPIC, "orders", [("retention.ms", SET, "1000"), ("segment.ms", SET, "60000"), ("flush.ms", DELETE, None)]),
        (BROKER, "2", [(RATE, SET, "50"), ("follower.replication.throttled.rate", DELETE, None)])), CONTROLLER_ID)
    assert outcomes(response) == [(TOPIC, "orders", 0, None), (BROKER, "2", 0, None)]
    assert written(records) == [(TOPIC, "orders", "segment.ms", "60000"),
                                (BROKER, "2", RATE, "50"),
                                (BROKER, "2", "follower.replication.throttled.rate", None)]


def test_list_operations_and_delete():
    image = image_of(config(TOPIC, "orders", REPLICAS, "0:1,0:2"), config(TOPIC, "orders", "retention.ms", "9"))
    records, response = incremental_api.incremental_alter_configs(image, incremental(
        (TOPIC, "orders", [(REPLICAS, APPEND, "0:3,0:1"), ("follower.replication.throttled.replicas", APPEND, "*"),
                           ("retention.ms", DELETE, None)])), CONTROLLER_ID)
    assert written(records) == [(TOPIC, "orders", REPLICAS, "0:1,0:2,0:3"),
                                (TOPIC, "orders", "follower.replication.throttled.replicas", "*"),
                                (TOPIC, "orders", "retention.ms", None)]
    records, _ = incremental_api.incremental_alter_configs(image, incremental((TOPIC, "orders", [(REPLICAS, SUBTRACT, "0:1")])),
                                        CONTROLLER_ID)
    assert written(records) == [(TOPIC, "orders", REPLICAS, "0:2")]


def test_controller_refusals_per_resource():
    request = incremental(
        (TOPIC, "orders", [("retention.ms", APPEND, "1")]),
        (TOPIC, "orders2", [(REPLICAS, SET, "0-1")]),
        (TOPIC, "missing", [("retention.ms", SET, "1")]),
        (TOPIC, "", [("retention.ms", SET, "1")]),
        (TOPIC, "bad name", []),
        (BROKER, "9", [(RATE, SET, "1")]),
        (BROKER, "-1", []),
        (BROKER, "one", []),
        (BROKER, "3", [(RATE, SET, "10")]),
        (9, "x", []))
    records, response = incremental_api.incremental_alter_configs(image_of(), request, CONTROLLER_ID)
    assert [(code, message) for _, _, code, message in outcomes(response)] == [
        (40, "Can't APPEND to key retention.ms because its type is not LIST."),
        (40, f"Invalid value [0-1] for configuration {REPLICAS}: {REPLICAS} must be the literal '*' or a list of "
             "replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."),
        (3, "The topic 'missing' does not exist."),
        (42, "Default topic resources are not allowed."),
        (17, "Topic name is invalid: 'bad name' contains one or more characters other than ASCII alphanumerics, "
             "'.', '_' and '-'"),
        (102, "No node with id 9 found."),
        (42, "Invalid negative broker ID."),
        (42, "Unable to parse broker name as a base 10 number."),
        (0, None),
        (35, "Unknown resource type 9.")]
    assert written(records) == [(BROKER, "3", RATE, "10")]  # the accepted resource still changes


def test_the_controller_and_cluster_default_resources_exist():
    records, response = incremental_api.incremental_alter_configs(image_of(), incremental(
        (BROKER, str(CONTROLLER_ID), [(RATE, SET, "1")]), (BROKER, "", [(RATE, SET, "2")])), CONTROLLER_ID)
    assert [code for _, _, code, _ in outcomes(response)] == [0, 0]
    assert written(records) == [(BROKER, "3000", RATE, "1"), (BROKER, "", RATE, "2")]


def test_validate_only_writes_nothing_but_answers_the_same():
    request = incremental((TOPIC, "orders", [("retention.ms", SET, "5")]), (TOPIC, "missing", []),
                          validate_only=True)
    records, response = incremental_api.incremental_alter_configs(image_of(), request, CONTROLLER_ID)
    assert records == []
    assert [code for _, _, code, _ in outcomes(response)] == [0, 3]


def test_a_request_writing_over_10000_records_fails_whole():
    many = [(f"custom.{i}", SET, "1") for i in range(5001)]
    records, response = incremental_api.incremental_alter_configs(image_of(), incremental((BROKER, "1", many), (BROKER, "2", many)),
                                               CONTROLLER_ID)
    assert records == []
    assert [(code, message) for _, _, code, message in outcomes(response)] == [
        (44, "Unable to perform excessively large batch operation.")] * 2
    records, _ = incremental_api.incremental_alter_configs(image_of(), incremental((BROKER, "1", many)), CONTROLLER_ID)
    assert len(records) == 5001


def test_repeated_resources_sent_straight_to_the_controller():
    _, response = incremental_api.incremental_alter_configs(image_of(), incremental((TOPIC, "orders", []), (TOPIC, "orders", [])),
                                         CONTROLLER_ID)
    assert [(code, message) for _, _, code, message in outcomes(response)] == [(42, "Duplicate resource.")] * 2


def test_legacy_alter_replaces_the_whole_set():
    image = image_of(config(TOPIC, "orders", "retention.ms", "1000"), config(TOPIC, "orders", "segment.ms", "70000"),
                     config(BROKER, "1", RATE, "5"), config(BROKER, "1", "follower.replication.throttled.rate", "6"))
    records, response = legacy_api.alter_configs(image, legacy(
        (TOPIC, "orders", {"segment.ms": "70000", "flush.ms": "10"}), (BROKER, "1", {RATE: "5"})), CONTROLLER_ID)
    assert [code for _, _, code, _ in outcomes(response)] == [0, 0]
    assert written(records) == [(TOPIC, "orders", "flush.ms", "10"), (TOPIC, "orders", "retention.ms", None),
                                (BROKER, "1", RATE, "5"), (BROKER, "1", "follower.replication.throttled.rate", None)]


def test_legacy_alter_refusals():
    _, response = legacy_api.alter_configs(image_of(), legacy(
        (TOPIC, "orders", {"min.insync.replicas": "0"}), (TOPIC, "missing", {}), (BROKER, "1", {RATE: "x"})),
        CONTROLLER_ID)
    # Kafka's controller checks topic values but leaves a broker config's value to the receiving broker.
    assert [(code, message) for _, _, code, message in outcomes(response)] == [
        (40, "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"),
        (3, "The topic 'missing' does not exist."),
        (0, None)]
    request = legacy((BROKER, "1", {RATE: "x"}))
    assert refused_on_broker(image_of(), request, legacy_api.legacy_ops) == {
        0: (42, f"Invalid value x for configuration {RATE}: Not a number of type LONG")}


def test_broker_values_are_the_receiving_brokers_to_check():
    """Sent to the controller directly, a broker config may take any value (Kafka's
    ControllerConfigurationValidator checks a BROKER resource's name only), but kraftwire's own configs,
    ELR's min.insync.replicas rule and APPEND's LIST rule still hold."""
    request = incremental((BROKER, "1", [(RATE, AlterOp.SET, "-5"), ("log.retention.hours", AlterOp.SET, "soon")]))
    records, response = incremental_api.incremental_alter_configs(image_of(), request, CONTROLLER_ID)
    assert [code for _, _, code, _ in outcomes(response)] == [0]
    assert written(records) == [(BROKER, "1", RATE, "-5"), (BROKER, "1", "log.retention.hours", "soon")]
    for ops, refusal in (
            ([("kraftwire.replication.bandwidth.bytes.per.second", AlterOp.SET, "0")],
             (42, "Invalid value 0 for configuration kraftwire.replication.bandwidth.bytes.per.second: "
                  "Value must be at least 1")),
            ([(RATE, AlterOp.APPEND, "1")], (40, f"Can't APPEND to key {RATE} because its type is not LIST."))):
        _, response = incremental_api.incremental_alter_configs(image_of(), incremental((BROKER, "1", ops)),
                                                                CONTROLLER_ID)
        assert [(code, message) for _, _, code, message in outcomes(response)] == [refusal]


def test_a_stored_broker_value_that_does_not_parse_is_not_in_force():
    """What the controller stored unchecked, brokers pass over, as a Kafka broker keeps its config when a
    dynamic update fails its validation."""
    from kraftwire.server.metadata.configs import broker_value, topic_value
    assert broker_value({RATE: "-5"}, {RATE: "100"}, RATE) == 100
    assert broker_value({RATE: "-5"}, {}, RATE) == LONG_MAX
    assert topic_value({}, {"log.retention.bytes": "lots"}, "retention.bytes") == -1


def test_broker_logger_changes_are_judged_and_listed_for_the_handler():
    """The broker answers its own BROKER_LOGGER resources: Kafka's refusals, and SUCCESS for the
    changes the handler then carries out (``logger_changes``)."""
    loggers = {"root": "WARN", "kraftwire.broker": "WARN"}
    request = incremental((BROKER_LOGGER, "1", [("kraftwire.broker", SET, "DEBUG")]),
                          (BROKER_LOGGER, "1", [("kraftwire.nothing", SET, "DEBUG")]),
                          (TOPIC, "orders", [("retention.ms", SET, "1")]))
    outcomes = incremental_api.preprocess_on_broker(image_of(), 1, request.resources[:1], incremental_api.incremental_ops,
                                                    loggers=loggers)
    assert outcomes == {0: (0, None)}
    assert incremental_api.logger_changes(request.resources[:1], outcomes) == [("kraftwire.broker", SET, "DEBUG")]
    outcomes = incremental_api.preprocess_on_broker(image_of(), 1, request.resources[1:], incremental_api.incremental_ops,
                                                    loggers=loggers)
    assert outcomes == {0: (40, "Logger kraftwire.nothing does not exist!")}
    records, response = incremental_api.incremental_alter_configs(image_of(), incremental(
        (BROKER_LOGGER, str(CONTROLLER_ID), [("root", DELETE, None)])), CONTROLLER_ID, loggers)
    assert records == [] and [(r.error_code, r.error_message) for r in response.responses] == [
        (42, "Removing the log level of the root logger is not allowed")]


def test_a_topic_config_comes_from_the_answering_broker_first():
    """Kafka's broker computes a topic's configs from its own: its per-broker dynamic config of the
    synonym (DYNAMIC_BROKER_CONFIG) before the cluster default, so brokers 1 and 2 answer differently."""
    image = image_of(config(BROKER, "1", "log.retention.ms", "7200000"),
                     config(BROKER, "", "log.retention.ms", "3600000"))
    on_1 = describe(image, (TOPIC, "orders", ["retention.ms"]))[0].configs[0]
    assert (on_1.value, on_1.config_source) == ("7200000", ConfigSource.DYNAMIC_BROKER_CONFIG)
    assert [(s.name, s.value, s.source) for s in on_1.synonyms] == [
        ("log.retention.ms", "7200000", ConfigSource.DYNAMIC_BROKER_CONFIG),
        ("log.retention.ms", "3600000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
        ("log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG)]
    on_2 = describe(image, (TOPIC, "orders", ["retention.ms"]), broker_id=2)[0].configs[0]
    assert (on_2.value, on_2.config_source) == ("3600000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)


def test_a_stored_broker_value_that_does_not_parse_is_described_as_stored():
    """What the controller stored unchecked is described as the string stored, as Kafka's broker does."""
    image = image_of(config(BROKER, "1", RATE, "-5"))
    [entry] = describe(image, (BROKER, "1", [RATE]))[0].configs
    assert (entry.value, entry.config_source) == ("-5", ConfigSource.DYNAMIC_BROKER_CONFIG)
