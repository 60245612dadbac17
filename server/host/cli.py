"""The ``kraftwire`` command: ``kraftwire serve`` runs the embedded default cluster (settings from flags,
``KRAFTWIRE_*`` variables and ``kraftwire.toml``: server/host/config_file.py); ``kraftwire healthcheck``
asks a broker for its ApiVersions;
``kraftwire log dump|verify DIR`` reads a metadata log directory offline; ``kraftwire audit LOG_DIR...
--out OUT`` audits one with Spark (audit/README.md)."""
from __future__ import annotations

import argparse
import asyncio
import logging
import re
import signal
import sys

import uvloop

from . import config_file, healthcheck
from .cluster import Cluster
from .security_settings import Security
from kraftwire.server.wire.security import (DEFAULT_FAILED_AUTHENTICATION_DELAY_MS, MECHANISMS, parse_add_scram,
                                            parse_protocol_map)
from kraftwire.server.broker.log_dirs import DEFAULT_CAPACITY_BYTES
from kraftwire.server.raft import RaftConfig, StorageError
from kraftwire.server.raft import tools as log_tools


def _serve_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("serve", help="run an embedded cluster: one controller and N simulated brokers",
                       description="Run one controller and N simulated brokers in this process. "
                                   "Broker i (1..N) listens on --host at --port + i - 1.")
    p.add_argument("--brokers", type=int, default=3, help="number of simulated brokers (default 3)")
    p.add_argument("--host", default="127.0.0.1", help="address every listener binds to (default 127.0.0.1)")
    p.add_argument("--advertised-host", default=None,
                   help="address the brokers tell clients to connect to (default: --host)")
    p.add_argument("--port", type=int, default=9092, help="port of broker 1; broker i uses port + i - 1 (default 9092)")
    p.add_argument("--controller-port", type=int, default=9091, help="port of the controller listener (default 9091)")
    p.add_argument("--data-dir", default="./kraftwire-data", help="where state is kept (default ./kraftwire-data)")
    p.add_argument("--log-dirs", type=int, default=1,
                   help="log directories per broker (JBOD), at DATA_DIR/broker-ID/logs-K (default 1)")
    p.add_argument("--log-dir-capacity-bytes", type=int, default=DEFAULT_CAPACITY_BYTES,
                   help="simulated capacity of each log directory (default 1 TiB)")
    p.add_argument("--cluster-id", default=None, help="cluster id (default: a random one)")
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
    p.add_argument("--control-token", default=None,
                   help="bearer token the control plane's state-changing calls need (default: generated and printed)")
    _security_options(p)
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
    return p


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
    p.add_argument("--add-scram", default="",
                   help="SCRAM users, as kafka-storage format --add-scram takes them, one or more of "
                        "SCRAM-SHA-256=[name=USER,password=PASSWORD] (salted at start; the password is not kept)")
    p.add_argument("--failed-authentication-delay-ms", type=int, default=DEFAULT_FAILED_AUTHENTICATION_DELAY_MS,
                   help="close a connection that failed authentication this long after the answer (default 100)")
    p.add_argument("--authorizer", action="store_true",
                   help="check every request against ACLs (Kafka's StandardAuthorizer; default: everything allowed)")
    p.add_argument("--super-users", default="", help="principals allowed everything, as User:admin,User:ops")
    p.add_argument("--allow-everyone-if-no-acl-found", action="store_true",
                   help="allow a request on a resource without any ACL (default: deny it)")


_SCRAM_ENTRY = r"[^\s;]*?=\[[^\]]*\]"


def _security(args) -> Security | None:
    """The listeners' security, or None when every listener is PLAINTEXT and nothing asks for more."""
    protocol_map = parse_protocol_map(args.listener_security_protocol_map)
    asked = (protocol_map or args.listener_name.upper() != "PLAINTEXT" or args.ssl_certfile or args.sasl_plain_users
             or args.add_scram or args.authorizer)
    if not asked:
        return None
    plain = {}
    for entry in filter(None, args.sasl_plain_users.split(",")):
        user, sep, password = entry.partition(":")
        if not sep or not user:
            raise ValueError(f"bad --sasl-plain-users entry {entry!r}: expected USER:PASSWORD")
        plain[user] = password
    if re.sub(_SCRAM_ENTRY, "", args.add_scram).strip(" ;\t\n"):
        raise ValueError("bad --add-scram: expected SCRAM-SHA-256=[name=USER,password=PASSWORD] entries")
    scram = [parse_add_scram(entry) for entry in re.findall(_SCRAM_ENTRY, args.add_scram)]
    return Security(listener_name=args.listener_name, controller_listener_name=args.controller_listener_name,
                    protocol_map=protocol_map, certfile=args.ssl_certfile, keyfile=args.ssl_keyfile,
                    cafile=args.ssl_cafile, client_auth=args.ssl_client_auth,
                    mechanisms=tuple(m.strip().upper() for m in args.sasl_enabled_mechanisms.split(",") if m.strip()),
                    plain_users=plain, scram_users=scram,
                    failed_authentication_delay_ms=args.failed_authentication_delay_ms, authorizer=args.authorizer,
                    super_users=tuple(u.strip() for u in args.super_users.split(",") if u.strip()),
                    allow_everyone_if_no_acl_found=args.allow_everyone_if_no_acl_found)


async def _serve(args) -> int:
    log_config = RaftConfig(segment_bytes=args.log_segment_bytes, snapshot_every_records=args.snapshot_every_records,
                            snapshot_every_bytes=args.snapshot_every_bytes, retention_bytes=args.log_retention_bytes,
                            retention_ms=args.log_retention_ms, archive_dir=args.log_archive_dir)
    try:
        security = _security(args)
        cluster = Cluster(args.brokers, host=args.host, port=args.port, controller_port=args.controller_port,
                          data_dir=args.data_dir, cluster_id=args.cluster_id, speed=args.speed, log_config=log_config,
                          metrics_port=args.metrics_port, control_port=args.control_port,
                          advertised_host=args.advertised_host, log_dirs=args.log_dirs,
                          log_dir_capacity_bytes=args.log_dir_capacity_bytes, security=security,
                          control_token=args.control_token)
        await cluster.start()
    except (StorageError, ValueError, OSError) as exc:  # damaged storage, a bad setting, an unreadable certificate
        logging.getLogger("kraftwire").critical("cannot start: %s", exc)
        return 1
    logging.getLogger("kraftwire").info(
        "kraftwire cluster %s ready: brokers %s, controller %s:%d", cluster.controller.cluster_id,
        cluster.bootstrap, args.host, cluster.controller_node.port)
    for name, server in (("metrics", cluster.metrics_server), ("control plane and live view", cluster.control_server)):
        if server is not None:
            logging.getLogger("kraftwire").info("%s on %s", name, server.url)
    if cluster.control_server is not None and args.control_token is None:
        print(f"control plane token: {cluster.control_token}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    print(f"kraftwire ready on {cluster.bootstrap}", flush=True)  # a SIGTERM from now on stops it cleanly
    await stop.wait()
    await cluster.stop()
    return 0


def _log_parser(sub) -> None:
    p = sub.add_parser("log", help="read a metadata log directory offline (dump, verify)")
    tools = p.add_subparsers(dest="log_command", required=True)
    dump = tools.add_parser("dump", help="print every record of every snapshot and segment, control records too")
    dump.add_argument("dir", help="the __cluster_metadata-0 directory, or the data directory holding it")
    dump.add_argument("--json", action="store_true", help="one JSON object per record instead of text lines")
    verify = tools.add_parser("verify", help="check every batch of every file; exit 1 at the first damage")
    verify.add_argument("dir", help="the __cluster_metadata-0 directory, or the data directory holding it")


def _audit_parser(sub) -> None:
    from kraftwire.audit.options import add_arguments  # argparse only

    add_arguments(sub.add_parser(
        "audit", help="audit a metadata log with Spark: reassignments, RF changes, throttles, violations",
        description="Replay a metadata log (segments and snapshots) with Spark and write its tables as Parquet "
                    "and JSON lines under --out; the same job runs with spark-submit audit/job.py."))


def _healthcheck_parser(sub) -> argparse.ArgumentParser:
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
    _log_parser(sub)
    _audit_parser(sub)
    argv = sys.argv[1:] if argv is None else argv
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
    if args.command == "log":
        if args.log_command == "dump":
            return log_tools.dump(args.dir, as_json=args.json)
        return log_tools.verify(args.dir)
    if args.command == "audit":
        from kraftwire.audit.job import run_command  # Spark, pyarrow and matplotlib load only for an audit

        return run_command(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
