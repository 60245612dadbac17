"""``QuorumLinks``: the TCP connections between the controllers of one cluster, and the harness's
control over them.

Each controller's Raft log sends its requests (Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch) through
``transport(source)``: one ``KafkaClient`` per (source, destination) pair, to the destination's
controller listener, so voters talk only over TCP even inside one process.

A link cut between two controllers drops every message between them, both ways, at this boundary:
a request is lost before it is written, and the answer to one already on its way is thrown away, so
the sender hears nothing and its Raft timers take over, as on a network partition. Dropping at the
sender rather than proxying TCP keeps the connections (and their ports) as they are, and is enough for
Raft, which never relies on a connection staying up. Cuts between a broker and a controller are made
the same way in the broker's ``ControllerChannel`` (``Cluster.cut_link``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from kraftwire.codec.message import Message
from kraftwire.server.raft.log import Transport
from kraftwire.server.wire.client import KafkaClient, KafkaClientError

if TYPE_CHECKING:
    from .cluster import Cluster


class LinkCut(KafkaClientError):
    """The link between two nodes is cut (by the harness)."""


class QuorumLinks:
    def __init__(self, cluster: Cluster):
        self._cluster = cluster
        self._clients: dict[tuple[int, int], KafkaClient] = {}
        self.cut: set[frozenset[int]] = set()

    def is_cut(self, a: int, b: int) -> bool:
        return frozenset((a, b)) in self.cut

    def transport(self, source: int) -> Transport:
        """How controller ``source``'s log sends to another voter (over the cluster's own client)."""
        async def send(destination: int, request: Message, version: int) -> Message:
            if self.is_cut(source, destination):
                raise LinkCut(f"the link {source}-{destination} is cut")
            endpoints = self._cluster.controller_endpoints()
            if destination not in endpoints:  # a voter of the log that this host does not know (not added)
                raise KafkaClientError(f"controller {destination} is not run by this cluster")
            host, port = endpoints[destination]
            client = self._clients.get((source, destination))
            if client is None or (client.host, client.port) != (host, port):
                # Replaced before anything is awaited: a send racing this one (the stale client's close may
                # wait for its read loop) finds the new client and shares it instead of making another.
                stale, client = client, KafkaClient(host, port, f"controller-{source}", self._cluster.peer_security)
                self._clients[(source, destination)] = client
                if stale is not None:
                    await stale.close()
            answer = await client.send(request, version)
            if self.is_cut(source, destination):
                raise LinkCut(f"the link {source}-{destination} is cut")
            return answer
        return send

    async def drop(self, node_id: int) -> None:
        """Close every connection from or to a controller (it stopped)."""
        for key in [k for k in self._clients if node_id in k]:
            await self._clients.pop(key).close()

    async def close(self) -> None:
        clients, self._clients = self._clients, {}
        for client in clients.values():
            await client.close()
