"""Prometheus metrics on the metrics port, scraped over HTTP while real clients work on the cluster."""
import json
import time
import urllib.request

import pytest
from kafka import KafkaAdminClient, TopicPartition
from kafka.admin import NewTopic
from prometheus_client.parser import text_string_to_metric_families

from kraftwire.server.host.cluster import BackgroundCluster
from kraftwire.server.raft import RaftConfig

PARTITION_BYTES = 6_000_000
SLOW_BANDWIDTH = 100_000  # bytes/s: a minute's copy, seen under way however loaded the machine is
FAST_BANDWIDTH = 30_000_000  # then the rest drains in a fifth of a second
SNAPSHOT_EVERY_RECORDS = 20


def scrape(bg) -> dict:
    """{(sample name, frozenset of labels): value} from one GET /metrics."""
    with urllib.request.urlopen(bg.cluster.metrics_server.url + "/metrics", timeout=10) as answer:
        assert answer.headers["Content-Type"].startswith("text/plain")
        text = answer.read().decode()
    return {(sample.name, frozenset(sample.labels.items())): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def total(samples: dict, name: str, **labels) -> float:
    wanted = set(labels.items())
    return sum(value for (sample, sample_labels), value in samples.items() if sample == name and wanted <= sample_labels)


@pytest.fixture
def bg(operable_cluster):
    return operable_cluster


@pytest.fixture
def admin_of_snapshotting():
    with BackgroundCluster(brokers=1, metrics_port=0,
                           log_config=RaftConfig(snapshot_every_records=SNAPSHOT_EVERY_RECORDS)) as cluster:
        client = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
        yield cluster, client
        client.close()


@pytest.fixture
def admin(bg):
    client = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="metrics-test")
    yield client
    client.close()


def test_request_counters_latency_and_connections_move(bg, admin):
    before = scrape(bg)
    admin.create_topics([NewTopic("counted", 3, 2)])
    admin.describe_cluster()
    after = scrape(bg)

    created = total(after, "kraftwire_requests_total", api="CreateTopics", error_code="0")
    assert created - total(before, "kraftwire_requests_total", api="CreateTopics", error_code="0") >= 1
    # the broker forwards it: the controller listener counts it too
    assert total(after, "kraftwire_requests_total", api="CreateTopics", listener="controller-3000") >= 1
    assert total(after, "kraftwire_requests_total", api="Metadata") > total(before, "kraftwire_requests_total",
                                                                             api="Metadata")
    assert total(after, "kraftwire_request_latency_seconds_count", api="DescribeCluster") >= 1
    assert total(after, "kraftwire_request_latency_seconds_bucket", api="DescribeCluster", le="+Inf") >= 1
    assert total(after, "kraftwire_open_connections") >= 3  # the client's and the brokers' own
    assert total(after, "kraftwire_partitions") == 3
    assert total(after, "kraftwire_brokers") == 3
    assert total(after, "kraftwire_fenced_brokers") == 0
    assert total(after, "kraftwire_metadata_high_watermark") > total(before, "kraftwire_metadata_high_watermark")
    assert total(after, "kraftwire_metadata_log_end_offset") >= total(after, "kraftwire_metadata_high_watermark")
    deadline = time.monotonic() + 30
    while not all(0 < total(before, "kraftwire_broker_metadata_end_offset", broker=b) < total(
            after, "kraftwire_broker_metadata_end_offset", broker=b) for b in ("1", "2", "3")):
        assert time.monotonic() < deadline, "a broker did not fetch the topic's records"  # each fetches for itself
        time.sleep(0.05)
        after = scrape(bg)
    assert total(after, "kraftwire_metadata_commit_latency_seconds_count") > total(
        before, "kraftwire_metadata_commit_latency_seconds_count")


def test_snapshot_gauges_appear_once_a_snapshot_is_written(admin_of_snapshotting):
    bg, admin = admin_of_snapshotting
    assert not any(name == "kraftwire_metadata_snapshot_end_offset" for name, _ in scrape(bg))
    admin.create_topics([NewTopic(f"t{i}", 1, 1) for i in range(SNAPSHOT_EVERY_RECORDS)])
    deadline = time.monotonic() + 30
    while not (samples := scrape(bg)).get(("kraftwire_metadata_snapshot_end_offset", frozenset())):
        assert time.monotonic() < deadline, "no snapshot gauge"
        time.sleep(0.05)
    assert 0 < samples[("kraftwire_metadata_snapshot_end_offset", frozenset())] <= total(
        samples, "kraftwire_metadata_high_watermark")
    assert samples[("kraftwire_metadata_snapshot_age_seconds", frozenset())] >= 0


def test_error_codes_are_counted_by_code(bg, admin):
    admin.create_topics([NewTopic("twice", 1, 1)])
    admin.create_topics([NewTopic("twice", 1, 1)], raise_errors=False)  # TOPIC_ALREADY_EXISTS, per topic
    bg.call(bg.cluster.inject_error, 60, 41)  # DescribeCluster: NOT_CONTROLLER at the top level
    with pytest.raises(Exception):
        admin.describe_cluster()
    samples = scrape(bg)
    assert total(samples, "kraftwire_requests_total", api="DescribeCluster", error_code="41") == 1
    # CreateTopics has no top-level error code: a per-topic refusal counts as 0
    assert total(samples, "kraftwire_requests_total", api="CreateTopics", error_code="0",
                 listener="controller-3000") == 2


def test_fenced_broker_leaves_partitions_under_replicated_and_offline(bg, admin):
    admin.create_topics([NewTopic("alone", -1, -1, replica_assignments={0: [3]}),
                         NewTopic("pair", -1, -1, replica_assignments={0: [2, 3]})])
    assert total(scrape(bg), "kraftwire_under_replicated_partitions") == 0
    bg.run(bg.cluster.fence_broker(3))
    samples = scrape(bg)
    assert total(samples, "kraftwire_fenced_brokers") == 1
    assert total(samples, "kraftwire_offline_partitions") == 1  # "alone" has no other replica to lead
    assert total(samples, "kraftwire_under_replicated_partitions") == 1  # "pair" lost 3 from its ISR


def test_throttled_reassignment_drains_to_zero(bg, admin):
    admin.create_topics([NewTopic("moving", -1, -1, replica_assignments={0: [1]},
                                  topic_configs={"kraftwire.partition.size.bytes": str(PARTITION_BYTES)})])
    for broker in (1, 2):
        bg.run(bg.cluster.set_bandwidth(broker, SLOW_BANDWIDTH))
    assert total(scrape(bg), "kraftwire_ongoing_reassignments") == 0
    admin.alter_partition_reassignments({TopicPartition("moving", 0): [2]})

    seen = []

    def sample_until(condition, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while True:
            samples = scrape(bg)
            seen.append((total(samples, "kraftwire_ongoing_reassignments"),
                         total(samples, "kraftwire_reassignment_bytes_left"),
                         total(samples, "kraftwire_reassignment_bytes_moved")))
            if condition(*seen[-1]):
                return
            assert time.monotonic() < deadline, seen
            time.sleep(0.05)

    sample_until(lambda ongoing, left, moved: moved > 0)  # under way
    for broker in (1, 2):
        bg.run(bg.cluster.set_bandwidth(broker, FAST_BANDWIDTH))
    sample_until(lambda ongoing, left, moved: ongoing == 0)
    moving = [s for s in seen if s[0] == 1]
    assert any(0 < left < PARTITION_BYTES for _, left, _ in moving), seen
    # the copy's size is known from the loop turn after the reassignment starts (0 and 0 before that)
    lefts = [left for _, left, moved in moving if left or moved]
    assert lefts == sorted(lefts, reverse=True), seen  # then bytes left only fall
    assert all(abs(left + moved - PARTITION_BYTES) <= 1 for _, left, moved in moving if left or moved), seen
    assert seen[-1] == (0, 0, 0)
    assert total(scrape(bg), "kraftwire_under_replicated_partitions") == 0


def test_offline_log_directories_are_counted():
    with BackgroundCluster(brokers=2, log_dirs=2, metrics_port=0) as bg:
        assert total(scrape(bg), "kraftwire_offline_log_directories") == 0
        bg.run(bg.cluster.fail_log_dir(1, 0))
        assert total(scrape(bg), "kraftwire_offline_log_directories") == 1
        bg.run(bg.cluster.restore_log_dir(1, 0))
        assert total(scrape(bg), "kraftwire_offline_log_directories") == 0


def test_clusters_in_one_process_count_separately(bg, admin):
    with BackgroundCluster(brokers=1, metrics_port=0) as other:
        admin.create_topics([NewTopic("only-here", 2, 1)])
        assert total(scrape(bg), "kraftwire_partitions") == 2
        assert total(scrape(other), "kraftwire_partitions") == 0
        assert total(scrape(other), "kraftwire_requests_total", api="CreateTopics") == 0


def test_unknown_path_is_404(bg):
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(bg.cluster.metrics_server.url + "/nothing", timeout=10)
    assert refused.value.code == 404


def test_a_healthy_reassignment_is_not_under_replicated(bg, admin):
    """Kafka's rule, in /metrics and the live view alike: replicas minus adding, compared with the ISR.
    While [1] moves to [2, 3] (replicas [2, 3, 1], ISR [1]) nothing is under-replicated; once broker 1
    of "pair" (ISR [1, 2]) is fenced, "pair" is."""
    admin.create_topics([NewTopic("moving", -1, -1, replica_assignments={0: [1]},
                                  topic_configs={"kraftwire.partition.size.bytes": str(10 ** 15)}),
                         NewTopic("pair", -1, -1, replica_assignments={0: [3, 1]})])
    admin.alter_partition_reassignments({TopicPartition("moving", 0): [2, 3]})

    def partitions() -> dict:
        with urllib.request.urlopen(bg.cluster.control_server.url + "/api/state", timeout=10) as answer:
            state = json.loads(answer.read())
        return {(t["name"], p["partition"]): p for t in state["topics"] for p in t["partitions"]}

    assert partitions()[("moving", 0)]["adding"] == [2, 3]
    assert total(scrape(bg), "kraftwire_under_replicated_partitions") == 0
    assert not any(p["under_replicated"] for p in partitions().values())
    bg.run(bg.cluster.fence_broker(1))  # "moving" goes offline (counted there), "pair" loses 1 from its ISR
    assert total(scrape(bg), "kraftwire_under_replicated_partitions") == 1
    assert [key for key, p in partitions().items() if p["under_replicated"]] == [("pair", 0)]


def test_kafka_named_gauges_follow_fencing_failed_directories_and_stops():
    """Kafka's names (README: Kafka's metrics), per node_id: a fenced broker's BrokerState is RECOVERY
    and its leaderships move; a failed directory counts offline on its broker with its replicas; a
    stopped broker serves only BrokerState 0; the controller's counts come from its image."""
    with BackgroundCluster(brokers=3, log_dirs=2, metrics_port=0) as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="kafka-names")
        try:
            admin.create_topics([NewTopic("pair", -1, -1, replica_assignments={0: [3, 2], 1: [3, 1]})])
        finally:
            admin.close()

        def until(check, timeout: float = 30) -> dict:
            deadline = time.monotonic() + timeout
            while not check(samples := scrape(bg)):
                assert time.monotonic() < deadline, samples
                time.sleep(0.05)
            return samples

        samples = until(lambda s: total(s, "kafka_server_replicamanager_leadercount", node_id="3") == 2)
        assert total(samples, "kafka_controller_kafkacontroller_globalpartitioncount") == 2
        assert total(samples, "kafka_controller_kafkacontroller_globaltopiccount") == 1
        assert total(samples, "kafka_controller_kafkacontroller_activecontrollercount") == 1
        assert total(samples, "kafka_server_replicamanager_partitioncount") == 4
        assert total(samples, "kafka_server_kafkaserver_brokerstate", node_id="3") == 3
        assert {labels for name, labels in samples if name == "kafka_log_log_size"} >= {
            frozenset({("node_id", "3"), ("topic", "pair"), ("partition", "0")})}

        bg.run(bg.cluster.fence_broker(3))
        samples = until(lambda s: total(s, "kafka_server_replicamanager_leadercount", node_id="3") == 0)
        assert total(samples, "kafka_server_kafkaserver_brokerstate", node_id="3") == 2  # RECOVERY
        assert total(samples, "kafka_server_replicamanager_underreplicatedpartitions") == 2  # 3 left both ISRs
        assert total(samples, "kafka_controller_kafkacontroller_fencedbrokercount") == 1
        assert total(samples, "kafka_controller_kafkacontroller_preferredreplicaimbalancecount") == 2
        bg.run(bg.cluster.unfence_broker(3))

        bg.run(bg.cluster.stop_broker(1))
        samples = until(lambda s: total(s, "kafka_server_kafkaserver_brokerstate", node_id="1") == 0)
        assert ("kafka_server_replicamanager_partitioncount", frozenset({("node_id", "1")})) not in samples
        bg.run(bg.cluster.start_broker(1))
        samples = until(lambda s: total(s, "kafka_server_kafkaserver_brokerstate", node_id="1") == 3)

        bg.run(bg.cluster.fail_log_dir(2, 0))
        samples = until(lambda s: total(s, "kafka_log_logmanager_offlinelogdirectorycount", node_id="2") == 1)
        replicas_there = total(samples, "kafka_server_replicamanager_offlinereplicacount", node_id="2")
        assert replicas_there in (0, 1)  # the one replica of broker 2 lies in either directory
        assert total(samples, "kafka_log_logmanager_offlinelogdirectorycount", node_id="1") == 0


def test_unclean_elections_are_counted_by_the_controller():
    """ControllerStats' UncleanLeaderElectionsPerSec: both replicas of a topic that allows unclean
    elections go down, the one out of the ISR comes back and is elected uncleanly: one, on the controller."""
    with BackgroundCluster(brokers=2, metrics_port=0) as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="unclean")
        try:
            admin.create_topics([NewTopic("risky", -1, -1, replica_assignments={0: [1, 2]},
                                          topic_configs={"unclean.leader.election.enable": "true"})])
        finally:
            admin.close()
        name = "kafka_controller_controllerstats_uncleanleaderelections_total"
        assert total(scrape(bg), name) == 0

        def fenced(*brokers):
            return lambda image: all(image.brokers[b].fenced for b in brokers)

        bg.run(bg.cluster.broker(2).stop())
        bg.run(bg.cluster.wait_until(fenced(2), 30))
        bg.run(bg.cluster.broker(1).stop())
        bg.run(bg.cluster.wait_until(fenced(1, 2), 30))
        bg.run(bg.cluster.broker(2).start())
        deadline = time.monotonic() + 30
        while (samples := scrape(bg)) and total(samples, name) < 1:
            assert time.monotonic() < deadline, samples
            time.sleep(0.05)
        assert total(samples, name, node_id=str(bg.cluster.controller_ids[0])) == 1
