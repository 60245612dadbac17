"""DescribeTopicPartitions (75) and ListConfigResources (74) through kafka-python 3.0.12 over TCP:
``describe_topic_partitions`` and ``kafka-python admin partitions describe``, paging with the cursor and
the response limit; ``list_config_resources`` and ``kafka-python admin configs list``."""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import uuid

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic
from kafka.errors import UnsupportedVersionError

from kraftwire.codec import records as rec
from kraftwire.server.host.cluster import BackgroundCluster
from tests.raft_helpers import open_log

KAFKA_PYTHON = shutil.which("kafka-python", path=os.path.dirname(sys.executable)) or shutil.which("kafka-python")
LAYOUT = {"alpha": 3, "beta": 2, "gamma": 1}
ALL_TOPIC_OPERATIONS = 3576  # READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS
UNKNOWN_TOPIC_OR_PARTITION, INVALID_TOPIC_EXCEPTION, INVALID_REQUEST = 3, 17, 42


@pytest.fixture(scope="module")
def cluster():
    with BackgroundCluster(brokers=3) as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="describe-partitions-test")
        admin.create_topics([NewTopic(name, count, 2) for name, count in LAYOUT.items()])
        yield bg, admin
        admin.close()


def pages(admin, topics, limit):
    """Every page of a listing, following the cursor: [(topic, [partition indexes]) per page]."""
    cursor, found = None, []
    while True:
        page = admin.describe_topic_partitions(topics, response_partition_limit=limit, cursor=cursor)
        found.append([(t["name"], [p["partition_index"] for p in t["partitions"]]) for t in page["topics"]])
        cursor = page["next_cursor"]
        if cursor is None:
            return found


def test_all_topics_page_by_page(cluster):
    _, admin = cluster
    assert pages(admin, [], 2) == [[("alpha", [0, 1])], [("alpha", [2]), ("beta", [0])],
                                   [("beta", [1]), ("gamma", [0])]]
    # A page that ends exactly at a topic's end points at the next topic's partition 0.
    first = admin.describe_topic_partitions([], response_partition_limit=3)
    assert [t["name"] for t in first["topics"]] == ["alpha"]
    assert first["next_cursor"] == {"topic_name": "beta", "partition_index": 0}
    # Limits below 1 count as 1; the default fits everything.
    assert pages(admin, ["gamma", "alpha"], 0) == [[("alpha", [0])], [("alpha", [1])], [("alpha", [2])],
                                                   [("gamma", [0])]]
    assert pages(admin, [], 2000) == [[("alpha", [0, 1, 2]), ("beta", [0, 1]), ("gamma", [0])]]


def test_partitions_agree_with_metadata(cluster):
    _, admin = cluster
    described = {t["name"]: t for t in admin.describe_topics(list(LAYOUT))}
    page = admin.describe_topic_partitions(list(LAYOUT))
    assert page["next_cursor"] is None
    for topic in page["topics"]:
        expected = described[topic["name"]]
        assert (topic["error_code"], str(topic["topic_id"]), topic["is_internal"]) == (0, str(expected["topic_id"]), False)
        assert topic["topic_authorized_operations"] == ALL_TOPIC_OPERATIONS
        by_index = {p["partition_index"]: p for p in expected["partitions"]}
        for partition in topic["partitions"]:
            metadata = by_index[partition["partition_index"]]
            for field in ("leader_id", "leader_epoch", "replica_nodes", "isr_nodes", "offline_replicas"):
                assert partition[field] == metadata[field], field
            assert len(partition["replica_nodes"]) == 2 and partition["leader_id"] in partition["isr_nodes"]
            assert partition["eligible_leader_replicas"] is None and partition["last_known_elr"] is None


def test_missing_and_illegal_topics_and_a_bad_cursor(cluster):
    _, admin = cluster
    page = admin.describe_topic_partitions(["beta", "no-such-topic", "bad/name"], response_partition_limit=1)
    assert [(t["name"], t["error_code"], len(t["partitions"])) for t in page["topics"]] == [
        ("bad/name", INVALID_TOPIC_EXCEPTION, 0), ("beta", 0, 1)]
    assert page["next_cursor"] == {"topic_name": "beta", "partition_index": 1}
    rest = admin.describe_topic_partitions(["beta", "no-such-topic", "bad/name"], response_partition_limit=1,
                                           cursor=page["next_cursor"])
    assert [(t["name"], [p["partition_index"] for p in t["partitions"]]) for t in rest["topics"]] == [("beta", [1])]
    # The limit is used up at a topic boundary: the next page starts at the next topic, existing or not.
    assert rest["next_cursor"] == {"topic_name": "no-such-topic", "partition_index": 0}
    last = admin.describe_topic_partitions(["beta", "no-such-topic", "bad/name"], response_partition_limit=1,
                                           cursor=rest["next_cursor"])
    assert [(t["name"], t["error_code"], t["partitions"]) for t in last["topics"]] == [
        ("no-such-topic", UNKNOWN_TOPIC_OR_PARTITION, [])]
    assert last["next_cursor"] is None

    for cursor in ({"topic_name": "gamma", "partition_index": 0}, {"topic_name": "alpha", "partition_index": -1}):
        refused = admin.describe_topic_partitions(["alpha", "beta"], cursor=cursor)
        assert [(t["name"], t["error_code"], t["partitions"]) for t in refused["topics"]] == [
            ("alpha", INVALID_REQUEST, []), ("beta", INVALID_REQUEST, [])]
        assert refused["next_cursor"] is None


def test_kafka_python_command_line(cluster):
    assert KAFKA_PYTHON, "the kafka-python console script is not installed"
    bg, _ = cluster
    # --format raw: kafka-python's json output cannot print the UUIDs this command returns.
    done = subprocess.run([KAFKA_PYTHON, "admin", "-b", bg.bootstrap, "--format", "raw", "partitions", "describe",
                           "-t", "alpha", "-t", "beta", "--response-partition-limit", "2",
                           "--cursor-topic", "alpha", "--cursor-partition", "2"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    answer = eval(done.stdout, {"__builtins__": {}, "UUID": uuid.UUID})  # pprint of dicts, lists and UUIDs
    assert [(t["name"], [p["partition_index"] for p in t["partitions"]]) for t in answer["topics"]] == [
        ("alpha", [2]), ("beta", [0])]
    assert answer["next_cursor"] == {"topic_name": "beta", "partition_index": 1}


def test_list_config_resources(cluster):
    bg, admin = cluster
    brokers = [str(broker.broker_id) for broker in bg.cluster.brokers]
    assert len(brokers) == 3
    assert admin.list_config_resources() == {"broker_logger": brokers, "broker": brokers, "topic": sorted(LAYOUT)}
    assert admin.list_config_resources(["TOPIC"]) == {"topic": sorted(LAYOUT)}
    assert admin.list_config_resources(["GROUP", "CLIENT_METRICS"]) == {}
    with pytest.raises(UnsupportedVersionError):
        admin.list_config_resources(["UNKNOWN"])
    done = subprocess.run([KAFKA_PYTHON, "admin", "-b", bg.bootstrap, "--format", "json", "configs", "list",
                           "-r", "broker"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"broker": brokers}


def test_eligible_leader_replicas_a_kafka_log_holds_are_reported(tmp_path):
    """A log written at 4.1-IV0 by a Kafka cluster running with ELR: the partition's ELR and last-known
    ELR show as the log has them."""
    topic_id = uuid.UUID("3f1d2c4b-5a69-4788-99aa-bbccddeeff00")

    async def write_log():
        log, _ = await open_log(tmp_path)
        await log.append([
            (rec.FeatureLevelRecord(name="metadata.version", feature_level=26), 0),
            (rec.TopicRecord(name="with-elr", topic_id=topic_id), 0),
            (rec.PartitionRecord(partition_id=0, topic_id=topic_id, replicas=[1, 2, 3], isr=[1], leader=1,
                                 leader_epoch=3, partition_epoch=5, eligible_leader_replicas=[2],
                                 last_known_elr=[3]), 2)])[1]
        await log.close()

    asyncio.run(write_log())
    with BackgroundCluster(brokers=3, data_dir=tmp_path) as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="elr-test")
        try:
            [topic] = admin.describe_topic_partitions(["with-elr"])["topics"]
        finally:
            admin.close()
    [partition] = topic["partitions"]
    assert (partition["eligible_leader_replicas"], partition["last_known_elr"]) == ([2], [3])
    assert partition["leader_id"] == 1 and partition["replica_nodes"] == [1, 2, 3]
