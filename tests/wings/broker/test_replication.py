"""Simulated replication end to end: brokers acting on the metadata log, data movement under throttles, AlterPartition
from leaders, ISR healing after a restart, and throttle auto-removal.

Requests go over TCP with kraftwire's own client (what brokers and the controller use between them);
configs are written as committed ConfigRecords through the controller. Durations are simulated time,
from the copies' own start and end: never the wall clock, which the machine's load stretches.
"""
from __future__ import annotations

import pytest

from kraftwire.codec.messages import (AlterPartitionReassignmentsRequest, AlterPartitionRequest, ApiVersionsRequest,
                                     CreateTopicsRequest, LeaderAndIsrRequest, ListPartitionReassignmentsRequest)
from kraftwire.server.wire.client import KafkaClient, KafkaClientError
from kraftwire.server.host.cluster import Cluster
from topic_records import BROKER, TOPIC, set_configs

MiB = 1024 * 1024
BANDWIDTH = "kraftwire.replication.bandwidth.bytes.per.second"
Request = AlterPartitionReassignmentsRequest
LEADER_RATE, FOLLOWER_RATE = "leader.replication.throttled.rate", "follower.replication.throttled.rate"
LEADER_REPLICAS, FOLLOWER_REPLICAS = "leader.replication.throttled.replicas", "follower.replication.throttled.replicas"


async def create(cluster, name, assignment, configs=None):
    """CreateTopics with a manual assignment, over the wire; returns the topic id."""
    client = KafkaClient(cluster.brokers[0].host, cluster.brokers[0].port, "test-setup")
    try:
        response = await client.send(CreateTopicsRequest(timeout_ms=10000, topics=[CreateTopicsRequest.CreatableTopic(
            name=name, num_partitions=-1, replication_factor=-1,
            assignments=[CreateTopicsRequest.CreatableReplicaAssignment(partition_index=i, broker_ids=replicas)
                         for i, replicas in enumerate(assignment)],
            configs=[CreateTopicsRequest.CreatableTopicConfig(name=k, value=v) for k, v in (configs or {}).items()])]))
    finally:
        await client.close()
    assert response.topics[0].error_code == 0, response
    return response.topics[0].topic_id


async def reassign(client, topic, targets: dict):
    response = await client.send(Request(topics=[Request.ReassignableTopic(name=topic, partitions=[
        Request.ReassignablePartition(partition_index=p, replicas=r) for p, r in targets.items()])]))
    assert [p.error_code for t in response.responses for p in t.partitions] == [0] * len(targets)


async def reassign_through(broker, topic, targets: dict):
    """``reassign`` over a connection of its own to ``broker``."""
    client = KafkaClient(broker.host, broker.port, "test")
    try:
        await reassign(client, topic, targets)
    finally:
        await client.close()


def reassigning(cluster, topic, index=0) -> bool:
    return cluster.controller.committed.topic(topic).partitions[index].reassigning


@pytest.fixture
async def client(cluster_of):
    c = KafkaClient(cluster_of.brokers[0].host, cluster_of.brokers[0].port, "test")
    yield c
    await c.close()


@pytest.fixture
async def cluster_of(request):
    async with Cluster(**getattr(request, "param", {"brokers": 4, "speed": 4})) as c:
        yield c


async def test_throttled_move_takes_as_long_as_its_rate_says(cluster_of, client):
    """100 MiB at 100 MiB/s, then at a 25 MiB/s leader throttle: four times as long, in simulated time
    (the copy's own start and end, which the machine's load cannot stretch)."""
    topic_ids = {"free": await create(cluster_of, "free", [[1]]),
                 "slow": await create(cluster_of, "slow", [[1]], {LEADER_REPLICAS: "*"})}
    await set_configs(cluster_of, BROKER, "1", {LEADER_RATE: str(25 * MiB)})
    durations = {}
    for topic in ("free", "slow"):
        await cluster_of.pause_replication(2)  # broker 2's copy waits, so the test cannot miss it
        await reassign(client, topic, {0: [2]})
        key = (topic_ids[topic], 0, 2)
        await cluster_of.wait_until(lambda image: key in cluster_of.network.copies
                                    and (cluster_of.network.copies[key].size or 0) > 0, timeout=30)
        copy = cluster_of.network.copies[key]  # it leaves the network once broker 2 leads
        await cluster_of.resume_replication(2)
        (progress,) = cluster_of.reassignment_progress().values()
        assert progress["rate"] == {"free": 100, "slow": 25}[topic] * MiB
        assert progress["bytes_moved"] + progress["bytes_left"] == 100 * MiB
        await cluster_of.wait_until(lambda image: not reassigning(cluster_of, topic), timeout=60)
        durations[topic] = copy.finished_at - copy.started_at
    assert durations == {"free": pytest.approx(1.0), "slow": pytest.approx(4.0)}


async def test_throttle_rate_is_shared_and_only_listed_replicas_are_throttled(cluster_of, client):
    await create(cluster_of, "t", [[1], [1], [1]], {"kraftwire.partition.size.bytes": str(10 ** 15),
                                                    FOLLOWER_REPLICAS: "0:3,1:3"})
    await set_configs(cluster_of, BROKER, "3", {FOLLOWER_RATE: str(10 * MiB)})
    await reassign(client, "t", {0: [3], 1: [3], 2: [3]})
    await cluster_of.wait_until(lambda image: all(p["rate"] for p in cluster_of.reassignment_progress().values()))
    rates = {key[1]: p["rate"] for key, p in cluster_of.reassignment_progress().items()}
    # 0 and 1 share broker 3's follower rate; 2 takes what is left of broker 3's 100 MiB/s bandwidth
    assert rates == {0: 5 * MiB, 1: 5 * MiB, 2: 90 * MiB}
    await set_configs(cluster_of, BROKER, "3", {FOLLOWER_RATE: None})
    rates = {key[1]: p["rate"] for key, p in cluster_of.reassignment_progress().items()}
    assert rates == {0: 100 * MiB / 3, 1: 100 * MiB / 3, 2: 100 * MiB / 3}


async def test_removed_replicas_are_deleted_and_new_ones_created(cluster_of, client):
    topic_id = await create(cluster_of, "t", [[1, 2]])
    await reassign(client, "t", {0: [3, 4]})
    await cluster_of.wait_until(lambda image: not reassigning(cluster_of, "t"))
    await cluster_of.wait_until(lambda image: all(
        ((topic_id, 0) in b.replica_manager.replicas) == (b.broker_id in (3, 4)) for b in cluster_of.brokers))
    leader = cluster_of.controller.committed.topic("t").partitions[0].leader
    hosted = cluster_of.broker(leader).replica_manager.replicas[(topic_id, 0)]
    assert (hosted.leader, hosted.replicas, hosted.adding, hosted.removing) == (leader, (3, 4), (), ())


@pytest.mark.parametrize("cluster_of", [{"brokers": 3, "speed": 10, "session_timeout_ms": 1000}], indirect=True)
async def test_isr_heals_after_a_broker_restart(cluster_of):
    await create(cluster_of, "t", [[1, 2, 3], [3, 1, 2]])
    await cluster_of.broker(3).stop()
    await cluster_of.wait_until(lambda image: all(3 not in s.isr for _, _, s in image.partitions()), timeout=30)
    assert cluster_of.controller.committed.topic("t").partitions[1].leader == 1
    await cluster_of.broker(3).start()
    await cluster_of.wait_until(lambda image: all(sorted(s.isr) == [1, 2, 3] for _, _, s in image.partitions()),
                                timeout=30)


async def test_a_resize_mid_move_acts_on_that_topic_alone():
    """A size change re-examines its topic's copies: shrunk below what the new replica holds, the copy
    has caught up and the move completes without time passing; the other topic's copy keeps its bytes and
    finishes when they say, alone on the leader's bandwidth from then on (virtual clock: exact times)."""
    async with Cluster(brokers=4, virtual_clock=True) as cluster:
        size = {"kraftwire.partition.size.bytes": str(100 * MiB)}
        await create(cluster, "shrunk", [[1, 2]], size)
        other_id = await create(cluster, "other", [[1, 2]], size)
        client = KafkaClient(cluster.brokers[0].host, cluster.brokers[0].port, "test")
        try:
            await reassign(client, "shrunk", {0: [1, 3]})
            await reassign(client, "other", {0: [1, 4]})
        finally:
            await client.close()
        await cluster.advance(0)
        started = cluster.network.now()
        await cluster.advance(1)  # two copies share broker 1's 100 MiB/s
        assert {t: p["bytes_moved"] for (t, _), p in cluster.reassignment_progress().items()} == {
            "shrunk": 50 * MiB, "other": 50 * MiB}
        await set_configs(cluster, TOPIC, "shrunk", {"kraftwire.partition.size.bytes": str(40 * MiB)})
        await cluster.wait_until(lambda image: not reassigning(cluster, "shrunk"))
        assert cluster.network.now() == started + 1
        assert reassigning(cluster, "other")
        await cluster.advance(1)
        assert not reassigning(cluster, "other")
        copy = cluster.network.copies[(other_id, 0, 4)]
        assert (copy.started_at, copy.finished_at) == (started, pytest.approx(started + 1.5, abs=1e-9))
        assert copy.replica.log_bytes == 100 * MiB


@pytest.mark.parametrize("enabled", [True, False])
async def test_throttle_auto_removal(cluster_of, client, enabled):
    await set_configs(cluster_of, BROKER, "", {"kraftwire.throttle.auto.remove.enable": str(enabled).lower()})
    throttles = {LEADER_REPLICAS: "0:1", FOLLOWER_REPLICAS: "0:4"}
    await create(cluster_of, "moving", [[1], [1]], throttles)
    await create(cluster_of, "later", [[2]], {LEADER_REPLICAS: "0:2"})
    for broker in ("1", "4", "2"):
        await set_configs(cluster_of, BROKER, broker, {LEADER_RATE: str(500 * MiB), FOLLOWER_RATE: str(500 * MiB)})
    await reassign(client, "moving", {0: [4]})
    await cluster_of.wait_until(lambda image: not reassigning(cluster_of, "moving"), timeout=20)
    await reassign(client, "moving", {1: [4]})
    await cluster_of.wait_until(lambda image: not reassigning(cluster_of, "moving", 1), timeout=20)
    await create(cluster_of, "after", [[3]])  # a write made now commits after the cleaner's removals, if any
    image = cluster_of.controller.committed
    if enabled:
        assert not any(k in image.topic_configs("moving") for k in throttles)
        assert not any(k in image.broker_configs("1") or k in image.broker_configs("4")
                       for k in (LEADER_RATE, FOLLOWER_RATE))
    else:
        assert {k: image.topic_configs("moving")[k] for k in throttles} == throttles
        assert image.broker_configs("1")[LEADER_RATE] == str(500 * MiB)
    # throttles of brokers and topics no reassignment touched stay
    assert image.topic_configs("later")[LEADER_REPLICAS] == "0:2"
    assert image.broker_configs("2")[LEADER_RATE] == str(500 * MiB)


async def test_list_over_the_controller_listener(cluster_of, client):
    await create(cluster_of, "t", [[1, 2]], {"kraftwire.partition.size.bytes": str(10 ** 15)})
    await reassign(client, "t", {0: [2, 3]})
    direct = KafkaClient(cluster_of.controller_node.host, cluster_of.controller_node.port, "test")
    try:
        listed = await direct.send(ListPartitionReassignmentsRequest())
        assert [(t.name, [(p.replicas, p.adding_replicas, p.removing_replicas) for p in t.partitions])
                for t in listed.topics] == [("t", [((2, 3, 1), (3,), (1,))])]
        assert (await direct.send(ListPartitionReassignmentsRequest(topics=[]))).topics == ()
    finally:
        await direct.close()


async def test_alter_partition_over_the_wire(cluster_of):
    topic_id = await create(cluster_of, "t", [[1, 2, 3]])
    image = cluster_of.controller.committed
    state = image.topic("t").partitions[0]
    direct = KafkaClient(cluster_of.controller_node.host, cluster_of.controller_node.port, "test")

    def proposal(sender, epoch, isr, leader_epoch=state.leader_epoch, partition_epoch=state.partition_epoch):
        return AlterPartitionRequest(broker_id=sender, broker_epoch=epoch, topics=[AlterPartitionRequest.TopicData(
            topic_id=topic_id, partitions=[AlterPartitionRequest.PartitionData(
                partition_index=0, leader_epoch=leader_epoch, partition_epoch=partition_epoch,
                new_isr_with_epochs=[AlterPartitionRequest.BrokerState(broker_id=b) for b in isr])])])

    epoch = image.brokers[1].epoch
    try:
        assert (await direct.send(proposal(1, epoch + 1000, [1, 2]))).error_code == 77
        answer = await direct.send(proposal(1, epoch, [1, 2], leader_epoch=state.leader_epoch - 1))
        assert answer.topics[0].partitions[0].error_code == 74
        answer = await direct.send(proposal(1, epoch, [1, 2]))
        result = answer.topics[0].partitions[0]
        assert (result.error_code, result.leader_id, result.isr, result.partition_epoch) == (
            0, 1, (1, 2), state.partition_epoch + 1)
        stale = await direct.send(proposal(1, epoch, [1, 2, 3]))
        assert stale.topics[0].partitions[0].error_code == 95
        # the leader adds 3 back once it sees it caught up
        await cluster_of.wait_until(lambda image: sorted(image.topic("t").partitions[0].isr) == [1, 2, 3])
    finally:
        await direct.close()


async def test_brokers_no_longer_serve_leader_and_isr(cluster_of):
    """Brokers act on the metadata log, as Kafka 4's do: LeaderAndIsr is not in ApiVersions and a
    LeaderAndIsr request closes the connection, as any API a broker does not serve."""
    topic_id = await create(cluster_of, "t", [[1, 2]])
    await cluster_of.wait_until(lambda image: (topic_id, 0) in cluster_of.broker(2).replica_manager.replicas)
    broker = KafkaClient(cluster_of.broker(2).host, cluster_of.broker(2).port, "test")
    state = LeaderAndIsrRequest.LeaderAndIsrPartitionState(
        partition_index=0, controller_epoch=-1, leader=2, leader_epoch=99, isr=[2], partition_epoch=99,
        replicas=[2])
    request = LeaderAndIsrRequest(controller_id=3000, is_k_raft_controller=True, controller_epoch=1, type=1,
                                  topic_states=[LeaderAndIsrRequest.LeaderAndIsrTopicState(
                                      topic_name="t", topic_id=topic_id, partition_states=[state])])
    try:
        versions = await broker.send(ApiVersionsRequest(client_software_name="test", client_software_version="1"), 3)
        assert 4 not in {key.api_key for key in versions.api_keys}
        with pytest.raises(KafkaClientError):
            await broker.send(request, 7)
    finally:
        await broker.close()
    replica = cluster_of.broker(2).replica_manager.replicas[(topic_id, 0)]
    assert (replica.leader, replica.leader_epoch) == (1, 0)  # the log's state, not the request's


async def test_a_kept_follower_still_copies_a_growth_made_mid_move():
    """A reassignment's new state reaches the follower it keeps (in the ISR, same leader), which the
    manager does not follow again: its copy is still the network's, so when the partition grows mid-move
    that follower copies the difference, beside the new replica copying the whole (virtual clock)."""
    async with Cluster(brokers=3, virtual_clock=True) as cluster:
        topic_id = await create(cluster, "grown", [[1, 2]], {"kraftwire.partition.size.bytes": str(100 * MiB)})
        await reassign_through(cluster.brokers[0], "grown", {0: [1, 2, 3]})
        await cluster.wait_until(lambda image: image.topic("grown").partitions[0].replicas == (1, 2, 3))
        kept = cluster.broker(2).replica_manager.replicas[(topic_id, 0)]
        assert kept.replicas == (1, 2, 3) and kept.log_bytes == 100 * MiB  # the new state, its bytes kept
        await set_configs(cluster, TOPIC, "grown", {"kraftwire.partition.size.bytes": str(150 * MiB)})
        await cluster.advance(0)
        assert {p["follower"]: p["bytes_left"] for p in cluster.network.progress()} == {2: 50 * MiB, 3: 150 * MiB}
        await cluster.advance(10)
        await cluster.wait_until(lambda image: not reassigning(cluster, "grown")
                                 and image.topic("grown").partitions[0].isr == (1, 2, 3))
        assert kept.log_bytes == 150 * MiB


async def test_a_copy_ending_before_another_change_is_still_reported_to_its_leader():
    """A copy's end is timed, but another change of the data plane can come first and settle the copy
    past its end (in a broker process every commit does): its leader must still hear that the follower
    caught up, or the follower never joins the ISR and the move never finishes (issue 18: the moves
    test_chaos_processes waited 150 s for). Here a speed raised so high that the copy's end is due at
    once, and a pause of the follower made before the loop runs its timer, settle past that end."""
    async with Cluster(brokers=2) as cluster:
        topic_id = await create(cluster, "t", [[1]], {"kraftwire.partition.size.bytes": str(MiB)})
        await cluster.pause_replication(2)
        await reassign_through(cluster.brokers[0], "t", {0: [2]})
        key = (topic_id, 0, 2)
        await cluster.wait_until(lambda image: key in cluster.network.copies
                                 and cluster.network.copies[key].size == MiB)
        # no await yields to the loop between these three: the copy's timer cannot run before the pause
        await cluster.resume_replication(2)
        await cluster.set_speed(10 ** 9)  # 1 MiB at 100 MiB/s: due 10 ps of the wall clock from now
        await cluster.pause_replication(2)
        assert cluster.network.copies[key].replica.log_bytes == MiB  # the pause's settling ended it
        await cluster.resume_replication(2)
        await cluster.set_speed(1)
        await cluster.wait_until(lambda image: not reassigning(cluster, "t"), timeout=10)
        assert cluster.controller.committed.topic("t").partitions[0].replicas == (2,)


async def test_a_move_between_broker_processes_finishes_after_its_leader_was_fenced(tmp_path):
    """Brokers of separate processes (a controller's, two brokers', each a ``Cluster`` as ``kraftwire
    controller``/``broker`` compose them, here in one event loop, over TCP): the leader's process
    copies to the other process's follower in simulation (``RemoteFollower``). A move's leader fenced
    while the move waits (its follower's bandwidth at 1 byte/s) leaves the partition leaderless, and its
    process drops that copy; unfenced, it leads again and makes a new copy, which must get a rate and
    tell it when the follower has caught up, so that the move finishes (issue 18's stalled moves had
    this history; the cause was the unreported end above)."""
    async with Cluster(0, voters={3000: ("127.0.0.1", 0)}, local_controllers=[3000],
                       data_dir=tmp_path / "controller") as quorum:
        voters = {3000: quorum.controller_endpoints()[3000]}
        cluster_id = quorum.metadata.cluster_id
        async with Cluster(1, node_ids=[1], voters=voters, cluster_id=cluster_id, data_dir=tmp_path / "b1") as one, \
                Cluster(1, node_ids=[2], voters=voters, cluster_id=cluster_id, data_dir=tmp_path / "b2") as two:
            topic_id = await create(one, "t", [[1]], {"kraftwire.partition.size.bytes": str(MiB)})
            await set_configs(quorum, BROKER, "2", {BANDWIDTH: "1"})
            await reassign_through(two.brokers[0], "t", {0: [2]})
            key = (topic_id, 0, 2)
            await one.wait_until(lambda image: key in one.network.copies)
            await one.fence_broker(1)
            await one.wait_until(lambda image: image.topic("t").partitions[0].leader == -1)
            assert key not in one.network.copies
            await one.unfence_broker(1)
            await one.wait_until(lambda image: image.topic("t").partitions[0].leader == 1 and key in one.network.copies)
            assert reassigning(quorum, "t")
            await set_configs(quorum, BROKER, "2", {BANDWIDTH: None})
            await quorum.wait_until(lambda image: not reassigning(quorum, "t"), timeout=10)
            assert quorum.controller.committed.topic("t").partitions[0].replicas == (2,)
