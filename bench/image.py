"""The metadata image alone: what a partition costs to hold and to apply, in one process.

Builds ``--partitions`` PartitionRecords (topics of 1,000, RF 3 over 4 brokers, each replica in its
broker's one log directory, as a JBOD-less kraftwire broker registers), each through its on-disk frame:
times decoding them and applying them to an empty image, then applying one PartitionChangeRecord (a
reassignment's start) to each of ``--changes`` partitions, and measures the image's memory per
partition with tracemalloc (a separate build, so tracing does not slow the timings).

Then a controller's snapshot load: the image is written as a snapshot with the snapshot writer
(``write_snapshot`` of ``to_records``, in a temporary directory) and loaded back both ways, timed: the
records read and decoded (``read_snapshot``) and applied one by one, and the frames handed undecoded
to ``MetadataImage.apply_frames`` as a controller's start does (``RaftLog.replay(frames=...)``); both
images must equal the one written. The garbage collector runs with the thresholds a running cluster
sets (server/host/collector.py).

Run: python bench/image.py [--partitions 200000] [--changes 20000]
"""
from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from provenance import header, load_average  # noqa: E402
from kraftwire.codec import records as rec  # noqa: E402
from kraftwire.server.metadata.image import MetadataImage  # noqa: E402
from kraftwire.server.metadata.record_versions import METADATA_VERSIONS, version_for  # noqa: E402
from kraftwire.server.host import collector  # noqa: E402
from kraftwire.server.raft.snapshots import SnapshotId, load_snapshot_frames, read_snapshot, write_snapshot  # noqa: E402

BROKERS = 4
TOPIC_PARTITIONS = 1000
DIRECTORIES = {b: uuid.UUID(int=(b << 64) + 1) for b in range(1, BROKERS + 1)}


def frames(partitions: int) -> list[bytes]:
    level = METADATA_VERSIONS["4.3-IV0"]
    records = []
    for t in range(partitions // TOPIC_PARTITIONS):
        topic_id = uuid.UUID(int=(1 << 96) + t)
        records.append(rec.TopicRecord(name=f"topic-{t}", topic_id=topic_id))
        for p in range(TOPIC_PARTITIONS):
            replicas = [1 + (p + t + i) % BROKERS for i in range(3)]
            records.append(rec.PartitionRecord(partition_id=p, topic_id=topic_id, replicas=replicas, isr=replicas,
                                               leader=replicas[0], directories=[DIRECTORIES[b] for b in replicas]))
    return [rec.encode_frame(r, version_for(r, level)) for r in records]


def built(records) -> MetadataImage:
    image = MetadataImage()
    for offset, record in enumerate(records):
        image.apply(record, offset)
    return image


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=200_000)
    parser.add_argument("--changes", type=int, default=20_000)
    args = parser.parse_args()
    header()
    encoded = frames(args.partitions)
    start = time.process_time()
    records = [rec.decode_frame(frame)[0] for frame in encoded]
    decoded = time.process_time()
    image = built(records)
    applied = time.process_time()
    n = len(records)
    partitions = [r for r in records if type(r) is rec.PartitionRecord]
    assert sum(len(t.partitions) for t in image.topics.values()) == len(partitions) == args.partitions
    changes = [rec.PartitionChangeRecord(partition_id=r.partition_id, topic_id=r.topic_id, replicas=[1, 2, 3, 4],
                                         adding_replicas=[b for b in (1, 2, 3, 4) if b not in r.replicas],
                                         directories=[*r.directories, uuid.UUID(int=0)])
               for r in partitions[:args.changes]]
    start_changes = time.process_time()
    for offset, change in enumerate(changes, start=image.offset + 1):
        image.apply(change, offset)
    changed = time.process_time()
    assert len(list(image.reassigning_partitions())) == len(changes)
    del image, records, partitions, changes
    tracemalloc.start()  # decoded inside the trace and dropped: the image holds what it keeps
    held = built(rec.decode_frame(frame)[0] for frame in encoded)
    traced = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert len(held.topics) == args.partitions // TOPIC_PARTITIONS
    print(f"{args.partitions:,} partitions ({n:,} records): decode {(decoded - start) / n * 1e6:.1f} us/record, "
          f"apply {(applied - decoded) / n * 1e6:.1f} us/record (process CPU)")
    print(f"PartitionChangeRecord apply: {(changed - start_changes) / args.changes * 1e6:.1f} us/record "
          f"({args.changes:,})")
    print(f"image memory: {traced / args.partitions:,.0f} B/partition (tracemalloc)")
    snapshot_load(args.partitions, encoded)
    print(f"load average at the end: {load_average()}")


def snapshot_load(partitions: int, encoded: list[bytes]) -> None:
    image = built(rec.decode_frame(frame)[0] for frame in encoded)
    gc.collect()
    gc.set_threshold(*collector.THRESHOLDS)
    with tempfile.TemporaryDirectory(prefix="kraftwire-image-") as directory:
        path = write_snapshot(Path(directory), SnapshotId(len(encoded), 1), 0, 0, image.to_records())
        start = time.perf_counter()
        decoded = MetadataImage()
        for record in read_snapshot(path):
            decoded.apply(record, len(encoded) - 1)
        one_by_one = time.perf_counter()
        framed = MetadataImage()
        load_snapshot_frames(path, lambda frames: framed.apply_frames(frames, len(encoded) - 1))
        frames_done = time.perf_counter()
        size = path.stat().st_size
    for loaded in (decoded, framed):
        assert loaded.topics == image.topics and loaded.brokers == image.brokers
    print(f"snapshot of {partitions:,} partitions ({size / 2**20:,.1f} MiB) loaded, wall: records decoded and "
          f"applied {one_by_one - start:.2f} s ({(one_by_one - start) / partitions * 1e6:.2f} us/partition); "
          f"frames (apply_frames) {frames_done - one_by_one:.2f} s "
          f"({(frames_done - one_by_one) / partitions * 1e6:.2f} us/partition)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
