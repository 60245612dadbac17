"""Consuming through real clients over TCP: what a kafka-python producer wrote, read back by kafka-python
(``assign``), kcat ``-C``, Kafka's Java console consumer and confluent-kafka, every field compared; the
replicas' copies of the real bytes (acks=all waits for the followers, the high watermark bounds what a
consumer sees, a reassignment that moves the leader under a reading consumer loses and repeats nothing
and leaves the same batches in the new replicas' segment files); Fetch's long poll, sessions and error
codes, and OffsetForLeaderEpoch, with raw requests."""
from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic

from apache_kafka import java_command
from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import FetchRequest, OffsetForLeaderEpochRequest
from kraftwire.server.host.cluster import BackgroundCluster
from kraftwire.server.wire.client import KafkaClient

SMALL = {"kraftwire.partition.size.bytes": "0"}  # real bytes only: nothing simulated to copy
_names = iter(range(10 ** 6))


@pytest.fixture(scope="module")
def bg():
    with BackgroundCluster(brokers=3) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def admin(bg):
    client = KafkaAdminClient(bootstrap_servers=bg.bootstrap, request_timeout_ms=20000)
    yield client
    client.close()


def new_topic(admin, assignment: dict, configs: dict | None = None) -> str:
    name = f"consume{next(_names)}"
    result = admin.create_topics({name: {"assignments": assignment, "configs": {**SMALL, **(configs or {})}}})
    assert result["topics"][0]["error_code"] == 0, result
    return name


def state(bg, topic: str, index: int = 0):
    return bg.call(lambda: bg.cluster.controller.committed.topic(topic).partitions[index])


def wait_for(predicate, what: str, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while not (found := predicate()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)
    return found


RECORDS = [(f"key-{i}".encode(), f"value-{i}".encode() * (i % 7 + 1), [("h", str(i).encode()), ("n", b"")])
           for i in range(200)]


def produce(bg, topic: str, records=RECORDS, compression: str | None = "gzip", acks="all") -> list[int]:
    producer = KafkaProducer(bootstrap_servers=bg.bootstrap, acks=acks, compression_type=compression,
                             linger_ms=5, batch_size=4096)
    try:
        futures = [producer.send(topic, key=k, value=v, headers=h, partition=0, timestamp_ms=1_700_000_000_000 + i)
                   for i, (k, v, h) in enumerate(records)]
        producer.flush(30)
        return [f.get(30).offset for f in futures]
    finally:
        producer.close(10)


def consume_kafka_python(bg, topic: str, count: int, timeout: float = 30.0) -> list:
    consumer = KafkaConsumer(bootstrap_servers=bg.bootstrap, enable_auto_commit=False, group_id=None,
                             fetch_max_wait_ms=200)
    try:
        partition = TopicPartition(topic, 0)
        consumer.assign([partition])
        consumer.seek_to_beginning(partition)
        seen: list = []
        deadline = time.monotonic() + timeout
        while len(seen) < count and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                seen.extend(records)
        return seen
    finally:
        consumer.close()


@pytest.mark.parametrize("compression", [None, "gzip", "lz4", "zstd", "snappy"])
def test_kafka_python_consumer_reads_every_field(bg, admin, compression):
    topic = new_topic(admin, {0: [1, 2, 3]})
    offsets = produce(bg, topic, compression=compression)
    assert offsets == list(range(len(RECORDS)))
    seen = consume_kafka_python(bg, topic, len(RECORDS))
    assert [(r.offset, r.key, r.value, list(r.headers), r.timestamp) for r in seen] == [
        (i, k, v, h, 1_700_000_000_000 + i) for i, (k, v, h) in enumerate(RECORDS)]


def test_kcat_consumes_to_the_end(bg, admin):
    if shutil.which("kcat") is None:
        pytest.fail("kcat is not installed (tests/setup.sh installs it)")
    topic = new_topic(admin, {0: [2, 3]})
    produce(bg, topic, compression="lz4")
    out = subprocess.run(["kcat", "-C", "-b", bg.bootstrap, "-t", topic, "-p", "0", "-o", "beginning", "-e", "-q",
                          "-f", "%o %k %s %h\n"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [f"{i} {k.decode()} {v.decode()} h={i},n=" for i, (k, v, _) in enumerate(RECORDS)]


def test_java_console_consumer(bg, admin):
    topic = new_topic(admin, {0: [3, 1]})
    produce(bg, topic, compression="snappy")
    command = java_command("org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", bg.bootstrap,
                           "--topic", topic, "--partition", "0", "--offset", "earliest",
                           "--max-messages", str(len(RECORDS)), "--timeout-ms", "60000",
                           "--formatter-property", "print.key=true", "--formatter-property", "print.offset=true",
                           "--formatter-property", "print.headers=true")
    out = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if line]
    assert lines == [f"Offset:{i}\th:{i},n:\t{k.decode()}\t{v.decode()}" for i, (k, v, _) in enumerate(RECORDS)]


def test_confluent_kafka_consumer_assign(bg, admin):
    confluent_kafka = pytest.importorskip("confluent_kafka")
    topic = new_topic(admin, {0: [1, 3]})
    produce(bg, topic, compression="zstd")
    consumer = confluent_kafka.Consumer({"bootstrap.servers": bg.bootstrap, "group.id": "unused",
                                         "enable.auto.commit": False})
    try:
        consumer.assign([confluent_kafka.TopicPartition(topic, 0, confluent_kafka.OFFSET_BEGINNING)])
        seen = []
        deadline = time.monotonic() + 60
        while len(seen) < len(RECORDS) and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None:
                assert message.error() is None, message.error()
                seen.append(message)
    finally:
        consumer.close()
    assert [(m.offset(), m.key(), m.value(), m.headers(), m.timestamp()[1]) for m in seen] == [
        (i, k, v, h, 1_700_000_000_000 + i) for i, (k, v, h) in enumerate(RECORDS)]


# --- raw requests -------------------------------------------------------------------------------------

def fetch_request(topic_id: uuid.UUID, offset: int, *, epoch: int = -1, max_wait_ms: int = 0, min_bytes: int = 1,
                  partition: int = 0, session_id: int = 0, session_epoch: int = -1, max_bytes: int = 1 << 20):
    return FetchRequest(max_wait_ms=max_wait_ms, min_bytes=min_bytes, max_bytes=max_bytes, session_id=session_id,
                        session_epoch=session_epoch, topics=[FetchRequest.FetchTopic(topic_id=topic_id, partitions=[
                            FetchRequest.FetchPartition(partition=partition, current_leader_epoch=epoch,
                                                        fetch_offset=offset, partition_max_bytes=max_bytes)])])


def port_of(bg, broker: int) -> int:
    return bg.call(lambda: bg.cluster.brokers[broker - 1].port)


def send(bg, broker: int, request, version: int):
    port = port_of(bg, broker)

    async def ask():
        client = KafkaClient("127.0.0.1", port, "consume-test")
        try:
            return await client.send(request, version)
        finally:
            await client.close()
    return bg.run(ask())


def only_partition(answer):
    [topic] = answer.responses
    [partition] = topic.partitions
    return partition


def test_fetch_error_codes(bg, admin):
    topic = new_topic(admin, {0: [1, 2]})
    produce(bg, topic, RECORDS[:10], compression=None)
    st = state(bg, topic)
    topic_id = bg.call(lambda: bg.cluster.controller.committed.topic_ids[topic])
    leader, follower, outsider = st.leader, [b for b in st.replicas if b != st.leader][0], 3
    ok = only_partition(send(bg, leader, fetch_request(topic_id, 0, epoch=st.leader_epoch), 17))
    assert (ok.error_code, ok.high_watermark, ok.log_start_offset, ok.last_stable_offset) == (0, 10, 0, 10)
    assert ok.records and ok.aborted_transactions is None and ok.preferred_read_replica == -1
    codes = {
        "past the end": only_partition(send(bg, leader, fetch_request(topic_id, 11), 17)),
        "below the start": only_partition(send(bg, leader, fetch_request(topic_id, -1), 17)),
        "fenced": only_partition(send(bg, leader, fetch_request(topic_id, 0, epoch=st.leader_epoch - 1), 17))
        if st.leader_epoch > 0 else None,
        "unknown epoch": only_partition(send(bg, leader, fetch_request(topic_id, 0, epoch=st.leader_epoch + 1), 17)),
        "not a replica": only_partition(send(bg, outsider, fetch_request(topic_id, 0), 17)),
        "follower, v10": only_partition(send(bg, follower, fetch_request(topic_id, 0).replace(topics=[
            FetchRequest.FetchTopic(topic=topic, partitions=fetch_request(topic_id, 0).topics[0].partitions)]), 10)),
        "no such partition": only_partition(send(bg, leader, fetch_request(topic_id, 0, partition=5), 17)),
        "no such topic id": only_partition(send(bg, leader, fetch_request(uuid.uuid4(), 0), 17)),
    }
    assert {what: p.error_code for what, p in codes.items() if p is not None} == {
        "past the end": ErrorCode.OFFSET_OUT_OF_RANGE, "below the start": ErrorCode.OFFSET_OUT_OF_RANGE,
        **({"fenced": ErrorCode.FENCED_LEADER_EPOCH} if st.leader_epoch > 0 else {}),
        "unknown epoch": ErrorCode.UNKNOWN_LEADER_EPOCH, "not a replica": ErrorCode.NOT_LEADER_OR_FOLLOWER,
        "follower, v10": ErrorCode.NOT_LEADER_OR_FOLLOWER, "no such partition": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        "no such topic id": ErrorCode.UNKNOWN_TOPIC_ID}
    assert (codes["past the end"].high_watermark, codes["past the end"].records) == (-1, b"")
    # KIP-951: the broker that is not the leader names the leader and its endpoint
    moved = send(bg, outsider, fetch_request(topic_id, 0), 17)
    assert only_partition(moved).current_leader.leader_id == leader
    assert [(e.node_id, e.port) for e in moved.node_endpoints] == [(leader, port_of(bg, leader))]
    # a consumer from v11 may read a follower (KIP-392), up to the follower's high watermark
    from_follower = only_partition(send(bg, follower, fetch_request(topic_id, 0), 17))
    assert from_follower.error_code == 0 and from_follower.high_watermark == 10
    # no fetch sessions: a full fetch is answered with session id 0, an incremental one names no session
    full = send(bg, leader, fetch_request(topic_id, 0, session_epoch=0), 17)
    assert (full.error_code, full.session_id) == (0, 0)
    incremental = send(bg, leader, fetch_request(topic_id, 0, session_id=12345, session_epoch=1), 17)
    assert (incremental.error_code, incremental.session_id, incremental.responses) == (
        ErrorCode.FETCH_SESSION_ID_NOT_FOUND, 0, ())


def test_fetch_byte_limits_return_the_first_batch_whole(bg, admin):
    topic = new_topic(admin, {0: [1]})
    big = [(b"k", b"x" * 5000, [])] * 3
    produce(bg, topic, big, compression=None, acks=1)
    topic_id = bg.call(lambda: bg.cluster.controller.committed.topic_ids[topic])
    tiny = only_partition(send(bg, 1, fetch_request(topic_id, 0, max_bytes=10), 17))
    assert tiny.error_code == 0 and 5000 < len(tiny.records) < 10000  # one batch, larger than asked for
    # a second partition gets nothing once the first has used the response's bytes
    both = FetchRequest(max_wait_ms=0, min_bytes=1, max_bytes=10, topics=[FetchRequest.FetchTopic(
        topic_id=topic_id, partitions=[FetchRequest.FetchPartition(partition=0, fetch_offset=o, partition_max_bytes=10)
                                       for o in (0, 1)])])
    first, second = send(bg, 1, both, 17).responses[0].partitions
    assert len(first.records) > 5000 and second.records == b""


def test_long_poll_is_woken_by_an_append():
    """On the virtual clock a fetch's MaxWaitMs never runs out unless the test moves the clock: so an
    answer with the record proves the append woke the wait."""
    with BackgroundCluster(brokers=1, virtual_clock=True) as vbg:
        admin = KafkaAdminClient(bootstrap_servers=vbg.bootstrap, request_timeout_ms=20000)
        try:
            topic = new_topic(admin, {0: [1]})
        finally:
            admin.close()
        topic_id = vbg.call(lambda: vbg.cluster.controller.committed.topic_ids[topic])

        async def poll_then_produce():
            client = KafkaClient("127.0.0.1", vbg.cluster.brokers[0].port, "long-poll")
            try:
                waiting = asyncio.ensure_future(client.send(fetch_request(topic_id, 0, max_wait_ms=600_000), 17))
                await asyncio.sleep(0.3)
                assert not waiting.done()
                return waiting
            except BaseException:
                await client.close()
                raise
        waiting = vbg.run(poll_then_produce())
        produce(vbg, topic, RECORDS[:1], compression=None, acks=1)
        answer = only_partition(vbg.run(asyncio.wait_for(waiting, 30)))
        assert answer.error_code == 0 and answer.high_watermark == 1 and b"value-0" in answer.records


def test_offset_for_leader_epoch_after_a_leader_change(bg, admin):
    topic = new_topic(admin, {0: [1, 2]})
    produce(bg, topic, RECORDS[:5], compression=None)
    first = state(bg, topic)
    assert first.leader == 1
    reassign(bg, admin, topic, [2, 1])
    wait_for(lambda: state(bg, topic).replicas == (2, 1) and 2 in state(bg, topic).isr, "the new order")
    admin.elect_leaders(0, {topic: [0]}, raise_errors=False)  # preferred: the first replica leads
    wait_for(lambda: state(bg, topic).leader == 2, "broker 2 to lead")
    produce(bg, topic, RECORDS[5:8], compression=None)
    now = state(bg, topic)
    assert now.leader == 2 and now.leader_epoch > first.leader_epoch

    def ask(epoch: int, broker: int = 2, current: int = -1):
        request = OffsetForLeaderEpochRequest(replica_id=-1, topics=[OffsetForLeaderEpochRequest.OffsetForLeaderTopic(
            topic=topic, partitions=[OffsetForLeaderEpochRequest.OffsetForLeaderPartition(
                partition=0, current_leader_epoch=current, leader_epoch=epoch)])])
        [result] = send(bg, broker, request, 4).topics
        [partition] = result.partitions
        return partition.error_code, partition.leader_epoch, partition.end_offset
    assert ask(first.leader_epoch) == (0, first.leader_epoch, 5)
    assert ask(now.leader_epoch) == (0, now.leader_epoch, 8)
    assert ask(now.leader_epoch, broker=1)[0] == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert ask(now.leader_epoch, current=first.leader_epoch)[0] == ErrorCode.FENCED_LEADER_EPOCH
    assert ask(now.leader_epoch, current=now.leader_epoch + 1)[0] == ErrorCode.UNKNOWN_LEADER_EPOCH


def reassign(bg, admin, topic: str, replicas: list[int]) -> None:
    from kafka.protocol.admin import AlterPartitionReassignmentsRequest as Alter
    request = Alter(timeout_ms=10000, topics=[Alter.ReassignableTopic(name=topic, partitions=[
        Alter.ReassignableTopic.ReassignablePartition(partition_index=0, replicas=replicas)])])
    response = admin._manager.run(admin._send_request_to_controller, request)
    assert all(p.error_code == 0 for t in response.responses for p in t.partitions), response


# --- replication of the real bytes --------------------------------------------------------------------

def test_acks_all_waits_for_the_followers_and_the_high_watermark_bounds_consumers():
    """On the virtual clock, a follower's copy moves only when time does: an acks=all produce is answered
    once the followers have the batch, and until then a consumer's fetch sees nothing past the HW."""
    with BackgroundCluster(brokers=3, virtual_clock=True) as vbg:
        admin = KafkaAdminClient(bootstrap_servers=vbg.bootstrap, request_timeout_ms=20000)
        try:
            topic = new_topic(admin, {0: [1, 2, 3]})
        finally:
            admin.close()
        topic_id = vbg.call(lambda: vbg.cluster.controller.committed.topic_ids[topic])
        producer = KafkaProducer(bootstrap_servers=vbg.bootstrap, acks="all", request_timeout_ms=120_000)
        try:
            future = producer.send(topic, key=b"k", value=b"v" * 1000, partition=0)
            wait_for(lambda: vbg.call(lambda: vbg.cluster.brokers[0].replica_manager.partition(
                topic_id, 0).log.log_end_offset) == 1, "the leader to append")
            assert not future.is_done
            before = only_partition(send(vbg, 1, fetch_request(topic_id, 0), 17))
            assert (before.high_watermark, before.records) == (0, b"")
            vbg.run(vbg.cluster.advance(1.0))
            assert future.get(30).offset == 0
        finally:
            producer.close(10)
        after = only_partition(send(vbg, 1, fetch_request(topic_id, 0), 17))
        assert after.high_watermark == 1 and b"v" * 1000 in after.records
        for broker in (2, 3):
            log = vbg.call(lambda b=broker: vbg.cluster.brokers[b - 1].replica_manager.partition(topic_id, 0).log)
            assert log.log_end_offset == 1


def segment_batches(bg, broker: int, topic: str) -> bytes:
    """The bytes of a replica's segment files, read from disk."""
    def paths():
        manager = bg.cluster.brokers[broker - 1].log_manager
        return [d.path for d in manager.directories]
    files = sorted(p for directory in bg.call(paths) for p in Path(directory).glob(f"{topic}-0/*.log"))
    assert files, f"broker {broker} holds no segment of {topic}"
    return b"".join(p.read_bytes() for p in files)


def test_reassignment_moves_the_leader_under_a_reading_consumer(bg, admin):
    topic = new_topic(admin, {0: [1]})
    produced: list[int] = []
    failures: list[BaseException] = []
    stop = threading.Event()

    def keep_producing():
        producer = KafkaProducer(bootstrap_servers=bg.bootstrap, acks="all", linger_ms=2, retries=2147483647,
                                 max_in_flight_requests_per_connection=1)
        try:
            i = 0
            while not stop.is_set() or i < 300:
                producer.send(topic, value=f"r{i}".encode(), partition=0).get(60)
                produced.append(i)
                i += 1
        except BaseException as exc:
            failures.append(exc)
        finally:
            producer.close(10)
    writer = threading.Thread(target=keep_producing, daemon=True)
    writer.start()
    consumer = KafkaConsumer(bootstrap_servers=bg.bootstrap, enable_auto_commit=False, group_id=None,
                             fetch_max_wait_ms=100, metadata_max_age_ms=500)
    seen: list[bytes] = []
    try:
        consumer.assign([TopicPartition(topic, 0)])
        consumer.seek_to_beginning(TopicPartition(topic, 0))
        wait_for(lambda: len(produced) > 50, "records before the move")
        reassign(bg, admin, topic, [2, 3])
        wait_for(lambda: state(bg, topic).replicas == (2, 3) and not state(bg, topic).reassigning, "the move")
        stop.set()
        writer.join(120)
        assert not writer.is_alive() and failures == []
        deadline = time.monotonic() + 60
        while len(seen) < len(produced) and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=300).values():
                seen.extend(r.value for r in records)
    finally:
        consumer.close()
    assert seen == [f"r{i}".encode() for i in produced]  # every acknowledged record once, in order
    assert state(bg, topic).leader in (2, 3)
    wait_for(lambda: segment_batches(bg, 2, topic) == segment_batches(bg, 3, topic), "the same batches on 2 and 3")


def test_isr_shrinks_by_the_lag_rule_and_expands_when_the_follower_catches_up():
    """A follower whose copy stands still (replication paused) leaves the ISR once it has held less than the
    leader's log for longer than replica.lag.time.max.ms (30 s) of the virtual clock, which lets an acks=all
    produce complete; resumed, it catches up and joins again. Not before: 10 s in, it is still in."""
    with BackgroundCluster(brokers=3, virtual_clock=True) as vbg:
        admin = KafkaAdminClient(bootstrap_servers=vbg.bootstrap, request_timeout_ms=20000)
        try:
            topic = new_topic(admin, {0: [1, 2, 3]})
        finally:
            admin.close()
        producer = KafkaProducer(bootstrap_servers=vbg.bootstrap, acks="all", request_timeout_ms=300_000,
                                 delivery_timeout_ms=400_000)
        try:
            producer.send(topic, value=b"first", partition=0)
            vbg.run(vbg.cluster.advance(1.0))
            producer.flush(30)
            vbg.run(vbg.cluster.pause_replication(3))
            future = producer.send(topic, value=b"second", partition=0)
            topic_id = vbg.call(lambda: vbg.cluster.controller.committed.topic_ids[topic])
            wait_for(lambda: vbg.call(lambda: vbg.cluster.brokers[0].replica_manager.partition(
                topic_id, 0).log.log_end_offset) == 2, "the leader to append")
            vbg.run(vbg.cluster.advance(10.0))
            assert not future.is_done and state(vbg, topic).isr == (1, 2, 3)
            vbg.run(vbg.cluster.advance(40.0))  # the leader looks every 15 s: it sees the 30 s pass by 45 s
            wait_for(lambda: state(vbg, topic).isr == (1, 2), "broker 3 to leave the ISR")
            assert future.get(30).offset == 1
            vbg.run(vbg.cluster.resume_replication(3))
            vbg.run(vbg.cluster.advance(1.0))
            wait_for(lambda: state(vbg, topic).isr == (1, 2, 3), "broker 3 to join the ISR again")
        finally:
            producer.close(10)


def test_a_follower_of_a_new_leader_truncates_by_leader_epoch():
    """Broker 2 falls behind (its replication paused) while broker 1 takes acks=1 records, then leads after a
    preferred election: broker 1, now its follower, cuts its log where epoch 0 ended in broker 2's log (the
    records only it had are gone, as in Kafka) and copies the new leader's batches; both logs end alike."""
    with BackgroundCluster(brokers=2, virtual_clock=True) as vbg:
        admin = KafkaAdminClient(bootstrap_servers=vbg.bootstrap, request_timeout_ms=20000)
        try:
            topic = new_topic(admin, {0: [1, 2]})
            topic_id = vbg.call(lambda: vbg.cluster.controller.committed.topic_ids[topic])

            def log_end(broker: int) -> int:
                return vbg.call(lambda: vbg.cluster.brokers[broker - 1].replica_manager.partition(
                    topic_id, 0).log.log_end_offset)
            producer = KafkaProducer(bootstrap_servers=vbg.bootstrap, acks=1, linger_ms=0)
            try:
                for i in range(3):
                    producer.send(topic, value=b"kept%d" % i, partition=0).get(30)
                vbg.run(vbg.cluster.advance(1.0))
                wait_for(lambda: log_end(2) == 3, "broker 2 to copy the first records")
                vbg.run(vbg.cluster.pause_replication(2))
                for i in range(5):
                    producer.send(topic, value=b"lost%d" % i, partition=0).get(30)
                assert (log_end(1), log_end(2)) == (8, 3)
                reassign(vbg, admin, topic, [2, 1])
                wait_for(lambda: state(vbg, topic).replicas == (2, 1), "the new order")
                admin.elect_leaders(0, {topic: [0]}, raise_errors=False)
                wait_for(lambda: state(vbg, topic).leader == 2, "broker 2 to lead")
                for i in range(2):
                    producer.send(topic, value=b"new%d" % i, partition=0).get(30)
            finally:
                producer.close(10)
            vbg.run(vbg.cluster.resume_replication(2))
            vbg.run(vbg.cluster.advance(1.0))
            wait_for(lambda: log_end(1) == 5, "broker 1 to truncate and copy")
            assert segment_batches(vbg, 1, topic) == segment_batches(vbg, 2, topic)
            seen = consume_kafka_python(vbg, topic, 5)
            assert [r.value for r in seen] == [b"kept0", b"kept1", b"kept2", b"new0", b"new1"]
        finally:
            admin.close()


KGO = Path(__file__).resolve().parents[1] / "kgo"


def test_franz_go_produces_and_consumes(bg, admin):
    """``go test`` of tests/kgo (franz-go's kgo, modules pinned by its go.sum, as tests/kadm's)."""
    go = shutil.which("go") or "/usr/local/go/bin/go"
    topic = new_topic(admin, {0: [2, 1, 3]})
    environment = dict(os.environ, KRAFTWIRE_BOOTSTRAP=bg.bootstrap, KRAFTWIRE_TOPIC=topic, GOFLAGS="-mod=readonly")
    done = subprocess.run([go, "test", "-count=1", "-v", "./..."], cwd=KGO, env=environment,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "--- PASS: TestProduceThenConsumeAssigned" in done.stdout, done.stdout


def test_a_move_copies_real_and_simulated_bytes_at_the_throttled_rate():
    """A partition of real records (about 1 MB) and 500 kB of simulated size moves to a broker whose bandwidth
    is 100 kB/s: on the virtual clock the move takes (real + simulated bytes) / rate, and the new replica's
    segment files hold the leader's batches."""
    with BackgroundCluster(brokers=2, virtual_clock=True) as vbg:
        admin = KafkaAdminClient(bootstrap_servers=vbg.bootstrap, request_timeout_ms=20000)
        try:
            topic = new_topic(admin, {0: [1]}, {"kraftwire.partition.size.bytes": "500000"})
            produce(vbg, topic, [(b"k", bytes([i % 251]) * 5000, []) for i in range(200)], compression=None, acks=1)
            topic_id = vbg.call(lambda: vbg.cluster.controller.committed.topic_ids[topic])
            real = vbg.call(lambda: vbg.cluster.brokers[0].replica_manager.partition(topic_id, 0).log.size_bytes)
            assert real > 1_000_000
            before = segment_batches(vbg, 1, topic)
            vbg.run(vbg.cluster.set_bandwidth(2, 100_000))
            reassign(vbg, admin, topic, [2])
            took = vbg.run(vbg.cluster.run_until_reassignments_done(), timeout=120)
        finally:
            admin.close()
        assert took == pytest.approx((real + 500_000) / 100_000, rel=0.02)
        assert segment_batches(vbg, 2, topic) == before
        assert [r.value[0] for r in consume_kafka_python(vbg, topic, 200)] == [i % 251 for i in range(200)]


def test_fetch_and_offset_for_leader_epoch_are_authorized():
    """READ on a topic lets a consumer fetch it (TOPIC_AUTHORIZATION_FAILED otherwise), DESCRIBE lets it ask
    OffsetForLeaderEpoch, and a replica's fetch needs CLUSTER_ACTION on the cluster, as Kafka's KafkaApis."""
    from kafka.admin import ACL, ACLOperation, ACLPermissionType, ResourcePattern, ResourceType
    from kraftwire import Security
    from kraftwire.server.wire.security import ClientSecurity
    users = {"admin": "admin-secret", "reader": "reader-secret"}
    security = Security(listener_name="SASL_PLAINTEXT", protocol_map={"CONTROLLER": "SASL_PLAINTEXT"},
                        plain_users=users, authorizer=True, super_users=("User:admin",))
    with BackgroundCluster(brokers=1, security=security) as sbg:
        admin = KafkaAdminClient(bootstrap_servers=sbg.bootstrap, security_protocol="SASL_PLAINTEXT",
                                 sasl_mechanism="PLAIN", sasl_plain_username="admin", sasl_plain_password="admin-secret")
        try:
            admin.create_topics([NewTopic("readable", 1, 1), NewTopic("secret", 1, 1)])
            assert not admin.create_acls([ACL("User:reader", "*", ACLOperation.READ, ACLPermissionType.ALLOW,
                                              ResourcePattern(ResourceType.TOPIC, "readable"))])["failed"]
        finally:
            admin.close()
        ids = sbg.call(lambda: dict(sbg.cluster.controller.committed.topic_ids))
        port = sbg.call(lambda: sbg.cluster.brokers[0].port)

        async def ask(user: str):
            client = KafkaClient("127.0.0.1", port, user, ClientSecurity("SASL_PLAINTEXT", None, "PLAIN", user,
                                                                         users[user]))
            try:
                codes = {}
                for name in ("readable", "secret"):
                    answer = await client.send(fetch_request(ids[name], 0), 17)
                    codes[name] = only_partition(answer).error_code
                replica = fetch_request(ids["readable"], 0).replace(
                    replica_state=FetchRequest.ReplicaState(replica_id=7, replica_epoch=1))
                codes["as a replica"] = only_partition(await client.send(replica, 17)).error_code
                epochs = await client.send(OffsetForLeaderEpochRequest(topics=[
                    OffsetForLeaderEpochRequest.OffsetForLeaderTopic(topic=name, partitions=[
                        OffsetForLeaderEpochRequest.OffsetForLeaderPartition(partition=0, leader_epoch=0)])
                    for name in ("readable", "secret")]), 4)
                codes["epochs"] = [t.partitions[0].error_code for t in epochs.topics]
                return codes
            finally:
                await client.close()
        assert sbg.run(ask("reader")) == {
            "readable": 0, "secret": ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            "as a replica": ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            "epochs": [0, ErrorCode.TOPIC_AUTHORIZATION_FAILED]}  # READ implies DESCRIBE
        # allowed, but broker 7 is no replica of it: Kafka's answer to a fetch without an epoch
        assert sbg.run(ask("admin"))["as a replica"] == ErrorCode.NOT_LEADER_OR_FOLLOWER
