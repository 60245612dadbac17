"""``Cluster``: an embedded kraftwire cluster, the same code ``kraftwire serve`` runs.

    async with Cluster(brokers=4) as cluster:
        admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
        await cluster.broker(2).stop()      # the controller fences it after the session timeout

The settings are grouped and judged as a ``ClusterSpec`` (server/host/spec.py, which says what each
means); ``Cluster.from_spec`` builds the cluster from one, as ``kraftwire serve`` and the node processes do.

``port=0`` (the default here) gives every listener an ephemeral port, so tests can run side by side;
``kraftwire serve`` uses 9092, 9093, ... for brokers 1, 2, ... Timings are shorter than Kafka's
defaults (heartbeat 500 ms, session 3 s instead of 2 s and 9 s) so that tests see fencing quickly.
``speed`` runs the simulated replication (``kraftwire.server.broker.replication_network``) that many times
faster than real time.
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

``throttle_auto_remove`` (None: leave as the log has it) sets the cluster-default broker config
``kraftwire.throttle.auto.remove.enable`` at start, the same record ``kafka-configs --entity-default``
writes, so it shows in DescribeConfigs and can be changed later like any dynamic config.

Deterministic mode, for test suites: ``seed`` drives every random choice that reaches the metadata
log (replica placement, topic ids, the order of DeleteTopics results) and every id the cluster makes
(cluster id, log directory ids, broker incarnations), and the brokers start one after another, so two
runs with the same seed and the same client calls write the same records (their batches' timestamps
aside). ``virtual_clock`` stops simulated time: data moves only when the test calls ``advance(seconds)``
or ``run_until_reassignments_done()``, so a reassignment can be seen in progress without sleeping.
The virtual clock governs data movement only; heartbeats and sessions keep the wall clock.

``from_log`` makes the cluster a production twin of a real one (server/host/twin.py): a new data
directory seeded from a copy of its metadata log, its registered brokers simulated, ``sizes`` (the
output of ``kafka-log-dirs --describe``) giving the partitions their sizes.

The data directory and every broker log directory are locked (``.lock``) from construction to ``stop``.
``transport_limits`` (Kafka's socket-server settings) hold for all listeners together. When the
metadata log cannot be written, ``failure`` says why and ``failed`` is set (README: failure policy).
"""
from __future__ import annotations

import asyncio
import functools
import inspect
import math
import os
import random
import secrets
import shutil
import tempfile
import uuid
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.message import Message
from kraftwire.codec.messages import AddRaftVoterRequest, RemoveRaftVoterRequest
from kraftwire.server import apis
from kraftwire.server.apis.api55_describe_quorum import CONTROLLER_LISTENER
from kraftwire.server.broker.controller_channel import ForwardTimedOut
from kraftwire.server.broker.checkpoints import CHECKPOINT_INTERVAL_MS
from kraftwire.server.broker.log_dirs import DEFAULT_CAPACITY_BYTES, LogDir
from kraftwire.server.broker.metadata_follower import FollowerView, MetadataReplica
from kraftwire.server.broker.node import BrokerNode
from kraftwire.server.broker.replication_network import ReplicationNetwork
from kraftwire.server.controller.active_controller import Controller, Decision
from kraftwire.server.controller.broker_lifecycle import fence_broker
from kraftwire.server.controller.metadata_log import NotControllerError
from kraftwire.server.controller.node import ControllerNode
from kraftwire.server.controller import reset as fresh_reset
from kraftwire.server.controller.replication_bandwidth import set_replication_bandwidth, set_topic_ingress
from kraftwire.server.controller.result import ControllerResult
from kraftwire.server.controller.scram import bootstrap_credentials
from kraftwire.server.controller.throttle_cleanup import set_auto_remove
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.metadata.record_versions import DEFAULT_METADATA_VERSION, bootstrap_records
from kraftwire.server.raft import LogFailedError, NotLeaderError, RaftConfig, RaftLog, Timers
from kraftwire.server.raft.storage import DirectoryLocks, directory_id, load_meta_properties
from kraftwire.server.raft.voters import ReplicaKey, VoterNode, VoterSet
from kraftwire.server.wire.client import KafkaClient
from kraftwire.server.wire.transport import Handler, Listener, Quotas, RequestContext, TransportLimits
from . import collector
from .control_plane import ControlPlane, RecentRecords, describe_broker
from .fault_injection import ErrorInjector, InjectedError, error_response
from .metrics import ClusterMetrics
from .quorum_links import QuorumLinks
from .security_settings import Security
from .spec import (CONTROLLER_NODE_ID, DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_SESSION_TIMEOUT_MS, BrokerSpec,
                   ClusterSpec, NetworkSpec, QuorumSpec, ServicesSpec, SimulationSpec, StorageSpec, TopicDefaults,
                   default_kraft_version)
from .twin import TwinSource, load_twin

__all__ = ["CONTROLLER_NODE_ID", "DEFAULT_HEARTBEAT_INTERVAL_MS", "DEFAULT_SESSION_TIMEOUT_MS", "BackgroundCluster",
           "Cluster", "ClusterSpec", "default_kraft_version", "seconds_left"]

QUIET_TURNS = 3  # the cluster is at rest when idle and unchanged this many checks in a row ...
QUIET_INTERVAL_S = 0.01  # ... this far apart
# start-up's checks for the brokers' unfencing, this far apart: a start takes ~0.1 s, of which a 20 ms
# poll would be a fifth
STARTING_INTERVAL_S = 0.002
UNFENCE_SECONDS_PER_PARTITION = 0.0005  # start-up: time allowed per partition for the brokers to be unfenced
T = TypeVar("T")
DEFAULT_TRANSPORT_LIMITS, DEFAULT_TIMERS = TransportLimits(), Timers()  # (frozen: one instance serves every call)


def seconds_left(copies: list[dict[str, Any]]) -> float | None:
    """Simulated seconds until the slowest of ``copies`` (``bytes_left``, ``rate``, and ``ingress``, the
    partition's produce rate, which the copy must outrun) is done; None when there is none yet, or one
    with bytes left does not move or never catches up."""
    if not copies:
        return None
    waits = [c["bytes_left"] / (c["rate"] - c.get("ingress", 0.0)) if c["rate"] > c.get("ingress", 0.0) else None
             for c in copies if c["bytes_left"] > 0]
    if None in waits:
        return None
    return max((w for w in waits if w is not None), default=0.0)


def _added_controllers(data_dir: Path, controller_ids: list[int]) -> list[int]:
    """The controllers ``add_controller`` once added in this data directory (``controller-<id>`` beyond
    the first ones): they start again with the others, voters or observers as the log says."""
    found = [int(p.name.removeprefix("controller-")) for p in data_dir.glob("controller-*")
             if p.name.removeprefix("controller-").isdigit() and (p / "meta.properties").is_file()]
    return sorted(n for n in found if n > max(controller_ids))


@dataclass
class _ControllerSettings:
    """What every controller of the process is built with (``_make_controller``); the lists grow as
    ``add_controller`` adds one."""
    directories: list[Path]
    directory_ids: list[uuid.UUID]
    ports: list[int]
    kraft_version: int
    bootstrap_ids: list[int]
    cluster_id: str
    startup_configs: dict[str, str]


@dataclass
class _Storage:
    """The directories a cluster opened (and locked) before anything else was built."""
    controller_dirs: list[Path]
    controller_directory_ids: list[uuid.UUID]
    cluster_id: str
    broker_log_dirs: list[list[LogDir]]


class Cluster:
    def __init__(self, brokers: int = 3, *, host: str = "127.0.0.1", port: int = 0, controller_port: int = 0,
                 data_dir: str | Path | None = None, racks: list[str | None] | None = None,
                 heartbeat_interval_ms: int = DEFAULT_HEARTBEAT_INTERVAL_MS,
                 session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS, cluster_id: str | None = None,
                 speed: float = 1.0, metrics_port: int | None = None, control_port: int | None = None,
                 advertised_host: str | None = None,
                 log_config: RaftConfig | None = None, log_dirs: int = 1,
                 log_dir_capacity_bytes: int | None = None,
                 log_dir_capacities: Mapping[tuple[int, int], int] | None = None,
                 transport_limits: TransportLimits = DEFAULT_TRANSPORT_LIMITS, throttle_auto_remove: bool | None = None,
                 seed: int | None = None, virtual_clock: bool = False, node_ids: Sequence[int] | None = None,
                 auto_create_topics: bool = False, num_partitions: int | None = None,
                 default_replication_factor: int | None = None, metadata_version: str = DEFAULT_METADATA_VERSION,
                 security: Security | None = None, control_token: str | None = None,
                 from_log: str | Path | TwinSource | None = None, sizes: str | Path | None = None,
                 sizes_later: str | Path | None = None, sizes_interval_s: float | None = None,
                 rates: str | Path | None = None,
                 controllers: int = 1, quorum_timers: Timers = DEFAULT_TIMERS, kraft_version: int | None = None,
                 voters: Mapping[int, tuple[str, int]] | None = None, local_controllers: Sequence[int] = (),
                 log_dir_paths: Sequence[str | Path] | None = None,
                 bootstrap_servers: Sequence[tuple[str, int]] = (),
                 checkpoint_interval_ms: int = CHECKPOINT_INTERVAL_MS,
                 group_configs: Mapping[str, str] | None = None):
        """A cluster described by these settings, grouped and judged as a ``ClusterSpec`` (server/host/spec.py
        says what each means). ``brokers`` may be 0 in a process hosting part of a cluster (``voters`` or
        ``bootstrap_servers``); ``from_log`` boots a production twin, whose brokers, racks and log
        directories come from the log."""
        self._compose(ClusterSpec(
            brokers=BrokerSpec(
                count=brokers, node_ids=None if node_ids is None else tuple(node_ids),
                racks=None if racks is None else tuple(racks), port=port, advertised_host=advertised_host,
                heartbeat_interval_ms=heartbeat_interval_ms, log_dirs=log_dirs,
                log_dir_capacity_bytes=log_dir_capacity_bytes,
                log_dir_capacities=tuple((b, i, c) for (b, i), c in (log_dir_capacities or {}).items()),
                log_dir_paths=None if log_dir_paths is None else tuple(Path(p) for p in log_dir_paths),
                checkpoint_interval_ms=checkpoint_interval_ms),
            topics=TopicDefaults(auto_create_topics=auto_create_topics, num_partitions=num_partitions,
                                 group_configs=tuple(sorted((group_configs or {}).items())),
                                 default_replication_factor=default_replication_factor),
            quorum=QuorumSpec(
                count=controllers, port=controller_port, session_timeout_ms=session_timeout_ms,
                log_config=log_config or RaftConfig(), timers=quorum_timers, kraft_version=kraft_version,
                metadata_version=metadata_version, voters=None if voters is None else dict(voters),
                local_controllers=tuple(local_controllers),
                bootstrap_servers=tuple((h, p) for h, p in bootstrap_servers)),
            storage=StorageSpec(data_dir=None if data_dir is None else Path(data_dir), cluster_id=cluster_id,
                                from_log=from_log, sizes=sizes, sizes_later=sizes_later,
                                sizes_interval_s=sizes_interval_s, rates=rates),
            simulation=SimulationSpec(speed=speed, virtual_clock=virtual_clock, seed=seed,
                                      throttle_auto_remove=throttle_auto_remove),
            network=NetworkSpec(host=host, transport_limits=transport_limits, security=security),
            services=ServicesSpec(metrics_port=metrics_port, control_port=control_port,
                                  control_token=control_token)))

    @classmethod
    def from_spec(cls, spec: ClusterSpec) -> Cluster:
        """The cluster a spec describes (as ``kraftwire serve`` and the node processes build it)."""
        cluster = cls.__new__(cls)
        cluster._compose(spec)
        return cluster

    def _compose(self, spec: ClusterSpec) -> None:
        """Build the cluster from its spec, step by step: storage first (refused settings create nothing),
        then the controllers, the replication network, the brokers, the listeners' shared limits and the
        HTTP services."""
        twin = None
        if spec.storage.from_log is not None:
            given = spec.storage
            twin = load_twin(spec.storage.from_log, given.sizes, spec.brokers.node_ids, given.cluster_id,
                             given.sizes_later, given.sizes_interval_s, given.rates)
            spec = spec.with_twin(twin.node_ids, twin.racks, twin.cluster_id, twin.kraft_version)
        spec.validate()
        quorum = self._quorum = spec.quorum  # (the spec itself is not kept: a twin's holds its source's image)
        self.voter_ids = quorum.voter_ids  # every controller of the quorum (at the start)
        self.controller_ids = quorum.local_ids  # those this process runs (and those added since, below)
        self._voter_addresses = None if quorum.whole else dict(quorum.voters or {})
        # Kafka's ids for the bootstrap servers: -2, -3, ...
        self._bootstrap_addresses = {-2 - i: address for i, address in enumerate(quorum.bootstrap_servers)}
        self._log_dir_paths_given = spec.brokers.log_dir_paths
        self.host = spec.network.host
        self._throttle_auto_remove = spec.simulation.throttle_auto_remove
        self._fresh_speed = spec.simulation.speed  # what ``reset`` sets the simulated speed back to
        self.seed = seed = spec.simulation.seed
        ids = random.Random(f"kraftwire-ids-{seed}") if seed is not None else None
        new_uuid = uuid.uuid4 if ids is None else lambda: uuid.UUID(int=ids.getrandbits(128), version=4)
        self._temporary_data_dir = spec.storage.data_dir is None  # a fresh directory, removed at stop
        self.data_dir = spec.storage.data_dir or Path(tempfile.mkdtemp(prefix="kraftwire-"))
        self._locks = DirectoryLocks()  # the data directory and every broker log directory, until stop
        storage = self._open_storage(spec, twin, new_uuid)
        security = self.security = spec.network.security
        self.authorizer = security.make_authorizer() if security else None
        self.peer_security = security.controller_client() if security else None  # how controllers reach each other
        self._build_controllers(spec, storage)
        self.network = ReplicationNetwork(lambda: self.metadata.image, spec.simulation.speed,
                                          spec.simulation.virtual_clock,
                                          remote_brokers=quorum.voters is not None)  # brokers of other processes
        self.metadata.subscribe(self.network.on_commit)
        self._build_brokers(spec, storage, twin.incarnations if twin else None, new_uuid)
        self._share_listener_limits(spec.network.transport_limits)
        self._build_services(spec.services)

    def _open_storage(self, spec: ClusterSpec, twin: TwinSource | None, new_uuid: Callable[[], uuid.UUID]) -> _Storage:
        """Lock the data directory and every node's directories, read or write their meta.properties (the
        cluster id and directory ids), and seed a twin's controllers; on a failure release what was locked."""
        cluster_id = spec.storage.cluster_id
        try:
            self._locks.acquire(self.data_dir)
            controller_dirs = ([self.data_dir] if len(self.controller_ids) == 1
                               else [self.data_dir / f"controller-{c}" for c in self.controller_ids])
            for node_id in _added_controllers(self.data_dir, self.controller_ids):
                self.controller_ids.append(node_id)
                controller_dirs.append(self.data_dir / f"controller-{node_id}")
            controller_directory_ids = []
            for node_id, directory in zip(self.controller_ids, controller_dirs):
                if directory != self.data_dir:
                    self._locks.acquire(directory)
                cluster_id = load_meta_properties(directory, cluster_id, node_id, new_uuid)["cluster.id"]
                controller_directory_ids.append(directory_id(directory, cluster_id, node_id, new_uuid))
            assert cluster_id is not None  # (a controller's meta.properties holds one; validate() asks the others)
            if twin is not None:
                twin.seed(controller_dirs, cluster_id, lambda b: self._log_dir_paths(b, twin.log_dir_count(b)),
                          spec.quorum.resolved_kraft_version)
            brokers = spec.brokers
            broker_log_dirs = [self._log_dirs(broker_id, cluster_id,
                                              twin.log_dir_count(broker_id) if twin else brokers.log_dirs,
                                              functools.partial(brokers.capacity_of, broker_id), new_uuid)
                               for broker_id in brokers.ids]
        except BaseException:
            self._locks.release()
            raise
        return _Storage(controller_dirs, controller_directory_ids, cluster_id, broker_log_dirs)

    def _build_controllers(self, spec: ClusterSpec, storage: _Storage) -> None:
        """The controllers this process runs, each with its log and listener, and the brokers' shared image."""
        quorum = spec.quorum
        self._controller_settings = _ControllerSettings(
            directories=storage.controller_dirs, directory_ids=storage.controller_directory_ids,
            ports=[quorum.port - i if quorum.port and i < len(quorum.local_ids) else 0
                   for i in range(len(self.controller_ids))],
            kraft_version=quorum.resolved_kraft_version, bootstrap_ids=self.voter_ids,
            cluster_id=storage.cluster_id, startup_configs=spec.startup_configs())
        self._active = 0  # index of the controller that is (or was last) active
        self.links = QuorumLinks(self)
        self.logs: list[RaftLog] = []
        self.controllers: list[Controller] = []
        self.controller_nodes: list[ControllerNode] = []
        self.brokers: list[BrokerNode] = []  # made once the controllers are
        # One image for every broker of the process, each broker fetching for itself (metadata_follower.py)
        self.metadata = MetadataReplica(storage.cluster_id)
        for i in range(len(self.controller_ids)):
            self._make_controller(i)
        self._stopped_controllers: set[int] = set()
        self._paused_controllers: dict[int, tuple[asyncio.Event, dict[int, Handler]]] = {}

    def _build_brokers(self, spec: ClusterSpec, storage: _Storage,
                       twin_incarnations: Callable[[int, Callable[[], uuid.UUID]], Callable[[], uuid.UUID]] | None,
                       new_uuid: Callable[[], uuid.UUID]) -> None:
        """The brokers this process runs, each following the metadata log into the shared image."""
        brokers, security, metadata = spec.brokers, self.security, self.metadata
        startup_configs = self._controller_settings.startup_configs
        controller_addresses = lambda: list(self.controller_endpoints().values())  # noqa: E731
        controller_ids = lambda: list(self.controller_endpoints())  # noqa: E731  (the id at each address)
        request_timeout_ms = spec.quorum.timers.request_timeout_ms  # controller.quorum.request.timeout.ms
        self.brokers = [
            BrokerNode(broker_id, self.host, brokers.port + i if brokers.port else 0,
                       metadata=FollowerView(broker_id, storage.broker_log_dirs[i][0].directory_id,
                                             controller_addresses, storage.cluster_id,
                                             security.broker_client() if security else None,
                                             replica=metadata, reachable=self._broker_link(broker_id),
                                             controller_ids=controller_ids, request_timeout_ms=request_timeout_ms),
                       controller_addresses=controller_addresses, controller_ids=controller_ids,
                       controller_request_timeout_ms=request_timeout_ms,
                       apis=apis.BROKER_APIS, network=self.network,
                       log_dirs=storage.broker_log_dirs[i], rack=brokers.rack_list[i],
                       heartbeat_interval_ms=brokers.heartbeat_interval_ms, advertised_host=brokers.advertised_host,
                       startup_configs=startup_configs, **self._broker_security(),
                       controller_reachable=self._broker_link(broker_id),
                       checkpoint_interval_ms=brokers.checkpoint_interval_ms)
            for i, broker_id in enumerate(brokers.ids)
        ]
        self._by_id = {broker.broker_id: broker for broker in self.brokers}
        for node in self.brokers:
            node.new_incarnation_id = twin_incarnations(node.broker_id, new_uuid) if twin_incarnations else new_uuid

    def _share_listener_limits(self, transport_limits: TransportLimits) -> None:
        """Error injection on the brokers' listeners, the log-failure answer and one set of socket-server
        limits over every listener."""
        self.faults = ErrorInjector([b.listener for b in self.brokers])
        self.failure: str | None = None  # why the metadata log failed, once it has
        self.failed = asyncio.Event()
        for log in self.logs:
            log.on_failure = self._on_log_failure
        quotas = Quotas(transport_limits)
        for listener in self.listeners():
            listener.quotas = quotas
            listener.error_answer = _log_failure_answer

    def _build_services(self, services: ServicesSpec) -> None:
        """The recent-records feed, the metrics and the control plane (HTTP servers when asked for)."""
        self.recent_records = RecentRecords(self.metadata)
        self.metrics = ClusterMetrics(self)
        self.metrics_server = (None if services.metrics_port is None
                               else self.metrics.http_server(self.host, services.metrics_port))
        self.control_token = services.control_token or secrets.token_urlsafe(24)  # for the control plane's writes
        self.control_server = (None if services.control_port is None
                               else ControlPlane(self).http_server(self.host, services.control_port,
                                                                   self.control_token))

    def _make_controller(self, i: int) -> None:
        """Build (or, for a restart, rebuild) controller ``i``: its log, controller and listener node."""
        settings, security, seed, quorum = self._controller_settings, self.security, self.seed, self._quorum
        node_id = self.controller_ids[i]
        bootstrap = VoterSet(()) if self._bootstrap_addresses else settings.bootstrap_ids  # else from the log
        log = RaftLog(settings.directories[i], node_id, quorum.log_config, voters=bootstrap,
                      timers=quorum.timers, rng=None if seed is None else random.Random(f"{seed}-{node_id}"),
                      cluster_id=settings.cluster_id, kraft_version=settings.kraft_version,
                      directory_id=settings.directory_ids[i])
        controller = Controller(log, node_id=node_id, cluster_id=settings.cluster_id,
                                session_timeout_ms=quorum.session_timeout_ms,
                                rng=None if seed is None else random.Random(seed),
                                metadata_version=quorum.metadata_version)
        node = ControllerNode(controller, self.host, settings.ports[i], apis.CONTROLLER_APIS,
                              security.controller_listener(lambda: controller.committed) if security else None,
                              self.authorizer, settings.startup_configs, quorum=log)
        log.transport = self.links.transport(node_id)
        node.quorum_endpoints = self.controller_endpoints
        controller.add_leadership_listener(lambda active: self._leadership_changed(i, active))
        if i < len(self.logs):  # a restart: the cluster's other parts know the old objects
            self.logs[i], self.controllers[i], self.controller_nodes[i] = log, controller, node
        else:
            self.logs.append(log)
            self.controllers.append(controller)
            self.controller_nodes.append(node)
        if self.brokers:  # a restart, or a controller added: wired into the running cluster as the first ones were
            controller.commit_observer = self.controllers[i - 1 if i else -1].commit_observer
            if self.metrics is not None:
                self.metrics.kafka.controller_stats.watch(node_id, controller)
            log.on_failure = self._on_log_failure
            node.listener.quotas = self.brokers[0].listener.quotas
            node.listener.error_answer = _log_failure_answer

    def _bootstrap_voters(self, i: int) -> None:
        """Give controller ``i``'s log its listener and the bootstrap voters, now that the listeners have
        ports: with kraft.version 1 the first controllers with their directory ids and listeners, as
        ``kafka-storage format --initial-controllers`` records them (the log's own set rules once written)."""
        settings, log, node = self._controller_settings, self.logs[i], self.controller_nodes[i]
        log.endpoints = ((CONTROLLER_LISTENER, node.host, node.port),)
        log.bootstrap_servers = tuple(self._bootstrap_addresses)
        if settings.kraft_version >= 1 and not self._bootstrap_addresses:
            log.bootstrap_voters = VoterSet(tuple(
                VoterNode(ReplicaKey(node_id, settings.directory_ids[k]),
                          ((CONTROLLER_LISTENER, self.controller_nodes[k].host, self.controller_nodes[k].port),))
                for k, node_id in enumerate(settings.bootstrap_ids)))

    def _broker_link(self, broker_id: int) -> Callable[[int], bool]:
        """Whether the link from the broker to the controller at an index is up (the harness cuts it)."""
        return lambda index: not self.links.is_cut(broker_id, list(self.controller_endpoints())[index])

    def _broker_security(self) -> dict:
        if self.security is None:
            return {}
        metadata = self.metadata  # the brokers' view: SCRAM logins read what the brokers fetched
        return {"listener_name": self.security.listener_name,
                "security": self.security.broker_listener(lambda: metadata.image),
                "controller_security": self.security.broker_client(), "authorizer": self.authorizer}

    def _log_dir_paths(self, broker_id: int, count: int) -> list[Path]:
        if self._log_dir_paths_given is not None:
            return [Path(os.path.abspath(path)) for path in self._log_dir_paths_given]
        return [Path(os.path.abspath(self.data_dir / f"broker-{broker_id}" / f"logs-{k}")) for k in range(count)]

    def _log_dirs(self, broker_id: int, cluster_id: str, count: int, capacity: Callable[[int], int | None],
                  new_uuid: Callable[[], uuid.UUID]) -> list[LogDir]:
        paths = self._log_dir_paths(broker_id, count)
        for path in paths:
            self._locks.acquire(path)
        capacities = [capacity(k) for k in range(len(paths))]
        return [LogDir(directory_id(path, cluster_id, broker_id, new_uuid), str(path),
                       DEFAULT_CAPACITY_BYTES if given is None else given, enforced=given is not None)
                for path, given in zip(paths, capacities)]

    def _on_log_failure(self, reason: str) -> None:
        """The metadata log directory failed: writes are answered NOT_CONTROLLER from now on, ApiVersions
        KAFKA_STORAGE_ERROR; whoever runs the cluster stops it (``kraftwire serve`` exits non-zero)."""
        self.failure = reason
        for listener in self.listeners():
            listener.failure = reason
        self.failed.set()

    def broker(self, broker_id: int) -> BrokerNode:
        if broker_id not in self._by_id:
            raise KeyError(f"no broker {broker_id}")
        return self._by_id[broker_id]

    def listeners(self) -> list[Listener]:
        return [n.listener for n in self.controller_nodes] + [b.listener for b in self.brokers]

    # --- the controller quorum ------------------------------------------------------------------------

    @property
    def controller(self) -> Controller:
        """The active controller (the last one that was, while the quorum elects another)."""
        return self.controllers[self._active]

    @property
    def log(self) -> RaftLog:
        return self.logs[self._active]

    @property
    def controller_node(self) -> ControllerNode:
        return self.controller_nodes[self._active]

    @property
    def active_controller_id(self) -> int | None:
        """The id of the active controller, None while there is none."""
        return self.controller.node_id if self.controller.active else None

    def _leadership_changed(self, index: int, active: bool) -> None:
        if active:
            self._active = index

    def controller_endpoints(self) -> dict[int, tuple[str, int]]:
        """Where each voter is reached, in voter order: the listeners of this process's controllers
        (one configured at port 0 at the port it got) and the configured addresses of the others."""
        local = {n.node_id: (n.host, n.port) for n in self.controller_nodes}
        if self._voter_addresses is None:
            return local
        if self._bootstrap_addresses:
            # a dynamic quorum: the voters at the listeners the log names, as the brokers' replica and this
            # process's controllers heard (a process of brokers alone reaches a voter outside the bootstrap
            # servers only so), then the bootstrap servers not among them
            found = dict(self.metadata.controller_endpoints)
            for log in self.logs:
                found.update(log.voter_endpoints())
            found |= local
            return found | {i: a for i, a in self._bootstrap_addresses.items() if a not in found.values()}
        return {v: local[v] if v in local and self._voter_addresses[v][1] == 0 else self._voter_addresses[v]
                for v in self.voter_ids}

    async def wait_for_active_controller(self, timeout: float = 10.0) -> Controller:
        """The active controller, once there is one; TimeoutError otherwise."""
        deadline = asyncio.get_running_loop().time() + timeout
        while not self.controller.active:
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError("no controller became active in time")
            await asyncio.sleep(STARTING_INTERVAL_S)
        return self.controller

    async def write(self, decide: Decision, timeout: float = 10.0) -> Any:
        """Run a decision on the active controller, waiting for one (and again if it loses leadership
        before the write commits: harness writes are idempotent decisions); returns once the brokers'
        metadata has it too."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            controller = await self.wait_for_active_controller(max(0.0, deadline - asyncio.get_running_loop().time()))
            try:
                response = await controller.write(decide)
                break
            except (NotControllerError, NotLeaderError):
                if asyncio.get_running_loop().time() > deadline:
                    raise
        await self.wait_until(lambda image: True, timeout)
        return response

    # --- harness control of the quorum (also over HTTP: server/host/control_plane.py) ---------------------

    def _controller_index(self, node_id: int) -> int:
        if node_id not in self.controller_ids:
            raise KeyError(f"no controller {node_id}")
        return self.controller_ids.index(node_id)

    def list_controllers(self) -> list[dict]:
        """Every controller: address, running, paused, its Raft role, epoch, leader, offsets, whether it
        is the active one, and whether its log counts it a voter."""
        described = []
        for node_id, log, node in zip(self.controller_ids, self.logs, self.controller_nodes):
            running = node_id not in self._stopped_controllers
            described.append({
                "id": node_id, "host": node.host, "port": node.port, "running": running,
                "paused": node_id in self._paused_controllers, "active": running and log.active,
                "role": log.role.value if running and log.role else None, "epoch": log.epoch,
                "leader_id": log.leader_id, "high_watermark": log.high_watermark, "end_offset": log.end_offset,
                "voter": node_id in log.voters})
        return described

    async def stop_controller(self, node_id: int, *, kill: bool = False) -> None:
        """Stop a controller: gracefully (a leader resigns first), or with ``kill`` as a killed process,
        losing what it had not fsync'd. Its voters elect another active controller."""
        i = self._controller_index(node_id)
        if node_id in self._stopped_controllers:
            return
        self.resume_controller(node_id)
        self._stopped_controllers.add(node_id)
        await self.controller_nodes[i].stop(drain_timeout=0 if kill else 5.0)
        await self.controllers[i].stop(killed=kill)
        await self.links.drop(node_id)

    async def kill_controller(self, node_id: int) -> None:
        await self.stop_controller(node_id, kill=True)

    async def start_controller(self, node_id: int) -> None:
        """Start a stopped controller again from its data directory; it rejoins the quorum as a follower
        (or, alone, as the leader). A no-op on a running controller."""
        i = self._controller_index(node_id)
        if node_id not in self._stopped_controllers:
            return
        self._make_controller(i)
        await self.controller_nodes[i].start()
        self._bootstrap_voters(i)
        await self.controllers[i].start()
        self._stopped_controllers.discard(node_id)

    def pause_controller(self, node_id: int) -> None:
        """Freeze a controller as SIGSTOP would: it reads no requests (they wait), its Raft timers stop
        and nothing reaches its Raft core, until ``resume_controller``."""
        i = self._controller_index(node_id)
        if node_id in self._paused_controllers or node_id in self._stopped_controllers:
            return
        listener = self.controller_nodes[i].listener
        resumed = asyncio.Event()

        def frozen(handler: Handler) -> Handler:
            async def wait_then_handle(context: RequestContext, request: object) -> object:
                await resumed.wait()
                answer = handler(context, request)
                return await answer if inspect.isawaitable(answer) else answer
            return wait_then_handle

        self._paused_controllers[node_id] = (resumed, listener.handlers)
        listener.handlers = {key: frozen(handler) for key, handler in listener.handlers.items()}
        self.logs[i].pause()
        self.controllers[i].freeze_sessions()

    def resume_controller(self, node_id: int) -> None:
        i = self._controller_index(node_id)
        paused = self._paused_controllers.pop(node_id, None)
        if paused is not None:
            resumed, handlers = paused
            self.controller_nodes[i].listener.handlers = handlers
            self.logs[i].resume()  # (its Raft timer fires at once: a leader that lost its quorum resigns)
            self.controllers[i].thaw_sessions()
            resumed.set()

    async def resign_controller(self, timeout: float = 10.0) -> tuple[int, int]:
        """Have the active controller resign (EndQuorumEpoch) as at a graceful shutdown, without
        stopping it; returns (its id, the id of the controller active in a later epoch) once there is one
        (TimeoutError otherwise). The resigned controller stays a voter and may win that election, as in Kafka."""
        if len(self.controllers) == 1:
            raise ValueError("a single controller has nobody to hand over to")
        log = self.logs[self._controller_index((await self.wait_for_active_controller(timeout)).node_id)]
        resigned, epoch = log.node_id, log.epoch
        log.resign()
        deadline = asyncio.get_running_loop().time() + timeout
        while not (self.controller.active and self.log.epoch > epoch):
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError(f"no controller became active in an epoch after {epoch} in time")
            await asyncio.sleep(0.01)
        return resigned, self.controller.node_id

    # --- changing the voters (KIP-853) ------------------------------------------------------------

    async def add_controller(self) -> int:
        """Start a new controller (the next id, data directory ``<data_dir>/controller-<id>``) that follows
        the metadata log as an observer; AddRaftVoter (``kafka-metadata-quorum add-controller`` with the
        file ``controller_properties`` writes, or ``add_voter``) makes it a voter. Returns its id."""
        settings = self._controller_settings
        node_id = max(self.controller_ids) + 1
        if node_id in self._by_id:
            raise ValueError(f"node id {node_id} is a broker's")
        directory = self.data_dir / f"controller-{node_id}"
        self._locks.acquire(directory)
        settings.directory_ids.append(directory_id(directory, settings.cluster_id, node_id, uuid.uuid4))
        settings.directories.append(directory)
        settings.ports.append(0)
        self.controller_ids.append(node_id)
        i = len(self.controller_ids) - 1
        self._make_controller(i)
        await self.controller_nodes[i].start()
        self._bootstrap_voters(i)
        await self.controllers[i].start()
        return node_id

    def controller_properties(self, node_id: int) -> str:
        """A Kafka controller's configuration for controller ``node_id`` (node.id, process.roles, its
        listener, metadata.log.dir, whose meta.properties holds its directory id): what
        ``kafka-metadata-quorum --command-config FILE add-controller`` reads."""
        i = self._controller_index(node_id)
        node = self.controller_nodes[i]
        return "\n".join([f"node.id={node_id}", "process.roles=controller",
                          f"listeners={CONTROLLER_LISTENER}://{node.host}:{node.port}",
                          f"controller.listener.names={CONTROLLER_LISTENER}",
                          f"metadata.log.dir={self._controller_settings.directories[i]}", ""])

    def controller_directory_id(self, node_id: int) -> uuid.UUID:
        """The metadata log directory id of a controller (its meta.properties' ``directory.id``)."""
        return self._controller_settings.directory_ids[self._controller_index(node_id)]

    async def add_voter(self, node_id: int, timeout: float = 30.0) -> None:
        """Make a running controller that has caught up as an observer a voter: AddRaftVoter over TCP to
        the active controller, as ``kafka-metadata-quorum add-controller`` sends it. Returns once the new
        voter set is committed; KafkaError with Kafka's code when refused."""
        node = self.controller_nodes[self._controller_index(node_id)]
        await self._change_voters(AddRaftVoterRequest(
            cluster_id=self._controller_settings.cluster_id, timeout_ms=int(timeout * 1000), voter_id=node_id,
            voter_directory_id=self.controller_directory_id(node_id),
            listeners=[AddRaftVoterRequest.Listener(name=CONTROLLER_LISTENER, host=node.host, port=node.port)]),
            1, timeout)

    async def remove_controller(self, node_id: int, timeout: float = 30.0) -> None:
        """Take a controller out of the voters (RemoveRaftVoter over TCP to the active controller, as
        ``kafka-metadata-quorum remove-controller`` sends it), then stop it."""
        await self._change_voters(RemoveRaftVoterRequest(
            cluster_id=self._controller_settings.cluster_id, voter_id=node_id,
            voter_directory_id=self.controller_directory_id(node_id)), 0, timeout)
        await self.stop_controller(node_id)

    async def _change_voters(self, request: Message, version: int, timeout: float) -> None:
        """Send a voter change to the active controller; again to the next one when it answers that it
        no longer leads (as a broker's forwarding does), and again when it answers REQUEST_TIMED_OUT (Kafka's
        retriable answer while another voter change, e.g. a restarted voter's UpdateRaftVoter, or the new
        leader's first entry is not committed yet), within ``timeout``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            active = await self.wait_for_active_controller(max(0.0, deadline - loop.time()))
            node = self.controller_nodes[self._controller_index(active.node_id)]
            client = KafkaClient(node.host, node.port, "kraftwire-harness", self.peer_security)
            try:
                response = await asyncio.wait_for(client.send(request, version), max(0.0, deadline - loop.time()))
            finally:
                await client.close()
            if response.error_code in (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.REQUEST_TIMED_OUT) \
                    and loop.time() < deadline:
                await asyncio.sleep(0.05)
                continue
            if response.error_code != ErrorCode.NONE:
                raise KafkaError(response.error_code, response.error_message)
            return

    def _check_node(self, node_id: int) -> None:
        if node_id not in self.controller_ids and node_id not in self._by_id:
            raise KeyError(f"no node {node_id}")

    def cut_link(self, a: int, b: int) -> None:
        """Cut the link between two nodes (controllers or brokers): every message between them is lost,
        both ways, until ``heal_link`` (server/host/quorum_links.py says how)."""
        self._check_node(a)
        self._check_node(b)
        if a == b:
            raise ValueError("a link joins two different nodes")
        self.links.cut.add(frozenset((a, b)))

    def heal_link(self, a: int, b: int) -> None:
        self.links.cut.discard(frozenset((a, b)))

    @property
    def _http_servers(self) -> list:
        return [s for s in (self.metrics_server, self.control_server) if s is not None]

    @property
    def bootstrap(self) -> str:
        """``host:port,...`` of the running brokers, for a client's bootstrap servers."""
        return ",".join(f"{b.host}:{b.port}" for b in self.brokers if b.running)

    async def start(self, ready_timeout: float = 10.0) -> None:
        if self.security is not None:  # certificates the nodes would refuse each other: say so, not time out
            self.security.check_nodes_tls(self.host)
        if self.data_dir is not None:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        for node in self.controller_nodes:  # listening first: the voters elect a leader over them
            await node.start()
        for i in range(len(self.controller_nodes)):
            self._bootstrap_voters(i)
        await asyncio.gather(*(c.start() for c in self.controllers))
        # Nodes refused CLUSTER_ACTION would retry refused fetches until the deadline (a broker-only process
        # has no image to judge by).
        if self.security is not None and self.controllers:
            self.security.check_nodes_authorized(self.authorizer, self.controllers[0].committed, self.host)
        whole = self._voter_addresses is None  # else part of a cluster, whose other processes may not be up yet
        if whole:
            await self.wait_for_active_controller(ready_timeout)
        scram = self.security.bootstrap_scram if self.security is not None else []
        if whole and scram:
            await self.write(lambda image: bootstrap_credentials(image, scram))
        # A restart moves every partition off each broker that registers again and back (Kafka's rules
        # for a new incarnation), so unfencing takes time in proportion to the partitions the log holds.
        unfence_timeout = ready_timeout + UNFENCE_SECONDS_PER_PARTITION * sum(
            len(t.partitions) for t in self._committed_image().topics.values())
        if self.seed is None:
            await asyncio.gather(*(b.start() for b in self.brokers))
        else:  # one after another, each registered and unfenced before the next: the same records each run
            for broker in self.brokers:
                await broker.start()
                await self.wait_until(self._unfenced_predicate([broker]), unfence_timeout, STARTING_INTERVAL_S)
        await self.wait_until(lambda image: self._unfenced(image, self.brokers), unfence_timeout, STARTING_INTERVAL_S)
        auto_remove = self._throttle_auto_remove
        if whole and auto_remove is not None:
            await self.write(lambda image: set_auto_remove(image, auto_remove))
        for server in self._http_servers:
            await server.start()
        collector.cluster_started(self)

    def _unfenced_predicate(self, nodes: list[BrokerNode]) -> Callable[[MetadataImage], bool]:
        return lambda image: self._unfenced(image, nodes)

    @staticmethod
    def _unfenced(image: MetadataImage, nodes: Iterable[BrokerNode]) -> bool:
        return all((b := image.brokers.get(n.broker_id)) is not None and not b.fenced for n in nodes)

    async def stop(self) -> None:
        collector.cluster_stopped(self)
        for server in self._http_servers:
            await server.stop()
        for node_id in list(self._paused_controllers):
            self.resume_controller(node_id)
        # The process stops as a whole: its controllers fence none of its brokers as these go (at
        # 2,000,000 partitions each fencing wrote every leadership move, minutes of a stop), and none of
        # them asks for a controlled shutdown (README: differences). A controller of another process
        # that takes over fences them once their sessions run out, as after a crash. Each broker writes
        # its checkpoints and clean-shutdown files, which its next start reads (checkpoints.py).
        for controller in self.controllers:
            controller.stop_sessions()
        for broker in self.brokers:
            await broker.stop(clean=not self._temporary_data_dir)
        for node in self.controller_nodes:
            await node.stop()
        await self.links.close()
        for controller in self.controllers:
            await controller.stop()
        self._locks.release()
        if self._temporary_data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def reassignment_progress(self) -> dict:
        """Each reassigning partition's data movement: ``{(topic, partition): {"adding": [...],
        "removing": [...], "bytes_moved", "bytes_left", "rate", "seconds_left", "copies": [...]}}``: bytes
        and rates (bytes per second of simulated time) summed over its adding replicas' copies, each copy
        also listed. ``seconds_left`` is simulated time until its slowest copy is done at the current
        rates (a reassignment ends when its last copy does): None while a copy with bytes left stands
        still. ``never`` is None, or why the move never completes: a copy whose rate is not above its
        partition's ingress (``kraftwire.partition.ingress.bytes.per.sec``), the limit that holds it named."""
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
                "rate": sum(c["rate"] for c in moving),
                "seconds_left": seconds_left(moving),
                "never": next((c["never"] for c in moving if c["never"]), None),
                "copies": [{k: c[k] for k in ("follower", "leader", "bytes_moved", "bytes_left", "rate", "ingress",
                                              "never")}
                           for c in moving]}
        return progress

    def _committed_image(self) -> MetadataImage:
        """The committed metadata as this process knows it: its active controller's image, or, in a
        process of brokers only, the image its brokers fetched."""
        return self.controller.committed if self.controllers else self.metadata.image

    def _brokers_caught_up(self) -> bool:
        """The brokers' image holds everything the active controller has committed (trivially so when no
        broker runs to fetch it, and when this process runs no controller: its brokers are the measure)."""
        return (not self.logs or self.metadata.end_offset >= self.log.high_watermark
                or not any(b.running for b in self.brokers))

    async def wait_until(self, predicate: Callable[[MetadataImage], object], timeout: float = 10.0,
                         interval: float = 0.02) -> None:
        """Wait until ``predicate(committed image)`` holds and the brokers have fetched that far;
        TimeoutError otherwise."""
        deadline = asyncio.get_running_loop().time() + timeout
        while not (predicate(self._committed_image()) and self._brokers_caught_up()):
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
            await self.write(lambda image: ControllerResult(fence_broker(image, broker_id)))
        await self.wait_until(lambda image: broker_id not in image.brokers or image.brokers[broker_id].fenced,
                              timeout)

    async def unfence_broker(self, broker_id: int, timeout: float = 10.0) -> None:
        """Stop asking to be fenced; returns once a running broker is unfenced again."""
        node = self.broker(broker_id)
        node.want_fence = False
        if node.running:
            await node.heartbeat()
            await self.wait_until(lambda image: not image.brokers[broker_id].fenced, timeout)

    async def fail_log_dir(self, broker_id: int, path_or_index: int | str, timeout: float = 10.0) -> None:
        """Fail one of a broker's log directories (its index, path or id): the broker reports it in its
        heartbeat and the controller moves leadership and ISR membership off its replicas. Returns once
        the controller has it offline (or, for the broker's last online directory, the broker stopped)."""
        node = self.broker(broker_id)
        directory = node.log_manager.directory(path_or_index)
        await node.fail_log_dir(directory)
        if node.running:
            await self.wait_until(lambda image: directory.directory_id not in image.brokers[broker_id].log_dirs,
                                  timeout)

    async def restore_log_dir(self, broker_id: int, path_or_index: int | str, timeout: float = 10.0) -> None:
        """Bring a failed log directory back: its replicas are served again and the broker re-registers
        with it online. Returns once the controller lists it online (at once for a stopped broker)."""
        node = self.broker(broker_id)
        directory = node.log_manager.directory(path_or_index)
        await node.restore_log_dir(directory)
        if node.running:
            await self.wait_until(lambda image: directory.directory_id in image.brokers[broker_id].log_dirs,
                                  timeout)

    async def set_log_dir_capacity(self, broker_id: int, path_or_index: int | str, capacity_bytes: int) -> None:
        """Set a log directory's simulated capacity (ValueError unless a whole number of bytes, at least
        0). A smaller one may fill it (it goes offline); a full one brought back with ``restore_log_dir``
        fails again at once unless its capacity was raised first."""
        node = self.broker(broker_id)
        node.log_manager.set_capacity(node.log_manager.directory(path_or_index), capacity_bytes)

    async def set_bandwidth(self, broker_id: int, bytes_per_second: int | None) -> None:
        """Set (None: reset to the cluster default) a broker's simulated replication bandwidth, the
        ``kraftwire.replication.bandwidth.bytes.per.second`` config, through the metadata log; a value
        that is not a whole number of at least 1 raises KafkaError (server/controller/replication_bandwidth.py)."""
        self.broker(broker_id)
        await self.write(lambda image: set_replication_bandwidth(image, broker_id, bytes_per_second))

    async def set_ingress(self, topic: str, bytes_per_second: int | None,
                          partitions: dict[int, int] | None = None) -> None:
        """Set a topic's simulated produce rate through the metadata log: ``bytes_per_second`` for each
        partition (``kraftwire.partition.ingress.bytes.per.sec``; None: 0) and per-partition overrides
        (``kraftwire.partition.ingress.rates``); KafkaError for an unknown topic or a bad rate."""
        await self.write(lambda image: set_topic_ingress(image, topic, bytes_per_second, partitions))

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

    # --- reset: a fresh cluster without a restart (server/controller/reset.py) ----------------------------

    def fresh_state(self) -> fresh_reset.FreshState:
        """What this cluster's start-up writes beyond brokers and features (the bootstrap configs of its
        metadata.version, its security's bootstrap SCRAM users, the ``throttle_auto_remove`` default): the
        state ``reset`` comes back to."""
        empty = MetadataImage()
        scram = self.security.bootstrap_scram if self.security is not None else []
        records = bootstrap_records(self._committed_image().metadata_version_level)
        records += bootstrap_credentials(empty, scram).records
        if self._throttle_auto_remove is not None:
            records += set_auto_remove(empty, self._throttle_auto_remove).records
        return fresh_reset.FreshState.of(records)

    async def reset(self, timeout: float = 10.0) -> dict[str, int]:
        """Bring the running cluster back to its freshly started state, keeping its broker ids, ports,
        cluster id and metadata.version: every topic deleted (their partitions, configs, reassignments, and
        on the brokers their replicas, copies and logs), every other dynamic config, ACL and SCRAM user
        but those start-up writes gone, as one batch of Kafka's own deletion records
        (server/controller/reset.py says which); and the harness's own changes undone: injected errors
        disarmed, stopped brokers started, failed log directories restored, brokers asked to be fenced
        unfenced, paused replication resumed, the simulated speed back to the start's. Returns once the
        brokers' metadata has the reset (so a topic of the same name can be created at once), with
        what went (``ResetSummary.to_dict``)."""
        self.faults.clear()
        await self._reset_brokers(timeout)
        fresh = self.fresh_state()
        summary: fresh_reset.ResetSummary = await self._write_synced(
            lambda image: fresh_reset.decide(image, fresh), timeout)
        return summary.to_dict()

    async def _reset_brokers(self, timeout: float) -> None:
        """Undo what the harness did to the brokers (only where something differs: a fresh cluster pays
        nothing here)."""
        for node in self.brokers:
            if self.network.is_paused(node.broker_id):
                self.network.resume(node.broker_id)
            if not node.running:
                await node.start()
            for directory in node.log_manager.directories:
                if not directory.online:
                    await self.restore_log_dir(node.broker_id, directory.path, timeout)
            if node.want_fence:
                await self.unfence_broker(node.broker_id, timeout)
        if self.network.speed != self._fresh_speed:
            self.network.set_speed(self._fresh_speed)
        if not all(self._unfenced(self._committed_image(), [node]) for node in self.brokers):
            await self.wait_until(lambda image: self._unfenced(image, self.brokers), timeout)

    async def _write_synced(self, decide: Decision, timeout: float) -> Any:
        """``write`` that waits for the brokers' shared image on its commit (no polling): the few
        milliseconds of a reset would otherwise be mostly a poll's interval."""
        async with asyncio.timeout(timeout):
            while True:
                controller = await self.wait_for_active_controller(timeout)
                try:
                    response = await controller.write(decide)
                    break
                except (NotControllerError, NotLeaderError):
                    await asyncio.sleep(0.01)  # a new leader is being elected: ask again
            if any(b.running for b in self.brokers) and self.logs:
                await self.metadata.reached(self.log.high_watermark)
        return response

    # --- the virtual clock (``virtual_clock=True``) ---------------------------------------------------

    async def advance(self, seconds: float, timeout: float = 30.0) -> None:
        """Move simulated time ``seconds`` on, copy by copy: at each copy's end the cluster reacts (ISR
        changes, reassignments completing, the brokers acting on them) before time moves further. Returns once
        the cluster is quiet at the new time. ValueError without a virtual clock or for negative time."""
        if not self.network.virtual_clock:
            raise ValueError("advance needs a cluster with virtual_clock=True")
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds < math.inf:
            raise ValueError("seconds must be a finite number, at least 0")
        until = self.network.now() + seconds
        await self._quiesce(timeout)
        while self.network.run_next_timer(until):
            await self._quiesce(timeout)
        self.network.move_clock_to(until)

    async def run_until_reassignments_done(self, timeout: float = 30.0) -> float:
        """Move simulated time on until no partition is reassigning; returns the simulated seconds that
        took. RuntimeError if a reassignment cannot finish (nothing of it moves: a paused or stopped
        broker, a throttle of 0)."""
        if not self.network.virtual_clock:
            raise ValueError("run_until_reassignments_done needs a cluster with virtual_clock=True")
        started = self.network.now()
        await self._quiesce(timeout)
        while any(state.reassigning for _t, _i, state in self.controller.committed.partitions()):
            never = self._never_completing()
            if never or not self.network.run_next_timer(math.inf):
                raise RuntimeError("the reassignments in progress cannot finish: "
                                   + ("never: " + "; ".join(never) if never else "none of their copies moves"))
            await self._quiesce(timeout)
        return self.network.now() - started

    def _never_completing(self) -> list[str]:
        """Why the reassignments in progress never complete, when no copy will catch up at the current
        rates and one is held below its ingress (other timers, such as the ISR lag checks, go on for ever)."""
        if self.network.finishing:
            return []
        return sorted({p["never"] for p in self.reassignment_progress().values() if p["never"]})

    def _idle(self) -> bool:
        return (self.network.idle
                and self.log.end_offset == self.log.high_watermark and self._brokers_caught_up()
                and all(b.replica_manager.idle and b.log_manager.assignments.idle for b in self.brokers))

    async def _quiesce(self, timeout: float) -> None:
        """Wait until writes, AlterPartition proposals and directory assignments are all answered, the brokers
        have the log, and the committed offset stayed put over a few turns (what one sets off may set off
        another)."""
        deadline = asyncio.get_running_loop().time() + timeout
        quiet, last = 0, None
        while quiet < QUIET_TURNS:
            await asyncio.sleep(QUIET_INTERVAL_S)
            offset = self.controller.committed.offset
            quiet = quiet + 1 if self._idle() and offset == last else 0
            last = offset
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError("the cluster did not come to rest in time")

    async def __aenter__(self) -> Cluster:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


def _log_failure_answer(context: RequestContext, request: object, exc: BaseException) -> Message | None:
    """A write the metadata log could not take, or one that reached a controller that is not (or no
    longer) the active one, is answered NOT_CONTROLLER in the API's own shape, as Kafka answers the
    requests pending at a controller that resigns; a forwarded request no controller answered in time,
    REQUEST_TIMED_OUT (server/broker/controller_channel.py); other exceptions are bugs (None)."""
    if isinstance(exc, (LogFailedError, NotLeaderError, NotControllerError)):
        return error_response(context.api_key, context.api_version, request, ErrorCode.NOT_CONTROLLER)
    if isinstance(exc, ForwardTimedOut):
        return error_response(context.api_key, context.api_version, request, ErrorCode.REQUEST_TIMED_OUT)
    return None


class BackgroundCluster:
    """A ``Cluster`` on its own event loop in a daemon thread, for synchronous code and clients:

        with BackgroundCluster(brokers=3) as bg:
            admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap)
            bg.run(bg.cluster.broker(2).stop())   # run a coroutine on the cluster's loop
    """

    def __init__(self, *args: Any, **kwargs: Any):
        """The arguments of ``Cluster``, for the cluster built on the loop's thread at ``start``."""
        import threading

        self._args, self._kwargs = args, kwargs
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name="kraftwire-cluster", daemon=True)
        self.cluster: Cluster | None = None

    def _main(self) -> None:
        import uvloop

        self._loop = loop = uvloop.new_event_loop()
        asyncio.set_event_loop(loop)
        self._ready.set()
        loop.run_forever()
        left = asyncio.all_tasks(loop)  # stopped: what the cluster left running goes, then the loop's fds
        for task in left:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
        loop.close()

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            raise RuntimeError("the background cluster has not been started")
        return self._loop

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float | None = 60.0) -> T:
        """Run a coroutine on the cluster's loop and return its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._running_loop()).result(timeout)

    def call(self, function: Callable[..., T], *args: Any) -> T:
        """Call a plain function on the cluster's loop (to read state without racing it)."""
        async def wrapper() -> T:
            return function(*args)
        return self.run(wrapper())

    @property
    def bootstrap(self) -> str:
        return self.call(lambda: self._started().bootstrap)

    def _started(self) -> Cluster:
        if self.cluster is None:
            raise RuntimeError("the background cluster has not been started")
        return self.cluster

    def start(self) -> BackgroundCluster:
        self._thread.start()
        self._ready.wait()

        async def create_and_start() -> None:
            self.cluster = Cluster(*self._args, **self._kwargs)
            await self.cluster.start()

        self.run(create_and_start())
        return self

    def stop(self) -> None:
        try:
            if self.cluster is not None:
                self.run(self.cluster.stop())
        finally:  # even when stopping failed: a loop left running is destroyed at exit with its tasks pending
            loop = self._running_loop()
            loop.call_soon_threadsafe(loop.stop)
            self._thread.join(10)

    def reset(self, timeout: float = 10.0) -> dict[str, int]:
        """``Cluster.reset`` on the cluster's loop: back to its freshly started state."""
        return self.run(self._started().reset(timeout), timeout + 5)

    def __enter__(self) -> BackgroundCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
