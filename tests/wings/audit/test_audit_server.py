"""A real kraftwire server driven through the audit scenario with kafka-python (topics, throttles,
reassignments completed, cancelled and left running, an RF change, a fenced broker, a deleted topic),
then its data directory audited by the Spark job: the tables tell the story, the log breaks no
invariant, and the single-process replay agrees."""
from __future__ import annotations

import time

import pytest
from kafka import KafkaAdminClient, TopicPartition
from kafka.admin import AlterConfigOp, ConfigResource

from kraftwire.audit import job, local
from kraftwire.audit.rows import COLUMNS
from kraftwire.server.host.cluster import BackgroundCluster

pytestmark = pytest.mark.spark

HUGE = {"kraftwire.partition.size.bytes": str(10 ** 15)}  # its copies never finish
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
FOLLOWER_RATE = "follower.replication.throttled.rate"


def settled(bg, topic: str, index: int, replicas: list[int]):
    deadline = time.monotonic() + 20
    while True:
        state = bg.call(lambda: bg.cluster.controller.committed.topic(topic).partitions[index])
        if list(state.replicas) == replicas and not state.reassigning and set(state.isr) == set(replicas):
            return
        assert time.monotonic() < deadline, f"{topic}-{index} did not settle on {replicas}: {state}"
        time.sleep(0.02)


def test_a_server_s_log_audited_by_spark(spark, tmp_path):
    data = tmp_path / "data"
    with BackgroundCluster(brokers=4, speed=50, data_dir=data) as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, request_timeout_ms=10000)
        try:
            for name, assignment, configs in (("orders", {0: [1, 2, 3], 1: [2, 3, 4]}, {}),
                                              ("events", {0: [1, 2]}, {}),
                                              ("scratch", {0: [3, 4]}, HUGE), ("slow", {0: [1, 2, 3]}, HUGE)):
                result = admin.create_topics({name: {"assignments": assignment, "configs": configs}})
                assert result["topics"][0]["error_code"] == 0, result
            # a throttled move of orders-0 from 1 to 4, then the throttles removed (as --verify does)
            admin.alter_configs([ConfigResource("TOPIC", "orders", {LEADER_REPLICAS: "0:1,0:2,0:3",
                                                                    FOLLOWER_REPLICAS: "0:4"}),
                                 ConfigResource("BROKER", "4", {FOLLOWER_RATE: "104857600"})])
            admin.alter_partition_reassignments({TopicPartition("orders", 0): [4, 2, 3]})
            settled(bg, "orders", 0, [4, 2, 3])
            admin.alter_configs([ConfigResource("TOPIC", "orders", {LEADER_REPLICAS: (AlterConfigOp.DELETE, None),
                                                                    FOLLOWER_REPLICAS: (AlterConfigOp.DELETE, None)})])
            admin.alter_configs([ConfigResource("BROKER", "4", {FOLLOWER_RATE: (AlterConfigOp.DELETE, None)})])
            # events-0 goes from RF 2 to 3 under a throttle nobody removes
            admin.alter_configs([ConfigResource("TOPIC", "events", {FOLLOWER_REPLICAS: "0:3"})])
            admin.alter_partition_reassignments({TopicPartition("events", 0): [1, 2, 3]})
            settled(bg, "events", 0, [1, 2, 3])
            # scratch-0 starts moving and is cancelled; slow-0 is still moving at the end
            admin.alter_partition_reassignments({TopicPartition("scratch", 0): [1, 2]})
            admin.alter_partition_reassignments({TopicPartition("scratch", 0): None})
            settled(bg, "scratch", 0, [3, 4])
            admin.alter_partition_reassignments({TopicPartition("slow", 0): [1, 2, 4]})
            bg.run(bg.cluster.fence_broker(3))
            admin.delete_topics(["scratch"])
        finally:
            admin.close()

    result = job.run(spark, [str(data)], str(tmp_path / "out"), partitions=3)
    moves = {(r["topic"], r["partition"], r["outcome"]): r for r in result.rows("reassignments")}
    assert set(moves) == {("orders", 0, "completed"), ("events", 0, "completed"), ("scratch", 0, "cancelled"),
                          ("slow", 0, "running")}
    orders = moves["orders", 0, "completed"]
    assert (orders["original_replicas"], orders["target_replicas"], orders["final_replicas"]) == (
        (1, 2, 3), (4, 2, 3), (4, 2, 3))
    assert orders["start_time"] <= orders["end_time"] and orders["duration_ms"] >= 0
    assert (moves["scratch", 0, "cancelled"]["final_replicas"], moves["slow", 0, "running"]["target_replicas"]) == (
        (3, 4), (1, 2, 4))
    rf_changes = [(c["topic"], c["rf_before"], c["rf_after"], c["reassignment_outcome"])
                  for c in result.rows("rf_changes")]
    assert rf_changes == [("events", 2, 3, "completed")]

    throttles = {(t["resource_name"], t["config"]): t for t in result.rows("throttles")}
    assert {key: t["left_behind"] for key, t in throttles.items()} == {
        ("orders", LEADER_REPLICAS): False, ("orders", FOLLOWER_REPLICAS): False, ("4", FOLLOWER_RATE): False,
        ("events", FOLLOWER_REPLICAS): True}
    assert throttles["orders", LEADER_REPLICAS]["removed_by"] == "deleted"
    assert throttles["orders", LEADER_REPLICAS]["reassignments"] == 1

    fenced = [b for b in result.rows("brokers") if b["event"] == "fenced"]
    assert [b["broker_id"] for b in fenced] == [3]
    assert {b["broker_id"] for b in result.rows("brokers") if b["event"] == "registered"} >= {1, 2, 3, 4}
    assert result.rows("violations") == []
    assert result.log["record_types"]["RemoveTopicRecord"] == 1

    oracle = local.run([str(data)], str(tmp_path / "oracle"))
    for table in COLUMNS:
        assert sorted(map(repr, result.rows(table))) == sorted(map(repr, oracle.rows(table))), table
