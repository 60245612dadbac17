"""The Raft core's messages on Kafka's wire: Vote (52), BeginQuorumEpoch (53), EndQuorumEpoch (54),
Fetch (1) and FetchSnapshot (59) for ``__cluster_metadata-0``, in both directions, and the voter changes
of KIP-853: AddRaftVoter (80), RemoveRaftVoter (81) and UpdateRaftVoter (82), which name no topic.

``to_request``/``from_response`` serve the sending side (a core request becomes a wire request; the
wire answer becomes the core response, with the core's correlation id, so the core matches it to what
it sent); ``from_request``/``to_response`` serve the answering side. Record batches travel as they lie
in the log: the driver hands in ``encode_records(entries)`` and ``decode_records(bytes)``, and
``read_snapshot(chunk)`` for the snapshot bytes a FetchSnapshot answer names.

Requests always go at the newest version kraftwire speaks (Fetch 17, Vote 2, FetchSnapshot 0,
UpdateRaftVoter 0, the others 1): the peers are kraftwire controllers. Directory ids are
``voters.NO_DIRECTORY`` in the core and Kafka's zero uuid on the wire. A request naming another topic or
partition, or another cluster, is
answered as Kafka answers it (UNKNOWN_TOPIC_OR_PARTITION, INCONSISTENT_CLUSTER_ID) without reaching the
core.
"""
from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from kraftwire.codec import ErrorCode
from kraftwire.codec.constants import ZERO_UUID
from kraftwire.codec.log_layout import METADATA_PARTITION, METADATA_TOPIC, METADATA_TOPIC_ID
from kraftwire.codec.messages import (AddRaftVoterRequest, AddRaftVoterResponse, BeginQuorumEpochRequest,
                                      BeginQuorumEpochResponse, EndQuorumEpochRequest, EndQuorumEpochResponse,
                                      FetchRequest, FetchResponse, FetchSnapshotRequest, FetchSnapshotResponse,
                                      RemoveRaftVoterRequest, RemoveRaftVoterResponse, UpdateRaftVoterRequest,
                                      UpdateRaftVoterResponse, VoteRequest, VoteResponse)

from . import core
from .voters import NO_DIRECTORY, DirectoryId

# The generated wire classes are told apart by isinstance; a parameter that takes any of them, or any of
# their nested structs, is ``Any`` (``WireMessage`` where it is a whole message).
WireMessage = Any
Listeners = tuple[tuple[str, str, int], ...]

VERSIONS = {FetchRequest: 17, VoteRequest: 2, BeginQuorumEpochRequest: 1, EndQuorumEpochRequest: 1,
            FetchSnapshotRequest: 0, UpdateRaftVoterRequest: 0}
NO_EPOCH_END = (-1, -1)
VOTER_CHANGES = (AddRaftVoterRequest, RemoveRaftVoterRequest, UpdateRaftVoterRequest)


def _directory(wire_uuid: uuid.UUID | None) -> DirectoryId:
    return NO_DIRECTORY if wire_uuid is None or wire_uuid == ZERO_UUID else wire_uuid


def _wire_directory(directory: DirectoryId) -> uuid.UUID:
    return ZERO_UUID if directory is NO_DIRECTORY else directory


class Refused(Exception):
    """A request the core must not see; ``response`` is the answer."""

    def __init__(self, response: WireMessage):
        super().__init__("refused")
        self.response = response


# --- the sending side ------------------------------------------------------------------------------

def to_request(message: core.Message, cluster_id: str) -> tuple[WireMessage, int]:
    """(wire request, version) for a core request."""
    partition: Any
    request: WireMessage
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
            partition_max_bytes=1 << 20, replica_directory_id=_wire_directory(message.replica_directory_id))
        request = FetchRequest(cluster_id=cluster_id, replica_state=FetchRequest.ReplicaState(
            replica_id=message.replica_id), max_wait_ms=message.max_wait_ms, min_bytes=0,
            topics=[FetchRequest.FetchTopic(topic_id=METADATA_TOPIC_ID, partitions=[partition])])
    elif isinstance(message, core.FetchSnapshotRequest):
        partition = FetchSnapshotRequest.PartitionSnapshot(
            partition=METADATA_PARTITION, current_leader_epoch=message.current_leader_epoch,
            snapshot_id=FetchSnapshotRequest.SnapshotId(end_offset=message.snapshot_id.end_offset,
                                                        epoch=message.snapshot_id.epoch),
            position=message.position)
        request = FetchSnapshotRequest(cluster_id=cluster_id, replica_id=message.replica_id,
                                       max_bytes=message.max_bytes, topics=[FetchSnapshotRequest.TopicSnapshot(
                                           name=METADATA_TOPIC, partitions=[partition])])
    elif isinstance(message, core.UpdateRaftVoterRequest):
        low, high = message.kraft_versions
        request = UpdateRaftVoterRequest(
            cluster_id=cluster_id, current_leader_epoch=message.current_leader_epoch, voter_id=message.voter_id,
            voter_directory_id=_wire_directory(message.voter_directory_id),
            listeners=_wire_listeners(UpdateRaftVoterRequest, message.listeners),
            k_raft_version_feature=UpdateRaftVoterRequest.KRaftVersionFeature(min_supported_version=low,
                                                                              max_supported_version=high))
    else:
        raise TypeError(f"not a request: {message!r}")
    return request, VERSIONS[type(request)]


def _only_partition(response: WireMessage) -> Any:
    topics = response.topics if hasattr(response, "topics") else response.responses
    if len(topics) != 1 or len(topics[0].partitions) != 1:
        return None
    return topics[0].partitions[0]


def node_endpoints(response: WireMessage) -> dict[int, tuple[str, int]]:
    """The leaders' addresses an answer names (NodeEndpoints, KIP-853, which the controller's Fetch handler
    adds: server/apis/api01_fetch.py), by node id."""
    return {e.node_id: (e.host, e.port) for e in getattr(response, "node_endpoints", None) or ()}


def _wire_listeners(kind: Any, listeners: Listeners) -> list[Any]:
    return [kind.Listener(name=name, host=host, port=port) for name, host, port in listeners]


def from_response(request: core.Message, response: WireMessage,
                  decode_records: Callable[[bytes], list[core.Entry]] | None = None) -> core.Message | None:
    """The core response answering ``request``; None when the answer says nothing the core can use."""
    envelope = {"src": request.dst, "dst": request.src, "correlation_id": request.correlation_id}
    if isinstance(request, core.UpdateRaftVoterRequest):
        leader = response.current_leader
        return core.UpdateRaftVoterResponse(**envelope, error_code=response.error_code,
                                            current_leader=(leader.leader_id, leader.leader_epoch))
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
    leader = partition.current_leader
    if isinstance(request, core.FetchSnapshotRequest):
        return core.FetchSnapshotResponse(
            **envelope, error_code=response.error_code or partition.error_code,
            snapshot_id=core.SnapshotId(partition.snapshot_id.end_offset, partition.snapshot_id.epoch),
            size=partition.size, position=partition.position, unaligned_records=bytes(partition.unaligned_records),
            current_leader=(leader.leader_id, leader.leader_epoch))
    assert isinstance(request, core.FetchRequest) and decode_records is not None  # the core's one other request
    diverging, snapshot = partition.diverging_epoch, partition.snapshot_id
    records = decode_records(partition.records or b"") if partition.error_code == ErrorCode.NONE else ()
    return core.FetchResponse(
        **envelope, error_code=response.error_code or partition.error_code, high_watermark=partition.high_watermark,
        base_offset=request.fetch_offset, records=tuple(records),
        diverging_epoch=None if diverging.epoch < 0 else (diverging.epoch, diverging.end_offset),
        current_leader=(leader.leader_id, leader.leader_epoch),
        snapshot_id=None if snapshot.end_offset < 0 else core.SnapshotId(snapshot.end_offset, snapshot.epoch))


# --- the answering side ----------------------------------------------------------------------------

def _names_metadata(topic_name: str | None, topic_id: uuid.UUID | None, partitions: Sequence[object]) -> bool:
    named = topic_name == METADATA_TOPIC or topic_id == METADATA_TOPIC_ID
    return named and len(partitions) == 1


def from_request(request: WireMessage, version: int, cluster_id: str, correlation_id: int) -> core.Message:
    """The core request for a wire request; Refused(answer) when it must not reach the core."""
    if request.cluster_id is not None and request.cluster_id != cluster_id:
        raise Refused(_refusal(request, version, ErrorCode.INCONSISTENT_CLUSTER_ID))
    if isinstance(request, VOTER_CHANGES):
        return _voter_change(request, version, correlation_id)
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
                                 else p.last_fetched_epoch, max_wait_ms=request.max_wait_ms,
                                 replica_directory_id=_directory(p.replica_directory_id) if version >= 17
                                 else NO_DIRECTORY)
    topics = request.topics
    if isinstance(request, FetchSnapshotRequest):
        if (len(topics) != 1 or not _names_metadata(topics[0].name, None, topics[0].partitions)
                or topics[0].partitions[0].partition != METADATA_PARTITION):
            raise Refused(_refusal(request, version, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
        p = topics[0].partitions[0]
        return core.FetchSnapshotRequest(
            src=request.replica_id, dst=-1, correlation_id=correlation_id, replica_id=request.replica_id,
            current_leader_epoch=p.current_leader_epoch,
            snapshot_id=core.SnapshotId(p.snapshot_id.end_offset, p.snapshot_id.epoch), position=p.position,
            max_bytes=request.max_bytes)
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


def _voter_change(request: WireMessage, version: int, correlation_id: int) -> core.Message:
    """AddRaftVoter, RemoveRaftVoter or UpdateRaftVoter as the core's request; the sender is unknown (-1):
    an admin client or a broker forwarding one, or the voter itself."""
    envelope: dict[str, Any] = {"src": -1, "dst": -1, "correlation_id": correlation_id, "voter_id": request.voter_id,
                "voter_directory_id": _directory(request.voter_directory_id)}
    if isinstance(request, RemoveRaftVoterRequest):
        return core.RemoveRaftVoterRequest(**envelope)
    listeners = tuple((listener.name, listener.host, listener.port) for listener in request.listeners)
    if isinstance(request, AddRaftVoterRequest):
        return core.AddRaftVoterRequest(**envelope, timeout_ms=request.timeout_ms, listeners=listeners,
                                        ack_when_committed=version < 1 or request.ack_when_committed)
    feature = request.k_raft_version_feature
    return core.UpdateRaftVoterRequest(**envelope, current_leader_epoch=request.current_leader_epoch,
                                       listeners=listeners,
                                       kraft_versions=(feature.min_supported_version, feature.max_supported_version))


def to_response(message: core.Message, version: int,
                encode_records: Callable[[int, tuple[core.Entry, ...]], bytes] | None = None, log_start_offset: int = 0,
                read_snapshot: Callable[[core.SnapshotChunk], bytes] | None = None,
                leader_endpoint: tuple[str, int] = ("", -1)) -> WireMessage:
    """The wire answer for the core's reply; ``leader_endpoint`` is the leader's controller listener, which
    UpdateRaftVoter's answer names."""
    partition: Any
    if isinstance(message, core.FetchSnapshotResponse):
        chunk = message.unaligned_records
        if isinstance(chunk, core.SnapshotChunk):
            assert read_snapshot is not None  # the driver hands it in with every FetchSnapshot answer
            chunk = read_snapshot(chunk)
        partition = FetchSnapshotResponse.PartitionSnapshot(
            index=METADATA_PARTITION, error_code=message.error_code,
            snapshot_id=FetchSnapshotResponse.SnapshotId(end_offset=message.snapshot_id.end_offset,
                                                         epoch=message.snapshot_id.epoch),
            current_leader=FetchSnapshotResponse.LeaderIdAndEpoch(leader_id=message.current_leader[0],
                                                                  leader_epoch=message.current_leader[1]),
            size=message.size, position=message.position,
            unaligned_records=chunk)
        return FetchSnapshotResponse(error_code=ErrorCode.NONE, topics=[
            FetchSnapshotResponse.TopicSnapshot(name=METADATA_TOPIC, partitions=[partition])])
    if isinstance(message, core.AddRaftVoterResponse):
        return AddRaftVoterResponse(error_code=message.error_code, error_message=message.error_message)
    if isinstance(message, core.RemoveRaftVoterResponse):
        return RemoveRaftVoterResponse(error_code=message.error_code, error_message=message.error_message)
    if isinstance(message, core.UpdateRaftVoterResponse):
        leader = UpdateRaftVoterResponse.CurrentLeader(
            leader_id=message.current_leader[0], leader_epoch=message.current_leader[1], host=leader_endpoint[0],
            port=leader_endpoint[1])
        return UpdateRaftVoterResponse(error_code=message.error_code, current_leader=leader)
    if isinstance(message, core.FetchResponse):
        diverging = message.diverging_epoch or NO_EPOCH_END
        assert encode_records is not None or not message.records  # the driver hands it in with every Fetch answer
        partition = FetchResponse.PartitionData(
            partition_index=METADATA_PARTITION, error_code=message.error_code, high_watermark=message.high_watermark,
            log_start_offset=log_start_offset,
            diverging_epoch=FetchResponse.EpochEndOffset(epoch=diverging[0], end_offset=diverging[1]),
            current_leader=FetchResponse.LeaderIdAndEpoch(leader_id=message.current_leader[0],
                                                          leader_epoch=message.current_leader[1]),
            records=encode_records(message.base_offset, message.records) if encode_records and message.records
            else b"")
        if message.snapshot_id is not None:
            partition = partition.replace(snapshot_id=FetchResponse.SnapshotId(
                end_offset=message.snapshot_id.end_offset, epoch=message.snapshot_id.epoch))
        topic = (FetchResponse.FetchableTopicResponse(topic=METADATA_TOPIC, partitions=[partition]) if version <= 12
                 else FetchResponse.FetchableTopicResponse(topic_id=METADATA_TOPIC_ID, partitions=[partition]))
        return FetchResponse(error_code=ErrorCode.NONE, responses=[topic])
    kind: Any = {core.VoteResponse: VoteResponse, core.BeginQuorumEpochResponse: BeginQuorumEpochResponse,
                 core.EndQuorumEpochResponse: EndQuorumEpochResponse}[type(message)]
    assert isinstance(message, (core.VoteResponse, core.BeginQuorumEpochResponse, core.EndQuorumEpochResponse))
    fields = {"partition_index": METADATA_PARTITION, "error_code": message.error_code,
              "leader_id": message.leader_id, "leader_epoch": message.leader_epoch}
    if isinstance(message, core.VoteResponse):
        fields["vote_granted"] = message.vote_granted
    return kind(error_code=ErrorCode.NONE, topics=[kind.TopicData(topic_name=METADATA_TOPIC, partitions=[
        kind.PartitionData(**fields)])])


def _refusal(request: WireMessage, version: int, error: ErrorCode) -> WireMessage:
    """The answer for a request that names the wrong topic, partition or cluster: the error at the top
    for a cluster mismatch, on every partition named otherwise."""
    if isinstance(request, UpdateRaftVoterRequest):
        return UpdateRaftVoterResponse(error_code=error)
    if isinstance(request, VOTER_CHANGES):
        answer: Any = AddRaftVoterResponse if isinstance(request, AddRaftVoterRequest) else RemoveRaftVoterResponse
        return answer(error_code=error, error_message=error.message)
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
    if isinstance(request, FetchSnapshotRequest):
        if error is ErrorCode.INCONSISTENT_CLUSTER_ID:
            return FetchSnapshotResponse(error_code=error, topics=[])
        return FetchSnapshotResponse(error_code=ErrorCode.NONE, topics=[
            FetchSnapshotResponse.TopicSnapshot(name=t.name, partitions=[FetchSnapshotResponse.PartitionSnapshot(
                index=p.partition, error_code=error, snapshot_id=FetchSnapshotResponse.SnapshotId(
                    end_offset=p.snapshot_id.end_offset, epoch=p.snapshot_id.epoch), unaligned_records=b"")
                for p in t.partitions]) for t in request.topics])
    kind: Any = {VoteRequest: VoteResponse, BeginQuorumEpochRequest: BeginQuorumEpochResponse,
                 EndQuorumEpochRequest: EndQuorumEpochResponse}[type(request)]
    if error is ErrorCode.INCONSISTENT_CLUSTER_ID:
        return kind(error_code=error, topics=[])
    return kind(error_code=ErrorCode.NONE, topics=[
        kind.TopicData(topic_name=t.topic_name, partitions=[
            kind.PartitionData(partition_index=p.partition_index, error_code=error, leader_id=-1, leader_epoch=-1)
            for p in t.partitions]) for t in request.topics])
