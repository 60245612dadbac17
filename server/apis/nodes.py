"""What a node offers the handlers: the two seams every handler is typed against.

A handler is ``handler(node, context, request)``: ``node`` is a ``ControllerNodeApi`` on the controller
listener (``kraftwire.server.controller.node.ControllerNode``) or a ``BrokerNodeApi`` on a broker's
(``kraftwire.server.broker.node.BrokerNode``). Both are Protocols, so the nodes satisfy them by their shape
and neither wing imports this one. A handler reaches nothing deeper than what these name.
"""
from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from kraftwire.codec.message import Message
from kraftwire.server.controller.result import ControllerResult
from kraftwire.server.metadata.acls import Authorizer
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.wire.transport import RequestContext

Decision = Callable[[MetadataImage], ControllerResult]


class QuorumHandle(Protocol):
    """The controller's replica of the Raft quorum, as the Raft RPCs and DescribeQuorum reach it
    (``kraftwire.server.raft.RaftLog``)."""

    leader_id: int  # the Raft leader this replica knows, -1 for none

    async def handle(self, request: Message, version: int) -> Message:
        """Answer another replica's Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch, FetchSnapshot or a
        voter change (AddRaftVoter, RemoveRaftVoter, UpdateRaftVoter)."""
        ...

    def describe(self) -> Any:
        """The quorum as the leader sees it (``kraftwire.server.raft.QuorumDescription``)."""
        ...


class ControllerNodeApi(Protocol):
    """What the controller listener's handlers may use."""

    node_id: int
    host: str
    authorizer: Authorizer | None  # None: every request allowed
    startup_configs: dict[str, str]  # the cluster-wide settings it was started with
    quorum: QuorumHandle
    rng: random.Random  # every random choice of the decisions (placement, topic ids), seeded in deterministic mode

    @property
    def image(self) -> MetadataImage:
        """The committed image."""
        ...

    @property
    def port(self) -> int: ...

    def quorum_endpoints(self) -> dict[int, tuple[str, int]]:
        """Every voter's controller listener, {node id: (host, port)}."""
        ...

    async def write(self, decide: Decision) -> Message:
        """Run ``decide`` on the working image as the one writer; answer once its records commit."""
        ...


class BrokerNodeApi(Protocol):
    """What a broker listener's handlers may use."""

    broker_id: int
    epoch: int
    host: str
    listener_name: str
    authorizer: Authorizer | None
    startup_configs: dict[str, str]

    @property
    def image(self) -> MetadataImage:
        """The broker's own committed image (its metadata view)."""
        ...

    async def forward(self, request: Message, version: int | None = None) -> Message: ...

    async def relay(self, api_key: int, version: int, body: memoryview, timeout_ms: int | None = None, *,
                    synced: bool = True) -> bytes: ...


Handler = Callable[[Any, RequestContext, Any], Message | Awaitable[Message] | Any]
