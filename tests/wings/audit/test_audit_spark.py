"""The audit as a Spark job on a real local session (the shared ``spark`` fixture): planted violations
and a realistic scenario, every table checked against the log and against the single-process oracle;
and the job submitted with spark-submit, as a cluster would run it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pyspark
import pytest

from kraftwire.audit import job, local
from kraftwire.audit.rows import COLUMNS
from audit_logs import EVENTS, ORDERS, SCRATCH, T0, THROTTLE_RATE, dir_of, planted_log, scenario_log

pytestmark = pytest.mark.spark


def assert_same_tables(result, oracle):
    for table in COLUMNS:
        assert sorted(map(repr, result.rows(table))) == sorted(map(repr, oracle.rows(table))), table
    assert result.counts == oracle.counts


def test_planted_violations_found_by_spark_at_their_offsets(spark, tmp_path):
    planted = planted_log(tmp_path / "log", segment_bytes=1500, index_interval_bytes=200)
    result = job.run(spark, [str(tmp_path / "log")], str(tmp_path / "out"), split_bytes=400, partitions=3)
    assert result.log["splits"] > len(list((tmp_path / "log").glob("*.log")))
    violations = result.rows("violations")
    assert sorted((v["kind"], v["offset"]) for v in violations) == sorted(planted.found.items())
    for kind, index in planted.partition.items():
        assert [v["partition"] for v in violations if v["kind"] == kind] == [index]
    corrupt = next(v for v in violations if v["kind"] == "corrupt_batch")
    assert (corrupt["file"], corrupt["position"]) == (planted.corrupt_file, planted.corrupt_position)
    assert_same_tables(result, local.run([str(tmp_path / "log")], str(tmp_path / "oracle"), split_bytes=400))


def test_scenario_tables_from_spark(spark, tmp_path):
    at = scenario_log(tmp_path / "log", segment_bytes=2000, index_interval_bytes=300)
    out = tmp_path / "out"
    result = job.run(spark, [str(tmp_path / "log")], str(out), split_bytes=500, partitions=3)
    t = lambda seconds: T0 + int(seconds * 1000)  # noqa: E731

    assert [(r["topic"], r["partition"], r["start_offset"], r["end_offset"], r["outcome"], r["original_replicas"],
             r["target_replicas"], r["final_replicas"], r["rf_before"], r["rf_after"], r["duration_ms"])
            for r in result.rows("reassignments")] == [
        ("orders", 0, at["a_start"], at["a_end"], "completed", (1, 2, 3), (4, 2, 3), (4, 2, 3), 3, 3, 3500),
        ("orders", 1, at["b_start"], at["b_again"], "superseded", (2, 3, 4), (1, 3, 4), None, 3, None, 1000),
        ("orders", 1, at["b_again"], at["b_end"], "completed", (3, 4, 2), (1, 2, 3), (1, 2, 3), 3, 3, 1000),
        ("events", 0, at["c_start"], at["c_end"], "completed", (1, 2), (1, 2, 3), (1, 2, 3), 2, 3, 3000),
        ("scratch", 0, at["d_start"], at["d_cancel"], "cancelled", (3, 4), (1, 2), (3, 4), 2, 2, 1000),
        ("orders", 0, at["e_start"], None, "running", (4, 2, 3), (4, 2, 1), None, 3, None, None),
        ("scratch", 0, at["f_start"], at["delete"], "deleted", (3, 4), (4, 1), None, 2, None, 500)]
    a = result.rows("reassignments")[0]
    assert (a["topic_id"], a["start_time"], a["end_time"], a["adding"], a["removing"]) == (
        str(ORDERS), t(2), t(5.5), (4,), (1,))

    assert result.rows("rf_changes") == [{
        "topic": "events", "topic_id": str(EVENTS), "partition": 0, "offset": at["c_end"], "timestamp": t(13),
        "rf_before": 2, "rf_after": 3, "replicas_before": (1, 2), "replicas_after": (1, 2, 3),
        "reassignment_start_offset": at["c_start"], "reassignment_outcome": "completed"}]

    throttles = [(x["resource_type"], x["resource_name"], x["config"], x["value"], x["set_offset"], x["removed_offset"],
                  x["reassignments"], x["lingered_ms"], x["left_behind"]) for x in result.rows("throttles")]
    assert throttles == [
        ("topic", "orders", "leader.replication.throttled.replicas", "0:1,0:2,0:3", at["throttle_leader"],
         at["unthrottle"], 1, 500, False),
        ("topic", "orders", "follower.replication.throttled.replicas", "0:4", at["throttle_follower"],
         at["unthrottle"] + 1, 1, 500, False),
        ("broker", "1", "leader.replication.throttled.rate", THROTTLE_RATE, at["rate_1"], at["unthrottle"] + 2, 1, 500,
         False),
        ("broker", "4", "follower.replication.throttled.rate", THROTTLE_RATE, at["rate_4"], at["unthrottle"] + 3, 1,
         500, False),
        # left behind: set for the RF change of events-0, still there 7 s after it completed
        ("topic", "events", "follower.replication.throttled.replicas", "0:3", at["events_throttle"], None, 1, 7000,
         True),
        # broker 3 is still moving data (orders-0 is running): still needed
        ("broker", "3", "follower.replication.throttled.rate", THROTTLE_RATE, at["rate_3"], None, 4, None, False)]

    assert result.rows("violations") == []
    assert [(b["offset"], b["broker_id"], b["event"]) for b in result.rows("brokers")] == [
        (1, 1, "registered"), (2, 2, "registered"), (3, 3, "registered"), (4, 4, "registered"),
        (at["fence"], 3, "fenced"), (at["dir_offline"] + 3, 2, "log_dirs_changed")]
    directories = result.rows("directories")
    assert len([d for d in directories if d["event"] == "online"]) == 8
    offline = [(d["offset"], d["broker_id"], d["directory"], d["cause"])
               for d in directories if d["event"] == "offline"]
    assert offline == [(at["dir_offline"] + 3, 2, str(dir_of(2)), "broker_change")]
    # Kafka's rule: events-0 growing from RF 2 to 3 is not under-replicated while broker 3 copies
    assert [(u["offset"], u["timestamp"], u["under_replicated"], u["offline"])
            for u in result.rows("under_replicated")] == [(at["fence"] + 4, t(17), 4, 0), (at["delete"], t(19), 3, 0)]

    # the big tables: every record once, every partition change with its state; read back by Spark itself
    records = spark.read.parquet(str(out / "parquet" / "records"))
    assert sorted(row.offset for row in records.select("offset").collect()) == list(range(at["last"] + 1))
    states = spark.read.json(str(out / "json" / "partition_states")).where("topic = 'scratch'").orderBy("offset")
    assert [(s.offset, s.replicas, s.isr, s.leader, s.leader_epoch, s.partition_epoch) for s in states.collect()] == [
        (at["scratch"] + 1, [3, 4], [3, 4], 3, 0, 0),
        (at["d_start"], [1, 2, 3, 4], [3, 4], 3, 0, 1),
        (at["d_cancel"], [3, 4], [3, 4], 3, 1, 2),
        (at["fence"] + 4, [3, 4], [4], 4, 2, 3),
        (at["f_start"], [4, 1, 3], [4], 4, 2, 4)]
    assert {row.topic_id for row in states.collect()} == {str(SCRATCH)}
    for table in COLUMNS:
        assert pq.read_table(out / "parquet" / table).num_rows == result.counts[table], table

    assert_same_tables(result, local.run([str(tmp_path / "log")], str(tmp_path / "oracle")))


def test_spark_submit_runs_the_job_file(tmp_path):
    """``spark-submit audit/job.py`` as on a cluster: spark-submit picks the master, the job writes the
    tables, the summary and the HTML report."""
    at = scenario_log(tmp_path / "data" / "__cluster_metadata-0")
    job_file = Path(job.__file__)
    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"  # pip's pyspark is a SPARK_HOME
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable)
    done = subprocess.run(
        [str(submit), "--master", "local[2]", "--conf", "spark.ui.enabled=false", "--conf",
         "spark.driver.extraJavaOptions=-XX:+UseSerialGC -XX:TieredStopAtLevel=1", str(job_file),
         f"file://{tmp_path / 'data'}", "--out", f"file://{tmp_path / 'out'}", "--html", "--from", str(at["a_start"])],
        capture_output=True, text=True, timeout=240, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "reassignments: 7 (3 completed, 1 cancelled, 1 superseded, 1 running, 1 deleted)" in done.stdout
    assert "spark local[2]" in done.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["log"]["engine"] == "spark local[2]" and summary["throttles_left_behind"] == 1
    assert min(pq.read_table(tmp_path / "out" / "parquet" / "records").column("offset").to_pylist()) == at["a_start"]
    assert (tmp_path / "out" / "report.html").stat().st_size > 10_000


def test_local_workers_run_the_interpreter_running_kraftwire(tmp_path):
    """Run from a virtualenv that is not activated, with a bare ``python3`` first on the PATH (no
    pyarrow, no kraftwire): the local workers must still run the interpreter running kraftwire."""
    scenario_log(tmp_path / "data" / "__cluster_metadata-0")
    bare = tmp_path / "bare"
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
    assert subprocess.run([str(bare / "bin" / "python3"), "-c", "import pyarrow"], capture_output=True).returncode
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PATH=f"{bare / 'bin'}{os.pathsep}{os.environ['PATH']}")
    env.pop("PYSPARK_PYTHON", None)
    done = subprocess.run([sys.executable, "-m", "kraftwire", "audit", str(tmp_path / "data"), "--out",
                           str(tmp_path / "out"), "--master", "local[1]", "--conf",
                           "spark.driver.extraJavaOptions=-XX:+UseSerialGC -XX:TieredStopAtLevel=1"],
                          capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "reassignments: 7 (3 completed, 1 cancelled, 1 superseded, 1 running, 1 deleted)" in done.stdout
