"""UpdateRaftVoter (82): a voter tells the leader its new listeners and kraft.version range (KIP-853).

Who: the voters themselves, on the leader's controller listener: a voter whose listeners differ from
those the voter set records (it came back on another port) sends it once it knows the leader
(``RaftLog``). Answered by the leader's Raft core once the updated VotersRecord is appended; the
answer's ``CurrentLeader`` names the leader and its listener. Not served on brokers, as in Kafka.
"""
from __future__ import annotations

from typing import Any

from kraftwire.codec.message import Message
from kraftwire.server.wire.transport import RequestContext

from .nodes import ControllerNodeApi

API_KEY = 82


async def on_controller(node: ControllerNodeApi, context: RequestContext, request: Any) -> Message:
    return await node.quorum.handle(request, context.api_version)
