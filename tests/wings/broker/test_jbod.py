"""JBOD log directories (KIP-858) end to end through kafka-python 3.0.12: DescribeLogDirs on every broker,
AlterReplicaLogDirs through a future replica, a failed directory moving leadership away (seen in
Metadata), restoring it, the control plane's fail/restore and ``kraftwire serve --log-dirs``.

Brokers have two directories each here; the records are read back from the metadata log on disk.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, TopicPartition, TopicPartitionReplica
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.errors import (KafkaStorageError, LogDirNotFoundError, NoError, ReplicaNotAvailableError,
                          UnknownTopicOrPartitionError)

from kraftwire.codec import records as rec
from kraftwire.codec.messages import DescribeLogDirsRequest
from kraftwire.codec.constants import UNASSIGNED
from kraftwire.server.wire.client import KafkaClient
from kraftwire.server.host.cluster import BackgroundCluster
from kraftwire.server.broker.log_dirs import MAX_ASSIGNMENTS_PER_REQUEST, backoff_seconds
from kraftwire.server.raft.storage import read_properties, parse_kafka_uuid
from kraftwire.server.raft.tools import Problem, partition_directory, read_log
from answers import watch_answers
from served import Served
from tests.wings.host.test_control_plane import call, until

MiB = 1 << 20
ALTER_DIRS_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"
PARTITION_SIZE = "kraftwire.partition.size.bytes"


@pytest.fixture
def bg():
    with BackgroundCluster(brokers=3, log_dirs=2, control_port=0) as cluster:
        yield cluster


@pytest.fixture
def admin(bg):
    client = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="jbod-test")
    yield client
    client.close()


def create(admin, bg, name: str, assignment: dict[int, list[int]], configs: dict | None = None) -> None:
    """A topic with a manual assignment; returns once every replica's directory is known."""
    admin.create_topics([NewTopic(name, -1, -1, replica_assignments=assignment, topic_configs=configs or {})])
    until(lambda: (topic := image(bg).topic(name)) is not None and len(topic.partitions) == len(assignment)
          and all(UNASSIGNED not in s.directories for s in topic.partitions.values()))


def image(bg):
    return bg.call(lambda: bg.cluster.controller.committed)


def directories_of(bg, broker_id: int) -> dict[str, object]:
    """path -> LogDir of a broker's directories."""
    return {d.path: d for d in bg.cluster.broker(broker_id).log_manager.directories}


def logs(described: dict) -> dict[str, set[tuple[str, int, bool]]]:
    """path -> {(topic, partition, is future)} of one broker's describe_log_dirs answer."""
    return {d["log_dir"]: {(t["name"], p["partition_index"], p["is_future_key"])
                           for t in d["topics"] for p in t["partitions"]} for d in described["log_dirs"]}


def source_and_target(described: dict) -> tuple[str, str]:
    """The directory holding a broker's one log in its describe_log_dirs answer, and its other one."""
    source = next(path for path, found in logs(described).items() if found)
    return source, next(path for path in logs(described) if path != source)


def metadata_records(bg, kind) -> list:
    """The records of one kind in the metadata log on disk, up to a batch still being written."""
    found = []
    try:
        for _path, (_o, _e, _t, control, record, _v) in read_log(partition_directory(bg.cluster.data_dir)):
            if not control and isinstance(record, kind):
                found.append(record)
    except Problem:
        pass
    return found


def partitions(admin, topic: str) -> dict[int, dict]:
    """Metadata's view of a topic's partitions (kafka-python describe_topics)."""
    (described,) = admin.describe_topics([topic])
    return {p["partition_index"]: p for p in described["partitions"]}


def test_describe_log_dirs_shows_each_brokers_own_directories_and_replicas(bg, admin):
    assignment = {i: [1 + i % 3, 1 + (i + 1) % 3] for i in range(6)}
    create(admin, bg, "spread", assignment)
    state = image(bg).topic("spread").partitions
    answers = admin.describe_log_dirs()
    assert sorted(a["broker"] for a in answers) == [1, 2, 3]
    for answer in answers:
        broker_id = answer["broker"]
        directories = directories_of(bg, broker_id)
        listed = logs(answer)
        assert sorted(listed) == sorted(directories) == [
            str(bg.cluster.data_dir / f"broker-{broker_id}" / f"logs-{k}") for k in range(2)]
        hosted = {("spread", i) for i, replicas in assignment.items() if broker_id in replicas}
        assert {(t, p) for found in listed.values() for t, p, _ in found} == hosted
        for path, found in listed.items():
            directory = directories[path]
            assert found, "new replicas go to the directory with the fewest logs"
            for _topic, index, is_future in found:  # the metadata names the directory that lists it
                assert not is_future and state[index].directory_of(broker_id) == directory.directory_id
            meta = read_properties(Path(path) / "meta.properties")
            assert parse_kafka_uuid(meta["directory.id"]) == directory.directory_id
        for result in answer["log_dirs"]:
            assert result["error_code"] == 0 and result["total_bytes"] == 1 << 40
            used = sum(p["partition_size"] for t in result["topics"] for p in t["partitions"])
            assert result["usable_bytes"] == result["total_bytes"] - used
    (one,) = admin.describe_log_dirs({"spread": [0]}, brokers=[1])
    assert {entry for found in logs(one).values() for entry in found} == {("spread", 0, False)}


def test_describe_log_dirs_at_every_version(bg, admin):
    create(admin, bg, "versions", {0: [1, 2]})

    async def describe_all_versions():
        broker = bg.cluster.broker(1)
        client = KafkaClient(broker.host, broker.port, "jbod-test")
        try:
            return [await client.send(DescribeLogDirsRequest(topics=None), version) for version in range(6)]
        finally:
            await client.close()

    for version, answer in enumerate(bg.run(describe_all_versions())):
        assert [r.log_dir for r in answer.results] == sorted(directories_of(bg, 1))
        assert {(t.name, p.partition_index) for r in answer.results for t in r.topics for p in t.partitions} == {
            ("versions", 0)}
        assert [r.total_bytes for r in answer.results] == [1 << 40 if version >= 4 else -1] * 2


def test_single_directory_brokers_need_no_assignment():
    with BackgroundCluster(brokers=2) as single:
        client = KafkaAdminClient(bootstrap_servers=single.bootstrap, client_id="jbod-test")
        try:
            client.create_topics([NewTopic("one", 2, 2)])
            until(lambda: image(single).topic("one") is not None)
            for _topic, _index, state in image(single).partitions():
                assert state.partition_epoch == 0
                assert list(state.directories) == [single.cluster.broker(b).log_dirs[0] for b in state.replicas]
            until(lambda: [sorted(entry for found in logs(a).values() for entry in found)
                           for a in client.describe_log_dirs()] == [[("one", 0, False), ("one", 1, False)]] * 2)
        finally:
            client.close()


def test_assignments_go_in_requests_of_at_most_2250():
    """3000 new replicas of a two-directory broker: every one is reported, in batches Kafka's size."""
    answered = []
    with BackgroundCluster(brokers=1, log_dirs=2) as one:
        def observe(response):
            answered.append([p.error_code for d in response.directories for t in d.topics for p in t.partitions])

        one.call(watch_answers, one.cluster.controller_node.listener, 73, observe)
        client = KafkaAdminClient(bootstrap_servers=one.bootstrap, client_id="jbod-test")
        try:
            client.create_topics([NewTopic("many", 3000, 1)])
            until(lambda: (topic := image(one).topic("many")) is not None and len(topic.partitions) == 3000
                  and all(UNASSIGNED not in s.directories for s in topic.partitions.values()), timeout=30)
        finally:
            client.close()
    assert len(answered) >= 2 and all(len(codes) <= MAX_ASSIGNMENTS_PER_REQUEST for codes in answered)
    assert sum(len(codes) for codes in answered) == 3000 and not any(any(codes) for codes in answered)


def test_assignment_retries_back_off_as_kafka():
    assert 0.098 <= backoff_seconds(0) <= 0.102 and 0.196 <= backoff_seconds(1) <= 0.204
    assert backoff_seconds(7) == backoff_seconds(30) == 10.0


def test_alter_replica_log_dirs_moves_a_replica_through_a_future_replica(bg, admin):
    create(admin, bg, "moving", {0: [1, 2]}, {PARTITION_SIZE: str(8 * MiB)})
    # 64 KiB/s: two minutes' copy, under way while it is described however loaded the machine is
    admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, "1", configs={ALTER_DIRS_RATE: str(64 << 10)})])
    until(lambda: image(bg).broker_configs("1").get(ALTER_DIRS_RATE) == str(64 << 10))
    (before,) = admin.describe_log_dirs(brokers=[1])
    source, target = source_and_target(before)
    target_id = directories_of(bg, 1)[target].directory_id

    assert admin.alter_replica_log_dirs({TopicPartitionReplica("moving", 0, 1): target}) == {
        TopicPartitionReplica("moving", 0, 1): NoError}
    (during,) = admin.describe_log_dirs(brokers=[1])
    assert logs(during) == {source: {("moving", 0, False)}, target: {("moving", 0, True)}}
    future = next(d for d in during["log_dirs"] if d["log_dir"] == target)["topics"][0]["partitions"][0]
    assert future["partition_size"] + future["offset_lag"] == 8 * MiB

    admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, "1", configs={ALTER_DIRS_RATE: str(64 * MiB)})])
    until(lambda: logs(admin.describe_log_dirs(brokers=[1])[0]) == {source: set(), target: {("moving", 0, False)}})
    topic_id = image(bg).topic_ids["moving"]
    assert image(bg).topic("moving").partitions[0].directories[0] == target_id
    assert any(r.topic_id == topic_id and r.directories is not None and r.directories[0] == target_id
               for r in metadata_records(bg, rec.PartitionChangeRecord))
    # moving it where it already is changes nothing
    assert admin.alter_replica_log_dirs({TopicPartitionReplica("moving", 0, 1): target}) == {
        TopicPartitionReplica("moving", 0, 1): NoError}
    assert logs(admin.describe_log_dirs(brokers=[1])[0])[target] == {("moving", 0, False)}


def test_alter_replica_log_dirs_errors(bg, admin):
    create(admin, bg, "errs", {0: [1, 2]})
    path_of_1 = next(iter(directories_of(bg, 1)))
    answer = admin.alter_replica_log_dirs({
        TopicPartitionReplica("errs", 0, 1): "/no/such/dir",
        TopicPartitionReplica("errs", 0, 3): next(iter(directories_of(bg, 3))),  # broker 3 hosts no replica
        TopicPartitionReplica("errs", 0, 2): path_of_1,  # a path of broker 1, not broker 2
        TopicPartitionReplica("nope", 0, 1): path_of_1})
    assert answer == {TopicPartitionReplica("errs", 0, 1): LogDirNotFoundError,
                      TopicPartitionReplica("errs", 0, 3): ReplicaNotAvailableError,
                      TopicPartitionReplica("errs", 0, 2): LogDirNotFoundError,
                      TopicPartitionReplica("nope", 0, 1): UnknownTopicOrPartitionError}


def test_failed_directory_moves_leaders_off_and_restoring_brings_it_back(bg, admin):
    create(admin, bg, "jbod", {i: [1, 2, 3] for i in range(4)})
    assert {p["leader_id"] for p in partitions(admin, "jbod").values()} == {1}
    (before,) = admin.describe_log_dirs(brokers=[1])
    failing, surviving = sorted(logs(before), key=lambda path: not logs(before)[path])
    on_failing = {index for _t, index, _f in logs(before)[failing]}
    failing_index = sorted(directories_of(bg, 1)).index(failing)

    assert call(bg, "POST", "/api/brokers/1/log-dirs/7/fail")[0] == 404
    status, broker = call(bg, "POST", f"/api/brokers/1/log-dirs/{failing_index}/fail")
    assert status == 200
    assert [d["online"] for d in broker["directories"] if d["path"] == failing] == [False]
    # Metadata: leaders and ISRs left the replicas in the failed directory, which are listed offline
    until(lambda: all(p["leader_id"] != 1 for i, p in partitions(admin, "jbod").items() if i in on_failing))
    for index, partition in partitions(admin, "jbod").items():
        if index in on_failing:
            assert 1 not in partition["isr_nodes"] and partition["offline_replicas"] == [1]
        else:
            assert partition["leader_id"] == 1 and partition["offline_replicas"] == []
    (failed,) = admin.describe_log_dirs(brokers=[1])
    assert {d["log_dir"]: d["error_code"] for d in failed["log_dirs"]} == {failing: 56, surviving: 0}
    change = metadata_records(bg, rec.BrokerRegistrationChangeRecord)[-1]
    assert change.broker_id == 1 and list(change.log_dirs) == [directories_of(bg, 1)[surviving].directory_id]
    # no directory moves while one is offline, nor into an offline one
    moved_index = sorted(on_failing)[0]
    kept_index = next(i for i in range(4) if i not in on_failing)
    assert admin.alter_replica_log_dirs({TopicPartitionReplica("jbod", kept_index, 1): failing,
                                         TopicPartitionReplica("jbod", moved_index, 1): surviving}) == {
        TopicPartitionReplica("jbod", kept_index, 1): KafkaStorageError,
        TopicPartitionReplica("jbod", moved_index, 1): KafkaStorageError}
    # a reassignment can take a replica of the failed directory off the broker
    admin.alter_partition_reassignments({TopicPartition("jbod", moved_index): [2, 3]})
    until(lambda: partitions(admin, "jbod")[moved_index]["replica_nodes"] == [2, 3])

    failing_id = directories_of(bg, 1)[failing].directory_id
    status, broker = call(bg, "POST", f"/api/brokers/1/log-dirs/{failing_id}/restore")
    assert status == 200 and all(d["online"] for d in broker["directories"])
    until(lambda: all(1 in p["isr_nodes"] and p["offline_replicas"] == [] for i, p in
                      partitions(admin, "jbod").items() if i != moved_index))
    registration = image(bg).brokers[1]
    assert set(registration.log_dirs) == set(bg.cluster.broker(1).log_dirs) and not registration.fenced


def test_failing_the_last_directory_stops_the_broker(bg, admin):
    create(admin, bg, "last", {0: [1, 2]})
    bg.run(bg.cluster.fail_log_dir(1, 0))
    bg.run(bg.cluster.fail_log_dir(1, 1))
    assert not bg.call(lambda: bg.cluster.broker(1).running)
    until(lambda: image(bg).brokers[1].fenced and image(bg).topic("last").partitions[0].leader == 2, timeout=30)


def test_serve_with_two_log_directories(tmp_path):
    served = Served(tmp_path, "--brokers", "1", "--port", "0", "--controller-port", "0", "--log-dirs", "2",
                    "--log-dir-capacity-bytes", str(1 << 30))
    try:
        client = KafkaAdminClient(bootstrap_servers=served.bootstrap, client_id="jbod-test")
        try:
            (answer,) = client.describe_log_dirs()
        finally:
            client.close()
    finally:
        served.stop()
    data = tmp_path / "kraftwire-data"
    assert [(d["log_dir"], d["total_bytes"]) for d in answer["log_dirs"]] == [
        (str(data / "broker-1" / f"logs-{k}"), 1 << 30) for k in range(2)]


def test_advance_returns_once_a_finished_directory_move_is_assigned():
    """On the virtual clock, a directory move that has caught up still has to be reported to the controller
    (AssignReplicasToDirs, held 100 ms to batch as Kafka's AssignmentsManager does); ``advance`` waits for
    that answer, so the metadata names the new directory as soon as it returns."""
    with BackgroundCluster(brokers=2, log_dirs=2, virtual_clock=True) as bg:
        cluster = bg.cluster
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="jbod-test")
        admin.create_topics([NewTopic("moving", -1, -1, replica_assignments={0: [1, 2]},
                                      topic_configs={PARTITION_SIZE: str(40 * MiB)})])
        admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, "1", configs={ALTER_DIRS_RATE: str(4 * MiB)})])
        until(lambda: image(bg).broker_configs("1").get(ALTER_DIRS_RATE) == str(4 * MiB)
              and UNASSIGNED not in image(bg).topic("moving").partitions[0].directories)
        (described,) = admin.describe_log_dirs(brokers=[1])
        _, target = source_and_target(described)
        target_id = directories_of(bg, 1)[target].directory_id
        assert admin.alter_replica_log_dirs({TopicPartitionReplica("moving", 0, 1): target}) == {
            TopicPartitionReplica("moving", 0, 1): NoError}
        bg.run(cluster.advance(9.0))  # 36 of its 40 MiB copied
        assert image(bg).topic("moving").partitions[0].directories[0] != target_id
        bg.run(cluster.advance(2.0))
        assert image(bg).topic("moving").partitions[0].directories[0] == target_id
        admin.close()
