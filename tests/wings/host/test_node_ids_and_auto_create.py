"""Broker node ids and ``auto.create.topics.enable``, through kafka-python over TCP: ``kraftwire serve
--node-ids 0 --auto-create-topics --num-partitions 2 --default-replication-factor 2`` numbers its
brokers as a stock Kafka test cluster does and creates the topics a producer asks about; a cluster
started without it creates none, and a request that disallows creation creates none either."""
from __future__ import annotations

import time

import confluent_kafka
import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import ConfigResource, NewTopic
from kafka.errors import KafkaError

from served import Served

UNKNOWN_TOPIC_OR_PARTITION, INVALID_TOPIC_EXCEPTION = 3, 17


def wait_for_topic(admin, name: str, timeout: float = 20.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        [described] = admin.describe_topics([name])
        if described["error_code"] == 0:
            return described
        assert time.monotonic() < deadline, f"topic {name} was not created: {described}"
        time.sleep(0.05)


def producer_for(bootstrap: str, **options) -> KafkaProducer:
    """A producer used only for its metadata requests."""
    return KafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=False, **options)


def partitions_or_none(producer, topic: str):
    try:
        return producer.partitions_for(topic)
    except KafkaError:  # kafka-python gives up on a topic it cannot find: a timeout or unknown topic
        return None


def startup_configs(admin, broker: str) -> dict:
    names = ["auto.create.topics.enable", "num.partitions", "default.replication.factor", "node.id"]
    found = admin.describe_configs([ConfigResource("BROKER", broker, names)], config_filter="all")
    return {name: (entry["value"], entry["config_source"]) for name, entry in found["broker"][broker].items()}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    server = Served(tmp_path_factory.mktemp("auto-create"), "--brokers", "3", "--port", "0", "--controller-port", "0",
                    "--node-ids", "0", "--auto-create-topics", "--num-partitions", "2",
                    "--default-replication-factor", "2")
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap, client_id="auto-create-test")
    yield server, admin
    admin.close()
    server.stop()


def test_node_ids_start_where_asked(served):
    _, admin = served
    assert sorted(broker["broker_id"] for broker in admin.describe_cluster()["brokers"]) == [0, 1, 2]
    static = "STATIC_BROKER_CONFIG"
    assert startup_configs(admin, "0") == {"auto.create.topics.enable": ("true", static), "num.partitions": ("2", static),
                                           "default.replication.factor": ("2", static), "node.id": ("0", static)}


def test_a_producer_asking_about_a_missing_topic_creates_it(served):
    server, admin = served
    producer = producer_for(server.bootstrap, max_block_ms=20000)
    try:
        assert producer.partitions_for("made-by-metadata") == {0, 1}
    finally:
        producer.close()
    created = wait_for_topic(admin, "made-by-metadata")
    assert sorted(len(p["replica_nodes"]) for p in created["partitions"]) == [2, 2]


def test_requests_that_disallow_creation_create_nothing(served):
    server, admin = served
    [described] = admin.describe_topics(["admin-only-looks"])  # kafka-python's admin sends AllowAutoTopicCreation false
    assert described["error_code"] == UNKNOWN_TOPIC_OR_PARTITION
    # kafka-python 3.0.12 always allows creation in its Metadata requests; librdkafka follows its setting.
    unwilling = confluent_kafka.Producer({"bootstrap.servers": server.bootstrap, "allow.auto.create.topics": False})
    assert unwilling.list_topics("producer-only-looks", timeout=10).topics["producer-only-looks"].error.code() == (
        confluent_kafka.KafkaError.UNKNOWN_TOPIC_OR_PART)
    # A creation that was asked for afterwards has finished, so these would have been by now.
    producer = producer_for(server.bootstrap, max_block_ms=20000)
    try:
        assert producer.partitions_for("asked-for-later") == {0, 1}
    finally:
        producer.close()
    wait_for_topic(admin, "asked-for-later")
    assert [t["error_code"] for t in admin.describe_topics(["admin-only-looks", "producer-only-looks"])] == [
        UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_OR_PARTITION]


def test_an_illegal_name_is_refused_not_created(served):
    server, admin = served
    willing = confluent_kafka.Producer({"bootstrap.servers": server.bootstrap, "allow.auto.create.topics": True})
    error = willing.list_topics("bad/name", timeout=10).topics["bad/name"].error
    assert error.code() == confluent_kafka.KafkaError.TOPIC_EXCEPTION
    assert admin.describe_topics(["bad/name"])[0]["error_code"] == INVALID_TOPIC_EXCEPTION


def test_create_topics_defaults_follow_the_startup_configs(served):
    _, admin = served
    admin.create_topics([NewTopic("by-default", -1, -1)])
    created = wait_for_topic(admin, "by-default")
    assert [len(p["replica_nodes"]) for p in created["partitions"]] == [2, 2]


def test_a_cluster_started_without_it_creates_nothing(bg_cluster):
    admin = KafkaAdminClient(bootstrap_servers=bg_cluster.bootstrap, client_id="no-auto-create-test")
    producer = producer_for(bg_cluster.bootstrap, max_block_ms=1500)
    try:
        assert startup_configs(admin, "1")["auto.create.topics.enable"] == ("false", "STATIC_BROKER_CONFIG")
        assert not partitions_or_none(producer, "never-made")
        assert admin.describe_topics(["never-made"])[0]["error_code"] == UNKNOWN_TOPIC_OR_PARTITION
        assert sorted(b["broker_id"] for b in admin.describe_cluster()["brokers"]) == [1, 2, 3]
    finally:
        producer.close()
        admin.close()
