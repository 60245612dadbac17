"""The audit as a Spark job: ``spark-submit audit/job.py LOG_DIR... --out OUT`` or ``kraftwire audit``.

A thin shell around the pure-Python replay (``audit.partition_replay``, ``audit.global_replay``; see
audit/README.md for running it on a cluster):

1. the driver lists the files and cuts segments into index-aligned splits (``audit.splits``);
2. one task per split reads its byte range through pyarrow (any URI) and checks its batches with the
   codec; records are grouped by partition key, the key's hash picks one of N replay partitions, and
   the records that concern no single partition go to partition N. Values stay undecoded bytes, and a
   task emits one pickled group per replay partition, so the shuffle moves few, large objects;
3. job 1 reads partition N for the split stats and the topic records: the driver broadcasts the
   topics (names, deletions), all a partition's replay needs from the rest of the log;
4. job 2 (the shuffle is reused, not redone) replays every partition key of partitions 0..N-1 in
   offset order, each task writing its part of the partition tables (records, partition_states,
   reassignments, rf_changes) straight from Python and returning its violations and a ``Digest``,
   while partition N's task replays the global records (topics, brokers, configs, control records);
5. the driver joins what came back (``audit.results``: throttles against the reassignments'
   spans, under-replicated counts) and writes the other tables.

Pickled RDDs rather than DataFrames: the bench (bench/README.md) measured both; the rows never enter
the JVM except as opaque shuffle bytes.

Never sets the master when submitted (spark-submit's ``--master`` rules); ``kraftwire audit`` and
``python audit/job.py`` default to ``local[*]`` with settings for a quiet local run.
"""
from __future__ import annotations

import argparse
import os
import sys
import zlib
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from itertools import accumulate, chain, repeat
from typing import TYPE_CHECKING, Any

from kraftwire.audit import executors, local, report, storage, tables
from kraftwire.audit.options import add_arguments, window_bounds
from kraftwire.audit.reader import KEY_BYTES, SplitStats, is_topic_record, read_split
from kraftwire.audit.global_replay import GlobalReplay
from kraftwire.audit.joins import Digest, merge_urp
from kraftwire.audit.partition_replay import Topics, replay_partition
from kraftwire.audit.rows import EVERYTHING, PARTITION_TABLES, Output, Raw, Window, few_collections
from kraftwire.audit.results import DRIVER_TABLES, AuditResult, conclude
from kraftwire.audit.splits import DEFAULT_SPLIT_BYTES, Split, plan

if TYPE_CHECKING:
    from pyspark import Broadcast
    from pyspark.sql import SparkSession

# what the map side sends a replay partition: (split index, packed records), or to partition N (split index,
# (global raw records, split stats))
Routed = tuple[int, tuple[int, Any]]

LOCAL_SETTINGS = {
    "spark.ui.enabled": "false",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
}


def session(master: str | None = None, settings: dict[str, str] | None = None, progress: bool = True,
            executor_env: str | None = None) -> SparkSession:
    """A SparkSession for the audit. Submitted jobs (a gateway already exists) keep the master and
    settings spark-submit gave; otherwise the master defaults to local[*] and local runs stay on
    loopback with no web UI. The workers' interpreter is chosen by ``executors.executor_python``; on a
    cluster master the kraftwire code is shipped, and ``executor_env`` (a pack-env archive) with it."""
    from pyspark.sql import SparkSession

    settings = dict(settings or {})
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ
    effective = master or (submitted_master() if submitted else "local[*]")
    builder = SparkSession.builder.appName("kraftwire-audit")
    if master or not submitted:
        builder = builder.master(effective)
    if not submitted and executors.is_local(effective):
        for key, value in LOCAL_SETTINGS.items():
            builder = builder.config(key, value)
    if executor_env and not executors.is_local(effective):
        settings.update(executors.env_settings(executor_env))
    builder = builder.config("spark.ui.showConsoleProgress", "true" if progress else "false")
    for key, value in settings.items():
        builder = builder.config(key, value)
    with _environment("PYSPARK_PYTHON", executors.executor_python(effective, settings)):
        spark = builder.getOrCreate()
    sc = spark.sparkContext
    sc.setLogLevel("WARN")
    if not executors.is_local(sc.master):
        from pyspark import SparkFiles

        staging = os.path.join(SparkFiles.getRootDirectory(), "kraftwire-code")  # removed with the context
        os.makedirs(staging, exist_ok=True)
        sc.addPyFile(executors.code_zip(staging))
        executors.check_executors(sc)
    return spark


def submitted_master() -> str:
    """The master spark-submit was given (read from the JVM it started)."""
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()
    return SparkConf().get("spark.master", "local[*]")


@contextmanager
def _environment(name: str, value: str | None) -> Iterator[None]:
    """``os.environ[name] = value`` while the block runs (nothing when ``value`` is None)."""
    before = os.environ.get(name)
    if value is not None:
        os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


@few_collections()
def run(spark: SparkSession, directories: list[str], out: str, window: Window = EVERYTHING,
        split_bytes: int = DEFAULT_SPLIT_BYTES, partitions: int | None = None) -> AuditResult:
    sc = spark.sparkContext
    log_plan = plan(directories, split_bytes)
    tables.clear(out)
    cores = sc.defaultParallelism
    n = partitions or -(-max(len(log_plan.splits), 4 * cores) // cores) * cores  # whole waves of tasks
    routed = sc.parallelize(log_plan.splits, max(1, len(log_plan.splits))).mapPartitions(partial(_route, n))
    grouped = routed.partitionBy(n + 1, _identity)

    sc.setJobDescription("kraftwire audit: read splits, collect the topics")
    stats = []
    topic_replay = GlobalReplay(Output())
    for split_stats, topic_raws in sorted(sc.runJob(grouped, _topic_records, [n]), key=lambda r: r[0].index):
        stats.append(split_stats)
        for raw in topic_raws:
            topic_replay.feed(raw)

    sc.setJobDescription("kraftwire audit: replay partitions")
    topics = sc.broadcast(topic_replay.topics)
    end_timestamp = max((s.max_timestamp for s in stats if s.max_timestamp is not None), default=None)
    results = grouped.mapPartitionsWithIndex(partial(_replay, n, topics, window, end_timestamp, out)).collect()
    topics.unpersist()

    glob = next(result["global"] for result in results if "global" in result)
    violations = []
    digest = Digest(window)
    urp: dict[int, list] = {}
    record_types = Counter(glob.out.record_types)
    counts: Counter[str] = Counter()
    for part in results:
        counts.update(part["counts"])
        if "global" in part:
            continue
        violations.extend(part["violations"])
        digest.merge(part["digest"])
        merge_urp(urp, part["urp"])
        record_types.update(part["types"])
    result = conclude(out, window, log_plan, stats, glob, violations, digest, urp, record_types, dict(counts),
                      f"spark {sc.master}")
    parts: dict[str, Sequence[int]] = {table: range(n) for table in PARTITION_TABLES}
    parts["records"] = range(n + 1)
    parts.update((table, (0,)) for table in DRIVER_TABLES)
    problems = tables.unseen(out, parts, result.counts)
    if problems:
        more = f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
        raise RuntimeError(f"the tables under {out} are not what the executors wrote (is it storage every node "
                           f"shares?): {'; '.join(problems[:5])}{more}")
    return result


def _identity(target: int) -> int:
    return target


def _route(n: int, splits: Iterable[Split]) -> Iterator[Routed]:
    """Map side: (replay partition, (split index, packed records)) for each partition the split feeds,
    then (n, (split index, (global raw records, split stats)))."""
    with few_collections():
        for split in splits:
            stats = SplitStats(split.index, split.name)
            targets: dict[bytes, int] = {}
            routed: dict[int, list[tuple[Any, ...]]] = {}
            global_raws: list[Raw] = []
            for key, raw in read_split(split, stats):
                if key:
                    target = targets.get(key)
                    if target is None:
                        target = targets[key] = zlib.crc32(key) % n
                        routed.setdefault(target, [])
                    routed[target].append((key, *raw))
                else:
                    global_raws.append(raw)
            for target, records in routed.items():
                yield target, (split.index, pack(records))
            yield n, (split.index, (global_raws, stats))


def pack(records: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    """(key, raw record...) tuples as a few arrays and two bytes objects: pickling those costs a small
    fraction of pickling the tuples, which would otherwise be the shuffle's main cost."""
    keys, offsets, timestamps, epochs, controls, snapshots, values = zip(*records)
    return (b"".join(keys), array("q", offsets), array("q", timestamps), array("i", epochs), array("h", controls),
            snapshots[0], array("i", map(len, values)), b"".join(values))


def unpack(packed: tuple[Any, ...]) -> Iterator[tuple[bytes, Raw]]:
    """The (key, raw record) pairs of ``pack``, in their order."""
    keys, offsets, timestamps, epochs, controls, snapshot, lengths, blob = packed
    ends = list(accumulate(lengths))
    values = [blob[start:end] for start, end in zip(chain((0,), ends), ends)]
    key_ends = range(KEY_BYTES, len(keys) + 1, KEY_BYTES)
    return zip([keys[end - KEY_BYTES:end] for end in key_ends],
               zip(offsets, timestamps, epochs, controls, repeat(snapshot), values))


def _topic_records(items: Iterable[Routed]) -> Iterator[tuple[SplitStats, list[Raw]]]:
    """Job 1, on partition N: each split's stats and its topic records (what the replays need first)."""
    for _, (_, (global_raws, stats)) in items:
        yield stats, [raw for raw in global_raws if is_topic_record(raw)]


def _replay(n: int, topics: Broadcast[Topics], window: Window, end_timestamp: int | None, out: str, index: int,
            items: Iterable[Routed]) -> Iterator[dict[str, Any]]:
    """Reduce side: replay every partition key of this Spark partition in offset order; partition N
    replays the global records meanwhile."""
    with few_collections():
        if index == n:
            yield _replay_global(window, out, index, items)
            return
        by_key: dict[bytes, list[Raw]] = {}
        for _, (_, packed) in sorted(items, key=lambda item: item[1][0]):  # in split order, so in log order
            for key, raw in unpack(packed):
                raws = by_key.get(key)
                if raws is None:
                    raws = by_key[key] = []
                raws.append(raw)
        output = Output(window)
        writer = tables.TableWriter(out, index, ensure=PARTITION_TABLES)
        digest = Digest(window)
        known = topics.value
        for key, raws in by_key.items():
            replay_partition(key, raws, known, output)
            if len(output.rows["records"]) >= local.FLUSH_ROWS:
                local.write_partition_tables(writer, output, digest, end_timestamp)
        local.write_partition_tables(writer, output, digest, end_timestamp)
        yield {"violations": output.drain("violations"), "digest": digest, "urp": output.urp,
               "types": output.record_types, "counts": writer.close()}


def _replay_global(window: Window, out: str, index: int, items: Iterable[Routed]) -> dict[str, Any]:
    output = Output(window)
    glob = GlobalReplay(output)
    for _, (_, (raws, _)) in sorted(items, key=lambda item: item[1][0]):
        for raw in raws:
            glob.feed(raw)
    writer = tables.TableWriter(out, index)
    writer.write("records", output.drain("records"))
    return {"global": glob, "counts": writer.close()}


def run_command(args: argparse.Namespace) -> int:
    """Run the audit the options describe; prints the summary (and writes the report with --html).
    Returns 2, with a message, when the options or the directories do not make sense, and 1 when the
    executors cannot run the audit or the tables are not all visible under OUT."""
    try:
        window = Window(*window_bounds(args))
        if not args.local:
            master = args.master or (submitted_master() if "PYSPARK_GATEWAY_PORT" in os.environ else None)
            executors.refuse_node_local(master, [*args.log_dirs, args.out])
        missing = [d for d in args.log_dirs if not storage.exists(d)]
        if missing:
            raise ValueError(f"no such directory: {', '.join(missing)}")
    except ValueError as exc:
        print(f"kraftwire audit: {exc}", file=sys.stderr)
        return 2
    split_bytes = int(args.split_mib * (1 << 20))
    try:
        if args.local:
            result = local.run(args.log_dirs, args.out, window, split_bytes)
        else:
            spark = session(args.master, dict(args.conf), executor_env=args.executor_env)
            try:
                result = run(spark, args.log_dirs, args.out, window, split_bytes, args.partitions)
            finally:
                spark.stop()
    except RuntimeError as exc:
        print(f"kraftwire audit: {exc}", file=sys.stderr)
        return 1
    print(report.summary(result))
    if args.html:
        print(f"report: {report.write_html(result)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="audit/job.py", description="Audit a KRaft metadata log with Spark.")
    add_arguments(parser)
    return run_command(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
