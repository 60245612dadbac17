"""Boot time of a production twin (``kraftwire serve --from-log``) from a large metadata log.

A source metadata log is written with kraftwire's own log writer: metadata.version, 3 brokers with 2
log directories each, then ``--topics`` topics of ``--partitions-per-topic`` partitions (replication
factor 3, every replica assigned a directory), one batch per topic, plus a ``meta.properties`` with the
cluster id. Then ``kraftwire serve --from-log SOURCE`` runs as a child process on a new data directory
(ports from the kernel) and is timed until it prints that it is ready, and until a client's Metadata
request for all topics lists every partition. The source is read and the twin's snapshot written in
that time. Figures: wall-clock seconds, the child's CPU seconds by then (user + system, from
/proc/PID/stat: the figure that does not depend on the neighbours of a shared machine) and its peak RSS.

Run: python bench/twin.py [--topics 1000] [--partitions-per-topic 100] [--runs 3] [--dir PATH]
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kraftwire.codec import records as rec  # noqa: E402
from kraftwire.codec.log_layout import PARTITION_DIR  # noqa: E402
from kraftwire.codec.messages import MetadataRequest  # noqa: E402
from kraftwire.server.metadata.record_versions import METADATA_VERSION_FEATURE, METADATA_VERSIONS  # noqa: E402
from kraftwire.server.raft import RaftLog  # noqa: E402
from kraftwire.server.raft.storage import load_meta_properties  # noqa: E402
from kraftwire.server.wire.client import KafkaClient  # noqa: E402

SOURCE_CONTROLLER = 3000
BROKERS = (1, 2, 3)
LEVEL = METADATA_VERSIONS["3.9-IV0"]


def command(args) -> str:
    return (f"python bench/twin.py --topics {args.topics} --partitions-per-topic {args.partitions_per_topic} "
            f"--runs {args.runs}" + (f" --dir {args.dir}" if args.dir else ""))


async def write_source(directory: Path, topics: int, per_topic: int) -> int:
    """The source cluster's metadata log; returns its size in bytes."""
    rng = random.Random(7)
    dirs = {b: [uuid.UUID(int=rng.getrandbits(128), version=4) for _ in range(2)] for b in BROKERS}
    log = RaftLog(directory, SOURCE_CONTROLLER)
    await log.open()
    await log.append([(rec.FeatureLevelRecord(name=METADATA_VERSION_FEATURE, feature_level=LEVEL), 0)] + [
        (rec.RegisterBrokerRecord(
            broker_id=b, incarnation_id=uuid.UUID(int=rng.getrandbits(128), version=4), broker_epoch=b, fenced=False,
            log_dirs=dirs[b], end_points=[rec.RegisterBrokerRecord.BrokerEndpoint(
                name="PLAINTEXT", host=f"kafka-{b}.example", port=9092, security_protocol=0)]), 3)
        for b in BROKERS])[1]
    for t in range(topics):
        topic_id = uuid.UUID(int=rng.getrandbits(128), version=4)
        batch = [(rec.TopicRecord(name=f"topic-{t:05d}", topic_id=topic_id), 0)]
        for index in range(per_topic):
            replicas = rng.sample(BROKERS, 3)
            batch.append((rec.PartitionRecord(
                partition_id=index, topic_id=topic_id, replicas=replicas, isr=replicas, leader=replicas[0],
                leader_epoch=0, partition_epoch=0, directories=[rng.choice(dirs[b]) for b in replicas]), 1))
        await log.append(batch)[1]
    await log.close()
    load_meta_properties(directory, None, SOURCE_CONTROLLER)
    return sum(p.stat().st_size for p in (directory / PARTITION_DIR).iterdir())


async def partitions_listed(bootstrap: str) -> int:
    host, port = bootstrap.split(",")[0].split(":")
    client = KafkaClient(host, int(port), "bench-twin")
    try:
        answer = await client.send(MetadataRequest(topics=None), 12)
        return sum(len(topic.partitions) for topic in answer.topics)
    finally:
        await client.close()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a live process (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def boot(source: Path, data_dir: Path, expected: int) -> dict:
    """One ``serve --from-log``: seconds until ready and until every partition is listed, peak RSS."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "kraftwire", "serve", "--from-log", str(source), "--data-dir",
                              str(data_dir), "--port", "0", "--controller-port", "0", "--log-level", "WARNING"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        for line in child.stdout:
            if line.startswith("kraftwire ready on "):
                ready, ready_cpu = time.perf_counter() - started, cpu_seconds(child.pid)
                bootstrap = line.split()[-1]
                break
        else:
            raise SystemExit(f"serve --from-log exited with {child.wait()} before it was ready")
        listed = asyncio.run(partitions_listed(bootstrap))
        seen, seen_cpu = time.perf_counter() - started, cpu_seconds(child.pid)
        if listed != expected:
            raise SystemExit(f"a client saw {listed} partitions, not {expected}")
    finally:
        child.terminate()
        child.wait(120)
    return {"ready": ready, "seen": seen, "ready_cpu": ready_cpu, "seen_cpu": seen_cpu,
            "rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", type=int, default=1000)
    parser.add_argument("--partitions-per-topic", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", default=None, help="where the logs are written (default: the system's temp dir)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-twin-", dir=args.dir))
    try:
        partitions = args.topics * args.partitions_per_topic
        began = time.perf_counter()
        size = asyncio.run(write_source(root / "source", args.topics, args.partitions_per_topic))
        print(f"source: {args.topics:,} topics, {partitions:,} partitions, RF 3, {size / (1 << 20):.1f} MiB of "
              f"metadata log, written in {time.perf_counter() - began:.1f} s")
        runs = [boot(root / "source" / PARTITION_DIR, root / f"twin-{i}", partitions) for i in range(args.runs)]
        for i, run in enumerate(runs, 1):
            print(f"run {i}: ready {run['ready']:.2f} s ({run['ready_cpu']:.2f} s CPU), all {partitions:,} "
                  f"partitions listed {run['seen']:.2f} s ({run['seen_cpu']:.2f} s CPU)")
        median = sorted(runs, key=lambda r: r["seen_cpu"])[len(runs) // 2]
        print(f"median (by CPU): ready {median['ready']:.2f} s ({median['ready_cpu']:.2f} s CPU), listed "
              f"{median['seen']:.2f} s ({median['seen_cpu']:.2f} s CPU); peak RSS of a twin "
              f"{max(r['rss_mb'] for r in runs):.0f} MB")
        print(f"command: {command(args)}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
