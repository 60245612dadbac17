"""A broker's answer to Produce: Kafka's ``ReplicaManager.appendRecords`` with the checks KafkaApis makes
before it (server/apis/api00_produce.py decodes, authorizes and hands the result here).

Per partition, in Kafka's order: a topic the caller may not WRITE to is TOPIC_AUTHORIZATION_FAILED; an
unknown topic id (v13) UNKNOWN_TOPIC_ID; a topic or partition the metadata does not hold
UNKNOWN_TOPIC_OR_PARTITION; records of an older message format (magic 0 or 1, what librdkafka sends a
broker it believes old) INVALID_RECORD; zstd batches in a request older than v7
UNSUPPORTED_COMPRESSION_TYPE. Then
for the rest, acks other than 0, 1 and -1 are INVALID_REQUIRED_ACKS, each partition
unhosted here NOT_LEADER_OR_FOLLOWER, in an offline directory KAFKA_STORAGE_ERROR; the leader's
``Partition`` appends (server/broker/partition.py: NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS for
acks=-1 under ``min.insync.replicas``, and the log's validation, server/storage/: CORRUPT_MESSAGE,
MESSAGE_TOO_LARGE, INVALID_TIMESTAMP, INVALID_RECORD, the idempotent producers' sequence codes, and
INVALID_TXN_STATE for transactional batches, as no transaction was begun: kraftwire has no transaction
coordinator; KAFKA_STORAGE_ERROR when the write fails, and the directory goes offline, as Kafka's
LogDirFailureChannel takes it). A refused partition has nothing appended and offsets -1. With acks=-1 the answer waits
until each appended partition's high watermark passes its records, at most ``timeout_ms``
(REQUEST_TIMED_OUT then, the offsets kept), and is NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank
below ``min.insync.replicas`` meanwhile. A refusal by the leader's checks or its log carries the log
start offset, but for the codes Kafka answers without it (``_WITHOUT_LOG_START``). From v10 a
NOT_LEADER_OR_FOLLOWER names the leader the broker's metadata knows, with its address (KIP-951).
"""
from __future__ import annotations

import asyncio
import struct
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.messages import ProduceRequest, ProduceResponse
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.storage import LogError
from kraftwire.server.storage.errors import LogStorageError

from .partition import Partition

if TYPE_CHECKING:
    from .node import BrokerNode

VALID_ACKS = (-1, 0, 1)
FIRST_VERSION_WITH_ZSTD = 7
FIRST_VERSION_WITH_LEADER = 10  # CurrentLeader and NodeEndpoints (KIP-951)
FIRST_VERSION_WITH_TOPIC_IDS = 13
ZSTD = 4
_ATTRIBUTES = struct.Struct(">h")
_ATTRIBUTES_AT = 21  # base offset 8, length 4, leader epoch 4, magic 1, CRC 4
_MAGIC_AT = 16  # where every message format has its magic byte
Response = ProduceResponse.PartitionProduceResponse
# refusals answered without the log start offset (Kafka's appendToLocalLog); the others carry it
_WITHOUT_LOG_START = frozenset({ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_LEADER_OR_FOLLOWER,
                                ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE, ErrorCode.CORRUPT_MESSAGE,
                                ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.UNKNOWN_TOPIC_ID})


@dataclass(eq=False, slots=True)
class _Outcome:
    """One partition's answer as it forms."""

    index: int
    error_code: int = ErrorCode.NONE
    message: str | None = None
    base_offset: int = -1
    log_append_time_ms: int = -1
    log_start_offset: int = -1
    record_errors: list[ProduceResponse.BatchIndexAndErrorMessage] = field(default_factory=list)
    wait: tuple[Partition, int] | None = None  # acks=-1: (the partition, the offset its HW must reach)

    def refuse(self, exc: KafkaError) -> None:
        self.error_code, self.message = exc.code, exc.message
        if isinstance(exc, LogError):
            self.record_errors = [ProduceResponse.BatchIndexAndErrorMessage(
                batch_index=e.batch_index, batch_index_error_message=e.message) for e in exc.record_errors]


@dataclass(eq=False, slots=True)
class _Topic:
    name: str | None
    topic_id: uuid.UUID
    outcomes: list[_Outcome]


def _not_v2(records: bytes | None) -> bool:
    """The first batch is of an older message format (magic 0 or 1), which Produce v3+ does not take."""
    return records is not None and len(records) > _MAGIC_AT and records[_MAGIC_AT] != 2


def _uses_zstd(records: bytes | None) -> bool:
    if records is None or len(records) < _ATTRIBUTES_AT + 2:
        return False
    return _ATTRIBUTES.unpack_from(records, _ATTRIBUTES_AT)[0] & 0x7 == ZSTD


def _screen(image: MetadataImage, request: ProduceRequest, version: int, allowed: Callable[[str], bool]
            ) -> tuple[list[_Topic], list[tuple[_Outcome, uuid.UUID, bytes | None]]]:
    """KafkaApis' checks: every partition's outcome, and those that pass, with topic id and records."""
    topics, passed = [], []
    for data in request.topic_data:
        if version >= FIRST_VERSION_WITH_TOPIC_IDS:
            state = image.topics.get(data.topic_id)
            name = state.name if state is not None else None
        else:
            name, state = data.name, image.topic(data.name)
        topic = _Topic(data.name if version < FIRST_VERSION_WITH_TOPIC_IDS else None,
                       state.topic_id if state is not None else data.topic_id, [])
        topics.append(topic)
        for partition in data.partition_data:
            outcome = _Outcome(partition.index)
            topic.outcomes.append(outcome)
            if name is None and version >= FIRST_VERSION_WITH_TOPIC_IDS:
                outcome.error_code = ErrorCode.UNKNOWN_TOPIC_ID
            elif name is None or not allowed(name):
                outcome.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif state is None or partition.index not in state.partitions:
                outcome.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif _not_v2(partition.records):
                outcome.error_code = ErrorCode.INVALID_RECORD
                outcome.message = (f"Produce requests with version {version} are only allowed to contain record "
                                   "batches with magic version 2")
            elif version < FIRST_VERSION_WITH_ZSTD and _uses_zstd(partition.records):
                outcome.error_code = ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
                outcome.message = (f"Produce requests with version {version} are not allowed to use ZStandard "
                                   "compression")
            else:
                passed.append((outcome, state.topic_id, partition.records))
    return topics, passed


def _append(broker: BrokerNode, outcome: _Outcome, topic_id: uuid.UUID, records: bytes | None, acks: int) -> None:
    """One partition's append on this broker, its result or refusal in ``outcome``."""
    partition = None
    topic = broker.image.topics.get(topic_id)
    name = topic.name if topic is not None else str(topic_id)
    try:
        partition = broker.replica_manager.partition(topic_id, outcome.index)
        if partition is None:
            raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, f"broker {broker.broker_id} hosts no replica of it")
        result = partition.append_as_leader(records or b"", acks)
    except KafkaError as exc:
        broker.topic_stats.produce_request(name, failed=True)
        outcome.refuse(exc)
        if isinstance(exc, LogStorageError):  # the directory failed under the write: it goes offline
            broker.storage_failed(topic_id, outcome.index, exc)
        if partition is not None and exc.code not in _WITHOUT_LOG_START and partition.opened:
            outcome.log_start_offset = partition.log.log_start_offset  # as Kafka's processFailedRecord
        return
    broker.topic_stats.produce_request(name, failed=False)
    broker.topic_stats.produced(name, len(records or b""), result.record_count)
    outcome.base_offset, outcome.log_append_time_ms = result.base_offset, result.log_append_time_ms
    outcome.log_start_offset = result.log_start_offset
    if acks == -1:
        outcome.wait = (partition, result.required_offset)


def produce(broker: BrokerNode, request: ProduceRequest, version: int,
            allowed: Callable[[str], bool]) -> ProduceResponse | Awaitable[ProduceResponse]:
    """The answer to one Produce (see the module docstring); ``allowed(topic)``: WRITE on the topic. The
    batches are appended before this returns, so a connection's requests act in order as in Kafka; with
    acks=-1 what it returns is an awaitable of the answer, which comes once the high watermarks pass."""
    image = broker.image
    topics, passed = _screen(image, request, version, allowed)
    acks = request.acks
    for outcome, topic_id, records in passed:
        if acks not in VALID_ACKS:
            outcome.error_code = ErrorCode.INVALID_REQUIRED_ACKS
        else:
            _append(broker, outcome, topic_id, records, acks)
    waiting = [o for o, _, _ in passed if o.wait is not None]
    if not waiting:
        return _response(broker, image, topics, version)
    return _acknowledged(broker, image, topics, version, waiting, max(request.timeout_ms, 0) / 1000)


async def _acknowledged(broker: BrokerNode, image: MetadataImage, topics: list[_Topic], version: int,
                        waiting: list[_Outcome], timeout_s: float) -> ProduceResponse:
    """acks=-1: the answer once each appended partition's high watermark passed its records (or not)."""
    codes = await asyncio.gather(*(o.wait[0].wait_for_high_watermark(o.wait[1], timeout_s)
                                   for o in waiting if o.wait is not None))
    for outcome, code in zip(waiting, codes):
        outcome.error_code = code
    return _response(broker, image, topics, version)


def _response(broker: BrokerNode, image: MetadataImage, topics: list[_Topic], version: int) -> ProduceResponse:
    leaders: set[int] = set()
    answers = []
    for topic in topics:
        partitions = []
        for o in topic.outcomes:
            leader = ProduceResponse.LeaderIdAndEpoch()
            if o.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER and version >= FIRST_VERSION_WITH_LEADER:
                state = image.partition_state(topic.topic_id, o.index)
                if state is not None:
                    leader = ProduceResponse.LeaderIdAndEpoch(leader_id=state.leader, leader_epoch=state.leader_epoch)
                    leaders.add(state.leader)
            partitions.append(Response(
                index=o.index, error_code=o.error_code, base_offset=o.base_offset,
                log_append_time_ms=o.log_append_time_ms, log_start_offset=o.log_start_offset,
                record_errors=o.record_errors, error_message=o.message, current_leader=leader))
        answers.append(ProduceResponse.TopicProduceResponse(name=topic.name or "", topic_id=topic.topic_id,
                                                            partition_responses=partitions))
    return ProduceResponse(responses=answers, node_endpoints=_endpoints(image, leaders, broker.listener_name))


def _endpoints(image: MetadataImage, brokers: set[int], listener_name: str) -> list[ProduceResponse.NodeEndpoint]:
    """The listener ``listener_name`` of each broker named as a leader (KIP-951's NodeEndpoints)."""
    endpoints = []
    for broker_id in sorted(brokers):
        state = image.brokers.get(broker_id)
        endpoint = next((e for e in state.endpoints if e.name == listener_name), None) if state else None
        if state is not None and endpoint is not None:
            endpoints.append(ProduceResponse.NodeEndpoint(node_id=broker_id, host=endpoint.host, port=endpoint.port,
                                                          rack=state.rack))
    return endpoints
