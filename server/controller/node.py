"""The controller node: the active controller's own listener, and the commit listeners that run beside it
(throttle clean-up)."""
from __future__ import annotations

from collections.abc import Callable, Mapping

from kraftwire.server.wire.transport import Listener

from .active_controller import Controller
from .throttle_cleanup import ThrottleCleaner


class ControllerNode:
    """The controller's own listener: broker lifecycle RPCs and the requests brokers forward.
    ``apis``: api key -> ``handler(node, context, request)`` (``kraftwire.server.apis.CONTROLLER_APIS``)."""

    def __init__(self, controller: Controller, host: str, port: int, apis: Mapping[int, Callable], security=None,
                 authorizer=None, startup_configs: dict[str, str] | None = None):
        self.controller = controller
        self.authorizer = authorizer  # server/metadata/acls.py's Authorizer, or None: every request allowed
        self.node_id = controller.node_id
        self.host = host
        self.startup_configs = dict(startup_configs or {})  # cluster-wide settings it was started with
        handlers = {key: lambda ctx, req, handler=handler: handler(self, ctx, req) for key, handler in apis.items()}
        self.listener = Listener(f"controller-{self.node_id}", host, port, handlers, security)
        # every voter's controller listener, {node id: (host, port)}; the host sets it for a quorum
        self.quorum_endpoints: Callable[[], dict[int, tuple[str, int]]] = lambda: {self.node_id: (self.host, self.port)}
        self.throttle_cleaner = ThrottleCleaner(controller)

    @property
    def image(self):
        """The committed image, as the handlers read it."""
        return self.controller.committed

    @property
    def port(self) -> int:
        return self.listener.port

    async def start(self) -> None:
        await self.listener.start()
        self.throttle_cleaner.start()

    async def stop(self, drain_timeout: float = 5.0) -> None:
        await self.listener.stop(drain_timeout)
