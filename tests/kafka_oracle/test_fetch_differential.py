"""Fetch's and OffsetForLeaderEpoch's error paths against a real Apache Kafka 4.3.1: the same topic and
records on both, then the same raw requests, compared code by code (offsets past the end or before the
start, a broker that is not a replica, fenced and unknown leader epochs, unknown topic ids and
partitions, an incremental fetch session that does not exist)."""
from __future__ import annotations

import asyncio
import time
import uuid

from kafka import KafkaProducer

from apache_kafka import KafkaCluster
from kraftwire.codec.messages import AlterPartitionReassignmentsRequest as Alter
from kraftwire.codec.messages import (CreateTopicsRequest, ElectLeadersRequest, FetchRequest, MetadataRequest,
                                      OffsetForLeaderEpochRequest)
from kraftwire.server.host.cluster import BackgroundCluster
from kraftwire.server.wire.client import KafkaClient

TOPIC = "fetch-errors"
PREFERRED = 0


def fetch(topic_id: uuid.UUID, offset: int, epoch: int = -1, partition: int = 0, session: tuple[int, int] = (0, -1)):
    return FetchRequest(max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, session_id=session[0],
                        session_epoch=session[1], topics=[FetchRequest.FetchTopic(topic_id=topic_id, partitions=[
                            FetchRequest.FetchPartition(partition=partition, current_leader_epoch=epoch,
                                                        fetch_offset=offset, partition_max_bytes=1 << 20)])])


def epoch_end(epoch: int, current: int = -1):
    return OffsetForLeaderEpochRequest(replica_id=-1, topics=[OffsetForLeaderEpochRequest.OffsetForLeaderTopic(
        topic=TOPIC, partitions=[OffsetForLeaderEpochRequest.OffsetForLeaderPartition(
            partition=0, current_leader_epoch=current, leader_epoch=epoch)])])


async def _partition_state(client: KafkaClient):
    answer = await client.send(MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=TOPIC)]), 12)
    [topic] = answer.topics
    [partition] = topic.partitions
    return topic.topic_id, partition


async def scenario(ports: list[int], bootstrap: str) -> dict:
    clients = {b: KafkaClient("127.0.0.1", port, "fetch-differential") for b, port in enumerate(ports, 1)}
    try:
        created = await clients[1].send(CreateTopicsRequest(timeout_ms=30000, topics=[
            CreateTopicsRequest.CreatableTopic(name=TOPIC, num_partitions=-1, replication_factor=-1, assignments=[
                CreateTopicsRequest.CreatableReplicaAssignment(partition_index=0, broker_ids=[2, 1])])]))
        assert created.topics[0].error_code == 0, created
        producer = await asyncio.to_thread(KafkaProducer, bootstrap_servers=bootstrap, acks="all")
        try:
            for i in range(5):
                await asyncio.to_thread(lambda i=i: producer.send(TOPIC, value=b"v%d" % i, partition=0).get(30))
        finally:
            await asyncio.to_thread(producer.close, 10)
        topic_id, state = await _partition_state(clients[1])
        first_epoch = state.leader_epoch
        codes: dict[str, object] = {}

        async def code(name: str, broker: int, request):
            answer = await clients[broker].send(request, 17 if isinstance(request, FetchRequest) else 4)
            if isinstance(request, FetchRequest):
                if answer.error_code:
                    codes[name] = ("top", answer.error_code, answer.session_id)
                    return
                [t] = answer.responses
                [p] = t.partitions
                codes[name] = (p.error_code, p.high_watermark, p.log_start_offset, bool(p.records))
            else:
                [t] = answer.topics
                [p] = t.partitions
                codes[name] = (p.error_code, p.leader_epoch, p.end_offset)
        await code("ok", 2, fetch(topic_id, 0, first_epoch))
        await code("past the end", 2, fetch(topic_id, 6))
        await code("before the start", 2, fetch(topic_id, -1))
        await code("not a replica", 3, fetch(topic_id, 0))
        await code("unknown epoch", 2, fetch(topic_id, 0, first_epoch + 1))
        await code("unknown partition", 2, fetch(topic_id, 0, partition=3))
        await code("unknown topic id", 2, fetch(uuid.uuid4(), 0))
        await code("no such session", 2, fetch(topic_id, 0, session=(777, 3)))
        await code("epoch end, current", 2, epoch_end(first_epoch))
        await code("epoch end, not leader", 1, epoch_end(first_epoch))
        # a leader change: the order becomes [1, 2] and a preferred election makes broker 1 lead
        moved = await clients[1].send(Alter(timeout_ms=30000, topics=[Alter.ReassignableTopic(name=TOPIC, partitions=[
            Alter.ReassignablePartition(partition_index=0, replicas=[1, 2])])]))
        assert moved.error_code == 0, moved
        deadline = time.monotonic() + 60
        while True:
            elected = await clients[1].send(ElectLeadersRequest(
                election_type=PREFERRED, timeout_ms=30000,
                topic_partitions=[ElectLeadersRequest.TopicPartitions(topic=TOPIC, partitions=[0])]), 2)
            _, state = await _partition_state(clients[1])
            if state.leader_id == 1:
                break
            assert time.monotonic() < deadline, elected
            await asyncio.sleep(0.2)
        while True:  # until both brokers have applied the change from their metadata
            answers = [await clients[b].send(fetch(topic_id, 0, state.leader_epoch), 17) for b in (1, 2)]
            if all(a.responses[0].partitions[0].error_code != 75 for a in answers):  # not UNKNOWN_LEADER_EPOCH
                break
            assert time.monotonic() < deadline, answers
            await asyncio.sleep(0.05)
        await code("old leader", 2, fetch(topic_id, 0, state.leader_epoch))
        await code("fenced", 1, fetch(topic_id, 0, first_epoch))
        await code("new leader", 1, fetch(topic_id, 0, state.leader_epoch))
        await code("epoch end after the change", 1, epoch_end(first_epoch))
        await code("epoch end fenced", 1, epoch_end(state.leader_epoch, current=first_epoch))
        return codes
    finally:
        for client in clients.values():
            await client.close()


def test_fetch_error_codes_as_kafka(apache_kafka: KafkaCluster):
    theirs = asyncio.run(scenario(apache_kafka.ports, apache_kafka.bootstrap))
    with BackgroundCluster(brokers=3, log_dirs=2) as bg:
        ports = bg.call(lambda: [b.port for b in bg.cluster.brokers])
        ours = bg.run(scenario(ports, bg.bootstrap), timeout=180)
    assert ours == theirs
