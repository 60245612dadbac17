"""A real Apache Kafka 4.3.1 broker takes a partition directory kraftwire wrote as its own: killed, its
topic's files replaced by kraftwire's (segments of every codec, indexes, leader-epoch-checkpoint,
partition.metadata), restarted, it recovers the log with its LogLoader and serves every record to a
consumer at the offsets kraftwire assigned, and answers ListOffsets from kraftwire's time index."""
from __future__ import annotations

import asyncio
import subprocess
import time

from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.admin import NewTopic

from apache_kafka import KafkaCluster, java_command
from kraftwire.server.storage import LogConfig, PartitionLog
from kraftwire.server.storage.checkpoints import read_partition_metadata
from tests.wings.storage.test_partition_log import CODECS, NOW, make_batch

RECORDS_PER_BATCH = 4


def restart(cluster: KafkaCluster) -> None:
    """Start the killed node again on its formatted directories (KafkaCluster.start formats anew)."""
    directory = cluster.node_dir(1)
    with open(directory / "kafka.log", "a") as log:
        cluster.processes.append(subprocess.Popen(java_command("kafka.Kafka", str(directory / "server.properties")),
                                                  stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
    asyncio.run(cluster._wait_for_brokers(180))


def consume_all(bootstrap: str, topic: str, count: int):
    """Every record from the beginning (offset, timestamp, key, value), then the earliest and latest offsets
    and the answer for NOW + 25, all from Kafka."""
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
               consumer.offsets_for_times({partition: NOW + 25})[partition])
    consumer.close()
    return got, offsets


def test_apache_kafka_serves_a_log_kraftwire_wrote(tmp_path):
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
        log = PartitionLog.open(directory, topic_id, LogConfig(segment_bytes=900, index_interval_bytes=100), NOW,
                                None, None)
        for i in range(10):
            log.append_as_leader(make_batch(RECORDS_PER_BATCH, i % len(CODECS), timestamp=NOW + 10 * i), 0, NOW + 100)
        assert len(log.segments) > 2
        log.close()
        restart(cluster)
        got, (earliest, latest, by_time) = consume_all(cluster.bootstrap, "written-by-kraftwire", 40)
        # Kafka logs its warnings (a truncation, invalid messages, a rebuilt index) with the partition's name
        warnings = (cluster.node_dir(1) / "kafka.log").read_text()
    assert "written-by-kraftwire" not in warnings, warnings[-3000:]
    assert [(offset, ts, key) for offset, ts, key, _ in got] == [
        (4 * b + r, NOW + 10 * b + r, b"key-%d" % r) for b in range(10) for r in range(RECORDS_PER_BATCH)]
    assert (earliest, latest) == (0, 40)
    assert (by_time.offset, by_time.timestamp) == (12, NOW + 30)  # the first record at or after NOW + 25
