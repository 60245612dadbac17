"""RemoveRaftVoter (81): take a voter out of the controller quorum (KIP-853).

Who: admin clients (``kafka-metadata-quorum remove-controller``, ``Admin.removeRaftVoter``), on the
controller listener or on a broker's, which forwards it to the active controller. Answered by the
leader's Raft core once the VotersRecord without the voter commits; a leader that removed itself
then resigns and follows as an observer. The voter is named by id and directory id: VOTER_NOT_FOUND
when that exact pair does not vote (or it is the last voter); UNSUPPORTED_VERSION on a static quorum.
"""
from __future__ import annotations

from typing import Any

from kraftwire.codec.message import Message
from kraftwire.server.wire.transport import RequestContext

from .nodes import ControllerNodeApi

API_KEY = 81


async def on_controller(node: ControllerNodeApi, context: RequestContext, request: Any) -> Message:
    return await node.quorum.handle(request, context.api_version)
