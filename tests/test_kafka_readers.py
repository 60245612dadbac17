"""Each side reads the other's metadata log: Apache Kafka's ``kafka-dump-log --cluster-metadata-decoder``
and metadata shell over the segments and snapshot kraftwire wrote, and kraftwire's ``log verify`` over
the ``__cluster_metadata`` of a real Apache Kafka cluster, which it reads up to the first record type
it has no schema for."""
from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from apache_kafka import DUMP_LOG, METADATA_SHELL, run_tool
from kraftwire import schemas
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


# Kafka's SnapshotFileReader logs the header and footer of every snapshot it reads at ERROR level.
SNAPSHOT_CONTROL_NOTICE = re.compile(r"^\[[^]]*\] ERROR Ignoring control record with type SNAPSHOT_(HEADER|FOOTER) "
                                     r"at offset \d+ \(org.apache.kafka.metadata.util.SnapshotFileReader\)$")


def metadata_shell(snapshot, *command) -> str:
    shown = run_tool(METADATA_SHELL, "--snapshot", str(snapshot), *command)
    assert shown.returncode == 0, shown.stderr
    assert [line for line in shown.stderr.splitlines() if not SNAPSHOT_CONTROL_NOTICE.match(line)] == []
    return shown.stdout


def test_kafka_metadata_shell_reads_kraftwire_snapshot(kraftwire_log):
    snapshot = sorted(kraftwire_log.glob("*.checkpoint"))[-1]
    assert metadata_shell(snapshot, "ls", "/image/topics/byName").split() == ["read-0", "read-1", "read-2"]
    registration = metadata_shell(snapshot, "cat", "/image/cluster/brokers/1")
    assert registration.startswith("BrokerRegistration(id=1, ") and "fenced=false" in registration
    assert re.search(r"directories=\[[\w-]{22}, [\w-]{22}\]", registration), registration


# Records Kafka 4.3's controller writes that kraftwire's codec has no schema for (README.md, "Where kraftwire
# deliberately differs"): the metadata transaction around the bootstrap records and the controller's
# registration. kraftwire's reader stops at the first of them, the BeginTransactionRecord at offset 1.
UNREADABLE_KAFKA_RECORDS = {"BeginTransactionRecord", "EndTransactionRecord", "RegisterControllerRecord"}
# Written only after some changes (a topic's min.insync.replicas, in the differential scenario on the same
# cluster): kraftwire has no eligible leader replicas (ELR) to clear.
UNREADABLE_AFTER_ELR_CHANGES = {"ClearElrRecord"}


def test_kraftwire_reads_kafka_metadata_log_up_to_the_records_it_lacks(apache_kafka):
    asyncio.run(busy_history(apache_kafka.bootstrap))
    directory = apache_kafka.metadata_dir()
    dumped = run_tool(DUMP_LOG, "--cluster-metadata-decoder", "--files",
                      ",".join(str(p) for p in sorted(directory.glob("*.log"))))
    assert dumped.returncode == 0, dumped.stderr
    kafka_types = {"".join(word.title() for word in kind.split("_"))
                   for kind in re.findall(r'"type":"(\w+)"', dumped.stdout)}
    ours = {path.stem for path in (Path(schemas.__file__).parent / "records").glob("*Record.json")}
    assert {"TopicRecord", "PartitionRecord", "ConfigRecord", "RegisterBrokerRecord"} <= kafka_types & ours
    assert UNREADABLE_KAFKA_RECORDS <= kafka_types - ours <= UNREADABLE_KAFKA_RECORDS | UNREADABLE_AFTER_ELR_CHANGES

    verified = kraftwire_cli("log", "verify", str(directory))
    assert verified.returncode == 1
    assert verified.stdout.strip() == (f"damaged: {directory / '00000000000000000000.log'}: offset 1 (byte 91): "
                                       "unknown metadata record type 23")
