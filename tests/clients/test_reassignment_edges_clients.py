"""Reassignment edge cases a user sees through kafka-python 3.0.12: a same-size move that completes while
a kept replica is out of the ISR, a shrink in flight listed by name, throttles kept for a source broker
of a reassignment still running, SUBTRACT removing only the first occurrence of an item, and a future
replica's lag measured against the replica it copies.

Topics named ``slow*`` are 1 PB per partition: their reassignments stay in flight as long as a test needs.
"""
from __future__ import annotations

import contextlib

import pytest
from kafka import KafkaAdminClient, TopicPartition, TopicPartitionReplica
from kafka.admin import AlterConfigOp, ConfigResource
from kafka.errors import NoError

from kraftwire.codec.messages import IncrementalAlterConfigsRequest
from kraftwire.server.host.cluster import BackgroundCluster
from kraftwire.server.wire.client import KafkaClient
from tests.clients.test_reassignment_clients import HUGE, new_topic, partition, wait_until as until

LEADER_RATE = "leader.replication.throttled.rate"
LEADER_REPLICAS = "leader.replication.throttled.replicas"
AUTO_REMOVE = "kraftwire.throttle.auto.remove.enable"
ALTER_DIRS_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"
BROKER = 4
SET, DELETE = 0, 1


@pytest.fixture(scope="module")
def bg():
    with BackgroundCluster(brokers=5, speed=50) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def admin(bg):
    client = KafkaAdminClient(bootstrap_servers=bg.bootstrap, request_timeout_ms=10000)
    yield client
    client.close()


def dynamic_broker_configs(admin, broker: str) -> dict[str, str]:
    """The dynamic (per-broker) configs DescribeConfigs reports for one broker."""
    found = admin.describe_configs([ConfigResource("BROKER", broker)], config_filter="all")["broker"][broker]
    return {k: e["value"] for k, e in found.items() if e["config_source"] == "DYNAMIC_BROKER_CONFIG"}


def set_cluster_default(bg, key: str, op: int, value: str | None) -> None:
    """IncrementalAlterConfigs on the cluster-wide broker default, resource "" (which neither kafka-python
    nor confluent-kafka can name), over TCP with kraftwire's own client."""
    Resource = IncrementalAlterConfigsRequest.AlterConfigsResource
    request = IncrementalAlterConfigsRequest(resources=[Resource(
        resource_type=BROKER, resource_name="",
        configs=[IncrementalAlterConfigsRequest.AlterableConfig(name=key, config_operation=op, value=value)])])

    async def send():
        broker = bg.cluster.broker(1)
        client = KafkaClient(broker.host, broker.port, "edges-test")
        try:
            return await client.send(request)
        finally:
            await client.close()

    answer = bg.run(send())
    assert [(r.error_code, r.resource_name) for r in answer.responses] == [(0, "")]


@contextlib.contextmanager
def fenced(bg, broker_id: int):
    """The broker asks to be fenced, so it leaves every ISR; it is unfenced again afterwards."""
    bg.run(bg.cluster.fence_broker(broker_id))
    try:
        yield
    finally:
        bg.run(bg.cluster.unfence_broker(broker_id))


def test_same_size_move_completes_while_a_kept_replica_is_out_of_sync(bg, admin):
    """Kafka 4.3's completion rule asks every kept replica to be in sync only when the replication factor
    shrinks: [1,2,3] -> [1,2,4] completes once 4 is in sync, with 2 still out of the ISR."""
    name = new_topic(admin, {0: [1, 2, 3]})
    with fenced(bg, 2):
        assert partition(bg, name, 0).isr == (1, 3)
        assert admin.alter_partition_reassignments({TopicPartition(name, 0): [1, 2, 4]}) == {
            TopicPartition(name, 0): None}
        until(bg, lambda image: not image.topic(name).partitions[0].reassigning)
        state = partition(bg, name, 0)
        assert (state.replicas, state.isr, state.leader) == ((1, 2, 4), (1, 4), 1)
        assert admin.list_partition_reassignments({name: [0]}) == {}
        described = admin.describe_topics([name])[0]["partitions"][0]
        assert (described["replica_nodes"], sorted(described["isr_nodes"])) == ([1, 2, 4], [1, 4])


def test_a_shrink_in_flight_is_listed_by_name_and_in_the_full_list(bg, admin):
    """A shrink waits for every kept replica to be in sync: with 2 fenced, [1,2,3] -> [1,2] stays in
    flight with nothing adding and 3 removing, and both ways of listing show it."""
    name = new_topic(admin, {0: [1, 2, 3], 1: [3, 4, 5]})
    with fenced(bg, 2):
        shrink_in_flight(bg, admin, name)


def shrink_in_flight(bg, admin, name: str) -> None:
    assert partition(bg, name, 0).isr == (1, 3)
    assert admin.alter_partition_reassignments({TopicPartition(name, 0): [1, 2]}) == {TopicPartition(name, 0): None}
    expected = {TopicPartition(name, 0): {"replicas": [1, 2, 3], "adding_replicas": [], "removing_replicas": [3]}}
    assert admin.list_partition_reassignments({name: [0, 1]}) == expected
    everything = admin.list_partition_reassignments()
    assert {tp: v for tp, v in everything.items() if tp.topic == name} == expected
    assert admin.alter_partition_reassignments({TopicPartition(name, 0): None}) == {TopicPartition(name, 0): None}
    assert partition(bg, name, 0).replicas == (1, 2, 3)


def test_auto_removal_keeps_the_throttle_of_a_source_broker_still_moving_data(bg, admin):
    """Two reassignments share brokers; when the fast one ends, only the broker no other reassignment
    has among its replicas loses its throttle. Broker 1 only leaves its partition in the slow one
    (removing, not adding), and still sends it data: its throttle stays."""
    rates = {str(b): "1048576" for b in range(1, 6)}
    for broker, rate in rates.items():
        assert admin.alter_configs([ConfigResource("BROKER", broker, {LEADER_RATE: rate})]) == {
            "broker": {broker: "OK"}}
    set_cluster_default(bg, AUTO_REMOVE, SET, "true")
    try:
        slow = new_topic(admin, {0: [1, 2, 3]}, HUGE, prefix="slow")
        fast = new_topic(admin, {0: [1, 4, 2]})
        admin.alter_partition_reassignments({TopicPartition(slow, 0): [2, 3, 5]})
        assert partition(bg, slow, 0)[:4] == ((2, 3, 5, 1), (1, 2, 3), (1,), (5,))
        admin.alter_partition_reassignments({TopicPartition(fast, 0): [4, 2, 3]})
        until(bg, lambda image: LEADER_RATE not in image.broker_configs("4"), timeout=60)
        assert partition(bg, slow, 0).reassigning and not partition(bg, fast, 0).reassigning
        for broker in ("1", "2", "3", "5"):
            assert dynamic_broker_configs(admin, broker) == {LEADER_RATE: "1048576"}, broker
        assert dynamic_broker_configs(admin, "4") == {}
        admin.alter_partition_reassignments({TopicPartition(slow, 0): None})
        until(bg, lambda image: all(LEADER_RATE not in image.broker_configs(b) for b in rates))
    finally:
        set_cluster_default(bg, AUTO_REMOVE, DELETE, None)
        for broker in rates:
            admin.alter_configs([ConfigResource("BROKER", broker, {LEADER_RATE: (AlterConfigOp.DELETE, None)})])


def test_subtract_removes_only_the_first_occurrence(bg, admin):
    """Kafka's SUBTRACT removes an item once (List.remove), so a repeated item keeps its later copy."""
    name = new_topic(admin, {0: [1, 2]})
    assert admin.alter_configs([ConfigResource("TOPIC", name, {LEADER_REPLICAS: "0:1,0:2,0:1,0:1"})]) == {
        "topic": {name: "OK"}}
    admin.alter_configs([ConfigResource("TOPIC", name, {LEADER_REPLICAS: (AlterConfigOp.SUBTRACT, "0:1,0:2")})])
    found = admin.describe_configs([ConfigResource("TOPIC", name, [LEADER_REPLICAS])])["topic"][name]
    assert found[LEADER_REPLICAS]["value"] == "0:1,0:1"
    assert bg.call(lambda: bg.cluster.controller.committed.topic_configs(name)) == {LEADER_REPLICAS: "0:1,0:1"}


def test_a_future_replica_lags_behind_the_replica_it_copies():
    """A replica being added (still copying from its leader) is moved to another directory: its future
    replica copies the current one, so its lag is what the current replica has and it has not, not
    what the whole partition has."""
    with BackgroundCluster(brokers=3, log_dirs=2) as bg:
        client = KafkaAdminClient(bootstrap_servers=bg.bootstrap, request_timeout_ms=10000)
        try:
            name = new_topic(client, {0: [1, 2]}, HUGE, prefix="slow")
            client.alter_configs([ConfigResource("BROKER", "3", {ALTER_DIRS_RATE: str(64 << 10)})])
            until(bg, lambda image: image.broker_configs("3").get(ALTER_DIRS_RATE) == str(64 << 10))
            client.alter_partition_reassignments({TopicPartition(name, 0): [1, 2, 3]})
            until(bg, lambda image: 3 in image.topic(name).partitions[0].replicas
                  and image.topic(name).partitions[0].directories[2].int >= 100)
            (before,) = client.describe_log_dirs(brokers=[3])
            source = next(d["log_dir"] for d in before["log_dirs"] if d["topics"])
            target = next(d["log_dir"] for d in before["log_dirs"] if d["log_dir"] != source)
            replica = TopicPartitionReplica(name, 0, 3)
            assert client.alter_replica_log_dirs({replica: target}) == {replica: NoError}
            (during,) = client.describe_log_dirs(brokers=[3])
            listed = {(d["log_dir"], p["is_future_key"]): p for d in during["log_dirs"] for t in d["topics"]
                      for p in t["partitions"]}
            assert set(listed) == {(source, False), (target, True)}
            current, future = listed[(source, False)], listed[(target, True)]
            assert current["partition_size"] + current["offset_lag"] == 10 ** 15
            assert 0 < current["partition_size"] < 10 ** 15
            assert future["partition_size"] + future["offset_lag"] == current["partition_size"]
        finally:
            client.close()
