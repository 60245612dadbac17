"""CPU cost of a bulk change's aftermath: the controller's LeaderAndIsr pushes and the brokers' handling.

An in-process 3-broker ``Cluster`` (the code ``kraftwire serve`` runs) with ``--partitions`` partitions
on broker 1 (1 PB each, so no copy completes). Each run moves all of them to broker 2 with one
AlterPartitionReassignments decision written through the controller, waits until the cluster is idle
(publisher, replication network, replica managers), then cancels and waits again. Timed with the event
loop thread's CPU time, apart: the write (decision, append, fsync, apply) and what follows its commit
until idle: the publisher's requests (built, encoded, sent), the brokers' decoding and handling, their
answers, the replication network's new rates. The first run warms up and is not counted.

Run: python bench/leader_and_isr.py [--partitions 10000] [--runs 5] [--profile]
"""
from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import uvloop  # noqa: E402

from provenance import header, load_average  # noqa: E402
from kraftwire.codec import records as rec  # noqa: E402
from kraftwire.codec.messages import AlterPartitionReassignmentsRequest as Alter  # noqa: E402
from kraftwire.server.apis.api45_alter_partition_reassignments import decide  # noqa: E402
from kraftwire.server.controller.result import ControllerResult  # noqa: E402
from kraftwire.server.host.cluster import Cluster  # noqa: E402

HUGE = str(10 ** 15)


def seed(partitions: int):
    def decision(image):
        topic_id = uuid.uuid4()
        return ControllerResult([rec.TopicRecord(name="bulk", topic_id=topic_id),
                                 rec.ConfigRecord(resource_type=2, resource_name="bulk",
                                                  name="kraftwire.partition.size.bytes", value=HUGE)]
                                + [rec.PartitionRecord(partition_id=p, topic_id=topic_id, replicas=[1], isr=[1],
                                                       leader=1, leader_epoch=0, partition_epoch=0)
                                   for p in range(partitions)])
    return decision


def request(partitions: int, target):
    return Alter(timeout_ms=60000, topics=[Alter.ReassignableTopic(name="bulk", partitions=[
        Alter.ReassignablePartition(partition_index=p, replicas=target) for p in range(partitions)])])


async def until_idle(cluster) -> None:
    while not cluster._idle():
        await asyncio.sleep(0.001)
    await asyncio.sleep(0.05)  # what the last answers set off
    while not cluster._idle():
        await asyncio.sleep(0.001)


async def measure(args) -> dict:
    figures = {"write": [], "after": []}
    profile = cProfile.Profile() if args.profile else None
    async with Cluster(brokers=3) as cluster:
        await cluster.controller.write(seed(args.partitions))
        await until_idle(cluster)
        for run in range(args.runs + 1):
            for target in ([2], None):
                change = request(args.partitions, target)
                if profile is not None and run > 0:
                    profile.enable()
                start = time.thread_time()
                response = await cluster.controller.write(lambda image: decide(image, change))
                written = time.thread_time()
                await until_idle(cluster)
                done = time.thread_time()
                if profile is not None:
                    profile.disable()
                assert not any(p.error_code for t in response.responses for p in t.partitions)
                if run > 0 and target is not None:
                    figures["write"].append((written - start) * 1000)
                    figures["after"].append((done - written) * 1000)
    if profile is not None:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(40)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the counted runs")
    args = parser.parse_args()
    header()
    figures = uvloop.run(measure(args))
    for name, what in (("write", "the write (decision, append, fsync wait, apply)"),
                       ("after", "after its commit until idle (LeaderAndIsr pushes, brokers' handling, rates)")):
        values = figures[name]
        print(f"{what}: event-loop CPU p50 {statistics.median(values):.0f} ms "
              f"(min {min(values):.0f}, max {max(values):.0f}, n={len(values)})")
    print(f"load average at the end: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
