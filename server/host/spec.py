"""``ClusterSpec``: what a cluster is made of, described once and judged once.

``Cluster(**kwargs)`` (server/host/cluster.py), ``kraftwire serve`` with its flags, ``KRAFTWIRE_*``
variables and kraftwire.toml (server/host/cli.py, config_file.py), and the node processes' Kafka
``server.properties`` (server/host/node_process.py) each build a ``ClusterSpec``; ``Cluster.from_spec``
composes the cluster from it. The spec is frozen and holds no open resources: ``validate`` refuses bad
values with a ``ValueError`` naming the setting, before anything is created on disk.

Its parts:

* ``BrokerSpec``: how many brokers, their ids (``node_ids``, default 1..N, as Kafka's sample
  server.properties starts at node.id=1), racks, first port (broker i at ``port + i - 1`` unless 0),
  the address they advertise, their heartbeat interval, their log directories (``log_dirs`` per broker
  at ``<data_dir>/broker-<id>/logs-<k>``, each of ``log_dir_capacity_bytes`` but those ``log_dir_capacities``
  names, (broker, k, bytes): a directory given a capacity fails when its bytes reach it; one given none
  reports 1 TiB and never fills; or ``log_dir_paths``, Kafka's
  ``log.dirs``, for a process running one broker) and ``checkpoint_interval_ms`` (Kafka's
  log.flush.offset.checkpoint.interval.ms: how often each broker writes its logs' sizes,
  server/broker/checkpoints.py);
* ``TopicDefaults``: the cluster-wide broker configs every server.properties would hold:
  ``auto_create_topics`` (auto.create.topics.enable, off by default: README), ``num_partitions`` and
  ``default_replication_factor``, used for auto-created topics and CreateTopics asking for the default (-1);
* ``QuorumSpec``: the controllers. ``count`` voters (ids 3000, 3001, ...) with listeners at ``port``,
  ``port - 1``, ... (unless 0) and, when there are several, data directories ``<data_dir>/controller-<id>``
  (controllers ``add_controller`` added there start again with them, on ports of the kernel's; a twin's
  all start from the same snapshot, its seed);
  their ``session_timeout_ms``, Raft ``timers`` (short ones by default; ``Timers.kafka_defaults()`` for
  Kafka's; the brokers time their controller requests on its ``request_timeout_ms`` too) and log
  ``log_config``; ``metadata_version`` (``3.9-IV0`` .. ``4.4-IV2``, written at the first start;
  record_versions.py); ``kraft_version`` 1 (dynamic voters, KIP-853, as ``kafka-storage format
  --standalone``/``--initial-controllers``) or 0 (a static set, as ``controller.quorum.voters``), None for the
  default (``default_kraft_version``: 1, except for a process given ``voters``, and a twin, whose is its
  source's; a data directory keeps the kraft.version it first started with). With 1 the first leader
  writes the bootstrap voters to the log and AddRaftVoter/RemoveRaftVoter change them. One process may
  host part of a cluster: ``voters`` names every controller of the quorum with
  the address the others reach it at, ``local_controllers`` those this process runs (a single one keeps its
  log in ``data_dir`` itself), and ``bootstrap_servers`` instead of ``voters`` (Kafka's
  ``controller.quorum.bootstrap.servers``) joins a dynamic quorum whose voters come from the log;
* ``StorageSpec``: ``data_dir`` (None: a temporary one, removed at stop), ``cluster_id``, and for a
  production twin (server/host/twin.py) ``from_log`` and ``sizes``;
* ``SimulationSpec``: the simulated data plane's ``speed``, ``virtual_clock``, the deterministic ``seed``
  and ``throttle_auto_remove`` (kraftwire.throttle.auto.remove.enable set at start; None: as logged);
* ``NetworkSpec``: the address every listener binds to (``host``), Kafka's socket-server
  ``transport_limits``, and the listeners' ``security`` (server/host/security_settings.py);
* ``ServicesSpec``: ``metrics_port`` and ``control_port`` (None: off, 0: ephemeral) and ``control_token``.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from kraftwire.server.broker.checkpoints import CHECKPOINT_INTERVAL_MS
from kraftwire.server.metadata.record_versions import DEFAULT_METADATA_VERSION, metadata_version_level
from kraftwire.server.raft import RaftConfig, Timers
from kraftwire.server.wire.transport import TransportLimits
from .security_settings import Security
from .twin import TwinSource

DEFAULT_HEARTBEAT_INTERVAL_MS = 500
DEFAULT_SESSION_TIMEOUT_MS = 3000
CONTROLLER_NODE_ID = 3000

Address = tuple[str, int]


def default_kraft_version(static_voters: bool) -> int:
    """kraft.version when none is asked for: 1 (dynamic voters), as Kafka 4's ``kafka-storage format
    --standalone`` and ``--initial-controllers`` give, for one controller as for several; 0 where the
    voters are given as ``controller.quorum.voters`` (node processes), which Kafka keeps static."""
    return 0 if static_voters else 1


@dataclass(frozen=True)
class BrokerSpec:
    count: int = 3
    node_ids: tuple[int, ...] | None = None  # None: 1..count
    racks: tuple[str | None, ...] | None = None
    port: int = 0
    advertised_host: str | None = None
    heartbeat_interval_ms: int = DEFAULT_HEARTBEAT_INTERVAL_MS
    log_dirs: int = 1
    log_dir_capacity_bytes: int | None = None  # None: DEFAULT_CAPACITY_BYTES reported, not enforced
    # per-directory overrides of log_dir_capacity_bytes: (broker id, directory index from 0, bytes)
    log_dir_capacities: tuple[tuple[int, int, int], ...] = ()
    log_dir_paths: tuple[Path, ...] | None = None
    checkpoint_interval_ms: int = CHECKPOINT_INTERVAL_MS

    @property
    def ids(self) -> list[int]:
        return list(range(1, self.count + 1)) if self.node_ids is None else list(self.node_ids)

    @property
    def rack_list(self) -> list[str | None]:
        return list(self.racks) if self.racks else [None] * self.count

    def validate(self, voter_ids: Sequence[int]) -> None:
        ids = self.ids
        if len(ids) != self.count:
            raise ValueError(f"{len(ids)} node ids given for {self.count} brokers")
        if len(set(ids)) != len(ids):
            raise ValueError(f"node ids must differ: {ids}")
        if any(not 0 <= node_id < (1 << 31) for node_id in ids):
            raise ValueError(f"a node id must be at least 0 and fit in an int32: {ids}")
        if taken := sorted(set(ids) & set(voter_ids)):
            raise ValueError(f"node ids {taken} are the controllers' ({voter_ids[0]}..{voter_ids[-1]})")
        if self.log_dir_capacity_bytes is not None and self.log_dir_capacity_bytes < 0:
            raise ValueError("a log directory's capacity must be at least 0 bytes")
        for broker, index, capacity in self.log_dir_capacities:
            if broker not in ids or not 0 <= index or capacity < 0:
                raise ValueError(f"a log directory capacity names a broker of the cluster, a directory index "
                                 f"from 0 and at least 0 bytes: {broker}:{index}={capacity}")

    def capacity_of(self, broker_id: int, index: int) -> int | None:
        """The simulated capacity of a broker's ``index``-th log directory (None: none given)."""
        return next((c for b, i, c in self.log_dir_capacities if (b, i) == (broker_id, index)),
                    self.log_dir_capacity_bytes)


@dataclass(frozen=True)
class TopicDefaults:
    auto_create_topics: bool = False
    num_partitions: int | None = None
    default_replication_factor: int | None = None
    # the group coordinator's broker configs (offsets.topic.*, group.*: server/broker/group_coordinator.py)
    group_configs: tuple[tuple[str, str], ...] = ()

    def startup_configs(self) -> dict[str, str]:
        """The cluster-wide broker configs a Kafka cluster would have in every server.properties;
        ValueError for a count out of range."""
        startup = {"auto.create.topics.enable": "true" if self.auto_create_topics else "false"}
        for name, value in (("num.partitions", self.num_partitions),
                            ("default.replication.factor", self.default_replication_factor)):
            if value is not None:
                if not 1 <= value < (1 << 31) or (name == "default.replication.factor" and value >= 1 << 15):
                    raise ValueError(f"{name} must be at least 1, not {value}")
                startup[name] = str(value)
        for name, text in self.group_configs:
            if not (name.startswith("group.") or name.startswith("offsets.") or name.startswith("offset.")):
                raise ValueError(f"{name} is not a group coordinator config")
            startup[name] = text
        return startup


@dataclass(frozen=True)
class QuorumSpec:
    count: int = 1
    port: int = 0
    session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS
    log_config: RaftConfig = field(default_factory=RaftConfig)
    timers: Timers = field(default_factory=Timers)
    kraft_version: int | None = None
    metadata_version: str = DEFAULT_METADATA_VERSION
    voters: Mapping[int, Address] | None = None
    local_controllers: tuple[int, ...] = ()
    bootstrap_servers: tuple[Address, ...] = ()

    @property
    def whole(self) -> bool:
        """The whole quorum runs in this process (no ``voters`` or bootstrap servers elsewhere)."""
        return self.voters is None and not self.bootstrap_servers

    @property
    def voter_ids(self) -> list[int]:
        """Every controller of the quorum at the start."""
        return [CONTROLLER_NODE_ID + i for i in range(self.count)] if self.whole else sorted(self.voters or {})

    @property
    def local_ids(self) -> list[int]:
        """The controllers this process runs."""
        return self.voter_ids if self.whole else list(self.local_controllers)

    @property
    def resolved_kraft_version(self) -> int:
        return default_kraft_version(self.voters is not None) if self.kraft_version is None else self.kraft_version


@dataclass(frozen=True)
class StorageSpec:
    data_dir: Path | None = None
    cluster_id: str | None = None
    from_log: str | Path | TwinSource | None = None
    sizes: str | Path | None = None
    # a twin's produce rates: a second kafka-log-dirs snapshot this many seconds after ``sizes``, or a file
    sizes_later: str | Path | None = None
    sizes_interval_s: float | None = None
    rates: str | Path | None = None

    def validate(self) -> None:
        """A twin's sizes and rates need its source, and rates come one way."""
        if self.sizes is not None and self.from_log is None:
            raise ValueError("sizes (--sizes) are for a twin: give from_log (--from-log) too")
        if self.rates is not None and self.from_log is None:
            raise ValueError("rates (--rates) are for a twin: give from_log (--from-log) too")
        if self.sizes_later is not None and (self.sizes is None or not (self.sizes_interval_s or 0) > 0):
            raise ValueError("a later snapshot (--sizes-later) needs --sizes and the seconds between the two "
                             "(--sizes-interval, above 0)")
        if self.sizes_later is not None and self.rates is not None:
            raise ValueError("give the rates one way: --sizes-later or --rates")


@dataclass(frozen=True)
class SimulationSpec:
    speed: float = 1.0
    virtual_clock: bool = False
    seed: int | None = None
    throttle_auto_remove: bool | None = None


@dataclass(frozen=True)
class NetworkSpec:
    host: str = "127.0.0.1"
    transport_limits: TransportLimits = field(default_factory=TransportLimits)
    security: Security | None = None


@dataclass(frozen=True)
class ServicesSpec:
    metrics_port: int | None = None
    control_port: int | None = None
    control_token: str | None = None


@dataclass(frozen=True)
class ClusterSpec:
    brokers: BrokerSpec = field(default_factory=BrokerSpec)
    topics: TopicDefaults = field(default_factory=TopicDefaults)
    quorum: QuorumSpec = field(default_factory=QuorumSpec)
    storage: StorageSpec = field(default_factory=StorageSpec)
    simulation: SimulationSpec = field(default_factory=SimulationSpec)
    network: NetworkSpec = field(default_factory=NetworkSpec)
    services: ServicesSpec = field(default_factory=ServicesSpec)

    def with_twin(self, node_ids: Sequence[int], racks: Sequence[str | None], cluster_id: str | None,
                  kraft_version: int) -> ClusterSpec:
        """This spec for a production twin: its brokers, racks and cluster id come from the source log, and
        its kraft.version too unless one is asked for."""
        quorum = self.quorum if self.quorum.kraft_version is not None else replace(self.quorum,
                                                                                    kraft_version=kraft_version)
        return replace(self, brokers=replace(self.brokers, count=len(node_ids), node_ids=tuple(node_ids),
                                             racks=tuple(racks)),
                       storage=replace(self.storage, cluster_id=cluster_id), quorum=quorum)

    def validate(self) -> None:
        """Refuse bad settings (ValueError saying which), before anything is created."""
        brokers, quorum = self.brokers, self.quorum
        self.storage.validate()
        if quorum.whole:
            if brokers.count < 1:
                raise ValueError("a cluster needs at least one broker")
            if quorum.count < 1:
                raise ValueError("a cluster needs at least one controller")
        else:
            if quorum.voters is not None and not set(quorum.local_ids) <= set(quorum.voter_ids):
                raise ValueError(f"controllers {quorum.local_ids} are not all among the voters {quorum.voter_ids}")
            if brokers.count < 0 or not (brokers.count or quorum.local_ids):
                raise ValueError("a process runs at least one controller or broker")
            if brokers.log_dir_paths is not None and brokers.count != 1:
                raise ValueError("explicit log directories are for a process running one broker")
            if not quorum.local_ids and self.storage.cluster_id is None:
                raise ValueError("a process running no controller needs the cluster id (cluster_id), "
                                 "which its brokers' log directories are formatted for")
        if quorum.resolved_kraft_version not in (0, 1):
            raise ValueError(f"kraft.version {quorum.resolved_kraft_version} is not 0 or 1")
        metadata_version_level(quorum.metadata_version)
        brokers.validate(quorum.voter_ids)
        self.topics.startup_configs()
        if brokers.log_dirs < 1:
            raise ValueError("a broker needs at least one log directory")
        if brokers.checkpoint_interval_ms < 1:
            raise ValueError(f"the offset checkpoint interval must be at least 1 ms, not "
                             f"{brokers.checkpoint_interval_ms}")

    def startup_configs(self) -> dict[str, str]:
        """The static broker configs the nodes show in DescribeConfigs: the topic defaults, the listeners'
        security, and the bootstrap servers as configured."""
        startup = self.topics.startup_configs()
        if self.network.security is not None:
            startup.update(self.network.security.static_configs())
        if self.quorum.bootstrap_servers:  # as configured: the brokers reach the voters they learn of besides
            startup["controller.quorum.bootstrap.servers"] = ",".join(
                f"{h}:{p}" for h, p in self.quorum.bootstrap_servers)
        return startup
