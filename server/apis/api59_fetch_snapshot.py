"""FetchSnapshot (59): a chunk of the leader's snapshot of ``__cluster_metadata`` (KIP-630).

Who: a replica whose fetch offset fell below the leader's log start (its Fetch was answered with the
leader's SnapshotId), on the controller listener: a voter, or a broker following the log
(server/broker/metadata_follower.py). Answered by the leader's Raft core through its log
(``RaftLog.handle``): up to ``MaxBytes`` from ``Position`` of the latest snapshot, named by
``SnapshotId``, with its total ``Size``. Another topic or partition gets
UNKNOWN_TOPIC_OR_PARTITION, another cluster INCONSISTENT_CLUSTER_ID, a stale or future leader epoch
FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH, a replica that does not lead NOT_LEADER_OR_FOLLOWER, an
unknown snapshot SNAPSHOT_NOT_FOUND and a position outside it POSITION_OUT_OF_RANGE. Kafka requires
CLUSTER_ACTION on the cluster, and so does kraftwire.
"""
from __future__ import annotations

from typing import Any

from kraftwire.codec.message import Message
from kraftwire.server.wire.transport import RequestContext

from .nodes import ControllerNodeApi

API_KEY = 59


async def on_controller(node: ControllerNodeApi, context: RequestContext, request: Any) -> Message:
    return await node.quorum.handle(request, context.api_version)
