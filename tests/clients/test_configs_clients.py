"""Topic and broker configs through real clients: kafka-python (API and ``kafka-python admin`` CLI),
confluent-kafka and aiokafka describe, set (incrementally and with the legacy AlterConfigs), read back
(value, source, synonyms) and delete them, and get Kafka's error codes; the committed image must
hold exactly what they set."""
from __future__ import annotations

import json
import subprocess

import pytest
from aiokafka.admin import AIOKafkaAdminClient, NewTopic as AioNewTopic
from aiokafka.admin.config_resource import ConfigResource as AioResource, ConfigResourceType as AioType
from aiokafka.client import AIOKafkaClient
from aiokafka.protocol.admin import AlterConfigsRequest, DescribeConfigsRequest
from confluent_kafka import KafkaException
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource as CkResource,
                                   NewTopic as CkNewTopic, ResourceType)
from kafka import KafkaAdminClient
from kafka.admin import AlterConfigOp, ConfigResource, NewTopic

from kraftwire.codec import messages
from kraftwire.codec.constants import ConfigResourceType
from kraftwire.server.wire.client import KafkaClient
from kraftwire.server.metadata.configs import LONG_MAX

TOPIC, BROKER = ConfigResourceType.TOPIC, ConfigResourceType.BROKER
LEADER_RATE, FOLLOWER_RATE = "leader.replication.throttled.rate", "follower.replication.throttled.rate"
MIN_ISR = "min.insync.replicas"
LEADER_REPLICAS, FOLLOWER_REPLICAS = "leader.replication.throttled.replicas", "follower.replication.throttled.replicas"
DYNAMIC_TOPIC, DYNAMIC_BROKER, DYNAMIC_DEFAULT, DEFAULT = 1, 2, 3, 5


@pytest.fixture
def bg_cluster(kraftwire_clean_cluster):
    """The run's shared 3-broker cluster, reset before each test (the plugin's ``kraftwire_clean_cluster``):
    as fresh as one started for the test, without the start."""
    return kraftwire_clean_cluster


def stored(bg, resource_type: int, name: str) -> dict:
    """The resource's dynamic configs in the committed image."""
    return bg.call(lambda: dict(bg.cluster.controller.committed.configs.get((resource_type, name), {})))


def kafka_python(bg) -> KafkaAdminClient:
    admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="configs-test")
    admin.create_topics([NewTopic("orders", 2, 2)])
    return admin


def described(admin, resource_type: str, name: str, keys=None) -> dict:
    found = admin.describe_configs([ConfigResource(resource_type, name, keys)], include_synonyms=True,
                                   config_filter="all")
    return found[resource_type.lower()][name]


def synonyms(entry: dict) -> list:
    return [(s["name"], s["value"], s["source"]) for s in entry["synonyms"]]


# ---- kafka-python --------------------------------------------------------------------------------------

def test_kafka_python_lists_the_throttle_keys_when_unset(bg_cluster):
    admin = kafka_python(bg_cluster)
    topic = described(admin, "TOPIC", "orders")
    for key in (LEADER_REPLICAS, FOLLOWER_REPLICAS):
        assert (topic[key]["value"], topic[key]["config_source"], topic[key]["read_only"]) == ("", "DEFAULT_CONFIG",
                                                                                               False)
    broker = described(admin, "BROKER", "2")
    for key in (LEADER_RATE, FOLLOWER_RATE, "replica.alter.log.dirs.io.max.bytes.per.second"):
        assert (broker[key]["value"], broker[key]["config_source"], broker[key]["read_only"]) == (
            str(LONG_MAX), "DEFAULT_CONFIG", False)
    assert broker["broker.id"]["value"] == "2"
    admin.close()


def test_kafka_python_incremental_topic_configs(bg_cluster):
    admin = kafka_python(bg_cluster)
    result = admin.alter_configs([ConfigResource("TOPIC", "orders", {
        "retention.ms": "3600000", LEADER_REPLICAS: (AlterConfigOp.APPEND, "0:1,1:2")})])
    assert result == {"topic": {"orders": "OK"}}
    admin.alter_configs([ConfigResource("TOPIC", "orders", {LEADER_REPLICAS: (AlterConfigOp.APPEND, "1:2,0:3")})])
    assert stored(bg_cluster, TOPIC, "orders") == {"retention.ms": "3600000", LEADER_REPLICAS: "0:1,1:2,0:3"}
    entries = described(admin, "TOPIC", "orders")
    assert (entries["retention.ms"]["value"], entries["retention.ms"]["config_source"]) == ("3600000",
                                                                                           "DYNAMIC_TOPIC_CONFIG")
    assert synonyms(entries["retention.ms"]) == [("retention.ms", "3600000", "DYNAMIC_TOPIC_CONFIG")]
    assert entries[LEADER_REPLICAS]["value"] == "0:1,1:2,0:3"
    # Deleting goes back to the default; reset_configs sends DELETE operations.
    admin.alter_configs([ConfigResource("TOPIC", "orders", {LEADER_REPLICAS: (AlterConfigOp.SUBTRACT, "0:1")})])
    assert admin.reset_configs([ConfigResource("TOPIC", "orders", ["retention.ms"])]) == {"topic": {"orders": "OK"}}
    assert stored(bg_cluster, TOPIC, "orders") == {LEADER_REPLICAS: "1:2,0:3"}
    entries = described(admin, "TOPIC", "orders")
    assert (entries["retention.ms"]["value"], entries["retention.ms"]["config_source"]) == ("604800000",
                                                                                           "DEFAULT_CONFIG")
    admin.close()


def test_kafka_python_broker_configs(bg_cluster):
    admin = kafka_python(bg_cluster)
    for broker in ("2", "3"):  # each goes to its own broker
        assert admin.alter_configs([ConfigResource("BROKER", broker, {LEADER_RATE: "1048576"})]) == {
            "broker": {broker: "OK"}}
    assert stored(bg_cluster, BROKER, "2") == stored(bg_cluster, BROKER, "3") == {LEADER_RATE: "1048576"}
    rate = described(admin, "BROKER", "3")[LEADER_RATE]
    assert (rate["value"], rate["config_source"]) == ("1048576", "DYNAMIC_BROKER_CONFIG")
    assert synonyms(rate) == [(LEADER_RATE, "1048576", "DYNAMIC_BROKER_CONFIG")]
    admin.reset_configs([ConfigResource("BROKER", "3", [LEADER_RATE])])
    assert stored(bg_cluster, BROKER, "3") == {}
    assert described(admin, "BROKER", "3")[LEADER_RATE]["config_source"] == "DEFAULT_CONFIG"
    admin.close()


def test_kafka_python_legacy_alter_configs(bg_cluster):
    admin = kafka_python(bg_cluster)
    assert admin.alter_configs([ConfigResource("TOPIC", "orders", {"retention.ms": "1000"})], incremental=False) == {
        "topic": {"orders": "OK"}}
    # kafka-python carries the other set keys over, since the legacy request replaces the whole set.
    admin.alter_configs([ConfigResource("TOPIC", "orders", {"segment.ms": "70000"})], incremental=False)
    assert stored(bg_cluster, TOPIC, "orders") == {"retention.ms": "1000", "segment.ms": "70000"}
    assert admin.alter_configs([ConfigResource("BROKER", "1", {FOLLOWER_RATE: "500"})], incremental=False) == {
        "broker": {"1": "OK"}}
    rate = described(admin, "BROKER", "1")[FOLLOWER_RATE]
    assert (rate["value"], rate["config_source"]) == ("500", "DYNAMIC_BROKER_CONFIG")
    admin.close()


def test_kafka_python_error_codes(bg_cluster):
    admin = kafka_python(bg_cluster)

    def outcome(*resources, **kwargs):
        [(_, by_name)] = admin.alter_configs(list(resources), raise_on_unknown=False, **kwargs).items()
        [(_, text)] = by_name.items()
        return text

    assert outcome(ConfigResource("TOPIC", "orders", {"retention.ms": "soon"})) == (
        "[Error 40] InvalidConfigurationError: Invalid value soon for configuration retention.ms: "
        "Not a number of type LONG")
    assert outcome(ConfigResource("TOPIC", "orders", {"retention.ms": (AlterConfigOp.APPEND, "5")})) == (
        "[Error 40] InvalidConfigurationError: Can't APPEND to key retention.ms because its type is not LIST.")
    assert outcome(ConfigResource("BROKER", "2", {LEADER_RATE: "-1"})) == (
        f"[Error 42] InvalidRequestError: Invalid value -1 for configuration {LEADER_RATE}: Value must be at least 0")
    assert outcome(ConfigResource("BROKER", "2", {LEADER_RATE: "fast"}), incremental=False) == (
        f"[Error 42] InvalidRequestError: Invalid value fast for configuration {LEADER_RATE}: "
        "Not a number of type LONG")
    assert outcome(ConfigResource("TOPIC", "missing", {"retention.ms": "5"})) == (
        "[Error 3] UnknownTopicOrPartitionError: The topic 'missing' does not exist.")
    assert outcome(ConfigResource("TOPIC", "orders", {"retention.ms": "5"}),
                   ConfigResource("TOPIC", "orders", {"segment.ms": "70000"})) == (
        "[Error 42] InvalidRequestError: Each resource must appear at most once.")
    assert stored(bg_cluster, TOPIC, "orders") == stored(bg_cluster, BROKER, "2") == {}
    admin.close()


def kafka_python_cli(bg, *args) -> str:
    done = subprocess.run(["kafka-python", "admin", "-b", bg.bootstrap, "--format", "json", "configs", *args],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_kafka_python_cli_configs_commands(bg_cluster):
    kafka_python(bg_cluster).close()
    assert json.loads(kafka_python_cli(bg_cluster, "alter", "-r", "topic", "-n", "orders", "-c", "retention.ms=1000",
                                       "-c", f"{LEADER_REPLICAS}=add(0:1)")) == {"topic": {"orders": "OK"}}
    assert json.loads(kafka_python_cli(bg_cluster, "alter", "-r", "broker", "-n", "2", "-c",
                                       f"{LEADER_RATE}=2048")) == {"broker": {"2": "OK"}}
    topic = json.loads(kafka_python_cli(bg_cluster, "describe", "-r", "topic", "-n", "orders", "-c", "retention.ms",
                                        "-c", LEADER_REPLICAS))["topic"]["orders"]
    assert {key: (entry["value"], entry["config_source"]) for key, entry in topic.items()} == {
        "retention.ms": ("1000", "DYNAMIC_TOPIC_CONFIG"), LEADER_REPLICAS: ("0:1", "DYNAMIC_TOPIC_CONFIG")}
    broker = json.loads(kafka_python_cli(bg_cluster, "describe", "-r", "broker", "-n", "2", "--modified"))
    assert {key: entry["value"] for key, entry in broker["broker"]["2"].items()} == {LEADER_RATE: "2048"}
    assert json.loads(kafka_python_cli(bg_cluster, "reset", "-r", "topic", "-n", "orders", "-c", "retention.ms")) == {
        "topic": {"orders": "OK"}}
    assert stored(bg_cluster, TOPIC, "orders") == {LEADER_REPLICAS: "0:1"}
    refused = json.loads(kafka_python_cli(bg_cluster, "alter", "-r", "topic", "-n", "orders", "-c",
                                          "min.insync.replicas=0"))
    assert refused["topic"]["orders"].startswith("[Error 40] InvalidConfigurationError: Invalid value 0")


# ---- confluent-kafka -----------------------------------------------------------------------------------

def confluent(bg) -> AdminClient:
    admin = AdminClient({"bootstrap.servers": bg.bootstrap, "client.id": "configs-test"})
    admin.create_topics([CkNewTopic("orders", 2, 2)])["orders"].result(30)
    return admin


def ck_alter(admin, resource_type, name, *changes, validate_only=False):
    resource = CkResource(resource_type, name, incremental_configs=[
        ConfigEntry(key, value, incremental_operation=op) for key, op, value in changes])
    return admin.incremental_alter_configs([resource], validate_only=validate_only)[resource].result(30)


def ck_describe(admin, resource_type, name) -> dict:
    resource = CkResource(resource_type, name)
    return admin.describe_configs([resource])[resource].result(30)


def ck_error(future) -> tuple[int, str]:
    with pytest.raises(KafkaException) as raised:
        future.result(30)
    return raised.value.args[0].code(), raised.value.args[0].str()


def test_confluent_kafka_topic_configs(bg_cluster):
    admin = confluent(bg_cluster)
    ck_alter(admin, ResourceType.TOPIC, "orders", ("retention.ms", AlterConfigOpType.SET, "7200000"),
             (FOLLOWER_REPLICAS, AlterConfigOpType.APPEND, "0:3,1:3"))
    ck_alter(admin, ResourceType.TOPIC, "orders", (FOLLOWER_REPLICAS, AlterConfigOpType.SUBTRACT, "0:3"))
    ck_alter(admin, ResourceType.TOPIC, "orders", ("segment.ms", AlterConfigOpType.SET, "1"), validate_only=True)
    assert stored(bg_cluster, TOPIC, "orders") == {"retention.ms": "7200000", FOLLOWER_REPLICAS: "1:3"}
    entries = ck_describe(admin, ResourceType.TOPIC, "orders")
    retention = entries["retention.ms"]
    assert (retention.value, retention.source, retention.is_default) == ("7200000", DYNAMIC_TOPIC, False)
    assert [(s.name, s.value, s.source) for s in retention.synonyms.values()] == [
        ("retention.ms", "7200000", DYNAMIC_TOPIC)]
    assert (entries[LEADER_REPLICAS].value, entries[LEADER_REPLICAS].source) == ("", DEFAULT)
    ck_alter(admin, ResourceType.TOPIC, "orders", ("retention.ms", AlterConfigOpType.DELETE, None))
    assert ck_describe(admin, ResourceType.TOPIC, "orders")["retention.ms"].source == DEFAULT
    # The deprecated legacy call replaces the whole set.
    resource = CkResource(ResourceType.TOPIC, "orders", set_config={"segment.ms": "70000"})
    with pytest.warns(DeprecationWarning):
        assert admin.alter_configs([resource])[resource].result(30) is None
    assert stored(bg_cluster, TOPIC, "orders") == {"segment.ms": "70000"}


def test_confluent_kafka_broker_configs(bg_cluster):
    admin = confluent(bg_cluster)
    ck_alter(admin, ResourceType.BROKER, "1", (LEADER_RATE, AlterConfigOpType.SET, "4096"),
             (FOLLOWER_RATE, AlterConfigOpType.SET, "8192"))
    assert stored(bg_cluster, BROKER, "1") == {LEADER_RATE: "4096", FOLLOWER_RATE: "8192"}
    rate = ck_describe(admin, ResourceType.BROKER, "1")[LEADER_RATE]
    assert (rate.value, rate.source, rate.is_read_only) == ("4096", DYNAMIC_BROKER, False)
    assert [(s.name, s.value, s.source) for s in rate.synonyms.values()] == [(LEADER_RATE, "4096", DYNAMIC_BROKER)]
    assert ck_describe(admin, ResourceType.BROKER, "2")[LEADER_RATE].source == DEFAULT
    ck_alter(admin, ResourceType.BROKER, "1", (LEADER_RATE, AlterConfigOpType.DELETE, None))
    assert stored(bg_cluster, BROKER, "1") == {FOLLOWER_RATE: "8192"}


def test_confluent_kafka_error_codes(bg_cluster):
    admin = confluent(bg_cluster)

    def refused(resource_type, name, *changes):
        resource = CkResource(resource_type, name, incremental_configs=[
            ConfigEntry(key, value, incremental_operation=op) for key, op, value in changes])
        return ck_error(admin.incremental_alter_configs([resource])[resource])

    assert refused(ResourceType.TOPIC, "orders", ("cleanup.policy", AlterConfigOpType.SET, "shred")) == (
        40, "Invalid value shred for configuration cleanup.policy: String must be one of: compact, delete")
    assert refused(ResourceType.TOPIC, "orders", ("retention.ms", AlterConfigOpType.SUBTRACT, "1")) == (
        40, "Can't SUBTRACT to key retention.ms because its type is not LIST.")
    assert refused(ResourceType.BROKER, "3", (FOLLOWER_RATE, AlterConfigOpType.SET, "1.5")) == (
        42, f"Invalid value 1.5 for configuration {FOLLOWER_RATE}: Not a number of type LONG")
    assert refused(ResourceType.TOPIC, "missing", ("retention.ms", AlterConfigOpType.SET, "1")) == (
        3, "The topic 'missing' does not exist.")
    missing = CkResource(ResourceType.TOPIC, "missing")
    assert ck_error(admin.describe_configs([missing])[missing])[0] == 3


# ---- aiokafka ------------------------------------------------------------------------------------------

async def aiokafka_admin(bg) -> AIOKafkaAdminClient:
    admin = AIOKafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="configs-test")
    await admin.start()
    await admin.create_topics([AioNewTopic("orders", 2, 2)])
    return admin


def aio_entries(response) -> dict:
    [resource] = response.resources
    assert resource[0] == 0, resource
    return {entry[0]: entry for entry in resource[4]}


async def test_aiokafka_describe_and_legacy_alter(bg_cluster):
    admin = await aiokafka_admin(bg_cluster)
    try:
        [topic_answer] = await admin.alter_configs([AioResource(AioType.TOPIC, "orders", {"retention.ms": "1000",
                                                                                       "segment.ms": "70000"})])
        assert [tuple(r) for r in topic_answer.resources] == [(0, None, TOPIC, "orders")]
        # The legacy request replaces the whole set: segment.ms goes.
        await admin.alter_configs([AioResource(AioType.TOPIC, "orders", {"retention.ms": "2000"})])
        assert stored(bg_cluster, TOPIC, "orders") == {"retention.ms": "2000"}
        await admin.alter_configs([AioResource(AioType.BROKER, "2", {LEADER_RATE: "50", FOLLOWER_RATE: "200"})])
        await admin.alter_configs([AioResource(AioType.BROKER, "2", {LEADER_RATE: "100"})])
        assert stored(bg_cluster, BROKER, "2") == {LEADER_RATE: "100"}
        answers = await admin.describe_configs([AioResource(AioType.TOPIC, "orders", {"retention.ms": None}),
                                                AioResource(AioType.BROKER, "2", {LEADER_RATE: None})],
                                               include_synonyms=True)
        by_type = {response.resources[0][2]: aio_entries(response) for response in answers}
        # (name, value, read_only, source, sensitive, synonyms)
        assert tuple(by_type[TOPIC]["retention.ms"][1:4]) == ("2000", False, DYNAMIC_TOPIC)
        assert [tuple(s) for s in by_type[TOPIC]["retention.ms"][5]] == [("retention.ms", "2000", DYNAMIC_TOPIC)]
        assert tuple(by_type[BROKER][LEADER_RATE][1:4]) == ("100", False, DYNAMIC_BROKER)
        [duplicated] = await admin.alter_configs([AioResource(AioType.TOPIC, "orders", {"retention.ms": "5"}),
                                                 AioResource(AioType.TOPIC, "orders", {"retention.ms": "6"})])
        assert [tuple(r) for r in duplicated.resources] == [
            (42, "Each resource must appear at most once.", TOPIC, "orders")] * 2
    finally:
        await admin.close()


async def test_aiokafka_client_broker_routing_and_cluster_default(bg_cluster):
    """Broker resources sent to the wrong broker are refused; the cluster default goes through any."""
    client = AIOKafkaClient(bootstrap_servers=bg_cluster.bootstrap)
    await client.bootstrap()
    try:
        wrong = await client.send(1, AlterConfigsRequest([(BROKER, "2", [(LEADER_RATE, "5")])]))
        assert [tuple(r) for r in wrong.resources] == [
            (42, "Unexpected broker id, expected 1, but received 2", BROKER, "2")]
        # the legacy request replaces the cluster default's configs: it keeps the min.insync.replicas that
        # eligible leader replicas (on at the default metadata.version) need there
        default = await client.send(3, AlterConfigsRequest([(BROKER, "", [(LEADER_RATE, "300"),
                                                                          (MIN_ISR, "1")])]))
        assert [tuple(r) for r in default.resources] == [(0, None, BROKER, "")]
        assert stored(bg_cluster, BROKER, "") == {LEADER_RATE: "300", MIN_ISR: "1"}
        described = await client.send(1, DescribeConfigsRequest([(BROKER, "1", [LEADER_RATE]), (BROKER, "", None)],
                                                                include_synonyms=True))
        [own, cluster] = described.resources
        [rate] = own[4]
        assert tuple(rate[1:4]) == ("300", False, DYNAMIC_DEFAULT)
        assert [tuple(s) for s in rate[5]] == [(LEADER_RATE, "300", DYNAMIC_DEFAULT)]
        # in catalogue order: Kafka's broker configs, then the quota keys it defines apart
        assert [tuple(entry[:4]) for entry in cluster[4]] == [(MIN_ISR, "1", False, DYNAMIC_DEFAULT),
                                                              (LEADER_RATE, "300", False, DYNAMIC_DEFAULT)]
        other = await client.send(1, DescribeConfigsRequest([(BROKER, "3", None)]))
        assert tuple(other.resources[0][:2]) == (42, "Unexpected broker id, expected 1 or empty string, "
                                                     "but received 3")
    finally:
        await client.close()


# ---- The request as brokers and the controller see it ----------------------------------------------------

def test_one_request_mixing_topics_and_brokers(bg_cluster):
    """Broker 1 answers what it refuses, forwards the rest and answers everything in request order."""
    kafka_python(bg_cluster).close()
    Resource = messages.IncrementalAlterConfigsRequest.AlterConfigsResource
    Config = messages.IncrementalAlterConfigsRequest.AlterableConfig
    broker = bg_cluster.cluster.broker(1)
    request = messages.IncrementalAlterConfigsRequest(resources=[
        Resource(resource_type=TOPIC, resource_name="orders",
                 configs=[Config(name=LEADER_REPLICAS, config_operation=0, value="*")]),
        Resource(resource_type=BROKER, resource_name="2", configs=[Config(name=LEADER_RATE, config_operation=0,
                                                                          value="1")]),
        Resource(resource_type=BROKER, resource_name="1", configs=[Config(name=LEADER_RATE, config_operation=0,
                                                                          value="10")]),
        Resource(resource_type=TOPIC, resource_name="missing", configs=[]),
        Resource(resource_type=BROKER, resource_name="", configs=[Config(name=FOLLOWER_RATE, config_operation=0,
                                                                         value="20")])])

    async def send(host, port, sent=request):
        client = KafkaClient(host, port, "configs-test")
        try:
            return await client.send(sent)
        finally:
            await client.close()

    response = bg_cluster.run(send(broker.host, broker.port))
    assert [(r.resource_type, r.resource_name, r.error_code, r.error_message) for r in response.responses] == [
        (TOPIC, "orders", 0, None),
        (BROKER, "2", 42, "Unexpected broker id, expected 1, but received 2"),
        (BROKER, "1", 0, None),
        (TOPIC, "missing", 3, "The topic 'missing' does not exist."),
        (BROKER, "", 0, None)]
    assert stored(bg_cluster, TOPIC, "orders") == {LEADER_REPLICAS: "*"}
    assert stored(bg_cluster, BROKER, "1") == {LEADER_RATE: "10"}
    assert stored(bg_cluster, BROKER, "") == {FOLLOWER_RATE: "20", MIN_ISR: "1"}  # the latter from the first start
    assert stored(bg_cluster, BROKER, "2") == {}
    # Sent straight to the controller, the broker resource of broker 2 is accepted.
    node = bg_cluster.cluster.controller_node
    response = bg_cluster.run(send(node.host, node.port))
    assert [r.error_code for r in response.responses] == [0, 0, 0, 3, 0]
    assert stored(bg_cluster, BROKER, "2") == {LEADER_RATE: "1"}
    # The controller describes configs too, answering for its own node id.
    Described = messages.DescribeConfigsRequest.DescribeConfigsResource
    described = bg_cluster.run(send(node.host, node.port, messages.DescribeConfigsRequest(resources=[
        Described(resource_type=TOPIC, resource_name="orders", configuration_keys=[LEADER_REPLICAS]),
        Described(resource_type=BROKER, resource_name="2", configuration_keys=None),
        Described(resource_type=BROKER, resource_name=str(node.node_id), configuration_keys=["broker.id"])])))
    topic, other, own = described.results
    assert [(c.name, c.value, c.config_source) for c in topic.configs] == [(LEADER_REPLICAS, "*", DYNAMIC_TOPIC)]
    assert (other.error_code, other.error_message) == (
        42, f"Unexpected broker id, expected {node.node_id} or empty string, but received 2")
    assert [(c.name, c.value) for c in own.configs] == [("broker.id", str(node.node_id))]
