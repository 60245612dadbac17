"""ListGroups (16): the groups this broker coordinates, filtered by state (v4+) and type (v5+).

Who: admin clients, on every broker (each answers for the ``__consumer_offsets`` partitions it leads).
DESCRIBE on the CLUSTER lists every group; without it only the groups the principal may DESCRIBE are
listed, as KafkaApis filters. Filters are case-insensitive; every group here is of type ``classic``
(server/groups/admin.py).
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import ListGroupsRequest, ListGroupsResponse
from kraftwire.server.metadata.acls import Operation, ResourceType
from kraftwire.server.wire.transport import RequestContext

from .authorization import authorized
from .nodes import BrokerNodeApi

API_KEY = 16


def on_broker(broker: BrokerNodeApi, context: RequestContext, request: ListGroupsRequest) -> ListGroupsResponse:
    states, types = list(request.states_filter or ()), list(request.types_filter or ())
    groups = [g for shard in broker.group_shards() for g in shard.list_groups(states, types)]
    if not authorized(broker, context, Operation.DESCRIBE):
        groups = [g for g in groups if authorized(broker, context, Operation.DESCRIBE, ResourceType.GROUP, g.group_id)]
    return ListGroupsResponse(error_code=ErrorCode.NONE, groups=groups)
