"""DescribeGroups (15): each group's state, protocol and members, from its coordinator's shard.

Who: admin clients, on the groups' coordinator. Each group needs DESCRIBE on it (GROUP_AUTHORIZATION_FAILED
in its own result), as KafkaApis checks. The answer is the shard's (server/groups/admin.py): a missing
group is state Dead, with GROUP_ID_NOT_FOUND and "Group G not found." from v6; a group this broker does
not coordinate is NOT_COORDINATOR in its result. AuthorizedOperations stays unset (-2147483648): no
kraftwire response carries authorized operations (README, differences).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.messages import DescribeGroupsRequest, DescribeGroupsResponse
from kraftwire.server.metadata.acls import Operation, ResourceType
from kraftwire.server.wire.transport import RequestContext

from .authorization import authorized
from .nodes import BrokerNodeApi

API_KEY = 15
Described = DescribeGroupsResponse.DescribedGroup


async def on_broker(broker: BrokerNodeApi, context: RequestContext,
                    request: DescribeGroupsRequest) -> DescribeGroupsResponse:
    version = context.api_version
    refused = [Described(group_id=g, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED) for g in request.groups
               if not authorized(broker, context, Operation.DESCRIBE, ResourceType.GROUP, g)]
    named = {r.group_id for r in refused}
    answers = []
    for group_id in (g for g in request.groups if g not in named):
        try:
            answers.append(await broker.group_call(group_id, _describing(group_id, version)))
        except KafkaError as exc:
            answers.append(Described(group_id=group_id, error_code=exc.code))
    return DescribeGroupsResponse(groups=refused + answers)


def _describing(group_id: str, version: int) -> Callable[[Any, int], Any]:
    """The shard operation describing one group (bound here, not to the loop's variable)."""
    return lambda shard, now: shard.describe(group_id, version)
