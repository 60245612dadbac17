"""``Cluster``: an embedded kraftwire cluster, the same code ``kraftwire serve`` runs.

    async with Cluster(brokers=4) as cluster:
        admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
        await cluster.broker(2).stop()      # the controller fences it after the session timeout

``port=0`` (the default here) gives every listener an ephemeral port, so tests can run side by side;
``kraftwire serve`` uses 9092, 9093, ... for brokers 1, 2, ... Timings are shorter than Kafka's
defaults (heartbeat 500 ms, session 3 s instead of 2 s and 9 s) so that tests see fencing quickly.
``speed`` runs the simulated replication (``kraftwire.server.broker.replication``) that many times faster than real time.
``metrics_port`` and ``control_port`` (None: off, 0: ephemeral) serve Prometheus metrics
(server/host/metrics.py) and the control plane with its live view (server/host/control_plane.py); the control
operations are also methods here (``stop_broker``, ``fence_broker``, ``inject_error``, ...). The control
plane's state-changing calls need ``control_token`` as a bearer token (given, or generated here).
``advertised_host`` is the address brokers register for clients (default: ``host``), for a cluster
bound to 0.0.0.0 in a container. ``security`` (server/host/security_settings.py) sets the listeners'
protocols, TLS and SASL users; without it every listener is PLAINTEXT and open, as before.

Every broker has ``log_dirs`` log directories (JBOD, KIP-858) at ``<data_dir>/broker-<id>/logs-<k>``
(k from 0), each with a stable id in its ``meta.properties`` and a simulated capacity of
``log_dir_capacity_bytes``; ``fail_log_dir`` and ``restore_log_dir`` break and mend one.
"""
from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import tempfile
from pathlib import Path

from kraftwire.server import apis
from kraftwire.server.broker.log_dirs import DEFAULT_CAPACITY_BYTES, LogDir
from kraftwire.server.broker.node import BrokerNode
from kraftwire.server.broker.replication import ReplicationNetwork
from kraftwire.server.controller.active_controller import Controller
from kraftwire.server.controller.broker_lifecycle import fence_broker
from kraftwire.server.controller.node import ControllerNode
from kraftwire.server.controller.replication_bandwidth import set_replication_bandwidth
from kraftwire.server.controller.result import ControllerResult
from kraftwire.server.controller.scram import bootstrap_credentials
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.metadata.view import CommitListener
from kraftwire.server.raft import RaftConfig, RaftLog
from kraftwire.server.raft.storage import directory_id, load_meta_properties
from kraftwire.server.wire.transport import Listener
from .control_plane import ControlPlane, RecentRecords, describe_broker
from .fault_injection import ErrorInjector, InjectedError
from .metrics import ClusterMetrics
from .security_settings import Security

DEFAULT_HEARTBEAT_INTERVAL_MS = 500
DEFAULT_SESSION_TIMEOUT_MS = 3000
CONTROLLER_NODE_ID = 3000


class CommittedImageView:
    """The brokers' ``MetadataView`` (server/metadata/view.py) of this process: the controller's own
    committed image, shared by every broker, and its commit notifications. Nothing else of the
    controller is reachable through it."""

    def __init__(self, controller: Controller):
        self._controller = controller
        self.cluster_id = controller.cluster_id

    @property
    def image(self) -> MetadataImage:
        return self._controller.committed

    def subscribe(self, listener: CommitListener) -> None:
        self._controller.add_commit_listener(listener)


class Cluster:
    def __init__(self, brokers: int = 3, *, host: str = "127.0.0.1", port: int = 0, controller_port: int = 0,
                 data_dir: str | Path | None = None, racks: list[str | None] | None = None,
                 heartbeat_interval_ms: int = DEFAULT_HEARTBEAT_INTERVAL_MS,
                 session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS, cluster_id: str | None = None,
                 speed: float = 1.0, metrics_port: int | None = None, control_port: int | None = None,
                 advertised_host: str | None = None,
                 log_config: RaftConfig | None = None, log_dirs: int = 1,
                 log_dir_capacity_bytes: int = DEFAULT_CAPACITY_BYTES, security: Security | None = None,
                 control_token: str | None = None):
        if brokers < 1:
            raise ValueError("a cluster needs at least one broker")
        if log_dirs < 1:
            raise ValueError("a broker needs at least one log directory")
        self.host = host
        self._temporary_data_dir = data_dir is None  # a fresh directory, removed at stop
        self.data_dir = Path(tempfile.mkdtemp(prefix="kraftwire-")) if data_dir is None else Path(data_dir)
        cluster_id = load_meta_properties(self.data_dir, cluster_id, CONTROLLER_NODE_ID)["cluster.id"]
        self.log = RaftLog(self.data_dir, CONTROLLER_NODE_ID, log_config or RaftConfig())
        self.controller = Controller(self.log, node_id=CONTROLLER_NODE_ID, cluster_id=cluster_id,
                                     session_timeout_ms=session_timeout_ms)
        self.security = security
        self.authorizer = security.make_authorizer() if security else None
        self.controller_node = ControllerNode(self.controller, host, controller_port, apis.CONTROLLER_APIS,
                                              security.controller_listener() if security else None, self.authorizer)
        if security is not None:
            self.controller_node.leader_and_isr.client_security = security.controller_client()
            security.read_scram_from(lambda: self.controller.committed)
        metadata = CommittedImageView(self.controller)
        self.network = ReplicationNetwork(lambda: metadata.image, speed)
        metadata.subscribe(self.network.on_commit)
        racks = racks or [None] * brokers
        self.brokers = [
            BrokerNode(i + 1, host, port + i if port else 0, metadata=metadata,
                       controller_address=lambda: (self.controller_node.host, self.controller_node.port),
                       apis=apis.BROKER_APIS, network=self.network,
                       log_dirs=self._log_dirs(i + 1, cluster_id, log_dirs, log_dir_capacity_bytes), rack=racks[i],
                       heartbeat_interval_ms=heartbeat_interval_ms, advertised_host=advertised_host,
                       **self._broker_security())
            for i in range(brokers)
        ]
        self.faults = ErrorInjector([b.listener for b in self.brokers])
        self.recent_records = RecentRecords(self.controller)
        self.metrics = ClusterMetrics(self)
        self.metrics_server = None if metrics_port is None else self.metrics.http_server(host, metrics_port)
        self.control_token = control_token or secrets.token_urlsafe(24)  # for the control plane's writes
        self.control_server = (None if control_port is None
                               else ControlPlane(self).http_server(host, control_port, self.control_token))

    def _broker_security(self) -> dict:
        if self.security is None:
            return {}
        return {"listener_name": self.security.listener_name, "security": self.security.broker_listener(),
                "controller_security": self.security.broker_client(), "authorizer": self.authorizer}

    def _log_dirs(self, broker_id: int, cluster_id: str, count: int, capacity: int) -> list[LogDir]:
        paths = [Path(os.path.abspath(self.data_dir / f"broker-{broker_id}" / f"logs-{k}")) for k in range(count)]
        return [LogDir(directory_id(path, cluster_id, broker_id), str(path), capacity) for path in paths]

    def broker(self, broker_id: int) -> BrokerNode:
        if not 1 <= broker_id <= len(self.brokers):
            raise KeyError(f"no broker {broker_id}")
        return self.brokers[broker_id - 1]

    def listeners(self) -> list[Listener]:
        return [self.controller_node.listener] + [b.listener for b in self.brokers]

    @property
    def _http_servers(self) -> list:
        return [s for s in (self.metrics_server, self.control_server) if s is not None]

    @property
    def bootstrap(self) -> str:
        """``host:port,...`` of the running brokers, for a client's bootstrap servers."""
        return ",".join(f"{b.host}:{b.port}" for b in self.brokers if b.running)

    async def start(self, ready_timeout: float = 10.0) -> None:
        if self.data_dir is not None:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        await self.controller.start()
        if self.security is not None and self.security.bootstrap_scram:
            await self.controller.write(lambda image: bootstrap_credentials(image, self.security.bootstrap_scram))
        await self.controller_node.start()
        await asyncio.gather(*(b.start() for b in self.brokers))
        await self.wait_until(lambda image: all(
            (b := image.brokers.get(n.broker_id)) is not None and not b.fenced for n in self.brokers), ready_timeout)
        for server in self._http_servers:
            await server.start()

    async def stop(self) -> None:
        for server in self._http_servers:
            await server.stop()
        for broker in self.brokers:
            await broker.stop()
        await self.controller_node.stop()
        await self.controller.stop()
        if self._temporary_data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def reassignment_progress(self) -> dict:
        """Each reassigning partition's data movement: ``{(topic, partition): {"adding": [...],
        "bytes_moved", "bytes_left", "rate"}}``, bytes summed over its adding replicas' copies and the
        rate in bytes per second of simulated time."""
        copies = {(c["topic"], c["partition"], c["follower"]): c for c in self.network.progress()}
        progress = {}
        for topic, index, state in self.controller.committed.partitions():
            if not state.adding and not state.removing:
                continue
            moving = [copies[key] for b in state.adding if (key := (topic.name, index, b)) in copies]
            progress[(topic.name, index)] = {
                "adding": list(state.adding), "removing": list(state.removing),
                "bytes_moved": sum(c["bytes_moved"] for c in moving),
                "bytes_left": sum(c["bytes_left"] for c in moving),
                "rate": sum(c["rate"] for c in moving)}
        return progress

    async def wait_until(self, predicate, timeout: float = 10.0, interval: float = 0.02) -> None:
        """Wait until ``predicate(committed image)`` holds; TimeoutError otherwise."""
        deadline = asyncio.get_running_loop().time() + timeout
        while not predicate(self.controller.committed):
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError("the cluster did not reach the expected state in time")
            await asyncio.sleep(interval)

    # --- control plane (the same operations over HTTP: server/host/control_plane.py) ---------------------------------

    def list_brokers(self) -> list[dict]:
        """Every broker: address, running, registered, fenced, directories (online or not)."""
        return [describe_broker(self, b) for b in self.brokers]

    async def stop_broker(self, broker_id: int) -> None:
        """Stop a broker as if its process died; the controller fences it after the session timeout."""
        await self.broker(broker_id).stop()

    async def start_broker(self, broker_id: int) -> None:
        """Start a stopped broker: it registers again (with a new incarnation) and is unfenced once
        caught up. Returns once registered; a no-op on a running broker."""
        node = self.broker(broker_id)
        if not node.running:
            await node.start()

    async def fence_broker(self, broker_id: int, timeout: float = 10.0) -> None:
        """Have a broker ask to be fenced (WantFence in its heartbeats) until ``unfence_broker``; a stopped
        broker is fenced by the controller directly. Returns once the committed image has it fenced."""
        node = self.broker(broker_id)
        node.want_fence = True
        if node.running:
            await node.heartbeat()
        else:
            await self.controller.write(lambda image: ControllerResult(fence_broker(image, broker_id)))
        await self.wait_until(lambda image: broker_id not in image.brokers or image.brokers[broker_id].fenced,
                              timeout)

    async def unfence_broker(self, broker_id: int, timeout: float = 10.0) -> None:
        """Stop asking to be fenced; returns once a running broker is unfenced again."""
        node = self.broker(broker_id)
        node.want_fence = False
        if node.running:
            await node.heartbeat()
            await self.wait_until(lambda image: not image.brokers[broker_id].fenced, timeout)

    async def fail_log_dir(self, broker_id: int, path_or_index, timeout: float = 10.0) -> None:
        """Fail one of a broker's log directories (its index, path or id): the broker reports it in its
        heartbeat and the controller moves leadership and ISR membership off its replicas. Returns once
        the controller has it offline (or, for the broker's last online directory, the broker stopped)."""
        node = self.broker(broker_id)
        directory = node.log_manager.directory(path_or_index)
        await node.fail_log_dir(directory)
        if node.running:
            await self.wait_until(lambda image: directory.directory_id not in image.brokers[broker_id].log_dirs,
                                  timeout)

    async def restore_log_dir(self, broker_id: int, path_or_index, timeout: float = 10.0) -> None:
        """Bring a failed log directory back: its replicas are served again and the broker re-registers
        with it online. Returns once the controller lists it online (at once for a stopped broker)."""
        node = self.broker(broker_id)
        directory = node.log_manager.directory(path_or_index)
        await node.restore_log_dir(directory)
        if node.running:
            await self.wait_until(lambda image: directory.directory_id in image.brokers[broker_id].log_dirs,
                                  timeout)

    async def set_bandwidth(self, broker_id: int, bytes_per_second: int | None) -> None:
        """Set (None: reset to the cluster default) a broker's simulated replication bandwidth, the
        ``kraftwire.replication.bandwidth.bytes.per.second`` config, through the metadata log; a value
        that is not a whole number of at least 1 raises KafkaError (server/controller/replication_bandwidth.py)."""
        self.broker(broker_id)
        await self.controller.write(lambda image: set_replication_bandwidth(image, broker_id, bytes_per_second))

    async def pause_replication(self, broker_id: int) -> None:
        """Stop every copy to or from the broker (as leader or follower, and its log-directory moves)
        where it stands, until ``resume_replication``; kept across a stop and start of the broker."""
        self.broker(broker_id)
        self.network.pause(broker_id)

    async def resume_replication(self, broker_id: int) -> None:
        """Let the broker's copies go on from the bytes they had."""
        self.broker(broker_id)
        self.network.resume(broker_id)

    async def set_speed(self, speed: float) -> None:
        """Run simulated replication ``speed`` times faster than real time from now on (ValueError
        unless a positive number); the simulated clock and every copy's progress go on without a jump."""
        self.network.set_speed(speed)

    def inject_error(self, api_key: int, error_code: int, count: int = 1, topic: str | None = None,
                     partition: int | None = None) -> InjectedError:
        """Answer the next ``count`` requests of ``api_key`` on any broker (naming ``topic`` and
        ``partition`` when given) with ``error_code``, in the API's response shape (server/host/fault_injection.py)."""
        return self.faults.inject(api_key, error_code, count, topic, partition)

    async def wait_for_reassignments(self, timeout: float = 30.0) -> None:
        """Wait until no partition has adding or removing replicas; TimeoutError otherwise."""
        await self.wait_until(lambda image: not any(state.reassigning for _t, _i, state in image.partitions()),
                              timeout)

    async def __aenter__(self) -> "Cluster":
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.stop()


class BackgroundCluster:
    """A ``Cluster`` on its own event loop in a daemon thread, for synchronous code and clients:

        with BackgroundCluster(brokers=3) as bg:
            admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap)
            bg.run(bg.cluster.broker(2).stop())   # run a coroutine on the cluster's loop
    """

    def __init__(self, *args, **kwargs):
        import threading

        self._args, self._kwargs = args, kwargs
        self._loop = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name="kraftwire-cluster", daemon=True)
        self.cluster: Cluster | None = None

    def _main(self) -> None:
        import uvloop

        self._loop = uvloop.new_event_loop()
        asyncio.set_event_loop(self._loop)
        self._ready.set()
        self._loop.run_forever()

    def run(self, coroutine, timeout: float | None = 60.0):
        """Run a coroutine on the cluster's loop and return its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    def call(self, function, *args):
        """Call a plain function on the cluster's loop (to read state without racing it)."""
        async def wrapper():
            return function(*args)
        return self.run(wrapper())

    @property
    def bootstrap(self) -> str:
        return self.call(lambda: self.cluster.bootstrap)

    def start(self) -> "BackgroundCluster":
        self._thread.start()
        self._ready.wait()

        async def create_and_start():
            self.cluster = Cluster(*self._args, **self._kwargs)
            await self.cluster.start()

        self.run(create_and_start())
        return self

    def stop(self) -> None:
        if self.cluster is not None:
            self.run(self.cluster.stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def __enter__(self) -> "BackgroundCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
