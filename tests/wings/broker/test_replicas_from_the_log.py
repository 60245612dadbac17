"""Brokers take their replicas from the metadata log (server/broker/replica_manager.py), as KRaft
brokers do: a broker that misses changes while it is stopped catches up from the log, or from the
leader's snapshot when the log no longer reaches back that far, and ends with the replicas the image
gives it; the replicas the image no longer gives it are deleted. Changes go over the wire (CreateTopics,
DeleteTopics, AlterPartitionReassignments to a broker's listener); replicas are read back with
DescribeLogDirs from the broker itself."""
from __future__ import annotations


import pytest

from kraftwire.codec.messages import (AlterPartitionReassignmentsRequest, CreateTopicsRequest, DeleteTopicsRequest,
                                     DescribeLogDirsRequest)
from kraftwire.server.host.cluster import Cluster
from kraftwire.server.raft import RaftConfig
from kraftwire.server.wire.client import KafkaClient
from tests.wings.broker.test_metadata_followers import eventually

Alter = AlterPartitionReassignmentsRequest


async def ask(broker, request, version: int | None = None):
    client = KafkaClient(broker.host, broker.port, "replicas-test")
    try:
        return await client.send(request, version)
    finally:
        await client.close()


async def create(broker, name: str, assignment: list[list[int]]) -> None:
    answer = await ask(broker, CreateTopicsRequest(timeout_ms=10000, topics=[CreateTopicsRequest.CreatableTopic(
        name=name, num_partitions=-1, replication_factor=-1, configs=[],
        assignments=[CreateTopicsRequest.CreatableReplicaAssignment(partition_index=i, broker_ids=replicas)
                     for i, replicas in enumerate(assignment)])]))
    assert answer.topics[0].error_code == 0, answer


async def delete(broker, name: str) -> None:
    answer = await ask(broker, DeleteTopicsRequest(topic_names=[name], timeout_ms=10000), 5)
    assert answer.responses[0].error_code == 0, answer


async def move(broker, name: str, replicas: list[int]) -> None:
    answer = await ask(broker, Alter(timeout_ms=10000, topics=[Alter.ReassignableTopic(name=name, partitions=[
        Alter.ReassignablePartition(partition_index=0, replicas=replicas)])]))
    assert [p.error_code for t in answer.responses for p in t.partitions] == [0], answer


async def hosted(broker) -> set[tuple[str, int]]:
    """The partitions a broker's DescribeLogDirs lists, over every log directory."""
    answer = await ask(broker, DescribeLogDirsRequest(topics=None), 4)
    return {(t.name, p.partition_index) for result in answer.results for t in result.topics for p in t.partitions}


def assigned(image, broker_id: int) -> set[tuple[str, int]]:
    return {(topic.name, index) for topic, index, state in image.partitions() if broker_id in state.replicas}


async def test_a_restarted_broker_ends_with_the_replicas_the_log_gives_it():
    async with Cluster(brokers=3) as cluster:
        first, third = cluster.broker(1), cluster.broker(3)
        await create(first, "moved", [[3, 1]])
        await create(first, "deleted", [[3, 1], [1, 3]])
        await create(first, "kept", [[3, 2]])
        want = {("moved", 0), ("deleted", 0), ("deleted", 1), ("kept", 0)}
        await eventually(lambda: _equal(hosted(third), want), 30, "broker 3 to host its replicas")
        await third.stop()
        await move(first, "moved", [1, 2])
        await delete(first, "deleted")
        await cluster.wait_until(lambda image: image.topic("deleted") is None
                                 and image.topic("moved").partitions[0].replicas == (1, 2))
        # stopped, it acted on none of that
        assert len(third.replica_manager.replicas) == 4
        await third.start()
        assert await hosted(third) == {("kept", 0)} == assigned(cluster.controller.committed, 3)
        assert sum(third.log_manager._current_logs.values()) == 1  # the deleted replicas left their directory
        # and as the leader of "kept" sees it caught up once unfenced, it is back in the ISR
        await cluster.wait_until(lambda image: 3 in image.topic("kept").partitions[0].isr, timeout=30)


@pytest.mark.parametrize("away", ["stopped", "cut off"])
async def test_a_broker_of_another_process_catches_up_from_the_snapshot(tmp_path, away):
    """Broker 3 runs in a Cluster of its own (as ``kraftwire broker`` does), with its own image. While
    it is stopped, or running but cut off from the controller, the controller's log moves past it and is
    retained only from a snapshot on: it loads that snapshot and takes its replicas from it (at its
    start, or at once when it runs)."""
    config = RaftConfig(segment_bytes=1500, retention_bytes=1)
    async with Cluster(brokers=2, log_config=config) as cluster:
        controller = cluster.controller_node
        async with Cluster(1, node_ids=[3], cluster_id=cluster.controller.cluster_id,
                           voters={controller.node_id: (controller.host, controller.port)},
                           log_dir_paths=[tmp_path / "broker-3"]) as other:
            third, first = other.broker(3), cluster.broker(1)
            await create(first, "moved", [[3, 1]])
            await create(first, "deleted", [[1, 3]])
            await create(first, "kept", [[3, 1]])
            await eventually(lambda: _equal(hosted(third), {("moved", 0), ("deleted", 0), ("kept", 0)}),
                             30, "broker 3 to host its replicas")
            if away == "stopped":
                await third.stop()
            else:
                # the harness's link table (Cluster.cut_link checks for nodes of its own process)
                other.links.cut.add(frozenset((3, controller.node_id)))
            await move(first, "moved", [1, 2])
            await delete(first, "deleted")
            await create(first, "elsewhere", [[1, 2]])
            await cluster.wait_until(lambda image: image.topic("moved").partitions[0].replicas == (1, 2))
            for i in range(8):  # enough records that whole segments fall below the snapshot
                await create(first, f"filler-{i}", [[1]])
            await cluster.log.snapshot()  # segments wholly below it are deleted: broker 3's offset is gone
            loaded = third.metadata.loaded_snapshots
            assert len(third.replica_manager.replicas) == 3  # it has seen none of that
            if away == "stopped":
                await third.start()
            else:
                other.heal_link(3, controller.node_id)
                await eventually(lambda: _true(third.metadata.loaded_snapshots > loaded), 30, "the snapshot")
            assert third.metadata.loaded_snapshots == loaded + 1
            assert await hosted(third) == {("kept", 0)} == assigned(cluster.controller.committed, 3)


async def _equal(value, expected) -> bool:
    return await value == expected


async def _true(value) -> bool:
    return value


async def test_a_restarted_process_loads_the_snapshot_once_for_all_its_brokers(tmp_path):
    """Restarted on a log retained only from a snapshot on, a process's 3 brokers (one shared image, each
    fetching for itself, each pointed at the snapshot by its first fetch) download and load it once
    between them, and each ends with the replicas that image gives it, no more."""
    config = RaftConfig(segment_bytes=1500, retention_bytes=1)
    async with Cluster(brokers=3, data_dir=tmp_path, log_config=config) as cluster:
        first = cluster.broker(1)
        await create(first, "spread", [[1, 2], [2, 3], [3, 1]])
        await create(first, "gone", [[1, 3]])
        await move(first, "spread", [2, 3])
        await delete(first, "gone")
        await cluster.wait_until(lambda image: image.topic("spread").partitions[0].replicas == (2, 3))
        for i in range(8):  # enough records that whole segments fall below the snapshot
            await create(first, f"filler-{i}", [[2]])
        await cluster.log.snapshot()
        assert cluster.log._log_start_offset() > 0
    async with Cluster(brokers=3, data_dir=tmp_path, log_config=config) as restarted:
        assert restarted.metadata.loaded_snapshots == 1
        assert sorted(b.metadata.loaded_snapshots for b in restarted.brokers) == [0, 0, 1]
        image = restarted.controller.committed
        assert image.topic("spread").partitions[0].replicas == (2, 3) and image.topic("gone") is None
        for broker in restarted.brokers:
            assert await hosted(broker) == assigned(image, broker.broker_id)
