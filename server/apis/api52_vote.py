"""Vote (52): a prospective candidate asks for pre-votes, a candidate for votes (KIP-595, KIP-996).

Who: the controller quorum's voters, on the controller listener. Answered by the Raft core
(server/raft/core.py) after the same topic, partition and cluster id checks as Fetch (api01_fetch.py).
"""
from __future__ import annotations

from typing import Any

from kraftwire.codec.message import Message
from kraftwire.server.wire.transport import RequestContext

from .nodes import ControllerNodeApi

API_KEY = 52


async def on_controller(node: ControllerNodeApi, context: RequestContext, request: Any) -> Message:
    return await node.quorum.handle(request, context.api_version)
