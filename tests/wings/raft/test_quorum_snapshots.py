"""Snapshots through the quorum (KIP-630) with real controllers over real TCP and real files: a controller
far behind a leader whose log was retired catches up by FetchSnapshot and ends with the leader's image; a
production twin (``kraftwire serve --from-log DIR --controllers 3``) survives losing its active controller; a crash in the middle of a
download keeps the old state, and one in the middle of an install is finished at start-up; bad
FetchSnapshot requests get Kafka's codes."""
from __future__ import annotations

import asyncio
import json
import re
import time
import urllib.request
import uuid

from kafka.errors import TopicAlreadyExistsError
from kafka.admin import KafkaAdminClient, NewTopic

from kraftwire.codec import ErrorCode
from kraftwire.codec import records as rec
from kraftwire.codec.log_layout import PARTIAL_SNAPSHOT_SUFFIX, SNAPSHOT_SUFFIX, segment_file_name
from kraftwire.codec.messages import CreateTopicsRequest, FetchSnapshotRequest
from kraftwire.server.host.cluster import Cluster
from kraftwire.server.raft import RaftConfig, RaftLog
from kraftwire.server.raft.core import Timers
from kraftwire.server.raft.snapshots import read_snapshot, snapshot_control
from kraftwire.server.raft.voters import SnapshotVoters
from kraftwire.server.wire.client import KafkaClient
from apache_kafka import DUMP_LOG, metadata_shell, run_tool
from raft_helpers import open_log, partition_dir, segments, state
from served import Served

SMALL_LOG = RaftConfig(segment_bytes=1024, snapshot_every_records=20, retention_bytes=1)


def config_record(name: str):
    """A cluster config of its own name, so every record leaves a trace in the image."""
    return rec.ConfigRecord(resource_type=4, resource_name="", name=name, value="1"), None


async def wait_for(predicate, timeout: float = 20.0, what: str = "the expected state", interval: float = 0.02):
    deadline = asyncio.get_running_loop().time() + timeout
    while not (value := predicate()):
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(interval)
    return value


async def create_topics(cluster: Cluster, names: list[str]) -> None:
    host, port = cluster.bootstrap.split(",")[0].split(":")
    admin = KafkaClient(host, int(port), "snapshot-test")
    try:
        for name in names:
            answer = await admin.send(CreateTopicsRequest(timeout_ms=30000, topics=[
                CreateTopicsRequest.CreatableTopic(name=name, num_partitions=2, replication_factor=1)]))
            assert answer.topics[0].error_code == 0, answer
    finally:
        await admin.close()


async def leave_behind(cluster: Cluster) -> tuple[int, int]:
    """Stop a standby, then write until the leader's log start, and its first segment, are past where the
    standby stopped: (its id, the end of its log)."""
    await cluster.wait_for_active_controller()
    leader_id = cluster.active_controller_id
    lagger = next(c for c in cluster.controller_ids if c != leader_id)
    await cluster.stop_controller(lagger)
    left_at = cluster.logs[cluster.controller_ids.index(lagger)].end_offset
    leader, batch = cluster.log, 0
    while leader.core.log_start <= left_at or int(segments(leader.directory.parent)[0].stem) <= left_at:
        await create_topics(cluster, [f"t{batch}-{i}" for i in range(10)])
        batch += 1
    assert cluster.active_controller_id == leader_id  # two voters of three kept committing
    return lagger, left_at


async def test_a_controller_behind_the_leaders_retired_log_catches_up_by_fetch_snapshot(tmp_path, caplog):
    caplog.set_level("INFO", logger="kraftwire.raft")
    small_chunks = Timers(snapshot_chunk_bytes=512)  # the download takes many FetchSnapshot round trips
    async with Cluster(brokers=1, controllers=3, data_dir=tmp_path, log_config=SMALL_LOG,
                       quorum_timers=small_chunks) as cluster:
        lagger, left_at = await leave_behind(cluster)
        lagger_index = cluster.controller_ids.index(lagger)
        leader = cluster.log
        await cluster.start_controller(lagger)
        follower = cluster.logs[lagger_index]
        await wait_for(lambda: follower.high_watermark == leader.high_watermark == leader.end_offset,
                       what="the restarted controller to catch up")
        installed = [int(r.getMessage().split()[2][:20]) for r in caplog.records
                     if r.getMessage().startswith("installed snapshot")]
        assert installed and installed[0] > left_at  # downloaded from the leader, past where it had stopped
        # Its old log went: its segments start at or past the snapshot it installed.
        assert int(segments(follower.directory.parent)[0].stem) >= installed[0]
        assert state(cluster.controllers[lagger_index].committed) == state(cluster.controller.committed)

        await create_topics(cluster, ["after-catch-up"])  # and it keeps following past the snapshot
        await wait_for(lambda: cluster.controllers[lagger_index].committed.topic("after-catch-up") is not None,
                       what="the next write on the caught-up controller")


async def test_a_controller_killed_in_the_middle_of_a_download_keeps_its_state_and_downloads_again(tmp_path, caplog):
    caplog.set_level("INFO", logger="kraftwire.raft")
    tiny_chunks = Timers(snapshot_chunk_bytes=64)  # a download long enough to be caught in the middle
    async with Cluster(brokers=1, controllers=3, data_dir=tmp_path, log_config=SMALL_LOG,
                       quorum_timers=tiny_chunks) as cluster:
        lagger, left_at = await leave_behind(cluster)
        leader_id, index = cluster.active_controller_id, cluster.controller_ids.index(lagger)
        directory = cluster.logs[index].directory

        def download_under_way():
            part = next(directory.glob("*" + PARTIAL_SNAPSHOT_SUFFIX), None)
            if part is not None:
                cluster.pause_controller(leader_id)  # the download stops where it is: the leader answers nothing
            return part

        await cluster.start_controller(lagger)
        part = await wait_for(download_under_way, what="a download under way", interval=0)  # every loop turn
        await cluster.kill_controller(lagger)
        cluster.resume_controller(leader_id)
        assert part.exists() and not (directory / part.name.removesuffix(".part")).exists()

        await cluster.start_controller(lagger)  # start-up deletes the partial file and keeps the old log
        assert f"deleted the interrupted snapshot {part.name}" in caplog.text
        assert (cluster.logs[index].end_offset, cluster.logs[index].latest_snapshot) == (left_at, None)
        follower = cluster.logs[index]
        await wait_for(lambda: cluster.log.active and follower.high_watermark == cluster.log.high_watermark
                       == cluster.log.end_offset, what="the download to start over and finish")
        assert state(cluster.controllers[index].committed) == state(cluster.controller.committed)


async def test_fetch_snapshot_refusals_carry_kafkas_codes(tmp_path):
    async with Cluster(brokers=1, controllers=3, data_dir=tmp_path, log_config=SMALL_LOG) as cluster:
        await cluster.wait_for_active_controller()
        await create_topics(cluster, ["one"])
        snapshot = await cluster.log.snapshot()
        leader = cluster.controller_node
        standby = next(n for n, c in zip(cluster.controller_nodes, cluster.controller_ids)
                       if c != cluster.active_controller_id)
        epoch = cluster.log.epoch

        async def ask(node, *, topic="__cluster_metadata", partition=0, leader_epoch=epoch, cluster_id=None,
                      end_offset=snapshot.end_offset, position=0):
            client = KafkaClient(node.host, node.port, "snapshot-test")
            try:
                answer = await client.send(FetchSnapshotRequest(
                    cluster_id=cluster_id, replica_id=-1, max_bytes=100, topics=[FetchSnapshotRequest.TopicSnapshot(
                        name=topic, partitions=[FetchSnapshotRequest.PartitionSnapshot(
                            partition=partition, current_leader_epoch=leader_epoch, position=position,
                            snapshot_id=FetchSnapshotRequest.SnapshotId(end_offset=end_offset,
                                                                        epoch=snapshot.epoch))])]), 1)
            finally:
                await client.close()
            return answer.error_code or (answer.topics[0].partitions[0].error_code if answer.topics else None)

        assert await ask(leader) == ErrorCode.NONE
        assert await ask(leader, leader_epoch=epoch - 1) == ErrorCode.FENCED_LEADER_EPOCH
        assert await ask(leader, leader_epoch=epoch + 1) == ErrorCode.UNKNOWN_LEADER_EPOCH
        assert await ask(standby) == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert await ask(leader, end_offset=snapshot.end_offset - 1) == ErrorCode.SNAPSHOT_NOT_FOUND
        assert await ask(leader, position=-1) == ErrorCode.POSITION_OUT_OF_RANGE
        assert await ask(leader, topic="orders") == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert await ask(leader, partition=1) == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert await ask(leader, cluster_id="another-cluster") == ErrorCode.INCONSISTENT_CLUSTER_ID


async def snapshot_of_another_log(tmp_path) -> tuple[object, bytes, dict]:
    """A snapshot (id, bytes) of a log with 30 records, and the state it holds."""
    log, image = await open_log(tmp_path / "leader")
    for i in range(30):
        await log.append([config_record(f"leader-{i}")])[1]
    snapshot = await log.snapshot()
    await log.close()
    return snapshot, (partition_dir(tmp_path / "leader") / snapshot.file_name).read_bytes(), state(image)


async def test_a_crash_in_the_middle_of_a_download_keeps_the_old_state(tmp_path):
    snapshot, data, _ = await snapshot_of_another_log(tmp_path)
    log, image = await open_log(tmp_path / "follower")
    for i in range(5):
        await log.append([config_record(f"own-{i}")])[1]
    before = state(image)
    await log.close()
    directory = partition_dir(tmp_path / "follower")
    part = directory / (snapshot.file_name.removesuffix(SNAPSHOT_SUFFIX) + PARTIAL_SNAPSHOT_SUFFIX)
    part.write_bytes(data[:len(data) // 2])  # what a download cut short by a crash leaves

    log, image = await open_log(tmp_path / "follower")
    assert state(image) == before and log.latest_snapshot is None and not part.exists()
    await log.close()


async def test_a_crash_in_the_middle_of_an_install_is_finished_at_start_up(tmp_path):
    snapshot, data, leader_state = await snapshot_of_another_log(tmp_path)
    log, _ = await open_log(tmp_path / "follower")
    for i in range(5):
        await log.append([config_record(f"own-{i}")])[1]
    await log.close()
    directory = partition_dir(tmp_path / "follower")
    # The install had fsync'd the whole download and created the empty segment at its end, then the crash came.
    part = directory / (snapshot.file_name.removesuffix(SNAPSHOT_SUFFIX) + PARTIAL_SNAPSHOT_SUFFIX)
    part.write_bytes(data)
    (directory / segment_file_name(snapshot.end_offset)).write_bytes(b"")

    log, image = await open_log(tmp_path / "follower")
    assert log.latest_snapshot == (snapshot, directory / snapshot.file_name) and not part.exists()
    assert state(image) == leader_state
    assert [int(p.stem) for p in segments(tmp_path / "follower")] == [snapshot.end_offset]
    await log.close()


def caught_up_observer(cluster: Cluster, node_id: int) -> bool:
    leader = cluster.log
    return leader.active and any(o.replica_id == node_id and o.end_offset >= leader.high_watermark
                                 for o in leader.describe().observers)


def snapshot_voters(log: RaftLog) -> SnapshotVoters:
    """The voter records of a controller's latest snapshot, read from its file."""
    return SnapshotVoters.of_records(snapshot_control(log.latest_snapshot[1]))


async def retire_past(cluster: Cluster, offset: int) -> None:
    """Write until every running controller has snapshotted and deleted its log up to past ``offset``."""
    def retired(log: RaftLog) -> bool:
        return log.core.log_start > offset and int(segments(log.directory.parent)[0].stem) > offset
    batch = 0
    while not all(retired(log) for c, log in zip(cluster.controller_ids, cluster.logs)
                  if c not in cluster._stopped_controllers):
        await create_topics(cluster, [f"r{offset}-{batch}-{i}" for i in range(10)])
        batch += 1


async def test_a_dynamic_quorums_snapshots_carry_the_voter_set_so_its_log_can_go(tmp_path):
    """kraft.version 1 with retention: voters added and removed while the log below each snapshot is
    deleted; restarts and a new controller that can only catch up from a snapshot learn the set from it."""
    async with Cluster(brokers=1, controllers=3, kraft_version=1, data_dir=tmp_path, log_config=SMALL_LOG) as cluster:
        await cluster.wait_for_active_controller()
        added = await cluster.add_controller()
        await wait_for(lambda: caught_up_observer(cluster, added), what="the new controller to catch up")
        await cluster.add_voter(added)
        four = (3000, 3001, 3002, added)
        await retire_past(cluster, cluster.log.high_watermark)  # the VotersRecord adding it is gone from every log
        for log in cluster.logs:
            assert snapshot_voters(log).kraft_version == 1 and snapshot_voters(log).voters.ids == four

        for node_id in four:  # each comes back knowing the set from its snapshot alone
            await cluster.stop_controller(node_id)
            await cluster.start_controller(node_id)
            assert cluster.logs[cluster.controller_ids.index(node_id)].voters == four
        await cluster.wait_for_active_controller()

        await cluster.remove_controller(3000)
        await retire_past(cluster, cluster.log.high_watermark)
        newest = await cluster.add_controller()  # its log starts at 0, below every voter's log start
        await wait_for(lambda: caught_up_observer(cluster, newest), what="the newest controller to catch up")
        log = cluster.logs[cluster.controller_ids.index(newest)]
        assert log.latest_snapshot is not None and log.core.log_start > 0  # it installed a snapshot
        assert log.voters == (3001, 3002, added) and log.kraft_version == 1
        await cluster.add_voter(newest)
        await create_topics(cluster, ["after-the-changes"])
        await wait_for(lambda: cluster.controllers[cluster.controller_ids.index(newest)].committed.topic(
            "after-the-changes") is not None, what="the write on the newest voter")
        assert cluster.log.voters == (3001, 3002, added, newest)
        snapshot = cluster.log.latest_snapshot[1]

    # Kafka's own readers take a snapshot holding the voter records.
    dumped = run_tool(DUMP_LOG, "--cluster-metadata-decoder", "--print-data-log", "--files", str(snapshot))
    assert dumped.returncode == 0, dumped.stderr
    first_batch = dumped.stdout.split("baseOffset: ")[1]
    assert "isControl: true" in first_batch and "lastOffset: 2 count: 3" in first_batch, first_batch
    assert "SnapshotHeader" in first_batch and "KRaftVersion" in first_batch and "KRaftVoters" in first_batch
    shown = metadata_shell(snapshot, "ls", "/image/topics/byName")
    assert shown.returncode == 0, shown.stderr
    assert sorted(shown.stdout.split()) == sorted(r.name for r in read_snapshot(snapshot)
                                                  if isinstance(r, rec.TopicRecord)) != [], shown.stderr
    # It notes each control record it skips, the voter records too, and nothing else.
    assert re.findall(r"ERROR Ignoring control record with type (\w+) at offset (\d+)", shown.stderr)[:3] == [
        ("SNAPSHOT_HEADER", "0"), ("KRAFT_VERSION", "1"), ("KRAFT_VOTERS", "2")]
    assert len(shown.stderr.splitlines()) == 4, shown.stderr


def test_a_twin_with_three_controllers_survives_killing_the_active_one(tmp_path):
    feature = rec.FeatureLevelRecord(name="metadata.version", feature_level=21)
    broker = rec.RegisterBrokerRecord(broker_id=1, incarnation_id=uuid.uuid4(), broker_epoch=7, fenced=False,
                                      log_dirs=[uuid.uuid4()], end_points=[])
    topic = rec.TopicRecord(name="kept", topic_id=uuid.uuid4())
    partition = rec.PartitionRecord(partition_id=0, topic_id=topic.topic_id, replicas=[1], isr=[1], leader=1,
                                    leader_epoch=3, partition_epoch=5, directories=[broker.log_dirs[0]])

    async def write_source():
        log = RaftLog(tmp_path / "source", 3000)
        await log.open()
        await log.append([(feature, 0), (broker, 3), (topic, 0), (partition, 1)])[1]
        await log.close()
    asyncio.run(write_source())

    served = Served(tmp_path, "--from-log", str(tmp_path / "source"), "--controllers", "3", "--kraft-version", "1",
                    "--port", "0",
                    "--controller-port", "0", "--quorum-timers", "short", "--control-port", "0",
                    "--control-token", "secret")
    try:
        url = served.wait_logged("control plane and live view on").split()[-1].rstrip("/")

        def call(method: str, path: str):
            request = urllib.request.Request(url + path, method=method, data=b"{}" if method == "POST" else None,
                                             headers={"Authorization": "Bearer secret",
                                                      "Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=30) as answer:
                return json.loads(answer.read())

        first = next(c["id"] for c in call("GET", "/api/controllers") if c["active"])
        admin = KafkaAdminClient(bootstrap_servers=served.bootstrap, client_id="twin-test", request_timeout_ms=30000)
        assert "kept" in admin.list_topics()
        call("POST", f"/api/controllers/{first}/kill")
        deadline = time.monotonic() + 30
        while not any(c["active"] for c in call("GET", "/api/controllers")):  # the survivors elect a leader
            assert time.monotonic() < deadline, "no new active controller"
            time.sleep(0.05)
        try:
            admin.create_topics([NewTopic("after-failover", 1, 1)])  # forwarded to the new active controller
        except TopicAlreadyExistsError:
            # kafka-python sends the create again when its connection drops before the answer (seen once in
            # CI under load: the first send had committed), and a repeat is answered 36, as by Kafka; what
            # this test asks is that the create committed through the new active controller, checked below
            pass
        assert {"kept", "after-failover"} <= set(admin.list_topics())
        described = admin.describe_metadata_quorum()["topics"][0]["partitions"][0]
        assert described["leader_id"] != first and len(described["current_voters"]) == 3
        # A dynamic quorum: the seed snapshot names kraft.version 1, the twin's controllers are its voters.
        assert all(v["replica_directory_id"] is not None for v in described["current_voters"])
        admin.close()
    finally:
        served.stop()
