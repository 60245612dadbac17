"""The production twin: ``kraftwire serve --from-log`` booted from a copy of a real Apache Kafka cluster's
``__cluster_metadata`` (the session's real Kafka, tests/apache_kafka.py) with ``--sizes`` from Kafka's own
``kafka-log-dirs --describe``. Kafka's tools and kafka-python see the same topics, ids, partitions,
replicas, configs, SCRAM users and metadata.version on both; a throttled reassignment rehearsed on the
twin (over the control plane's virtual clock, or from Python) takes the simulated time the sizes and the
throttle imply; the source directory is never written; a bad source is refused in one line."""
from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import shutil
import time
import urllib.request
import uuid

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic, ScramMechanism, UserScramCredentialUpsertion

from apache_kafka import LOG_DIRS, REASSIGN_PARTITIONS, TOPICS, run_tool

FEATURES = "org.apache.kafka.tools.FeatureCommand"
from kraftwire.codec import records as rec
from kraftwire.server.host.twin import read_source
from kraftwire.server.raft import RaftConfig, RaftLog
from kraftwire.server.wire.client import KafkaClient
from kraftwire.codec.messages import CreateTopicsRequest
from kraftwire.server.host.cluster import BackgroundCluster, Cluster
from served import Served, serve_once

TOPIC = "twin-orders"
PRODUCED = {0: 300, 1: 60}  # records of 1 KiB per partition; partition 2 stays empty
USER = "twin-alice"  # a SCRAM user of the source


def fingerprint(root) -> dict[str, tuple]:
    """Every file and directory under ``root`` (itself included): modification time (nanoseconds), and
    a file's size and content hash. A file created, deleted, renamed or written there changes it."""
    return {str(p.relative_to(root)): (p.stat().st_mtime_ns, p.stat().st_size,
                                       hashlib.sha256(p.read_bytes()).hexdigest()) if p.is_file()
            else (p.stat().st_mtime_ns,)
            for p in [root, *sorted(root.rglob("*"))]}


def partitions_of(admin: KafkaAdminClient, topic: str) -> list[tuple]:
    (described,) = admin.describe_topics([topic])
    assert described["error_code"] == 0, described
    return [described["topic_id"]] + sorted((p["partition_index"], p["leader_id"], p["replica_nodes"], p["isr_nodes"])
                                            for p in described["partitions"])


def dynamic_topic_configs(admin: KafkaAdminClient, topic: str) -> dict[str, str]:
    """The topic's configs set on it (DYNAMIC_TOPIC_CONFIG), kraftwire's own simulation configs aside."""
    described = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])["topic"][topic]
    return {name: entry["value"] for name, entry in described.items()
            if entry["config_source"] == "DYNAMIC_TOPIC_CONFIG" and not name.startswith("kraftwire.")}


def scram_user(admin: KafkaAdminClient) -> dict:
    return admin.describe_user_scram_credentials([USER])[USER]


def replica_sizes(log_dirs_output: str, topic: str) -> dict[tuple[int, str], int]:
    """{(broker, partition): size} of ``topic`` from kafka-log-dirs --describe's JSON."""
    described = json.loads(log_dirs_output[log_dirs_output.index("{"):])
    return {(entry["broker"], p["partition"]): p["size"] for entry in described["brokers"]
            for log_dir in entry["logDirs"] for p in log_dir["partitions"] if p["partition"].startswith(topic + "-")}


def finalized_features(bootstrap: str) -> dict[str, str]:
    """kafka-features --describe: each feature's finalized level (metadata.version's by name)."""
    done = run_tool(FEATURES, "--bootstrap-server", bootstrap, "describe")
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(re.findall(r"Feature: (\S+)\s.*?FinalizedVersionLevel: (\S+)", done.stdout))


def kafka_topics_describe(bootstrap: str) -> list[str]:
    """kafka-topics --describe of TOPIC, kraftwire's own configs left out of the Configs column."""
    done = run_tool(TOPICS, "--bootstrap-server", bootstrap, "--describe", "--topic", TOPIC)
    assert done.returncode == 0, done.stdout + done.stderr
    return [re.sub(r",?kraftwire\.[a-z.]+=[0-9:,]*?(?=,[a-z]|$)", "", line) for line in done.stdout.splitlines()]


@pytest.fixture(scope="module")
def source(apache_kafka, tmp_path_factory):
    """A copy of the real Kafka's metadata log directory (meta.properties and __cluster_metadata-0),
    what Kafka's tools said about TOPIC when it was taken, and the sizes file kafka-log-dirs printed."""
    admin = KafkaAdminClient(bootstrap_servers=apache_kafka.bootstrap, request_timeout_ms=60000)
    try:
        admin.create_topics([NewTopic(TOPIC, replica_assignments={0: [1, 2], 1: [2, 3], 2: [3, 1]},
                                      topic_configs={"retention.ms": "3600000", "min.insync.replicas": "1"})])
        assert admin.alter_user_scram_credentials([UserScramCredentialUpsertion(
            USER, ScramMechanism.SCRAM_SHA_512, "twin-secret", iterations=8192)]) == {USER: None}
        producer = KafkaProducer(bootstrap_servers=apache_kafka.bootstrap, acks="all", linger_ms=5)
        for partition, count in PRODUCED.items():
            for i in range(count):
                producer.send(TOPIC, value=i.to_bytes(4, "big") * 256, partition=partition)
        producer.flush(60)
        producer.close()
        root = tmp_path_factory.mktemp("twin")
        sizes = root / "sizes.json"
        described = run_tool(LOG_DIRS, "--bootstrap-server", apache_kafka.bootstrap, "--describe")
        assert described.returncode == 0, described.stderr
        sizes.write_text(described.stdout)
        seen = {"partitions": partitions_of(admin, TOPIC), "configs": dynamic_topic_configs(admin, TOPIC),
                "cluster_id": admin.describe_cluster()["cluster_id"], "user": scram_user(admin),
                "brokers": sorted((b["broker_id"], b["rack"]) for b in admin.describe_cluster()["brokers"]),
                "topics": kafka_topics_describe(apache_kafka.bootstrap),
                "features": finalized_features(apache_kafka.bootstrap),
                "sizes": replica_sizes(described.stdout, TOPIC)}
        copy = root / "source"
        shutil.copytree(apache_kafka.metadata_dir().parent, copy)
    finally:
        admin.close()
    assert seen["sizes"][(1, f"{TOPIC}-0")] > seen["sizes"][(2, f"{TOPIC}-1")] > 0
    assert seen["features"]["metadata.version"].startswith("4."), seen["features"]
    assert seen["user"]["credential_infos"] == [{"mechanism": ScramMechanism.SCRAM_SHA_512, "iterations": 8192}]
    return {"dir": copy, "sizes": sizes, "seen": seen, "fingerprint": fingerprint(copy)}


def rehearse(bootstrap: str, tmp_path, partition: int, replicas: list[int], throttle: int, topic: str = TOPIC) -> None:
    """kafka-reassign-partitions --execute of a one-partition plan with an inter-broker throttle."""
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": topic, "partition": partition, "replicas": replicas}]}))
    done = run_tool(REASSIGN_PARTITIONS, "--bootstrap-server", bootstrap, "--execute",
                    "--reassignment-json-file", str(plan), "--throttle", str(throttle))
    assert done.returncode == 0, done.stdout + done.stderr


def test_kafka_tools_see_the_source_cluster_in_the_twin(source, tmp_path):
    """``serve --from-log --sizes`` as the README runs it, the rehearsal's time read over HTTP."""
    served = Served(tmp_path, "--from-log", str(source["dir"] / "__cluster_metadata-0"), "--sizes",
                    str(source["sizes"]), "--data-dir", str(tmp_path / "twin"), "--port", "0",
                    "--controller-port", "0", "--virtual-clock", "--control-port", "0", "--control-token", "rehearsal")
    try:
        seen = source["seen"]
        assert kafka_topics_describe(served.bootstrap) == seen["topics"]  # topic id, partitions, replicas, ISR
        # metadata.version kept; the features kraftwire advertises (README, differences) at the source's levels
        features = finalized_features(served.bootstrap)
        assert features["metadata.version"] == seen["features"]["metadata.version"]
        assert {name: seen["features"].get(name) for name in features} == features
        admin = KafkaAdminClient(bootstrap_servers=served.bootstrap, request_timeout_ms=30000)
        try:
            assert partitions_of(admin, TOPIC) == seen["partitions"]
            assert dynamic_topic_configs(admin, TOPIC) == seen["configs"]
            assert scram_user(admin) == seen["user"]
            cluster = admin.describe_cluster()
            assert cluster["cluster_id"] == seen["cluster_id"]
            assert sorted((b["broker_id"], b["rack"]) for b in cluster["brokers"]) == seen["brokers"]
        finally:
            admin.close()
        deadline = time.monotonic() + 60
        while True:  # the brokers create their replicas as they act on the log
            described = run_tool(LOG_DIRS, "--bootstrap-server", served.bootstrap, "--describe", "--topic-list", TOPIC)
            assert described.returncode == 0, described.stderr
            if replica_sizes(described.stdout, TOPIC) == seen["sizes"] or time.monotonic() > deadline:
                break
        assert replica_sizes(described.stdout, TOPIC) == seen["sizes"], described.stdout
        assert "controllers [3000] of the source are not simulated" in served.logged()

        throttle = 4_000
        rehearse(served.bootstrap, tmp_path, 1, [1, 3], throttle)
        control = served.wait_logged("control plane and live view on ").split(" on ", 1)[1].strip().rstrip("/")
        advance = urllib.request.Request(f"{control}/api/clock/advance", method="POST",
                                         data=json.dumps({"until": "reassignments-done"}).encode(),
                                         headers={"Authorization": "Bearer rehearsal"})
        with urllib.request.urlopen(advance, timeout=60) as answer:
            took = json.loads(answer.read())["clock"]["seconds"]  # the clock stood at 0 until the plan ran
        assert math.isclose(took, seen["sizes"][(2, f"{TOPIC}-1")] / throttle, rel_tol=1e-6), took
    finally:
        served.stop()
    assert fingerprint(source["dir"]) == source["fingerprint"]


def test_a_throttled_reassignment_rehearsed_on_the_twin_takes_the_time_its_size_implies(source, tmp_path):
    throttle = 20_000  # bytes per second, far below the simulated bandwidth
    size = source["seen"]["sizes"][(1, f"{TOPIC}-0")]
    with BackgroundCluster(from_log=source["dir"], sizes=source["sizes"], virtual_clock=True,
                           data_dir=tmp_path / "twin") as twin:
        rehearse(twin.bootstrap, tmp_path, 0, [3, 2], throttle)
        took = twin.run(twin.cluster.run_until_reassignments_done())
        assert math.isclose(took, size / throttle, rel_tol=1e-6), (took, size / throttle)
        admin = KafkaAdminClient(bootstrap_servers=twin.bootstrap, request_timeout_ms=30000)
        try:
            assert admin.list_partition_reassignments() == {}
            assert [p[2] for p in partitions_of(admin, TOPIC)[1:]] == [[3, 2], [2, 3], [3, 1]]
        finally:
            admin.close()
    assert fingerprint(source["dir"]) == source["fingerprint"]


def refusal(tmp_path, *args) -> str:
    """``serve`` refusing to start: exit 1 and one line, not a traceback; returns the line."""
    done = serve_once(tmp_path, *args, "--data-dir", str(tmp_path / "twin"), "--port", "0", "--controller-port", "0")
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 1 and len(lines) == 1 and "cannot start: " in lines[0], done.stderr
    return lines[0]


def test_a_bad_source_is_refused_in_one_line(source, tmp_path):
    assert "no such directory" in refusal(tmp_path, "--from-log", str(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    assert "not a metadata log directory" in refusal(tmp_path, "--from-log", str(tmp_path / "empty"))

    damaged = tmp_path / "damaged"
    shutil.copytree(source["dir"], damaged)
    segment = sorted((damaged / "__cluster_metadata-0").glob("*.log"))[0]
    data = bytearray(segment.read_bytes())
    data[100] ^= 0xFF  # inside the first batch, with valid batches after it
    segment.write_bytes(bytes(data))
    assert "damaged: " in refusal(tmp_path, "--from-log", str(damaged))

    newer = tmp_path / "newer"
    shutil.copytree(source["dir"], newer)
    segment = sorted((newer / "__cluster_metadata-0").glob("*.log"))[-1]
    data = segment.read_bytes()
    last = list(rec.iter_batches(data))[-1]
    unknown = bytes([1, 99, 0, 0])  # frame version 1, record type 99 v0, no tagged fields
    segment.write_bytes(data + rec.encode_batch(last.next_offset, last.partition_leader_epoch, last.max_timestamp,
                                                [(None, unknown)]))
    line = refusal(tmp_path, "--from-log", str(newer))
    assert f"offset {last.next_offset}: unknown metadata record type 99 v0" in line

    bad_sizes = tmp_path / "sizes.json"
    bad_sizes.write_text('{"brokers": [{"broker": 1}]}')
    assert "not the JSON kafka-log-dirs --describe prints" in refusal(
        tmp_path, "--from-log", str(source["dir"]), "--sizes", str(bad_sizes))
    assert fingerprint(source["dir"]) == source["fingerprint"]


def test_from_log_and_sizes_are_config_file_keys(tmp_path):
    (tmp_path / "kraftwire.toml").write_text(f'from-log = "{tmp_path / "nowhere"}"\n')
    assert f"--from-log {tmp_path / 'nowhere'}: no such directory" in refusal(tmp_path)
    (tmp_path / "kraftwire.toml").write_text(f'sizes = "{tmp_path / "sizes.json"}"\n')
    assert "sizes (--sizes) are for a twin: give from_log (--from-log) too" in refusal(tmp_path)


def test_a_partial_batch_at_the_end_of_the_source_is_left_out(source, tmp_path):
    """A copy taken while Kafka was appending: the unfinished batch is not part of the twin's state."""
    copy = tmp_path / "torn"
    shutil.copytree(source["dir"], copy)
    whole = read_source(copy)
    segment = sorted((copy / "__cluster_metadata-0").glob("*.log"))[-1]
    data = segment.read_bytes()
    last = list(rec.iter_batches(data))[-1]
    segment.write_bytes(data[:-10])
    torn = read_source(copy)
    assert torn.end_offset == last.base_offset < whole.end_offset == last.next_offset
    assert [note for note in torn.notes if "bytes of an unfinished batch at the end are left out" in note]
    assert torn.image.topic(TOPIC).partitions == whole.image.topic(TOPIC).partitions


def write_log(data_dir, records) -> None:
    """A metadata log of ``records`` ((record, version) pairs) written by kraftwire's own log."""
    async def write():
        log = RaftLog(data_dir, 3000)
        await log.open()
        await log.append(records)[1]
        await log.close()
    asyncio.run(write())


def test_a_source_kraftwire_cannot_run_is_refused_in_one_line(tmp_path):
    newer = rec.FeatureLevelRecord(name="metadata.version", feature_level=99)
    broker = rec.RegisterBrokerRecord(broker_id=1, incarnation_id=uuid.uuid4(), broker_epoch=1, fenced=False,
                                      log_dirs=[uuid.uuid4()], end_points=[])
    write_log(tmp_path / "newer", [(newer, 0), (broker, 3)])
    assert "its metadata.version is feature level 99; kraftwire runs at levels 7-33 (3.3-IV3 to 4.4-IV2)" in refusal(
        tmp_path, "--from-log", str(tmp_path / "newer"))
    write_log(tmp_path / "brokerless", [(newer.replace(feature_level=21), 0)])
    assert "the log registers no broker: there is nothing to simulate" in refusal(
        tmp_path, "--from-log", str(tmp_path / "brokerless"))
    write_log(tmp_path / "featureless", [(broker, 3)])
    assert "no metadata.version record: not a KRaft metadata log" in refusal(
        tmp_path, "--from-log", str(tmp_path / "featureless"))
    write_log(tmp_path / "servable", [(newer.replace(feature_level=21), 0), (broker, 3)])
    write_log(tmp_path / "twin", [(newer.replace(feature_level=21), 0)])  # the data directory refusal() names
    assert "already holds a metadata log: --from-log starts a twin afresh in a new data directory" in refusal(
        tmp_path, "--from-log", str(tmp_path / "servable"))


def test_a_source_with_snapshots_and_retired_segments_gives_its_latest_state(tmp_path):
    """Snapshot first, then the records after it, as the log's own start-up replays them: a kraftwire
    cluster's log whose oldest segments retention deleted."""
    async def run():
        config = RaftConfig(segment_bytes=1024, snapshot_every_records=20, retention_bytes=1)
        async with Cluster(brokers=3, log_dirs=2, data_dir=tmp_path / "source", speed=1000, log_config=config) as c:
            host, port = c.bootstrap.split(",")[0].split(":")
            admin = KafkaClient(host, int(port), "twin-test")
            try:
                for i in range(6):
                    await admin.send(CreateTopicsRequest(timeout_ms=30000, topics=[
                        CreateTopicsRequest.CreatableTopic(name=f"snap-{i}", num_partitions=3, replication_factor=2)]))
            finally:
                await admin.close()
            await c.wait_for_reassignments()
        return c.controller.committed, c.controller.cluster_id  # stopped: what its log holds, no more

    image, cluster_id = asyncio.run(run())
    partition = tmp_path / "source" / "__cluster_metadata-0"
    assert min(int(p.name[:20]) for p in partition.glob("*.log")) > 0 and list(partition.glob("*.checkpoint"))
    source = read_source(tmp_path / "source")
    assert source.cluster_id == cluster_id and source.end_offset == image.offset + 1
    def partitions(of):
        return {(topic.name, index): state for topic, index, state in of.partitions()}

    assert partitions(source.image) == partitions(image)
    assert source.image.configs == image.configs and source.image.features == image.features


def test_brokers_keep_their_registration_and_one_shutting_down_restarts(tmp_path):
    """Broker 1 of the source is in controlled shutdown: it registers as a new incarnation and becomes
    active; broker 2 amends its logged registration (same incarnation and epoch), so nothing moves."""
    feature = rec.FeatureLevelRecord(name="metadata.version", feature_level=21)
    dirs = {1: [uuid.uuid4()], 2: [uuid.uuid4(), uuid.uuid4()]}
    brokers = {b: rec.RegisterBrokerRecord(broker_id=b, incarnation_id=uuid.uuid4(), broker_epoch=10 + b, fenced=False,
                                           in_controlled_shutdown=b == 1, log_dirs=dirs[b], rack=f"rack-{b}",
                                           end_points=[]) for b in (1, 2)}
    topic = rec.TopicRecord(name="kept", topic_id=uuid.uuid4())
    partition = rec.PartitionRecord(partition_id=0, topic_id=topic.topic_id, replicas=[2], isr=[2], leader=2,
                                    leader_epoch=4, partition_epoch=7, directories=[dirs[2][1]])
    write_log(tmp_path / "source", [(feature, 0), (brokers[1], 3), (brokers[2], 3), (topic, 0), (partition, 1)])
    with BackgroundCluster(from_log=tmp_path / "source", data_dir=tmp_path / "twin") as twin:
        twin.run(twin.cluster.wait_until(lambda image: image.brokers[1].active))
        image = twin.call(lambda: twin.cluster.controller.committed.copy())
        assert image.brokers[1].incarnation_id != brokers[1].incarnation_id
        kept = image.brokers[2]
        assert (kept.incarnation_id, kept.epoch, kept.rack, kept.log_dirs) == (
            brokers[2].incarnation_id, 12, "rack-2", tuple(dirs[2]))
        state = image.topic("kept").partitions[0]
        assert (state.leader, state.leader_epoch, state.partition_epoch) == (2, 4, 7)

        def placed(_image) -> list[str]:
            return [r.log_dir.path for r in twin.cluster.broker(2).replica_manager.replicas.values() if r.log_dir]

        twin.run(twin.cluster.wait_until(placed))  # once broker 2 has acted on the image
        assert twin.call(placed, None) == [str(tmp_path / "twin" / "broker-2" / "logs-1")]  # as the log assigns
