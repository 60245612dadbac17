"""The audit on a real Spark standalone cluster, run as audit/README.md tells a user to: a master and two
workers started with ``spark-class`` from pip's pyspark, each worker with its own work directory and
executors on a bare Python (no pyarrow, no crc32c, no kraftwire: what they import comes from the
pack-env archive and the code zip the driver ships). A real server's log is audited with
``kraftwire audit --master spark://...`` and with ``spark-submit audit/job.py``; both executors must run
tasks (the application's event log says which), and every table must equal the single-process replay."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pyspark
import pytest
from kafka import KafkaAdminClient, TopicPartition
from kafka.admin import AlterConfigOp, ConfigResource

from kraftwire.audit import job, tables
from kraftwire.audit.rows import COLUMNS
from kraftwire.server.host.cluster import BackgroundCluster

pytestmark = pytest.mark.spark

SPARK_HOME = Path(pyspark.__file__).parent  # pip's pyspark is a SPARK_HOME without sbin scripts
FAST_JVM = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"
SPARK_ENV = dict(os.environ, SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_IP="127.0.0.1", SPARK_DAEMON_MEMORY="256m",
                 SPARK_DAEMON_JAVA_OPTS=FAST_JVM)


def wait_for(what: str, check, timeout: float = 120):
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)
    return found


def log_match(path: Path, pattern: str):
    match = re.search(pattern, path.read_text(errors="replace")) if path.exists() else None
    return match and match.group(1)


class Standalone:
    """A master and two workers as processes, on kernel-picked ports (read back from their logs)."""

    def __init__(self, root: Path):
        self.root = root
        self.processes: list[subprocess.Popen] = []

    def daemon(self, name: str, cls: str, *args: str) -> Path:
        log = self.root / f"{name}.log"
        with open(log, "wb") as out:
            self.processes.append(subprocess.Popen([str(SPARK_HOME / "bin" / "spark-class"), cls, *args],
                                                   stdout=out, stderr=subprocess.STDOUT, env=SPARK_ENV))
        return log

    def start(self) -> None:
        properties = self.root / "master.properties"
        properties.write_text("spark.master.rest.enabled false\n")  # its REST port is a fixed 6066
        master_log = self.daemon("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                 "--port", "0", "--webui-port", "0", "--properties-file", str(properties))
        self.url = wait_for("the master", lambda: log_match(master_log, r"Starting Spark master at (spark://\S+)"))
        ui_port = wait_for("the master's UI", lambda: log_match(master_log, r"'MasterUI' on port (\d+)"))
        self.master_json = f"http://127.0.0.1:{ui_port}/json/"
        for worker in ("worker1", "worker2"):
            (self.root / worker).mkdir()
            self.daemon(worker, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--port", "0",
                        "--webui-port", "0", "--cores", "1", "--memory", "768m", "--work-dir",
                        str(self.root / worker), self.url)
        wait_for("two alive workers", lambda: self.state().get("aliveworkers") == 2)

    def state(self) -> dict:
        from urllib.request import urlopen

        try:
            with urlopen(self.master_json, timeout=5) as answer:
                return json.load(answer)
        except OSError:
            return {}

    def stop(self) -> None:
        for process in reversed(self.processes):
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture
def standalone(tmp_path):
    cluster = Standalone(tmp_path)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


def server_log(data: Path) -> None:
    """A server's data directory with a throttled move, an RF change and a throttle left behind."""
    with BackgroundCluster(brokers=4, speed=50, data_dir=data) as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, request_timeout_ms=10000)
        try:
            for name, assignment in (("orders", {0: [1, 2, 3], 1: [2, 3, 4], 2: [3, 4, 1]}), ("events", {0: [1, 2]})):
                assert admin.create_topics({name: {"assignments": assignment}})["topics"][0]["error_code"] == 0
            admin.alter_configs([ConfigResource("TOPIC", "orders", {"follower.replication.throttled.replicas": "0:4"}),
                                 ConfigResource("BROKER", "4", {"follower.replication.throttled.rate": "104857600"})])
            admin.alter_partition_reassignments({TopicPartition("orders", 0): [4, 2, 3],
                                                 TopicPartition("events", 0): [1, 2, 3]})
            wait_for("the moves", lambda: not bg.call(lambda: any(
                p.reassigning for t in bg.cluster.controller.committed.topics.values() for p in t.partitions.values())), 30)
            admin.alter_configs([ConfigResource("BROKER", "4", {"follower.replication.throttled.rate":
                                                                (AlterConfigOp.DELETE, None)})])
        finally:
            admin.close()


def table_rows(out: Path) -> dict[str, list]:
    return {table: sorted(tables.read_rows(str(out), table), key=repr) for table in COLUMNS}


def tasks_by_executor(event_dir: Path) -> dict[str, int]:
    """Tasks finished per executor id, from the one application's event log (JSON lines)."""
    (log,) = [p for p in event_dir.iterdir() if p.name.startswith("app-")]
    counts: dict[str, int] = {}
    for line in log.read_text().splitlines():
        event = json.loads(line)
        if event["Event"] == "SparkListenerTaskEnd" and event["Task End Reason"]["Reason"] == "Success":
            executor = event["Task Info"]["Executor ID"]
            counts[executor] = counts.get(executor, 0) + 1
    return counts


def test_standalone_cluster_audits_like_the_single_process(standalone, tmp_path):
    server_log(tmp_path / "data")
    kraftwire = [sys.executable, "-m", "kraftwire", "audit"]
    oracle = subprocess.run([*kraftwire, str(tmp_path / "data"), "--out", str(tmp_path / "oracle"), "--local"],
                            capture_output=True, text=True, timeout=120)
    assert oracle.returncode == 0, oracle.stderr
    expected = table_rows(tmp_path / "oracle")
    assert expected["reassignments"] and expected["throttles"] and expected["rf_changes"]

    # a plain path names each node's own disk: refused before any work
    refused = subprocess.run([*kraftwire, str(tmp_path / "data"), "--out", str(tmp_path / "x"), "--master",
                              standalone.url], capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "shared" in refused.stderr and "file://" in refused.stderr, refused.stderr
    assert not (tmp_path / "x").exists()

    packed = subprocess.run([*kraftwire, "pack-env", str(tmp_path / "env.tar.gz")], capture_output=True, text=True,
                            timeout=300)
    assert packed.returncode == 0, packed.stderr
    size = (tmp_path / "env.tar.gz").stat().st_size
    assert size <= 100 << 20, size
    bare = tmp_path / "bare"  # the executors' Python: the base interpreter with nothing installed
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
    assert subprocess.run([str(bare / "bin" / "python"), "-c", "import pyarrow"], capture_output=True).returncode

    common = ["--conf", f"spark.pyspark.python={bare / 'bin' / 'python'}", "--conf", "spark.executor.memory=512m",
              "--conf", f"spark.executor.extraJavaOptions={FAST_JVM}", "--conf", "spark.eventLog.enabled=true",
              "--conf", "spark.eventLog.compress=false", "--conf", "spark.eventLog.rolling.enabled=false"]
    data, env_archive = f"file://{tmp_path / 'data'}", str(tmp_path / "env.tar.gz")
    runs = {
        "cli": [*kraftwire, data, "--out", f"file://{tmp_path / 'cli'}", "--master", standalone.url,
                "--executor-env", env_archive],
        "submit": [str(SPARK_HOME / "bin" / "spark-submit"), "--master", standalone.url, "--conf",
                   f"spark.pyspark.driver.python={sys.executable}"],
    }
    timings = {}
    for name, command in runs.items():
        events = tmp_path / f"events-{name}"
        events.mkdir()
        command += [*common, "--conf", f"spark.eventLog.dir=file://{events}"]
        if name == "submit":
            command += [str(Path(job.__file__)), data, "--out", f"file://{tmp_path / name}", "--executor-env", env_archive]
        started = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=SPARK_ENV, cwd=tmp_path)
        timings[name] = round(time.monotonic() - started, 1)
        assert done.returncode == 0, done.stderr[-4000:]
        assert f"spark {standalone.url}" in done.stdout
        assert table_rows(tmp_path / name) == expected, name
        ran = tasks_by_executor(events)
        assert len(ran) == 2 and all(ran.values()), ran
    for worker in ("worker1", "worker2"):  # one executor per worker and application, in its own work directory
        assert len(list((tmp_path / worker).glob("app-*/*/kraftwire_env"))) == 2, worker
    print(f"standalone audit seconds: {timings}; pack-env archive {size / (1 << 20):.1f} MiB")
