"""A broker's answers to ListOffsets and DeleteRecords (Kafka's ``ReplicaManager.fetchOffset`` and
``deleteRecords`` with the checks KafkaApis makes before them; the handlers, api02_list_offsets.py and
api21_delete_records.py, decode, authorize and hand the request here).

ListOffsets, per partition, in Kafka's order: a topic the caller may not DESCRIBE is
TOPIC_AUTHORIZATION_FAILED (listed after the others, as Kafka's merge does); a partition named twice
INVALID_REQUEST; a special timestamp newer than the request's version (-3 needs v7, -4 v8, -5 v9, -6
v11) UNSUPPORTED_VERSION; an unknown topic or partition UNKNOWN_TOPIC_OR_PARTITION, one this broker does
not host NOT_LEADER_OR_FOLLOWER; then the CurrentLeaderEpoch (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH)
and, unless the replica id is -2 (Kafka's debugging id), leadership (NOT_LEADER_OR_FOLLOWER). A client's
lookup (replica id -1) sees offsets up to the high watermark (read uncommitted) or the last stable offset
(read committed: the same, as no transaction is ever open); another replica's, up to the log end.
Latest is that bound with the current leader epoch; earliest the log start offset; a timestamp (or -3,
the largest timestamp) finds a record through the time index, and a record at or past the bound counts
as none (offset and timestamp -1). While a new leader's high watermark lags behind where its epoch began,
latest is OFFSET_NOT_AVAILABLE (LEADER_NOT_AVAILABLE before v5). Errors carry offset and timestamp -1.

DeleteRecords, per partition: TOPIC_AUTHORIZATION_FAILED without DELETE on the topic, unknown
UNKNOWN_TOPIC_OR_PARTITION, then the leader's ``Partition.delete_records`` (NOT_LEADER_OR_FOLLOWER,
OFFSET_OUT_OF_RANGE beyond the high watermark or below -1, POLICY_VIOLATION on a compact-only topic), and
the answer waits until the low watermark (the smallest log start offset of the live replicas) reaches
the offset, at most TimeoutMs (REQUEST_TIMED_OUT): at once with RF 1. Errors carry low watermark -1.
"""
from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.messages import (DeleteRecordsRequest, DeleteRecordsResponse, ListOffsetsRequest,
                                      ListOffsetsResponse)
from kraftwire.server.storage import (EARLIEST_LOCAL_TIMESTAMP, EARLIEST_TIMESTAMP, LATEST_TIERED_TIMESTAMP,
                                      LATEST_TIMESTAMP, MAX_TIMESTAMP, TimestampAndOffset)

from .partition import Partition

if TYPE_CHECKING:
    from .node import BrokerNode

CONSUMER_REPLICA_ID = -1
DEBUGGING_REPLICA_ID = -2
EARLIEST_PENDING_UPLOAD_TIMESTAMP = -6
# the first version of ListOffsets each special timestamp may be asked at (Kafka's timestampMinSupportedVersion)
TIMESTAMP_MIN_VERSION = {EARLIEST_TIMESTAMP: 1, LATEST_TIMESTAMP: 1, MAX_TIMESTAMP: 7, EARLIEST_LOCAL_TIMESTAMP: 8,
                         LATEST_TIERED_TIMESTAMP: 9, EARLIEST_PENDING_UPLOAD_TIMESTAMP: 11}
FIRST_VERSION_WITH_OFFSET_NOT_AVAILABLE = 5
FIRST_VERSION_WITH_EPOCH = 4
Listed = ListOffsetsResponse.ListOffsetsPartitionResponse
Deleted = DeleteRecordsResponse.DeleteRecordsPartitionResult


def _listed_error(index: int, code: int) -> Listed:
    return Listed(partition_index=index, error_code=code, timestamp=-1, offset=-1)


def _hosted(broker: BrokerNode, topic_name: str, index: int) -> Partition:
    """The partition's replica here: UNKNOWN_TOPIC_OR_PARTITION if the metadata has no such partition,
    NOT_LEADER_OR_FOLLOWER if this broker hosts none (Kafka's getPartitionOrException)."""
    topic = broker.image.topic(topic_name)
    if topic is None or index not in topic.partitions:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    partition = broker.replica_manager.partition(topic.topic_id, index)
    if partition is None:
        raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    return partition


def _lookup(partition: Partition, timestamp: int, replica_id: int, version: int) -> Listed:
    """One partition's ListOffsets answer once it is found hosted here."""
    index = partition.index
    client = replica_id == CONSUMER_REPLICA_ID
    log = partition.log
    bound = log.high_watermark if client else log.log_end_offset  # read committed: no open transaction
    lagging = client and partition.epoch_start_offset > log.high_watermark
    if timestamp == LATEST_TIMESTAMP:
        if lagging:
            raise KafkaError(ErrorCode.OFFSET_NOT_AVAILABLE if version >= FIRST_VERSION_WITH_OFFSET_NOT_AVAILABLE
                             else ErrorCode.LEADER_NOT_AVAILABLE)
        epoch = partition.leader_epoch if version >= FIRST_VERSION_WITH_EPOCH else -1  # v0-3 carry no epoch
        return Listed(partition_index=index, timestamp=-1, offset=bound, leader_epoch=epoch)
    found: TimestampAndOffset | None = log.offset_for_timestamp(timestamp)
    limited = timestamp not in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP)
    if found is None or found.offset < 0 or (limited and found.offset >= bound):
        if lagging and limited:
            raise KafkaError(ErrorCode.OFFSET_NOT_AVAILABLE if version >= FIRST_VERSION_WITH_OFFSET_NOT_AVAILABLE
                             else ErrorCode.LEADER_NOT_AVAILABLE)
        return _listed_error(index, ErrorCode.NONE)
    epoch = found.leader_epoch if found.leader_epoch is not None and version >= FIRST_VERSION_WITH_EPOCH else -1
    return Listed(partition_index=index, timestamp=found.timestamp, offset=found.offset, leader_epoch=epoch)


def _list_one(broker: BrokerNode, topic_name: str, asked: ListOffsetsRequest.ListOffsetsPartition,
              replica_id: int, version: int) -> Listed:
    index = asked.partition_index
    timestamp = asked.timestamp
    if timestamp < 0 and version < TIMESTAMP_MIN_VERSION.get(timestamp, version + 1):
        return _listed_error(index, ErrorCode.UNSUPPORTED_VERSION)
    try:
        partition = _hosted(broker, topic_name, index)
        partition.check_leader_epoch(asked.current_leader_epoch, require_leader=replica_id != DEBUGGING_REPLICA_ID)
        return _lookup(partition, timestamp, replica_id, version)
    except KafkaError as exc:
        return _listed_error(index, exc.code)


def list_offsets(broker: BrokerNode, request: ListOffsetsRequest, version: int,
                 allowed: Callable[[str], bool]) -> ListOffsetsResponse:
    """The answer to one ListOffsets (see the module docstring); ``allowed(topic)``: DESCRIBE on it."""
    named = Counter((t.name, p.partition_index) for t in request.topics for p in t.partitions)
    answered, refused = [], []
    for topic in request.topics:
        if not allowed(topic.name):
            refused.append(ListOffsetsResponse.ListOffsetsTopicResponse(name=topic.name, partitions=[
                _listed_error(p.partition_index, ErrorCode.TOPIC_AUTHORIZATION_FAILED) for p in topic.partitions]))
            continue
        partitions = [_listed_error(p.partition_index, ErrorCode.INVALID_REQUEST)
                      if named[(topic.name, p.partition_index)] > 1
                      else _list_one(broker, topic.name, p, request.replica_id, version) for p in topic.partitions]
        answered.append(ListOffsetsResponse.ListOffsetsTopicResponse(name=topic.name, partitions=partitions))
    return ListOffsetsResponse(topics=answered + refused)


async def _delete_one(broker: BrokerNode, topic_name: str, asked: DeleteRecordsRequest.DeleteRecordsPartition,
                      timeout_s: float) -> Deleted:
    index = asked.partition_index
    try:
        partition = _hosted(broker, topic_name, index)
        wanted = partition.delete_records(asked.offset)
    except KafkaError as exc:
        return Deleted(partition_index=index, low_watermark=-1, error_code=exc.code)
    code = await partition.wait_for_low_watermark(wanted, timeout_s)
    if code == ErrorCode.NOT_LEADER_OR_FOLLOWER:
        return Deleted(partition_index=index, low_watermark=-1, error_code=code)
    return Deleted(partition_index=index, low_watermark=partition.low_watermark, error_code=code)


async def delete_records(broker: BrokerNode, request: DeleteRecordsRequest,
                         allowed: Callable[[str], bool]) -> DeleteRecordsResponse:
    """The answer to one DeleteRecords (see the module docstring); ``allowed(topic)``: DELETE on it."""
    timeout_s = max(request.timeout_ms, 0) / 1000
    topics = []
    for topic in request.topics:
        if not allowed(topic.name):
            results = [Deleted(partition_index=p.partition_index, low_watermark=-1,
                               error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED) for p in topic.partitions]
        else:
            results = list(await asyncio.gather(*(_delete_one(broker, topic.name, p, timeout_s)
                                                  for p in topic.partitions)))
        topics.append(DeleteRecordsResponse.DeleteRecordsTopicResult(name=topic.name, partitions=results))
    return DeleteRecordsResponse(topics=topics)
