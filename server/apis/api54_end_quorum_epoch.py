"""EndQuorumEpoch (54): a leader that resigns asks the voters to elect another, best-replicated first.

Who: the resigning leader of the controller quorum (a graceful shutdown, or ``Cluster.resign``). Answered
by the Raft core (server/raft/core.py) after the checks of Fetch (api01_fetch.py).
"""
from __future__ import annotations

from typing import Any

from kraftwire.codec.message import Message
from kraftwire.server.wire.transport import RequestContext

from .nodes import ControllerNodeApi

API_KEY = 54


async def on_controller(node: ControllerNodeApi, context: RequestContext, request: Any) -> Message:
    return await node.quorum.handle(request, context.api_version)
