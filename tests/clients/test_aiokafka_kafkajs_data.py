"""The data plane through aiokafka (asyncio) and kafkajs (Node): aiokafka's idempotent producer with each
compression codec and its consumer (``assign``, ``seek``, ``offsets_for_times``, ``end_offsets``) read back
every field; kafkajs produces with acks -1 and reads the offsets back with its admin, and kafka-python reads
what it wrote. Real clients over TCP against a real in-process cluster."""
from __future__ import annotations

import asyncio
import json
import subprocess

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from kafka import KafkaAdminClient

from kraftwire.server.host.cluster import BackgroundCluster
from tests.clients.test_consume_clients import consume_kafka_python
from tests.clients.test_reassign_node import NODE_DIR, kafkajs  # noqa: F401 (a fixture)

_names = iter(range(10 ** 6))
SMALL = {"kraftwire.partition.size.bytes": "0"}  # real bytes only


@pytest.fixture(scope="module")
def bg():
    with BackgroundCluster(brokers=3) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def admin(bg):
    client = KafkaAdminClient(bootstrap_servers=bg.bootstrap, request_timeout_ms=20000)
    yield client
    client.close()


def new_topic(admin, replicas=(1, 2, 3)) -> str:
    name = f"aio{next(_names)}"
    result = admin.create_topics({name: {"assignments": {0: list(replicas)}, "configs": SMALL}})
    assert result["topics"][0]["error_code"] == 0, result
    return name


RECORDS = [(f"k{i}".encode(), f"v{i}".encode() * (i % 5 + 1), [("h", str(i).encode())]) for i in range(150)]
BASE_TS = 1_700_000_000_000


async def aio_produce(bootstrap: str, topic: str, compression: str | None) -> list[int]:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True,
                                compression_type=compression, linger_ms=5, max_batch_size=4096)
    await producer.start()
    try:
        futures = [await producer.send(topic, value=v, key=k, headers=h, partition=0, timestamp_ms=BASE_TS + i)
                   for i, (k, v, h) in enumerate(RECORDS)]
        return [(await f).offset for f in futures]
    finally:
        await producer.stop()


async def aio_consume(bootstrap: str, topic: str, start: int, count: int) -> list:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, group_id=None,
                                fetch_max_wait_ms=200)
    await consumer.start()
    try:
        partition = TopicPartition(topic, 0)
        consumer.assign([partition])
        consumer.seek(partition, start)
        seen: list = []
        while len(seen) < count:
            batch = await asyncio.wait_for(consumer.getmany(partition, timeout_ms=500), 30)
            seen.extend(batch.get(partition, []))
        by_time = await consumer.offsets_for_times({partition: BASE_TS + 100})
        ends = await consumer.end_offsets([partition])
        starts = await consumer.beginning_offsets([partition])
        return [seen, by_time[partition].offset, ends[partition], starts[partition]]
    finally:
        await consumer.stop()


@pytest.mark.parametrize("compression", [None, "gzip", "lz4", "zstd", "snappy"])
def test_aiokafka_idempotent_producer_and_consumer_round_trip(bg, admin, compression):
    topic = new_topic(admin)
    offsets = asyncio.run(aio_produce(bg.bootstrap, topic, compression))
    assert offsets == list(range(len(RECORDS)))
    seen, at_time, end, start = asyncio.run(aio_consume(bg.bootstrap, topic, 20, len(RECORDS) - 20))
    assert [(r.offset, r.key, r.value, list(r.headers), r.timestamp) for r in seen] == [
        (i, k, v, [(hk, hv) for hk, hv in h], BASE_TS + i) for i, (k, v, h) in enumerate(RECORDS)][20:]
    assert (at_time, end, start) == (100, len(RECORDS), 0)
    # the same bytes on the followers: kafka-python reading from the log (leader) sees them too
    assert [r.value for r in consume_kafka_python(bg, topic, len(RECORDS))] == [v for _, v, _ in RECORDS]


def test_kafkajs_produces_with_acks_all_and_reads_offsets(bg, admin, kafkajs):  # noqa: F811 (the fixture)
    topic = new_topic(admin)
    done = subprocess.run(["node", str(NODE_DIR / "produce.js"), bg.bootstrap, topic, "200"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert [s["baseOffset"] for s in answer["sent"]] == [str(i) for i in range(0, 200, 50)]
    assert {s["errorCode"] for s in answer["sent"]} == {0}
    assert answer["offsets"] == [{"partition": 0, "offset": "200", "high": "200", "low": "0"}]
    assert answer["byTime"] == [{"partition": 0, "offset": "120"}]
    seen = consume_kafka_python(bg, topic, 200)
    assert [(r.key, r.value, r.headers, r.timestamp) for r in seen] == [
        (f"key-{i}".encode(), f"value-{i}".encode(), [("h", str(i).encode())], BASE_TS + i) for i in range(200)]
