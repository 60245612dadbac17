"""Producing through real clients over TCP: kafka-python (acks 0, 1, all), confluent-kafka's idempotent
producer, kcat -P, Apache Kafka's own console producer (idempotent by default), kafka-get-offsets,
kafka-delete-records and kafka-broker-api-versions; and Kafka's error codes for what a producer gets
wrong (unknown topic or partition, acks=2, an oversized or corrupt batch), with nothing appended.

Each test reads back what the cluster then holds: ListOffsets' end offsets, the batches in the leader's
segment file on disk, the low watermark."""
from __future__ import annotations

import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic

from apache_kafka import run_tool
from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import InitProducerIdRequest, ListOffsetsRequest, ProduceRequest
from kraftwire.codec.records import encode_batch, iter_batches
from kraftwire.server.host.cluster import BackgroundCluster
from raw_client import RawConnection, encode_request

CONSOLE_PRODUCER = "org.apache.kafka.tools.ConsoleProducer"
GET_OFFSETS = "org.apache.kafka.tools.GetOffsetShell"
DELETE_RECORDS = "org.apache.kafka.tools.DeleteRecordsCommand"
BROKER_API_VERSIONS = "org.apache.kafka.tools.BrokerApiVersionsCommand"


@pytest.fixture(scope="module")
def bg():
    with BackgroundCluster(brokers=3) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def admin(bg):
    client = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="produce-test")
    yield client
    client.close()


def new_topic(admin, partitions: int = 1, configs: dict | None = None) -> str:
    """A topic of one replica per partition (its high watermark follows its leader's log at once)."""
    name = f"produce-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(name, partitions, 1, topic_configs=configs or {})])
    return name


def until(condition, what: str, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def end_offsets(bg, topic: str, partitions: int = 1) -> dict[int, int]:
    consumer = KafkaConsumer(bootstrap_servers=bg.bootstrap)
    try:
        found = consumer.end_offsets([TopicPartition(topic, p) for p in range(partitions)])
        return {tp.partition: offset for tp, offset in found.items()}
    finally:
        consumer.close()


def leader_of(bg, topic: str, partition: int = 0):
    def find():
        image = bg.cluster.brokers[0].image
        state = image.topic(topic).partitions[partition]
        return next(b for b in bg.cluster.brokers if b.broker_id == state.leader)
    return bg.call(find)


def segment_records(bg, topic: str, partition: int = 0) -> list[tuple[int, bytes | None, bytes | None]]:
    """(offset, key, value) of every record in the leader's first segment file, read from disk."""
    broker = leader_of(bg, topic, partition)
    directories = bg.call(lambda: [d.path for d in broker.log_manager.directories])
    [segment] = [Path(d) / f"{topic}-{partition}" / "00000000000000000000.log" for d in directories
                 if (Path(d) / f"{topic}-{partition}").is_dir()]
    data = segment.read_bytes()
    return [(r.offset, r.key, r.value) for batch in iter_batches(data) for r in batch.records]


def leader_address(bg, topic: str, partition: int = 0) -> str:
    broker = leader_of(bg, topic, partition)
    return f"127.0.0.1:{bg.call(lambda: broker.port)}"


# --- clients ------------------------------------------------------------------------------------------

def test_kafka_python_acks_0_1_and_all_land_in_the_leaders_segment(bg, admin):
    topic = new_topic(admin)
    expected = []
    for round_, acks in enumerate((0, 1, "all")):
        producer = KafkaProducer(bootstrap_servers=bg.bootstrap, acks=acks, linger_ms=0)
        futures = [producer.send(topic, key=b"k%d" % i, value=b"acks=%s #%d" % (str(acks).encode(), i))
                   for i in range(5)]
        producer.flush()
        offsets = [f.get(timeout=30).offset for f in futures]
        producer.close()
        expected += [(5 * round_ + i, b"k%d" % i, b"acks=%s #%d" % (str(acks).encode(), i)) for i in range(5)]
        if acks != 0:  # acks=0 is never answered: the client cannot know its offsets
            assert offsets == [5 * round_ + i for i in range(5)]
        until(lambda: end_offsets(bg, topic) == {0: 5 * (round_ + 1)}, f"the end offset after acks={acks}")
    assert segment_records(bg, topic) == expected


def test_confluent_kafka_idempotent_producer(bg, admin):
    confluent_kafka = pytest.importorskip("confluent_kafka")
    topic = new_topic(admin, partitions=2)
    producer = confluent_kafka.Producer({"bootstrap.servers": bg.bootstrap, "enable.idempotence": True,
                                         "acks": "all", "linger.ms": 5})
    delivered, failed = [], []

    def report(error, message):
        (failed if error is not None else delivered).append(error or (message.partition(), message.offset()))

    for i in range(40):
        producer.produce(topic, value=b"record %d" % i, partition=i % 2, on_delivery=report)
    assert producer.flush(30) == 0
    assert failed == []
    for partition in (0, 1):
        assert [o for p, o in delivered if p == partition] == list(range(20))
    assert end_offsets(bg, topic, 2) == {0: 20, 1: 20}
    # the producer id came from a block the controller handed out (a ProducerIdsRecord in the log)
    assert bg.call(lambda: bg.cluster.brokers[0].image.next_producer_id) >= 1000


def test_kcat_produces(bg, admin):
    if shutil.which("kcat") is None:
        pytest.fail("kcat is not installed (tests/setup.sh installs it)")
    topic = new_topic(admin)
    lines = "".join(f"line {i}\n" for i in range(12))
    done = subprocess.run(["kcat", "-P", "-b", bg.bootstrap, "-t", topic, "-p", "0"], input=lines, text=True,
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert end_offsets(bg, topic) == {0: 12}
    assert [value for _, _, value in segment_records(bg, topic)] == [b"line %d" % i for i in range(12)]


def test_kafkas_console_producer_get_offsets_and_delete_records(bg, admin, tmp_path):
    topic = new_topic(admin)
    produced = run_tool(CONSOLE_PRODUCER, "--bootstrap-server", bg.bootstrap, "--topic", topic,
                        input="".join(f"java {i}\n" for i in range(10)))
    assert produced.returncode == 0, produced.stderr
    assert end_offsets(bg, topic) == {0: 10}
    latest = run_tool(GET_OFFSETS, "--bootstrap-server", bg.bootstrap, "--topic", topic)
    assert latest.returncode == 0, latest.stderr
    assert latest.stdout.split() == [f"{topic}:0:10"]
    plan = tmp_path / "delete.json"
    plan.write_text(f'{{"partitions": [{{"topic": "{topic}", "partition": 0, "offset": 4}}], "version": 1}}')
    deleted = run_tool(DELETE_RECORDS, "--bootstrap-server", bg.bootstrap, "--offset-json-file", str(plan))
    assert deleted.returncode == 0, deleted.stderr
    assert f"partition: {topic}-0\tlow_watermark: 4" in deleted.stdout
    earliest = run_tool(GET_OFFSETS, "--bootstrap-server", bg.bootstrap, "--topic", topic, "--time", "-2")
    assert earliest.stdout.split() == [f"{topic}:0:4"]
    beyond = tmp_path / "beyond.json"
    beyond.write_text(f'{{"partitions": [{{"topic": "{topic}", "partition": 0, "offset": 11}}], "version": 1}}')
    refused = run_tool(DELETE_RECORDS, "--bootstrap-server", bg.bootstrap, "--offset-json-file", str(beyond))
    assert "OffsetOutOfRangeException" in refused.stdout + refused.stderr


def test_broker_api_versions_lists_the_data_plane_at_kafkas_ranges(bg):
    listed = run_tool(BROKER_API_VERSIONS, "--bootstrap-server", bg.bootstrap)
    assert listed.returncode == 0, listed.stderr
    for line in ("Produce(0): 0 to 13 [usable: 13]",  # advertised from v0 as Kafka's (KAFKA-18659), served from v3 "ListOffsets(2): 1 to 11 [usable: 11]",
                 "DeleteRecords(21): 0 to 2 [usable: 2]", "InitProducerId(22): 0 to 5 [usable: 5]"):
        assert line in listed.stdout


# --- error paths, raw --------------------------------------------------------------------------------

def batch(values: list[bytes], timestamp: int | None = None) -> bytes:
    stamp = int(time.time() * 1000) if timestamp is None else timestamp
    return encode_batch(0, -1, stamp, [(None, v) for v in values])


def produce_request(topic: str, records: bytes | None, partition: int = 0, acks: int = 1) -> ProduceRequest:
    return ProduceRequest(acks=acks, timeout_ms=5000, topic_data=[ProduceRequest.TopicProduceData(
        name=topic, partition_data=[ProduceRequest.PartitionProduceData(index=partition, records=records)])])


def answer_of(response) -> tuple[int, int]:
    [topic] = response.responses
    [partition] = topic.partition_responses
    return partition.error_code, partition.base_offset


def test_producer_mistakes_get_kafkas_codes_and_append_nothing(bg, admin):
    topic = new_topic(admin, configs={"max.message.bytes": "2000"})
    with RawConnection(leader_address(bg, topic)) as conn:
        assert answer_of(conn.send(produce_request(topic, batch([b"first"])), 9)) == (ErrorCode.NONE, 0)
        assert answer_of(conn.send(produce_request("no-such-topic", batch([b"x"])), 9)) == (
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)
        assert answer_of(conn.send(produce_request(topic, batch([b"x"]), partition=7), 9)) == (
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)
        assert answer_of(conn.send(produce_request(topic, batch([b"x"]), acks=2), 9)) == (
            ErrorCode.INVALID_REQUIRED_ACKS, -1)
        assert answer_of(conn.send(produce_request(topic, batch([b"y" * 3000])), 9)) == (
            ErrorCode.MESSAGE_TOO_LARGE, -1)
        corrupt = bytearray(batch([b"checked"]))
        corrupt[-2] ^= 0xFF  # a flipped value byte: the CRC no longer matches
        assert answer_of(conn.send(produce_request(topic, bytes(corrupt)), 9)) == (ErrorCode.CORRUPT_MESSAGE, -1)
        assert answer_of(conn.send(produce_request(topic, None), 9))[0] == ErrorCode.INVALID_RECORD
        assert answer_of(conn.send(produce_request(topic, batch([b"second"])), 9)) == (ErrorCode.NONE, 1)
    assert segment_records(bg, topic) == [(0, None, b"first"), (1, None, b"second")]


def test_not_the_leader_names_the_leader_from_v10(bg, admin):
    topic = new_topic(admin)
    leader = leader_of(bg, topic)
    other = next(b for b in bg.cluster.brokers if b is not leader)
    with RawConnection(f"127.0.0.1:{bg.call(lambda: other.port)}") as conn:
        response = conn.send(produce_request(topic, batch([b"x"])), 10)
    [partition] = response.responses[0].partition_responses
    assert partition.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert partition.current_leader.leader_id == leader.broker_id
    assert [(e.node_id, e.port) for e in response.node_endpoints] == [(leader.broker_id, bg.call(lambda: leader.port))]


def test_acks_0_is_never_answered_and_a_refusal_closes_the_connection(bg, admin):
    topic = new_topic(admin)
    with RawConnection(leader_address(bg, topic)) as conn:
        conn.sock.sendall(_frame(produce_request(topic, batch([b"quiet"]), acks=0), 1))
        # the next request's answer is the first thing to come back
        listed = conn.send(ListOffsetsRequest(replica_id=-1, topics=[ListOffsetsRequest.ListOffsetsTopic(
            name=topic, partitions=[ListOffsetsRequest.ListOffsetsPartition(partition_index=0, timestamp=-1)])]), 5)
        assert listed.topics[0].partitions[0].offset == 1
        conn.sock.sendall(_frame(produce_request("no-such-topic", batch([b"lost"]), acks=0), 2))
        with pytest.raises(ConnectionError):
            conn.read_frame()


def _frame(request, correlation_id: int) -> bytes:
    return encode_request(request, 9, correlation_id)


def test_init_producer_id_hands_out_distinct_ids_and_refuses_transactions(bg):
    ids = []
    for broker in bg.cluster.brokers[:2]:
        with RawConnection(f"127.0.0.1:{bg.call(lambda b=broker: b.port)}") as conn:
            for _ in range(2):
                # a broker without a block yet answers as Kafka's does, and has one soon after
                answer = until(lambda: (a := conn.send(InitProducerIdRequest(
                    transactional_id=None, transaction_timeout_ms=60000), 4)).error_code
                    != ErrorCode.COORDINATOR_LOAD_IN_PROGRESS and a, "a block of producer ids")
                assert answer.error_code == ErrorCode.NONE and answer.producer_epoch == 0
                ids.append(answer.producer_id)
            transactional = conn.send(InitProducerIdRequest(transactional_id="tx", transaction_timeout_ms=60000), 4)
            assert transactional.error_code == ErrorCode.UNSUPPORTED_VERSION
    assert len(set(ids)) == 4
    assert ids[0] + 1 == ids[1] and ids[2] + 1 == ids[3]  # from the block each broker holds
    assert ids[0] // 1000 != ids[2] // 1000  # the two brokers' blocks of 1000 differ
