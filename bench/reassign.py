"""Reassignment benchmarks: 10,000-partition AlterPartitionReassignments and ListPartitionReassignments
through kafka-python 3.0.12, and simulated move times against the throttle model.

1. Latency. A 3-broker cluster (``BackgroundCluster``, the code ``kraftwire serve`` runs, on its own
   thread) with two 5,000-partition topics on broker 1, each partition 1 PB so nothing completes. Each
   run times one kafka-python ``alter_partition_reassignments`` call moving all 10,000 partitions to
   broker 2 (one request, one atomic batch of 10,000 records, answered after it is committed, that is
   fsync'd, in the metadata log), then ``list_partition_reassignments()`` of the 10,000 ongoing ones
   ``--lists`` times, then cancels them all (untimed); the cluster gets 2 s after each of those bulk
   changes to finish the brokers' LeaderAndIsr work. Medians over all runs.
2. Move time. For speed 1 and 100: ``--partitions`` partitions of one topic on broker 1 move to broker 2
   under a leader throttle on broker 1 (``leader.replication.throttled.replicas=*``). The model is
   bytes / min(throttle, bandwidth); measured is real time from the alter call until no partition is
   reassigning, times the speed.

Besides wall times, the CPU time of this process during each call is printed: client and cluster share
the process and the GIL, so it approximates the wall time on an otherwise idle machine.

Run: python bench/reassign.py [--runs 5] [--lists 5]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kafka import KafkaAdminClient, TopicPartition  # noqa: E402

from kraftwire.codec import ErrorCode  # noqa: E402
from kraftwire.codec import records as rec  # noqa: E402
from kraftwire.codec.constants import ConfigResourceType  # noqa: E402
from kraftwire.server.controller.result import ControllerResult  # noqa: E402
from kraftwire.server.host.cluster import BackgroundCluster  # noqa: E402
from kraftwire.server.metadata.configs import DEFAULT_BROKER_BANDWIDTH  # noqa: E402

MiB = 1024 * 1024
HUGE = str(10 ** 15)
TOPIC_PARTITIONS = 5000
SETTLE_S = 2.0


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


def latency(runs: int, lists: int) -> dict:
    with BackgroundCluster(brokers=3) as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, request_timeout_ms=120000)
        names = ["bench-a", "bench-b"]
        for name in names:
            create(admin, name, TOPIC_PARTITIONS, 1, {"kraftwire.partition.size.bytes": HUGE})
        move = {TopicPartition(n, i): [2] for n in names for i in range(TOPIC_PARTITIONS)}
        cancel = {tp: None for tp in move}
        log_kind = type(bg.cluster.log).__name__
        alters, listings, alter_cpu, list_cpu = [], [], [], []
        for _ in range(runs):
            start, cpu = time.perf_counter(), time.process_time()
            result = admin.alter_partition_reassignments(move)
            alters.append(time.perf_counter() - start)
            alter_cpu.append(time.process_time() - cpu)
            assert len(result) == len(move) and not any(result.values())
            time.sleep(SETTLE_S)  # the brokers' LeaderAndIsr work and the copies' start, before timing lists
            for _ in range(lists):
                start, cpu = time.perf_counter(), time.process_time()
                listed = admin.list_partition_reassignments()
                listings.append(time.perf_counter() - start)
                list_cpu.append(time.process_time() - cpu)
                assert len(listed) == len(move)
            assert not any(admin.alter_partition_reassignments(cancel).values())
            wait_until(bg, no_reassignment)
            time.sleep(SETTLE_S)  # the cancel's LeaderAndIsr work, before the next timed alter
        admin.close()
    return {"log": log_kind, "alter_ms": [a * 1000 for a in alters], "list_ms": [l * 1000 for l in listings],
            "alter_cpu_ms": [a * 1000 for a in alter_cpu], "list_cpu_ms": [l * 1000 for l in list_cpu]}


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
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--lists", type=int, default=5)
    args = parser.parse_args()
    print(f"command: python bench/reassign.py --runs {args.runs} --lists {args.lists}")
    figures = latency(args.runs, args.lists)
    print(f"metadata log: {figures['log']}")
    print(f"alter 10,000 partitions (kafka-python, one call): p50 {statistics.median(figures['alter_ms']):.1f} ms "
          f"(runs: {', '.join(f'{v:.1f}' for v in figures['alter_ms'])})")
    print(f"list 10,000 ongoing (kafka-python): p50 {statistics.median(figures['list_ms']):.1f} ms "
          f"(min {min(figures['list_ms']):.1f}, max {max(figures['list_ms']):.1f}, n={len(figures['list_ms'])})")
    print(f"CPU time of this process (client and cluster threads; under the GIL, about the wall time on an idle "
          f"machine): alter p50 {statistics.median(figures['alter_cpu_ms']):.1f} ms, "
          f"list p50 {statistics.median(figures['list_cpu_ms']):.1f} ms")
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    cases = [(1.0, 10, 10 * MiB, 50 * MiB), (100.0, 10, 1024 * MiB, 50 * MiB)]
    for speed, partitions, size, throttle in cases:
        result = move_time(speed, partitions, size, throttle)
        print(f"move {partitions} x {size // MiB} MiB under a {throttle // MiB} MiB/s leader throttle at speed "
              f"{speed:g}: model {result['model_s']:.2f} s, simulated {result['simulated_s']:.2f} s "
              f"(real {result['wall_s']:.3f} s), error {result['error_pct']:+.1f} %")


if __name__ == "__main__":
    main()
