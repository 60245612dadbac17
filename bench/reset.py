"""How long a reset takes (``Cluster.reset``, ``POST /api/reset``): the cluster's 3 brokers holding
``--topics`` topics (``--partitions`` each, replication factor 3, one topic config each), a broker
config and a cluster-default config, brought back to a fresh cluster.

Two ways, ``--rounds`` times each (the state re-created between rounds with kafka-python, not timed):

* in-process: ``await cluster.reset()`` on a ``Cluster`` in this process, timed around the call (the
  decision, the one batch's append, fsync and commit, and the brokers' shared image applying it, their
  replica managers dropping the replicas);
* serve: ``kraftwire serve`` in a subprocess, ``POST /api/reset`` over HTTP timed from this process
  (the same, plus the HTTP request and answer).

Prints the median, min and max of each, and with ``--profile`` where one in-process reset's time goes
(cProfile, cumulative, top ``--profile`` entries).

    python bench/reset.py [--topics 100] [--partitions 1] [--rounds 15] [--profile 25]
"""
from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import pstats
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic


def fill(bootstrap: str, topics: int, partitions: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="reset-bench", request_timeout_ms=30000)
    try:
        admin.create_topics([NewTopic(f"bench-{i}", partitions, 3, topic_configs={"retention.ms": "60000"})
                             for i in range(topics)])
        admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, "1",
                                            {"leader.replication.throttled.rate": "1000000"})])
    finally:
        admin.close()


def figures(name: str, times_ms: list[float]) -> None:
    print(f"{name:<12} median {statistics.median(times_ms):7.2f} ms   min {min(times_ms):7.2f}   "
          f"max {max(times_ms):7.2f}   ({len(times_ms)} rounds)", flush=True)


async def in_process(args: argparse.Namespace) -> None:
    from kraftwire import Cluster

    loop = asyncio.get_running_loop()
    times = []
    async with Cluster() as cluster:
        for _ in range(args.rounds):
            await loop.run_in_executor(None, fill, cluster.bootstrap, args.topics, args.partitions)
            assert len(cluster.controller.committed.topics) == args.topics
            started = time.perf_counter()
            removed = await cluster.reset()
            times.append((time.perf_counter() - started) * 1000)
            assert removed["topics"] == args.topics and not cluster.controller.committed.topics
        figures("in-process", times)
        if args.profile:
            await loop.run_in_executor(None, fill, cluster.bootstrap, args.topics, args.partitions)
            profiler = cProfile.Profile()
            profiler.enable()
            await cluster.reset()
            profiler.disable()
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(args.profile)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def against_serve(args: argparse.Namespace) -> None:
    control_port, token = free_port(), "reset-bench-token"
    with tempfile.TemporaryDirectory(prefix="reset-bench-") as data_dir:
        command = [sys.executable, "-m", "kraftwire", "serve", "--port", "0", "--controller-port", "0",
                   "--control-port", str(control_port), "--control-token", token, "--data-dir", data_dir,
                   "--log-level", "WARNING"]
        server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=dict(os.environ))
        try:
            assert server.stdout is not None
            bootstrap = ""
            for line in server.stdout:
                if line.startswith("kraftwire ready on "):
                    bootstrap = line.split()[-1]
                    break
            if not bootstrap:
                raise RuntimeError("kraftwire serve did not start")
            times = []
            for _ in range(args.rounds):
                fill(bootstrap, args.topics, args.partitions)
                request = urllib.request.Request(f"http://127.0.0.1:{control_port}/api/reset", data=b"{}",
                                                 method="POST", headers={"Authorization": f"Bearer {token}",
                                                                         "Content-Type": "application/json"})
                started = time.perf_counter()
                with urllib.request.urlopen(request, timeout=30) as answer:
                    removed = json.loads(answer.read())["reset"]
                times.append((time.perf_counter() - started) * 1000)
                assert removed["topics"] == args.topics
            figures("serve (HTTP)", times)
        finally:
            server.terminate()
            server.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="print the top N of one reset's profile")
    args = parser.parse_args()
    print(f"command: python bench/reset.py --topics {args.topics} --partitions {args.partitions} "
          f"--rounds {args.rounds}" + (f" --profile {args.profile}" if args.profile else ""))
    print(f"reset of {args.topics} topics x {args.partitions} partitions (RF 3), 3 brokers; "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    import uvloop

    uvloop.run(in_process(args))
    against_serve(args)


if __name__ == "__main__":
    main()
