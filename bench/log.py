"""Speed of the durable metadata log (server/raft): replay, restart from a snapshot, fsync'd commits.

* replay: a log of 1,000,000 records (a realistic mix: topics with their partitions, then ISR and leader
  changes, reassignment steps and config changes, in batches of 1 to 40 records) is opened (every batch's
  CRC checked) and replayed (every record decoded); then again while rebuilding the metadata image, as
  the controller does at start-up. Records per second.
* snapshot restart: an image of 100,000 partitions (1,000 topics x 100, 3 brokers) is snapshotted; a
  controller then starts on that directory (open, load the snapshot, rebuild its images). Seconds.
* commits: 64 writers each append one small batch and wait for its commit, over and over, for a fixed
  number of commits; fsync'd commits per second with group commit and with one fsync per append.

Run: python bench/log.py [--records N] [--partitions N] [--commits N] [--dir PATH]
(the log files go to a temporary directory under --dir, default the system's; it should be a real disk,
not tmpfs, for the commit figures to mean anything). Replay and restart print wall-clock time and this
process's CPU time: on a shared machine the CPU figure is the one that does not depend on the neighbours.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from provenance import commit  # noqa: E402
from kraftwire.codec import records as rec  # noqa: E402
from kraftwire.codec.constants import ConfigResourceType  # noqa: E402
from kraftwire.codec.log_layout import PARTITION_DIR  # noqa: E402
from kraftwire.server.controller.active_controller import Controller  # noqa: E402
from kraftwire.server.metadata.image import MetadataImage  # noqa: E402
from kraftwire.server.raft import RaftConfig, RaftLog  # noqa: E402

NODE_ID = 3000
BROKERS = (1, 2, 3)


class Timer:
    """Wall-clock and process CPU seconds of a block."""

    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu

    def rate(self, count: int) -> str:
        return f"{count / self.wall:,.0f}/s wall, {count / self.cpu:,.0f}/s CPU"


def command(args) -> str:
    return (f"python bench/log.py --records {args.records} --partitions {args.partitions} "
            f"--commits {args.commits}" + (f" --dir {args.dir}" if args.dir else ""))


def registrations() -> list[tuple]:
    return [(rec.RegisterBrokerRecord(
        broker_id=b, incarnation_id=uuid.uuid4(), broker_epoch=b, fenced=False, log_dirs=[uuid.uuid4()],
        end_points=[rec.RegisterBrokerRecord.BrokerEndpoint(name="PLAINTEXT", host="localhost", port=9091 + b,
                                                            security_protocol=0)]), 3) for b in BROKERS]


def topic_records(name: str, partitions: int, rng: random.Random) -> tuple[uuid.UUID, list[tuple]]:
    topic_id = uuid.uuid4()
    records = [(rec.TopicRecord(name=name, topic_id=topic_id), None)]
    for index in range(partitions):
        replicas = rng.sample(BROKERS, 3)
        records.append((rec.PartitionRecord(partition_id=index, topic_id=topic_id, replicas=replicas, isr=replicas,
                                            leader=replicas[0], leader_epoch=0, partition_epoch=0), 1))
    return topic_id, records


def history(total: int, rng: random.Random):
    """Batches of records adding up to ``total``: topics first, then a stream of partition and config changes."""
    yield [(rec.FeatureLevelRecord(name="metadata.version", feature_level=21), None)] + registrations()
    written = 4
    topics = []
    for i in range(min(2000, total // 100)):
        topic_id, records = topic_records(f"topic-{i:05d}", 10, rng)
        topics.append((topic_id, f"topic-{i:05d}"))
        written += len(records)
        yield records
    while written < total:
        size = min(total - written, rng.choice((1, 1, 2, 3, 5, 8, 13, 20, 40)))
        batch = []
        for _ in range(size):
            topic_id, name = rng.choice(topics)
            kind = rng.random()
            if kind < 0.6:
                isr = rng.sample(BROKERS, rng.randint(1, 3))
                batch.append((rec.PartitionChangeRecord(partition_id=rng.randrange(10), topic_id=topic_id, isr=isr,
                                                        leader=isr[0]), None))
            elif kind < 0.85:
                target = rng.sample(BROKERS, 2)
                batch.append((rec.PartitionChangeRecord(partition_id=rng.randrange(10), topic_id=topic_id,
                                                        replicas=target + [b for b in BROKERS if b not in target],
                                                        adding_replicas=[], removing_replicas=[
                                                            b for b in BROKERS if b not in target]), None))
            else:
                batch.append((rec.ConfigRecord(resource_type=ConfigResourceType.TOPIC, resource_name=name,
                                               name="leader.replication.throttled.replicas",
                                               value=rng.choice([None, "0:1,1:2"])), None))
        written += size
        yield batch


async def write_log(directory: Path, batches, snapshot: bool = False) -> RaftLog:
    log = RaftLog(directory, NODE_ID, RaftConfig(snapshot_every_bytes=None))
    await log.open()
    image = MetadataImage()
    log.add_commit_listener(lambda committed: [image.apply(r, o) for o, r in committed])
    log.snapshot_source = image.snapshot_batches
    pending = []
    for batch in batches:
        pending.append(log.append(batch)[1])
        if len(pending) >= 2000:
            await asyncio.gather(*pending)
            pending = []
    await asyncio.gather(*pending)
    if snapshot:
        await log.snapshot()
    await log.close()
    return log


async def bench_replay(directory: Path, total: int) -> None:
    await write_log(directory, history(total, random.Random(1)))
    size = sum(p.stat().st_size for p in (directory / PARTITION_DIR).glob("*.log"))

    log = RaftLog(directory, NODE_ID)
    with Timer() as opening:
        await log.open()
    with Timer() as decoding:
        count = sum(1 for _ in log.replay())
    await log.close()
    total = opening.wall + decoding.wall
    print(f"replay: {count:,} records, {size / 2**20:.0f} MiB: open (recovery scan, CRC-32C) {opening.wall:.2f} s, "
          f"decode {decoding.wall:.2f} s; {count / total:,.0f} records/s wall, "
          f"{count / (opening.cpu + decoding.cpu):,.0f} records/s CPU")

    log = RaftLog(directory, NODE_ID)
    with Timer() as rebuilding:
        await log.open()
        image = MetadataImage()
        for offset, record in log.replay():
            image.apply(record, offset)
    await log.close()
    print(f"replay into the metadata image: {count:,} records in {rebuilding.wall:.2f} s; "
          f"{rebuilding.rate(count).replace('/s', ' records/s')}")


async def bench_snapshot_restart(directory: Path, partitions: int) -> None:
    rng = random.Random(2)
    per_topic = 100
    batches = [[(rec.FeatureLevelRecord(name="metadata.version", feature_level=21), None)] + registrations()]
    batches += [topic_records(f"topic-{i:05d}", per_topic, rng)[1] for i in range(partitions // per_topic)]
    log = await write_log(directory, batches, snapshot=True)
    [snapshot] = (directory / PARTITION_DIR).glob("*.checkpoint")

    controller = Controller(RaftLog(directory, NODE_ID))
    with Timer() as starting:
        await controller.start()
    loaded = sum(len(t.partitions) for t in controller.committed.topics.values())
    await controller.stop()
    print(f"restart from a snapshot of {loaded:,} partitions ({snapshot.stat().st_size / 2**20:.1f} MiB, "
          f"tail of {log.end_offset - int(snapshot.name[:20])} records): controller started in {starting.wall:.2f} s "
          f"({starting.cpu:.2f} s CPU)")


async def bench_commits(directory: Path, commits: int, group_commit: bool) -> None:
    log = RaftLog(directory, NODE_ID, RaftConfig(group_commit=group_commit))
    await log.open()
    topic_id = uuid.uuid4()
    record = [(rec.PartitionChangeRecord(partition_id=0, topic_id=topic_id, isr=[1, 2], leader=1), None)]
    per_writer = commits // 64

    async def writer() -> None:
        for _ in range(per_writer):
            await log.append(record)[1]

    fsyncs_before = log.fsync_count
    start = time.perf_counter()
    await asyncio.gather(*(writer() for _ in range(64)))
    elapsed = time.perf_counter() - start
    fsyncs = log.fsync_count - fsyncs_before
    await log.close()
    mode = "group commit" if group_commit else "one fsync per append"
    print(f"commits, 64 writers, {mode}: {64 * per_writer:,} commits in {elapsed:.2f} s = "
          f"{64 * per_writer / elapsed:,.0f} commits/s ({fsyncs:,} fsyncs, {64 * per_writer / fsyncs:.1f} commits each)")


def fsync_latency(root: Path, count: int = 50) -> None:
    """How long one fsync of a small append takes on the log's file system (what a commit waits for)."""
    path = root / "fsync-probe"
    times = []
    with open(path, "ab") as f:
        for _ in range(count):
            f.write(b"\0" * 4096)
            f.flush()
            start = time.perf_counter()
            os.fsync(f.fileno())
            times.append(time.perf_counter() - start)
    path.unlink()
    times.sort()
    print(f"fsync of a 4 KiB append: median {times[len(times) // 2] * 1000:.2f} ms, "
          f"max {times[-1] * 1000:.2f} ms ({count} fsyncs)")


async def main(args) -> None:
    root = Path(tempfile.mkdtemp(prefix="kraftwire-bench-", dir=args.dir))
    try:
        print(f"$ {command(args)}")
        print(f"commit: {commit()}")
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
        fsync_latency(root)
        await bench_replay(root / "replay", args.records)
        await bench_snapshot_restart(root / "snapshot", args.partitions)
        await bench_commits(root / "group", args.commits, group_commit=True)
        await bench_commits(root / "single", max(64, args.commits // 8), group_commit=False)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000, help="records in the replayed log")
    parser.add_argument("--partitions", type=int, default=100_000, help="partitions in the snapshot")
    parser.add_argument("--commits", type=int, default=64_000, help="commits with group commit (an eighth without)")
    parser.add_argument("--dir", default=None, help="where to put the log files (default: the system's temp dir)")
    asyncio.run(main(parser.parse_args()))
