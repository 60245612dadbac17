"""A twin of a real Kafka 3.7 cluster (metadata.version 3.7-IV4, feature level 19): a Kafka 3.7.2 broker
from Maven Central (tests/kafka37/pom.xml; node 1 a combined controller+broker, nodes 2-3 brokers, two
log directories each) gets topics, partitions and configs from real clients; its ``__cluster_metadata``
log is copied and served with ``kraftwire serve --from-log``. Kafka's tools and kafka-python see on the
twin what Kafka 3.7 answered (topic ids, partitions, leaders, replicas, ISRs, configs, the finalized
metadata.version and its range), a reassignment completes on it, and the records the twin writes are
at level 19's versions (PartitionChangeRecord v1, RegisterBrokerRecord v3)."""
from __future__ import annotations

import re
import shutil
import time

import pytest
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic

from apache_kafka import KAFKA37_LIB, TOPICS, KafkaCluster, run_tool
from served import Served
from tests.wings.host.test_twin import dynamic_topic_configs, rehearse

from kraftwire.codec import records as rec
from kraftwire.server.host.twin import read_source
from kraftwire.server.raft.tools import read_file, segment_paths

FEATURES = "org.apache.kafka.tools.FeatureCommand"
PLACED = "legacy-orders"  # replicas placed by hand
SPREAD = "legacy-events"  # replicas placed by Kafka 3.7, partitions added later


def described(admin: KafkaAdminClient, topics: list[str]) -> dict[str, list]:
    """Each topic's id and (partition, leader, replicas, ISR)."""
    answer = {}
    for topic in admin.describe_topics(topics):
        assert topic["error_code"] == 0, topic
        answer[topic["name"]] = [topic["topic_id"]] + sorted(
            (p["partition_index"], p["leader_id"], p["replica_nodes"], p["isr_nodes"]) for p in topic["partitions"])
    return answer


def features(bootstrap: str) -> list[str]:
    """kafka-features describe's metadata.version line: supported range and finalized level."""
    done = run_tool(FEATURES, "--bootstrap-server", bootstrap, "describe")
    assert done.returncode == 0, done.stdout + done.stderr
    return [re.sub(r"\s+Epoch: \d+", "", re.sub(r"\s+", " ", line)).strip() for line in done.stdout.splitlines()
            if "metadata.version" in line]


def topics_described(bootstrap: str, topic: str) -> list[str]:
    """kafka-topics --describe without its Elr/LastKnownElr columns: Kafka 3.7 has no
    DescribeTopicPartitions (the tool prints N/A), the twin serves Kafka 4.3.1's APIs (README, differences)."""
    done = run_tool(TOPICS, "--bootstrap-server", bootstrap, "--describe", "--topic", topic)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [re.sub(r",?kraftwire\.[a-z.]+=[0-9:,]*?(?=,[a-z]|$)", "", line) for line in done.stdout.splitlines()]
    return [re.sub(r"\tElr: .*$", "", line) for line in lines]


@pytest.fixture(scope="module")
def kafka37_source(tmp_path_factory):
    """The copied metadata log of a Kafka 3.7 cluster and what its clients were answered."""
    with KafkaCluster(brokers=3, log_dirs=2, lib=KAFKA37_LIB) as kafka:
        admin = KafkaAdminClient(bootstrap_servers=kafka.bootstrap, request_timeout_ms=60000)
        try:
            admin.create_topics([
                NewTopic(PLACED, replica_assignments={0: [1, 2], 1: [2, 3], 2: [3, 1]},
                         topic_configs={"retention.ms": "3600000", "cleanup.policy": "compact"}),
                NewTopic(SPREAD, num_partitions=3, replication_factor=2)])
            admin.create_partitions({SPREAD: NewPartitions(total_count=5)})
            admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, SPREAD,
                                                configs={"max.message.bytes": "2000000"})])
            deadline = time.monotonic() + 60
            while True:  # the added partitions and the config, as every broker has applied them
                seen = described(admin, [PLACED, SPREAD])
                if len(seen[SPREAD]) == 6 and dynamic_topic_configs(admin, SPREAD) or time.monotonic() > deadline:
                    break
            seen = {"topics": seen, "configs": {t: dynamic_topic_configs(admin, t) for t in (PLACED, SPREAD)},
                    "cluster_id": admin.describe_cluster()["cluster_id"],
                    "brokers": sorted(b["broker_id"] for b in admin.describe_cluster()["brokers"]),
                    "features": features(kafka.bootstrap),
                    "kafka-topics": topics_described(kafka.bootstrap, SPREAD)}
            copy = tmp_path_factory.mktemp("kafka37") / "source"
            shutil.copytree(kafka.metadata_dir().parent, copy)
        finally:
            admin.close()
    assert "FinalizedVersionLevel: 3.7-IV4" in seen["features"][0], seen["features"]
    return {"dir": copy, "seen": seen}


def test_the_kafka37_log_is_read_at_its_level(kafka37_source):
    source = read_source(kafka37_source["dir"])
    assert source.image.features["metadata.version"] == 19
    assert source.node_ids == [1, 2, 3]
    assert all(len(b.log_dirs) == 2 for b in source.brokers)  # 3.7-IV2's directory assignment (KIP-858)


def test_a_kafka37_cluster_twinned_answers_as_it_did_and_completes_a_reassignment(kafka37_source, tmp_path):
    seen = kafka37_source["seen"]
    served = Served(tmp_path, "--from-log", str(kafka37_source["dir"]), "--data-dir", str(tmp_path / "twin"),
                    "--port", "0", "--controller-port", "0")
    try:
        assert "metadata.version level 19" in served.logged()
        assert features(served.bootstrap) == seen["features"]  # finalized 3.7-IV4, range that of 3.7 (up to 19)
        assert topics_described(served.bootstrap, SPREAD) == seen["kafka-topics"]
        admin = KafkaAdminClient(bootstrap_servers=served.bootstrap, request_timeout_ms=30000)
        try:
            assert described(admin, [PLACED, SPREAD]) == seen["topics"]
            assert {t: dynamic_topic_configs(admin, t) for t in (PLACED, SPREAD)} == seen["configs"]
            cluster = admin.describe_cluster()
            assert cluster["cluster_id"] == seen["cluster_id"]
            assert sorted(b["broker_id"] for b in cluster["brokers"]) == seen["brokers"]

            rehearse(served.bootstrap, tmp_path, 0, [3, 2], 10_000_000, topic=PLACED)
            deadline = time.monotonic() + 60
            while admin.list_partition_reassignments() and time.monotonic() < deadline:
                time.sleep(0.1)
            assert admin.list_partition_reassignments() == {}
            placed = described(admin, [PLACED])[PLACED]
            assert placed[1][2] == [3, 2] and sorted(placed[1][3]) == [2, 3], placed
        finally:
            admin.close()
    finally:
        served.stop()
    (log_dir,) = (tmp_path / "twin").rglob("__cluster_metadata-0")
    files = [(file, int(file.name.split(".")[0])) for file in segment_paths(log_dir)]
    files += [(file, 0) for file in log_dir.glob("*.checkpoint")]  # the seeded snapshot, at level 19's versions
    written = [(type(record).__name__, version) for file, base in files
               for _o, _e, _t, control, record, version in read_file(file, base) if not control]
    changes = {v for name, v in written if name == "PartitionChangeRecord"}
    registrations = {v for name, v in written if name == "RegisterBrokerRecord"}
    assert changes == {1} and registrations == {3}, written
    assert {v for name, v in written if name == rec.PartitionRecord.__name__} == {1}
