"""The ``kraftwire`` command: ``kraftwire serve`` runs the embedded default cluster (settings from flags,
``KRAFTWIRE_*`` variables and ``kraftwire.toml``: server/host/config_file.py); it exits 1 when it cannot
start (a port in use, found before the data directory is touched; a locked or damaged data directory)
and 3 when its metadata log directory fails while serving; ``serve --from-log DIR [--sizes FILE]`` boots a
production twin of a real cluster from a copy of its metadata log (server/host/twin.py); ``kraftwire healthcheck``
asks a broker for its ApiVersions; ``kraftwire controller``/``broker`` run one node per process, configured
as a Kafka node (server/host/node_process.py), after ``kraftwire format -t ID -c server.properties``;
``kraftwire rehearse`` runs a reassignment plan on a twin on the virtual clock and reports
(server/host/rehearse.py); ``kraftwire log dump|verify DIR`` reads a metadata log directory offline;
``kraftwire audit LOG_DIR... --out OUT`` audits one with Spark (audit/README.md)."""
from __future__ import annotations

import argparse
import errno
import logging
import os
import re
import resource
import socket
import sys
from pathlib import Path

import uvloop

from . import config_file, healthcheck, node_process, rehearse
from .cluster import Cluster
from .security_settings import Security, parse_super_users
from .spec import (BrokerSpec, ClusterSpec, NetworkSpec, QuorumSpec, ServicesSpec, SimulationSpec, StorageSpec,
                   TopicDefaults)
from .twin import TwinSource, read_source
from kraftwire.server.wire.security import (DEFAULT_FAILED_AUTHENTICATION_DELAY_MS, MECHANISMS, parse_add_scram,
                                            parse_protocol_map)
from kraftwire.server.broker.checkpoints import CHECKPOINT_INTERVAL_MS
from kraftwire.server.metadata import redaction
from kraftwire.server.metadata.record_versions import DEFAULT_METADATA_VERSION, TWIN_LEVELS, level_name
from kraftwire.server.raft import RaftConfig, StorageError, Timers
from kraftwire.server.raft import tools as log_tools
from kraftwire.server.wire.transport import TransportLimits

Subcommands = argparse._SubParsersAction  # what ``add_subparsers`` returns
EXIT_LOG_FAILED = 3  # the metadata log directory failed while serving
DEFAULT_FAILURE_EXIT_DELAY_MS = 2000


def node_ids(text: str) -> list[int] | int:
    """``0,1,2`` (a list) or ``0`` (the first id); ValueError otherwise (argparse names the option)."""
    ids = [int(part) for part in text.split(",")]
    return ids if "," in text else ids[0]


def node_id_list(node_ids: list[int] | int | None, brokers: int) -> list[int] | None:
    return list(range(node_ids, node_ids + brokers)) if isinstance(node_ids, int) else node_ids


def _serve_parser(sub: Subcommands) -> argparse.ArgumentParser:
    p = sub.add_parser("serve", help="run an embedded cluster: a controller quorum and N simulated brokers",
                       description="Run a controller quorum (one controller by default) and N simulated "
                                   "brokers in this process. The i-th broker (i = 1..N) listens on --host at "
                                   "--port + i - 1.")
    _node_options(p)
    _storage_options(p)
    _service_options(p)
    _security_options(p)
    _metadata_log_options(p)
    _transport_options(p)
    p.add_argument("--failure-exit-delay-ms", type=int, default=DEFAULT_FAILURE_EXIT_DELAY_MS,
                   help="once the metadata log cannot be written, keep answering (writes NOT_CONTROLLER, ApiVersions "
                        f"KAFKA_STORAGE_ERROR) this long, then stop with exit status {EXIT_LOG_FAILED} "
                        f"(default {DEFAULT_FAILURE_EXIT_DELAY_MS})")
    return p


def _node_options(p: argparse.ArgumentParser) -> None:
    """The brokers and controllers, their addresses and the topic defaults."""
    p.add_argument("--brokers", type=int, default=3, help="number of simulated brokers (default 3)")
    p.add_argument("--node-ids", type=node_ids, default=None,
                   help="the brokers' node ids: a list (0,1,2) or the first id (0 gives 0..N-1); default 1..N, "
                        "as Kafka's sample server.properties starts at node.id=1")
    p.add_argument("--auto-create-topics", action="store_true",
                   help="Kafka's auto.create.topics.enable: a Metadata request that allows it creates the "
                        "missing topics it names (default off, where Kafka's default is on: see README)")
    p.add_argument("--metadata-version", "--release-version", dest="metadata_version", default=None,
                   choices=list(TWIN_LEVELS), metavar="VERSION",
                   help=f"metadata.version written at the first start (as kafka-storage format "
                        f"--release-version), choosing the behaviours and record versions of that level, any "
                        f"KRaft production level from 3.3-IV3 to 4.4-IV2 (default {DEFAULT_METADATA_VERSION}: "
                        f"see README, Metadata versions); a data directory keeps the level its log holds")
    p.add_argument("--num-partitions", type=int, default=None,
                   help="Kafka's num.partitions: partitions of topics created without a count (default 1)")
    p.add_argument("--default-replication-factor", type=int, default=None,
                   help="Kafka's default.replication.factor: replicas of topics created without one (default 1)")
    p.add_argument("--host", default="127.0.0.1", help="address every listener binds to (default 127.0.0.1)")
    p.add_argument("--advertised-host", default=None,
                   help="address the brokers tell clients to connect to (default: --host)")
    p.add_argument("--port", type=int, default=9092, help="port of broker 1; broker i uses port + i - 1 (default 9092)")
    p.add_argument("--controller-port", type=int, default=9091,
                   help="port of the controller listener; controller k (from 0) uses port - k (default 9091)")
    p.add_argument("--controllers", type=int, default=1,
                   help="controllers in the Raft quorum (ids 3000, 3001, ...; several keep their logs in "
                        "DATA_DIR/controller-ID) (default 1)")
    p.add_argument("--kraft-version", type=int, choices=(0, 1), default=None,
                   help="1: dynamic voters (KIP-853), as kafka-storage format --standalone/--initial-controllers; "
                        "0: a static set, as controller.quorum.voters (default 1; a data directory keeps the "
                        "kraft.version it first started with)")
    p.add_argument("--quorum-timers", choices=("kafka", "short"), default="kafka",
                   help="the controllers' Raft timers: Kafka's defaults, or the short ones tests use (default kafka)")


def _storage_options(p: argparse.ArgumentParser) -> None:
    """The data directory, the brokers' log directories, the cluster id and a twin's source."""
    p.add_argument("--data-dir", default="./kraftwire-data", help="where state is kept (default ./kraftwire-data)")
    p.add_argument("--log-dirs", type=int, default=1,
                   help="log directories per broker (JBOD), at DATA_DIR/broker-ID/logs-K (default 1)")
    p.add_argument("--log-dir-capacity-bytes", type=int, default=None,
                   help="simulated capacity of each log directory: one whose bytes reach it goes offline, as a "
                        "full disk takes Kafka's (default: none; 1 TiB reported, never full)")
    p.add_argument("--log-dir-capacities", default="", metavar="BROKER:K=BYTES,...",
                   help="per-directory overrides of --log-dir-capacity-bytes: broker id, the directory's index "
                        "from 0, bytes (e.g. 1:0=500000000000,2:1=2000000000000)")
    p.add_argument("--log-flush-offset-checkpoint-interval-ms", type=int, default=CHECKPOINT_INTERVAL_MS,
                   help="how often each broker writes its logs' sizes to its log directories' "
                        "recovery-point-offset-checkpoint (Kafka's log.flush.offset.checkpoint.interval.ms, "
                        "default 60000)")
    p.add_argument("--cluster-id", default=None, help="cluster id (default: a random one)")
    p.add_argument("--from-log", default=None, metavar="DIR",
                   help="production twin: boot a new --data-dir from a copy of a real cluster's metadata log "
                        "(__cluster_metadata-0 or its parent; only read): its cluster id, topics, configs and "
                        "brokers, simulated at their registered ids, racks and log directories (--brokers, "
                        "--node-ids and --log-dirs then come from the log)")
    p.add_argument("--sizes", default=None, metavar="FILE",
                   help="with --from-log: the output of kafka-log-dirs --describe, giving every partition its "
                        "size (partitions it does not list are empty)")
    p.add_argument("--sizes-later", default=None, metavar="FILE",
                   help="with --sizes: a second kafka-log-dirs --describe taken --sizes-interval seconds later; "
                        "each partition's growth between the two is its produce rate (the twin's ingress)")
    p.add_argument("--sizes-interval", type=float, default=None, metavar="SECONDS",
                   help="the seconds between the --sizes and --sizes-later snapshots")
    p.add_argument("--rates", default=None, metavar="FILE",
                   help="with --from-log: produce rates as JSON, {\"topic\": bytes-per-second} or "
                        "{\"topic\": {\"partition\": bytes-per-second}}")


def _service_options(p: argparse.ArgumentParser) -> None:
    """The simulation, logging, and the HTTP services (metrics, control plane)."""
    p.add_argument("--speed", type=float, default=1.0,
                   help="run simulated replication (data movement) this many times faster than real time (default 1)")
    p.add_argument("--log-level", default="INFO", help="logging level (default INFO)")
    p.add_argument("--log-format", default="text", choices=config_file.LOG_FORMATS,
                   help="text lines, or one JSON object per line (default text)")
    p.add_argument("--metrics-port", type=int, default=None,
                   help="serve Prometheus metrics at http://HOST:PORT/metrics (default: off; 0: any free port)")
    p.add_argument("--control-port", type=int, default=None,
                   help="serve the HTTP control plane and the live view at http://HOST:PORT/ "
                        "(default: off; 0: any free port)")
    p.add_argument("--throttle-auto-remove", action=argparse.BooleanOptionalAction, default=None,
                   help="set the cluster-default broker config kraftwire.throttle.auto.remove.enable at start: "
                        "remove a reassignment's throttle configs once no reassignment needs them "
                        "(default: as the metadata log has it, off in a new cluster)")
    p.add_argument("--seed", type=int, default=None,
                   help="deterministic mode: seed every random choice (placement, topic ids) and id; the "
                        "brokers start one after another (default: random)")
    p.add_argument("--virtual-clock", action="store_true", default=False,
                   help="simulated data movement waits for POST /api/clock/advance instead of following "
                        "the wall clock (with --control-port)")
    p.add_argument("--control-token", default=None,
                   help="bearer token the control plane's state-changing calls need (default: generated and printed)")


def _metadata_log_options(p: argparse.ArgumentParser) -> None:
    """The metadata log's segments, snapshots and retention."""
    defaults = RaftConfig()
    p.add_argument("--log-segment-bytes", type=int, default=defaults.segment_bytes,
                   help="roll metadata log segments at this size (default 1 GiB)")
    p.add_argument("--snapshot-every-records", type=int, default=None,
                   help="snapshot the metadata image after this many records (default: by bytes only)")
    p.add_argument("--snapshot-every-bytes", type=int, default=defaults.snapshot_every_bytes,
                   help="snapshot the metadata image after this many bytes of records (default 20 MiB)")
    p.add_argument("--log-retention-bytes", type=int, default=None,
                   help="retire the oldest segments below the newest snapshot while the log is larger "
                        "(default: keep every segment)")
    p.add_argument("--log-retention-ms", type=int, default=None,
                   help="retire segments below the newest snapshot older than this (default: keep every segment)")
    p.add_argument("--log-archive-dir", default=None,
                   help="move retired segments and snapshots here instead of deleting them")


def _transport_options(p: argparse.ArgumentParser) -> None:
    """Kafka's socket-server limits, over every listener."""
    limits = TransportLimits()
    p.add_argument("--socket-request-max-bytes", type=int, default=limits.socket_request_max_bytes,
                   help="socket.request.max.bytes: close a connection sending a larger frame (default 100 MiB)")
    p.add_argument("--queued-max-request-bytes", type=int, default=limits.queued_max_request_bytes,
                   help="queued.max.request.bytes: bytes of frames still arriving, over all connections, before "
                        "connections stop being read; -1: unbounded (default 100 MiB; Kafka's is -1)")
    p.add_argument("--connections-max-idle-ms", type=int, default=limits.connections_max_idle_ms,
                   help="connections.max.idle.ms: close connections idle this long, half-sent frames included "
                        "(default 600000)")
    p.add_argument("--max-connections", type=int, default=None,
                   help="max.connections: close new connections over this many, over all listeners "
                        "(default: the file-descriptor limit less 128)")
    p.add_argument("--max-connections-per-ip", type=int, default=None,
                   help="max.connections.per.ip: close new connections from an address over this many "
                        "(default: unbounded)")


def _security_options(p: argparse.ArgumentParser) -> None:
    """Kafka's listener security settings (server/host/security_settings.py); all off by default."""
    p.add_argument("--listener-name", default="PLAINTEXT",
                   help="the brokers' listener name; its security protocol comes from the map (default PLAINTEXT)")
    p.add_argument("--controller-listener-name", default="CONTROLLER",
                   help="the controller's listener name (default CONTROLLER, which is PLAINTEXT unless mapped)")
    p.add_argument("--listener-security-protocol-map", default="",
                   help="NAME:PROTOCOL,... with PROTOCOL one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL "
                        "(listener.security.protocol.map), e.g. CLIENT:SASL_SSL,CONTROLLER:SASL_SSL")
    p.add_argument("--ssl-certfile", default=None, help="PEM certificate chain of the TLS listeners")
    p.add_argument("--ssl-keyfile", default=None, help="PEM private key (default: in --ssl-certfile)")
    p.add_argument("--ssl-cafile", default=None,
                   help="PEM CA certificates trusted for client certificates and by brokers for the controller's")
    p.add_argument("--ssl-client-auth", default="none", choices=("none", "requested", "required"),
                   help="ask TLS clients for a certificate; its subject is the principal (default none)")
    p.add_argument("--sasl-enabled-mechanisms", default=",".join(MECHANISMS),
                   help=f"comma-separated SASL mechanisms (default {','.join(MECHANISMS)})")
    p.add_argument("--sasl-plain-users", default="",
                   help="PLAIN users as USER:PASSWORD,... (as Kafka's JAAS user_<name> entries)")
    p.add_argument("--add-scram", default="", action=_RepeatedEntries,
                   help="a SCRAM user, as kafka-storage format --add-scram takes it: "
                        "SCRAM-SHA-256=[name=USER,password=PASSWORD]; repeatable, every one kept (salted at start; "
                        "the password is not kept). Any local user can read a command line in /proc: prefer "
                        "--add-scram-file or KRAFTWIRE_ADD_SCRAM")
    p.add_argument("--add-scram-file", default=None,
                   help="a file of SCRAM users, one SCRAM-SHA-256=[name=USER,password=PASSWORD] a line "
                        "(# comments and blank lines skipped), added to --add-scram's")
    p.add_argument("--failed-authentication-delay-ms", type=int, default=DEFAULT_FAILED_AUTHENTICATION_DELAY_MS,
                   help="close a connection that failed authentication this long after the answer (default 100)")
    p.add_argument("--authorizer", action="store_true",
                   help="check every request against ACLs (Kafka's StandardAuthorizer; default: everything allowed)")
    p.add_argument("--super-users", default="",
                   help="principals allowed everything (super.users), separated by ; or by , before the next "
                        "User: (User:admin,User:ops or User:CN=node,O=ops;User:admin)")
    p.add_argument("--allow-everyone-if-no-acl-found", action="store_true",
                   help="allow a request on a resource without any ACL (default: deny it)")


_SCRAM_ENTRY = r"[^\s;]*?=\[[^\]]*\]"


class _RepeatedEntries(argparse.Action):
    """A flag that may be given many times, every value kept (entries joined by ``;``). The first on the
    command line replaces what the config file or environment set, as every flag overrides them."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        seen = f"_{self.dest}_from_flags"
        earlier = getattr(namespace, self.dest) if getattr(namespace, seen, False) else ""
        setattr(namespace, self.dest, f"{earlier};{values}" if earlier else str(values))
        setattr(namespace, seen, True)


def _scram_entries(args: argparse.Namespace) -> list[tuple[str, str, str, int]]:
    """Every SCRAM user of --add-scram (flags, file or KRAFTWIRE_ADD_SCRAM) and of --add-scram-file."""
    texts = [args.add_scram]
    if args.add_scram_file:
        try:
            lines = Path(args.add_scram_file).read_text().splitlines()
        except OSError as exc:
            raise ValueError(f"cannot read --add-scram-file {args.add_scram_file}: {exc.strerror}") from None
        texts += [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    for text in texts:
        if re.sub(_SCRAM_ENTRY, "", text).strip(" ;\t\n"):
            raise ValueError("bad --add-scram: expected SCRAM-SHA-256=[name=USER,password=PASSWORD] entries")
    return [parse_add_scram(entry) for text in texts for entry in re.findall(_SCRAM_ENTRY, text)]


def _security(args: argparse.Namespace) -> Security | None:
    """The listeners' security, or None when every listener is PLAINTEXT and nothing asks for more."""
    protocol_map = parse_protocol_map(args.listener_security_protocol_map)
    asked = (protocol_map or args.listener_name.upper() != "PLAINTEXT" or args.ssl_certfile or args.sasl_plain_users
             or args.add_scram or args.add_scram_file or args.authorizer)
    if not asked:
        return None
    plain = {}
    for entry in filter(None, args.sasl_plain_users.split(",")):
        user, sep, password = entry.partition(":")
        if not sep or not user:
            raise ValueError(f"bad --sasl-plain-users entry {entry!r}: expected USER:PASSWORD")
        plain[user] = password
    scram = _scram_entries(args)
    return Security(listener_name=args.listener_name, controller_listener_name=args.controller_listener_name,
                    protocol_map=protocol_map, certfile=args.ssl_certfile, keyfile=args.ssl_keyfile,
                    cafile=args.ssl_cafile, client_auth=args.ssl_client_auth,
                    mechanisms=tuple(m.strip().upper() for m in args.sasl_enabled_mechanisms.split(",") if m.strip()),
                    plain_users=plain, scram_users=scram,
                    failed_authentication_delay_ms=args.failed_authentication_delay_ms, authorizer=args.authorizer,
                    super_users=parse_super_users(args.super_users),
                    allow_everyone_if_no_acl_found=args.allow_everyone_if_no_acl_found)


def _transport_limits(args: argparse.Namespace) -> TransportLimits:
    queued = args.queued_max_request_bytes
    return TransportLimits(socket_request_max_bytes=args.socket_request_max_bytes,
                           queued_max_request_bytes=None if queued == -1 else queued,
                           connections_max_idle_ms=args.connections_max_idle_ms,
                           max_connections=args.max_connections, max_connections_per_ip=args.max_connections_per_ip)


def log_dir_capacities(text: str) -> tuple[tuple[int, int, int], ...]:
    """``--log-dir-capacities``: BROKER:K=BYTES items, comma-separated. ValueError for another shape."""
    found = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        where, sep, capacity = item.partition("=")
        broker, colon, index = where.partition(":")
        if not (sep and colon and broker.strip().isdigit() and index.strip().isdigit() and capacity.strip().isdigit()):
            raise ValueError(f"--log-dir-capacities takes BROKER:K=BYTES items, not {item!r}")
        found.append((int(broker), int(index), int(capacity)))
    return tuple(found)


def cluster_spec(args: argparse.Namespace, twin: TwinSource | None = None) -> ClusterSpec:
    """The cluster ``kraftwire serve`` runs, from its settings (flags, ``KRAFTWIRE_*``, kraftwire.toml);
    ``twin``: the source log already read for ``--from-log``. ValueError for a bad security setting (the
    others are judged by ``ClusterSpec.validate`` as the cluster is built)."""
    ids = node_id_list(args.node_ids, args.brokers)
    return ClusterSpec(
        brokers=BrokerSpec(count=args.brokers, node_ids=None if ids is None else tuple(ids), port=args.port,
                           advertised_host=args.advertised_host, log_dirs=args.log_dirs,
                           log_dir_capacity_bytes=args.log_dir_capacity_bytes,
                           log_dir_capacities=log_dir_capacities(args.log_dir_capacities),
                           checkpoint_interval_ms=args.log_flush_offset_checkpoint_interval_ms),
        topics=TopicDefaults(auto_create_topics=args.auto_create_topics, num_partitions=args.num_partitions,
                             default_replication_factor=args.default_replication_factor),
        quorum=QuorumSpec(count=args.controllers, port=args.controller_port, log_config=_log_config(args),
                          timers=Timers.kafka_defaults() if args.quorum_timers == "kafka" else Timers(),
                          kraft_version=args.kraft_version,
                          metadata_version=args.metadata_version or DEFAULT_METADATA_VERSION),
        storage=StorageSpec(data_dir=Path(args.data_dir), cluster_id=args.cluster_id,
                            from_log=twin if twin is not None else args.from_log, sizes=args.sizes,
                            sizes_later=args.sizes_later, sizes_interval_s=args.sizes_interval, rates=args.rates),
        simulation=SimulationSpec(speed=args.speed, virtual_clock=args.virtual_clock, seed=args.seed,
                                  throttle_auto_remove=args.throttle_auto_remove),
        network=NetworkSpec(host=args.host, transport_limits=_transport_limits(args), security=_security(args)),
        services=ServicesSpec(metrics_port=args.metrics_port, control_port=args.control_port,
                              control_token=args.control_token))


def _log_config(args: argparse.Namespace) -> RaftConfig:
    return RaftConfig(segment_bytes=args.log_segment_bytes, snapshot_every_records=args.snapshot_every_records,
                      snapshot_every_bytes=args.snapshot_every_bytes, retention_bytes=args.log_retention_bytes,
                      retention_ms=args.log_retention_ms, archive_dir=args.log_archive_dir)


def _ports_in_use(args: argparse.Namespace) -> str | None:
    """The first fixed port (not 0) another socket holds, said in one line; checked before the data
    directory is touched. (A port taken between this check and the bind still stops start-up, later.)"""
    wanted = [("controller" if args.controllers == 1 else f"controller {3000 + k}", args.controller_port - k)
              for k in range(args.controllers) if args.controller_port]
    wanted += [(f"broker {i}", args.port + i - 1) for i in range(1, args.brokers + 1)] if args.port else []
    wanted += [(name, port) for name, port in (("metrics", args.metrics_port), ("control plane", args.control_port))
               if port]
    for name, port in wanted:
        if not port:
            continue
        with socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((args.host, port))
            except OSError as exc:
                return f"the {name} port {args.host}:{port} is not available: {exc.strerror}"
    return None


def _raise_descriptor_limit() -> None:
    """Take the hard file-descriptor limit as the soft one: max.connections follows it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            pass


_PATH_PROBLEMS = {errno.EEXIST: "it exists and is not a directory", errno.ENOTDIR: "a part of it is not a directory",
                  errno.EACCES: "permission denied (the user running kraftwire may not write there)",
                  errno.EPERM: "operation not permitted", errno.EROFS: "the file system is read-only",
                  errno.ENOSPC: "no space left on the device", errno.ENOENT: "it does not exist and cannot be created",
                  errno.EISDIR: "it is a directory where a file was expected"}


def why_not(exc: BaseException, data_dir: str) -> str:
    """The one line ``cannot start`` gives: for a file-system error on a path, which path and what is wrong
    with it, in words (not ``[Errno 17] File exists: 'x'``); anything else as it says itself."""
    if not isinstance(exc, OSError) or exc.filename is None:
        return str(exc)
    path = Path(os.fsdecode(exc.filename))
    reason = _PATH_PROBLEMS.get(exc.errno or 0, (exc.strerror or str(exc)).lower())
    if path == Path(data_dir):
        return f"the data directory {data_dir} (--data-dir): {reason}"
    inside = Path(data_dir) in path.parents
    return f"{path}{' (in the data directory --data-dir)' if inside else ''}: {reason}"


def _metadata_version_kept(cluster: Cluster, asked: str | None) -> str | None:
    """The line saying that ``--metadata-version`` was not applied, when the log already held another level
    (it is written at the first start only, as kafka-storage format writes it once), else None."""
    level = cluster.controller.committed.metadata_version_level
    if asked is None or TWIN_LEVELS[asked] == level:
        return None
    held = level_name(level)
    return (f"--metadata-version {asked} not applied: the metadata log in {cluster.data_dir} holds metadata.version "
            f"{held}, written at its first start (kafka-features upgrade/downgrade changes it)")


async def _serve(args: argparse.Namespace) -> int:
    logger = logging.getLogger("kraftwire")
    twin = None
    if args.from_log is not None:
        try:
            twin = read_source(args.from_log)
        except StorageError as exc:
            logger.critical("cannot start: %s", exc)
            return 1
        args.brokers = len(twin.node_ids)
    in_use = _ports_in_use(args)
    if in_use is not None:
        logger.critical("cannot start: %s", in_use)
        return 1
    _raise_descriptor_limit()
    if getattr(args, "_add_scram_from_flags", False):
        logger.warning("--add-scram passwords on the command line can be read by every local user "
                       "(/proc/<pid>/cmdline, ps): prefer --add-scram-file or KRAFTWIRE_ADD_SCRAM")
    try:
        cluster = Cluster.from_spec(cluster_spec(args, twin))
    except (StorageError, ValueError, OSError) as exc:  # bad storage or setting, an unreadable certificate
        logger.critical("cannot start: %s", why_not(exc, args.data_dir))
        return 1
    del twin  # the source's image, seeded into the data directory by now, is not kept while serving
    try:
        await cluster.start()
    except (StorageError, ValueError, OSError) as exc:  # damaged storage, a port taken since the check, a certificate
        logger.critical("cannot start: %s", why_not(exc, args.data_dir))
        await cluster.stop()  # what had started (listeners, controllers, brokers' loops) stops: the process exits
        return 1
    kept = _metadata_version_kept(cluster, args.metadata_version)
    if kept is not None:
        logger.warning("%s", kept)
    logger.info("kraftwire cluster %s ready: brokers %s, controller %s:%d", cluster.controller.cluster_id,
                cluster.bootstrap, args.host, cluster.controller_node.port)
    for name, server in (("metrics", cluster.metrics_server), ("control plane and live view", cluster.control_server)):
        if server is not None:
            logger.info("%s on %s", name, server.url)
    if cluster.control_server is not None and args.control_token is None:
        print(f"control plane token: {cluster.control_token}", flush=True)
    stop = node_process.stop_on_signals()
    print(f"kraftwire ready on {cluster.bootstrap}", flush=True)  # a SIGTERM from now on stops it cleanly
    return await node_process.run_until_stopped(cluster, args.failure_exit_delay_ms, EXIT_LOG_FAILED, stop)


def _log_parser(sub: Subcommands) -> None:
    p = sub.add_parser("log", help="read a metadata log directory offline (dump, verify)")
    tools = p.add_subparsers(dest="log_command", required=True)
    dump = tools.add_parser("dump", help="print every record of every snapshot and segment, control records too")
    dump.add_argument("dir", help="the __cluster_metadata-0 directory, or the data directory holding it")
    dump.add_argument("--json", action="store_true", help="one JSON object per record instead of text lines")
    dump.add_argument("--show-secrets", action="store_true",
                      help="print SCRAM salts and keys and sensitive config values as written (redacted otherwise)")
    verify = tools.add_parser("verify", help="judge the directory as start-up does (its own recovery, writing "
                              "nothing): exit 1 exactly when start-up would refuse")
    verify.add_argument("dir", help="the __cluster_metadata-0 directory, or the data directory holding it")


def _audit_parser(sub: Subcommands) -> None:
    from kraftwire.audit.options import add_arguments  # argparse only

    add_arguments(sub.add_parser(
        "audit", help="audit a metadata log with Spark: reassignments, RF changes, throttles, violations",
        description="Replay a metadata log (segments and snapshots) with Spark and write its tables as Parquet "
                    "and JSON lines under --out; the same job runs with spark-submit audit/job.py.",
        epilog="`kraftwire audit pack-env [ARCHIVE]` packs the libraries cluster executors need (see "
               "--executor-env)."))


def _pack_env(argv: list[str]) -> int:
    """``kraftwire audit pack-env``: the executors' libraries as one archive (audit/README.md)."""
    from kraftwire.audit import executors
    from kraftwire.audit.options import add_pack_env_arguments

    parser = argparse.ArgumentParser(prog="kraftwire audit pack-env",
                                     description="Pack pyarrow, crc32c and construct for Spark executors.")
    add_pack_env_arguments(parser)
    args = parser.parse_args(argv)
    try:
        size = executors.pack_env(args.archive, args.python_version, args.platform)
    except (RuntimeError, ImportError) as exc:
        print(f"kraftwire audit pack-env: {exc}", file=sys.stderr)
        return 1
    print(f"{args.archive}: {size / (1 << 20):.1f} MiB; pass it as --executor-env {args.archive}")
    return 0


def _healthcheck_parser(sub: Subcommands) -> argparse.ArgumentParser:
    p = sub.add_parser("healthcheck", help="exit 0 when a broker answers ApiVersions, 1 otherwise",
                       description="Send one ApiVersions request to a broker and report whether it answered.")
    p.add_argument("--host", default="127.0.0.1", help="the broker's address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=9092, help="the broker's port (default 9092)")
    p.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for the answer (default 5)")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kraftwire", description="A Kafka-wire-compatible cluster controller.")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = _serve_parser(sub)
    config_file.add_config_option(serve)
    serve.epilog = config_file.describe_sources(serve)
    probe = _healthcheck_parser(sub)
    node_process.add_parsers(sub)
    _log_parser(sub)
    _audit_parser(sub)
    rehearse.add_parser(sub)
    argv = sys.argv[1:] if argv is None else argv
    if argv[:2] == ["audit", "pack-env"]:
        return _pack_env(argv[2:])
    if argv[:1] == ["serve"]:
        config_file.apply_layers(serve, argv[1:])
    elif argv[:1] == ["healthcheck"]:  # finds the broker the way ``serve`` was told where to listen
        config_file.apply_layers(probe, argv[1:], ignore_unknown=True)
    args = parser.parse_args(argv)
    config_file.configure_logging(getattr(args, "log_level", "WARNING"), getattr(args, "log_format", "text"))
    if args.command == "healthcheck":
        return healthcheck.run("127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host, args.port, args.timeout)
    if args.command == "serve":
        return uvloop.run(_serve(args))
    if args.command in node_process.ROLES:
        return uvloop.run(node_process.run_node(args, args.command, DEFAULT_FAILURE_EXIT_DELAY_MS, EXIT_LOG_FAILED))
    if args.command == "format":
        return node_process.format_storage(args)
    if args.command == "random-uuid":
        return node_process.random_uuid()
    if args.command == "rehearse":
        return rehearse.run_command(args, argv[1:])
    if args.command == "log":
        if args.log_command == "dump":
            return log_tools.dump(args.dir, as_json=args.json,
                                  redact=None if args.show_secrets else redaction.redact_fields)
        return log_tools.verify(args.dir)
    if args.command == "audit":
        from kraftwire.audit.options import INSTALL_EXTRA, missing_libraries

        missing = missing_libraries(args)
        if missing:
            print(f"kraftwire audit needs {', '.join(missing)}: {INSTALL_EXTRA}", file=sys.stderr)
            return 1
        from kraftwire.audit.job import run_command  # Spark, pyarrow and matplotlib load only for an audit

        return run_command(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
