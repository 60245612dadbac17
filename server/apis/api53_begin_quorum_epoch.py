"""BeginQuorumEpoch (53): a newly elected leader tells the voters of its epoch.

Who: the leader of the controller quorum, on the other voters' controller listeners. Answered by the
Raft core (server/raft/core.py) after the checks of Fetch (api01_fetch.py).
"""
from __future__ import annotations

from typing import Any

from kraftwire.codec.message import Message
from kraftwire.server.wire.transport import RequestContext

from .nodes import ControllerNodeApi

API_KEY = 53


async def on_controller(node: ControllerNodeApi, context: RequestContext, request: Any) -> Message:
    return await node.quorum.handle(request, context.api_version)
