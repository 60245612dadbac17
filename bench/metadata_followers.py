"""Memory and CPU of the brokers following the metadata log, for a 10,000-partition change.

An in-process ``Cluster`` of ``--brokers`` brokers (4 by default) with ``--partitions`` partitions on
broker 1 (1 PB each, so no copy completes). Each run writes one AlterPartitionReassignments decision
moving all of them to broker 2 through the controller, waits until every broker's image has it and the
cluster is idle, then cancels and waits again. Printed: the process's CPU time (every thread) and the
event loop's, per change; how long after the write's commit the last broker's image had it; RSS after
seeding and at the end, and the peak (VmHWM). Then the size of one more image of the same metadata
(tracemalloc), built by applying the image's records to an empty one: what each broker would add if
every broker kept an image of its own. Uses only ``Cluster``'s public surface and ``broker.image``, so it runs unchanged
on older commits for a before/after comparison.

Run: python bench/metadata_followers.py [--partitions 10000] [--brokers 4] [--runs 3]
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import uvloop  # noqa: E402

from leader_and_isr import request, seed  # noqa: E402 - the same bulk topic and alter
from provenance import header, load_average  # noqa: E402
from kraftwire.server.controller.replication.reassignment import decide  # noqa: E402
from kraftwire.server.host.cluster import Cluster  # noqa: E402
from kraftwire.server.metadata.image import MetadataImage  # noqa: E402


def memory_kib() -> dict[str, int]:
    """VmRSS and VmHWM of this process, in KiB."""
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0])
    return fields


async def until_brokers_have(cluster, offset: int) -> float:
    """Seconds until every broker's image reaches ``offset``."""
    start = time.perf_counter()
    while any(b.image.offset < offset for b in cluster.brokers):
        await asyncio.sleep(0.0005)
    return time.perf_counter() - start


async def until_idle(cluster) -> None:
    while not cluster._idle():
        await asyncio.sleep(0.001)
    await asyncio.sleep(0.05)  # what the last answers set off
    while not cluster._idle():
        await asyncio.sleep(0.001)


async def measure(args) -> dict:
    figures = {"process": [], "loop": [], "lag": []}
    async with Cluster(brokers=args.brokers) as cluster:
        await cluster.controller.write(seed(args.partitions))
        await until_brokers_have(cluster, cluster.controller.committed.offset)
        await until_idle(cluster)
        gc.collect()
        figures["seeded"] = memory_kib()
        for run in range(args.runs + 1):
            for target in ([2], None):
                change = request(args.partitions, target)
                process, loop = time.process_time(), time.thread_time()
                await cluster.controller.write(lambda image: decide(image, change))
                lag = await until_brokers_have(cluster, cluster.controller.committed.offset)
                await until_idle(cluster)
                if run > 0 and target is not None:
                    figures["process"].append((time.process_time() - process) * 1000)
                    figures["loop"].append((time.thread_time() - loop) * 1000)
                    figures["lag"].append(lag * 1000)
        figures["end"] = memory_kib()
        records = list(cluster.controller.committed.to_records())
        tracemalloc.start()
        another = MetadataImage()
        for record, _version in records:
            another.apply(record, 0)
        figures["another_image"] = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=10000)
    parser.add_argument("--brokers", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    header()
    figures = uvloop.run(measure(args))
    for name, what in (("process", "process CPU (every thread) per change, until idle"),
                       ("loop", "event-loop CPU per change, until idle"),
                       ("lag", "from the commit until every broker's image has it")):
        values = figures[name]
        print(f"{what}: p50 {statistics.median(values):.0f} ms (min {min(values):.0f}, max {max(values):.0f}, "
              f"n={len(values)})")
    print(f"RSS after seeding {figures['seeded']['VmRSS'] / 1024:.0f} MiB, at the end "
          f"{figures['end']['VmRSS'] / 1024:.0f} MiB, peak {figures['end']['VmHWM'] / 1024:.0f} MiB")
    print(f"one more image of the same metadata: {figures['another_image'] / 2 ** 20:.1f} MiB allocated (tracemalloc)")
    print(f"load average at the end: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
