"""The audit over a DataFrame, for ``bench/audit.py --compare-paths``: the Arrow path of the reference.

Same splitter, reader and replay as audit.job, but the raw records reach Spark as Arrow batches from
a Spark 4 Python data source (``spark.read.format("kraft")``, one input partition per split); the
global records are a filtered scan collected to the driver; the partition records are
``repartition(key)``, ``sortWithinPartitions(key, split, seq)`` and replayed by ``mapInArrow`` in one
streaming pass per Spark partition, each task writing its part of the big tables as audit.job's do.
"""
from __future__ import annotations

import json
import pickle
from functools import partial

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.functions import length

from kraftwire.audit import local, tables
from kraftwire.audit.reader import SplitStats, read_split
from kraftwire.audit.global_replay import GlobalReplay
from kraftwire.audit.joins import Digest, merge_urp
from kraftwire.audit.partition_replay import replay_partition
from kraftwire.audit.rows import EVERYTHING, PARTITION_TABLES, Output
from kraftwire.audit.results import conclude
from kraftwire.audit.splits import plan

SCHEMA = pa.schema([("key", pa.binary()), ("split", pa.int32()), ("seq", pa.int32()), ("offset", pa.int64()),
                    ("timestamp", pa.int64()), ("epoch", pa.int32()), ("control", pa.int16()),
                    ("snapshot", pa.bool_()), ("value", pa.binary())])
DRIVER_PART = 99_999


class SplitPartition(InputPartition):
    def __init__(self, split):
        super().__init__(split.index)
        self.split = split


class KraftSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "kraft"

    def schema(self) -> str:
        return ("key binary, split int, seq int, offset long, timestamp long, epoch int, control short, "
                "snapshot boolean, value binary")

    def reader(self, schema):
        return KraftReader(json.loads(self.options["dirs"]), int(self.options["split_bytes"]))


class KraftReader(DataSourceReader):
    def __init__(self, directories, split_bytes):
        self.directories, self.split_bytes = directories, split_bytes

    def partitions(self):
        return [SplitPartition(s) for s in plan(self.directories, self.split_bytes).splits]

    def read(self, partition):
        split = partition.split
        columns = [[] for _ in SCHEMA]
        stats = SplitStats(split.index, split.name)
        for seq, (key, raw) in enumerate(read_split(split, stats)):
            for column, value in zip(columns, (key, split.index, seq, *raw)):
                column.append(value)
        yield pa.RecordBatch.from_arrays([pa.array(c, f.type) for c, f in zip(columns, SCHEMA)], schema=SCHEMA)


def _raws(batch: pa.RecordBatch):
    columns = [batch.column(name).to_pylist() for name in ("offset", "timestamp", "epoch", "control", "snapshot",
                                                            "value")]
    return list(zip(*columns))


def _replay(topics, window, end_timestamp, out, batches):
    from pyspark import TaskContext

    part = TaskContext.get().partitionId()
    output = Output(window)
    writer = tables.TableWriter(out, part, ensure=PARTITION_TABLES)
    digest = Digest(window)
    known = topics.value
    key, raws = None, []
    for batch in batches:
        keys = batch.column("key").to_pylist()
        for k, raw in zip(keys, _raws(batch)):
            if k != key:
                if raws:
                    replay_partition(key, raws, known, output)
                key, raws = k, []
            raws.append(raw)
        if len(output.rows["records"]) >= local.FLUSH_ROWS:
            local.write_partition_tables(writer, output, digest, end_timestamp)
    if raws:
        replay_partition(key, raws, known, output)
    local.write_partition_tables(writer, output, digest, end_timestamp)
    result = {"violations": output.drain("violations"), "digest": digest, "urp": output.urp,
              "types": output.record_types, "counts": writer.close()}
    yield pa.RecordBatch.from_arrays([pa.array([pickle.dumps(result)], pa.binary())], names=["result"])


def run_arrow(spark, directories, out, split_bytes, window=EVERYTHING) -> dict:
    from collections import Counter

    log_plan = plan(directories, split_bytes)
    tables.clear(out)
    spark.sparkContext.addPyFile(__file__)  # the workers unpickle this module's classes
    spark.dataSource.register(KraftSource)
    raw = (spark.read.format("kraft").option("dirs", json.dumps(directories))
           .option("split_bytes", str(split_bytes)).load())
    output = Output(window)
    glob = GlobalReplay(output)
    for batch in raw.where(length("key") == 0).orderBy("split", "seq").toArrow().to_batches():
        for r in _raws(batch):
            glob.feed(r)
    writer = tables.TableWriter(out, DRIVER_PART)
    writer.write("records", output.drain("records"))
    counts = Counter(writer.close())
    n = max(len(log_plan.splits), 2 * spark.sparkContext.defaultParallelism)
    topics = spark.sparkContext.broadcast(glob.topics)
    replayed = (raw.where(length("key") > 0).repartition(n, "key").sortWithinPartitions("key", "split", "seq")
                .mapInArrow(partial(_replay, topics, window, None, out), "result binary"))
    violations, digest = [], Digest(window)
    urp, types = output.urp, Counter(output.record_types)
    for row in replayed.collect():
        result = pickle.loads(row.result)
        violations.extend(result["violations"])
        digest.merge(result["digest"])
        merge_urp(urp, result["urp"])
        types.update(result["types"])
        counts.update(result["counts"])
    stats = [SplitStats(s.index, s.name) for s in log_plan.splits]  # offsets and findings not gathered here
    return conclude(out, window, log_plan, stats, glob, violations, digest, urp, types, dict(counts),
                    "arrow").counts
