"""ConsumerGroupDescribe (69): each KIP-848 consumer group's state, epochs, assignor and members with
their current and target assignments, from its coordinator's shard.

Who: admin clients (Kafka's Admin.describeConsumerGroups, kafka-consumer-groups --describe), which fall
back to DescribeGroups for a group answered GROUP_ID_NOT_FOUND. With group.version below 1 the request
is answered UNSUPPORTED_VERSION in every group, as Kafka's broker does. Each group needs DESCRIBE on it
(GROUP_AUTHORIZATION_FAILED in its own result). A missing group is GROUP_ID_NOT_FOUND "Group G not
found.", a classic one "Group G is not a consumer group."; a group this broker does not coordinate is
NOT_COORDINATOR in its result. AuthorizedOperations stays unset (README, differences).
"""
from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.messages import ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse
from kraftwire.server.metadata.acls import Operation, ResourceType
from kraftwire.server.metadata.record_versions import consumer_protocol_enabled
from kraftwire.server.wire.transport import RequestContext

from .authorization import authorized
from .nodes import BrokerNodeApi

API_KEY = 69
Described = ConsumerGroupDescribeResponse.DescribedGroup


async def on_broker(broker: BrokerNodeApi, context: RequestContext,
                    request: ConsumerGroupDescribeRequest) -> ConsumerGroupDescribeResponse:
    if not consumer_protocol_enabled(broker.image.features):
        return ConsumerGroupDescribeResponse(groups=[Described(group_id=g, error_code=ErrorCode.UNSUPPORTED_VERSION)
                                                     for g in request.group_ids])
    answers = []
    for group_id in request.group_ids:
        if not authorized(broker, context, Operation.DESCRIBE, ResourceType.GROUP, group_id):
            answers.append(Described(group_id=group_id, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED))
            continue
        try:
            answers.append(await broker.group_call(group_id, _describing(broker, group_id)))
        except KafkaError as exc:
            answers.append(Described(group_id=group_id, error_code=exc.code))
    return ConsumerGroupDescribeResponse(groups=answers)


def _describing(broker: BrokerNodeApi, group_id: str) -> Callable[[Any, int], Any]:
    def name_of(topic_id: uuid.UUID) -> str | None:
        topic = broker.image.topics.get(topic_id)
        return None if topic is None else topic.name
    return lambda shard, now: shard.consumer_describe(group_id, name_of)
