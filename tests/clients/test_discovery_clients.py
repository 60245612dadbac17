"""Cluster discovery as real clients see it: kafka-python, confluent-kafka, aiokafka and kcat.

Each client must report the cluster's actual id, its brokers (ids, hosts, ports) and a controller id that
is a live broker; topics it lists or describes must match the committed image. ApiVersions must report
exactly the schemas' validVersions, the same on every broker.
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import uuid

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from confluent_kafka.admin import AdminClient
from kafka import KafkaAdminClient

from kraftwire import codec
from kraftwire.codec import records as rec
from kraftwire.codec.messages import ApiVersionsRequest
from kraftwire.server import apis
from kraftwire.server.controller.result import ControllerResult
from kraftwire.server.wire.client import KafkaClient
from kraftwire.server.wire.transport import ADVERTISED_FROM
from kraftwire.server.metadata.record_versions import DEFAULT_METADATA_VERSION, METADATA_VERSIONS, bootstrap_records

TOPICS = {"alpha": 3, "beta": 1}  # name -> partitions, replication factor 2


@pytest.fixture
def bg_cluster(kraftwire_clean_cluster):
    """The run's shared 3-broker cluster, reset before each test (the plugin's ``kraftwire_clean_cluster``):
    as fresh as one started for the test, without the start."""
    return kraftwire_clean_cluster


def seed_topics(bg) -> None:
    """Create TOPICS through the controller's write path (records committed, then applied)."""
    def decide(image):
        records = []
        for name, partitions in TOPICS.items():
            topic_id = uuid.uuid4()
            records.append(rec.TopicRecord(name=name, topic_id=topic_id))
            for index in range(partitions):
                replicas = [(index + k) % 3 + 1 for k in range(2)]
                records.append(rec.PartitionRecord(partition_id=index, topic_id=topic_id, replicas=replicas,
                                                   isr=replicas, leader=replicas[0], leader_epoch=0,
                                                   partition_epoch=0))
        return ControllerResult(records)
    bg.run(bg.cluster.write(decide))


def expected_brokers(bg) -> dict[int, tuple[str, int]]:
    return bg.call(lambda: {b.broker_id: (b.host, b.port) for b in bg.cluster.brokers})


def assert_live_controller(bg, controller_id: int) -> None:
    brokers = bg.call(lambda: dict(bg.cluster.controller.committed.brokers))
    assert controller_id in brokers and not brokers[controller_id].fenced


def cluster_id(bg) -> str:
    return bg.call(lambda: bg.cluster.controller.cluster_id)


def test_kafka_python_admin(bg_cluster):
    seed_topics(bg_cluster)
    admin = KafkaAdminClient(bootstrap_servers=bg_cluster.bootstrap, client_id="discovery-test")
    try:
        described = admin.describe_cluster()
        assert described["cluster_id"] == cluster_id(bg_cluster)
        assert {b["broker_id"]: (b["host"], b["port"]) for b in described["brokers"]} == expected_brokers(bg_cluster)
        assert all(b["rack"] is None and not b["is_fenced"] for b in described["brokers"])
        assert_live_controller(bg_cluster, described["controller_id"])

        assert sorted(admin.list_topics()) == sorted(TOPICS)

        image = bg_cluster.call(lambda: bg_cluster.cluster.controller.committed)
        [alpha] = admin.describe_topics(["alpha"])
        topic = image.topic("alpha")
        assert alpha["error_code"] == 0 and alpha["topic_id"] == str(topic.topic_id)
        assert [(p["partition_index"], p["leader_id"], p["replica_nodes"], p["isr_nodes"]) for p in alpha["partitions"]] \
            == [(i, s.leader, list(s.replicas), list(s.isr)) for i, s in sorted(topic.partitions.items())]
        assert {t["name"] for t in admin.describe_topics()} == set(TOPICS)
    finally:
        admin.close()


def test_confluent_kafka_admin(bg_cluster):
    seed_topics(bg_cluster)
    admin = AdminClient({"bootstrap.servers": bg_cluster.bootstrap, "client.id": "discovery-test"})
    metadata = admin.list_topics(timeout=10)
    assert metadata.cluster_id == cluster_id(bg_cluster)
    assert {i: (b.host, b.port) for i, b in metadata.brokers.items()} == expected_brokers(bg_cluster)
    assert_live_controller(bg_cluster, metadata.controller_id)
    assert {name: len(t.partitions) for name, t in metadata.topics.items()} == TOPICS
    assert metadata.topics["alpha"].partitions[1].replicas == [2, 3]

    described = admin.describe_cluster(request_timeout=10).result(timeout=10)
    assert described.cluster_id == cluster_id(bg_cluster)
    assert {n.id: (n.host, n.port) for n in described.nodes} == expected_brokers(bg_cluster)
    assert_live_controller(bg_cluster, described.controller.id)


async def test_aiokafka_admin(bg_cluster):
    admin = AIOKafkaAdminClient(bootstrap_servers=bg_cluster.bootstrap, client_id="discovery-test")
    await admin.start()
    try:
        described = await admin.describe_cluster()
    finally:
        await admin.close()
    assert described["cluster_id"] == cluster_id(bg_cluster)
    assert {b["node_id"]: (b["host"], b["port"]) for b in described["brokers"]} == expected_brokers(bg_cluster)
    assert_live_controller(bg_cluster, described["controller_id"])


def test_kcat_metadata_listing(bg_cluster):
    if shutil.which("kcat") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("kcat is not installed (tests/setup.sh installs it)")
        pytest.skip("kcat is not installed (tests/setup.sh installs it)")
    seed_topics(bg_cluster)
    result = subprocess.run(["kcat", "-L", "-J", "-b", bg_cluster.bootstrap], capture_output=True, text=True,
                            timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    listing = json.loads(result.stdout)
    # kcat's JSON carries no cluster id; it names brokers "host:port".
    assert {b["id"]: b["name"] for b in listing["brokers"]} == \
        {i: f"{host}:{port}" for i, (host, port) in expected_brokers(bg_cluster).items()}
    assert_live_controller(bg_cluster, listing["controllerid"])
    assert {t["topic"]: len(t["partitions"]) for t in listing["topics"]} == TOPICS


async def api_versions(host, port):
    client = KafkaClient(host, port, "discovery-test")
    try:
        answer = await client.send(ApiVersionsRequest(client_software_name="test", client_software_version="1"))
    finally:
        await client.close()
    assert answer.error_code == 0
    return answer


def test_api_versions_match_the_schemas_on_every_broker(bg_cluster):
    async def ranges(host, port):
        return {k.api_key: (k.min_version, k.max_version) for k in (await api_versions(host, port)).api_keys}

    # each schema's range, but for Produce, advertised from v0 as Kafka's brokers do (KAFKA-18659)
    expected = {key: (min(codec.api(key)[0].VALID_VERSIONS.low, ADVERTISED_FROM.get(key, 99)),
                      codec.api(key)[0].VALID_VERSIONS.high)
                for key in apis.BROKER_APIS}
    seen = {broker_id: bg_cluster.run(ranges(host, port))
            for broker_id, (host, port) in expected_brokers(bg_cluster).items()}
    assert all(ranges_ == expected for ranges_ in seen.values()), seen

    # kafka-python's own view of each broker agrees.
    admin = KafkaAdminClient(bootstrap_servers=bg_cluster.bootstrap, client_id="discovery-test")
    try:
        for broker_id in seen:
            versions = admin.get_broker_version_data(broker_id).api_versions
            assert {int(k): v for k, v in versions.items()} == expected
    finally:
        admin.close()


def test_api_versions_finalized_features_follow_the_image(bg_cluster):
    """The answer is cached per image version: a commit must show in the next one."""
    host, port = expected_brokers(bg_cluster)[1]
    before = bg_cluster.run(api_versions(host, port))
    assert before.finalized_features_epoch == bg_cluster.call(lambda: bg_cluster.cluster.controller.committed.offset)
    bootstrapped = bootstrap_records(METADATA_VERSIONS[DEFAULT_METADATA_VERSION])
    assert [(f.name, f.min_version_level) for f in before.finalized_features] == [
        (r.name, r.feature_level) for r in bootstrapped if type(r) is rec.FeatureLevelRecord] + [("kraft.version", 1)]
    seed_topics(bg_cluster)
    after = bg_cluster.run(api_versions(host, port))
    assert after.finalized_features_epoch == bg_cluster.call(lambda: bg_cluster.cluster.controller.committed.offset)
    assert after.finalized_features_epoch > before.finalized_features_epoch


def test_api_versions_v5_checks_the_cluster_and_node_it_names(bg_cluster):
    """KIP-1242: a v5 request naming another cluster or node is told to rebootstrap."""
    broker = bg_cluster.cluster.broker(2)
    cluster_id = bg_cluster.call(lambda: broker.cluster_id)

    async def ask(**named):
        client = KafkaClient(broker.host, broker.port, "rebootstrap-test")
        try:
            return await client.send(ApiVersionsRequest(client_software_name="test", client_software_version="1",
                                                        **named), 5)
        finally:
            await client.close()

    for named in ({}, {"cluster_id": cluster_id, "node_id": 2}):
        answer = bg_cluster.run(ask(**named))
        assert answer.error_code == 0 and answer.api_keys, named
    for named in ({"cluster_id": cluster_id, "node_id": 1}, {"cluster_id": "another-cluster", "node_id": 2}):
        answer = bg_cluster.run(ask(**named))
        assert (answer.error_code, answer.api_keys) == (129, ()), named
