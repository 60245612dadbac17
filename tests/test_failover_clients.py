"""Admin clients through a failover of the controller quorum, each write checked against the committed
metadata log (read with kraftwire's own reader): every acknowledged operation took effect, and once."""
from __future__ import annotations

import json
import subprocess
import threading
import time

from kafka.admin import KafkaAdminClient, NewTopic

from kraftwire import BackgroundCluster
from kraftwire.codec import records as rec
from kraftwire.server.raft import Timers
from test_reassign_node import NODE_DIR, kafkajs  # noqa: F401 - the fixture: node with kafkajs, else a skip

DESCRIBE_CLUSTER = 60


def wait_for(predicate, timeout: float = 30.0, what: str = "the expected state"):
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)
    return value


def committed(bg, kind) -> list:
    """Records of ``kind`` in the active controller's committed log, in log order."""
    return bg.call(lambda: [r for offset, r in bg.cluster.log.replay()
                            if isinstance(r, kind) and offset < bg.cluster.log.high_watermark])


def test_a_slow_commit_is_waited_for_not_forwarded_twice():
    """The followers freeze for longer than the broker's forwarding attempt: the broker asks who leads,
    hears the same controller and waits for its answer instead of sending CreateTopics again (which
    answered the client TOPIC_ALREADY_EXISTS for its own topic)."""
    with BackgroundCluster(brokers=3, controllers=3, quorum_timers=Timers.kafka_defaults()) as bg:
        cluster = bg.cluster
        leader = bg.call(lambda: cluster.active_controller_id)
        followers = [c for c in cluster.controller_ids if c != leader]
        asked = threading.Event()  # the leader answered a DescribeCluster: a forwarding attempt timed out

        def observe(api_key, version, response, arrived):
            if api_key == DESCRIBE_CLUSTER:
                asked.set()

        bg.call(lambda: setattr(cluster.controller_node.listener, "observer", observe))
        for follower in followers:
            bg.call(cluster.pause_controller, follower)
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="failover-test", request_timeout_ms=30000)
        outcome = {}

        def create():
            try:
                outcome["result"] = admin.create_topics([NewTopic("slow", 1, 3)])
            except Exception as exc:  # noqa: BLE001 - the failure the assertion below reports
                outcome["error"] = exc

        creating = threading.Thread(target=create)
        creating.start()
        assert asked.wait(30), "the broker never gave up waiting on its first attempt"
        for follower in followers:
            bg.call(cluster.resume_controller, follower)
        creating.join(60)
        assert "error" not in outcome and outcome["result"]["topics"][0]["error_code"] == 0, outcome
        assert bg.call(lambda: cluster.active_controller_id) == leader
        assert [r.name for r in committed(bg, rec.TopicRecord)] == ["slow"]
        admin.close()


def test_kafkajs_admin_writes_through_a_kill_of_the_active_controller(kafkajs):
    """tests/node/failover.js creates topics, alters their configs and starts reassignments in rounds; the
    active controller is killed once the first round is acknowledged, while the next is under way."""
    rounds = 4
    with BackgroundCluster(brokers=4, controllers=3) as bg:
        cluster = bg.cluster
        script = subprocess.Popen(["node", str(NODE_DIR / "failover.js"), bg.bootstrap, str(rounds)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        acknowledged = []
        try:
            for line in script.stdout:
                acknowledged.append(json.loads(line))
                if len(acknowledged) == 3:
                    first = bg.call(lambda: cluster.active_controller_id)
                    bg.run(cluster.kill_controller(first))
            assert script.wait(120) == 0, script.stderr.read()
        finally:
            script.kill()
        assert len(acknowledged) == 3 * rounds, acknowledged
        assert bg.call(lambda: cluster.active_controller_id) not in (None, first)
        bg.run(cluster.wait_for_reassignments(60))

        topics = {r.name: r.topic_id for r in committed(bg, rec.TopicRecord)}
        assert sorted(topics) == [f"js-{i}" for i in range(rounds)]  # each created once
        configs = [(r.resource_name, r.value) for r in committed(bg, rec.ConfigRecord) if r.name == "retention.ms"]
        assert configs == [(a["topic"], a["value"]) for a in acknowledged if a["op"] == "config"]
        changes = committed(bg, rec.PartitionChangeRecord)
        for name, topic_id in topics.items():
            started = [c for c in changes if c.topic_id == topic_id and c.adding_replicas == (4,)]
            assert len(started) == 1, (name, started)
            state = bg.call(lambda: cluster.controller.committed.topic(name).partitions[0])
            assert (list(state.replicas), list(state.adding), list(state.removing)) == ([4, 2, 3], [], [])
