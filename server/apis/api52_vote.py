"""Vote (52): a prospective candidate asks for pre-votes, a candidate for votes (KIP-595, KIP-996).

Who: the controller quorum's voters, on the controller listener. Answered by the Raft core
(server/raft/core.py) after the same topic, partition and cluster id checks as Fetch (api01_fetch.py).
"""
from __future__ import annotations

API_KEY = 52


async def on_controller(node, context, request):
    return await node.controller.log.handle(request, context.api_version)
