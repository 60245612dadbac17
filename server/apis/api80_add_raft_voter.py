"""AddRaftVoter (80): make a caught-up observer of the metadata log a voter (KIP-853).

Who: admin clients (``kafka-metadata-quorum add-controller``, ``Admin.addRaftVoter``), on the controller
listener or on a broker's, which forwards it to the active controller as Kafka's brokers do. Answered
by the leader's Raft core (server/raft/core.py, ``RaftLog.handle``), which appends a VotersRecord with
the new voter and answers once it commits (or, v1 with ``AckWhenCommitted`` false, once appended).
Refusals in Kafka's order: NOT_LEADER_OR_FOLLOWER on a replica that does not lead; INVALID_REQUEST
without a directory id or the controller listener; REQUEST_TIMED_OUT while another change is in
flight or the observer has not caught up; UNSUPPORTED_VERSION on a static quorum (kraft.version 0);
DUPLICATE_VOTER for a voter's id. A foreign ``ClusterId`` gets INCONSISTENT_CLUSTER_ID.
"""
from __future__ import annotations

from typing import Any

from kraftwire.codec.message import Message
from kraftwire.server.wire.transport import RequestContext

from .nodes import ControllerNodeApi

API_KEY = 80


async def on_controller(node: ControllerNodeApi, context: RequestContext, request: Any) -> Message:
    return await node.quorum.handle(request, context.api_version)
