"""BeginQuorumEpoch (53): a newly elected leader tells the voters of its epoch.

Who: the leader of the controller quorum, on the other voters' controller listeners. Answered by the
Raft core (server/raft/core.py) after the checks of Fetch (api01_fetch.py).
"""
from __future__ import annotations

API_KEY = 53


async def on_controller(node, context, request):
    return await node.controller.log.handle(request, context.api_version)
