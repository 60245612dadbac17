"""acks=-1 against a running cluster, through raw requests over TCP: an ISR member that stopped (not yet
fenced) holds the high watermark, so the answer is REQUEST_TIMED_OUT at the request's timeout, with the
records appended; once it is fenced and out of the ISR, min.insync.replicas refuses acks=-1 up front
(NOT_ENOUGH_REPLICAS, nothing appended) while acks=1 still writes. And the logs outlive the process: a
cluster restarted on its data directory serves the same offsets and records, with the log start offset
DeleteRecords moved."""
from __future__ import annotations

import asyncio
import os
import time

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import (CreateTopicsRequest, DeleteRecordsRequest, ListOffsetsRequest,
                                      ProduceRequest)
from kraftwire.codec.records import encode_batch
from kraftwire.server.host.cluster import Cluster
from kraftwire.server.wire.client import KafkaClient


def batch(*values: bytes, ahead_ms: int = 0) -> bytes:
    return encode_batch(0, -1, int(time.time() * 1000) + ahead_ms, [(None, v) for v in values])


def produce(topic: str, records: bytes, acks: int, timeout_ms: int = 5000) -> ProduceRequest:
    return ProduceRequest(acks=acks, timeout_ms=timeout_ms, topic_data=[ProduceRequest.TopicProduceData(
        name=topic, partition_data=[ProduceRequest.PartitionProduceData(index=0, records=records)])])


def listing(topic: str, timestamp: int) -> ListOffsetsRequest:
    return ListOffsetsRequest(replica_id=-1, topics=[ListOffsetsRequest.ListOffsetsTopic(
        name=topic, partitions=[ListOffsetsRequest.ListOffsetsPartition(partition_index=0, timestamp=timestamp)])])


async def create(cluster: Cluster, name: str, replication_factor: int, configs: dict[str, str]) -> None:
    client = KafkaClient(cluster.brokers[0].host, cluster.brokers[0].port, "test")
    try:
        answer = await client.send(CreateTopicsRequest(timeout_ms=10000, topics=[CreateTopicsRequest.CreatableTopic(
            name=name, num_partitions=1, replication_factor=replication_factor, configs=[
                CreateTopicsRequest.CreatableTopicConfig(name=k, value=v) for k, v in configs.items()])]))
    finally:
        await client.close()
    assert answer.topics[0].error_code == 0, answer


async def send(broker, request, version: int):
    client = KafkaClient(broker.host, broker.port, "test")
    try:
        return await client.send(request, version)
    finally:
        await client.close()


def first(response):
    [topic] = response.responses if hasattr(response, "responses") else response.topics
    [partition] = topic.partition_responses if hasattr(topic, "partition_responses") else topic.partitions
    return partition


async def test_acks_all_waits_for_the_isr_and_min_insync_replicas_refuses():
    async with Cluster(brokers=2, heartbeat_interval_ms=200, session_timeout_ms=1500) as cluster:
        await create(cluster, "acks", 2, {"min.insync.replicas": "2"})
        state = cluster.metadata.image.topic("acks").partitions[0]
        leader = cluster.broker(state.leader)
        follower = next(b for b in cluster.brokers if b is not leader)
        await follower.stop()  # still in the ISR until its session runs out: the high watermark waits
        timed_out = first(await send(leader, produce("acks", batch(b"a"), acks=-1, timeout_ms=300), 9))
        assert (timed_out.error_code, timed_out.base_offset) == (ErrorCode.REQUEST_TIMED_OUT, 0)
        await cluster.wait_until(lambda image: image.topic("acks").partitions[0].isr == (leader.broker_id,), 20)
        refused = first(await send(leader, produce("acks", batch(b"b"), acks=-1), 9))
        assert (refused.error_code, refused.base_offset) == (ErrorCode.NOT_ENOUGH_REPLICAS, -1)
        written = first(await send(leader, produce("acks", batch(b"c"), acks=1), 9))
        assert (written.error_code, written.base_offset) == (ErrorCode.NONE, 1)
        latest = first(await send(leader, listing("acks", -1), 6))
        assert (latest.error_code, latest.offset) == (ErrorCode.NONE, 2)  # the ISR is the leader: HW = log end


async def test_logs_outlive_a_restart_of_the_process(tmp_path):
    async with Cluster(brokers=1, data_dir=tmp_path) as cluster:
        await create(cluster, "kept", 1, {})
        broker = cluster.brokers[0]
        for values in ([b"one", b"two"], [b"three"], [b"four", b"five"]):
            assert first(await send(broker, produce("kept", batch(*values), acks=1), 9)).error_code == 0
        deleted = await send(broker, DeleteRecordsRequest(timeout_ms=5000, topics=[
            DeleteRecordsRequest.DeleteRecordsTopic(name="kept", partitions=[
                DeleteRecordsRequest.DeleteRecordsPartition(partition_index=0, offset=2)])]), 2)
        assert (deleted.topics[0].partitions[0].error_code, deleted.topics[0].partitions[0].low_watermark) == (0, 2)
    async with Cluster(brokers=1, data_dir=tmp_path) as cluster:
        broker = cluster.brokers[0]
        await asyncio.wait_for(_until_listed(broker), 20)
        earliest, latest = first(await send(broker, listing("kept", -2), 6)), first(await send(broker, listing("kept", -1), 6))
        assert (earliest.offset, latest.offset) == (2, 5)
        appended = first(await send(broker, produce("kept", batch(b"six"), acks=-1), 9))
        assert (appended.error_code, appended.base_offset, appended.log_start_offset) == (0, 5, 2)


async def _until_listed(broker) -> None:
    """The restarted broker leads the partition again (its replica taken from the image)."""
    while first(await send(broker, listing("kept", -1), 6)).error_code != ErrorCode.NONE:
        await asyncio.sleep(0.05)


async def test_a_failed_write_takes_the_directory_offline():
    """A write the disk refuses is KAFKA_STORAGE_ERROR with nothing appended, and the directory goes
    offline as Kafka's does (its broker reports it; the broker keeps serving from its other directory)."""
    async with Cluster(brokers=1, log_dirs=2) as cluster:
        await create(cluster, "failing", 1, {})
        broker = cluster.brokers[0]
        assert first(await send(broker, produce("failing", batch(b"kept"), acks=1), 9)).error_code == 0
        topic_id = cluster.metadata.image.topic("failing").topic_id
        partition = broker.replica_manager.partition(topic_id, 0)
        os.close(partition.log.active_segment._fd)  # the disk goes away under the open segment
        refused = first(await send(broker, produce("failing", batch(b"lost"), acks=1), 9))
        assert refused.error_code == ErrorCode.KAFKA_STORAGE_ERROR
        directory = broker.replica_manager.replicas[(topic_id, 0)].log_dir
        await cluster.wait_until(lambda image: directory.directory_id not in image.brokers[1].log_dirs, 20)
        assert not directory.online and broker.running


async def test_retention_deletes_whole_segments_on_the_virtual_clock():
    """segment.ms rolls the log between appends and retention.ms deletes the old segment at the next
    retention check, both on the cluster's virtual clock (time moves only when the test says). The
    records' own timestamps are the producer's (CreateTime): the newer batch is stamped as if made
    400 s later, when the virtual clock will be."""
    async with Cluster(brokers=1, virtual_clock=True) as cluster:
        await create(cluster, "aging", 1, {"segment.ms": "10000", "retention.ms": "60000"})
        broker = cluster.brokers[0]
        assert first(await send(broker, produce("aging", batch(b"old", b"older"), acks=1), 9)).error_code == 0
        await cluster.advance(20)  # past segment.ms: the next append starts a new segment
        assert first(await send(broker, produce("aging", batch(b"new", ahead_ms=400_000), acks=1), 9)).base_offset == 2
        assert first(await send(broker, listing("aging", -2), 6)).offset == 0
        await cluster.advance(400)  # past retention.ms and a retention check (300 s)
        assert first(await send(broker, listing("aging", -2), 6)).offset == 2
        assert first(await send(broker, listing("aging", -1), 6)).offset == 3


async def test_list_offsets_checks_the_leader_epoch_after_a_leader_change():
    """A client that still names the old leader epoch is FENCED_LEADER_EPOCH at the new leader, one that
    names a newer epoch UNKNOWN_LEADER_EPOCH, the old leader's broker (now stopped) is not asked, and the
    current epoch is answered with the latest offset."""
    async with Cluster(brokers=2, heartbeat_interval_ms=200, session_timeout_ms=1500) as cluster:
        await create(cluster, "epochs", 2, {})
        before = cluster.metadata.image.topic("epochs").partitions[0]
        await cluster.broker(before.leader).stop()
        await cluster.wait_until(lambda image: image.topic("epochs").partitions[0].leader not in (-1, before.leader), 20)
        after = cluster.metadata.image.topic("epochs").partitions[0]
        leader = cluster.broker(after.leader)

        def asked(epoch: int) -> ListOffsetsRequest:
            return ListOffsetsRequest(replica_id=-1, topics=[ListOffsetsRequest.ListOffsetsTopic(
                name="epochs", partitions=[ListOffsetsRequest.ListOffsetsPartition(
                    partition_index=0, timestamp=-1, current_leader_epoch=epoch)])])

        assert first(await send(leader, asked(before.leader_epoch), 6)).error_code == ErrorCode.FENCED_LEADER_EPOCH
        assert first(await send(leader, asked(after.leader_epoch + 1), 6)).error_code == ErrorCode.UNKNOWN_LEADER_EPOCH
        current = first(await send(leader, asked(after.leader_epoch), 6))
        assert (current.error_code, current.offset, current.leader_epoch) == (ErrorCode.NONE, 0, after.leader_epoch)
