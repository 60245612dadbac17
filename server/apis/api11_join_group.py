"""JoinGroup (11): a member joins a classic group, answered when the rebalance's join phase ends.

Who: group consumers, on the group's coordinator. Needs READ on the group (GROUP_AUTHORIZATION_FAILED).
The rules are the shard's (server/groups/shard.py, Kafka's classic protocol: MEMBER_ID_REQUIRED on v4+
for a new dynamic member, static membership by GroupInstanceId (v5+) with FENCED_INSTANCE_ID,
GROUP_MAX_SIZE_REACHED, INVALID_SESSION_TIMEOUT, INCONSISTENT_GROUP_PROTOCOL, UNKNOWN_MEMBER_ID);
NOT_COORDINATOR on a broker that does not lead the group's ``__consumer_offsets`` partition. v0 has no
RebalanceTimeoutMs (the session timeout serves).
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import JoinGroupRequest, JoinGroupResponse
from kraftwire.server.metadata.acls import Operation, ResourceType
from kraftwire.server.wire.transport import RequestContext

from .authorization import authorized
from .group_errors import answer_or
from .nodes import BrokerNodeApi

API_KEY = 11
FIRST_VERSION_WITH_NULL_PROTOCOL = 7


# the refusals Kafka's GroupCoordinatorService answers with the request's member id; the others carry none
_ECHOING = (ErrorCode.INVALID_GROUP_ID, ErrorCode.INVALID_SESSION_TIMEOUT, ErrorCode.COORDINATOR_NOT_AVAILABLE)


def _refused(code: int, member_id: str = "") -> JoinGroupResponse:
    return JoinGroupResponse(error_code=code, generation_id=-1, protocol_name=None, leader="", member_id=member_id)


async def on_broker(broker: BrokerNodeApi, context: RequestContext, request: JoinGroupRequest) -> JoinGroupResponse:
    if not authorized(broker, context, Operation.READ, ResourceType.GROUP, request.group_id):
        return _refused(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    client_id, version = context.client_id or "", context.api_version
    host = f"/{context.peer[0]}" if context.peer else ""
    answer: JoinGroupResponse = await answer_or(
        broker.group_call(request.group_id, lambda shard, now: shard.join(request, version, client_id, host, now),
                          named=True, session_timeout_ms=request.session_timeout_ms),
        lambda code: _refused(code, request.member_id if code in _ECHOING else ""))
    if version < FIRST_VERSION_WITH_NULL_PROTOCOL and answer.protocol_name is None:
        answer = answer.replace(protocol_name="")  # Kafka writes "" before v7
    return answer
