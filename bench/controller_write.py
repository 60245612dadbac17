"""The active controller's CPU per 10,000-partition AlterPartitionReassignments, step by step, in one
process (no sockets, no fsync): what ``ActiveController.write`` and its commit do with the decision.

bench/reassign.py times the whole call against a ``serve`` process, where these steps are a few tens of
milliseconds among the client's, the sockets' and the fsync's, and load from elsewhere on the machine
moves its figures more than they change. Here the same image (3 brokers, two topics of 5,000
partitions on broker 1) gets, alternately, an alter moving all 10,000 partitions to broker 2 and its
cancel, and each step is timed: the decision (``decide``), encoding the batch (``metadata_batch`` of
the records at their versions), the working image applying it (``apply_appended``) and the committed
image adopting it (``adopt_or_apply``). The batch's SHA-256 is printed (the same across commits
that must write the same bytes; the timestamp and base offset are fixed).

With ``--against REV`` the same measurement then runs on an exported copy of commit REV.

Run: python bench/controller_write.py [--runs 15] [--against REV]
"""
from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from kraftwire.codec import records as rec  # noqa: E402
from kraftwire.codec.messages import AlterPartitionReassignmentsRequest as Request  # noqa: E402
from kraftwire.server.controller.replication.reassignment import decide  # noqa: E402
from kraftwire.server.metadata.image import MetadataImage  # noqa: E402
from kraftwire.server.metadata.record_versions import version_for  # noqa: E402
from provenance import header, rerun_at  # noqa: E402

TOPICS = {"a": uuid.UUID(int=1), "b": uuid.UUID(int=2)}
PARTITIONS = 5000
STEPS = ("decide", "encode", "apply", "adopt")


def image() -> MetadataImage:
    made = MetadataImage()
    for broker in (1, 2, 3):
        made.apply(rec.RegisterBrokerRecord(broker_id=broker, incarnation_id=uuid.UUID(int=broker), broker_epoch=10,
                                            fenced=False, log_dirs=[uuid.UUID(int=100 + broker)]), made.offset + 1)
    for name, topic_id in TOPICS.items():
        made.apply(rec.TopicRecord(name=name, topic_id=topic_id), made.offset + 1)
        for index in range(PARTITIONS):
            made.apply(rec.PartitionRecord(partition_id=index, topic_id=topic_id, replicas=[1], isr=[1], leader=1,
                                           directories=[uuid.UUID(int=101)]), made.offset + 1)
    return made


def request(replicas) -> Request:
    return Request(topics=[Request.ReassignableTopic(name=name, partitions=[
        Request.ReassignablePartition(partition_index=index, replicas=replicas) for index in range(PARTITIONS)])
        for name in TOPICS])


def write(working: MetadataImage, committed: MetadataImage, req: Request, times: dict) -> bytes:
    """One write as the active controller does it, each step timed into ``times``; the batch's bytes."""
    t0 = time.perf_counter()
    records = decide(working, req).records
    t1 = time.perf_counter()
    level, base = working.metadata_version_level, working.offset + 1
    batch = rec.metadata_batch(base, 1, 0, [(record, version_for(record, level)) for record in records])
    t2 = time.perf_counter()
    known = working.apply_appended(records, base)
    t3 = time.perf_counter()
    committed.adopt_or_apply([(base + i, record) for i, record in enumerate(records)], known)
    t4 = time.perf_counter()
    for step, seconds in zip(STEPS, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
        times.setdefault(step, []).append(seconds * 1000)
    return batch


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--against", metavar="REV", help="then measure this commit the same way")
    parser.add_argument("--label", help=argparse.SUPPRESS)  # the commit an --against run measures
    args = parser.parse_args()
    if args.label is None:
        header()
    working, committed = image(), image()
    alter, cancel = request([2]), request(None)
    times = {"alter": {}, "cancel": {}}
    digests = {}
    for run in range(args.runs + 1):  # the first pair warms up (caches, code paths) and is not counted
        for name, req in (("alter", alter), ("cancel", cancel)):
            counted = times[name] if run else {}
            digests.setdefault(name, hashlib.sha256(write(working, committed, req, counted)).hexdigest()[:16])
    print(f"\n=== kraftwire {args.label or 'of this tree'}: medians of {args.runs} (ms); batch SHA-256 of the first")
    for name, steps in times.items():
        medians = {step: statistics.median(values) for step, values in steps.items()}
        print(f"  {name:<7}" + "".join(f"{step} {ms:6.2f}   " for step, ms in medians.items()) +
              f"sum {sum(medians.values()):6.2f}   batch {digests[name]}")
    if args.against:
        return rerun_at(args.against, __file__, ["--runs", str(args.runs)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
