"""What a node offers the handlers: the two seams every handler is typed against.

A handler is ``handler(node, context, request)``: ``node`` is a ``ControllerNodeApi`` on the controller
listener (``kraftwire.server.controller.node.ControllerNode``) or a ``BrokerNodeApi`` on a broker's
(``kraftwire.server.broker.node.BrokerNode``). Both are Protocols, so the nodes satisfy them by their shape
and neither wing imports this one; what both offer (the authorizer, the committed image, the startup
configs) is ``NodeApi``, which the handlers served on every listener take. A handler reaches nothing
deeper than what these name: a decision is a manager function of server/controller/ that the handler
hands to ``ControllerNodeApi.write`` (or calls on an image, for a read).
"""
from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from kraftwire.codec.model import Struct
from kraftwire.server.controller.active_controller import Decision
from kraftwire.server.controller.node import QuorumHandle
from kraftwire.server.metadata.acls import Authorizer
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.wire.security import Session
from kraftwire.server.wire.transport import Encoded, RequestContext, Unanswered

__all__ = ["BrokerHandler", "BrokerNodeApi", "ControllerHandler", "ControllerNodeApi", "Decision", "Handler",
           "NodeApi", "QuorumHandle", "Response", "session_of"]


class NodeApi(Protocol):
    """What every node offers a handler."""

    @property
    def authorizer(self) -> Authorizer | None:
        """None: every request allowed."""
        ...

    @property
    def startup_configs(self) -> dict[str, str]:
        """The cluster-wide settings it was started with."""
        ...

    @property
    def image(self) -> MetadataImage:
        """The committed image: the controller's, or the broker's own metadata view."""
        ...

    @property
    def host(self) -> str: ...

    @property
    def port(self) -> int: ...

    @property
    def cluster_id(self) -> str: ...

    def static_configs(self) -> dict[str, str]:
        """What its server.properties would hold, as DescribeConfigs lists them (STATIC_BROKER_CONFIG)."""
        ...


class ControllerNodeApi(NodeApi, Protocol):
    """What the controller listener's handlers may use."""

    @property
    def node_id(self) -> int: ...

    @property
    def quorum(self) -> QuorumHandle:
        """The controller's Raft log, for the Raft RPCs, DescribeQuorum and the leader's id."""
        ...

    @property
    def rng(self) -> random.Random:
        """Every random choice of the decisions (placement, topic ids), seeded in deterministic mode."""
        ...

    def quorum_endpoints(self) -> dict[int, tuple[str, int]]:
        """Every voter's controller listener, {node id: (host, port)}."""
        ...

    async def write(self, decide: Decision) -> Any:
        """Run ``decide`` on the working image as the one writer; its response once its records commit."""
        ...

    def session_alive(self, broker_id: int) -> bool:
        """The broker's current session is live."""
        ...

    def touch_session(self, broker_id: int) -> None:
        """Renew the broker's session."""
        ...


class BrokerNodeApi(NodeApi, Protocol):
    """What a broker listener's handlers may use."""

    @property
    def broker_id(self) -> int: ...

    @property
    def listener_name(self) -> str: ...

    @property
    def metadata_cache(self) -> dict[str, Any]:
        """The Metadata handler's encoded answers, kept by the broker (api03_metadata.py)."""
        ...

    async def forward(self, request: Any, version: int | None = None) -> Any:
        """Send a client's request on to the active controller; its answer, once the broker's metadata
        holds what the controller had committed by then."""
        ...

    async def relay(self, api_key: int, version: int, body: memoryview, timeout_ms: int | None = None, *,
                    synced: bool = True) -> bytes:
        """The same for a request's bytes, answered with the controller's bytes."""
        ...

    async def send_to_controller(self, request: Any) -> Any:
        """Send a request of the broker's own (auto-created topics); its answer, without waiting."""
        ...

    def log_dir_paths(self) -> list[str]:
        """Its log directories' paths, online or not."""
        ...

    def alter_replica_log_dir(self, topic_name: str, partition: int, path: str) -> int:
        """Move (or pre-place) one partition's replica into the directory at ``path``; the error code."""
        ...

    def describe_log_dirs(self, wanted: set[tuple[str, int]] | None) -> list[Any]:
        """DescribeLogDirs' results for its directories (the partitions in ``wanted``, all for None)."""
        ...

    def produce(self, request: Any, version: int, allowed: Callable[[str], bool]) -> Any:
        """Produce's answer, appended before it returns, or with acks=-1 an awaitable of it
        (server/broker/produce.py); ``allowed(topic)``: the caller may WRITE to it."""
        ...

    def list_offsets(self, request: Any, version: int, allowed: Callable[[str], bool]) -> Any:
        """ListOffsets' answer (server/broker/offsets.py); ``allowed(topic)``: the caller may DESCRIBE it."""
        ...

    async def delete_records(self, request: Any, allowed: Callable[[str], bool]) -> Any:
        """DeleteRecords' answer (server/broker/offsets.py); ``allowed(topic)``: the caller may DELETE in it."""
        ...

    def find_group_coordinator(self, group_id: str) -> tuple[int, int, str, int]:
        """FindCoordinator for a group: (error code, node id, host, port) of its coordinator."""
        ...

    async def group_call(self, group_id: str, operation: Callable[[Any, int], Any], named: bool = False,
                         session_timeout_ms: int | None = None) -> Any:
        """``operation(shard, now_ms)`` (a ``GroupShard`` method's ``Outcome``, server/groups/) on the group's
        shard; the answer once its records commit, or the completion its outcome names. KafkaError
        (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE) when not served here;
        INVALID_GROUP_ID for an empty group id where ``named`` and INVALID_SESSION_TIMEOUT for a JoinGroup's
        ``session_timeout_ms`` out of bounds, on any broker, as Kafka refuses them before routing."""
        ...

    def group_shards(self) -> list[Any]:
        """The shards (server/groups/shard.py) of the ``__consumer_offsets`` partitions this broker leads."""
        ...

    def new_producer_id(self) -> int:
        """A producer id never handed out before (server/broker/producer_ids.py); KafkaError when none came."""
        ...

    async def fetch(self, request: Any, version: int, allowed: Callable[[str], bool]) -> Any:
        """A Fetch's answer from its hosted replicas; ``allowed(topic)``: whether the caller may read it."""
        ...

    def offsets_for_leader_epochs(self, request: Any, allowed: Callable[[str], bool]) -> Any:
        """OffsetForLeaderEpoch's answer from the partitions it leads."""
        ...


# A handler answers with a response message (a ``Struct``: the codec's ``replace`` hands back that base
# type), a body already encoded, ``Unanswered`` (Produce with acks=0), or an awaitable of one of them.
# Its request is the decoded message of its API (a class per API, hence Any), or an ``Undecoded`` for a
# relaying broker handler.
Response = Struct | Encoded | Unanswered | Awaitable[Struct | Encoded | Unanswered]
ControllerHandler = Callable[[ControllerNodeApi, RequestContext, Any], Response]
BrokerHandler = Callable[[BrokerNodeApi, RequestContext, Any], Response]
NodeT = TypeVar("NodeT", bound=NodeApi)
Handler = Callable[[NodeT, RequestContext, Any], Response]  # generic: Handler[BrokerNodeApi] is a BrokerHandler


def session_of(context: RequestContext) -> Session | None:
    """The connection's security session (its principal, its SASL state), None on an open listener."""
    session = context.session
    return session if isinstance(session, Session) else None
