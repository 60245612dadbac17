"""ConsumerGroupHeartbeat (68): a member of a KIP-848 consumer group joins (epoch 0), heartbeats, is
handed its assignment, and leaves (epoch -1, or -2 for a static member).

Who: Kafka 4's consumers with group.protocol=consumer, on the group's coordinator. With group.version
below 1 the whole request is answered UNSUPPORTED_VERSION, as Kafka's broker does. Needs READ on the
group (GROUP_AUTHORIZATION_FAILED) and DESCRIBE on every subscribed topic named
(TOPIC_AUTHORIZATION_FAILED), as KafkaApis checks. A v0 join with no member id is given one by the
coordinator; from v1 the member names itself (KIP-1082). The rules are the shard's (server/groups/consumer.py);
NOT_COORDINATOR off the coordinator.
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse
from kraftwire.server.metadata.acls import Operation, ResourceType
from kraftwire.server.metadata.record_versions import consumer_protocol_enabled
from kraftwire.server.wire.transport import RequestContext

from .authorization import authorized
from .group_errors import answer_or
from .nodes import BrokerNodeApi

API_KEY = 68


def _refused(code: int) -> ConsumerGroupHeartbeatResponse:
    return ConsumerGroupHeartbeatResponse(error_code=code)


async def on_broker(broker: BrokerNodeApi, context: RequestContext,
                    request: ConsumerGroupHeartbeatRequest) -> ConsumerGroupHeartbeatResponse:
    image = broker.image
    if not consumer_protocol_enabled(image.features):
        return _refused(ErrorCode.UNSUPPORTED_VERSION)
    if not authorized(broker, context, Operation.READ, ResourceType.GROUP, request.group_id):
        return _refused(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if any(not authorized(broker, context, Operation.DESCRIBE, ResourceType.TOPIC, name)
           for name in set(request.subscribed_topic_names or ())):
        return _refused(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    client_id, version = context.client_id or "", context.api_version
    host = f"/{context.peer[0]}" if context.peer else ""

    def topics(name: str) -> tuple[object, int] | None:
        topic = broker.image.topic(name)
        return None if topic is None else (topic.topic_id, len(topic.partitions))
    answer: ConsumerGroupHeartbeatResponse = await answer_or(
        broker.group_call(request.group_id,
                          lambda shard, now: shard.consumer_heartbeat(request, version, client_id, host, topics, now)),
        _refused)
    return answer
