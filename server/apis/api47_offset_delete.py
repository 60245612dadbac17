"""OffsetDelete (47): a group's committed offsets of some partitions go (tombstones).

Who: admin clients, on the group's coordinator. Needs DELETE on the group (GROUP_AUTHORIZATION_FAILED at
the top) and READ on each topic (TOPIC_AUTHORIZATION_FAILED per partition); a topic or partition the
metadata does not hold is UNKNOWN_TOPIC_OR_PARTITION, as KafkaApis checks. The rest is the shard's
(server/groups/admin.py): GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, GROUP_SUBSCRIBED_TO_TOPIC.
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.messages import OffsetDeleteRequest, OffsetDeleteResponse
from kraftwire.server.metadata.acls import Operation, ResourceType
from kraftwire.server.wire.transport import RequestContext

from .authorization import authorized
from .nodes import BrokerNodeApi

API_KEY = 47
Topic, Partition = OffsetDeleteResponse.OffsetDeleteResponseTopic, OffsetDeleteResponse.OffsetDeleteResponsePartition


async def on_broker(broker: BrokerNodeApi, context: RequestContext,
                    request: OffsetDeleteRequest) -> OffsetDeleteResponse:
    if not authorized(broker, context, Operation.DELETE, ResourceType.GROUP, request.group_id):
        return OffsetDeleteResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    refused: dict[str, list[OffsetDeleteResponse.OffsetDeleteResponsePartition]] = {}
    valid: list[tuple[str, list[int]]] = []
    for topic in request.topics:
        indexes = [p.partition_index for p in topic.partitions]
        state = broker.image.topic(topic.name)
        if not authorized(broker, context, Operation.READ, ResourceType.TOPIC, topic.name):
            refused[topic.name] = [Partition(partition_index=i, error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                                   for i in indexes]
        elif state is None:
            refused[topic.name] = [Partition(partition_index=i, error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
                                   for i in indexes]
        else:
            missing = [i for i in indexes if i not in state.partitions]
            if missing:
                refused[topic.name] = [Partition(partition_index=i, error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
                                       for i in missing]
            if len(missing) < len(indexes):
                valid.append((topic.name, [i for i in indexes if i in state.partitions]))
    try:
        answer: OffsetDeleteResponse = await broker.group_call(
            request.group_id, lambda shard, now: shard.delete_offsets(request.group_id, valid), named=True)
    except KafkaError as exc:
        return OffsetDeleteResponse(error_code=exc.code)
    if answer.error_code:
        return answer
    topics = [Topic(name=name, partitions=parts) for name, parts in refused.items()] + list(answer.topics)
    return answer.replace(topics=topics)
