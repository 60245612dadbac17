"""The metadata log on disk holds each record at the version Kafka writes at the cluster's
metadata.version (4.3-IV0 by default)."""
import json
import subprocess
import sys

import pytest
from kafka.admin import KafkaAdminClient, NewPartitions, NewTopic

from kraftwire.codec import records as rec
from kraftwire.server.host.cluster import BackgroundCluster
from kraftwire.server.metadata.record_versions import METADATA_VERSIONS, version_for
from kraftwire.server.raft import RaftConfig


def _logged_records(data_dir):
    for segment in sorted((data_dir / "__cluster_metadata-0").glob("*.log")):
        for batch in rec.iter_batches(segment.read_bytes()):
            if not batch.is_control:
                for record in batch.records:
                    yield rec.decode_frame(record.value)


def test_records_on_disk_use_the_versions_of_metadata_version_3_9():
    with BackgroundCluster(brokers=3, metadata_version="3.9-IV0") as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap)
        try:
            admin.create_topics([NewTopic("versions", 2, 2, topic_configs={"retention.ms": "1000"})])
            bg.run(bg.cluster.broker(3).stop())
            bg.run(bg.cluster.wait_until(lambda image: image.brokers[3].fenced, 30))
        finally:
            admin.close()
        logged = list(_logged_records(bg.cluster.data_dir))
    seen = {}
    for record, version in logged:
        assert version == version_for(record, METADATA_VERSIONS["3.9-IV0"]), record
        seen.setdefault(type(record), set()).add(version)
    assert seen[rec.PartitionRecord] == {1}
    assert seen[rec.RegisterBrokerRecord] == {3}
    assert seen[rec.TopicRecord] == seen[rec.ConfigRecord] == seen[rec.FeatureLevelRecord] == {0}
    assert 0 in seen[rec.BrokerRegistrationChangeRecord]  # the fence
    assert seen.get(rec.PartitionChangeRecord, {1}) == {1}


@pytest.mark.parametrize("metadata_version, level, partition_version, broker_version", [
    ("4.1-IV0", 26, 2, 3), ("4.4-IV2", 33, 2, 4)])
def test_records_follow_the_chosen_metadata_version(metadata_version, level, partition_version, broker_version):
    """The log, snapshots included (read back by ``kraftwire log dump``), holds the level chosen and every
    record at the version Kafka writes at that level; clients see the level as the finalized feature."""
    with BackgroundCluster(brokers=3, metadata_version=metadata_version,
                           log_config=RaftConfig(snapshot_every_records=8)) as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap)
        try:
            admin.create_topics([NewTopic("versions", 3, 2)])
            admin.create_partitions({"versions": NewPartitions(4)})
            features = admin.describe_features()
        finally:
            admin.close()
        bg.run(bg.cluster.controller.log.snapshot())  # one that holds the partitions, however the counts fell
        dumped = subprocess.run([sys.executable, "-m", "kraftwire", "log", "dump", "--json", str(bg.cluster.data_dir)],
                                capture_output=True, text=True, timeout=60)
    assert dumped.returncode == 0, dumped.stderr
    lines = [json.loads(line) for line in dumped.stdout.splitlines() if line]
    versions = {}
    for line in lines:
        versions.setdefault((line["type"], line["file"].endswith(".checkpoint")), set()).add(line["version"])
    assert features["metadata.version"]["finalized"] == (level, level)
    # a Kafka 4.3.1 node's range, or kraftwire's newest level in a cluster started above 4.3-IV0
    assert features["metadata.version"]["supported"] == (7, 30 if level <= 30 else 33)
    elr = features["eligible.leader.replicas.version"]
    assert (elr["supported"], elr["finalized"]) == ((0, 1), (1, 1))  # on from 4.1-IV0
    assert [line["fields"]["feature_level"] for line in lines if line["type"] == "FeatureLevelRecord"][0] == level
    for in_snapshot in (False, True):
        assert versions[("PartitionRecord", in_snapshot)] == {partition_version}
        assert versions[("RegisterBrokerRecord", in_snapshot)] == {broker_version}
    assert versions[("FeatureLevelRecord", True)] == {0}
