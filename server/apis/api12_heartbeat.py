"""Heartbeat (12): a member keeps its session and learns of a rebalance (REBALANCE_IN_PROGRESS).

Who: group consumers, on the group's coordinator. Needs READ on the group. Rules (server/groups/shard.py):
UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, ILLEGAL_GENERATION; NOT_COORDINATOR off the coordinator.
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import HeartbeatRequest, HeartbeatResponse
from kraftwire.server.metadata.acls import Operation, ResourceType
from kraftwire.server.wire.transport import RequestContext

from .authorization import authorized
from .group_errors import answer_or
from .nodes import BrokerNodeApi

API_KEY = 12


async def on_broker(broker: BrokerNodeApi, context: RequestContext, request: HeartbeatRequest) -> HeartbeatResponse:
    if not authorized(broker, context, Operation.READ, ResourceType.GROUP, request.group_id):
        return HeartbeatResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    answer: HeartbeatResponse = await answer_or(
        broker.group_call(request.group_id, lambda shard, now: shard.heartbeat(request, now), named=True),
        lambda code: HeartbeatResponse(error_code=code))
    return answer
