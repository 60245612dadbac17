"""Broker sessions: the controller fences a broker whose heartbeats stop, not one whose heartbeats its own
event loop stood too still to read (a starved machine, a long callback)."""
import time

from kraftwire.codec import records as rec
from kraftwire.codec.messages import CreateTopicsRequest
from kraftwire.server.controller.broker_lifecycle import FENCE
from kraftwire.server.wire.client import KafkaClient
from kraftwire.server.host.cluster import Cluster


async def test_a_stalled_event_loop_fences_no_broker():
    async with Cluster(brokers=3, session_timeout_ms=1000) as cluster:
        fenced = []
        cluster.controller.add_commit_listener(lambda committed: fenced.extend(
            record.broker_id for _, record in committed
            if isinstance(record, rec.BrokerRegistrationChangeRecord) and record.fenced == FENCE))
        time.sleep(2.5)  # the loop stands still for two and a half session timeouts
        # A write over the wire is decided after the session check that follows the stall: once it has
        # committed, so has any fencing that check wrote.
        client = KafkaClient(cluster.brokers[0].host, cluster.brokers[0].port, "test")
        try:
            answer = await client.send(CreateTopicsRequest(timeout_ms=10000, topics=[
                CreateTopicsRequest.CreatableTopic(name="after-the-stall", num_partitions=1, replication_factor=3)]))
        finally:
            await client.close()
        assert answer.topics[0].error_code == 0
        assert fenced == []
        assert not any(broker.fenced for broker in cluster.controller.committed.brokers.values())
