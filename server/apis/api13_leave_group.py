"""LeaveGroup (13): members leave a classic group, which rebalances without them.

Who: group consumers (one member, v0-2) and admin clients (several, by member or instance id, v3+), on
the group's coordinator. Needs READ on the group. Per member (v3+): UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID
(server/groups/shard.py); a group that does not exist is UNKNOWN_MEMBER_ID for each member (v0-2: at
the top); an empty group id is INVALID_GROUP_ID on any broker.
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import LeaveGroupRequest, LeaveGroupResponse
from kraftwire.server.metadata.acls import Operation, ResourceType
from kraftwire.server.wire.transport import RequestContext

from .authorization import authorized
from .group_errors import answer_or
from .nodes import BrokerNodeApi

API_KEY = 13


async def on_broker(broker: BrokerNodeApi, context: RequestContext, request: LeaveGroupRequest) -> LeaveGroupResponse:
    if not authorized(broker, context, Operation.READ, ResourceType.GROUP, request.group_id):
        return LeaveGroupResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    version = context.api_version
    answer: LeaveGroupResponse = await answer_or(
        broker.group_call(request.group_id, lambda shard, now: shard.leave(request, version, now), named=True),
        lambda code: LeaveGroupResponse(error_code=code))
    return answer
