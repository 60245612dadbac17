"""The ``kraftwire`` command: ``kraftwire serve`` runs the embedded default cluster."""
from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

import uvloop

from .cluster import Cluster


def _serve_parser(sub) -> None:
    p = sub.add_parser("serve", help="run an embedded cluster: one controller and N simulated brokers",
                       description="Run one controller and N simulated brokers in this process. "
                                   "Broker i (1..N) listens on --host at --port + i - 1.")
    p.add_argument("--brokers", type=int, default=3, help="number of simulated brokers (default 3)")
    p.add_argument("--host", default="127.0.0.1", help="address every listener binds to (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=9092, help="port of broker 1; broker i uses port + i - 1 (default 9092)")
    p.add_argument("--controller-port", type=int, default=9091, help="port of the controller listener (default 9091)")
    p.add_argument("--data-dir", default="./kraftwire-data", help="where state is kept (default ./kraftwire-data)")
    p.add_argument("--cluster-id", default=None, help="cluster id (default: a random one)")
    p.add_argument("--speed", type=float, default=1.0,
                   help="run simulated replication (data movement) this many times faster than real time (default 1)")
    p.add_argument("--log-level", default="INFO", help="logging level (default INFO)")


async def _serve(args) -> int:
    cluster = Cluster(args.brokers, host=args.host, port=args.port, controller_port=args.controller_port,
                      data_dir=args.data_dir, cluster_id=args.cluster_id, speed=args.speed)
    await cluster.start()
    logging.getLogger("kraftwire").info(
        "kraftwire cluster %s ready: brokers %s, controller %s:%d", cluster.controller.cluster_id,
        cluster.bootstrap, args.host, cluster.controller_node.port)
    print(f"kraftwire ready on {cluster.bootstrap}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await cluster.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kraftwire", description="A Kafka-wire-compatible cluster controller.")
    sub = parser.add_subparsers(dest="command", required=True)
    _serve_parser(sub)
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.command == "serve":
        return uvloop.run(_serve(args))
    return 2


if __name__ == "__main__":
    sys.exit(main())
