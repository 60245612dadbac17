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
from confluent_kafka import Consumer, TopicPartition
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic

from apache_kafka import DUMP_LOG, JVM_FLAGS, LIB, run_tool
from kraftwire.server.broker.group_coordinator import OFFSETS_TOPIC, java_hash
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


def _coordinator(bg, group: str) -> tuple[int, int, str]:
    """(the coordinator's broker id, its __consumer_offsets partition, that partition's active segment)."""
    def find():
        image = next(b for b in bg.cluster.brokers if b.running).image
        topic = image.topic(OFFSETS_TOPIC)
        index = abs(java_hash(group)) % len(topic.partitions)
        leader = topic.partitions[index].leader
        broker = next(b for b in bg.cluster.brokers if b.broker_id == leader)
        partition = broker.replica_manager.partition(topic.topic_id, index)
        return leader, index, str(partition.log.active_segment.path)
    return bg.call(find)


def _until(predicate, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while not (found := predicate()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
    return found


def test_confluent_kafka_consumer_protocol_and_a_coordinator_failover(bg):
    topic, group = "kip848-ck", "kip848-ck-group"
    _topic(bg, topic)
    conf = {"bootstrap.servers": bg.bootstrap, "group.id": group, "group.protocol": "consumer",
            "auto.offset.reset": "earliest", "enable.auto.commit": False}
    first, second = Consumer({**conf, "client.id": "first"}), Consumer({**conf, "client.id": "second"})
    first.subscribe([topic])
    second.subscribe([topic])
    seen: set[bytes] = set()

    def read(consumer: Consumer) -> None:
        message = consumer.poll(0.1)
        if message is not None and message.error() is None:
            seen.add(message.value())
            consumer.commit(message=message, asynchronous=False)
    try:
        def shared() -> bool:
            read(first)
            read(second)
            a, b = {(tp.topic, tp.partition) for tp in first.assignment()}, \
                {(tp.topic, tp.partition) for tp in second.assignment()}
            return bool(a) and bool(b) and not (a & b) and len(a | b) == 4 and len(seen) >= RECORDS
        _until(shared, "both confluent-kafka members assigned and every record read")
        second.close()
        _until(lambda: read(first) or len(first.assignment()) == 4, "the remaining member handed every partition")
    finally:
        first.close()
    assert len(seen) == RECORDS
    assert _committed(bg, group) == {p: RECORDS // 4 for p in range(4)}
    leader, index, segment = _coordinator(bg, group)
    dumped = run_tool(DUMP_LOG, "--files", segment, "--offsets-decoder", "--print-data-log")
    assert dumped.returncode == 0, dumped.stderr
    flat = dumped.stdout.replace(" ", "")
    for kind in (3, 5, 6, 7, 8):  # group, member, target assignment (metadata, member), current assignment
        assert f'key:{{"type":"{kind}","data":{{"groupId":"{group}"' in flat, dumped.stdout[-3000:]
    bg.run(bg.cluster.stop_broker(leader))

    def moved() -> bool:
        image = bg.call(lambda: next(b for b in bg.cluster.brokers if b.running).image)
        return image.topic(OFFSETS_TOPIC).partitions[index].leader not in (leader, -1)
    _until(moved, "a new leader of the group's __consumer_offsets partition")
    state = _until(lambda: (done := run_tool(CONSUMER_GROUPS, "--bootstrap-server", bg.bootstrap, "--describe",
                                             "--group", group, "--state")).returncode == 0 and done.stdout,
                   "the group described by its new coordinator")
    assert "Empty" in state, state  # the group read back from __consumer_offsets: no member, not Dead
    again = Consumer({**conf, "client.id": "again"})
    again.subscribe([topic])
    try:
        _until(lambda: again.poll(0.1) is None and len(again.assignment()) == 4, "the new member assigned")
        committed = again.committed([TopicPartition(topic, p) for p in range(4)], timeout=30)
        assert [tp.offset for tp in committed] == [RECORDS // 4] * 4
    finally:
        again.close()
    assert _committed(bg, group) == {p: RECORDS // 4 for p in range(4)}
