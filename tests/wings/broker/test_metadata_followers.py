"""Brokers follow the metadata log as KRaft observers (server/broker/metadata_follower.py): each fetches
``__cluster_metadata`` from the active controller, shows in DescribeQuorum with its directory and log
end offset, answers Metadata from what it fetched (so it lags while it cannot fetch; a forwarded
CreateTopics is answered once it has the topic, a forwarded reassignment as the controller answers),
and follows the new active controller after a failover."""
from __future__ import annotations

import asyncio
import socket
import time
import uuid

import pytest
from kafka import KafkaAdminClient, TopicPartition
from kafka.admin import NewTopic

from kraftwire.codec.messages import CreateTopicsRequest, DescribeQuorumRequest, MetadataRequest
from kraftwire.server.broker.metadata_follower import FollowerView
from kraftwire.server.host.cluster import Cluster
from kraftwire.server.raft import RaftConfig
from kraftwire.server.wire.client import KafkaClient

QUORUM_REQUEST = DescribeQuorumRequest(topics=[DescribeQuorumRequest.TopicData(
    topic_name="__cluster_metadata", partitions=[DescribeQuorumRequest.PartitionData(partition_index=0)])])


async def ask(host: str, port: int, request, version: int | None = None):
    client = KafkaClient(host, port, "followers-test")
    try:
        return await client.send(request, version)
    finally:
        await client.close()


async def topics_on(broker) -> set[str]:
    """The topics a broker's Metadata answer names."""
    answer = await ask(broker.host, broker.port, MetadataRequest(topics=None), 12)
    return {t.name for t in answer.topics}


async def quorum_on(node):
    """DescribeQuorum's partition, asked on a controller's own listener."""
    return (await ask(node.host, node.port, QUORUM_REQUEST, 2)).topics[0].partitions[0]


async def create_on(node, name: str) -> None:
    request = CreateTopicsRequest(timeout_ms=10000, topics=[CreateTopicsRequest.CreatableTopic(
        name=name, num_partitions=2, replication_factor=2, assignments=[], configs=[])])
    answer = await ask(node.host, node.port, request, 7)
    assert answer.topics[0].error_code == 0, answer


async def eventually(predicate, timeout: float = 20.0, what: str = "the expected state"):
    deadline = asyncio.get_running_loop().time() + timeout
    while not (value := await predicate()):
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)
    return value


def test_kafka_python_lists_every_broker_as_an_observer_with_its_directory(bg_cluster):
    admin = KafkaAdminClient(bootstrap_servers=bg_cluster.bootstrap.split(",")[0], client_id="followers-test")
    admin.create_topics([NewTopic("through-broker-1", 2, 2)])  # made through broker 1 ...
    deadline = time.monotonic() + 30
    while True:
        partition = admin.describe_metadata_quorum()["topics"][0]["partitions"][0]
        hw = partition["high_watermark"]
        if all(o["log_end_offset"] == hw for o in partition["observers"]) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    admin.close()
    brokers = bg_cluster.cluster.brokers
    directories = {b.broker_id: str(b.log_dirs[0]) for b in brokers}
    assert [o["replica_id"] for o in partition["observers"]] == [1, 2, 3]
    for observer in partition["observers"]:
        assert str(observer["replica_directory_id"]) == directories[observer["replica_id"]]
        assert observer["log_end_offset"] == hw > 0
        assert 0 < observer["last_caught_up_timestamp"] <= observer["last_fetch_timestamp"]
    ends = bg_cluster.call(lambda: [b.metadata.end_offset for b in brokers])
    assert all(end >= hw for end in ends)
    for broker in brokers:  # ... and every broker's Metadata names it once it has fetched it
        bg_cluster.run(eventually(lambda: _names(broker, "through-broker-1"), what=f"broker {broker.broker_id}"))


def test_a_forwarded_reassignment_is_answered_as_the_controller_answers_and_a_create_once_the_broker_has_it(
        bg_cluster):
    """A broker waits for its metadata to hold what the controller committed (asking the controller's
    high watermark with DescribeQuorum) before it answers a forwarded CreateTopics, whose topic a client
    reads back from the broker's Metadata; AlterPartitionReassignments and ListPartitionReassignments,
    read back from the controller, are answered as the controller answers them, as Kafka's brokers do,
    and the listing still shows the client's own change."""
    controller = bg_cluster.cluster.controller_node

    def probes() -> int:
        counts = bg_cluster.call(lambda: controller.listener.request_stats()[0])
        return sum(count for (api_key, _, _), count in counts.items() if api_key == 55)

    admin = KafkaAdminClient(bootstrap_servers=bg_cluster.bootstrap.split(",")[0], client_id="followers-test")
    try:
        before = probes()
        created = admin.create_topics({"read-back": {"assignments": {i: [1] for i in range(4)},
                                                     "configs": {"kraftwire.partition.size.bytes": str(10 ** 15)}}})
        assert created["topics"][0]["error_code"] == 0, created
        assert probes() > before  # the broker asked where the committed log ends before it answered ...
        assert bg_cluster.call(lambda: [b.image.topic("read-back") is not None for b in bg_cluster.cluster.brokers]) \
            == [True, True, True]  # ... and every broker's image has the topic by then
        described = admin.describe_topics(["read-back"])
        assert [(t["name"], t["error_code"], len(t["partitions"])) for t in described] == [("read-back", 0, 4)]

        before = probes()
        moves = {TopicPartition("read-back", i): [2] for i in range(4)}
        assert not any(admin.alter_partition_reassignments(moves).values())
        listed = admin.list_partition_reassignments()
        assert {tp: (r["replicas"], r["adding_replicas"], r["removing_replicas"]) for tp, r in listed.items()} == {
            tp: ([2, 1], [2], [1]) for tp in moves}
        assert probes() == before  # neither waited for a broker's metadata
    finally:
        admin.close()


async def test_brokers_cut_off_from_the_controller_show_older_metadata_until_they_fetch(cluster):
    controller = cluster.controller_node
    views = [b.metadata for b in cluster.brokers]
    failed = [v.failed_fetches for v in views]
    for broker in cluster.brokers:
        cluster.cut_link(broker.broker_id, controller.node_id)

    async def every_follower_failed_since_the_cut():
        return all(v.failed_fetches > before for v, before in zip(views, failed))
    await eventually(every_follower_failed_since_the_cut, what="every follower to fail a fetch")
    await create_on(controller, "while-cut")  # on the controller's own listener: the brokers cannot forward
    assert cluster.controller.committed.topic("while-cut") is not None
    for broker in cluster.brokers:
        assert "while-cut" not in await topics_on(broker)
    lagging = await quorum_on(controller)
    assert [o.replica_id for o in lagging.observers] == [1, 2, 3]
    assert all(o.log_end_offset < lagging.high_watermark for o in lagging.observers)

    for broker in cluster.brokers:
        cluster.heal_link(broker.broker_id, controller.node_id)
    for broker in cluster.brokers:
        await eventually(lambda: _names(broker, "while-cut"), what=f"broker {broker.broker_id} to fetch the topic")

    async def observers_caught_up():
        partition = await quorum_on(controller)
        return all(o.log_end_offset == partition.high_watermark for o in partition.observers)
    await eventually(observers_caught_up, what="the observers to reach the high watermark")


async def _names(broker, topic: str) -> bool:
    return topic in await topics_on(broker)


async def test_brokers_follow_the_new_active_controller_after_a_kill():
    async with Cluster(brokers=3, controllers=3) as cluster:
        first = (await cluster.wait_for_active_controller()).node_id
        await create_on(cluster.brokers[0], "before-failover")
        await cluster.kill_controller(first)
        second = (await cluster.wait_for_active_controller()).node_id
        assert second != first
        await create_on(cluster.brokers[1], "after-failover")  # forwarded to the new active controller
        for broker in cluster.brokers:
            await eventually(lambda: _names(broker, "after-failover"),
                             what=f"broker {broker.broker_id} to fetch from the new leader")
            assert "before-failover" in await topics_on(broker)
        assert {b.metadata.leader_id for b in cluster.brokers} == {second}

        async def observed_by_the_new_leader():
            partition = await quorum_on(cluster.controller_node)
            return (partition.leader_id == second and [o.replica_id for o in partition.observers] == [1, 2, 3]
                    and all(o.log_end_offset == partition.high_watermark for o in partition.observers)
                    and partition)
        partition = await eventually(observed_by_the_new_leader, what="the new leader to list the brokers")
        assert {o.replica_directory_id for o in partition.observers} == {b.log_dirs[0] for b in cluster.brokers}


async def test_a_follower_loads_the_leaders_snapshot_then_fetches_on_from_its_end(cluster):
    await create_on(cluster.brokers[0], "in-the-snapshot")
    snapshot = await cluster.log.snapshot()
    await create_on(cluster.brokers[0], "after-the-snapshot")
    controller = cluster.controller_node
    view = FollowerView(99, uuid.uuid4(), lambda: [(controller.host, controller.port)], cluster.controller.cluster_id)
    try:
        await view.fetch_snapshot(snapshot.end_offset, snapshot.epoch)
        assert view.replica.end_offset == view.end_offset == snapshot.end_offset
        assert view.image.topic("in-the-snapshot") is not None and view.image.topic("after-the-snapshot") is None
        assert view.image.offset == snapshot.end_offset - 1
        await view.start()
        await view.wait_caught_up(20)
        assert view.image.topic("after-the-snapshot") is not None
        assert same_metadata(view.image, cluster.controller.committed)
    finally:
        await view.close()


def same_metadata(image, committed) -> bool:
    return ({t.name: t.partitions for t in image.topics.values()} == {t.name: t.partitions for t in committed.topics.values()}
            and image.brokers == committed.brokers and image.configs == committed.configs)


@pytest.mark.parametrize("kraft_version", [0, 1])
async def test_a_follower_below_the_log_start_is_pointed_at_the_snapshot_by_its_fetch(kraft_version):
    async with Cluster(brokers=2, log_config=RaftConfig(segment_bytes=1500, retention_bytes=1),
                       kraft_version=kraft_version) as cluster:
        for i in range(8):
            await create_on(cluster.brokers[0], f"retained-{i}")
        await cluster.log.snapshot()  # segments wholly below it are deleted: the log no longer starts at 0
        await create_on(cluster.brokers[0], "after-retention")
        controller = cluster.controller_node
        view = FollowerView(99, uuid.uuid4(), lambda: [(controller.host, controller.port)],
                            cluster.controller.cluster_id)
        try:
            await view.start()
            await view.wait_caught_up(20)
            assert view.loaded_snapshots == 1
            assert same_metadata(view.image, cluster.controller.committed)
            assert view.image.topic("after-retention") is not None
            assert view.image.kraft_version == kraft_version  # from the snapshot: the log below it is gone
        finally:
            await view.close()


async def test_a_new_follower_is_caught_up_with_the_high_watermark_it_first_saw(cluster):
    for i in range(3):
        await create_on(cluster.brokers[0], f"before-{i}")
    high_watermark = cluster.log.high_watermark
    controller = cluster.controller_node
    view = FollowerView(99, uuid.uuid4(), lambda: [(controller.host, controller.port)], cluster.controller.cluster_id)
    try:
        await view.start()
        await view.wait_caught_up(20)
        assert view.replica.end_offset >= high_watermark and view.loaded_snapshots == 0
        assert all(view.image.topic(f"before-{i}") is not None for i in range(3))
        assert same_metadata(view.image, cluster.controller.committed)
    finally:
        await view.close()


async def test_a_restarted_cluster_with_snapshots_has_its_brokers_fetch_the_log_anew(tmp_path):
    snapshots = RaftConfig(snapshot_every_records=10)
    async with Cluster(brokers=2, data_dir=tmp_path, log_config=snapshots) as cluster:
        for i in range(3):
            await create_on(cluster.brokers[0], f"kept-{i}")
    async with Cluster(brokers=2, data_dir=tmp_path, log_config=snapshots) as restarted:
        for broker in restarted.brokers:  # a broker opens its listener once caught up
            assert {"kept-0", "kept-1", "kept-2"} <= await topics_on(broker)
        # the brokers' registrations after the restart are committed while they fetch: wait for them
        async def matches() -> bool:
            return same_metadata(restarted.brokers[0].image, restarted.controller.committed)
        await eventually(matches, what="broker 0's image to match the committed metadata")


async def test_a_starting_follower_that_makes_no_progress_gives_up_saying_where_it_stood():
    """A broker waits at start as long as its metadata log makes progress; with no controller to answer
    (a port the kernel gave, bound but not listening) it gives up after the stall timeout, saying so."""
    with socket.socket() as unanswered:
        unanswered.bind(("127.0.0.1", 0))
        address = unanswered.getsockname()
        view = FollowerView(99, uuid.uuid4(), lambda: [address], "no-cluster")
        try:
            await view.start()
            with pytest.raises(TimeoutError, match=r"broker 99: the metadata log made no progress for 0.5 s "
                                                   r"\(applied below offset 0, high watermark not known yet"):
                await view.wait_caught_up(0.5)
            assert view.failed_fetches > 0
        finally:
            await view.close()
