"""The durable log under a whole cluster: DescribeQuorum through real clients, and restarts on the same
data directory keeping topics, configs, the cluster id and the brokers' directory ids."""
from __future__ import annotations

import time
import uuid

import pytest
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource, NewTopic

from kraftwire.codec import ErrorCode
from kraftwire.codec import records as rec
from kraftwire.codec.messages import DescribeQuorumRequest, FetchRequest, FetchSnapshotRequest, VoteRequest
from kraftwire.server.raft.peer_wire import METADATA_TOPIC_ID
from raft_helpers import partition_dir
from kraftwire.server.wire.client import KafkaClient
from kraftwire.server.host.cluster import BackgroundCluster, Cluster
from kraftwire.server.raft import StorageError
from kraftwire.server.raft.storage import read_properties


def test_kafka_python_describes_the_single_voter_quorum(bg_cluster):
    admin = KafkaAdminClient(bootstrap_servers=bg_cluster.bootstrap, client_id="quorum-test")
    admin.create_topics([NewTopic("quorum-topic", 3, 2)])
    deadline = time.monotonic() + 30
    while True:  # every broker has heartbeated since the topic's records committed
        quorum = admin.describe_metadata_quorum()
        [partition] = quorum["topics"][0]["partitions"]
        hw = partition["high_watermark"]
        if all(o["log_end_offset"] >= hw for o in partition["observers"]) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    admin.close()
    log = bg_cluster.cluster.log
    epoch, committed = bg_cluster.call(lambda: (log.epoch, log.high_watermark))
    controller = bg_cluster.cluster.controller_node
    assert quorum["topics"][0]["topic_name"] == "__cluster_metadata"
    assert partition["error"] is None
    assert (partition["partition_index"], partition["leader_id"], partition["leader_epoch"]) == (0, 3000, epoch)
    assert 0 < hw <= committed
    [voter] = partition["current_voters"]
    assert voter["replica_id"] == 3000 and voter["log_end_offset"] >= hw
    assert voter["last_caught_up_timestamp"] > 0
    assert [o["replica_id"] for o in partition["observers"]] == [1, 2, 3]
    assert all(o["log_end_offset"] >= hw for o in partition["observers"])
    assert quorum["nodes"] == [{"node_id": 3000, "listeners": [
        {"name": "CONTROLLER", "host": controller.host, "port": controller.port}]}]


@pytest.mark.parametrize("version", [0, 1, 2])
async def test_describe_quorum_of_another_partition_is_unknown(cluster, version):
    client = KafkaClient(cluster.controller_node.host, cluster.controller_node.port, "quorum-test")
    Topic, Partition = DescribeQuorumRequest.TopicData, DescribeQuorumRequest.PartitionData
    request = DescribeQuorumRequest(topics=[Topic(topic_name="__cluster_metadata", partitions=[
        Partition(partition_index=1)])])
    response = await client.send(request, version)
    [partition] = response.topics[0].partitions
    assert (response.error_code, partition.partition_index, partition.error_code) == (0, 1, 3)
    if version >= 2:
        assert partition.error_message == "This server does not host this topic-partition."
    good = await client.send(request.replace(topics=[Topic(topic_name="__cluster_metadata", partitions=[
        Partition(partition_index=0)])]), version)
    assert good.topics[0].partitions[0].leader_id == 3000
    assert good.topics[0].partitions[0].high_watermark == cluster.log.high_watermark
    await client.close()


def test_a_restarted_cluster_keeps_its_topics_configs_cluster_id_and_directories(tmp_path):
    with BackgroundCluster(brokers=3, data_dir=tmp_path) as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="restart-test")
        admin.create_topics([NewTopic("kept", 4, 2), NewTopic("also-kept", 1, 3)])
        admin.alter_configs([ConfigResource("TOPIC", "kept", {"retention.ms": "12345"})])
        admin.close()
        cluster_id = bg.cluster.controller.cluster_id
        directories = {b.broker_id: b.log_dirs for b in bg.cluster.brokers}
        epoch = bg.cluster.log.epoch
        before = bg.call(lambda: {t.name: dict(t.partitions) for t in bg.cluster.controller.committed.topics.values()})
    assert read_properties(tmp_path / "meta.properties")["cluster.id"] == cluster_id

    with BackgroundCluster(brokers=3, data_dir=tmp_path) as bg:
        assert bg.cluster.controller.cluster_id == cluster_id
        assert {b.broker_id: b.log_dirs for b in bg.cluster.brokers} == directories
        assert bg.cluster.log.epoch == epoch + 1
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="restart-test")
        described = {t["name"]: t for t in admin.describe_topics(["kept", "also-kept"])}
        configs = admin.describe_configs([ConfigResource("TOPIC", "kept", ["retention.ms"])])
        assert admin.describe_cluster()["cluster_id"] == cluster_id
        admin.close()
        after = bg.call(lambda: {t.name: {i: (p.replicas, p.directories) for i, p in t.partitions.items()}
                                 for t in bg.cluster.controller.committed.topics.values()})
    assert [len(described[name]["partitions"]) for name in ("kept", "also-kept")] == [4, 1]
    assert configs["topic"]["kept"]["retention.ms"]["value"] == "12345"
    assert after == {name: {i: (p.replicas, p.directories) for i, p in partitions.items()}
                     for name, partitions in before.items()}


async def test_a_data_dir_of_another_cluster_is_refused(tmp_path):
    async with Cluster(brokers=1, data_dir=tmp_path) as cluster:
        cluster_id = cluster.controller.cluster_id
    with pytest.raises(StorageError, match=f"belongs to cluster {cluster_id}"):
        Cluster(brokers=1, data_dir=tmp_path, cluster_id="another-cluster")


async def test_without_a_data_dir_the_log_lives_in_a_temporary_directory_removed_at_stop():
    async with Cluster(brokers=1) as cluster:
        data_dir = cluster.data_dir
        assert (data_dir / "__cluster_metadata-0" / "quorum-state").exists()
        assert list((data_dir / "__cluster_metadata-0").glob("*.log"))
    assert not data_dir.exists()


async def test_the_controller_answers_raft_rpcs_for_other_topics_and_clusters_as_kafka_does(cluster):
    """Fetch and Vote on the controller listener: only __cluster_metadata-0 of this cluster reaches the
    Raft core; a Fetch of its log from offset 0 returns its batches, the high watermark and the leader."""
    client = KafkaClient(cluster.controller_node.host, cluster.controller_node.port, "quorum-test")
    fetch = FetchRequest(replica_state=FetchRequest.ReplicaState(replica_id=7), max_wait_ms=0, min_bytes=0,
                         topics=[FetchRequest.FetchTopic(topic_id=METADATA_TOPIC_ID, partitions=[
                             FetchRequest.FetchPartition(partition=0, current_leader_epoch=cluster.log.epoch,
                                                         fetch_offset=0, last_fetched_epoch=0,
                                                         partition_max_bytes=1 << 20)])])
    answer = (await client.send(fetch, 17)).responses[0].partitions[0]
    assert (answer.error_code, answer.high_watermark) == (0, cluster.log.high_watermark)
    assert (answer.current_leader.leader_id, answer.current_leader.leader_epoch) == (3000, cluster.log.epoch)
    assert rec.read_batch(answer.records, 0).base_offset == 0

    other = fetch.replace(topics=[fetch.topics[0].replace(topic_id=uuid.uuid4())])
    assert (await client.send(other, 17)).responses[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    stranger = fetch.replace(cluster_id="another-cluster")
    assert (await client.send(stranger, 17)).error_code == ErrorCode.INCONSISTENT_CLUSTER_ID
    fenced = fetch.replace(topics=[fetch.topics[0].replace(partitions=[
        fetch.topics[0].partitions[0].replace(current_leader_epoch=cluster.log.epoch - 1)])])
    assert (await client.send(fenced, 17)).responses[0].partitions[0].error_code == ErrorCode.FENCED_LEADER_EPOCH

    vote = VoteRequest(cluster_id="another-cluster", topics=[VoteRequest.TopicData(
        topic_name="__cluster_metadata", partitions=[VoteRequest.PartitionData(
            partition_index=0, replica_epoch=cluster.log.epoch + 1, replica_id=3001, last_offset_epoch=0,
            last_offset=0, pre_vote=True)])])
    assert (await client.send(vote, 2)).error_code == ErrorCode.INCONSISTENT_CLUSTER_ID
    refused = (await client.send(vote.replace(cluster_id=None), 2)).topics[0].partitions[0]
    assert (refused.error_code, refused.vote_granted) == (0, False)  # a pre-vote with a shorter log
    await client.close()


async def test_fetch_snapshot_serves_the_leaders_snapshot_in_chunks(cluster):
    snapshot = await cluster.log.snapshot()
    path = partition_dir(cluster.data_dir) / snapshot.file_name
    client = KafkaClient(cluster.controller_node.host, cluster.controller_node.port, "quorum-test")
    Topic, Partition = FetchSnapshotRequest.TopicSnapshot, FetchSnapshotRequest.PartitionSnapshot

    async def chunk(position: int, end_offset: int = snapshot.end_offset, max_bytes: int = 1000):
        request = FetchSnapshotRequest(max_bytes=max_bytes, topics=[Topic(name="__cluster_metadata", partitions=[
            Partition(partition=0, current_leader_epoch=cluster.log.epoch, position=position,
                      snapshot_id=FetchSnapshotRequest.SnapshotId(end_offset=end_offset, epoch=snapshot.epoch))])])
        return (await client.send(request, 1)).topics[0].partitions[0]

    read, position = b"", 0
    while position < path.stat().st_size:
        answer = await chunk(position)
        assert (answer.error_code, answer.size, answer.position) == (0, path.stat().st_size, position)
        read += answer.unaligned_records
        position += len(answer.unaligned_records)
    assert read == path.read_bytes()
    assert (await chunk(0, end_offset=snapshot.end_offset + 1)).error_code == ErrorCode.SNAPSHOT_NOT_FOUND
    assert (await chunk(position)).error_code == ErrorCode.POSITION_OUT_OF_RANGE
    await client.close()
