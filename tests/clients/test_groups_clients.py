"""Consumer groups (classic protocol) through real clients over TCP: kafka-python's KafkaConsumer and
confluent-kafka's Consumer join, sync and heartbeat with a group id, share a topic's partitions (each
record consumed once), leave, commit; a new consumer reads the commits back; the commits are in
``__consumer_offsets``' segment files in Kafka's record format (read by Kafka's kafka-dump-log
--offsets-decoder) and survive the death of the coordinator's broker."""
from __future__ import annotations

import itertools
import time

import pytest
from confluent_kafka import Consumer
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic

from apache_kafka import DUMP_LOG, run_tool
from kraftwire.server.broker.group_coordinator import OFFSETS_TOPIC, java_abs, java_hash
from kraftwire.server.host.cluster import BackgroundCluster

GROUP_CONFIGS = {"group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "5"}
_names = itertools.count()


@pytest.fixture(scope="module")
def bg():
    with BackgroundCluster(brokers=3, group_configs=GROUP_CONFIGS) as cluster:
        yield cluster


def new_topic(bg, partitions: int = 4, records: int = 40) -> tuple[str, list[bytes]]:
    name = f"grouped{next(_names)}"
    admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap)
    try:
        admin.create_topics([NewTopic(name, partitions, 3)])
    finally:
        admin.close()
    return name, produce(bg, name, [f"{name}-{i}".encode() for i in range(records)])


def produce(bg, topic: str, values: list[bytes]) -> list[bytes]:
    producer = KafkaProducer(bootstrap_servers=bg.bootstrap, acks="all")
    for value in values:
        producer.send(topic, value)
    producer.flush(30)
    producer.close(10)
    return values


def until(predicate, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while not (found := predicate()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
    return found


def python_consumer(bg, topic: str, group: str) -> KafkaConsumer:
    return KafkaConsumer(topic, bootstrap_servers=bg.bootstrap, group_id=group, auto_offset_reset="earliest",
                         enable_auto_commit=False, session_timeout_ms=10000, heartbeat_interval_ms=500)


def test_kafka_python_members_share_leave_and_commit(bg):
    topic, _ = new_topic(bg, records=0)
    group = f"kp-{topic}"
    first, second = python_consumer(bg, topic, group), python_consumer(bg, topic, group)
    seen: list[bytes] = []
    try:
        def both_assigned() -> bool:
            for consumer in (first, second):
                for records in consumer.poll(200).values():
                    seen.extend(r.value for r in records)
            a, b = first.assignment(), second.assignment()
            return bool(a) and bool(b) and not (a & b) and len(a | b) == 4
        until(both_assigned, "both members assigned disjoint partitions")
        values = produce(bg, topic, [f"{topic}-{i}".encode() for i in range(40)])  # once the group is stable

        def drained() -> bool:
            for consumer in (first, second):
                for records in consumer.poll(200).values():
                    seen.extend(r.value for r in records)
            return len(seen) >= len(values)
        until(drained, "every record consumed")
        assert sorted(seen) == sorted(values)  # each record once across the two members
        first.commit()
        second.commit()
        first.close()  # LeaveGroup: the other member takes every partition
        until(lambda: second.poll(200) is not None and len(second.assignment()) == 4, "the rebalance after a leave")
        extra = produce(bg, topic, [f"{topic}-late-{i}".encode() for i in range(8)])
        late: list[bytes] = []
        until(lambda: late.extend(r.value for rs in second.poll(200).values() for r in rs) or len(late) >= 8,
              "the late records")
        assert sorted(late) == sorted(extra)
        second.commit()
    finally:
        first.close()
        second.close()
    reader = python_consumer(bg, topic, group)
    try:
        committed = {p: reader.committed(TopicPartition(topic, p)) for p in range(4)}
        assert sum(committed.values()) == len(values) + 8
        more = produce(bg, topic, [b"after"])
        got: list[bytes] = []
        until(lambda: got.extend(r.value for rs in reader.poll(200).values() for r in rs) or got, "a new record")
        assert got == more  # nothing already committed is read again
    finally:
        reader.close()


def test_confluent_kafka_consumer_group(bg):
    topic, values = new_topic(bg, partitions=3, records=30)
    group = f"ck-{topic}"
    conf = {"bootstrap.servers": bg.bootstrap, "group.id": group, "auto.offset.reset": "earliest",
            "enable.auto.commit": False, "session.timeout.ms": 10000}
    consumer = Consumer(conf)
    consumer.subscribe([topic])
    seen: list[bytes] = []
    try:
        def read() -> bool:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                seen.append(message.value())
            return len(seen) >= len(values)
        until(read, "every record through confluent-kafka")
        consumer.commit(asynchronous=False)
        assert sorted(seen) == sorted(values)
    finally:
        consumer.close()
    again = Consumer(conf)
    try:
        committed = again.committed([__import__("confluent_kafka").TopicPartition(topic, p) for p in range(3)],
                                    timeout=30)
        assert sum(tp.offset for tp in committed) == len(values)
    finally:
        again.close()


def _coordinator(bg, group: str) -> tuple[int, int, str]:
    """(the coordinator's broker id, the partition of __consumer_offsets, its active segment path)."""
    def find():
        image = next(b for b in bg.cluster.brokers if b.running).image
        topic = image.topic(OFFSETS_TOPIC)
        index = java_abs(java_hash(group)) % len(topic.partitions)
        leader = topic.partitions[index].leader
        broker = next(b for b in bg.cluster.brokers if b.broker_id == leader)
        partition = broker.replica_manager.partition(topic.topic_id, index)
        return leader, index, str(partition.log.active_segment.path)
    return bg.call(find)


def test_offsets_in_kafka_format_survive_the_coordinators_death(bg):
    topic, values = new_topic(bg, partitions=2, records=20)
    group = f"moved-{topic}"
    consumer = python_consumer(bg, topic, group)
    seen: list[bytes] = []
    until(lambda: seen.extend(r.value for rs in consumer.poll(200).values() for r in rs) or len(seen) >= 20,
          "the records")
    consumer.commit()
    consumer.close()
    leader, index, segment = _coordinator(bg, group)
    dumped = run_tool(DUMP_LOG, "--files", segment, "--offsets-decoder", "--print-data-log")
    assert dumped.returncode == 0, dumped.stderr
    assert f'"group":"{group}","topic":"{topic}","partition":0' in dumped.stdout.replace(" ", ""), dumped.stdout
    assert '"type":"2"' in dumped.stdout.replace(" ", "") or f'"group":"{group}"}}' in dumped.stdout.replace(" ", "")
    bg.run(bg.cluster.stop_broker(leader))
    def new_leader() -> bool:
        image = bg.call(lambda: next(b for b in bg.cluster.brokers if b.running).image)
        topic = image.topic(OFFSETS_TOPIC)
        return topic.partitions[index].leader not in (leader, -1)
    until(new_leader, "a new leader of the group's __consumer_offsets partition")
    reader = python_consumer(bg, topic, group)
    try:
        committed = until(lambda: all(reader.committed(TopicPartition(topic, p)) is not None for p in range(2))
                          and [reader.committed(TopicPartition(topic, p)) for p in range(2)], "the commits read back")
        assert sum(committed) == 20
    finally:
        reader.close()
