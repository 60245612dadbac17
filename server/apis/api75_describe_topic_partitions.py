"""DescribeTopicPartitions (75): topics and their partitions a page at a time (KIP-966), what the Java
Admin's describeTopics and kafka-python's describe_topic_partitions use, from the committed image.

Who: any client, on a broker listener. ``Topics`` empty means every topic. Topics are answered in name
order, starting at the request's ``Cursor`` (its topic from its partition, later topics from 0), and
a response holds at most ``ResponsePartitionLimit`` partitions, capped at 2000 (Kafka's
``max.request.partition.size.limit`` default) and at least 1. When the limit cuts a topic,
``NextCursor`` names the first partition left out; when it is reached at a topic boundary, the next
topic at partition 0; otherwise it is null. A named topic that does not exist gets
UNKNOWN_TOPIC_OR_PARTITION (3), or INVALID_TOPIC_EXCEPTION (17) if its name is illegal, and uses no
part of the limit; in an all-topics listing none are missing. A cursor whose topic is not among the
named topics, or whose partition is negative, fails the request: INVALID_REQUEST (42) for every named
topic, as Kafka's error response has it.

Every partition lists all its replicas and ISR members (unlike Metadata v0, nothing is filtered), the
leader (-1 when its broker is not registered on this listener), and as offline the replicas whose
broker is missing, fenced, not on this listener or whose directory is offline. ``EligibleLeaderReplicas``
and ``LastKnownElr`` are the partition's (KIP-966): kept by the controller where
eligible.leader.replicas.version is on (metadata.version 4.1-IV0 and later), empty otherwise unless
the log came from a Kafka cluster running with them. With no authorizer every topic operation is allowed, so
``TopicAuthorizedOperations`` holds Kafka's full topic bit set.

With an authorizer (server/apis/authorization.py) a topic needs DESCRIBE, as Kafka asks: an
all-topics listing leaves the others out, and a named topic without it gets TOPIC_AUTHORIZATION_FAILED
(29), whether it exists or not, after the page; ``TopicAuthorizedOperations`` holds the operations the
client is allowed on each topic.
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec.constants import NO_LEADER, ZERO_UUID
from collections.abc import Callable

from kraftwire.codec.messages import DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse
from kraftwire.server.controller.topics import invalid_name_reason
from kraftwire.server.metadata.acls import Operation, ResourceType
from kraftwire.server.metadata.image import BrokerState, MetadataImage, PartitionState
from kraftwire.server.wire.transport import RequestContext

from .authorization import authorized
from .nodes import BrokerNodeApi

API_KEY = 75
MAX_PARTITIONS_PER_RESPONSE = 2000  # Kafka's max.request.partition.size.limit default
# AclEntry.supportedOperations(TOPIC) as a bit set: READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7,
# DESCRIBE 8, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11.
TOPIC_OPERATIONS = (3, 4, 5, 6, 7, 8, 10, 11)
ALL_TOPIC_OPERATIONS = sum(1 << code for code in TOPIC_OPERATIONS)
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
Topic = DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponseTopic
Partition = DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponsePartition
Cursor = DescribeTopicPartitionsResponse.Cursor


class _InvalidRequest(Exception):
    pass


def _selected_topics(image: MetadataImage, request: DescribeTopicPartitionsRequest) -> tuple[list[str], bool]:
    """The names to answer, in order (those the client may describe or not), and whether the request
    asked for every topic."""
    cursor = request.cursor
    start = cursor.topic_name if cursor is not None else ""
    fetch_all = not request.topics
    names = set(image.topic_ids) if fetch_all else {topic.name for topic in request.topics}
    names = {name for name in names if name >= start}
    if cursor is not None and not fetch_all and cursor.topic_name not in names:
        raise _InvalidRequest
    if cursor is not None and cursor.partition_index < 0:
        raise _InvalidRequest
    return sorted(names), fetch_all


def _partition(image: MetadataImage, listener: str, index: int, state: PartitionState) -> Partition:
    def on_listener(broker_id: int) -> BrokerState | None:
        broker = image.brokers.get(broker_id)
        return broker if broker is not None and any(e.name == listener for e in broker.endpoints) else None

    offline = [b for b in state.replicas
               if (broker := on_listener(b)) is None or broker.fenced
               or not broker.has_online_dir(state.directory_of(b))]
    return Partition(error_code=ErrorCode.NONE, partition_index=index,
                     leader_id=state.leader if on_listener(state.leader) is not None else NO_LEADER,
                     leader_epoch=state.leader_epoch, replica_nodes=state.replicas, isr_nodes=state.isr,
                     eligible_leader_replicas=state.elr, last_known_elr=state.last_known_elr,
                     offline_replicas=offline)


def _missing(name: str, operations: int = ALL_TOPIC_OPERATIONS) -> Topic:
    code = (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if invalid_name_reason(name) is None
            else ErrorCode.INVALID_TOPIC_EXCEPTION)
    return Topic(error_code=code, name=name, topic_id=ZERO_UUID, is_internal=name in INTERNAL_TOPICS,
                 topic_authorized_operations=operations)


def _anything(operation: int, name: str) -> bool:
    return True


def build_response(image: MetadataImage, request: DescribeTopicPartitionsRequest, listener: str,
                   may: Callable[[int, str], bool] = _anything) -> DescribeTopicPartitionsResponse:
    """The page; ``may(operation, name)`` is the authorizer's verdict on a topic."""
    try:
        names, fetch_all = _selected_topics(image, request)
    except _InvalidRequest:
        return DescribeTopicPartitionsResponse(topics=[Topic(error_code=ErrorCode.INVALID_REQUEST, name=topic.name)
                                                       for topic in request.topics])
    refused = [] if fetch_all else [name for name in names if not may(Operation.DESCRIBE, name)]
    names = [name for name in names if may(Operation.DESCRIBE, name)]

    def operations(name: str) -> int:
        return sum(1 << code for code in TOPIC_OPERATIONS if may(code, name))

    cursor = request.cursor
    remaining = max(min(MAX_PARTITIONS_PER_RESPONSE, request.response_partition_limit), 1)
    topics: list[Topic] = []
    next_cursor: Cursor | None = None
    for name in names:
        if remaining == 0:
            next_cursor = Cursor(topic_name=name, partition_index=0)
            break
        topic = image.topic(name)
        if topic is None:
            if not fetch_all:
                topics.append(_missing(name, operations(name)))
            continue
        first = cursor.partition_index if cursor is not None and name == cursor.topic_name else 0
        end = min(len(topic.partitions), first + remaining)
        partitions = [_partition(image, listener, index, topic.partitions[index])
                      for index in range(first, end) if index in topic.partitions]
        topics.append(Topic(error_code=ErrorCode.NONE, name=name, topic_id=topic.topic_id,
                            is_internal=name in INTERNAL_TOPICS,
                            partitions=partitions, topic_authorized_operations=operations(name)))
        if end < len(topic.partitions):
            next_cursor = Cursor(topic_name=name, partition_index=end)
            break
        remaining -= len(partitions)
    topics += [Topic(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, name=name, topic_id=ZERO_UUID,
                     is_internal=False) for name in refused]
    return DescribeTopicPartitionsResponse(topics=topics, next_cursor=next_cursor)


def on_broker(broker: BrokerNodeApi, context: RequestContext,
              request: DescribeTopicPartitionsRequest) -> DescribeTopicPartitionsResponse:
    if broker.authorizer is None:
        return build_response(broker.image, request, broker.listener_name)
    return build_response(broker.image, request, broker.listener_name, lambda operation, name: authorized(
        broker, context, operation, ResourceType.TOPIC, name))
