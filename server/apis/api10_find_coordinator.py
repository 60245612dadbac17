"""FindCoordinator (10): the broker coordinating a group.

Who: consumers and admin clients, on a broker's listener. Key type 0 (group) needs DESCRIBE on the group
(GROUP_AUTHORIZATION_FAILED otherwise) and is answered by server/broker/group_coordinator.py: the leader
of the group's ``__consumer_offsets`` partition, COORDINATOR_NOT_AVAILABLE while that topic is being
created (the first FindCoordinator asks for it) or has no live leader. Key type 1 (transaction) needs
DESCRIBE on the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and is answered
COORDINATOR_NOT_AVAILABLE: kraftwire has no transaction coordinator (README, differences). Other key
types are INVALID_REQUEST. v0-3 ask for one key, v4+ for several (``CoordinatorKeys``).
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import FindCoordinatorRequest, FindCoordinatorResponse
from kraftwire.server.metadata.acls import Operation, ResourceType
from kraftwire.server.wire.transport import RequestContext

from .authorization import authorized
from .nodes import BrokerNodeApi

API_KEY = 10
GROUP, TRANSACTION = 0, 1
FIRST_BATCHED_VERSION = 4


def on_broker(broker: BrokerNodeApi, context: RequestContext,
              request: FindCoordinatorRequest) -> FindCoordinatorResponse:
    key_type = request.key_type if context.api_version >= 1 else GROUP
    keys = list(request.coordinator_keys) if context.api_version >= FIRST_BATCHED_VERSION else [request.key]
    answers = [_coordinator(broker, context, key_type, key) for key in keys]
    if context.api_version >= FIRST_BATCHED_VERSION:
        return FindCoordinatorResponse(coordinators=answers)
    one = answers[0]
    return FindCoordinatorResponse(error_code=one.error_code, error_message=one.error_message, node_id=one.node_id,
                                   host=one.host, port=one.port)


def _coordinator(broker: BrokerNodeApi, context: RequestContext, key_type: int,
                 key: str) -> FindCoordinatorResponse.Coordinator:
    def refused(code: int, message: str | None = None) -> FindCoordinatorResponse.Coordinator:
        return FindCoordinatorResponse.Coordinator(key=key, node_id=-1, host="", port=-1, error_code=code,
                                                   error_message=message)
    if key_type == GROUP:
        if not authorized(broker, context, Operation.DESCRIBE, ResourceType.GROUP, key):
            return refused(ErrorCode.GROUP_AUTHORIZATION_FAILED)
        code, node_id, host, port = broker.find_group_coordinator(key)
        if code:
            return refused(code)
        return FindCoordinatorResponse.Coordinator(key=key, node_id=node_id, host=host, port=port,
                                                   error_code=ErrorCode.NONE)
    if key_type == TRANSACTION:
        if not authorized(broker, context, Operation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key):
            return refused(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
        return refused(ErrorCode.COORDINATOR_NOT_AVAILABLE)
    return refused(ErrorCode.INVALID_REQUEST, f"Unknown coordinator type {key_type} in FindCoordinator request")
