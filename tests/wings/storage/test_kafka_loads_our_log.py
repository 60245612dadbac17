"""A real Apache Kafka 4.3.1 broker takes a partition directory kraftwire wrote as its own (and kraftwire
opens one Kafka wrote): killed, its
topic's files replaced by kraftwire's (segments of every codec, indexes, leader-epoch-checkpoint,
partition.metadata), restarted, it recovers the log with its LogLoader and serves every record to a
consumer at the offsets kraftwire assigned, and answers ListOffsets from kraftwire's time index."""
from __future__ import annotations

import asyncio
import shutil
import subprocess
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic

from apache_kafka import KafkaCluster, java_command
from kraftwire.server.storage import LogConfig, LogDirCheckpoints, PartitionLog
from kraftwire.server.storage.checkpoints import read_partition_metadata
from tests.wings.storage.test_partition_log import CODECS, make_batch, read_back

RECORDS_PER_BATCH = 4


def restart(cluster: KafkaCluster) -> None:
    """Start the killed node again on its formatted directories (KafkaCluster.start formats anew)."""
    directory = cluster.node_dir(1)
    with open(directory / "kafka.log", "a") as log:
        cluster.processes.append(subprocess.Popen(java_command("kafka.Kafka", str(directory / "server.properties")),
                                                  stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
    asyncio.run(cluster._wait_for_brokers(180))


def consume_all(bootstrap: str, topic: str, count: int, timestamp: int):
    """Every record from the beginning (offset, timestamp, key, value), then the earliest and latest offsets
    and the answer for ``timestamp``, all from Kafka."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=2000)
    partition = TopicPartition(topic, 0)
    consumer.assign([partition])
    consumer.seek_to_beginning(partition)
    got: list[tuple[int, int, bytes | None, bytes | None]] = []
    deadline = time.monotonic() + 120
    while len(got) < count and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=1000).values():
            got += [(r.offset, r.timestamp, r.key, r.value) for r in records]
    offsets = (consumer.beginning_offsets([partition])[partition], consumer.end_offsets([partition])[partition],
               consumer.offsets_for_times({partition: timestamp})[partition])
    consumer.close()
    return got, offsets


def test_apache_kafka_serves_a_log_kraftwire_wrote(tmp_path):
    now = int(time.time() * 1000)  # Kafka's retention (7 days) would delete older records
    with KafkaCluster(brokers=1, log_dirs=1) as cluster:
        admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=60000)
        admin.create_topics([NewTopic("written-by-kraftwire", 1, 1)])
        admin.close()
        directory = cluster.log_dirs(1)[0] / "written-by-kraftwire-0"
        deadline = time.monotonic() + 60
        while not (directory / "partition.metadata").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        topic_id = read_partition_metadata(directory / "partition.metadata")
        cluster.stop(remove=False)
        for path in directory.iterdir():
            path.unlink()
        log = PartitionLog.open(directory, topic_id, LogConfig(segment_bytes=900, index_interval_bytes=100), now,
                                None, None)
        for i in range(10):
            log.append_as_leader(make_batch(RECORDS_PER_BATCH, i % len(CODECS), timestamp=now + 10 * i), 0, now + 100)
        assert len(log.segments) > 2
        log.close()
        restart(cluster)
        got, (earliest, latest, by_time) = consume_all(cluster.bootstrap, "written-by-kraftwire", 40, now + 25)
        # Kafka logs its warnings (a truncation, invalid messages, a rebuilt index) with the partition's name
        warnings = (cluster.node_dir(1) / "kafka.log").read_text()
    assert "written-by-kraftwire" not in warnings, warnings[-3000:]
    assert [(offset, ts, key) for offset, ts, key, _ in got] == [
        (4 * b + r, now + 10 * b + r, b"key-%d" % r) for b in range(10) for r in range(RECORDS_PER_BATCH)]
    assert (earliest, latest) == (0, 40)
    assert (by_time.offset, by_time.timestamp) == (12, now + 30)  # the first record at or after now + 25


def test_kraftwire_opens_a_log_apache_kafka_wrote(tmp_path):
    """The other way: Kafka's own files (a killed broker's: its active segment's indexes pre-allocated),
    its recovery-point checkpoint read by LogDirCheckpoints, open as a PartitionLog with every record."""
    now = int(time.time() * 1000)  # Kafka's retention (7 days) would delete older records
    with KafkaCluster(brokers=1, log_dirs=1) as cluster:
        producer = KafkaProducer(bootstrap_servers=cluster.bootstrap, compression_type="gzip", linger_ms=5,
                                 batch_size=2000)
        for i in range(200):
            producer.send("written-by-kafka", key=b"k%d" % i, value=b"v" * 100, timestamp_ms=now + i)
        producer.flush()
        producer.close()
        log_dir = cluster.log_dirs(1)[0]
        deadline = time.monotonic() + 60  # Kafka writes its checkpoints every few seconds
        while ("written-by-kafka", 0) not in LogDirCheckpoints(log_dir).recovery_points() \
                and time.monotonic() < deadline:
            time.sleep(0.2)
        cluster.stop(remove=False)
        directory = log_dir / "written-by-kafka-0"
        copy = tmp_path / "written-by-kafka-0"
        shutil.copytree(directory, copy)
        recovery_point = LogDirCheckpoints(log_dir).recovery_points()[("written-by-kafka", 0)]
        topic_id = read_partition_metadata(directory / "partition.metadata")
        cluster.stop()
    log = PartitionLog.open(copy, topic_id, LogConfig(), now + 1000, recovery_point, None)
    assert log.log_end_offset == 200 and log.recovered_bytes_truncated == 0
    assert [tuple(e) for e in log.leader_epoch_cache] == [(0, 0)]
    records = read_back(log.read(0, 1 << 24).read())
    assert [(r[0], r[1], r[3]) for r in records] == [(i, now + i, b"k%d" % i) for i in range(200)]
    assert log.offset_for_timestamp(now + 150).offset == 150
    info = log.append_as_leader(make_batch(2, timestamp=now), 0, now + 1000)
    assert info.first_offset == 200
