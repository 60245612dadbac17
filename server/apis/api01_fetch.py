"""Fetch (1): KRaft's pull replication of ``__cluster_metadata``, between controllers.

Who: the other voters of the controller quorum (and any observer), on the controller listener only;
brokers' listeners do not serve Fetch (they host no readable data). Only ``__cluster_metadata``
partition 0 is served: another topic or partition gets UNKNOWN_TOPIC_OR_PARTITION (3), another cluster
id INCONSISTENT_CLUSTER_ID (104). The Raft core answers the rest (server/raft/core.py): the records
from the fetch offset, or ``DivergingEpoch`` where the fetcher's log leaves the leader's, the high
watermark and ``CurrentLeader``; a fetch at the log end waits up to ``MaxWaitMs`` for new records.
Kafka requires CLUSTER_ACTION on the cluster for a replica's fetch, and so does kraftwire.
"""
from __future__ import annotations

API_KEY = 1


async def on_controller(node, context, request):
    return await node.controller.log.handle(request, context.api_version)
