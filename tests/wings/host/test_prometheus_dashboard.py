"""A real Prometheus (Debian's package) scrapes a served cluster's /metrics while clients produce, consume
and a reassignment moves a partition; then the queries of the panels of Strimzi's Grafana dashboard
``strimzi-kafka.json`` (its Kafka dashboard: brokers online, active controllers, replicas, under-replicated,
at and under min ISR, offline partitions, messages and bytes in/out per second, produce and fetch
requests, messages in per broker, log size per topic), and of the alerts an operator adds for the
series issue 34 names (replication and reassignment traffic, max lag, offline directories, broker
state, request rates and latency, the controller's counts), are evaluated through Prometheus's HTTP
API; each must return data. The queries are written here from the dashboard's facts (metric names and
functions); Strimzi's ``by (kubernetes_pod_name)`` becomes ``by (node_id)`` (README: Kafka's metrics).
"""
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic

from served import Served

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
MOVED_BYTES = 3_000_000  # the moving partition's simulated size
BANDWIDTH = 1_000_000  # bytes/s into the new replica's broker: a move of about 3 s, scraped many times
SCRAPE = "200ms"

# (panel, query, what its first value must satisfy)
DASHBOARD = [
    ("Brokers Online", "count(kafka_server_replicamanager_leadercount)", lambda v: v == 3),
    ("Active Controllers", "sum(kafka_controller_kafkacontroller_activecontrollercount)", lambda v: v == 1),
    ("Online Replicas", "sum(kafka_server_replicamanager_partitioncount)", lambda v: v >= 7),
    ("Under Replicated Partitions", "sum(kafka_server_replicamanager_underreplicatedpartitions)", lambda v: v == 0),
    ("Partitions at minimum ISR", "sum(kafka_cluster_partition_atminisr)", lambda v: v >= 0),
    ("Partitions under minimum ISR", "sum(kafka_cluster_partition_underminisr)", lambda v: v == 0),
    ("Offline Partitions Count", "sum(kafka_controller_kafkacontroller_offlinepartitionscount)", lambda v: v == 0),
    ("Incoming Messages per Second",
     'sum(increase(kafka_server_brokertopicmetrics_messagesin_total{topic=~".+"}[5m]))', lambda v: v > 0),
    ("Incoming Bytes per Second",
     'sum(increase(kafka_server_brokertopicmetrics_bytesin_total{topic=~".+"}[5m]))', lambda v: v > 0),
    ("Outgoing Bytes per Second",
     'sum(increase(kafka_server_brokertopicmetrics_bytesout_total{topic=~".+"}[5m]))', lambda v: v > 0),
    ("Produce Requests per Second",
     'sum(irate(kafka_server_brokertopicmetrics_totalproducerequests_total{topic=~".+"}[5m]))', lambda v: v >= 0),
    ("Fetch Requests per Second",
     'sum(irate(kafka_server_brokertopicmetrics_totalfetchrequests_total{topic=~".+"}[5m]))', lambda v: v >= 0),
    ("Failed Produce Requests",
     'sum(irate(kafka_server_brokertopicmetrics_failedproducerequests_total{topic=~".+"}[5m]))', lambda v: v >= 0),
    ("Messages In per Broker",
     'sum(increase(kafka_server_brokertopicmetrics_messagesin_total{topic=~".+"}[5m])) by (node_id)',
     lambda v: v >= 0),
    ("Bytes In (all topics)", "sum(increase(kafka_server_brokertopicmetrics_bytesin_total{topic=\"\"}[5m]))",
     lambda v: v > 0),
    ("Log Size", 'sum(kafka_log_log_size{topic="shown"}) by (topic)', lambda v: v > 0),
    ("Total Topics", "max(kafka_controller_kafkacontroller_globaltopiccount)", lambda v: v == 2),
    ("Total Partitions", "max(kafka_controller_kafkacontroller_globalpartitioncount)", lambda v: v == 3),
    # the series issue 34 names for replication, reassignment and health
    ("Replication Bytes In", "sum(increase(kafka_server_brokertopicmetrics_replicationbytesin_total[5m]))",
     lambda v: v > 0),
    ("Replication Bytes Out", "sum(increase(kafka_server_brokertopicmetrics_replicationbytesout_total[5m]))",
     lambda v: v > 0),
    ("Reassignment Bytes In", "sum(increase(kafka_server_brokertopicmetrics_reassignmentbytesin_total[5m]))",
     lambda v: v > MOVED_BYTES / 2),
    ("Reassignment Bytes Out", "sum(increase(kafka_server_brokertopicmetrics_reassignmentbytesout_total[5m]))",
     lambda v: v > MOVED_BYTES / 2),
    # only the move's bytes are reassignment traffic (its simulated size and the real records produced to it),
    # while every follower's copies are replication traffic
    ("Reassignment Bytes In, exactly", "sum(kafka_server_brokertopicmetrics_reassignmentbytesin_total)",
     lambda v: MOVED_BYTES <= v < MOVED_BYTES + 100_000),
    ("Reassignment Bytes Out, exactly", "sum(kafka_server_brokertopicmetrics_reassignmentbytesout_total)",
     lambda v: MOVED_BYTES <= v < MOVED_BYTES + 100_000),
    ("Replication beyond the move", "sum(kafka_server_brokertopicmetrics_replicationbytesin_total) - "
     "sum(kafka_server_brokertopicmetrics_reassignmentbytesin_total)", lambda v: v > 0),
    ("Max Lag", "max(kafka_server_replicafetchermanager_maxlag)", lambda v: v >= 0),
    ("Offline Log Directories", "sum(kafka_log_logmanager_offlinelogdirectorycount)", lambda v: v == 0),
    ("Broker State", "min(kafka_server_kafkaserver_brokerstate)", lambda v: v == 3),
    ("Requests per Second", 'sum(rate(kafka_network_requestmetrics_requests_total{request="Produce"}[5m]))',
     lambda v: v > 0),
    ("Produce Latency p99", 'max(kafka_network_requestmetrics_totaltimems{request="Produce",quantile="0.99"})',
     lambda v: v > 0),
]


def _listening_port(pid: int) -> int | None:
    """The TCP port a process listens on, from /proc: its sockets' inodes against the LISTEN entries."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:
                return int(fields[1].rsplit(":", 1)[1], 16)
    return None


class Prometheus:
    """``prometheus`` scraping one target, its storage in a temporary directory, on a kernel-given port."""

    def __init__(self, directory: Path, target: str):
        config = directory / "prometheus.yml"
        config.write_text(json.dumps({"global": {"scrape_interval": SCRAPE, "scrape_timeout": SCRAPE},
                                      "scrape_configs": [{"job_name": "kraftwire",
                                                          "static_configs": [{"targets": [target]}]}]}))
        self.log = directory / "prometheus.log"
        with self.log.open("w") as log:
            self.process = subprocess.Popen([PROMETHEUS, f"--config.file={config}",
                                             f"--storage.tsdb.path={directory / 'data'}",
                                             "--web.listen-address=127.0.0.1:0"], stdout=log, stderr=log)
        self.url = ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.process.poll() is None:
            port = _listening_port(self.process.pid)
            if port:
                self.url = f"http://127.0.0.1:{port}"
                try:
                    with urllib.request.urlopen(self.url + "/-/ready", timeout=5) as answer:
                        if answer.status == 200:
                            return
                except OSError:
                    pass
            time.sleep(0.05)
        self.stop()
        raise AssertionError(f"prometheus did not become ready: {self.log.read_text()}")

    def query(self, promql: str) -> list[dict]:
        url = self.url + "/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        with urllib.request.urlopen(url, timeout=10) as answer:
            body = json.loads(answer.read())
        assert body["status"] == "success", body
        return body["data"]["result"]

    def wait_for(self, promql: str, check=lambda v: True, timeout: float = 60) -> float:
        """Poll a query until its first value passes ``check``; that value."""
        deadline, result = time.monotonic() + timeout, []
        while time.monotonic() < deadline:
            result = self.query(promql)
            if result and check(float(result[0]["value"][1])):
                return float(result[0]["value"][1])
            time.sleep(0.1)
        raise AssertionError(f"{promql} gave {result}")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(30)


@pytest.fixture
def served(tmp_path):
    served = Served(tmp_path, "--brokers", "3", "--port", "0", "--controller-port", "0", "--metrics-port", "0")
    yield served
    served.stop()


@pytest.fixture
def prometheus(tmp_path, served):
    url = served.wait_logged("metrics on ").split("metrics on ")[1].strip()
    target = urllib.parse.urlparse(url).netloc
    directory = tmp_path / "prometheus"
    directory.mkdir()
    server = Prometheus(directory, target)
    yield server
    server.stop()


def test_strimzi_dashboard_queries_return_data(served, prometheus):
    admin = KafkaAdminClient(bootstrap_servers=served.bootstrap, client_id="dashboard-test")
    try:
        admin.create_topics([NewTopic("shown", 2, 3), NewTopic("moved", -1, -1, replica_assignments={0: [1]},
                                                               topic_configs={"kraftwire.partition.size.bytes":
                                                                              str(MOVED_BYTES)})])
        # the hosted topics' series, from 0, and a first Produce's request series are scraped before the
        # traffic the panels' increase() must see
        prometheus.wait_for('count(kafka_server_brokertopicmetrics_messagesin_total{topic="shown"})',
                            lambda v: v == 3)
        producer = KafkaProducer(bootstrap_servers=served.bootstrap, acks="all")
        producer.send("shown", b"first").get(30)
        prometheus.wait_for('count(kafka_network_requestmetrics_requests_total{request="Produce"})')
        for i in range(50):
            producer.send("shown", f"record {i}".encode() * 20)
            producer.send("moved", b"m" * 1000)
        producer.flush()
        producer.close()
        consumer = KafkaConsumer("shown", bootstrap_servers=served.bootstrap, auto_offset_reset="earliest",
                                 consumer_timeout_ms=10_000)
        assert sum(1 for _ in consumer) == 51
        consumer.close()
        # a sample of the reassignment counters before the move, so that increase() sees it all
        prometheus.wait_for("sum(kafka_server_brokertopicmetrics_reassignmentbytesin_total)", lambda v: v == 0)
        admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, "2", configs={
            "kraftwire.replication.bandwidth.bytes.per.second": str(BANDWIDTH)})], raise_on_unknown=False)
        admin.alter_partition_reassignments({TopicPartition("moved", 0): [2]})
        prometheus.wait_for("sum(kafka_server_replicamanager_reassigningpartitions)", lambda v: v == 1)
        deadline = time.monotonic() + 60
        while admin.describe_topics(["moved"])[0]["partitions"][0]["replica_nodes"] != [2]:
            assert time.monotonic() < deadline, "the reassignment did not complete"
            time.sleep(0.1)
        prometheus.wait_for("sum(kafka_server_replicamanager_reassigningpartitions)", lambda v: v == 0)
    finally:
        admin.close()
    failed = []
    for panel, query, check in DASHBOARD:
        try:
            prometheus.wait_for(query, check, timeout=15)
        except AssertionError as exc:
            failed.append(f"{panel}: {exc}")
    assert not failed, "\n".join(failed)
