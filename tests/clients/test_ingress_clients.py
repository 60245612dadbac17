"""Simulated ingress (``kraftwire.partition.ingress.bytes.per.sec``) through kafka-python over TCP, on
the virtual clock: a move whose throttle is below the partition's produce rate never completes (and
says why, in the cluster's progress and the control plane's state), one above it completes when the
model says: the follower outruns the growing log at (throttle - ingress) bytes per second."""
import urllib.request

import pytest
from kafka import TopicPartition
from kafka.admin import AlterConfigOp, ConfigResource, KafkaAdminClient, NewTopic

from kraftwire.server.host.cluster import BackgroundCluster
from tests.wings.host.test_control_plane import call

MiB = 1 << 20


def start_move(bg, size: int, ingress: int, throttle: int, **configs: str) -> KafkaAdminClient:
    """Topic ``t`` (one partition on broker 1, ``size`` bytes, ``ingress`` B/s, leader-throttled), broker
    1's leader throttle at ``throttle``, and the partition reassigned to broker 2."""
    admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap)
    admin.create_topics([NewTopic("t", replica_assignments={0: [1]}, topic_configs={
        "kraftwire.partition.size.bytes": str(size), "kraftwire.partition.ingress.bytes.per.sec": str(ingress),
        "leader.replication.throttled.replicas": "*", **configs})])
    admin.alter_configs([ConfigResource("BROKER", "1", {
        "leader.replication.throttled.rate": (AlterConfigOp.SET, str(throttle))})])
    admin.alter_partition_reassignments({TopicPartition("t", 0): [2]})
    return admin


def test_a_throttle_below_the_ingress_never_completes():
    with BackgroundCluster(brokers=2, virtual_clock=True, control_port=0) as bg:
        admin = start_move(bg, 100 * MiB, 10 * MiB, 5 * MiB)
        try:
            bg.run(bg.cluster.advance(3600))  # an hour: 36 times what the move would take unthrottled by ingress
            assert list(admin.list_partition_reassignments()) == [TopicPartition("t", 0)]
            [progress] = bg.cluster.reassignment_progress().values()
            assert progress["seconds_left"] is None
            assert progress["never"] == (f"throttle leader.replication.throttled.rate of broker 1: {5 * MiB} B/s "
                                         f"below ingress {10 * MiB} B/s")
            with pytest.raises(RuntimeError, match="never: throttle"):
                bg.run(bg.cluster.run_until_reassignments_done())
            status, state = call(bg, "GET", "/api/state")
            [listed] = state["reassignments"]
            assert status == 200 and listed["never"] == progress["never"] and listed["seconds_left"] is None
            request = urllib.request.Request(bg.cluster.control_server.url + "/view",
                                             headers={"Authorization": f"Bearer {bg.cluster.control_token}"})
            with urllib.request.urlopen(request, timeout=30) as page:
                assert "never (throttle leader.replication.throttled.rate of broker 1" in page.read().decode()
            # the leader's log grew by the ingress, bounded by the default retention.ms (7 days) only later
            leader = bg.cluster.brokers[0]
            [result] = leader.log_manager.describe({("t", 0)})
            grown = result.topics[0].partitions[0].partition_size
            assert grown == pytest.approx(100 * MiB + 10 * MiB * bg.cluster.network.now(), rel=1e-6)
        finally:
            admin.close()


def test_a_throttle_above_the_ingress_completes_when_the_model_says():
    size, ingress, throttle = 600 * MiB, 10 * MiB, 40 * MiB
    with BackgroundCluster(brokers=2, virtual_clock=True) as bg:
        admin = start_move(bg, size, ingress, throttle)
        try:
            took = bg.run(bg.cluster.run_until_reassignments_done())
            assert admin.list_partition_reassignments() == {}
            assert took == pytest.approx(size / (throttle - ingress), rel=0.01)  # 20 s
        finally:
            admin.close()


def test_retention_bounds_the_growth():
    """retention.bytes stops the leader's log growing; the follower must still outrun the produce rate."""
    with BackgroundCluster(brokers=2, virtual_clock=True) as bg:
        admin = start_move(bg, 100 * MiB, 10 * MiB, 5 * MiB, **{"retention.bytes": str(300 * MiB)})
        try:
            bg.run(bg.cluster.advance(1000))
            [result] = bg.cluster.brokers[0].log_manager.describe({("t", 0)})
            assert result.topics[0].partitions[0].partition_size == 300 * MiB
            [progress] = bg.cluster.reassignment_progress().values()
            assert progress["never"] is not None and progress["bytes_left"] > 0
        finally:
            admin.close()


def test_the_control_plane_sets_a_topics_ingress():
    """PUT /api/topics/{topic}/ingress writes the topic configs a client then reads back; bad input is 4xx."""
    with BackgroundCluster(brokers=1, control_port=0) as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap)
        try:
            admin.create_topics([NewTopic("t", 2, 1)])
            status, answer = call(bg, "PUT", "/api/topics/t/ingress", {"bytes_per_second": 1000,
                                                                        "partitions": {"1": 5000}})
            assert status == 200, answer
            described = admin.describe_configs([ConfigResource("TOPIC", "t")])["topic"]["t"]
            assert described["kraftwire.partition.ingress.bytes.per.sec"]["value"] == "1000"
            assert described["kraftwire.partition.ingress.rates"]["value"] == "1:5000"
            assert call(bg, "PUT", "/api/topics/t/ingress", {"bytes_per_second": -1})[0] == 400
            assert call(bg, "PUT", "/api/topics/nope/ingress", {"bytes_per_second": 1})[0] == 404
        finally:
            admin.close()
