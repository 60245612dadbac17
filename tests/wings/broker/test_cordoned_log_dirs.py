"""Cordoned log directories (KIP-1066, metadata.version 4.3-IV0) through kafka-python 3.0.12 over TCP:
``cordoned.log.dirs`` set with IncrementalAlterConfigs, the brokers' heartbeats carrying it to the
controller, DescribeLogDirs v5's IsCordoned, new replicas kept off cordoned directories, and the
refusals of CreateTopics, AlterPartitionReassignments and AlterReplicaLogDirs, with Kafka's codes and
messages. Brokers have two directories each."""
from __future__ import annotations

import pytest
from kafka import KafkaAdminClient, TopicPartition, TopicPartitionReplica
from kafka.admin import AlterConfigOp, ConfigResource, NewTopic
from kafka.errors import InvalidReplicationAssignmentError, InvalidReplicationFactorError

from kraftwire.codec.constants import UNASSIGNED
from kraftwire.server.host.cluster import BackgroundCluster
from tests.wings.host.test_control_plane import until

CORDONED = "cordoned.log.dirs"


@pytest.fixture(scope="module")
def cordoning():
    with BackgroundCluster(brokers=3, log_dirs=2, metadata_version="4.3-IV0") as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="cordon-test")
        yield bg, admin
        admin.close()


def image(bg):
    return bg.call(lambda: bg.cluster.controller.committed)


def paths(bg, broker_id: int) -> list[str]:
    return [d.path for d in bg.cluster.broker(broker_id).log_manager.directories]


def cordon(bg, admin, broker_id: int, value: str) -> str:
    """Set a broker's cordoned.log.dirs; the broker's answer ('OK' or the error)."""
    return admin.alter_configs([ConfigResource("BROKER", str(broker_id), {CORDONED: (AlterConfigOp.SET, value)})])[
        "broker"][str(broker_id)]


def reported(bg, broker_id: int):
    broker = image(bg).brokers[broker_id]
    return None if broker.cordoned_log_dirs is None else set(broker.cordoned_log_dirs)


def test_a_cordoned_directory_takes_no_new_replica_and_is_flagged(cordoning):
    bg, admin = cordoning
    first, second = paths(bg, 1)
    until(lambda: reported(bg, 1) == set())  # caught-up brokers report their (empty) set
    assert cordon(bg, admin, 1, first) == "OK"
    first_id = bg.cluster.broker(1).log_manager.directory(first).directory_id
    until(lambda: reported(bg, 1) == {first_id})

    (described,) = admin.describe_log_dirs(brokers=[1])
    assert {d["log_dir"]: d["is_cordoned"] for d in described["log_dirs"]} == {first: True, second: False}

    admin.create_topics([NewTopic("uncordoned", -1, -1, replica_assignments={i: [1, 2] for i in range(4)})])
    until(lambda: (t := image(bg).topic("uncordoned")) is not None and len(t.partitions) == 4
          and all(UNASSIGNED not in s.directories for s in t.partitions.values()))
    second_id = bg.cluster.broker(1).log_manager.directory(second).directory_id
    assert {s.directory_of(1) for s in image(bg).topic("uncordoned").partitions.values()} == {second_id}

    assert admin.alter_replica_log_dirs({TopicPartitionReplica("uncordoned", 0, 1): first}) == {
        TopicPartitionReplica("uncordoned", 0, 1): InvalidReplicationAssignmentError}

    assert cordon(bg, admin, 1, "/not/a/log/dir") == (
        "[Error 42] InvalidRequestError: Invalid value [/not/a/log/dir] for configuration cordoned.log.dirs: "
        "Invalid entry in cordoned.log.dirs: /not/a/log/dir. All cordoned log dirs must be entries of log.dirs or "
        "log.dir.")
    assert cordon(bg, admin, 1, "") == "OK"
    until(lambda: reported(bg, 1) == set())
    (described,) = admin.describe_log_dirs(brokers=[1])
    assert not any(d["is_cordoned"] for d in described["log_dirs"])


def test_a_broker_with_every_directory_cordoned_is_no_target(cordoning):
    bg, admin = cordoning
    admin.create_topics([NewTopic("moving", -1, -1, replica_assignments={0: [1, 2]})])
    assert cordon(bg, admin, 3, "*") == "OK"
    until(lambda: reported(bg, 3) is not None and len(reported(bg, 3)) == 2)
    refusal = "The manual partition assignment includes broker 3, but all its log directories are cordoned."

    with pytest.raises(InvalidReplicationAssignmentError) as refused:
        admin.create_topics({"onto-3": {"assignments": {0: [3, 1]}}})
    assert f"error_code=39, error_message='{refusal}'" in str(refused.value)
    with pytest.raises(InvalidReplicationFactorError) as refused:
        admin.create_topics({"placed": {"num_partitions": 1, "replication_factor": 3}})
    assert ("error_code=38, error_message='Unable to replicate the partition 3 time(s): The target replication "
            "factor of 3 cannot be reached because only 2 broker(s) are registered or some brokers have all their "
            "log directories cordoned.'") in str(refused.value)
    placed = admin.create_topics({"placed-2": {"num_partitions": 6, "replication_factor": 2}})
    assert placed["topics"][0]["error_code"] == 0
    assert all(3 not in s.replicas for s in image(bg).topic("placed-2").partitions.values())

    answer = admin.alter_partition_reassignments({TopicPartition("moving", 0): [3, 2]})
    assert answer == {TopicPartition("moving", 0): InvalidReplicationAssignmentError}
    assert image(bg).topic("moving").partitions[0].replicas == (1, 2)
    assert cordon(bg, admin, 3, "") == "OK"
    until(lambda: reported(bg, 3) == set())
    assert admin.alter_partition_reassignments({TopicPartition("moving", 0): [3, 2]}) == {
        TopicPartition("moving", 0): None}


def test_below_4_3_the_controller_refuses_the_config():
    with BackgroundCluster(brokers=1, metadata_version="4.2-IV1") as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="cordon-test")
        try:
            answer = cordon(bg, admin, 1, paths(bg, 1)[0])
            (described,) = admin.describe_log_dirs(brokers=[1])
            assert image(bg).brokers[1].cordoned_log_dirs is None
        finally:
            admin.close()
    assert answer == ("[Error 40] InvalidConfigurationError: The cordoned.log.dirs configuration value cannot be "
                      "set because it requires metadata.version >= 4.3-IV0")
    assert [d["is_cordoned"] for d in described["log_dirs"]] == [False]
