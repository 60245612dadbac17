"""The controller node: the active controller's own listener, what it offers the handlers (the shape
``kraftwire.server.apis.nodes.ControllerNodeApi`` names), and the commit listeners that run beside it
(throttle clean-up)."""
from __future__ import annotations

import functools
import random
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from kraftwire.server.metadata.acls import Authorizer
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.wire.security import ListenerSecurity
from kraftwire.server.wire.transport import Handler as ListenerHandler
from kraftwire.server.wire.transport import Listener, RequestContext

from .active_controller import Controller, Decision
from .quorum_control import QuorumDescription
from .throttle_cleanup import ThrottleCleaner

CONTROLLER_LISTENER_NAME = "CONTROLLER"


class QuorumHandle(Protocol):
    """The controller's replica of the Raft quorum, as the Raft RPCs, DescribeQuorum and DescribeCluster
    reach it (``kraftwire.server.raft.RaftLog``, handed in by the host)."""

    @property
    def leader_id(self) -> int:
        """The Raft leader this replica knows, -1 for none."""
        ...

    async def handle(self, request: Any, version: int) -> Any:
        """Answer another replica's Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch, FetchSnapshot or a
        voter change (AddRaftVoter, RemoveRaftVoter, UpdateRaftVoter)."""
        ...

    def describe(self) -> QuorumDescription:
        """The quorum as the leader sees it."""
        ...


# What a controller listener's handler is: (node, context, request) -> the response, or an awaitable of it.
ControllerHandler = Callable[["ControllerNode", RequestContext, Any], Any]


def security_protocol_map(*listener_names: str) -> str:
    """The map of PLAINTEXT listeners; a cluster with security puts its own in the startup configs."""
    return ",".join(f"{name}:PLAINTEXT" for name in listener_names)


class ControllerNode:
    """The controller's own listener: broker lifecycle RPCs, the Raft RPCs and the requests brokers
    forward. ``apis``: api key -> ``handler(node, context, request)`` (``kraftwire.server.apis.CONTROLLER_APIS``);
    ``quorum``: the controller's Raft log, as the handlers reach the quorum."""

    def __init__(self, controller: Controller, host: str, port: int, apis: Mapping[int, ControllerHandler],
                 security: ListenerSecurity | None = None, authorizer: Authorizer | None = None,
                 startup_configs: dict[str, str] | None = None, *, quorum: QuorumHandle):
        self.controller = controller
        self.quorum = quorum
        self.authorizer = authorizer  # None: every request allowed
        self.node_id = controller.node_id
        self.host = host
        self.startup_configs = dict(startup_configs or {})  # cluster-wide settings it was started with
        handlers: dict[int, ListenerHandler] = {key: functools.partial(handler, self) for key, handler in apis.items()}
        self.listener = Listener(f"controller-{self.node_id}", host, port, handlers, security)
        # every voter's controller listener, {node id: (host, port)}; the host sets it for a quorum
        self.quorum_endpoints: Callable[[], dict[int, tuple[str, int]]] = lambda: {self.node_id: (self.host, self.port)}
        self.throttle_cleaner = ThrottleCleaner(controller)

    @property
    def image(self) -> MetadataImage:
        """The committed image, as the handlers read it."""
        return self.controller.committed

    @property
    def rng(self) -> random.Random:
        """Every random choice of the decisions (placement, topic ids), seeded in deterministic mode."""
        return self.controller.rng

    @property
    def cluster_id(self) -> str:
        return self.controller.cluster_id

    @property
    def port(self) -> int:
        return self.listener.port

    async def write(self, decide: Decision) -> Any:
        """Run ``decide`` on the working image as the one writer; its response once its records commit."""
        return await self.controller.write(decide)

    def session_alive(self, broker_id: int) -> bool:
        """The broker's current session is live (it heartbeats within the session timeout)."""
        return self.controller.session_alive(broker_id)

    def touch_session(self, broker_id: int) -> None:
        """Renew the broker's session: it registered or heartbeated."""
        self.controller.touch_session(broker_id)

    def static_configs(self) -> dict[str, str]:
        """What a KRaft controller's server.properties would hold for this node (DescribeConfigs)."""
        address = f"{self.host}:{self.port}"
        name = self.startup_configs.get("controller.listener.names", CONTROLLER_LISTENER_NAME)
        return {**self.startup_configs, "node.id": str(self.node_id), "process.roles": "controller",
                "listeners": f"{name}://{address}",
                "listener.security.protocol.map": self.startup_configs.get(
                    "listener.security.protocol.map", security_protocol_map(name)),
                "controller.listener.names": name, "controller.quorum.bootstrap.servers": address}

    async def start(self) -> None:
        await self.listener.start()
        self.throttle_cleaner.start()

    async def stop(self, drain_timeout: float = 5.0) -> None:
        await self.listener.stop(drain_timeout)
