"""Request deadlines as Kafka's controller enforces them (ControllerApis, QuorumController, KafkaEventQueue).

Kafka's controller gives CreateTopics, DeleteTopics, CreatePartitions, ElectLeaders and
AlterPartitionReassignments the deadline "when the request arrived + its TimeoutMs" and queues the
operation with it; an operation still queued when its deadline passes is never run: the whole request is
answered REQUEST_TIMED_OUT (7) in its error shape (each topic, partition or election named, no message,
the rest at the schema's defaults) and nothing is written. A TimeoutMs of 0 or below has always passed
by the time the operation would run, so such a request is refused every time. A request with nothing to do
(no topics, an empty election list) is answered at once, without a deadline, as Kafka answers it before
queueing.

The clock is the caller's (``within_deadline`` takes it), so the rest stays pure.
"""
from __future__ import annotations

from collections.abc import Callable

from kraftwire.codec import ErrorCode
from kraftwire.codec.message import Message
from kraftwire.codec.messages import (AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse,
                                      CreatePartitionsRequest, CreatePartitionsResponse, CreateTopicsRequest,
                                      CreateTopicsResponse, DeleteTopicsRequest, DeleteTopicsResponse,
                                      ElectLeadersRequest, ElectLeadersResponse)
from kraftwire.server.metadata.image import MetadataImage

from .result import ControllerResult

TIMED_OUT = ErrorCode.REQUEST_TIMED_OUT
CLUSTER_METADATA_TOPIC = "__cluster_metadata"

DeadlineRequest = (CreateTopicsRequest | DeleteTopicsRequest | CreatePartitionsRequest | ElectLeadersRequest
                   | AlterPartitionReassignmentsRequest)


def deadline_of(timeout_ms: int, arrived: float) -> float:
    """When a request that arrived at ``arrived`` (seconds, the caller's clock) must have started."""
    return arrived + timeout_ms / 1000


def has_work(request: DeadlineRequest) -> bool:
    """Whether Kafka's controller queues the request at all (and so gives it a deadline)."""
    if isinstance(request, CreateTopicsRequest):
        names = [t.name for t in request.topics]
        return any(names.count(name) == 1 and name != CLUSTER_METADATA_TOPIC for name in names)
    if isinstance(request, DeleteTopicsRequest):
        return bool(request.topic_names or request.topics)
    if isinstance(request, CreatePartitionsRequest):
        names = [t.name for t in request.topics]
        return any(names.count(name) == 1 for name in names)
    if isinstance(request, ElectLeadersRequest):
        return request.topic_partitions is None or bool(request.topic_partitions)
    return bool(request.topics)


def timed_out(request: DeadlineRequest, version: int) -> Message:
    """The whole request's REQUEST_TIMED_OUT answer, in the shape Kafka's getErrorResponse gives it."""
    if isinstance(request, CreateTopicsRequest):
        return CreateTopicsResponse(topics=[
            CreateTopicsResponse.CreatableTopicResult(name=t.name, error_code=TIMED_OUT, error_message=None)
            for t in request.topics])
    if isinstance(request, DeleteTopicsRequest):
        Result = DeleteTopicsResponse.DeletableTopicResult
        if version < 6:
            return DeleteTopicsResponse(responses=[Result(name=name, error_code=TIMED_OUT)
                                                   for name in request.topic_names])
        return DeleteTopicsResponse(responses=[Result(name=t.name, topic_id=t.topic_id, error_code=TIMED_OUT)
                                               for t in request.topics])
    if isinstance(request, CreatePartitionsRequest):
        return CreatePartitionsResponse(results=[
            CreatePartitionsResponse.CreatePartitionsTopicResult(name=t.name, error_code=TIMED_OUT, error_message=None)
            for t in request.topics])
    if isinstance(request, ElectLeadersRequest):
        Election = ElectLeadersResponse.ReplicaElectionResult
        # the request-wide code is v1+ (Kafka's ElectLeadersResponse sets it only there)
        return ElectLeadersResponse(error_code=TIMED_OUT if version >= 1 else 0, replica_election_results=[
            Election(topic=t.topic, partition_result=[
                ElectLeadersResponse.PartitionResult(partition_id=p, error_code=TIMED_OUT, error_message=None)
                for p in t.partitions])
            for t in request.topic_partitions or ()])
    Topic = AlterPartitionReassignmentsResponse.ReassignableTopicResponse
    return AlterPartitionReassignmentsResponse(error_code=TIMED_OUT, error_message=None, responses=[
        Topic(name=t.name, partitions=[
            AlterPartitionReassignmentsResponse.ReassignablePartitionResponse(
                partition_index=p.partition_index, error_code=TIMED_OUT, error_message=None)
            for p in t.partitions])
        for t in request.topics])


def within_deadline(decide: Callable[[MetadataImage], ControllerResult], request: DeadlineRequest, version: int,
                    deadline: float, clock: Callable[[], float]) -> Callable[[MetadataImage], ControllerResult]:
    """``decide``, run only if it starts before ``deadline`` by ``clock``; else nothing written and the
    request answered REQUEST_TIMED_OUT. A request with nothing to do is decided as it is."""
    if not has_work(request):
        return decide

    def decide_in_time(image: MetadataImage) -> ControllerResult:
        if clock() >= deadline:
            return ControllerResult([], timed_out(request, version))
        return decide(image)
    return decide_in_time
