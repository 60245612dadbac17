"""Fetch (1): KRaft's pull replication of ``__cluster_metadata``, between controllers and to brokers.

Who: the other voters of the controller quorum and the brokers, which follow the log as observers
(server/broker/metadata_follower.py), on the controller listener only; brokers' listeners do not serve
Fetch (they host no readable data). Only ``__cluster_metadata`` partition 0 is served: another topic or
partition gets UNKNOWN_TOPIC_OR_PARTITION (3), another cluster id INCONSISTENT_CLUSTER_ID (104). The
Raft core answers the rest (server/raft/core.py): the records from the fetch offset, or
``DivergingEpoch`` where the fetcher's log leaves the leader's, the high watermark and
``CurrentLeader``; a fetch at the log end waits up to ``MaxWaitMs`` for new records. From v16 the
answer carries the controller listener of the leader it names (``NodeEndpoints``), so a fetcher that
asked a standby goes straight to the leader. Kafka requires CLUSTER_ACTION on the cluster for a
replica's fetch, and so does kraftwire.
"""
from __future__ import annotations

from kraftwire.codec.messages import FetchRequest, FetchResponse
from kraftwire.codec.model import Struct
from kraftwire.server.wire.transport import RequestContext

from .nodes import ControllerNodeApi

API_KEY = 1
FIRST_VERSION_WITH_ENDPOINTS = 16


async def on_controller(node: ControllerNodeApi, context: RequestContext, request: FetchRequest) -> Struct:
    answer: FetchResponse = await node.quorum.handle(request, context.api_version)
    if context.api_version < FIRST_VERSION_WITH_ENDPOINTS:
        return answer
    endpoints = node.quorum_endpoints()
    named = {p.current_leader.leader_id for t in answer.responses for p in t.partitions} & endpoints.keys()
    return answer.replace(node_endpoints=[
        FetchResponse.NodeEndpoint(node_id=n, host=endpoints[n][0], port=endpoints[n][1]) for n in sorted(named)])
