"""The audit in one Python process, no Spark: the fast path for small logs and the tests' oracle.

It reads the splits in log order and feeds every record as it comes, global records to the
``GlobalReplay`` and partition records to their ``PartitionReplay`` (a topic's deletion reaches its
partitions at its offset), so it holds one state per partition, never the log. The partition tables
are written as they grow, as part 0.
"""
from __future__ import annotations

import uuid
from collections import defaultdict

from . import tables
from .reader import SplitStats, read_split
from .global_replay import GlobalReplay
from .joins import Digest
from .partition_replay import PartitionReplay
from .rows import EVERYTHING, PARTITION_TABLES, Output, Window, few_collections
from .results import AuditResult, conclude
from .splits import DEFAULT_SPLIT_BYTES, plan

FLUSH_ROWS = 50_000


@few_collections()
def run(directories: list[str], out: str, window: Window = EVERYTHING,
        split_bytes: int = DEFAULT_SPLIT_BYTES) -> AuditResult:
    log_plan = plan(directories, split_bytes)
    tables.clear(out)
    output = Output(window)
    glob = GlobalReplay(output)
    topics = glob.topics
    partitions: dict[bytes, PartitionReplay] = {}
    by_topic: dict[uuid.UUID, list[PartitionReplay]] = defaultdict(list)
    writer = tables.TableWriter(out, 0, ensure=PARTITION_TABLES)
    digest = Digest(window)
    records = output.rows["records"]
    all_stats = []
    for split in log_plan.splits:
        stats = SplitStats(split.index, split.name)
        for key, raw in read_split(split, stats):
            if key:
                replay = partitions.get(key)
                if replay is None:
                    replay = partitions[key] = PartitionReplay.for_key(key, output)
                    by_topic[replay.topic_id].append(replay)
                replay.feed(raw, topics)
            else:
                deleted = glob.feed(raw)
                if deleted is not None:
                    for replay in by_topic.get(deleted, ()):
                        replay.delete(raw[0], raw[1])
            if len(records) >= FLUSH_ROWS:
                write_partition_tables(writer, output, digest, None)
                records = output.rows["records"]
        all_stats.append(stats)
    for replay in partitions.values():
        replay.finish()
    end_timestamp = max((s.max_timestamp for s in all_stats if s.max_timestamp is not None), default=None)
    write_partition_tables(writer, output, digest, end_timestamp)
    return conclude(out, window, log_plan, all_stats, glob, output.drain("violations"), digest, output.urp,
                    output.record_types, writer.close(), "local")


def write_partition_tables(writer: tables.TableWriter, output: Output, digest: Digest,
                           end_timestamp: int | None) -> None:
    """Write the partition tables' rows gathered so far (reassignments and RF changes in the window,
    after the digest took them in); ``end_timestamp`` is the log's, for reassignments still running."""
    writer.write("records", output.drain("records"))
    writer.write("partition_states", output.drain("partition_states"))
    reassignments, rf_changes = digest.add(output.drain("reassignments"), output.drain("rf_changes"), end_timestamp)
    writer.write("reassignments", reassignments)
    writer.write("rf_changes", rf_changes)
