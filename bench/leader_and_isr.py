"""CPU cost of a bulk change's aftermath: the brokers acting on the metadata log's partition changes.

An in-process 3-broker ``Cluster`` (the code ``kraftwire serve`` runs) with ``--partitions`` partitions
on broker 1 (1 PB each, so no copy completes). Each run moves all of them to broker 2 with one
AlterPartitionReassignments decision written through the controller, waits until the cluster is idle
(the brokers' metadata, the replication network, the replica managers), then cancels and waits again.
Timed with the event loop thread's CPU time, apart: the write (decision, append, fsync, apply) and what
follows its commit until idle: the brokers' metadata fetch (the batch decoded and applied once for the
process's brokers), each replica manager acting on the changed partitions, the replication network's
new rates, and (in commits before the brokers followed the log for their replicas) the controller's
LeaderAndIsr requests (built, encoded, sent, decoded, answered). The first run warms up and is not
counted. The garbage collector's passes during the counted runs are counted and timed
(``gc.callbacks``); ``--collector default`` puts CPython's default thresholds back once the cluster has
started (the cluster tunes them, server/host/collector.py), to measure what the tuning saves.
``--stages`` also times, with the same thread CPU clock, the named parts of the write (decision, log
append and the batch's encoding, the two images) and of the aftermath (those of them the measured code
has); the remainder of the aftermath is the codec, the transport and the event loop.

``--against REV`` measures this tree and an exported copy of commit REV (``git archive``, imported
through PYTHONPATH, see provenance.export_commit), each in a process of its own, ``--rounds`` times
alternately, so code before and after a change is compared under the same load.

Run: python bench/leader_and_isr.py [--partitions 10000] [--runs 5] [--collector tuned|default] [--profile]
     [--stages] [--against REV [--rounds 2]]
"""
from __future__ import annotations

import argparse
import asyncio
import cProfile
import collections
import functools
import gc
import importlib
import os
import pstats
import subprocess
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import uvloop  # noqa: E402

from provenance import export_commit, header, load_average  # noqa: E402
from kraftwire.codec import records as rec  # noqa: E402
from kraftwire.codec.messages import AlterPartitionReassignmentsRequest as Alter  # noqa: E402
from kraftwire.server.controller.replication import reassignment as api45  # noqa: E402
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


class Stages:
    """Thread CPU seconds spent in named functions while ``counting`` (``--stages``). Each stage names its
    function by module and attribute path; a stage the measured code lacks is left out (an ``--against``
    commit may have other parts). An indented name is part of the stage above it."""

    WRITE = [("the decision", "kraftwire.server.controller.replication.reassignment", "decide"),
             ("appending to the metadata log (the Raft core, the batch's encoding included)",
              "kraftwire.server.raft.log", "RaftLog.append"),
             ("  encoding the batch", "kraftwire.server.raft.log", "metadata_batch"),
             ("applying to the working image", "kraftwire.server.metadata.image", "MetadataImage.apply_appended"),
             ("applying to the committed image, commit listeners", "kraftwire.server.controller.active_controller",
              "Controller._on_commit")]
    AFTER = [("brokers' metadata: the batch decoded and applied once, listeners told",
              "kraftwire.server.broker.metadata_follower", "MetadataReplica.commit"),
             ("  the replica managers acting on the changed partitions", "kraftwire.server.broker.replica_manager",
              "ReplicaManager.apply_changes"),
             ("publisher: gathering changed partitions per broker", "kraftwire.server.controller.leader_and_isr_publisher",
              "LeaderAndIsrPublisher._publish"),
             ("publisher: building the requests", "kraftwire.server.controller.leader_and_isr_publisher",
              "build_request"),
             ("brokers: handling LeaderAndIsr", "kraftwire.server.broker.replica_manager",
              "ReplicaManager.become_leader_or_follower"),
             ("replication network: rates", "kraftwire.server.broker.replication_network", "ReplicationNetwork._recompute"),
             ("replication network: copies' ends", "kraftwire.server.broker.replication_network", "ReplicationNetwork._tick")]

    def __init__(self):
        self.counting = None  # "write", "after" or None
        self.seconds = {"write": collections.Counter(), "after": collections.Counter()}
        self.present = {"write": [], "after": []}
        for phase, timed in (("write", self.WRITE), ("after", self.AFTER)):
            for name, module, path in timed:
                try:
                    owner = importlib.import_module(module)
                    *owners, attribute = path.split(".")
                    for part in owners:
                        owner = getattr(owner, part)
                    function = getattr(owner, attribute)
                except (ImportError, AttributeError):
                    continue
                setattr(owner, attribute, self._timed(phase, name, function))
                self.present[phase].append(name)

    def _timed(self, phase, name, function):
        @functools.wraps(function)
        def timed(*args, **kwargs):
            started = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                if self.counting == phase:
                    self.seconds[phase][name] += time.thread_time() - started
        return timed


class CollectorPasses:
    """Counts the collector's passes per generation while ``counting``, and their CPU time."""

    def __init__(self):
        self.counting = False
        self.passes = [0, 0, 0]
        self.seconds = [0.0, 0.0, 0.0]
        self._started = 0.0

    def __call__(self, phase, info):
        if phase == "start":
            self._started = time.thread_time()
        elif self.counting:
            self.passes[info["generation"]] += 1
            self.seconds[info["generation"]] += time.thread_time() - self._started


async def measure(args) -> dict:
    figures = {"write": [], "after": []}
    profile = cProfile.Profile() if args.profile else None
    passes = CollectorPasses()
    stages = Stages() if args.stages else None
    gc.callbacks.append(passes)
    async with Cluster(brokers=3) as cluster:
        if args.collector == "default":
            gc.unfreeze()
            gc.set_threshold(700, 10, 10)
        await cluster.controller.write(seed(args.partitions))
        await until_idle(cluster)
        for run in range(args.runs + 1):
            passes.counting = run > 0
            for target in ([2], None):
                change = request(args.partitions, target)
                if stages is not None:
                    stages.counting = "write" if run > 0 and target is not None else None
                start = time.thread_time()
                response = await cluster.controller.write(lambda image: api45.decide(image, change))
                written = time.thread_time()
                if profile is not None and run > 0:
                    profile.enable()
                if stages is not None:
                    stages.counting = "after" if run > 0 and target is not None else None
                await until_idle(cluster)
                done = time.thread_time()
                if stages is not None:
                    stages.counting = None
                if profile is not None:
                    profile.disable()
                assert not any(p.error_code for t in response.responses for p in t.partitions)
                if run > 0 and target is not None:
                    figures["write"].append((written - start) * 1000)
                    figures["after"].append((done - written) * 1000)
    gc.callbacks.remove(passes)
    if profile is not None:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(40)
    figures["passes"] = passes
    figures["stages"] = stages
    return figures


def report(args, figures) -> None:
    for name, what in (("write", "the write (decision, append, fsync wait, apply)"),
                       ("after", "after its commit until idle (the brokers acting on it, rates)")):
        values = figures[name]
        print(f"{what}: event-loop CPU p50 {statistics.median(values):.0f} ms "
              f"(min {min(values):.0f}, max {max(values):.0f}, n={len(values)})")
    if figures["stages"] is not None:
        runs = len(figures["after"])
        for phase, what, rest_is in (("write", "the write", "the request's objects, the event loop"),
                                     ("after", "after the commit", "codec, transport, event loop")):
            stages = figures["stages"]
            seconds = stages.seconds[phase]
            print(f"{what} of an alter, thread CPU per alter (mean of {runs}):")
            for name in stages.present[phase]:
                print(f"  {name}: {seconds[name] / runs * 1000:.0f} ms")
            total = sum(seconds[name] for name in stages.present[phase] if not name.startswith(" "))
            print(f"  the rest ({rest_is}): {sum(figures[phase]) / runs - total / runs * 1000:.0f} ms")
    passes = figures["passes"]
    print(f"collector ({args.collector}) during the counted runs (alters and cancels): "
          + ", ".join(f"generation {g}: {passes.passes[g]} passes, {passes.seconds[g] * 1000:.0f} ms CPU"
                      for g in range(3)))
    print(f"load average at the end: {load_average()}", flush=True)


def alternate(args) -> int:
    """``--against``: this tree and commit REV, each in a process of its own, ``--rounds`` times."""
    forwarded = ["--partitions", str(args.partitions), "--runs", str(args.runs), "--collector", args.collector]
    forwarded += ["--stages"] if args.stages else []
    with tempfile.TemporaryDirectory(prefix="kraftwire-leader-and-isr-") as scratch:
        short, imports = export_commit(args.against, Path(scratch))
        for round_ in range(1, args.rounds + 1):
            for label, env in (("this tree", os.environ),
                               (short, {**os.environ, "PYTHONPATH": str(imports)})):
                print(f"\n=== round {round_}: {label}", flush=True)
                code = subprocess.run([sys.executable, __file__, *forwarded, "--label", label], env=env).returncode
                if code:
                    return code
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--collector", choices=["tuned", "default"], default="tuned")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of what follows the counted writes' commits")
    parser.add_argument("--stages", action="store_true", help="time kraftwire's parts of what follows the counted alters' commits")
    parser.add_argument("--against", metavar="REV", help="measure this tree and commit REV alternately")
    parser.add_argument("--rounds", type=int, default=1, help="with --against: how many times each")
    parser.add_argument("--label", help=argparse.SUPPRESS)  # the code a child of --against measures
    args = parser.parse_args()
    if args.label is None:
        header()
    if args.against:
        return alternate(args)
    import kraftwire
    print(f"code measured: {args.label or 'this tree'} ({Path(kraftwire.__file__).resolve().parent})", flush=True)
    report(args, uvloop.run(measure(args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
