"""The controller quorum: failover time and commit throughput (server/raft, ``Cluster(controllers=3)``).

* failover: a 3-controller, 3-broker cluster; the active controller is killed (kill -9: what it had not
  fsync'd is lost) and the clock runs until the first CreateTopics through kafka-python is acknowledged
  (the client retries as it does against Kafka). The killed controller is then started again and caught
  up before the next kill. p50/p99 over ``--kills`` kills, with the short test timers and with Kafka's
  defaults (election 1 s, fetch 2 s).
* resignation: as many graceful resignations (EndQuorumEpoch) in the same cluster, from the resignation
  to an active controller in a later epoch; how often the resigned one (still a voter) won it again.
* commits: ``--writers`` concurrent writers each make ``--writes`` controller writes (a broker's
  replication bandwidth, a one-record ConfigRecord batch) and wait for each commit; commits per second
  and p50/p99 latency, 1 voter against 3 voters (short timers), in the same run.
* alter: bench/reassign.py's 10,000-partition AlterPartitionReassignments through kafka-python (its
  ``latency`` run, in process, warm-up excluded), with 1 voter and with 3 voters (Kafka's timers) in the
  same run.

Run: python bench/quorum.py [--kills N] [--writers N] [--writes N] [--alter-runs N]
Everything runs in this process; the data directories are temporary.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from kafka.admin import KafkaAdminClient, NewTopic  # noqa: E402
from kafka.errors import TopicAlreadyExistsError  # noqa: E402

import reassign  # noqa: E402
from provenance import header, load_average  # noqa: E402

from kraftwire import BackgroundCluster, Cluster  # noqa: E402
from kraftwire.server.controller.replication_bandwidth import set_replication_bandwidth  # noqa: E402
from kraftwire.server.raft import Timers  # noqa: E402


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def wait_for(predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("the cluster did not reach the expected state")
        time.sleep(0.01)


def failovers(kills: int, timers: Timers) -> tuple[list[float], list[tuple[float, bool]]]:
    """Seconds from each kill of the active controller to the first acknowledged CreateTopics, and each
    resignation's ``resign`` figures."""
    seconds, resignations = [], []
    with BackgroundCluster(brokers=3, controllers=3, quorum_timers=timers) as bg:
        cluster = bg.cluster
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="bench-quorum", request_timeout_ms=60000)
        for kill in range(kills):
            victim = bg.call(lambda: cluster.active_controller_id)
            started = time.perf_counter()
            bg.run(cluster.kill_controller(victim))
            while True:
                try:
                    admin.create_topics([NewTopic(f"failover-{kill}", 1, 3)])
                    break
                except TopicAlreadyExistsError:  # an earlier try was committed, its answer lost in the failover
                    break
                except Exception:  # noqa: BLE001 - any refusal: the client tries again, as a user's would
                    time.sleep(0.01)
            seconds.append(time.perf_counter() - started)
            bg.run(cluster.start_controller(victim))
            wait_for(lambda: bg.call(lambda: all(
                log.high_watermark == cluster.log.high_watermark for log in cluster.logs)))
        for _ in range(kills):
            resignations.append(bg.run(resign(cluster)))
        admin.close()
    return seconds, resignations


async def resign(cluster) -> tuple[float, bool]:
    """(seconds from the active controller's EndQuorumEpoch to an active controller in a later epoch,
    whether the resigned one won that epoch again: it stays a voter, so it may)."""
    loop = asyncio.get_running_loop()
    await cluster.wait_for_active_controller(60.0)
    started = loop.time()
    resigned, active = await cluster.resign_controller(60.0)
    return loop.time() - started, active == resigned


async def commits(controllers: int, writers: int, writes: int) -> tuple[float, list[float]]:
    """(commits per second, each commit's seconds) of concurrent controller writes."""
    latencies: list[float] = []
    async with Cluster(brokers=3, controllers=controllers) as cluster:
        async def writer(n: int) -> None:
            for i in range(writes):
                started = time.perf_counter()
                await cluster.write(lambda image: set_replication_bandwidth(image, 1 + n % 3, 1 + n * writes + i))
                latencies.append(time.perf_counter() - started)

        started = time.perf_counter()
        await asyncio.gather(*(writer(n) for n in range(writers)))
        elapsed = time.perf_counter() - started
    return writers * writes / elapsed, latencies


@contextmanager
def voters(controllers: int):
    """bench/reassign.py's in-process deployment, with ``controllers`` voters on Kafka's timers (the
    short test timers time out while a 10,000-partition change holds the one event loop)."""
    with BackgroundCluster(brokers=3, controllers=controllers, quorum_timers=Timers.kafka_defaults()) as bg:
        yield bg.bootstrap, os.getpid(), None  # (bootstrap, pid, no metrics URL), as reassign.latency takes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--writers", type=int, default=64)
    parser.add_argument("--writes", type=int, default=50)
    parser.add_argument("--alter-runs", type=int, default=3, help="counted 10,000-partition alters per voter count")
    args = parser.parse_args()
    header()
    print("| timers | kills | failover p50 s | p99 s | max s | resignation p50 s | p99 s | resigned one re-elected |\n"
          "|---|---|---|---|---|---|---|---|")
    for name, timers in (("short (tests)", Timers()), ("Kafka's defaults", Timers.kafka_defaults())):
        seconds, resignations = failovers(args.kills, timers)
        handovers = [s for s, _ in resignations]
        print(f"| {name} | {len(seconds)} | {statistics.median(seconds):.3f} | {percentile(seconds, 0.99):.3f} "
              f"| {max(seconds):.3f} | {statistics.median(handovers):.3f} | {percentile(handovers, 0.99):.3f} "
              f"| {sum(again for _, again in resignations)} of {len(resignations)} |", flush=True)
    print("\n| voters | commits/s | p50 ms | p99 ms |\n|---|---|---|---|")
    rates = {}
    for controllers in (1, 3):
        rate, latencies = asyncio.run(commits(controllers, args.writers, args.writes))
        rates[controllers] = rate
        print(f"| {controllers} | {rate:,.0f} | {statistics.median(latencies) * 1000:.1f} "
              f"| {percentile(latencies, 0.99) * 1000:.1f} |")
    print(f"\n3 voters commit at {rates[3] / rates[1]:.0%} of 1 voter's rate")
    print("\n| voters | alter 10,000 p50 ms | min | max | after a cancel p50 ms | list p50 ms |\n"
          "|---|---|---|---|---|---|")
    alters = {}
    for controllers in (1, 3):
        figures = reassign.latency(lambda: voters(controllers), args.alter_runs, 1, 1.0)
        alters[controllers] = statistics.median(figures["alter"])
        print(f"| {controllers} | {alters[controllers]:.0f} | {min(figures['alter']):.0f} "
              f"| {max(figures['alter']):.0f} | {statistics.median(figures['alter_after_gap']):.0f} "
              f"| {statistics.median(figures['list']):.0f} |",
              flush=True)
    print(f"\nthe 10,000-partition alter with 3 voters takes {alters[3] / alters[1]:.2f}x the 1-voter time "
          f"(goal <= 1.5x); load average at the end: {load_average()}")


if __name__ == "__main__":
    main()
