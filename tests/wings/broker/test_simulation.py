"""The simulated data plane as clients see it: a partition grows on its leader first and its followers
catch up from it, only needed catch-up moves bytes, and a reassignment's time left is its slowest copy's.

Through kafka-python (IncrementalAlterConfigs, DescribeLogDirs, AlterPartitionReassignments) and the
control plane's /api/state, against a BackgroundCluster."""
import urllib.request

import pytest
from kafka import TopicPartition
from kafka.admin import AlterConfigOp, ConfigResource, KafkaAdminClient, NewTopic

from kraftwire.server.host.cluster import BackgroundCluster
from tests.wings.host.test_control_plane import call, until

MiB = 1 << 20
SIZE = "kraftwire.partition.size.bytes"
BANDWIDTH = "kraftwire.replication.bandwidth.bytes.per.second"


@pytest.fixture
def bg():
    with BackgroundCluster(brokers=3, control_port=0) as cluster:
        yield cluster


@pytest.fixture
def admin(bg):
    client = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="simulation-test")
    yield client
    client.close()


def alter(admin, kind, name: str, values: dict) -> None:
    admin.alter_configs([ConfigResource(kind, name, {k: (AlterConfigOp.SET, v) for k, v in values.items()})])


def hosted(admin, broker_id: int, topic: str) -> dict[int, tuple[int, int]]:
    """partition -> (size, offset lag) of the broker's replicas of ``topic``, from DescribeLogDirs."""
    [answer] = [a for a in admin.describe_log_dirs(brokers=[broker_id]) if a["broker"] == broker_id]
    return {p["partition_index"]: (p["partition_size"], p["offset_lag"])
            for d in answer["log_dirs"] for t in d["topics"] if t["name"] == topic for p in t["partitions"]}


def moving(bg) -> list[dict]:
    """The copies that move bytes now."""
    return [c for c in bg.call(bg.cluster.network.progress) if c["rate"] > 0]


def test_a_bigger_partition_grows_on_its_leader_and_its_follower_catches_up(bg, admin):
    admin.create_topics([NewTopic("orders", replica_assignments={0: [1, 2]}),
                         NewTopic("quiet", replica_assignments={0: [1, 3]})])
    until(lambda: hosted(admin, 2, "orders") == {0: (100 * MiB, 0)})
    alter(admin, "BROKER", "2", {BANDWIDTH: str(MiB)})  # the catch-up takes ~100 s
    alter(admin, "TOPIC", "orders", {SIZE: str(200 * MiB)})
    until(lambda: hosted(admin, 1, "orders")[0][0] == 200 * MiB)
    assert hosted(admin, 1, "orders") == {0: (200 * MiB, 0)}  # the leader holds the new size, no lag
    [(size, lag)] = hosted(admin, 2, "orders").values()
    assert 100 * MiB <= size < 200 * MiB and lag == 200 * MiB - size  # the follower catches up from it
    [copy] = moving(bg)  # the only traffic: nothing moves for "quiet"
    assert (copy["topic"], copy["follower"], copy["leader"], copy["rate"]) == ("orders", 2, 1, MiB)
    caught_up = [c for c in call(bg, "GET", "/api/state")[1]["catching_up"] if c["topic"] == "orders"]
    assert [(c["follower"], c["leader"]) for c in caught_up] == [(2, 1)]
    with urllib.request.urlopen(bg.cluster.control_server.url + "/view", timeout=10) as answer:
        assert 'data-catch-up="orders-0-2"' in answer.read().decode()  # the live view lists it

    alter(admin, "TOPIC", "orders", {SIZE: str(50 * MiB)})  # smaller: every replica truncates
    until(lambda: hosted(admin, 2, "orders") == {0: (50 * MiB, 0)})
    assert hosted(admin, 1, "orders") == {0: (50 * MiB, 0)} and moving(bg) == []


def test_time_left_is_the_slowest_copys(bg, admin):
    """Two new replicas, one behind a 1 MiB/s link: the reassignment needs the slow copy's ~100 s, not
    the ~2 s that the bytes left over the summed rate would say."""
    admin.create_topics([NewTopic("orders", replica_assignments={0: [1]})])
    alter(admin, "BROKER", "3", {BANDWIDTH: str(MiB)})
    admin.alter_partition_reassignments({TopicPartition("orders", 0): [2, 3]})
    until(lambda: len(moving(bg)) == 2)
    [reassignment] = call(bg, "GET", "/api/state")[1]["reassignments"]
    slowest = max(c["bytes_left"] / c["rate"] for c in reassignment["copies"])
    assert {c["follower"]: c["rate"] for c in reassignment["copies"]}[3] == MiB
    assert reassignment["seconds_left"] == pytest.approx(slowest, rel=1e-6)
    assert reassignment["seconds_left"] > 50
