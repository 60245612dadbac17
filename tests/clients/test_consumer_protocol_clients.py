"""Consumer groups of the KIP-848 protocol (ConsumerGroupHeartbeat, ConsumerGroupDescribe) through real
clients over TCP: Kafka 4.3's Java consumer with group.protocol=consumer (tests/clients/java/
ConsumerProtocolMembers.java, two members in one JVM) shares a 4-partition topic, reads every record,
commits; kafka-consumer-groups describes the group as a consumer group (its members, the uniform
assignor, Stable); one member leaves and the other is handed every partition; the commits are read
back, also by a new coordinator after the old one's broker died. The cluster's heartbeat interval is
500 ms (group.consumer.heartbeat.interval.ms), so a rebalance takes a few heartbeats, not seconds each."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic

from apache_kafka import JVM_FLAGS, LIB, run_tool
from kraftwire.server.host.cluster import BackgroundCluster

PROGRAM = Path(__file__).resolve().parent / "java" / "ConsumerProtocolMembers.java"
CONSUMER_GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
GROUP_CONFIGS = {"group.consumer.heartbeat.interval.ms": "500", "group.consumer.session.timeout.ms": "10000",
                 "offsets.topic.num.partitions": "3", "group.initial.rebalance.delay.ms": "0"}
RECORDS = 40


@pytest.fixture(scope="module")
def bg():
    with BackgroundCluster(brokers=3, group_configs=GROUP_CONFIGS) as cluster:
        yield cluster


def _topic(bg, name: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap)
    try:
        admin.create_topics([NewTopic(name, 4, 3)])
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=bg.bootstrap, acks="all")
    for i in range(RECORDS):
        producer.send(name, f"{name}-{i}".encode(), partition=i % 4)
    producer.flush(30)
    producer.close(10)


def _line(process: subprocess.Popen, prefix: str, timeout: float = 90.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        if line.startswith(prefix):
            return line.strip()
    process.kill()
    raise AssertionError(f"no {prefix} line: {process.stderr.read()[-3000:]}")


def _committed(bg, group: str) -> dict[int, int]:
    """The group's committed offset per partition, as kafka-consumer-groups --describe --offsets prints them."""
    done = run_tool(CONSUMER_GROUPS, "--bootstrap-server", bg.bootstrap, "--describe", "--group", group, "--offsets")
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith(group)]
    return {int(row[2]): int(row[3]) for row in rows}


def test_java_consumer_protocol_members_share_leave_commit_and_describe(bg):
    topic, group = "kip848-java", "kip848-java-group"
    _topic(bg, topic)
    process = subprocess.Popen(["java", *JVM_FLAGS, "-cp", f"{LIB}/*", str(PROGRAM), bg.bootstrap, topic, group,
                                str(RECORDS)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        shared = _line(process, "SHARED")
        assert shared.split()[1:3] == ["2", "2"], shared  # the uniform assignor balances 4 partitions over 2
        _line(process, "DESCRIBE")
        members = run_tool(CONSUMER_GROUPS, "--bootstrap-server", bg.bootstrap, "--describe", "--group", group,
                           "--members")
        assert members.returncode == 0, members.stderr
        rows = [line.split() for line in members.stdout.splitlines() if line.startswith(group)]
        assert sorted(row[3] for row in rows) == ["first", "second"], members.stdout
        assert [row[4] for row in rows] == ["2", "2"], members.stdout  # #PARTITIONS
        state = run_tool(CONSUMER_GROUPS, "--bootstrap-server", bg.bootstrap, "--describe", "--group", group,
                         "--state")
        assert state.returncode == 0, state.stderr
        row = next(line.split() for line in state.stdout.splitlines() if line.startswith(group))
        assert row[3:] == ["uniform", "Stable", "2"], state.stdout  # ASSIGNMENT-STRATEGY, STATE, #MEMBERS
        listed = run_tool(CONSUMER_GROUPS, "--bootstrap-server", bg.bootstrap, "--list", "--type")
        assert any(line.split() == [group, "Consumer"] for line in listed.stdout.splitlines()), \
            listed.stdout
        process.stdin.write("\n")
        process.stdin.flush()
        assert _line(process, "ALONE") == "ALONE 4"
        assert _line(process, "DONE") == f"DONE {RECORDS}"
        assert process.wait(30) == 0, process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
    assert _committed(bg, group) == {p: RECORDS // 4 for p in range(4)}
