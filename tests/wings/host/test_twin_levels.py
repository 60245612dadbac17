"""A twin of a cluster at any KRaft production metadata.version (3.3-IV3 to 4.4-IV2): the record versions
each level writes, the behaviours below 3.6-IV0 (the leader-epoch bump on an ISR shrink) and 3.5-IV2 (no
SCRAM), and a hand-written 3.5-IV1 log, as a Kafka 3.5 wrote it (RegisterBrokerRecord v2 with no log
directories, PartitionRecord v0), served: its one line on what is not modelled, that release's
metadata.version range, its partitions, and a reassignment that completes. (A real Kafka 3.7 log:
tests/kafka_oracle/test_kafka37_twin.py.)"""
from __future__ import annotations

import json
import time
import uuid

from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from apache_kafka import REASSIGN_PARTITIONS, run_tool
from served import Served
from topic_records import add_topic, image_with_brokers
from tests.wings.host.test_twin import FEATURES, finalized_features, write_log

from kraftwire.codec import ErrorCode
from kraftwire.codec import records as rec
from kraftwire.codec.constants import LEADER_UNCHANGED, MIGRATING
from kraftwire.codec.messages import AlterUserScramCredentialsRequest
from kraftwire.server.controller.partition_change import build_change, rules_for
from kraftwire.server.controller.scram import alter_user_scram_credentials
from kraftwire.server.metadata.record_versions import TWIN_LEVELS, supported_features, version_for
from kraftwire.server.raft.tools import read_file, segment_paths

TOPIC = "old-orders"


def test_each_level_writes_the_record_versions_kafka_wrote_there():
    dirs = [uuid.uuid4()]
    partition = rec.PartitionRecord(partition_id=0, topic_id=uuid.uuid4(), replicas=[1], isr=[1], leader=1,
                                    directories=[MIGRATING])
    broker = rec.RegisterBrokerRecord(broker_id=1, incarnation_id=uuid.uuid4(), broker_epoch=1, end_points=[])
    expected = {"3.3-IV3": (0, 1), "3.4-IV0": (0, 2), "3.7-IV1": (0, 2), "3.7-IV2": (1, 3), "3.9-IV0": (1, 3),
                "4.0-IV1": (2, 3), "4.3-IV0": (2, 4), "4.4-IV2": (2, 4)}
    assert {name: (version_for(partition, TWIN_LEVELS[name]), version_for(broker, TWIN_LEVELS[name]))
            for name in expected} == expected
    # below 3.7-IV2 a record naming directories keeps the version that has them (README, differences)
    assert version_for(partition.replace(directories=dirs), 7) == 1
    assert version_for(broker.replace(log_dirs=dirs), 7) == 3
    # what a node advertises: a 3.x release's range, from 3.0-IV1, and not the features it did not know
    assert supported_features(TWIN_LEVELS["3.7-IV4"]) == {"metadata.version": (1, 19)}
    assert supported_features(TWIN_LEVELS["3.5-IV0"]) == {"metadata.version": (1, 11)}
    assert supported_features(TWIN_LEVELS["3.9-IV0"])["metadata.version"] == (7, 30)


def test_below_3_6_iv0_an_isr_shrink_bumps_the_leader_epoch():
    """KAFKA-15021: Kafka's controller below 3.6-IV0 sets the leader on a shrinking ISR, bumping its epoch."""
    bumped = {}
    for level in (TWIN_LEVELS["3.5-IV2"], TWIN_LEVELS["3.6-IV0"]):
        image = image_with_brokers(1, 2, 3)
        image.features["metadata.version"] = level
        topic_id = add_topic(image, TOPIC, {0: {"replicas": [1, 2, 3]}})
        state = image.topic(TOPIC).partitions[0]
        record = build_change(image.brokers, topic_id, 0, state, rules=rules_for(image, TOPIC), isr=(1, 2))
        bumped[level] = record.leader
    assert bumped == {11: 1, 12: LEADER_UNCHANGED}  # 1: the leader set to itself, a new leader epoch


def test_below_3_5_iv2_scram_credentials_are_refused():
    image = image_with_brokers(1)
    upsert = AlterUserScramCredentialsRequest.ScramCredentialUpsertion(
        name="alice", mechanism=2, iterations=8192, salt=b"salt", salted_password=b"x" * 64)
    request = AlterUserScramCredentialsRequest(deletions=[], upsertions=[upsert])
    for level, code in ((10, ErrorCode.UNSUPPORTED_VERSION), (11, ErrorCode.NONE)):
        image.features["metadata.version"] = level
        result = alter_user_scram_credentials(image, request)
        assert [r.error_code for r in result.response.results] == [code]
        assert bool(result.records) == (code == ErrorCode.NONE)
        if code:
            assert result.response.results[0].error_message == "The current metadata.version does not support SCRAM"


def kafka35_log(data_dir) -> uuid.UUID:
    """A 3.5-IV1 log: three brokers registered at v2 with no log directory, one topic at PartitionRecord v0."""
    topic_id = uuid.uuid4()
    records = [(rec.FeatureLevelRecord(name="metadata.version", feature_level=TWIN_LEVELS["3.5-IV1"]), 0)]
    records += [(rec.RegisterBrokerRecord(broker_id=b, incarnation_id=uuid.uuid4(), broker_epoch=b, fenced=False,
                                          end_points=[], rack=None), 2) for b in (1, 2, 3)]
    records += [(rec.TopicRecord(name=TOPIC, topic_id=topic_id), 0)]
    records += [(rec.PartitionRecord(partition_id=p, topic_id=topic_id, replicas=replicas, isr=replicas,
                                     leader=replicas[0], leader_epoch=0, partition_epoch=0), 0)
                for p, replicas in enumerate([[1, 2], [2, 3]])]
    write_log(data_dir, records)
    return topic_id


def test_a_kafka35_log_is_twinned_and_completes_a_reassignment(tmp_path):
    kafka35_log(tmp_path / "source")
    served = Served(tmp_path, "--from-log", str(tmp_path / "source"), "--data-dir", str(tmp_path / "twin"),
                    "--port", "0", "--controller-port", "0")
    try:
        assert "metadata.version 3.5-IV1 (level 10): 3.5-IV1 predates directory assignment" in served.logged()
        assert "brokers [1, 2, 3] registered no log directory (as below 3.7-IV2): each gets one" in served.logged()
        assert finalized_features(served.bootstrap) == {"metadata.version": "3.5-IV1"}
        admin = KafkaAdminClient(bootstrap_servers=served.bootstrap, request_timeout_ms=30000)
        try:
            (topic,) = admin.describe_topics([TOPIC])
            assert sorted((p["partition_index"], p["leader_id"], p["replica_nodes"]) for p in topic["partitions"]) \
                == [(0, 1, [1, 2]), (1, 2, [2, 3])]
            plan = tmp_path / "plan.json"
            plan.write_text(json.dumps({"version": 1, "partitions": [
                {"topic": TOPIC, "partition": 0, "replicas": [3, 1]}]}))
            done = run_tool(REASSIGN_PARTITIONS, "--bootstrap-server", served.bootstrap, "--execute",
                            "--reassignment-json-file", str(plan))
            assert done.returncode == 0, done.stdout + done.stderr
            deadline = time.monotonic() + 60
            while admin.list_partition_reassignments() and time.monotonic() < deadline:
                time.sleep(0.1)
            assert admin.list_partition_reassignments() == {}
            (topic,) = admin.describe_topics([TOPIC])
            assert [p["replica_nodes"] for p in topic["partitions"] if p["partition_index"] == 0] == [[3, 1]]
        finally:
            admin.close()
    finally:
        served.stop()


def test_a_new_cluster_starts_at_a_3_3_level_given_as_kafka_storage_takes_it(tmp_path):
    """``serve --release-version 3.3-IV3``: the level finalized, 3.3's range advertised, topics created
    and moved; the records that name no directory are written at 3.3-IV3's versions."""
    served = Served(tmp_path, "--release-version", "3.3-IV3", "--data-dir", str(tmp_path / "data"),
                    "--port", "0", "--controller-port", "0")
    try:
        assert finalized_features(served.bootstrap) == {"metadata.version": "3.3-IV3"}
        assert "SupportedMaxVersion: 3.3-IV3" in run_tool(FEATURES, "--bootstrap-server", served.bootstrap,
                                                          "describe").stdout
        admin = KafkaAdminClient(bootstrap_servers=served.bootstrap, request_timeout_ms=30000)
        try:
            admin.create_topics([NewTopic(TOPIC, replica_assignments={0: [1, 2]})])
            plan = tmp_path / "plan.json"
            plan.write_text(json.dumps({"version": 1, "partitions": [
                {"topic": TOPIC, "partition": 0, "replicas": [3, 2]}]}))
            done = run_tool(REASSIGN_PARTITIONS, "--bootstrap-server", served.bootstrap, "--execute",
                            "--reassignment-json-file", str(plan))
            assert done.returncode == 0, done.stdout + done.stderr
            deadline = time.monotonic() + 60
            while admin.list_partition_reassignments() and time.monotonic() < deadline:
                time.sleep(0.1)
            assert admin.list_partition_reassignments() == {}
        finally:
            admin.close()
    finally:
        served.stop()
    (log_dir,) = (tmp_path / "data").rglob("__cluster_metadata-0")
    written = [(type(record).__name__, version) for file in segment_paths(log_dir)
               for _o, _e, _t, control, record, version in read_file(file, int(file.name.split(".")[0]))
               if not control]
    # each kraftwire broker registers its log directory and places replicas in directories: those records
    # keep the versions that name them (README, differences); the others are at 3.3-IV3's
    assert sorted(set(written)) == [("BrokerRegistrationChangeRecord", 0), ("FeatureLevelRecord", 0),
                                    ("PartitionChangeRecord", 1), ("PartitionRecord", 1), ("RegisterBrokerRecord", 3),
                                    ("TopicRecord", 0)]
