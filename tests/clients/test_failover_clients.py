"""Admin clients through a failover of the controller quorum, each write checked against the committed
metadata log (read with kraftwire's own reader): every acknowledged operation took effect, and once."""
from __future__ import annotations

import asyncio
import json
import subprocess
import threading

import pytest
from kafka import TopicPartition, TopicPartitionReplica
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic

from kraftwire import BackgroundCluster
from kraftwire.codec import ErrorCode
from kraftwire.codec import records as rec
from kraftwire.codec.constants import UNASSIGNED
from kraftwire.codec.messages import CreateTopicsRequest
from kraftwire.server.raft import Timers
from kraftwire.server.raft.tools import partition_directory, read_log
from answers import watch_answers
from raw_client import RawConnection, encode_request
from tests.wings.raft.test_controller_quorum import wait_for
from tests.clients.test_reassign_node import NODE_DIR, kafkajs  # noqa: F401 - the fixture: node with kafkajs, else a skip

DESCRIBE_CLUSTER = 60
MiB = 1 << 20
PARTITION_SIZE = "kraftwire.partition.size.bytes"
LEADER_RATE = "leader.replication.throttled.rate"
ALTER_DIRS_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"


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

        bg.call(watch_answers, cluster.controller_node.listener, DESCRIBE_CLUSTER, lambda response: asked.set())
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


def test_a_throttled_reassignment_and_a_directory_move_keep_their_pace_through_a_kill():
    """On the virtual clock: 100 MiB copied to broker 4 under a 10 MiB/s leader throttle (10 s) and 40 MiB
    moved between broker 2's directories at 4 MiB/s (10 s); the active controller is killed 3 s in. The
    next one carries both on at the same pace (its image holds the throttles), and every controller's
    log on disk holds each change once."""
    with BackgroundCluster(brokers=4, controllers=3, log_dirs=2, virtual_clock=True) as bg:
        cluster = bg.cluster
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="failover-test", request_timeout_ms=30000)
        admin.create_topics([
            NewTopic("throttled", -1, -1, replica_assignments={0: [1, 2, 3]},
                     topic_configs={PARTITION_SIZE: str(100 * MiB), "leader.replication.throttled.replicas": "*"}),
            NewTopic("dir-moving", -1, -1, replica_assignments={0: [2, 3]},
                     topic_configs={PARTITION_SIZE: str(40 * MiB)})])
        throttles = {("1", LEADER_RATE): str(10 * MiB), ("2", ALTER_DIRS_RATE): str(4 * MiB)}
        admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, broker, configs={name: value})
                             for (broker, name), value in throttles.items()])
        image = lambda: bg.call(lambda: cluster.controller.committed)  # noqa: E731
        in_force = lambda: all(image().broker_configs(b).get(n) == v for (b, n), v in throttles.items())  # noqa: E731
        wait_for(lambda: in_force() and UNASSIGNED not in image().topic("dir-moving").partitions[0].directories,
                 what="the throttles and the replicas' directories")
        (described,) = admin.describe_log_dirs(brokers=[2])
        source = next(d["log_dir"] for d in described["log_dirs"]
                      if any(t["name"] == "dir-moving" for t in d["topics"]))
        target = next(d["log_dir"] for d in described["log_dirs"] if d["log_dir"] != source)
        target_id = bg.call(lambda: next(d.directory_id for d in cluster.broker(2).log_manager.directories
                                         if d.path == target))
        admin.alter_partition_reassignments({TopicPartition("throttled", 0): [4, 2, 3]})
        admin.alter_replica_log_dirs({TopicPartitionReplica("dir-moving", 0, 2): target})
        bg.run(cluster.advance(3.0))

        first = bg.call(lambda: cluster.active_controller_id)
        bg.run(cluster.kill_controller(first))
        wait_for(lambda: bg.call(lambda: cluster.active_controller_id) not in (None, first),
                 what="a new active controller")
        assert in_force()
        bg.run(cluster.advance(5.0))  # 8 s in: neither is done
        throttled, moving = image().topic("throttled").partitions[0], image().topic("dir-moving").partitions[0]
        assert list(throttled.adding) == [4] and moving.directories[0] != target_id
        remaining = bg.run(cluster.run_until_reassignments_done())
        assert 9.5 <= 8.0 + remaining <= 11.0, remaining
        bg.run(cluster.advance(2.0))
        throttled, moving = image().topic("throttled").partitions[0], image().topic("dir-moving").partitions[0]
        assert (list(throttled.replicas), list(throttled.adding), list(throttled.removing)) == ([4, 2, 3], [], [])
        assert moving.directories[0] == target_id

        bg.run(cluster.start_controller(first))
        wait_for(lambda: bg.call(lambda: len({(log.high_watermark, log.end_offset) for log in cluster.logs}) == 1),
                 what="every controller's log to agree")
        ids = image().topic_ids
        for node_id in cluster.controller_ids:
            changes = [r for _path, (_o, _e, _t, control, r, _v) in
                       read_log(partition_directory(cluster.data_dir / f"controller-{node_id}"))
                       if not control and isinstance(r, rec.PartitionChangeRecord)]
            assert len({repr(c) for c in changes}) == len(changes), node_id  # none applied twice
            moved = [c for c in changes if c.topic_id == ids["throttled"]]
            assert len([c for c in moved if c.adding_replicas == (4,)]) == 1, moved
            assert len([c for c in moved if c.replicas == (4, 2, 3) and c.adding_replicas == ()]) == 1, moved
            relocated = [c for c in changes if c.topic_id == ids["dir-moving"] and c.directories is not None
                         and c.directories[0] == target_id]
            assert len(relocated) == 1, relocated
        admin.close()


def awaiting(task: asyncio.Task, qualname: str, owner) -> bool:
    """Whether ``task`` is inside ``owner``'s coroutine method ``qualname`` (along its await chain)."""
    coroutine = task.get_coro()
    while coroutine is not None and getattr(coroutine, "cr_frame", None) is not None:
        if coroutine.__qualname__ == qualname and coroutine.cr_frame.f_locals.get("self") is owner:
            return True
        coroutine = coroutine.cr_await
    return False


def test_a_stopped_broker_stops_forwarding_and_leaves_no_connection_behind():
    """With the quorum's majority lost, a forwarded CreateTopics keeps looking for an active controller
    until its 60 s timeout; the broker stops meanwhile. Its channel then opens no connection and the
    forward ends (it went on opening connections whose read loops the loop's close found pending)."""
    with BackgroundCluster(brokers=3, controllers=3) as bg:
        cluster = bg.cluster
        leader = bg.call(lambda: cluster.active_controller_id)
        for other in cluster.controller_ids:
            if other != leader:
                bg.run(cluster.kill_controller(other))
        broker = cluster.broker(1)
        channel = bg.call(lambda: broker.client)
        forwarding = lambda: bg.call(lambda: [t for t in asyncio.all_tasks()  # noqa: E731
                                              if awaiting(t, "ControllerChannel._to_active", channel)])
        reading = lambda: bg.call(lambda: [t for t in asyncio.all_tasks()  # noqa: E731
                                           if t.get_coro().__qualname__ == "KafkaClient._read_loop"
                                           and t.get_coro().cr_frame.f_locals["self"].client_id == "broker-1"])
        with RawConnection(f"{broker.host}:{broker.port}") as connection:
            connection.sock.sendall(encode_request(CreateTopicsRequest(topics=[CreateTopicsRequest.CreatableTopic(
                name="never", num_partitions=1, replication_factor=3)], timeout_ms=60000), 7, 1))
            wait_for(lambda: bg.call(lambda: not cluster.controller.active) and forwarding(),
                     what="the leader to step down while the broker forwards")
            bg.run(cluster.stop_broker(1))
            wait_for(lambda: not forwarding(), timeout=10, what="the stopped broker's forward to end")
            assert reading() == []


@pytest.mark.parametrize("controllers", [1, 3])
@pytest.mark.parametrize("gone", ["frozen", "stopped"])
def test_a_forward_no_controller_answers_in_time_is_answered_request_timed_out(controllers, gone):
    """Every controller is frozen, or stopped (its connections refused): the broker answers the CreateTopics it
    forwarded REQUEST_TIMED_OUT (7) once the request's TimeoutMs passes, as Kafka's ForwardingManager does, and
    the client's connection stays open (the broker used to close it: a frozen controller's with 1 and 3, a
    refused connection's with 1). Once the controllers are back, the same connection creates the topic."""
    with BackgroundCluster(brokers=1, controllers=controllers) as bg:
        cluster = bg.cluster
        for controller in cluster.controller_ids:
            if gone == "frozen":
                bg.call(cluster.pause_controller, controller)
            else:
                bg.run(cluster.stop_controller(controller))
        broker = cluster.broker(1)
        create = CreateTopicsRequest(topics=[CreateTopicsRequest.CreatableTopic(
            name="frozen", num_partitions=1, replication_factor=1)], timeout_ms=1500)
        with RawConnection(f"{broker.host}:{broker.port}") as connection:
            answer = connection.send(create, 7)
            assert [(t.name, t.error_code) for t in answer.topics] == [("frozen", ErrorCode.REQUEST_TIMED_OUT)]
            for controller in cluster.controller_ids:
                if gone == "frozen":
                    bg.call(cluster.resume_controller, controller)
                else:
                    bg.run(cluster.start_controller(controller))
            answer = connection.send(create.replace(timeout_ms=30000), 7)
            assert [(t.name, t.error_code) for t in answer.topics] in (
                [("frozen", ErrorCode.NONE)], [("frozen", ErrorCode.TOPIC_ALREADY_EXISTS)])
        assert [r.name for r in committed(bg, rec.TopicRecord)] == ["frozen"]
