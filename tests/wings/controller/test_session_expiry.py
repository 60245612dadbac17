"""Broker sessions, the other direction from test_broker_sessions.py: a broker whose heartbeats stop is
fenced after about one session timeout, not two.

Time is counted as the controller counts it: a poller on the cluster's own event loop sleeps the
controller's check interval and counts each wake-up as that interval, however late it woke, just as the
controller gives the time the loop stood still back to every session. So a loaded machine stretches
the wall-clock wait, not the count.
"""
import asyncio

from kraftwire.codec.messages import MetadataRequest
from kraftwire.server.host.cluster import Cluster
from kraftwire.server.wire.client import KafkaClient

SESSION_TIMEOUT_MS = 3000
HEARTBEAT_INTERVAL_MS = 500


async def test_a_broker_whose_heartbeats_stop_is_fenced_after_one_session_timeout():
    timeout = SESSION_TIMEOUT_MS / 1000
    check = min(1.0, timeout / 4)  # the controller's own check interval
    async with Cluster(brokers=3, session_timeout_ms=SESSION_TIMEOUT_MS,
                       heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS) as cluster:
        await cluster.wait_until(lambda image: len(image.brokers) == 3
                                 and not any(b.fenced for b in image.brokers.values()))
        await cluster.stop_broker(3)
        counted = 0.0
        while not cluster.controller.committed.brokers[3].fenced:
            # fenced at the latest one check and one commit after the timeout; counting twice the timeout
            # would take at least 2 * timeout - one heartbeat interval
            assert counted <= timeout + 2 * check, f"broker 3 still unfenced {counted:.2f} s into its session"
            await asyncio.sleep(check)
            counted += check
        assert counted >= timeout - HEARTBEAT_INTERVAL_MS / 1000 - check, "fenced before its session ended"
        client = KafkaClient(cluster.brokers[0].host, cluster.brokers[0].port, "session-test")
        try:
            answer = await client.send(MetadataRequest(topics=[]))
        finally:
            await client.close()
        assert sorted(b.node_id for b in answer.brokers) == [1, 2]  # a fenced broker is not listed
