"""The Raft core's messages on Kafka's wire: Vote (52), BeginQuorumEpoch (53), EndQuorumEpoch (54) and
Fetch (1) for ``__cluster_metadata-0``, in both directions.

``to_request``/``from_response`` serve the sending side (a core request becomes a wire request; the
wire answer becomes the core response, with the core's correlation id, so the core matches it to what
it sent); ``from_request``/``to_response`` serve the answering side. Record batches travel as they lie
in the log: the driver hands in ``encode_records(entries)`` and ``decode_records(bytes)``.

Requests always go at the newest version kraftwire speaks (Fetch 17, Vote 2, the others 1): the peers
are kraftwire controllers. A request naming another topic or partition, or another cluster, is
answered as Kafka answers it (UNKNOWN_TOPIC_OR_PARTITION, INCONSISTENT_CLUSTER_ID) without reaching the
core.
"""
from __future__ import annotations

import uuid

from kraftwire.codec import ErrorCode
from kraftwire.codec.log_layout import METADATA_PARTITION, METADATA_TOPIC, METADATA_TOPIC_ID
from kraftwire.codec.messages import (BeginQuorumEpochRequest, BeginQuorumEpochResponse, EndQuorumEpochRequest,
                                      EndQuorumEpochResponse, FetchRequest, FetchResponse, VoteRequest, VoteResponse)

from . import core

VERSIONS = {FetchRequest: 17, VoteRequest: 2, BeginQuorumEpochRequest: 1, EndQuorumEpochRequest: 1}
NO_EPOCH_END = (-1, -1)


class Refused(Exception):
    """A request the core must not see; ``response`` is the answer."""

    def __init__(self, response):
        super().__init__("refused")
        self.response = response


# --- the sending side ------------------------------------------------------------------------------

def to_request(message: core.Message, cluster_id: str):
    """(wire request, version) for a core request."""
    if isinstance(message, core.VoteRequest):
        partition = VoteRequest.PartitionData(
            partition_index=METADATA_PARTITION, replica_epoch=message.replica_epoch, replica_id=message.replica_id,
            last_offset_epoch=message.last_offset_epoch, last_offset=message.last_offset, pre_vote=message.pre_vote)
        request = VoteRequest(cluster_id=cluster_id, voter_id=message.dst, topics=[
            VoteRequest.TopicData(topic_name=METADATA_TOPIC, partitions=[partition])])
    elif isinstance(message, core.BeginQuorumEpochRequest):
        partition = BeginQuorumEpochRequest.PartitionData(
            partition_index=METADATA_PARTITION, leader_id=message.leader_id, leader_epoch=message.leader_epoch)
        request = BeginQuorumEpochRequest(cluster_id=cluster_id, voter_id=message.dst, topics=[
            BeginQuorumEpochRequest.TopicData(topic_name=METADATA_TOPIC, partitions=[partition])])
    elif isinstance(message, core.EndQuorumEpochRequest):
        partition = EndQuorumEpochRequest.PartitionData(
            partition_index=METADATA_PARTITION, leader_id=message.leader_id, leader_epoch=message.leader_epoch,
            preferred_candidates=[EndQuorumEpochRequest.ReplicaInfo(candidate_id=c)
                                  for c in message.preferred_successors])
        request = EndQuorumEpochRequest(cluster_id=cluster_id, topics=[
            EndQuorumEpochRequest.TopicData(topic_name=METADATA_TOPIC, partitions=[partition])])
    elif isinstance(message, core.FetchRequest):
        partition = FetchRequest.FetchPartition(
            partition=METADATA_PARTITION, current_leader_epoch=message.current_leader_epoch,
            fetch_offset=message.fetch_offset, last_fetched_epoch=message.last_fetched_epoch,
            partition_max_bytes=1 << 20)
        request = FetchRequest(cluster_id=cluster_id, replica_state=FetchRequest.ReplicaState(
            replica_id=message.replica_id), max_wait_ms=message.max_wait_ms, min_bytes=0,
            topics=[FetchRequest.FetchTopic(topic_id=METADATA_TOPIC_ID, partitions=[partition])])
    else:
        raise TypeError(f"not a request: {message!r}")
    return request, VERSIONS[type(request)]


def _only_partition(response):
    topics = response.topics if hasattr(response, "topics") else response.responses
    if len(topics) != 1 or len(topics[0].partitions) != 1:
        return None
    return topics[0].partitions[0]


def from_response(request: core.Message, response, decode_records=None) -> core.Message | None:
    """The core response answering ``request``; None when the answer says nothing the core can use."""
    envelope = {"src": request.dst, "dst": request.src, "correlation_id": request.correlation_id}
    partition = _only_partition(response)
    if partition is None:
        return None
    if isinstance(request, core.VoteRequest):
        error = response.error_code or partition.error_code
        return core.VoteResponse(**envelope, error_code=error, leader_id=partition.leader_id,
                                 leader_epoch=partition.leader_epoch, vote_granted=partition.vote_granted and not error)
    if isinstance(request, core.BeginQuorumEpochRequest):
        return core.BeginQuorumEpochResponse(**envelope, error_code=response.error_code or partition.error_code,
                                             leader_id=partition.leader_id, leader_epoch=partition.leader_epoch)
    if isinstance(request, core.EndQuorumEpochRequest):
        return core.EndQuorumEpochResponse(**envelope, error_code=response.error_code or partition.error_code,
                                           leader_id=partition.leader_id, leader_epoch=partition.leader_epoch)
    diverging = partition.diverging_epoch
    leader = partition.current_leader
    records = decode_records(partition.records or b"") if partition.error_code == ErrorCode.NONE else ()
    return core.FetchResponse(
        **envelope, error_code=response.error_code or partition.error_code, high_watermark=partition.high_watermark,
        base_offset=request.fetch_offset, records=tuple(records),
        diverging_epoch=None if diverging.epoch < 0 else (diverging.epoch, diverging.end_offset),
        current_leader=(leader.leader_id, leader.leader_epoch))


# --- the answering side ----------------------------------------------------------------------------

def _names_metadata(topic_name: str | None, topic_id, partitions: list) -> bool:
    named = topic_name == METADATA_TOPIC or topic_id == METADATA_TOPIC_ID
    return named and len(partitions) == 1


def from_request(request, version: int, cluster_id: str, correlation_id: int) -> core.Message:
    """The core request for a wire request; Refused(answer) when it must not reach the core."""
    if request.cluster_id is not None and request.cluster_id != cluster_id:
        raise Refused(_refusal(request, version, ErrorCode.INCONSISTENT_CLUSTER_ID))
    if isinstance(request, FetchRequest):
        topics = request.topics
        if len(topics) != 1 or not _names_metadata(topics[0].topic if version <= 12 else None,
                                                   topics[0].topic_id if version >= 13 else None,
                                                   topics[0].partitions) \
                or topics[0].partitions[0].partition != METADATA_PARTITION:
            raise Refused(_refusal(request, version, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
        p = topics[0].partitions[0]
        replica_id = request.replica_state.replica_id if version >= 15 else request.replica_id
        return core.FetchRequest(src=replica_id, dst=-1, correlation_id=correlation_id, replica_id=replica_id,
                                 current_leader_epoch=p.current_leader_epoch, fetch_offset=p.fetch_offset,
                                 last_fetched_epoch=max(p.last_fetched_epoch, 0) if p.fetch_offset == 0
                                 else p.last_fetched_epoch, max_wait_ms=request.max_wait_ms)
    topics = request.topics
    if (len(topics) != 1 or not _names_metadata(topics[0].topic_name, None, topics[0].partitions)
            or topics[0].partitions[0].partition_index != METADATA_PARTITION):
        raise Refused(_refusal(request, version, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
    p = topics[0].partitions[0]
    if isinstance(request, VoteRequest):
        return core.VoteRequest(src=p.replica_id, dst=-1, correlation_id=correlation_id, replica_epoch=p.replica_epoch,
                                replica_id=p.replica_id, last_offset_epoch=p.last_offset_epoch,
                                last_offset=p.last_offset, pre_vote=version >= 2 and p.pre_vote)
    if isinstance(request, BeginQuorumEpochRequest):
        return core.BeginQuorumEpochRequest(src=p.leader_id, dst=-1, correlation_id=correlation_id,
                                            leader_id=p.leader_id, leader_epoch=p.leader_epoch)
    successors = (tuple(p.preferred_successors) if version == 0
                  else tuple(c.candidate_id for c in p.preferred_candidates))
    return core.EndQuorumEpochRequest(src=p.leader_id, dst=-1, correlation_id=correlation_id, leader_id=p.leader_id,
                                      leader_epoch=p.leader_epoch, preferred_successors=successors)


def to_response(message: core.Message, version: int, encode_records=None, log_start_offset: int = 0):
    """The wire answer for the core's reply."""
    if isinstance(message, core.FetchResponse):
        diverging = message.diverging_epoch or NO_EPOCH_END
        partition = FetchResponse.PartitionData(
            partition_index=METADATA_PARTITION, error_code=message.error_code, high_watermark=message.high_watermark,
            log_start_offset=log_start_offset,
            diverging_epoch=FetchResponse.EpochEndOffset(epoch=diverging[0], end_offset=diverging[1]),
            current_leader=FetchResponse.LeaderIdAndEpoch(leader_id=message.current_leader[0],
                                                          leader_epoch=message.current_leader[1]),
            records=encode_records(message.base_offset, message.records) if message.records else b"")
        topic = (FetchResponse.FetchableTopicResponse(topic=METADATA_TOPIC, partitions=[partition]) if version <= 12
                 else FetchResponse.FetchableTopicResponse(topic_id=METADATA_TOPIC_ID, partitions=[partition]))
        return FetchResponse(error_code=ErrorCode.NONE, responses=[topic])
    kind = {core.VoteResponse: VoteResponse, core.BeginQuorumEpochResponse: BeginQuorumEpochResponse,
            core.EndQuorumEpochResponse: EndQuorumEpochResponse}[type(message)]
    fields = {"partition_index": METADATA_PARTITION, "error_code": message.error_code,
              "leader_id": message.leader_id, "leader_epoch": message.leader_epoch}
    if kind is VoteResponse:
        fields["vote_granted"] = message.vote_granted
    return kind(error_code=ErrorCode.NONE, topics=[kind.TopicData(topic_name=METADATA_TOPIC, partitions=[
        kind.PartitionData(**fields)])])


def _refusal(request, version: int, error: ErrorCode):
    """The answer for a request that names the wrong topic, partition or cluster: the error at the top
    for a cluster mismatch, on every partition named otherwise."""
    if isinstance(request, FetchRequest):
        if error is ErrorCode.INCONSISTENT_CLUSTER_ID:
            return FetchResponse(error_code=error, responses=[])
        return FetchResponse(error_code=ErrorCode.NONE, responses=[
            FetchResponse.FetchableTopicResponse(topic=t.topic if version <= 12 else "",
                                                 topic_id=t.topic_id if version >= 13 else uuid.UUID(int=0),
                                                 partitions=[FetchResponse.PartitionData(
                                                     partition_index=p.partition, error_code=error, high_watermark=-1)
                                                     for p in t.partitions])
            for t in request.topics])
    kind = {VoteRequest: VoteResponse, BeginQuorumEpochRequest: BeginQuorumEpochResponse,
            EndQuorumEpochRequest: EndQuorumEpochResponse}[type(request)]
    if error is ErrorCode.INCONSISTENT_CLUSTER_ID:
        return kind(error_code=error, topics=[])
    return kind(error_code=ErrorCode.NONE, topics=[
        kind.TopicData(topic_name=t.topic_name, partitions=[
            kind.PartitionData(partition_index=p.partition_index, error_code=error, leader_id=-1, leader_epoch=-1)
            for p in t.partitions]) for t in request.topics])
