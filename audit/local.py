"""The audit in one Python process, no Spark: the fast path for small logs and the tests' oracle.

It reads the splits in log order and feeds every record as it comes, global records to the
``GlobalReplay`` and partition records to their ``PartitionReplay`` (a topic's deletion reaches its
partitions at its offset), so it holds one state per partition, never the log. Big tables are
written as they grow, as part 0.
"""
from __future__ import annotations

import uuid
from collections import defaultdict

from . import tables
from .reader import SplitStats, read_split
from .replay import BIG_TABLES, EVERYTHING, GlobalReplay, Output, PartitionReplay, Window
from .results import SMALL_TABLES, AuditResult, conclude
from .splits import DEFAULT_SPLIT_BYTES, plan

FLUSH_ROWS = 50_000


def run(directories: list[str], out: str, window: Window = EVERYTHING,
        split_bytes: int = DEFAULT_SPLIT_BYTES) -> AuditResult:
    log_plan = plan(directories, split_bytes)
    tables.clear(out)
    output = Output(window)
    glob = GlobalReplay(output)
    topics = glob.topics
    partitions: dict[bytes, PartitionReplay] = {}
    by_topic: dict[uuid.UUID, list[PartitionReplay]] = defaultdict(list)
    writer = tables.TableWriter(out, 0, ensure=BIG_TABLES)
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
                write_big(writer, output)
                records = output.rows["records"]
        all_stats.append(stats)
    for replay in partitions.values():
        replay.finish()
    write_big(writer, output)
    big_counts = writer.close()
    small = {name: output.drain(name) for name in SMALL_TABLES}
    return conclude(out, window, log_plan, all_stats, glob, small, output.urp, output.record_types,
                    big_counts, "local")


def write_big(writer: tables.TableWriter, output: Output) -> None:
    for table in BIG_TABLES:
        writer.write(table, output.drain(table))
