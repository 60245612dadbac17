"""Partition reassignment through kafka-python 3.0.12: its API, raw v0/v1 requests through its own
protocol classes (for messages and the KIP-860 flag, which its API does not expose), and its CLI.

One cluster of five brokers serves the module, at speed 50: a default partition (100 MiB at 100 MiB/s)
moves in 1 s of simulated time, 20 ms of real time. Topics named ``slow*`` are 1 PB per partition, so
their reassignments stay in flight for as long as a test needs.
"""
from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import pytest
from kafka import KafkaAdminClient, TopicPartition
from kafka.errors import (InvalidReplicationAssignmentError, NoReassignmentInProgressError,
                          UnknownTopicOrPartitionError)
from kafka.protocol.admin import AlterPartitionReassignmentsRequest as KafkaAlterRequest

from kraftwire.server.host.cluster import BackgroundCluster

HUGE = {"kraftwire.partition.size.bytes": str(10 ** 15)}
Topic = KafkaAlterRequest.ReassignableTopic
Partition = Topic.ReassignablePartition


@pytest.fixture(scope="module")
def bg():
    with BackgroundCluster(brokers=5, speed=50) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def admin(bg):
    client = KafkaAdminClient(bootstrap_servers=bg.bootstrap, request_timeout_ms=10000)
    yield client
    client.close()


_names = iter(range(10 ** 6))


def new_topic(admin, assignment: dict, configs: dict | None = None, prefix="t") -> str:
    name = f"{prefix}{next(_names)}"
    result = admin.create_topics({name: {"assignments": assignment, "configs": configs or {}}})
    assert result["topics"][0]["error_code"] == 0, result
    return name


def partition(bg, topic: str, index: int = 0):
    return bg.call(lambda: bg.cluster.controller.committed.topic(topic).partitions[index])


def wait_until(bg, predicate, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not bg.call(lambda: predicate(bg.cluster.controller.committed)):
        assert time.monotonic() < deadline, "the cluster did not reach the expected state"
        time.sleep(0.02)


def raw_alter(admin, entries, allow_rf_change=None):
    """Send AlterPartitionReassignments through kafka-python's protocol classes (v1 when the flag is
    given, otherwise the highest both serve) and return the response; entries: [(topic, [(p, replicas)])]."""
    fields = {} if allow_rf_change is None else {"allow_replication_factor_change": allow_rf_change}
    request = KafkaAlterRequest(timeout_ms=10000, topics=[
        Topic(name=t, partitions=[Partition(partition_index=p, replicas=r) for p, r in parts]) for t, parts in entries],
        **fields)
    return admin._manager.run(admin._send_request_to_controller, request)


def errors_of(response):
    return [(t.name, p.partition_index, p.error_code, p.error_message) for t in response.responses
            for p in t.partitions]


def test_every_validation_code_and_message(admin):
    name = new_topic(admin, {0: [1, 2, 3], 1: [1, 2, 3]})
    response = raw_alter(admin, [
        ("missing", [(0, [1])]),
        (name, [(5, [1]), (0, None), (0, []), (0, [5, 6, 7, 9]), (0, [-3, -2, -1]), (0, [1, 9, 9]), (0, [2, 1, 2]),
                (1, [3, 2, 1])]),
        (name, [])])
    assert response.error_code == 0 and response.error_message is None
    assert [t.name for t in response.responses] == ["missing", name, name]
    assert errors_of(response) == [
        ("missing", 0, 3, "Unable to find a topic named missing."),
        (name, 5, 3, f"Unable to find partition {name}:5."),
        (name, 0, 85, None),
        (name, 0, 39, "The manual partition assignment includes an empty replica list."),
        (name, 0, 39, "The manual partition assignment includes broker 6, but no such broker is registered."),
        (name, 0, 39, "The manual partition assignment includes broker -3, but no such broker is registered."),
        (name, 0, 39, "The manual partition assignment includes broker 9, but no such broker is registered."),
        (name, 0, 39, "The manual partition assignment includes the broker 2 more than once."),
        (name, 1, 0, None)]


def test_api_reports_error_classes(admin):
    name = new_topic(admin, {0: [1, 2, 3]})
    result = admin.alter_partition_reassignments({
        TopicPartition(name, 0): None, TopicPartition(name, 4): [1], TopicPartition(name, 1): [7],
        TopicPartition("absent", 0): [1]})
    assert result == {TopicPartition(name, 0): NoReassignmentInProgressError,
                      TopicPartition(name, 4): UnknownTopicOrPartitionError,
                      TopicPartition(name, 1): UnknownTopicOrPartitionError,
                      TopicPartition("absent", 0): UnknownTopicOrPartitionError}
    bad = admin.alter_partition_reassignments({TopicPartition(name, 0): [1, 6]})
    assert bad == {TopicPartition(name, 0): InvalidReplicationAssignmentError}


def test_empty_request_answers_the_default_response(admin):
    response = raw_alter(admin, [], allow_rf_change=False)
    assert (response.error_code, response.error_message, response.responses) == (0, "", [])
    assert response.allow_replication_factor_change is True  # the default answer, not an echo


def test_list_is_exact_and_cancel_reverts(bg, admin):
    name = new_topic(admin, {0: [1, 2, 3], 1: [2, 3, 4], 2: [3, 4, 5]}, HUGE, prefix="slow")
    assert admin.alter_partition_reassignments({
        TopicPartition(name, 0): [5, 2, 3], TopicPartition(name, 2): [3, 1]}) == {
        TopicPartition(name, 0): None, TopicPartition(name, 2): None}
    expected = {TopicPartition(name, 0): {"replicas": [5, 2, 3, 1], "adding_replicas": [5], "removing_replicas": [1]},
                TopicPartition(name, 2): {"replicas": [3, 1, 4, 5], "adding_replicas": [1],
                                          "removing_replicas": [4, 5]}}
    everything = admin.list_partition_reassignments()
    assert {tp: v for tp, v in everything.items() if tp.topic == name} == expected
    assert admin.list_partition_reassignments({name: [2, 1, 9], "absent": [0]}) == {
        TopicPartition(name, 2): expected[TopicPartition(name, 2)]}
    assert admin.list_partition_reassignments([]) == {}
    assert admin.alter_partition_reassignments({TopicPartition(name, 0): None, TopicPartition(name, 1): None}) == {
        TopicPartition(name, 0): None, TopicPartition(name, 1): NoReassignmentInProgressError}
    state = partition(bg, name, 0)
    assert (state.replicas, state.isr, state.reassigning) == ((2, 3, 1), (1, 2, 3), False)
    assert admin.list_partition_reassignments({name: [0, 1, 2]}) == {
        TopicPartition(name, 2): expected[TopicPartition(name, 2)]}
    topic_id = bg.call(lambda: bg.cluster.controller.committed.topic_ids[name])
    wait_until(bg, lambda image: (topic_id, 0) not in bg.cluster.broker(5).replica_manager.replicas)


def test_completes_keeping_the_leader_and_deletes_the_removed_replica(bg, admin):
    name = new_topic(admin, {0: [1, 2, 3]})
    assert admin.alter_partition_reassignments({TopicPartition(name, 0): [1, 2, 4]}) == {
        TopicPartition(name, 0): None}
    wait_until(bg, lambda image: not image.topic(name).partitions[0].reassigning)
    state = partition(bg, name, 0)
    assert (state.replicas, state.isr, state.leader, state.leader_epoch) == ((1, 2, 4), (1, 2, 4), 1, 1)
    described = admin.describe_topics([name])[0]["partitions"][0]
    assert (described["leader_id"], described["replica_nodes"], sorted(described["isr_nodes"])) == (
        1, [1, 2, 4], [1, 2, 4])
    topic_id = bg.call(lambda: bg.cluster.controller.committed.topic_ids[name])
    wait_until(bg, lambda image: (topic_id, 0) not in bg.cluster.broker(3).replica_manager.replicas)
    assert bg.call(lambda: bg.cluster.broker(4).replica_manager.replicas[(topic_id, 0)].log_bytes) == 100 * 1024 ** 2


def test_completes_with_a_leader_change(bg, admin):
    name = new_topic(admin, {0: [1, 2, 3]})
    admin.alter_partition_reassignments({TopicPartition(name, 0): [4, 5, 3]})
    wait_until(bg, lambda image: not image.topic(name).partitions[0].reassigning)
    state = partition(bg, name, 0)
    assert (state.replicas, state.leader, state.leader_epoch) == ((4, 5, 3), 4, 1)
    assert sorted(state.isr) == [3, 4, 5]
    assert admin.list_partition_reassignments({name: [0]}) == {}


def test_kip860_refused_and_allowed(bg, admin):
    name = new_topic(admin, {0: [1, 2, 3], 1: [1, 2, 3]}, HUGE, prefix="slow")
    response = raw_alter(admin, [(name, [(0, [1, 2]), (1, [2, 3, 4])])], allow_rf_change=False)
    assert response.allow_replication_factor_change is False
    assert errors_of(response) == [(name, 0, 38, "The replication factor is changed from 3 to 2"),
                                   (name, 1, 0, None)]
    # in flight [1,2,3] -> [2,3,4]: the factor compared is the target's, 3
    assert errors_of(raw_alter(admin, [(name, [(1, [1, 2])])], allow_rf_change=False)) == [
        (name, 1, 38, "The replication factor is changed from 3 to 2")]
    assert errors_of(raw_alter(admin, [(name, [(1, [1, 4, 5]), (0, None)])], allow_rf_change=False)) == [
        (name, 1, 0, None), (name, 0, 85, None)]
    allowed = raw_alter(admin, [(name, [(0, [1, 2])])], allow_rf_change=True)
    assert allowed.allow_replication_factor_change is True and errors_of(allowed) == [(name, 0, 0, None)]
    assert partition(bg, name, 0).replicas == (1, 2)


def test_concurrent_alters_all_commit(bg, admin):
    name = new_topic(admin, {i: [1, 2, 3] for i in range(8)}, HUGE, prefix="slow")
    results = []

    def alter(index):
        client = KafkaAdminClient(bootstrap_servers=bg.bootstrap)
        try:
            results.append(client.alter_partition_reassignments({TopicPartition(name, index): [4, 2, 3]}))
        finally:
            client.close()

    threads = [threading.Thread(target=alter, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(results, key=lambda r: next(iter(r)).partition) == [{TopicPartition(name, i): None}
                                                                      for i in range(8)]
    listed = admin.list_partition_reassignments({name: list(range(8))})
    assert len(listed) == 8 and all(v["adding_replicas"] == [4] for v in listed.values())


def test_second_reassignment_back_to_the_original_completes(bg, admin):
    name = new_topic(admin, {0: [1, 2, 3]}, HUGE, prefix="slow")
    admin.alter_partition_reassignments({TopicPartition(name, 0): [4, 5, 1]})
    admin.alter_partition_reassignments({TopicPartition(name, 0): [1, 2, 3]})
    wait_until(bg, lambda image: not image.topic(name).partitions[0].reassigning)
    state = partition(bg, name, 0)
    assert (state.replicas, sorted(state.isr), state.leader) == ((1, 2, 3), [1, 2, 3], 1)
    assert admin.list_partition_reassignments({name: [0]}) == {}


def test_second_reassignment_keeps_every_target_replica(bg, admin):
    name = new_topic(admin, {0: [1, 2, 3]})
    admin.alter_partition_reassignments({TopicPartition(name, 0): [1, 2, 4]})
    admin.alter_partition_reassignments({TopicPartition(name, 0): [1, 2, 3, 4]})
    wait_until(bg, lambda image: not image.topic(name).partitions[0].reassigning)
    state = partition(bg, name, 0)
    assert (state.replicas, sorted(state.isr)) == ((1, 2, 3, 4), [1, 2, 3, 4])


def kafka_python_cli(bg, *args) -> str:
    command = [sys.executable, "-c", "import sys; from kafka.cli import run_cli; sys.exit(run_cli())",
               "admin", "-b", bg.bootstrap.split(",")[0], "--format", "json", *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_kafka_python_cli_starts_lists_and_cancels(bg, admin):
    name = new_topic(admin, {0: [1, 2, 3], 1: [1, 2, 3]}, HUGE, prefix="slow")
    started = json.loads(kafka_python_cli(bg, "partitions", "alter-reassignments", "-r", f"{name}:0=5,2,3",
                                          "-r", f"{name}:1=1,2,2"))
    assert started == {f"{name}:0": None, f"{name}:1": "InvalidReplicationAssignmentError"}
    listed = kafka_python_cli(bg, "partitions", "list-reassignments", "-p", f"{name}:0", "-p", f"{name}:1")
    assert json.loads(listed) == {f"{name}:0": {"replicas": [5, 2, 3, 1], "adding_replicas": [5],
                                                "removing_replicas": [1]}}
    cancelled = json.loads(kafka_python_cli(bg, "partitions", "alter-reassignments", "-r", f"{name}:0=cancel"))
    assert cancelled == {f"{name}:0": None} and not partition(bg, name, 0).reassigning
