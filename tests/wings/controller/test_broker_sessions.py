"""Broker sessions: the controller fences a broker whose heartbeats stop, not one whose heartbeats its own
event loop stood too still to read (a starved machine, a long callback)."""
import time

from kraftwire.codec import records as rec
from kraftwire.codec.messages import CreateTopicsRequest
from kraftwire.server.controller.broker_lifecycle import FENCE
from kraftwire.server.wire.client import KafkaClient
from kraftwire.server.host.cluster import Cluster


async def create_topic(cluster: Cluster, topic: CreateTopicsRequest.CreatableTopic) -> None:
    """Create ``topic`` through broker 1's listener, as a client does."""
    client = KafkaClient(cluster.brokers[0].host, cluster.brokers[0].port, "test")
    try:
        answer = await client.send(CreateTopicsRequest(timeout_ms=10000, topics=[topic]))
    finally:
        await client.close()
    assert answer.topics[0].error_code == 0, answer


async def test_a_stalled_event_loop_fences_no_broker():
    async with Cluster(brokers=3, session_timeout_ms=1000) as cluster:
        fenced = []
        cluster.controller.add_commit_listener(lambda committed: fenced.extend(
            record.broker_id for _, record in committed
            if isinstance(record, rec.BrokerRegistrationChangeRecord) and record.fenced == FENCE))
        time.sleep(2.5)  # the loop stands still for two and a half session timeouts
        # A write over the wire is decided after the session check that follows the stall: once it has
        # committed, so has any fencing that check wrote.
        await create_topic(cluster, CreateTopicsRequest.CreatableTopic(
            name="after-the-stall", num_partitions=1, replication_factor=3))
        assert fenced == []
        assert not any(broker.fenced for broker in cluster.controller.committed.brokers.values())


async def test_brokers_that_do_not_come_back_after_a_restart_are_fenced(tmp_path):
    """A data directory of 4 brokers restarted with 2: brokers 3 and 4 keep their registration but
    never heartbeat again, so their inherited sessions lapse, they are fenced, and a partition led by
    broker 3 elects broker 1 (uncleanly, as the topic allows: broker 1's restart took it out of the ISR);
    brokers 1 and 2 re-register at once."""
    async with Cluster(brokers=4, data_dir=tmp_path) as cluster:
        await create_topic(cluster, CreateTopicsRequest.CreatableTopic(
            name="orders", num_partitions=-1, replication_factor=-1,
            assignments=[CreateTopicsRequest.CreatableReplicaAssignment(partition_index=0, broker_ids=[3, 1])],
            configs=[CreateTopicsRequest.CreatableTopicConfig(name="unclean.leader.election.enable", value="true")]))
        assert cluster.controller.committed.topic("orders").partitions[0].leader == 3
    async with Cluster(brokers=2, data_dir=tmp_path, session_timeout_ms=1000) as cluster:
        await cluster.wait_until(lambda image: image.brokers[3].fenced and image.brokers[4].fenced, timeout=15)
        await cluster.wait_until(lambda image: image.topic("orders").partitions[0].leader == 1)
        assert list(cluster.controller.committed.topic("orders").partitions[0].isr) == [1]
        assert not cluster.controller.committed.brokers[1].fenced and not cluster.controller.committed.brokers[2].fenced


async def test_a_cluster_stopped_and_restarted_fences_none_of_its_brokers(tmp_path):
    """The process stops as a whole, so its controller lets no session of its brokers lapse as they stop;
    restarted, the controller gives each broker the log holds a session from its activation (Kafka's
    ClusterControlManager.activate), and brokers back within it are not fenced: no BrokerRegistrationChangeRecord
    fences anyone, in the stop or the restart (a restarted broker's registration takes it out of ISRs,
    eligible leader replicas being on, without a fence)."""
    sessions = {"heartbeat_interval_ms": 100, "session_timeout_ms": 1000}
    fences = []

    def note_fences(committed):
        fences.extend(r.broker_id for _, r in committed
                      if isinstance(r, rec.BrokerRegistrationChangeRecord) and r.fenced == FENCE)

    async with Cluster(brokers=3, data_dir=tmp_path, **sessions) as cluster:
        await create_topic(cluster, CreateTopicsRequest.CreatableTopic(name="kept", num_partitions=6,
                                                                       replication_factor=3))
        cluster.controller.add_commit_listener(note_fences)
    assert fences == []
    restarted = Cluster(brokers=3, data_dir=tmp_path, **sessions)
    restarted.controller.add_commit_listener(note_fences)
    await restarted.start()  # returns once every broker is registered again and unfenced
    try:
        await restarted.wait_until(lambda image: all(state.leader >= 0 for _, _, state in image.partitions()))
        assert fences == []
        assert not any(broker.fenced for broker in restarted.controller.committed.brokers.values())
    finally:
        await restarted.stop()
    assert fences == []
