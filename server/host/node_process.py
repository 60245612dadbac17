"""One node per process: ``kraftwire controller``, ``kraftwire broker`` and ``kraftwire format``.

A node is configured as a Kafka node is: a ``server.properties`` file (``--config``), Kafka's
``--override KEY=VALUE``, or a flag named as the key (``--node.id 3001``); later ones win. The keys read:
``node.id``, ``process.roles`` (``controller`` or ``broker``; kraftwire runs no combined node, so a
controller and a broker are two node ids), ``listeners`` and ``advertised.listeners`` (``NAME://host:port``),
``controller.listener.names``, ``controller.quorum.voters`` (``id@host:port,...``: a static quorum) or
``controller.quorum.bootstrap.servers`` (``host:port,...``: a dynamic quorum, KIP-853, whose controllers
read the voters from their log and whose brokers ask those servers for the leader),
``metadata.log.dir`` (a controller's log; default the first of ``log.dirs``), ``log.dirs``/``log.dir`` (a
broker's log directories), ``broker.rack``, ``broker.heartbeat.interval.ms`` and
``broker.session.timeout.ms``. Other keys are named in a warning and otherwise ignored, as Kafka names
configurations it does not use. A broker follows the quorum's log over Fetch as an observer
(server/broker/metadata_follower.py); its simulated data plane spans its own process (README, differences).

The cluster id comes from the storage, as in Kafka: ``kraftwire format -t ID -c server.properties``
(``kafka-storage format``'s options) writes ``meta.properties`` (cluster id, node id, a new directory id)
into each of the node's directories, and a node refuses to start on a directory that has none. For a
dynamic quorum a controller is formatted with ``--standalone``, ``--initial-controllers
ID@HOST:PORT:DIRID,...`` (its directory id is the one named for it) or ``--no-initial-controllers``,
where the first two write the bootstrap checkpoint ``00000000000000000000-0000000000.checkpoint`` (a
header, the KRaftVersionRecord, the VotersRecord of the initial voters and a footer), as Kafka's does; the
log starts from it as from a snapshot, and its first leader writes the voters into the log. A
``--no-initial-controllers`` controller follows as an observer, found by asking the bootstrap servers
(whose Fetch answers name the leader's address, NodeEndpoints), until ``kafka-metadata-quorum
add-controller`` makes it a voter; as Kafka's, its format writes no checkpoint.
``kraftwire random-uuid`` prints a new cluster id. Every node is composed by ``Cluster``
(server/host/cluster.py), hosting just this one node; its listeners speak PLAINTEXT.
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kraftwire.codec.log_layout import PARTITION_DIR
from kraftwire.server.metadata.record_versions import DEFAULT_METADATA_VERSION, TWIN_LEVELS
from kraftwire.server.raft import StorageError, Timers
from kraftwire.server.raft.snapshots import SnapshotId, write_snapshot
from kraftwire.server.raft.storage import (META_PROPERTIES, kafka_uuid, load_meta_properties, parse_kafka_uuid,
                                           random_kafka_uuid, read_properties)
from kraftwire.server.raft.voters import ReplicaKey, SnapshotVoters, VoterNode, VoterSet
from .cluster import Cluster
from .spec import (DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_SESSION_TIMEOUT_MS, BrokerSpec, ClusterSpec, NetworkSpec,
                   QuorumSpec, SimulationSpec, StorageSpec)

logger = logging.getLogger("kraftwire")

ROLES = ("controller", "broker")
READY_TIMEOUT_S = 60.0  # a broker waits this long for the quorum to take its registration
KEYS = ("node.id", "process.roles", "listeners", "advertised.listeners", "controller.listener.names",
        "controller.quorum.voters", "controller.quorum.bootstrap.servers", "metadata.log.dir", "log.dirs", "log.dir",
        "broker.heartbeat.interval.ms", "broker.session.timeout.ms", "listener.security.protocol.map", "broker.rack")

Address = tuple[str, int]


@dataclass
class NodeConfig:
    """What a node process needs from its Kafka-style configuration."""
    node_id: int
    role: str
    listen: Address
    advertised: Address
    voters: dict[int, Address] | None
    bootstrap: list[Address]
    metadata_log_dir: Path | None
    log_dirs: list[Path]
    listener_name: str = "CONTROLLER"  # the controller listener (the first of controller.listener.names)
    rack: str | None = None
    heartbeat_interval_ms: int = DEFAULT_HEARTBEAT_INTERVAL_MS
    session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS
    unused: list[str] = field(default_factory=list)

    @property
    def directories(self) -> list[Path]:
        """The directories ``kraftwire format`` formats for this node."""
        if self.role == "controller" and self.metadata_log_dir is not None:  # (node_config requires one)
            return [self.metadata_log_dir]
        return self.log_dirs


def parse_address(text: str, what: str) -> Address:
    host, sep, port = text.strip().rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"{what}: {text!r} is not host:port")
    return host.strip("[]"), int(port)


def parse_listeners(text: str, key: str) -> dict[str, Address]:
    """``NAME://host:port,...`` (an empty host: every interface) -> {NAME: (host, port)}."""
    listeners = {}
    for entry in filter(None, (e.strip() for e in text.split(","))):
        name, sep, address = entry.partition("://")
        if not sep or not name:
            raise ValueError(f"{key}: {entry!r} is not NAME://host:port")
        if name.upper() in listeners:
            raise ValueError(f"{key}: the listener name {name} appears twice")
        host, port = parse_address(address, key)
        listeners[name.upper()] = (host or "0.0.0.0", port)
    return listeners


def parse_voters(text: str) -> dict[int, Address]:
    """``controller.quorum.voters``: ``id@host:port,...``."""
    voters = {}
    for entry in filter(None, (e.strip() for e in text.split(","))):
        node_id, sep, address = entry.partition("@")
        if not sep or not node_id.strip().isdigit():
            raise ValueError(f"controller.quorum.voters: {entry!r} is not id@host:port")
        if int(node_id) in voters:
            raise ValueError(f"controller.quorum.voters: voter {int(node_id)} appears twice")
        voters[int(node_id)] = parse_address(address, "controller.quorum.voters")
    return voters


def _positive_int(values: dict[str, str], key: str, default: int) -> int:
    text = values.get(key)
    if text is None:
        return default
    if not text.strip().isdigit() or int(text) < 1:
        raise ValueError(f"{key} must be a positive whole number, not {text!r}")
    return int(text)


def _node_id(values: dict[str, str]) -> int:
    if "node.id" not in values:
        raise ValueError("node.id is required")
    if not values["node.id"].strip().isdigit() or int(values["node.id"]) >= 1 << 31:
        raise ValueError(f"node.id must be a whole number from 0 to 2147483647, not {values['node.id']!r}")
    return int(values["node.id"])


def _check_roles(values: dict[str, str], role: str) -> None:
    """``process.roles`` must be the command's one role; PLAINTEXT is the only protocol a node process speaks."""
    roles = [r.strip() for r in values.get("process.roles", role).split(",") if r.strip()]
    if sorted(roles) == sorted(ROLES):
        raise ValueError("process.roles=broker,controller: kraftwire runs each node in one role; give the "
                         "controller and the broker node ids of their own")
    if roles != [role]:
        raise ValueError(f"process.roles is {','.join(roles)}: run `kraftwire {roles[0]}` for it"
                         if roles and roles[0] in ROLES
                         else f"process.roles must be {role}, not {values['process.roles']!r}")
    protocol_map = values.get("listener.security.protocol.map", "")
    for name, protocol in (p.split(":", 1) for p in protocol_map.split(",") if ":" in p):
        if protocol.strip().upper() != "PLAINTEXT":
            raise ValueError(f"listener.security.protocol.map: {name} is {protocol}; kraftwire's node processes "
                             "speak PLAINTEXT only (`kraftwire serve` has TLS and SASL)")


def _node_listener(values: dict[str, str], role: str) -> tuple[str, Address, Address, str]:
    """(the listener's name, where it listens, what it advertises, the controller listener's name): a
    controller's is the first listener ``controller.listener.names`` names, a broker's the first other."""
    controller_names = [n.strip().upper() for n in values.get("controller.listener.names", "").split(",") if n.strip()]
    if not controller_names:
        raise ValueError("controller.listener.names is required")
    listeners = parse_listeners(values.get("listeners", ""), "listeners")
    if role == "controller":
        names = [n for n in controller_names if n in listeners]
        if not names:
            raise ValueError(f"listeners must contain a listener named by controller.listener.names "
                             f"({','.join(controller_names)})")
    else:
        names = [n for n in listeners if n not in controller_names]
        if not names:
            raise ValueError("listeners must contain a listener for clients (one not in controller.listener.names)")
    listen = listeners[names[0]]
    advertised = parse_listeners(values.get("advertised.listeners", ""), "advertised.listeners").get(names[0], listen)
    if advertised[1] != listen[1]:
        raise ValueError(f"advertised.listeners: {names[0]} advertises port {advertised[1]} but listens on "
                         f"{listen[1]}; kraftwire advertises the port it listens on")
    return names[0], listen, advertised, controller_names[0]


def _quorum(values: dict[str, str], role: str, node_id: int) -> tuple[dict[int, Address] | None, list[Address]]:
    """(``controller.quorum.voters``, ``controller.quorum.bootstrap.servers``): one of them is required."""
    voters = parse_voters(values["controller.quorum.voters"]) if values.get("controller.quorum.voters") else None
    bootstrap = [parse_address(a, "controller.quorum.bootstrap.servers")
                 for a in values.get("controller.quorum.bootstrap.servers", "").split(",") if a.strip()]
    if voters is None and not bootstrap:
        raise ValueError(f"a {role} needs controller.quorum.voters (a static quorum) or "
                         f"controller.quorum.bootstrap.servers (a dynamic one)")
    if role == "controller" and voters is not None and node_id not in voters:
        raise ValueError(f"node.id {node_id} is not among controller.quorum.voters ({sorted(voters)})")
    if role == "broker" and voters is not None and node_id in voters:
        raise ValueError(f"node.id {node_id} is a voter: a broker needs an id of its own")
    return voters, bootstrap


def _directories(values: dict[str, str], role: str) -> tuple[Path | None, list[Path]]:
    """(``metadata.log.dir``, default the first of ``log.dirs``; ``log.dirs`` or ``log.dir``)."""
    log_dirs = [Path(d.strip()) for d in values.get("log.dirs", values.get("log.dir", "")).split(",") if d.strip()]
    given = values.get("metadata.log.dir")
    metadata_log_dir = Path(given) if given else next(iter(log_dirs), None)
    if role == "controller" and metadata_log_dir is None:
        raise ValueError("a controller needs metadata.log.dir (or log.dirs)")
    if role == "broker" and not log_dirs:
        raise ValueError("a broker needs log.dirs")
    return metadata_log_dir, log_dirs


def node_config(values: dict[str, str], role: str) -> NodeConfig:
    """Judge a node's Kafka-style settings for ``role`` (the command run); ValueError says what is wrong."""
    node_id = _node_id(values)
    _check_roles(values, role)
    _name, listen, advertised, controller_listener = _node_listener(values, role)
    voters, bootstrap = _quorum(values, role, node_id)
    metadata_log_dir, log_dirs = _directories(values, role)
    return NodeConfig(node_id, role, listen, advertised, voters, bootstrap, metadata_log_dir, log_dirs,
                      controller_listener, values.get("broker.rack") or None,
                      _positive_int(values, "broker.heartbeat.interval.ms", DEFAULT_HEARTBEAT_INTERVAL_MS),
                      _positive_int(values, "broker.session.timeout.ms", DEFAULT_SESSION_TIMEOUT_MS),
                      sorted(set(values) - set(KEYS)))


def add_node_options(p: argparse.ArgumentParser) -> None:
    """The options every node command takes: the properties file, overrides, and a flag per key."""
    p.add_argument("-c", "--config", default=None, metavar="FILE", help="a Kafka server.properties file")
    p.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                   help="a property that wins over the file (as kafka-server-start's --override)")
    for key in KEYS:
        p.add_argument(f"--{key}", dest=key, default=None, metavar="VALUE", help=f"Kafka's {key}")


def config_values(args: argparse.Namespace) -> dict[str, str]:
    """The file's properties, then the overrides, then the flags."""
    values = read_properties(Path(args.config)) if args.config else {}
    for override in args.override:
        key, sep, value = override.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--override {override!r}: expected KEY=VALUE")
        values[key.strip()] = value.strip()
    values.update({key: getattr(args, key) for key in KEYS if getattr(args, key) is not None})
    return values


def add_parsers(sub: argparse._SubParsersAction) -> dict[str, argparse.ArgumentParser]:
    parsers = {}
    for role in ROLES:
        p = parsers[role] = sub.add_parser(
            role, help=f"run one {role} node in this process, configured as a Kafka node",
            description=f"Run one {role} node, configured by a Kafka server.properties file, --override "
                        f"KEY=VALUE or a flag per key (--node.id ...); its directories must be formatted "
                        f"(kraftwire format) first.")
        add_node_options(p)
        p.add_argument("--log-level", default="INFO", help="logging level (default INFO)")
        p.add_argument("--log-format", default="text", choices=("text", "json"), help="text or JSON lines")
    controller = parsers["controller"]
    for role in ("controller", "broker"):  # a broker's metadata fetches and controller requests time out on them too
        parsers[role].add_argument("--quorum-timers", choices=("kafka", "short"), default="kafka",
                                   help="the Raft timers: Kafka's defaults, or the short ones tests use "
                                        "(default kafka)")
    parsers["broker"].add_argument("--speed", type=float, default=1.0,
                                   help="run simulated replication this many times faster than real time (default 1)")
    controller.add_argument("--metadata-version", "--release-version", dest="metadata_version",
                            default=DEFAULT_METADATA_VERSION, choices=list(TWIN_LEVELS), metavar="VERSION",
                            help=f"metadata.version written when the quorum first starts "
                                 f"(default {DEFAULT_METADATA_VERSION})")
    fmt = parsers["format"] = sub.add_parser(
        "format", help="write a node's meta.properties (cluster id, node id), as kafka-storage format does",
        description="Format the node's directories (a controller's metadata.log.dir, a broker's log.dirs) "
                    "for cluster ID, as kafka-storage format -t ID -c server.properties does.")
    add_node_options(fmt)
    fmt.add_argument("-t", "--cluster-id", required=True, help="the cluster id (kraftwire random-uuid makes one)")
    fmt.add_argument("-g", "--ignore-formatted", action="store_true",
                     help="succeed when a directory is already formatted for this cluster and node")
    quorum = fmt.add_mutually_exclusive_group()
    quorum.add_argument("-s", "--standalone", action="store_true",
                        help="a controller that is the whole initial dynamic quorum (controller.quorum.voters must "
                             "not be set; set controller.quorum.bootstrap.servers)")
    quorum.add_argument("-N", "--no-initial-controllers", action="store_true",
                        help="a node of a dynamic quorum that is not among its initial voters (a controller joins "
                             "as an observer, to be added with kafka-metadata-quorum add-controller)")
    quorum.add_argument("-I", "--initial-controllers", default=None, metavar="ID@HOST:PORT:DIRID,...",
                        help="the initial voters of a dynamic quorum, each with its metadata log directory id; the "
                             "same for every node")
    sub.add_parser("random-uuid", help="print a new cluster id, as kafka-storage random-uuid does")
    return parsers


def random_uuid() -> int:
    print(kafka_uuid(random_kafka_uuid()))
    return 0


def parse_initial_controllers(text: str, listener: str) -> VoterSet:
    """``--initial-controllers``: ``id@host:port:directory-id,...`` (a host in brackets may hold colons),
    as Kafka's DynamicVoters parses it, into the voter set of the bootstrap checkpoint."""
    voters: list[VoterNode] = []
    for entry in filter(None, (e.strip() for e in text.split(","))):
        node_id, _, rest = entry.partition("@")
        address, _, directory = rest.rpartition(":")
        try:
            host, port = parse_address(address, "--initial-controllers")
            directory_id = parse_kafka_uuid(directory)
            if not node_id.isdigit():
                raise ValueError(node_id)
        except ValueError:
            raise ValueError(f"--initial-controllers: {entry!r} is not id@host:port:directory-id") from None
        if any(v.key.id == int(node_id) for v in voters):
            raise ValueError(f"--initial-controllers: controller {int(node_id)} appears twice")
        voters.append(VoterNode(ReplicaKey(int(node_id), directory_id), ((listener, host, port),)))
    if not voters:
        raise ValueError("--initial-controllers names no controller")
    return VoterSet(tuple(sorted(voters, key=lambda v: v.key.id)))


def initial_quorum(args: argparse.Namespace, config: NodeConfig) -> tuple[SnapshotVoters | None, uuid.UUID | None]:
    """What the bootstrap checkpoint of a dynamic quorum holds (None for a static quorum), and the
    metadata log directory id the voter set names for this node (None: a new one), with Kafka's refusals."""
    dynamic = args.standalone or args.no_initial_controllers or args.initial_controllers is not None
    if config.voters is not None and dynamic:
        raise ValueError("You cannot specify controller.quorum.voters and format the node with "
                         "--initial-controllers or --standalone. If you want to use dynamic quorum, please remove "
                         "controller.quorum.voters and specify controller.quorum.bootstrap.servers instead.")
    if config.role == "controller" and config.voters is None and not dynamic:
        raise ValueError("Because controller.quorum.voters is not set on this controller, you must specify one of "
                         "the following: --standalone, --initial-controllers, or --no-initial-controllers.")
    if args.standalone and config.role != "controller":
        raise ValueError("You can only use --standalone on a controller.")
    if not dynamic or args.no_initial_controllers:  # Kafka writes no checkpoint for an observer to be
        return None, None
    if args.standalone:
        host = config.advertised[0] if config.advertised[0] not in ("", "0.0.0.0") else "localhost"
        voters = VoterSet((VoterNode(ReplicaKey(config.node_id, random_kafka_uuid()),
                                     ((config.listener_name, host, config.advertised[1]),)),))
    else:
        voters = parse_initial_controllers(args.initial_controllers, config.listener_name)
    mine = voters.node(config.node_id)
    directory_id = mine.key.directory_id if mine is not None else None
    return SnapshotVoters(1, voters), directory_id if isinstance(directory_id, uuid.UUID) else None


def write_bootstrap_checkpoint(directory: Path, voters: SnapshotVoters) -> Path:
    """``__cluster_metadata-0/00000000000000000000-0000000000.checkpoint``, as ``kafka-storage format``
    writes it for a dynamic quorum: the header, the KRaftVersionRecord and VotersRecord, the footer. Kafka's
    also holds the bootstrap metadata records (metadata.version); kraftwire's controller writes those
    when the quorum first starts (``--metadata-version``)."""
    partition = directory / PARTITION_DIR
    partition.mkdir(parents=True, exist_ok=True)
    now = int(time.time() * 1000)
    return write_snapshot(partition, SnapshotId(0, 0), now, now, (), voters.control_records())


def _uuids(first: list[uuid.UUID]) -> Callable[[], uuid.UUID]:
    """New ids: those of ``first`` (a directory id the voter set names), then random ones."""
    ids = iter(first)
    return lambda: next(ids, None) or random_kafka_uuid()


def format_storage(args: argparse.Namespace) -> int:
    """``kraftwire format``: 0 once every directory is formatted, 1 (with the reason) otherwise."""
    try:
        values = config_values(args)
        if values.get("process.roles", "").strip() not in ROLES:
            raise ValueError("process.roles must say which node to format: controller or broker")
        config = node_config(values, values["process.roles"].strip())
        parse_kafka_uuid(args.cluster_id)
        checkpoint, directory_id = initial_quorum(args, config)
        for directory in config.directories:
            formatted = (directory / META_PROPERTIES).exists()
            if formatted and not args.ignore_formatted:
                raise StorageError(f"{directory} is already formatted (use --ignore-formatted to accept that)")
            load_meta_properties(directory, args.cluster_id, config.node_id, _uuids([] if directory_id is None
                                                                                    else [directory_id]))
            if checkpoint is not None and config.role == "controller" and not formatted:
                write_bootstrap_checkpoint(directory, checkpoint)
    except (ValueError, StorageError, OSError) as exc:
        print(f"kraftwire format: {exc}")
        return 1
    for directory in config.directories:
        print(f"Formatted {directory} for cluster {args.cluster_id}, node {config.node_id}")
    return 0


def formatted_cluster_id(config: NodeConfig) -> str | None:
    """The cluster id ``kraftwire format`` wrote (the same in every directory of the node)."""
    ids = set()
    for directory in config.directories:
        if not (directory / META_PROPERTIES).exists():
            raise StorageError(f"no {META_PROPERTIES} in {directory}: run `kraftwire format -t CLUSTER_ID "
                               f"-c CONFIG` first")
        ids.add(read_properties(directory / META_PROPERTIES).get("cluster.id"))
    if len(ids) != 1:
        raise StorageError(f"the node's directories are formatted for different clusters: {sorted(map(str, ids))}")
    return ids.pop()


def controller_spec(args: argparse.Namespace, config: NodeConfig) -> ClusterSpec:
    """One controller node: a cluster spec hosting that voter alone."""
    return ClusterSpec(
        brokers=BrokerSpec(count=0),
        quorum=QuorumSpec(count=1, port=config.listen[1], session_timeout_ms=config.session_timeout_ms,
                          timers=Timers.kafka_defaults() if args.quorum_timers == "kafka" else Timers(),
                          metadata_version=args.metadata_version, voters=config.voters,
                          local_controllers=(config.node_id,),
                          bootstrap_servers=tuple(config.bootstrap) if config.voters is None else ()),
        storage=StorageSpec(data_dir=config.metadata_log_dir, cluster_id=formatted_cluster_id(config)),
        network=NetworkSpec(host=config.listen[0]))


def broker_spec(args: argparse.Namespace, config: NodeConfig) -> ClusterSpec:
    """One broker node: a cluster spec hosting that broker alone, following the quorum's log over Fetch."""
    return ClusterSpec(
        brokers=BrokerSpec(count=1, node_ids=(config.node_id,), racks=(config.rack,), port=config.listen[1],
                           advertised_host=config.advertised[0], heartbeat_interval_ms=config.heartbeat_interval_ms,
                           log_dirs=len(config.log_dirs), log_dir_paths=tuple(config.log_dirs)),
        quorum=QuorumSpec(voters=config.voters,
                          timers=Timers.kafka_defaults() if args.quorum_timers == "kafka" else Timers(),
                          bootstrap_servers=tuple(config.bootstrap) if config.voters is None else ()),
        storage=StorageSpec(cluster_id=formatted_cluster_id(config)),
        simulation=SimulationSpec(speed=args.speed),
        network=NetworkSpec(host=config.listen[0]))


def controller_cluster(args: argparse.Namespace, config: NodeConfig) -> Cluster:
    """The composition of one controller node: a ``Cluster`` hosting that voter alone."""
    return Cluster.from_spec(controller_spec(args, config))


def broker_cluster(args: argparse.Namespace, config: NodeConfig) -> Cluster:
    """The composition of one broker node: a ``Cluster`` hosting that broker alone, following the
    quorum's log over Fetch."""
    return Cluster.from_spec(broker_spec(args, config))


def stop_on_signals() -> asyncio.Event:
    """An event SIGTERM and SIGINT set from now on: installed before a process says it is ready, so a
    signal that follows the word stops it cleanly."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    return stop


async def run_until_stopped(cluster: Cluster, failure_exit_delay_ms: int, exit_log_failed: int,
                            stop: asyncio.Event | None = None) -> int:
    """Serve until SIGTERM or SIGINT (0), or until the metadata log fails (``exit_log_failed`` after the
    delay, answering writes NOT_CONTROLLER meanwhile); then stop the cluster. ``stop``: the event of
    ``stop_on_signals``, when it was installed earlier."""
    stop = stop_on_signals() if stop is None else stop
    stopped, failed = asyncio.ensure_future(stop.wait()), asyncio.ensure_future(cluster.failed.wait())
    await asyncio.wait([stopped, failed], return_when=asyncio.FIRST_COMPLETED)
    status = 0
    if cluster.failure is not None:
        logger.critical("the metadata log directory failed (%s): answering writes with NOT_CONTROLLER, stopping "
                        "in %d ms with exit status %d; restart once the directory is usable again",
                        cluster.failure, failure_exit_delay_ms, exit_log_failed)
        await asyncio.wait([stopped], timeout=failure_exit_delay_ms / 1000)
        status = exit_log_failed
    stopped.cancel()
    failed.cancel()
    await cluster.stop()
    return status


async def run_node(args: argparse.Namespace, role: str, failure_exit_delay_ms: int, exit_log_failed: int) -> int:
    """``kraftwire controller`` / ``kraftwire broker``: 1 when the node cannot start."""
    try:
        config = node_config(config_values(args), role)
        if config.unused:
            logger.warning("these configurations were supplied but are not used: %s", ", ".join(config.unused))
        cluster = controller_cluster(args, config) if role == "controller" else broker_cluster(args, config)
        await cluster.start(READY_TIMEOUT_S)
    except (StorageError, ValueError, OSError) as exc:
        logger.critical("cannot start: %s", exc)
        return 1
    node = cluster.controller_node if role == "controller" else cluster.brokers[0]
    stop = stop_on_signals()
    print(f"kraftwire {role} {config.node_id} of cluster {cluster.metadata.cluster_id} ready on "
          f"{node.host}:{node.port}", flush=True)
    return await run_until_stopped(cluster, failure_exit_delay_ms, exit_log_failed, stop)
