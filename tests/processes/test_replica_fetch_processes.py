"""Replication of the real bytes between ``kraftwire broker`` processes (server/broker/replica_fetcher.py):
one controller process and three broker processes, a kafka-python producer with acks=all to an RF-3
topic; the followers' segment files come to hold the leader's batches byte for byte, and after the
leader's process is killed -9 every acknowledged record is read from the new leader. With
min.insync.replicas=2, acks=all is answered only while the followers of the other processes fetch."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import KafkaError

from kraftwire.server.host.process_harness import ProcessCluster

TOPIC = "replicated"


def _until(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _leader(bootstrap: str, topic: str) -> tuple[int, list[int]] | None:
    try:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000)
        try:
            described = admin.describe_topics([topic])[0]
        finally:
            admin.close()
    except KafkaError:  # a killed broker the metadata still names: asked again
        return None
    partitions = described.get("partitions") or []
    if described.get("error_code") or not partitions or partitions[0]["leader_id"] < 0:
        return None
    return partitions[0]["leader_id"], list(partitions[0]["isr_nodes"])


def _segment(harness: ProcessCluster, broker: int) -> bytes:
    path = Path(harness.data_dir(broker)) / f"{TOPIC}-0" / "00000000000000000000.log"
    return path.read_bytes() if path.exists() else b""


def _started(tmp_path) -> tuple[ProcessCluster, str]:
    harness = ProcessCluster(tmp_path, count=1, brokers=3)
    harness.start_all()
    bootstrap = harness.bootstrap
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    try:
        admin.create_topics([NewTopic(TOPIC, 1, 3, topic_configs={"min.insync.replicas": "2"})])
    finally:
        admin.close()
    _until(lambda: (found := _leader(bootstrap, TOPIC)) and len(found[1]) == 3, 30, "the topic's ISR of 3")
    return harness, bootstrap


def test_followers_in_other_processes_copy_the_leaders_batches_and_a_new_leader_has_every_ack(tmp_path):
    harness, bootstrap = _started(tmp_path)
    with harness:
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5, request_timeout_ms=10000)
        values = [f"record-{i}".encode() for i in range(300)]
        for future in [producer.send(TOPIC, value, partition=0) for value in values]:
            future.get(timeout=20)  # acknowledged by the ISR: followers of other processes fetched it
        producer.close()
        leader, isr = _leader(bootstrap, TOPIC)
        followers = [b for b in harness.broker_ids if b != leader]
        assert sorted(isr) == harness.broker_ids
        leader_bytes = _segment(harness, leader)
        assert len(leader_bytes) > 300 * len(b"record-000")
        for follower in followers:  # the same batches, as the leader wrote them (offsets, epochs, CRCs)
            _until(lambda f=follower: _segment(harness, f) == leader_bytes, 10, f"broker {follower}'s segment")
        harness.kill(leader)
        survivors = ",".join(f"{h}:{p}" for b in followers for h, p in [harness.addresses[b]])
        new_leader = _until(lambda: (found := _leader(survivors, TOPIC)) and found[0] in followers and found[0],
                            30, "a new leader")
        host, port = harness.addresses[new_leader]
        consumer = KafkaConsumer(bootstrap_servers=f"{host}:{port}", enable_auto_commit=False,
                                 auto_offset_reset="earliest", consumer_timeout_ms=5000)
        consumer.assign([TopicPartition(TOPIC, 0)])
        read = []
        deadline = time.monotonic() + 20
        while len(read) < len(values) and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                read += [r.value for r in records]
        consumer.close()
        assert read == values


def test_acks_all_with_min_insync_2_is_answered_only_while_followers_of_other_processes_fetch(tmp_path):
    harness, bootstrap = _started(tmp_path)
    with harness:
        leader, _isr = _leader(bootstrap, TOPIC)
        followers = [b for b in harness.broker_ids if b != leader]
        host, port = harness.addresses[leader]
        producer = KafkaProducer(bootstrap_servers=f"{host}:{port}", acks="all", request_timeout_ms=3000,
                                 retries=0, max_block_ms=5000)
        producer.send(TOPIC, b"first", partition=0).get(timeout=10)
        for follower in followers:  # the followers hold it: the high watermark passed it only once they fetched it
            assert b"first" in _segment(harness, follower)
        for follower in followers:
            os.kill(harness.processes[follower].pid, signal.SIGSTOP)
        try:
            stalled = producer.send(TOPIC, b"second", partition=0)
            try:
                stalled.get(timeout=10)
                raise AssertionError("acks=all answered while no follower fetched")
            except AssertionError:
                raise
            except Exception as exc:
                # REQUEST_TIMED_OUT while the ISR still names them, NOT_ENOUGH_REPLICAS(_AFTER_APPEND) once
                # their sessions lapsed and the ISR shrank to the leader alone
                assert type(exc).__name__ in ("RequestTimedOutError", "KafkaTimeoutError", "NotEnoughReplicasError",
                                              "NotEnoughReplicasAfterAppendError"), exc
        finally:
            for follower in followers:
                os.kill(harness.processes[follower].pid, signal.SIGCONT)
        producer.send(TOPIC, b"third", partition=0).get(timeout=15)
        # min.insync.replicas=2: acknowledged once at least one follower (back in the ISR) fetched it
        assert any(b"third" in _segment(harness, follower) for follower in followers)
        for follower in followers:
            _until(lambda f=follower: b"third" in _segment(harness, f), 20, f"broker {follower} fetching again")
        producer.close()
