"""DeleteGroups (42): empty groups go, their offsets and metadata tombstoned in ``__consumer_offsets``.

Who: admin clients, on the groups' coordinator. Each (distinct) group needs DELETE on it
(GROUP_AUTHORIZATION_FAILED in its result, listed after the others, as KafkaApis does). Per group
(server/groups/offsets.py): GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP while it has members, NOT_COORDINATOR
off its coordinator; answered once the tombstones are committed.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.messages import DeleteGroupsRequest, DeleteGroupsResponse
from kraftwire.server.metadata.acls import Operation, ResourceType
from kraftwire.server.wire.transport import RequestContext

from .authorization import authorized
from .nodes import BrokerNodeApi

API_KEY = 42
Result = DeleteGroupsResponse.DeletableGroupResult


async def on_broker(broker: BrokerNodeApi, context: RequestContext,
                    request: DeleteGroupsRequest) -> DeleteGroupsResponse:
    groups = list(dict.fromkeys(request.groups_names))
    allowed = [g for g in groups if authorized(broker, context, Operation.DELETE, ResourceType.GROUP, g)]
    results = []
    for group_id in allowed:
        try:
            code = await broker.group_call(group_id, _deleting(group_id))
        except KafkaError as exc:
            code = exc.code
        results.append(Result(group_id=group_id, error_code=code))
    results += [Result(group_id=g, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED) for g in groups if g not in allowed]
    return DeleteGroupsResponse(results=results)


def _deleting(group_id: str) -> Callable[[Any, int], Any]:
    """The shard operation deleting one group (bound here, not to the loop's variable)."""
    return lambda shard, now: shard.delete_group(group_id)
