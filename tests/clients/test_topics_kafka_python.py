"""The topic APIs through kafka-python 3.0.12: ``KafkaAdminClient`` (create_topics, describe_topics,
create_partitions, delete_topics, elect_leaders) and its ``kafka-python admin`` command line, against a
real cluster. Each test asserts what the cluster then holds (partition counts, replica lists, leaders,
ISRs) and Kafka's error codes and messages."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from contextlib import closing

import pytest
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource, NewTopic
from kafka.errors import KafkaError, TopicAlreadyExistsError

from kraftwire.server.host.cluster import BackgroundCluster

KAFKA_PYTHON = shutil.which("kafka-python", path=os.path.dirname(sys.executable)) or shutil.which("kafka-python")


@pytest.fixture
def admin(bg_cluster):
    client = KafkaAdminClient(bootstrap_servers=bg_cluster.bootstrap, client_id="topics-test")
    yield client
    client.close()


@pytest.fixture
def quick_bg():
    """A cluster whose brokers are fenced about 1.5 s after they stop heartbeating."""
    with BackgroundCluster(brokers=3, heartbeat_interval_ms=250, session_timeout_ms=1500) as bg:
        yield bg


def partitions(admin, topic) -> dict[int, dict]:
    [described] = admin.describe_topics([topic])
    assert described["error_code"] == 0, described
    return {p["partition_index"]: p for p in described["partitions"]}


def layout(admin, topic) -> dict[int, tuple[list[int], int, list[int]]]:
    """partition -> (replicas, leader, ISR) as Metadata reports them."""
    return {i: (p["replica_nodes"], p["leader_id"], p["isr_nodes"]) for i, p in partitions(admin, topic).items()}


def wait_until(condition, what: str, timeout: float = 20.0):
    """Poll ``condition`` until it returns something true. A client error counts as "not yet": right
    after a broker stops, a client may still pick it for a request."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = condition()
        except KafkaError as exc:
            result, last_error = None, exc
        else:
            last_error = None
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what} (last client error: {last_error!r})")
        time.sleep(0.05)


def errors(result: dict) -> dict[str, tuple[int, str | None]]:
    return {t["name"]: (t["error_code"], t["error_message"]) for t in result["topics"]}


def outcomes(response) -> dict[tuple[str, int], tuple[int, str | None]]:
    return {(t.topic, p.partition_id): (p.error_code, p.error_message)
            for t in response.replica_election_results for p in t.partition_result}


# --- create_topics / describe_topics -----------------------------------------------------------------

def test_create_placed_topic_and_describe_it(admin):
    result = admin.create_topics({"placed": {"num_partitions": 6, "replication_factor": 3}})
    [topic] = result["topics"]
    assert (topic["error_code"], topic["num_partitions"], topic["replication_factor"]) == (0, 6, 3)
    assert topic["configs"]["retention.ms"]["value"] == "604800000"
    described = layout(admin, "placed")
    assert sorted(described) == list(range(6))
    for replicas, leader, isr in described.values():
        assert sorted(replicas) == [1, 2, 3] and leader == replicas[0] and isr == replicas
    leaders = sorted(leader for _, leader, _ in described.values())
    assert leaders == [1, 1, 2, 2, 3, 3]  # striped: every broker leads as often as the others
    [info] = admin.describe_topics(["placed"])
    assert uuid.UUID(str(info["topic_id"])) == uuid.UUID(str(topic["topic_id"]))


def test_create_with_replica_assignments(admin):
    result = admin.create_topics({"manual": {"assignments": {0: [3, 1], 1: [1, 2], 2: [2, 3]}}})
    assert errors(result) == {"manual": (0, None)}
    assert result["topics"][0]["replication_factor"] == 2
    assert layout(admin, "manual") == {0: ([3, 1], 3, [3, 1]), 1: ([1, 2], 1, [1, 2]), 2: ([2, 3], 2, [2, 3])}
    admin.create_topics([NewTopic("legacy", replica_assignments={0: [2], 1: [3]})])
    assert layout(admin, "legacy") == {0: ([2], 2, [2]), 1: ([3], 3, [3])}


def test_create_with_defaults_and_configs(admin):
    result = admin.create_topics({"configured": {"configs": {"retention.ms": "1000", "cleanup.policy": "compact"}}})
    [topic] = result["topics"]
    assert (topic["num_partitions"], topic["replication_factor"]) == (1, 1)
    assert topic["configs"]["retention.ms"]["value"] == "1000"
    assert topic["configs"]["retention.ms"]["config_source"] == "DYNAMIC_TOPIC_CONFIG"
    assert topic["configs"]["segment.ms"]["config_source"] == "DEFAULT_CONFIG"
    assert len(layout(admin, "configured")) == 1
    described = admin.describe_configs([ConfigResource("TOPIC", "configured")])
    stored = described["topic"]["configured"]
    assert (stored["retention.ms"]["value"], stored["cleanup.policy"]["value"]) == ("1000", "compact")


def test_validate_only_creates_nothing(admin):
    result = admin.create_topics({"dry-run": {"num_partitions": 2, "replication_factor": 2}}, validate_only=True)
    [topic] = result["topics"]
    assert (topic["error_code"], topic["num_partitions"], topic["replication_factor"]) == (0, 2, 2)
    assert "dry-run" not in admin.list_topics()
    [info] = admin.describe_topics(["dry-run"])
    assert info["error_code"] == 3


def test_create_errors(admin):
    admin.create_topics({"taken": {"num_partitions": 1, "replication_factor": 1}})
    with pytest.raises(TopicAlreadyExistsError):
        admin.create_topics({"taken": {"num_partitions": 1, "replication_factor": 1}})
    result = admin.create_topics({
        "taken": {"num_partitions": 1, "replication_factor": 1},
        "bad/name": {"num_partitions": 1, "replication_factor": 1},
        "no-partitions": {"num_partitions": 0, "replication_factor": 1},
        "too-wide": {"num_partitions": 1, "replication_factor": 4},
        "ghost-broker": {"assignments": {0: [1, 9]}},
        "bad-config": {"num_partitions": 1, "replication_factor": 1, "configs": {"retention.ms": "soon"}},
        "half-manual": {"num_partitions": 2, "assignments": {0: [1]}},
    }, raise_errors=False)
    assert errors(result) == {
        "taken": (36, "Topic 'taken' already exists."),
        "bad/name": (17, "Topic name is invalid: 'bad/name' contains one or more characters other than ASCII "
                         "alphanumerics, '.', '_' and '-'"),
        "no-partitions": (37, "Number of partitions was set to an invalid non-positive value."),
        "too-wide": (38, "Unable to replicate the partition 4 time(s): The target replication factor of 4 cannot "
                         "be reached because only 3 broker(s) are registered or some brokers have all their log "
                         "directories cordoned."),
        "ghost-broker": (39, "The manual partition assignment includes broker 9, but no such broker is registered."),
        "bad-config": (40, "Invalid value soon for configuration retention.ms: Not a number of type LONG"),
        "half-manual": (42, "A manual partition assignment was specified, but numPartitions was not set to -1."),
    }
    result = admin.create_topics([NewTopic("twice", 1, 1), NewTopic("twice", 2, 1)], raise_errors=False)
    assert errors(result) == {"twice": (42, "Duplicate topic name.")}
    assert sorted(admin.list_topics()) == ["taken"]


# --- create_partitions -------------------------------------------------------------------------------

def test_create_partitions(admin):
    admin.create_topics({"growing": {"assignments": {0: [1, 2]}}})
    admin.create_partitions({"growing": 3})
    grown = layout(admin, "growing")
    assert sorted(grown) == [0, 1, 2] and grown[0] == ([1, 2], 1, [1, 2])
    assert all(len(set(replicas)) == 2 and isr == replicas for replicas, _, isr in grown.values())
    admin.create_partitions({"growing": {"count": 4, "assignments": [[3, 1]]}})
    assert layout(admin, "growing")[3] == ([3, 1], 3, [3, 1])
    response = admin.create_partitions({"growing": 6}, validate_only=True)
    assert [(r.name, r.error_code) for r in response.results] == [("growing", 0)]
    assert len(layout(admin, "growing")) == 4


def test_create_partitions_errors(admin):
    admin.create_topics({"fixed": {"num_partitions": 2, "replication_factor": 2}})
    cases = {
        "same": ({"fixed": 2}, 37, "Topic already has 2 partition(s)."),
        "fewer": ({"fixed": 1}, 37, "The topic fixed currently has 2 partition(s); 1 would not be an increase."),
        "unknown": ({"nowhere": 3}, 3, None),
        "short": ({"fixed": {"count": 4, "assignments": [[1, 2]]}}, 39,
                  "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified."),
        "narrow": ({"fixed": {"count": 3, "assignments": [[1]]}}, 39,
                   "The manual partition assignment includes a partition with 1 replica(s), but this is not "
                   "consistent with previous partitions, which have 2 replica(s)."),
    }
    for case, (request, code, message) in cases.items():
        response = admin.create_partitions(request, raise_errors=False)
        assert [(r.error_code, r.error_message) for r in response.results] == [(code, message)], case
    assert len(layout(admin, "fixed")) == 2


# --- delete_topics -----------------------------------------------------------------------------------

def test_delete_topics_by_name_and_id(admin):
    admin.create_topics({"doomed": {"num_partitions": 2, "replication_factor": 1},
                         "by-id": {"num_partitions": 1, "replication_factor": 1},
                         "kept": {"num_partitions": 1, "replication_factor": 1}})
    [by_id] = admin.describe_topics(["by-id"])
    topic_id = uuid.UUID(str(by_id["topic_id"]))
    result = admin.delete_topics(["doomed", topic_id])
    assert sorted((t["name"], t["error_code"]) for t in result["topics"]) == [("by-id", 0), ("doomed", 0)]
    assert sorted(admin.list_topics()) == ["kept"]
    unknown_id = uuid.uuid4()
    result = admin.delete_topics(["doomed", unknown_id], raise_errors=False)
    assert sorted((t["name"] or "", t["error_code"], t["error_message"]) for t in result["topics"]) == [
        ("", 100, "This server does not host this topic ID."),
        ("doomed", 3, "This server does not host this topic-partition.")]


# --- elect_leaders -----------------------------------------------------------------------------------

def test_elect_leaders_after_a_broker_comes_back(quick_bg):
    with closing(KafkaAdminClient(bootstrap_servers=quick_bg.bootstrap, client_id="topics-test")) as admin:
        admin.create_topics({"elected": {"assignments": {0: [1, 2], 1: [2, 3]}},
                             "lonely": {"assignments": {0: [1]}}})
        quick_bg.run(quick_bg.cluster.broker(1).stop())
        wait_until(lambda: layout(admin, "elected")[0][1] == 2, "broker 1 is fenced and broker 2 leads")
    # A new client, so that the broker it sends controller requests to is a live one.
    with closing(KafkaAdminClient(bootstrap_servers=quick_bg.bootstrap, client_id="topics-test")) as admin:
        response = admin.elect_leaders(0, {"elected": [0, 1]}, raise_errors=False)
        assert outcomes(response) == {("elected", 0): (80, "The preferred leader was not available."),
                                      ("elected", 1): (84, "Leader election not needed for topic partition.")}
        response = admin.elect_leaders(1, {"lonely": [0]}, raise_errors=False)
        assert outcomes(response) == {("lonely", 0): (83, "Eligible topic partition leaders are not available.")}

        quick_bg.run(quick_bg.cluster.broker(1).start())
        wait_until(lambda: sorted(layout(admin, "elected")[0][2]) == [1, 2], "broker 1 is back in sync")
        assert layout(admin, "elected")[0][1] == 2  # coming back does not take leadership back
        response = admin.elect_leaders(0, {"elected": [0], "missing": [0]}, raise_errors=False)
        assert outcomes(response) == {("elected", 0): (0, None), ("missing", 0): (3, "No such topic as missing")}
        assert layout(admin, "elected")[0][1] == 1


def test_stopped_broker_is_fenced_and_leaves_isrs(quick_bg):
    with closing(KafkaAdminClient(bootstrap_servers=quick_bg.bootstrap, client_id="topics-test")) as admin:
        admin.create_topics({"survivor": {"num_partitions": 6, "replication_factor": 3}})
        before = layout(admin, "survivor")
        led_by_2 = [i for i, (_, leader, _) in before.items() if leader == 2]
        assert led_by_2
        quick_bg.run(quick_bg.cluster.broker(2).stop())

        def without_broker_2():
            now = layout(admin, "survivor")
            return now if all(2 not in isr for _, _, isr in now.values()) else None

        after = wait_until(without_broker_2, "broker 2 left every ISR")
        for index, (replicas, leader, isr) in after.items():
            assert replicas == before[index][0]  # still a replica, only out of sync
            assert isr == [b for b in replicas if b != 2]
            # a partition broker 2 led moves to its next in-sync replica; the others keep their leader
            assert leader == (isr[0] if index in led_by_2 else before[index][1])
        assert all(p["offline_replicas"] == [2] for p in partitions(admin, "survivor").values())


# --- the kafka-python admin command line -------------------------------------------------------------

def cli(bootstrap: str, *args: str) -> tuple[int, str]:
    assert KAFKA_PYTHON, "the kafka-python console script is not installed"
    done = subprocess.run([KAFKA_PYTHON, "admin", "-b", bootstrap, "--format", "json", *args],
                          capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout


def test_command_line(bg_cluster):
    bootstrap = bg_cluster.bootstrap
    code, out = cli(bootstrap, "topics", "create", "-t", "cli-topic", "--num-partitions", "3",
                    "--replication-factor", "2")
    assert code == 0
    [created] = json.loads(out)["topics"]
    assert (created["name"], created["error_code"], created["num_partitions"], created["replication_factor"]) == (
        "cli-topic", 0, 3, 2)

    code, out = cli(bootstrap, "topics", "create", "-t", "cli-topic", "--num-partitions", "1",
                    "--replication-factor", "1")
    assert code == 1 and "TopicAlreadyExistsError" in out and "Topic 'cli-topic' already exists." in out

    code, out = cli(bootstrap, "partitions", "create", "-p", "cli-topic:5")
    assert code == 0 and json.loads(out)["results"] == [
        {"name": "cli-topic", "error_code": 0, "error_message": None}]

    code, out = cli(bootstrap, "topics", "describe", "-t", "cli-topic")
    [described] = json.loads(out)
    assert len(described["partitions"]) == 5
    for partition in described["partitions"]:
        assert len(set(partition["replica_nodes"])) == 2
        assert partition["leader_id"] == partition["replica_nodes"][0]
        assert partition["isr_nodes"] == partition["replica_nodes"]

    code, out = cli(bootstrap, "partitions", "elect-leaders", "-p", "cli-topic:0", "--no-raise-errors")
    [result] = json.loads(out)["replica_election_results"]
    assert result["partition_result"] == [{"partition_id": 0, "error_code": 84,
                                           "error_message": "Leader election not needed for topic partition."}]

    code, out = cli(bootstrap, "topics", "delete", "-t", "cli-topic")
    assert code == 0 and [(t["name"], t["error_code"]) for t in json.loads(out)["topics"]] == [("cli-topic", 0)]
    code, out = cli(bootstrap, "topics", "delete", "-t", "cli-topic")
    assert code == 1 and "UnknownTopicOrPartitionError" in out
