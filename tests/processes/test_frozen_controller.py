"""A frozen active controller (SIGSTOP of its process, or ``Cluster.pause_controller`` in one process)
stops no write: the broker follows the quorum's new leader, a CreateTopics through it is acknowledged
while the frozen one is still frozen, and no broker is fenced because the controller it was talking
to froze, neither by the new leader (which the broker heartbeats in time) nor by the frozen one when
it wakes (it learns it lost the lead before its sessions can expire). Before, the broker kept
sending to the frozen controller: the new leader fenced it after its session timeout and creates were
refused INVALID_REPLICATION_FACTOR (38) or timed out (7)."""
from __future__ import annotations

import asyncio
import logging
import time

from kraftwire.codec import ErrorCode
from kraftwire.codec import records as rec
from kraftwire.codec.messages import CreateTopicsRequest
from kraftwire.server.host.chaos import wait_for
from kraftwire.server.host.cluster import BackgroundCluster
from kraftwire.server.host.process_harness import ProcessCluster
from kraftwire.server.raft.core import Timers
from kraftwire.server.wire.client import KafkaClient

BROKER = 1
# the client's own deadline: far past the short timers' election (~0.5 s) and the broker's session (3 s)
TIMEOUT_MS = 20_000


def create_topic(address: tuple[str, int], name: str) -> int:
    """CreateTopics (one partition, one replica) through the broker at ``address``; its error code."""
    async def send() -> int:
        client = KafkaClient(*address, "frozen-controller-test")
        try:
            answer = await client.send(CreateTopicsRequest(timeout_ms=TIMEOUT_MS, topics=[
                CreateTopicsRequest.CreatableTopic(name=name, num_partitions=1, replication_factor=1)]))
            return answer.topics[0].error_code
        finally:
            await client.close()
    return asyncio.run(asyncio.wait_for(send(), TIMEOUT_MS / 1000 + 30))


def fences_of(records: list[tuple[str, dict]], broker_id: int) -> list[dict]:
    """The committed records that fence ``broker_id``: (type name, fields) pairs."""
    return [fields for kind, fields in records if fields.get("broker_id") == broker_id and (
        kind == "FenceBrokerRecord" or (kind == "BrokerRegistrationChangeRecord" and fields.get("fenced") == 1))]


def test_a_sigstopped_active_controller_process_stops_no_write_and_fences_no_broker(tmp_path):
    with ProcessCluster(tmp_path, brokers=1) as harness:
        harness.start_all()
        victim = wait_for(harness.active, 60, "a first active controller")
        broker = harness.addresses[BROKER]
        assert create_topic(broker, "before-the-freeze") == ErrorCode.NONE
        harness.pause(victim)
        assert create_topic(broker, "while-frozen") == ErrorCode.NONE
        assert victim in harness.paused  # acknowledged by the new leader, the old one still frozen
        successor = wait_for(lambda: (a := harness.active()) not in (None, victim) and a, 60, "a new active controller")
        harness.resume(victim)
        # the woken controller learns it lost the lead and follows; writes go on, nobody fenced
        wait_for(lambda: harness.active() == successor and harness.wait_converged(), 60, "the quorum to converge")
        assert create_topic(broker, "after-the-wake") == ErrorCode.NONE
        high_watermark = harness.wait_converged()
        harness.stop_all()
        dumps = {node_id: harness.log_dump(node_id) for node_id in harness.ids}
        decided = [line for node_id in harness.ids
                   for line in (tmp_path / f"controller-{node_id}.log").read_text().splitlines()
                   if "fencing it" in line]
    assert decided == []  # neither the new leader nor the woken one decided to fence the broker
    for node_id, dump in dumps.items():
        committed = [(r["type"], r["fields"]) for r in dump if r["offset"] < high_watermark]
        assert fences_of(committed, BROKER) == [], node_id
        names = [fields["name"] for kind, fields in committed if kind == "TopicRecord"]
        assert names == ["before-the-freeze", "while-frozen", "after-the-wake"], node_id


def test_a_paused_active_controller_in_process_stops_no_write_and_fences_no_broker(caplog):
    """``serve --controllers 3``'s pause (the control plane's POST /api/controllers/{id}/pause), held
    until the broker has heartbeated the new leader for longer than a session timeout: the paused
    controller decides no fence meanwhile (a frozen process decides nothing) nor when it resumes."""
    caplog.set_level(logging.INFO, logger="kraftwire.controller")
    with BackgroundCluster(brokers=1, controllers=3, quorum_timers=Timers()) as bg:
        cluster = bg.cluster
        victim = wait_for(lambda: bg.call(lambda: cluster.active_controller_id), 30, "an active controller")
        broker = bg.call(lambda: (cluster.brokers[0].host, cluster.brokers[0].port))
        assert create_topic(broker, "before-the-pause") == ErrorCode.NONE
        paused_at = bg.call(lambda: (cluster.pause_controller(victim), time.monotonic())[1])
        assert create_topic(broker, "while-paused") == ErrorCode.NONE
        successor = bg.call(lambda: cluster.controller)
        assert successor.node_id != victim and successor.active
        assert bg.call(lambda: victim in cluster._paused_controllers)
        # heartbeats reach the new leader for two session timeouts past the pause (its session deadline is
        # the last heartbeat plus one)
        session_s = successor.session_timeout_ms / 1000
        wait_for(lambda: bg.call(lambda: successor._sessions.get(BROKER, 0.0)) > paused_at + 3 * session_s, 60,
                 "the broker's heartbeats at the new leader")
        epoch = bg.call(lambda: cluster.log.epoch)
        bg.call(cluster.resume_controller, victim)
        woken = bg.call(lambda: cluster.logs[cluster._controller_index(victim)])
        wait_for(lambda: bg.call(lambda: not woken.active and woken.epoch >= epoch), 30,
                 "the woken controller to follow")
        assert create_topic(broker, "after-the-resume") == ErrorCode.NONE
        committed = bg.call(lambda: [(type(r).__name__, {"broker_id": getattr(r, "broker_id", None),
                                                          "fenced": getattr(r, "fenced", None)})
                                     for offset, r in cluster.log.replay() if offset < cluster.log.high_watermark])
        names = bg.call(lambda: [r.name for offset, r in cluster.log.replay()
                                 if isinstance(r, rec.TopicRecord) and offset < cluster.log.high_watermark])
    assert fences_of(committed, BROKER) == []
    assert names == ["before-the-pause", "while-paused", "after-the-resume"]
    assert [r.getMessage() for r in caplog.records if "fencing it" in r.getMessage()] == []
