"""Each side reads the other's metadata log: Apache Kafka's ``kafka-dump-log --cluster-metadata-decoder``
and metadata shell over the segments and snapshot kraftwire wrote, and kraftwire's ``log verify`` over
the ``__cluster_metadata`` of a real Apache Kafka cluster, every record of it, and its audit of that log."""
from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys

import pytest

from apache_kafka import DUMP_LOG, metadata_shell as kafka_metadata_shell, run_tool
from kraftwire.codec.messages import (AlterPartitionReassignmentsRequest, CreateTopicsRequest,
                                      IncrementalAlterConfigsRequest)
from kraftwire.server.host.cluster import Cluster
from kraftwire.server.raft.log import RaftConfig
from kraftwire.server.wire.client import KafkaClient
from tests.raft_helpers import partition_dir


def kraftwire_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kraftwire", *args], capture_output=True, text=True, timeout=120)


async def busy_history(bootstrap: str) -> None:
    """Topics, configs and a reassignment: most kinds of record a controller writes."""
    host, port = bootstrap.split(",")[0].split(":")
    client = KafkaClient(host, int(port), "readers")
    try:
        await client.send(CreateTopicsRequest(timeout_ms=30000, topics=[
            CreateTopicsRequest.CreatableTopic(name=f"read-{i}", num_partitions=2, replication_factor=2)
            for i in range(3)]))
        await client.send(IncrementalAlterConfigsRequest(resources=[
            IncrementalAlterConfigsRequest.AlterConfigsResource(resource_type=2, resource_name="read-0", configs=[
                IncrementalAlterConfigsRequest.AlterableConfig(name="retention.ms", config_operation=0,
                                                               value="60000")])]))
        await client.send(AlterPartitionReassignmentsRequest(timeout_ms=30000, topics=[
            AlterPartitionReassignmentsRequest.ReassignableTopic(name="read-1", partitions=[
                AlterPartitionReassignmentsRequest.ReassignablePartition(partition_index=0, replicas=[1, 2, 3])])]))
    finally:
        await client.close()


@pytest.fixture(scope="module")
def kraftwire_log(tmp_path_factory):
    """A stopped kraftwire cluster's data directory: segments rolled small, snapshots every 20 records."""
    data_dir = tmp_path_factory.mktemp("kraftwire-data")

    async def run():
        async with Cluster(brokers=3, log_dirs=2, data_dir=data_dir, speed=1000,
                           log_config=RaftConfig(segment_bytes=1024, snapshot_every_records=20)) as cluster:
            await busy_history(cluster.bootstrap)
            await cluster.wait_for_reassignments()
            await cluster.fence_broker(2)
            await cluster.unfence_broker(2)

    asyncio.run(run())
    return partition_dir(data_dir)


def kraftwire_record_count(directory) -> dict[str, int]:
    """Records per file, as kraftwire's own ``log dump --json`` reads them."""
    dumped = kraftwire_cli("log", "dump", "--json", str(directory))
    assert dumped.returncode == 0, dumped.stderr
    counts: dict[str, int] = {}
    for line in dumped.stdout.splitlines():
        record = json.loads(line)
        counts[record["file"]] = counts.get(record["file"], 0) + 1
    return counts


def test_kafka_dump_log_decodes_every_record_kraftwire_wrote(kraftwire_log):
    files = sorted(kraftwire_log.glob("*.log")) + sorted(kraftwire_log.glob("*.checkpoint"))
    assert len(list(kraftwire_log.glob("*.log"))) > 1 and list(kraftwire_log.glob("*.checkpoint"))
    dumped = run_tool(DUMP_LOG, "--cluster-metadata-decoder", "--print-data-log", "--files", ",".join(map(str, files)))
    assert dumped.returncode == 0, dumped.stderr
    assert not re.search(r"(?i)error|exception|corrupt|invalid", dumped.stdout + dumped.stderr), dumped.stdout[-3000:]
    # Besides a header per file, nothing but batches and records (no "Non-consecutive offsets" report).
    other = [line for line in dumped.stdout.splitlines() if not line.startswith(
        ("| offset: ", "baseOffset: ", "Dumping ", "Log starting offset: ", "Snapshot end offset: "))]
    assert other == [], dumped.stdout
    records = re.findall(r"^\| offset: \d+ .*$", dumped.stdout, re.M)
    assert len(records) == sum(kraftwire_record_count(kraftwire_log).values())
    types = set(re.findall(r'"type":"(\w+)"', dumped.stdout))
    assert {"TOPIC_RECORD", "PARTITION_RECORD", "CONFIG_RECORD", "PARTITION_CHANGE_RECORD", "REGISTER_BROKER_RECORD",
            "FEATURE_LEVEL_RECORD"} <= types, types


# Kafka's SnapshotFileReader logs the control records of every snapshot it reads at ERROR level: the header
# and footer, and a dynamic quorum's KRaftVersionRecord and VotersRecord.
SNAPSHOT_CONTROL_NOTICE = re.compile(r"^\[[^]]*\] ERROR Ignoring control record with type "
                                     r"(SNAPSHOT_HEADER|SNAPSHOT_FOOTER|KRAFT_VERSION|KRAFT_VOTERS) "
                                     r"at offset \d+ \(org.apache.kafka.metadata.util.SnapshotFileReader\)$")


def metadata_shell(snapshot, *command) -> str:
    shown = kafka_metadata_shell(snapshot, *command)
    assert shown.returncode == 0, shown.stderr
    assert [line for line in shown.stderr.splitlines() if not SNAPSHOT_CONTROL_NOTICE.match(line)] == []
    return shown.stdout


def test_kafka_metadata_shell_reads_kraftwire_snapshot(kraftwire_log):
    snapshot = sorted(kraftwire_log.glob("*.checkpoint"))[-1]
    assert metadata_shell(snapshot, "ls", "/image/topics/byName").split() == ["read-0", "read-1", "read-2"]
    registration = metadata_shell(snapshot, "cat", "/image/cluster/brokers/1")
    assert registration.startswith("BrokerRegistration(id=1, ") and "fenced=false" in registration
    assert re.search(r"directories=\[[\w-]{22}, [\w-]{22}\]", registration), registration


def test_kraftwire_reads_and_audits_kafka_metadata_log_whole(apache_kafka, tmp_path):
    """Every record Kafka's controller writes (its metadata transactions and controller registration
    included) is decoded by ``log dump``, the log passes ``log verify``, and a healthy log audits clean."""
    asyncio.run(busy_history(apache_kafka.bootstrap))
    directory = apache_kafka.metadata_dir()
    ours = kraftwire_cli("log", "dump", "--json", str(directory))
    assert ours.returncode == 0, ours.stderr
    decoded = [json.loads(line) for line in ours.stdout.splitlines()]
    # Kafka's controller keeps appending (NoOpRecords), so its dump, taken after ours, is compared up to
    # the last offset kraftwire read.
    dumped = run_tool(DUMP_LOG, "--cluster-metadata-decoder", "--print-data-log", "--files",
                      ",".join(str(p) for p in sorted(directory.glob("*.log"))))
    assert dumped.returncode == 0, dumped.stderr
    last = decoded[-1]["offset"]
    kafka_records = {int(offset): "".join(word.title() for word in kind.split("_")) for offset, kind in
                     re.findall(r'^\| offset: (\d+) .*?(?:"type":"(\w+)"|$)', dumped.stdout, re.M)
                     if int(offset) <= last}
    assert sorted(kafka_records) == [record["offset"] for record in decoded]
    assert {record["offset"]: record["type"] for record in decoded if not record["control"]} == {
        offset: kind for offset, kind in kafka_records.items() if kind}
    assert {"TopicRecord", "PartitionRecord", "ConfigRecord", "RegisterBrokerRecord", "BeginTransactionRecord",
            "EndTransactionRecord", "RegisterControllerRecord"} <= set(kafka_records.values())

    verified = kraftwire_cli("log", "verify", str(directory))
    assert verified.returncode == 0, verified.stdout + verified.stderr

    audited = kraftwire_cli("audit", str(directory), "--out", str(tmp_path / "audit"), "--local")
    assert audited.returncode == 0, audited.stderr
    summary = json.loads((tmp_path / "audit" / "summary.json").read_text())
    assert summary["violations"] == {}, summary["violations"]
