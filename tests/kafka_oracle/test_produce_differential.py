"""Produce, ListOffsets, DeleteRecords and InitProducerId side by side with a real Apache Kafka 4.3.1:
the same raw requests to both clusters, the same codes and offsets back.

One scenario over a fresh one-replica topic (max.message.bytes 2000): batches appended and refused
(unknown topic and partition, acks=2, too large, a bad CRC, a timestamp too far ahead, a broker that
does not lead), offsets listed (earliest, latest, by timestamp, the largest timestamp, past the end, a
leader epoch from the future, a broker that does not lead), records deleted (below the high watermark,
beyond it, -1) and an idempotent producer's id. Broker ids and producer ids are compared by what they
mean (the leader, a valid id), not by value."""
from __future__ import annotations

import time
import uuid

from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from kraftwire.codec.messages import (DeleteRecordsRequest, InitProducerIdRequest, ListOffsetsRequest,
                                      MetadataRequest, ProduceRequest)
from kraftwire.codec.records import encode_batch
from kraftwire.server.host.cluster import BackgroundCluster
from raw_client import RawConnection

PRODUCE_VERSION, LIST_VERSION, DELETE_VERSION = 10, 8, 2


def _leader(bootstrap: str, topic: str) -> tuple[int, dict[int, str]]:
    """The topic's partition 0 leader and every broker's address."""
    deadline = time.monotonic() + 30
    while True:
        with RawConnection(bootstrap.split(",")[0]) as conn:
            answer = conn.send(MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=topic)]), 12)
        brokers = {b.node_id: f"{b.host}:{b.port}" for b in answer.brokers}
        [described] = answer.topics
        if described.error_code == 0 and described.partitions and described.partitions[0].leader_id in brokers:
            return described.partitions[0].leader_id, brokers
        assert time.monotonic() < deadline, described
        time.sleep(0.1)


def _produce(conn: RawConnection, topic: str, records: bytes, partition: int = 0, acks: int = 1) -> dict:
    answer = conn.send(ProduceRequest(acks=acks, timeout_ms=5000, topic_data=[ProduceRequest.TopicProduceData(
        name=topic, partition_data=[ProduceRequest.PartitionProduceData(index=partition, records=records)])]),
        PRODUCE_VERSION)
    [result] = answer.responses[0].partition_responses
    return {"error": result.error_code, "base_offset": result.base_offset, "log_start": result.log_start_offset,
            "leader": result.current_leader.leader_id}


def _list(conn: RawConnection, topic: str, timestamp: int, epoch: int = -1) -> tuple[int, int, int]:
    answer = conn.send(ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=[ListOffsetsRequest.ListOffsetsTopic(
        name=topic, partitions=[ListOffsetsRequest.ListOffsetsPartition(partition_index=0, timestamp=timestamp,
                                                                        current_leader_epoch=epoch)])]),
        LIST_VERSION)
    [result] = answer.topics[0].partitions
    return result.error_code, result.offset, result.timestamp


def _delete(conn: RawConnection, topic: str, offset: int) -> tuple[int, int]:
    answer = conn.send(DeleteRecordsRequest(timeout_ms=5000, topics=[DeleteRecordsRequest.DeleteRecordsTopic(
        name=topic, partitions=[DeleteRecordsRequest.DeleteRecordsPartition(partition_index=0, offset=offset)])]),
        DELETE_VERSION)
    [result] = answer.topics[0].partitions
    return result.error_code, result.low_watermark


def scenario(bootstrap: str, base_ms: int) -> dict:
    topic = f"diff-produce-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="differential")
    try:
        admin.create_topics([NewTopic(topic, 1, 1, topic_configs={"max.message.bytes": "2000"})])
    finally:
        admin.close()
    leader, brokers = _leader(bootstrap, topic)
    seen: dict = {}

    def batch(values, timestamp=base_ms):
        return encode_batch(0, -1, timestamp, [(None, v) for v in values])

    with RawConnection(brokers[leader]) as conn:
        seen["first"] = _produce(conn, topic, batch([b"a", b"b", b"c"]))
        seen["unknown_topic"] = _produce(conn, f"{topic}-missing", batch([b"x"]))
        seen["unknown_partition"] = _produce(conn, topic, batch([b"x"]), partition=3)
        seen["acks_2"] = _produce(conn, topic, batch([b"x"]), acks=2)
        seen["too_large"] = _produce(conn, topic, batch([b"y" * 3000]))
        corrupt = bytearray(batch([b"checked"]))
        corrupt[-2] ^= 0xFF
        seen["bad_crc"] = _produce(conn, topic, bytes(corrupt))
        # a magic 0 message, as librdkafka writes to a broker it takes for an old one
        seen["magic_0"] = _produce(conn, topic, bytes.fromhex("00000000000000000000000f35b492f20000ffffffff0000000178"))
        seen["from_the_future"] = _produce(conn, topic, batch([b"late"], base_ms + 3 * 3600_000))
        seen["second"] = _produce(conn, topic, batch([b"d", b"e"], base_ms + 1000))
        seen["earliest"] = _list(conn, topic, -2)
        seen["latest"] = _list(conn, topic, -1)
        seen["by_timestamp"] = _list(conn, topic, base_ms + 500)
        seen["max_timestamp"] = _list(conn, topic, -3)
        seen["past_the_end"] = _list(conn, topic, base_ms + 60_000)
        seen["future_epoch"] = _list(conn, topic, -1, epoch=5)
        seen["delete_below_hw"] = _delete(conn, topic, 2)
        seen["delete_beyond_hw"] = _delete(conn, topic, 9)
        seen["earliest_after_delete"] = _list(conn, topic, -2)
        seen["delete_to_hw"] = _delete(conn, topic, -1)
        # A broker's first InitProducerId may find no block of ids yet: COORDINATOR_LOAD_IN_PROGRESS (14), on
        # Kafka's brokers as on ours, and the client asks again, as this does (until a deadline).
        deadline = time.monotonic() + 30
        while True:
            producer = conn.send(InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000), 4)
            if producer.error_code != 14 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        seen["init_producer_id"] = (producer.error_code, producer.producer_id >= 0, producer.producer_epoch)
    other = next(b for b in sorted(brokers) if b != leader)
    with RawConnection(brokers[other]) as conn:
        elsewhere = _produce(conn, topic, batch([b"x"]))
        seen["not_leader"] = {**elsewhere, "leader": elsewhere["leader"] == leader}
        seen["list_not_leader"] = _list(conn, topic, -1)
    for answer in seen.values():
        if isinstance(answer, dict) and not isinstance(answer["leader"], bool):
            answer["leader"] = answer["leader"] if answer["leader"] == -1 else "named"
    return seen


def test_produce_list_and_delete_answer_as_kafka_does(apache_kafka):
    base_ms = (int(time.time() * 1000) // 1000) * 1000
    kafka = scenario(apache_kafka.bootstrap, base_ms)
    with BackgroundCluster(brokers=3) as bg:
        ours = scenario(bg.bootstrap, base_ms)
    differing = {k: (kafka[k], v) for k, v in ours.items() if v != kafka[k]}
    assert differing == {}
    assert kafka["first"]["base_offset"] == 0 and kafka["second"]["base_offset"] == 3  # the scenario means it
