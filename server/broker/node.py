"""A simulated broker, as an asyncio object: its listener, its session with the controller, its replicas.

A simulated broker is a real wire peer of the controller: it registers with BrokerRegistration and
keeps its session with BrokerHeartbeat over TCP, and relays controller-bound requests (CreateTopics,
reassignments, ...) to the controller listener, as KRaft brokers forward them. What it knows of the
metadata comes through a ``MetadataView`` (server/metadata/view.py): the committed image it answers
reads from (Metadata, DescribeCluster, DescribeConfigs), the commits it follows (its replica manager
acts on the partitions they change), the cluster id. As a
KRaft broker, it follows the metadata log as an observer (server/broker/metadata_follower.py): at
start it catches up with the log before it opens its listener and registers, so it never answers
from an image older than the log it first saw. The handlers it serves are the table the host passes
(``kraftwire.server.apis``).

A broker has one or more log directories (server/broker/log_dirs.py): it registers the online ones, reports
failed ones in every heartbeat (OfflineLogDirs, at once when one fails), and re-registers (same
incarnation, so the registration is amended) when one is restored.
"""
from __future__ import annotations

import asyncio
import functools
import logging
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from kraftwire.codec.message import Message
from kraftwire.codec.messages import (BrokerHeartbeatRequest, BrokerRegistrationRequest, FetchRequest, FetchResponse,
                                      OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse)
from kraftwire.codec import ErrorCode
from kraftwire.server.metadata.acls import Authorizer
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.metadata.record_versions import supported_features
from kraftwire.server.metadata.view import MetadataView
from kraftwire.server.wire.client import KafkaClientError
from kraftwire.server.wire.security import PROTOCOL_IDS, ClientSecurity, ListenerSecurity
from kraftwire.server.wire.transport import Handler, Listener
from . import checkpoints, offsets, produce
from .controller_channel import ControllerChannel
from .fetch import FetchManager
from .group_coordinator import GroupCoordinator
from .log_dirs import LogDir, LogDirManager
from .metadata_follower import FollowerView
from .partition import BrokerClock
from .producer_ids import ProducerIdManager
from .replica_manager import ReplicaManager
from .replication_network import ReplicationNetwork
from .topic_stats import BrokerTopicStats

log = logging.getLogger("kraftwire.broker")

LISTENER_NAME = "PLAINTEXT"
CONTROLLER_LISTENER_NAME = "CONTROLLER"  # the controllers' listener, unless controller.listener.names says otherwise
PLAINTEXT = 0
CATCH_UP_STALL_S = 30.0  # how long a starting broker waits for its metadata log to make progress before giving up


class BrokerNode:
    """``apis``: api key -> ``handler(broker, context, request)``; ``controller_addresses``: where the
    controllers' listeners are, [(host, port)], asked at each send (ports may be ephemeral; requests go
    to the active one through a ``ControllerChannel``); ``network``:
    the replication network every broker of the cluster shares; ``startup_configs``: the static configs
    it was started with (its server.properties)."""

    def __init__(self, broker_id: int, host: str, port: int, *, metadata: MetadataView,
                 controller_addresses: Callable[[], list[tuple[str, int]]], apis: Mapping[int, Callable],
                 network: ReplicationNetwork, log_dirs: list[LogDir], rack: str | None = None,
                 heartbeat_interval_ms: int = 500, advertised_host: str | None = None,
                 listener_name: str = LISTENER_NAME, security: ListenerSecurity | None = None,
                 controller_security: ClientSecurity | None = None, authorizer: Authorizer | None = None,
                 startup_configs: dict[str, str] | None = None,
                 controller_reachable: Callable[[int], bool] = lambda index: True,
                 checkpoint_interval_ms: int = checkpoints.CHECKPOINT_INTERVAL_MS,
                 controller_ids: Callable[[], list[int]] | None = None,
                 controller_request_timeout_ms: int = 2000):
        self.broker_id = broker_id
        self.startup_configs = dict(startup_configs or {})  # cluster-wide settings it was started with
        self.host = host
        self.advertised_host = advertised_host or host  # what clients are told to connect to
        self.rack = rack
        self.listener_name = listener_name
        self.security_protocol = PROTOCOL_IDS[security.protocol] if security is not None else PLAINTEXT
        self._controller_security = controller_security  # how it authenticates to the controller
        self.authorizer = authorizer  # server/metadata/acls.py's Authorizer, or None: every request allowed
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self._metadata = metadata
        self._controller_addresses = controller_addresses
        self._controller_ids = controller_ids  # the node id at each of those addresses, when known
        self.controller_request_timeout_ms = controller_request_timeout_ms  # controller.quorum.request.timeout.ms
        self._controller_reachable = controller_reachable  # by index in controller_addresses (the harness cuts links)
        self.metadata_cache: dict = {}  # the Metadata handler's encoded all-topics answer, per image version
        self.epoch = -1
        self.new_incarnation_id = uuid.uuid4  # the cluster's seeded ids in deterministic mode
        self.want_fence = False  # set by the control plane: ask to stay fenced in every heartbeat
        self.client: ControllerChannel | None = None
        self._heartbeats: asyncio.Task | None = None
        self.checkpoint_interval_ms = checkpoint_interval_ms  # Kafka's log.flush.offset.checkpoint.interval.ms
        self._checkpoints: asyncio.Task | None = None
        self._writing: asyncio.Future | None = None  # the checkpoint files being written (in a thread)
        self.previous_epoch = checkpoints.NO_EPOCH  # from the clean-shutdown files read at start
        self.replica_manager = ReplicaManager(self, network)
        self.log_manager = LogDirManager(self, log_dirs, network)
        self.producer_ids = ProducerIdManager(self)
        self.topic_stats = BrokerTopicStats()  # Kafka's BrokerTopicMetrics (the host's /metrics reads them)
        self.fetches = FetchManager(broker_id, lambda key: self.replica_manager.partition(*key), lambda: self.image,
                                    listener_name, self._wait_clock(network), self.topic_stats,
                                    self.replica_manager)
        self.groups = GroupCoordinator(self, BrokerClock(network), self._wait_clock(network))
        metadata.subscribe_partitions(self.replica_manager.on_partitions)
        metadata.subscribe(self.log_manager.on_commit)
        metadata.subscribe(self.replica_manager.on_commit)
        metadata.subscribe(self.replica_manager.partitions.on_commit)
        handlers: dict[int, Handler] = {key: functools.partial(handler, self) for key, handler in apis.items()}
        relaying = [key for key, handler in apis.items() if getattr(handler, "relays_request", False)]
        self.listener = Listener(f"broker-{broker_id}", host, port, handlers, security, relaying)

    # --- what handlers read --------------------------------------------------------------------

    @property
    def image(self) -> MetadataImage:
        return self._metadata.image

    @property
    def metadata(self) -> MetadataView:
        """How this broker follows the metadata log (its ``FollowerView``)."""
        return self._metadata

    @property
    def cluster_id(self) -> str:
        return self._metadata.cluster_id

    @property
    def port(self) -> int:
        return self.listener.port

    @property
    def running(self) -> bool:
        return self.listener.running

    @property
    def log_dirs(self) -> list[uuid.UUID]:
        """The ids of every configured log directory, online or not."""
        return [d.directory_id for d in self.log_manager.directories]

    # --- what handlers ask of the broker (server/apis/nodes.py, BrokerNodeApi) ---------------------

    def log_dir_paths(self) -> list[str]:
        """The paths of every configured log directory, online or not, in configuration order."""
        return [d.path for d in self.log_manager.directories]

    def alter_replica_log_dir(self, topic_name: str, partition: int, path: str) -> int:
        """AlterReplicaLogDirs for one partition: move (or pre-place) its replica; the error code."""
        return self.log_manager.alter(self.image, topic_name, partition, path)

    def describe_log_dirs(self, wanted: set[tuple[str, int]] | None) -> list[Any]:
        """DescribeLogDirs' results: each directory with its replicas (those in ``wanted``, all for None)."""
        return self.log_manager.describe(wanted)

    def produce(self, request: Any, version: int, allowed: Callable[[str], bool]) -> Any:
        """Produce's answer, or with acks=-1 an awaitable of it (server/broker/produce.py)."""
        return produce.produce(self, request, version, allowed)

    def list_offsets(self, request: Any, version: int, allowed: Callable[[str], bool]) -> Any:
        """ListOffsets' answer (server/broker/offsets.py)."""
        return offsets.list_offsets(self, request, version, allowed)

    async def delete_records(self, request: Any, allowed: Callable[[str], bool]) -> Any:
        """DeleteRecords' answer (server/broker/offsets.py)."""
        return await offsets.delete_records(self, request, allowed)

    def storage_failed(self, topic_id: uuid.UUID, index: int, exc: Exception) -> None:
        """A replica's log could not be written: its directory fails (Kafka's LogDirFailureChannel)."""
        replica = self.replica_manager.replicas.get((topic_id, index))
        if replica is not None and replica.log_dir is not None and replica.log_dir.online:
            log.error("broker %d: log directory %s failed: %s", self.broker_id, replica.log_dir.path, exc)
            asyncio.ensure_future(self.fail_log_dir(replica.log_dir))

    def find_group_coordinator(self, group_id: str) -> tuple[int, int, str, int]:
        """FindCoordinator for a group (server/broker/group_coordinator.py): (error, node id, host, port)."""
        return self.groups.find(group_id)

    async def group_call(self, group_id: str, operation: Callable[[Any, int], Any], named: bool = False,
                         session_timeout_ms: int | None = None) -> Any:
        """Run a group shard's operation (server/groups/) on the group's coordinator shard here; its
        answer once its records are committed. KafkaError NOT_COORDINATOR and the like; INVALID_GROUP_ID
        for an empty id where ``named``, INVALID_SESSION_TIMEOUT for a JoinGroup's, on any broker."""
        return await self.groups.run(group_id, operation, named, session_timeout_ms)

    def group_shards(self) -> list[Any]:
        """Every loaded shard this broker leads (ListGroups)."""
        return self.groups.loaded_shards()

    def new_producer_id(self) -> int:
        """A producer id for InitProducerId (server/broker/producer_ids.py)."""
        return self.producer_ids.next_id()

    async def fetch(self, request: FetchRequest, version: int, allowed: Callable[[str], bool]) -> FetchResponse:
        """Fetch's answer from the replicas it hosts (server/broker/fetch.py)."""
        return await self.fetches.fetch(request, version, allowed)

    def offsets_for_leader_epochs(self, request: OffsetForLeaderEpochRequest,
                                  allowed: Callable[[str], bool]) -> OffsetForLeaderEpochResponse:
        return self.fetches.offsets_for_leader_epochs(request, allowed)

    @staticmethod
    def _wait_clock(network: ReplicationNetwork) -> Callable[[float, Callable[[], None]], Any]:
        """What a long poll waits on: the cluster's virtual clock when it is on, else the wall clock."""
        if network.virtual_clock:
            return network.call_later
        return lambda seconds, callback: asyncio.get_running_loop().call_later(seconds, callback)

    def static_configs(self) -> dict[str, str]:
        """What a KRaft broker's server.properties would hold for this simulated broker (DescribeConfigs)."""
        name = self.listener_name
        controller_name = self.startup_configs.get("controller.listener.names", CONTROLLER_LISTENER_NAME)
        static = {
            "node.id": str(self.broker_id), "process.roles": "broker",
            "listeners": f"{name}://{self.host}:{self.port}",
            "advertised.listeners": f"{name}://{self.advertised_host}:{self.port}",
            "listener.security.protocol.map": self.startup_configs.get(
                "listener.security.protocol.map", ",".join(f"{n}:PLAINTEXT" for n in (controller_name, name))),
            "inter.broker.listener.name": name, "controller.listener.names": controller_name,
            "log.dirs": ",".join(self.log_dir_paths())}
        if self.client is not None and "controller.quorum.bootstrap.servers" not in self.startup_configs:
            static["controller.quorum.bootstrap.servers"] = self.client.bootstrap_servers
        return {**self.startup_configs, **static}

    async def send_to_controller(self, request: Message) -> Any:
        """Send a request of the broker's own to the active controller (auto-created topics); its answer,
        without waiting for this broker's metadata. KafkaClientError while the broker is stopped."""
        if self.client is None:
            raise KafkaClientError(f"broker {self.broker_id} is stopped")
        return await self.client.send(request)

    # --- forwarding ----------------------------------------------------------------------------

    def _channel(self) -> ControllerChannel:
        """The channel to the active controller (there while the broker runs)."""
        client = self.client
        assert client is not None, f"broker {self.broker_id} is not running"
        return client

    async def forward(self, request: Message, version: int | None = None) -> Any:
        """Send a client's request on to the active controller; its answer, once this broker's metadata
        holds what the controller had committed by then (``FollowerView.sync``), so a client reading
        back through this broker sees its change (README: differences)."""
        answer = await self._channel().send(request, version)
        await self.sync_metadata()
        return answer

    async def relay(self, api_key: int, version: int, body: bytes | bytearray | memoryview,
                    timeout_ms: int | None = None, *, synced: bool = True) -> bytes:
        """``forward`` for a request body relayed as it came; the answer's bytes. ``synced`` False: the
        answer as soon as the controller gives it (after its commit), as Kafka's ForwardingManager
        hands it back, for requests a client reads back from the controller anyway (README: differences)."""
        answer = await self._channel().relay(api_key, version, body, timeout_ms)
        if synced:
            await self.sync_metadata()
        return answer

    async def sync_metadata(self) -> None:
        """Wait (boundedly) until this broker's metadata holds what the active controller has committed."""
        await self._metadata.sync()

    # --- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Catch up with the metadata log, open the listener, register with the controller, take up the
        replicas the image gives it and start heartbeating (which asks to be unfenced). What its log
        directories kept (server/broker/checkpoints.py) is read meanwhile: the clean-shutdown epoch it
        registers with (PreviousBrokerEpoch) and the log sizes its new replicas start with."""
        kept = asyncio.ensure_future(asyncio.to_thread(self._read_kept))
        await self._metadata.start()
        await self._metadata.wait_caught_up(CATCH_UP_STALL_S)
        self.previous_epoch, sizes = await kept
        await self.listener.start()
        self.incarnation_id = self.new_incarnation_id()
        # A controller silent for two heartbeat intervals (or two quorum request timeouts, when shorter) makes
        # the channel ask who leads, well within the session timeout; the channel follows the leader the
        # metadata follower learns, and it the one this channel finds.
        attempt_timeout = min(max(1.0, 2 * self.heartbeat_interval_ms / 1000),
                              2 * self.controller_request_timeout_ms / 1000)
        pointer = self._metadata.controller_pointer if isinstance(self._metadata, FollowerView) else None
        self.client = ControllerChannel(self._controller_addresses, f"broker-{self.broker_id}",
                                        self._controller_security,
                                        attempt_timeout=attempt_timeout,
                                        reachable=self._controller_reachable, node_ids=self._controller_ids,
                                        pointer=pointer)
        await self._register()
        await self.sync_metadata()  # its first heartbeat then reports the image past its registration: unfenced
        self.replica_manager.start(sizes)
        self._heartbeats = asyncio.create_task(self._heartbeat_loop())
        self._checkpoints = asyncio.create_task(self._checkpoint_loop())
        self.replica_manager.network.changed()
        self.log_manager.changed()

    async def stop(self, clean: bool = False) -> None:
        """Stop as if the process died: no goodbye, the controller fences it when its session expires.
        ``clean``: its process stops cleanly, so it writes its checkpoints and clean-shutdown files
        (without a controlled shutdown: README, differences)."""
        if self._heartbeats is not None:
            self._heartbeats.cancel()
            self._heartbeats = None
        if self._checkpoints is not None:
            self._checkpoints.cancel()
            self._checkpoints = None
        self.groups.stop()
        self.replica_manager.stop()
        await self.listener.stop()
        await self._metadata.close()
        if self._writing is not None:  # a periodic write under way ends before any other starts
            await asyncio.wait([self._writing])
        if clean and self.epoch >= 0:
            await self.write_checkpoints(self.epoch)
        self.replica_manager.network.changed()
        self.log_manager.changed()
        if self.client is not None:
            await self.client.close()
            self.client = None

    def _read_kept(self) -> tuple[int, dict[tuple[str, int], tuple[int, LogDir]]]:
        """The clean-shutdown epoch and each kept log's (size, directory)."""
        kept: dict[tuple[str, int], tuple[int, LogDir]] = {}
        for directory in self.log_manager.directories:
            kept.update((key, (size, directory)) for key, size in checkpoints.read_offsets(directory.path).items())
        self.replica_manager.partitions.read_checkpoints(d.path for d in self.log_manager.directories)
        return checkpoints.take_clean_shutdown_epoch([d.path for d in self.log_manager.directories]), kept

    async def write_checkpoints(self, clean_epoch: int | None = None) -> None:
        """Write every online log directory's checkpoint (and, given the epoch, its clean-shutdown
        file), in a thread; a directory that cannot be written is logged and left as it was."""
        topics = self.log_manager.checkpoint()
        directories = [d for d in self.log_manager.directories if d.online]
        partitions = self.replica_manager.partitions
        offsets = partitions.checkpoint_offsets()  # the real logs' log start offsets and high watermarks

        def write() -> None:
            for directory, exc in checkpoints.write_directories(directories, topics, clean_epoch).items():
                log.warning("broker %d: cannot write the checkpoints of %s: %s", self.broker_id, directory.path, exc)
            try:
                partitions.write_checkpoints([d.path for d in directories], offsets)
            except OSError as exc:
                log.warning("broker %d: cannot write the log checkpoints: %s", self.broker_id, exc)

        self._writing = asyncio.ensure_future(asyncio.to_thread(write))
        await asyncio.shield(self._writing)

    async def _checkpoint_loop(self) -> None:
        """Every interval, the first after ``checkpoints.first_delay`` (so that the brokers of one
        process, started together, do not write at the same moment)."""
        await asyncio.sleep(checkpoints.first_delay(self.broker_id, self.checkpoint_interval_ms) / 1000)
        while True:
            await self.write_checkpoints()
            await asyncio.sleep(self.checkpoint_interval_ms / 1000)

    async def _register(self) -> None:
        request = BrokerRegistrationRequest(
            broker_id=self.broker_id, cluster_id=self.cluster_id, incarnation_id=self.incarnation_id,
            listeners=[BrokerRegistrationRequest.Listener(name=self.listener_name, host=self.advertised_host,
                                                          port=self.port, security_protocol=self.security_protocol)],
            features=[BrokerRegistrationRequest.Feature(name=name, min_supported_version=low,
                                                        max_supported_version=high)
                      for name, (low, high) in supported_features(self.image.metadata_version_level).items()],
            rack=self.rack, log_dirs=[d.directory_id for d in self.log_manager.directories if d.online],
            previous_broker_epoch=self.previous_epoch)
        delay = 0.05
        while True:
            try:
                response = await self._channel().send(request)
                if response.error_code == ErrorCode.NONE:
                    self.epoch = response.broker_epoch
                    return
                log.warning("broker %d: registration refused with error %d", self.broker_id, response.error_code)
            except KafkaClientError as exc:
                log.warning("broker %d: cannot register yet: %s", self.broker_id, exc)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)

    async def heartbeat(self) -> Any:
        """One BrokerHeartbeat; its (decoded) answer."""
        response = await self._channel().send(BrokerHeartbeatRequest(
            broker_id=self.broker_id, broker_epoch=self.epoch, current_metadata_offset=self.image.offset,
            want_fence=self.want_fence,
            offline_log_dirs=[d.directory_id for d in self.log_manager.directories if not d.online],
            cordoned_log_dirs=self.log_manager.reported_cordoned()))
        if response.error_code == ErrorCode.STALE_BROKER_EPOCH:
            await self._register()
        return response

    async def fail_log_dir(self, directory: LogDir) -> None:
        """The directory fails: its replicas go offline and the controller hears of it at once (a
        broker left without an online directory stops, as Kafka's halts)."""
        self.log_manager.fail(directory)
        if not self.running:
            return
        if not any(d.online for d in self.log_manager.directories):
            log.error("broker %d: every log directory has failed: stopping", self.broker_id)
            await self.stop()
            return
        try:
            await self.heartbeat()
        except KafkaClientError as exc:
            log.warning("broker %d: heartbeat failed: %s", self.broker_id, exc)

    async def restore_log_dir(self, directory: LogDir) -> None:
        """The directory works again: its replicas are served and the broker re-registers with it."""
        self.log_manager.restore(directory)
        if self.running:
            await self._register()

    async def _heartbeat_loop(self) -> None:
        me = asyncio.current_task()
        while self._heartbeats is me:  # also ends a loop whose cancel asyncio.wait_for swallowed (Python 3.11)
            try:
                await self.heartbeat()
            except KafkaClientError as exc:
                log.warning("broker %d: heartbeat failed: %s", self.broker_id, exc)
            await asyncio.sleep(self.heartbeat_interval_ms / 1000)
