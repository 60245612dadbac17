"""SyncGroup (14): the leader hands out the assignment; every member gets its own once the leader's came.

Who: group consumers, on the group's coordinator. Needs READ on the group. The leader's SyncGroup
writes the group's metadata (GroupMetadataValue, assignments included) to ``__consumer_offsets`` and
answers every waiting member once that record is committed. Rules (server/groups/shard.py):
UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS, and from v5
INCONSISTENT_GROUP_PROTOCOL when ProtocolType or ProtocolName are not the group's.
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import SyncGroupRequest, SyncGroupResponse
from kraftwire.server.metadata.acls import Operation, ResourceType
from kraftwire.server.wire.transport import RequestContext

from .authorization import authorized
from .group_errors import answer_or
from .nodes import BrokerNodeApi

API_KEY = 14


def _refused(code: int) -> SyncGroupResponse:
    return SyncGroupResponse(error_code=code, assignment=b"")


async def on_broker(broker: BrokerNodeApi, context: RequestContext, request: SyncGroupRequest) -> SyncGroupResponse:
    if not authorized(broker, context, Operation.READ, ResourceType.GROUP, request.group_id):
        return _refused(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    version = context.api_version
    answer: SyncGroupResponse = await answer_or(
        broker.group_call(request.group_id, lambda shard, now: shard.sync(request, version, now), named=True), _refused)
    return answer
