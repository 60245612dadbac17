"""A simulated broker, as an asyncio object: its listener, its session with the controller, its replicas.

A simulated broker is a real wire peer of the controller: it registers with BrokerRegistration and
keeps its session with BrokerHeartbeat over TCP, and relays controller-bound requests (CreateTopics,
reassignments, ...) to the controller listener, as KRaft brokers forward them. For reads (Metadata,
DescribeCluster, DescribeConfigs) it uses the controller's committed image: a KRaft broker reads its
own replica of the metadata log; here every broker shares the one committed image of the process.

A broker has one or more log directories (server/broker/log_dirs.py): it registers the online ones, reports
failed ones in every heartbeat (OfflineLogDirs, at once when one fails), and re-registers (same
incarnation, so the registration is amended) when one is restored.
"""
from __future__ import annotations

import asyncio
import logging
import uuid

from kraftwire.codec.messages import BrokerHeartbeatRequest, BrokerRegistrationRequest

from kraftwire.server import apis
from kraftwire.server.wire.client import KafkaClient, KafkaClientError
from kraftwire.server.controller.active_controller import Controller
from kraftwire.server.metadata.record_versions import METADATA_VERSION_FEATURE, METADATA_VERSION_LEVEL, MIN_METADATA_VERSION
from .log_dirs import LogDir, LogDirManager
from .replication import ReplicaManager, ReplicationNetwork
from kraftwire.server.wire.transport import Listener

log = logging.getLogger("kraftwire.broker")

LISTENER_NAME = "PLAINTEXT"
PLAINTEXT = 0
STALE_BROKER_EPOCH = 77


class BrokerNode:
    def __init__(self, broker_id: int, host: str, port: int, controller: Controller, controller_node,
                 rack: str | None = None, log_dirs: list[LogDir] | None = None,
                 heartbeat_interval_ms: int = 500, network: ReplicationNetwork | None = None,
                 advertised_host: str | None = None, startup_configs: dict[str, str] | None = None):
        self.broker_id = broker_id
        self.startup_configs = dict(startup_configs or {})  # cluster-wide settings it was started with
        self.host = host
        self.advertised_host = advertised_host or host  # what clients are told to connect to
        self.rack = rack
        self.listener_name = LISTENER_NAME
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self._controller = controller
        self._controller_node = controller_node
        self.metadata_cache: dict = {}
        self.epoch = -1
        self.want_fence = False  # set by the control plane: ask to stay fenced in every heartbeat
        self.client: KafkaClient | None = None
        self._heartbeats: asyncio.Task | None = None
        self.replica_manager = ReplicaManager(self, network or ReplicationNetwork(lambda: controller.committed))
        self.log_manager = LogDirManager(
            self, log_dirs or [LogDir(uuid.uuid4(), f"/kraftwire/broker-{broker_id}/logs-0")],
            self.replica_manager.network)
        controller.add_commit_listener(self.log_manager.on_commit)
        handlers = {}
        for key, module in apis.broker_apis().items():
            if getattr(module, "FORWARD", False):
                handlers[key] = self._forward
            else:
                handlers[key] = lambda ctx, req, m=module: m.on_broker(self, ctx, req)
        versions = {key: apis.served_versions(key) for key in handlers}
        self.listener = Listener(f"broker-{broker_id}", host, port, handlers, versions)

    # --- what handlers read --------------------------------------------------------------------

    @property
    def image(self):
        return self._controller.committed

    @property
    def cluster_id(self) -> str:
        return self._controller.cluster_id

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

    # --- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Open the listener, register with the controller and start heartbeating."""
        await self.listener.start()
        self.incarnation_id = uuid.uuid4()
        self.client = KafkaClient(self._controller_node.host, self._controller_node.port, f"broker-{self.broker_id}")
        await self._register()
        self._heartbeats = asyncio.create_task(self._heartbeat_loop())
        self.replica_manager.network.changed()
        self.log_manager.changed()

    async def stop(self) -> None:
        """Stop as if the process died: no goodbye, the controller fences it when its session expires."""
        if self._heartbeats is not None:
            self._heartbeats.cancel()
            self._heartbeats = None
        await self.listener.stop()
        self.replica_manager.network.changed()
        self.log_manager.changed()
        if self.client is not None:
            await self.client.close()
            self.client = None

    async def _register(self) -> None:
        request = BrokerRegistrationRequest(
            broker_id=self.broker_id, cluster_id=self.cluster_id, incarnation_id=self.incarnation_id,
            listeners=[BrokerRegistrationRequest.Listener(name=LISTENER_NAME, host=self.advertised_host, port=self.port,
                                                          security_protocol=PLAINTEXT)],
            features=[BrokerRegistrationRequest.Feature(name=METADATA_VERSION_FEATURE,
                                                        min_supported_version=MIN_METADATA_VERSION,
                                                        max_supported_version=METADATA_VERSION_LEVEL)],
            rack=self.rack, log_dirs=[d.directory_id for d in self.log_manager.directories if d.online])
        delay = 0.05
        while True:
            try:
                response = await self.client.send(request)
                if response.error_code == 0:
                    self.epoch = response.broker_epoch
                    return
                log.warning("broker %d: registration refused with error %d", self.broker_id, response.error_code)
            except KafkaClientError as exc:
                log.warning("broker %d: cannot register yet: %s", self.broker_id, exc)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)

    async def heartbeat(self):
        response = await self.client.send(BrokerHeartbeatRequest(
            broker_id=self.broker_id, broker_epoch=self.epoch, current_metadata_offset=self.image.offset,
            want_fence=self.want_fence,
            offline_log_dirs=[d.directory_id for d in self.log_manager.directories if not d.online]))
        if response.error_code == STALE_BROKER_EPOCH:
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
        while True:
            try:
                await self.heartbeat()
            except KafkaClientError as exc:
                log.warning("broker %d: heartbeat failed: %s", self.broker_id, exc)
            await asyncio.sleep(self.heartbeat_interval_ms / 1000)

    async def _forward(self, context, request):
        """Relay a controller-bound request at the client's version; hand back the controller's answer."""
        return await self.client.send(request, context.api_version)
