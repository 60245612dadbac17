"""Reassignment benchmarks: 10,000-partition AlterPartitionReassignments and ListPartitionReassignments
through kafka-python 3.0.12, and simulated move times against the throttle model.

1. Latency, in two deployments: ``in-process`` (a ``BackgroundCluster`` on a thread of this process,
   sharing it and the GIL with the client) and ``serve`` (a separate ``python -m kraftwire serve``
   process; this process is only the client, and the server's CPU time is read from /proc). A 3-broker
   cluster with two 5,000-partition topics on broker 1, each partition 1 PB so nothing completes. Each
   run: one ``alter_partition_reassignments`` call moving all 10,000 partitions to broker 2 (one atomic
   batch of 10,000 records, answered once fsync'd in the metadata log) sent to a quiet cluster;
   ``--lists`` calls of ``list_partition_reassignments()``; a cancel of all 10,000; then, ``--gap``
   seconds after the cancel was answered (the brokers still busy acting on it), the same
   alter again, timed apart; then its cancel. The cluster gets ``SETTLE_S`` after each bulk change it
   should be quiet for. A first run warms up (code paths, connections, caches) and is not counted.
2. Move time. For speed 1 and 100: ``--partitions`` partitions of one topic on broker 1 move to broker 2
   under a leader throttle on broker 1 (``leader.replication.throttled.replicas=*``). The model is
   bytes / min(throttle, bandwidth); measured is real time from the alter call until no partition is
   reassigning, times the speed.

For ``serve`` each alter's wall time is split with the server's own request metrics (scraped from
``--metrics-port`` before and after it, outside the timed call): "broker" is the receiving broker's
listener's time from the request's arrival to its answer written, "controller" the controller
listener's for the forwarded request, "commit" the write's time from append to commit (the fsync);
"broker's own" is broker less controller, per alter (the broker's intake, the relay both ways); the
rest of the wall time is kafka-python's and the sockets'.

``--controllers N`` runs both deployments with N voters (Kafka's quorum timers, as ``serve`` has them);
with 3, the 1-voter figures to compare come from a run without it. ``--profile N`` profiles the ``serve`` process (cProfile, its event-loop thread) during the counted
alters only and prints its N costliest functions, by own time and by cumulative time.

Run: python bench/reassign.py [--runs 5] [--lists 5] [--gap 1] [--deployment both] [--controllers 1] [--profile 40]
"""
from __future__ import annotations

import argparse
import os
import pstats
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from kafka import KafkaAdminClient, TopicPartition  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from provenance import header, load_average  # noqa: E402
from kraftwire.codec import ErrorCode  # noqa: E402
from kraftwire.codec import records as rec  # noqa: E402
from kraftwire.codec.constants import ConfigResourceType  # noqa: E402
from kraftwire.server.controller.result import ControllerResult  # noqa: E402
from kraftwire.server.host.cluster import BackgroundCluster  # noqa: E402
from kraftwire.server.metadata.configs import DEFAULT_BROKER_BANDWIDTH  # noqa: E402
from kraftwire.server.raft import Timers  # noqa: E402

MiB = 1024 * 1024
HUGE = str(10 ** 15)
TOPIC_PARTITIONS = 5000
SETTLE_S = 3.0


def wait_until(bg, predicate, timeout=600.0, interval=0.01) -> None:
    deadline = time.monotonic() + timeout
    while not bg.call(lambda: predicate(bg.cluster.controller.committed)):
        if time.monotonic() > deadline:
            raise TimeoutError("the cluster did not settle")
        time.sleep(interval)


def no_reassignment(image) -> bool:
    return not any(s.adding or s.removing for _, _, s in image.partitions())


def create(admin, name, partitions, broker, configs) -> None:
    result = admin.create_topics({name: {"assignments": {i: [broker] for i in range(partitions)}, "configs": configs}})
    assert result["topics"][0]["error_code"] == ErrorCode.NONE, result


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def in_process(controllers: int = 1):
    """(bootstrap, pid whose CPU time is the server's, no metrics URL): this process, client included."""
    quorum = {} if controllers == 1 else {"controllers": controllers, "quorum_timers": Timers.kafka_defaults()}
    with BackgroundCluster(brokers=3, **quorum) as bg:
        yield bg.bootstrap, os.getpid(), None


def profiled_server(path: str, argv: list[str]) -> int:
    """``kraftwire`` with ``argv`` in this process, profiled between SIGUSR1 and SIGUSR2 (each SIGUSR2
    writes the stats gathered so far to ``path``)."""
    import cProfile
    import signal
    from kraftwire.server.host import cli

    profile = cProfile.Profile()

    def stop(*_):
        profile.disable()
        profile.dump_stats(path)
    signal.signal(signal.SIGUSR1, lambda *_: profile.enable())
    signal.signal(signal.SIGUSR2, stop)
    return cli.main(argv)


@contextmanager
def served(profile: str | None = None, controllers: int = 1):
    """A separate ``kraftwire serve`` process on ephemeral ports, its data in a temporary directory:
    (bootstrap, its pid, its metrics URL); with ``profile``, run by ``profiled_server`` writing its
    stats there."""
    data = tempfile.mkdtemp(prefix="kraftwire-bench-")
    with socket.socket() as probe:  # a free port from the kernel for the metrics (serve logs, not prints, its URL)
        probe.bind(("127.0.0.1", 0))
        metrics_port = probe.getsockname()[1]
    command = ["serve", "--brokers", "3", "--port", "0", "--controller-port", "0", "--data-dir", data,
               "--metrics-port", str(metrics_port), "--log-level", "WARNING"] + (
                   ["--controllers", str(controllers)] if controllers != 1 else [])
    launcher = ["-m", "kraftwire"] if profile is None else [__file__, "--profiled-server", profile, "--"]
    process = subprocess.Popen([sys.executable, *launcher, *command],
                               stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        for line in process.stdout:
            if line.startswith("kraftwire ready on "):
                break
        else:
            raise RuntimeError("kraftwire serve did not start")
        yield line.split()[-1], process.pid, f"http://127.0.0.1:{metrics_port}/metrics"
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(data, ignore_errors=True)


def timed(pid: int, call):
    """(result, wall ms, CPU ms of ``pid``, CPU ms of this process) of one call."""
    cpu, own, start = cpu_seconds(pid), time.process_time(), time.perf_counter()
    result = call()
    return (result, (time.perf_counter() - start) * 1000, (cpu_seconds(pid) - cpu) * 1000,
            (time.process_time() - own) * 1000)


def server_seconds(url: str | None) -> dict[str, float]:
    """The server's seconds so far (from its metrics): "broker" and "controller", the listeners' summed
    times on AlterPartitionReassignments; "commit", the metadata writes' summed append-to-commit times."""
    if url is None:
        return {}
    with urllib.request.urlopen(url, timeout=30) as answer:
        text = answer.read().decode()
    seconds = {"broker": 0.0, "controller": 0.0, "commit": 0.0}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "kraftwire_metadata_commit_latency_seconds_sum":
                seconds["commit"] += sample.value
            elif (sample.name == "kraftwire_request_latency_seconds_sum"
                  and sample.labels["api"] == "AlterPartitionReassignments"):
                seconds["controller" if sample.labels["listener"].startswith("controller") else "broker"] += sample.value
    return seconds


def latency(deployment, runs: int, lists: int, gap: float, profiled: bool = False) -> dict:
    """``profiled``: ``deployment`` is a ``profiled_server``, told to profile each counted alter."""
    figures = {name + suffix: [] for name in ("alter", "list", "alter_after_gap")
               for suffix in ("", "_cpu", "_client_cpu", "_broker", "_controller", "_commit")}
    with deployment() as (bootstrap, pid, metrics):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=120000)
        names = ["bench-a", "bench-b"]
        for name in names:
            create(admin, name, TOPIC_PARTITIONS, 1, {"kraftwire.partition.size.bytes": HUGE})
        time.sleep(SETTLE_S)
        move = {TopicPartition(n, i): [2] for n in names for i in range(TOPIC_PARTITIONS)}
        cancel = {tp: None for tp in move}

        def alter(target, key):
            before = server_seconds(metrics) if key else {}
            if key and profiled:
                os.kill(pid, signal.SIGUSR1)
            result, wall, cpu, client_cpu = timed(pid, lambda: admin.alter_partition_reassignments(target))
            if key and profiled:
                os.kill(pid, signal.SIGUSR2)
            assert len(result) == len(move) and not any(result.values()), result
            if key:
                figures[key].append(wall)
                figures[key + "_cpu"].append(cpu)
                figures[key + "_client_cpu"].append(client_cpu)
                for part, seconds in server_seconds(metrics).items():
                    figures[f"{key}_{part}"].append((seconds - before[part]) * 1000)

        for run in range(runs + 1):
            counted = run > 0  # the first run warms up
            alter(move, "alter" if counted else None)
            time.sleep(SETTLE_S)  # the brokers acting on the change, before timing lists
            for _ in range(lists):
                listed, wall, cpu, client_cpu = timed(pid, admin.list_partition_reassignments)
                assert len(listed) == len(move)
                if counted:
                    figures["list"].append(wall)
                    figures["list_cpu"].append(cpu)
                    figures["list_client_cpu"].append(client_cpu)
            alter(cancel, None)
            assert not admin.list_partition_reassignments()  # the cancel is answered once committed
            time.sleep(gap)
            alter(move, "alter_after_gap" if counted else None)
            alter(cancel, None)
            time.sleep(SETTLE_S)
        admin.close()
    return figures


def report(name: str, figures: dict, key: str, cpu_of: str, separate_client: bool) -> None:
    """One line: wall p50, the server's CPU p50 and, when the client is a process of its own, the
    client's (kafka-python building the request and reading the answer: part of the wall time)."""
    values = figures[key]
    client = f"; client process CPU p50 {statistics.median(figures[key + '_client_cpu']):.0f} ms" if separate_client else ""
    parts = ", ".join(f"{part} {statistics.median(figures[f'{key}_{part}']):.0f}"
                      for part in ("broker", "controller", "commit") if figures.get(f"{key}_{part}"))
    if figures.get(f"{key}_broker"):
        own = [b - c for b, c in zip(figures[f"{key}_broker"], figures[f"{key}_controller"])]
        parts += f", broker's own {statistics.median(own):.1f}"
    parts = f"; server's parts p50 (ms): {parts}" if parts else ""
    print(f"  {name}: p50 {statistics.median(values):.0f} ms (min {min(values):.0f}, max {max(values):.0f}, "
          f"n={len(values)}); {cpu_of} CPU p50 {statistics.median(figures[key + '_cpu']):.0f} ms{client}{parts}; "
          f"load {load_average()}", flush=True)


def move_time(speed: float, partitions: int, size: int, throttle: int) -> dict:
    with BackgroundCluster(brokers=2, speed=speed) as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, request_timeout_ms=120000)
        create(admin, "moving", partitions, 1, {"kraftwire.partition.size.bytes": str(size),
                                                "leader.replication.throttled.replicas": "*"})
        bg.run(bg.cluster.controller.write(lambda image: ControllerResult([rec.ConfigRecord(
            resource_type=ConfigResourceType.BROKER, resource_name="1", name="leader.replication.throttled.rate",
            value=str(throttle))])))
        start = time.perf_counter()
        admin.alter_partition_reassignments({TopicPartition("moving", i): [2] for i in range(partitions)})
        wait_until(bg, no_reassignment, interval=0.005)
        wall = time.perf_counter() - start
        admin.close()
    model = partitions * size / min(throttle, DEFAULT_BROKER_BANDWIDTH)
    return {"speed": speed, "model_s": model, "simulated_s": wall * speed, "wall_s": wall,
            "error_pct": (wall * speed - model) / model * 100}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="counted runs (after one warm-up run)")
    parser.add_argument("--lists", type=int, default=5)
    parser.add_argument("--gap", type=float, default=1.0, help="seconds between a cancel and the next alter")
    parser.add_argument("--deployment", choices=["in-process", "serve", "both"], default="both")
    parser.add_argument("--skip-move-time", action="store_true")
    parser.add_argument("--controllers", type=int, default=1, help="voters of the metadata quorum")
    parser.add_argument("--profile", type=int, metavar="N",
                        help="profile the serve process's counted alters; print its N costliest functions")
    args = parser.parse_args()
    header()
    if args.profile:
        with tempfile.TemporaryDirectory() as scratch:
            path = str(Path(scratch) / "serve.prof")
            figures = latency(lambda: served(path, args.controllers), args.runs, 0, args.gap, profiled=True)
            report("alter 10,000 partitions, quiet cluster (profiled)", figures, "alter", "server process", True)
            stats = pstats.Stats(path)
            stats.sort_stats("tottime").print_stats(args.profile)
            stats.sort_stats("cumulative").print_stats(args.profile)
        return
    deployments = {"serve": (served, "server process"), "in-process": (in_process, "whole process (client too)")}
    for name, (deployment, cpu_of) in deployments.items():
        if args.deployment not in (name, "both"):
            continue
        figures = latency(lambda: deployment(controllers=args.controllers), args.runs, args.lists, args.gap)
        print(f"{name}{'' if args.controllers == 1 else f', {args.controllers} voters'}:")
        separate = name == "serve"
        report("alter 10,000 partitions, quiet cluster", figures, "alter", cpu_of, separate)
        report(f"alter 10,000 partitions, {args.gap:g} s after a 10,000-partition cancel", figures,
               "alter_after_gap", cpu_of, separate)
        report("list 10,000 ongoing", figures, "list", cpu_of, separate)
    if args.skip_move_time:
        return
    cases = [(1.0, 10, 10 * MiB, 50 * MiB), (100.0, 10, 1024 * MiB, 50 * MiB)]
    for speed, partitions, size, throttle in cases:
        result = move_time(speed, partitions, size, throttle)
        print(f"move {partitions} x {size // MiB} MiB under a {throttle // MiB} MiB/s leader throttle at speed "
              f"{speed:g}: model {result['model_s']:.2f} s, simulated {result['simulated_s']:.2f} s "
              f"(real {result['wall_s']:.3f} s), error {result['error_pct']:+.1f} %")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--profiled-server"]:
        sys.exit(profiled_server(sys.argv[2], sys.argv[4:]))
    main()
