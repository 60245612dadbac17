"""Reset (``Cluster.reset``, ``POST /api/reset``, the ``kraftwire_clean_cluster`` fixture): a cluster that
held topics, configs, ACLs, SCRAM users and a pending reassignment is, to real admin clients over TCP,
a freshly started one again, with the same broker ids, ports and cluster id."""
from __future__ import annotations

import json
import uuid
import urllib.error
import urllib.request

import pytest
from kafka import KafkaAdminClient, TopicPartition
from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, ConfigResource,
                         ConfigResourceType, NewTopic, ResourcePattern, ResourcePatternFilter, ResourceType,
                         ScramMechanism, UserScramCredentialUpsertion)

from kraftwire import BackgroundCluster, Security
from kraftwire.codec import records as rec
from kraftwire.server.controller import reset
from kraftwire.server.metadata.image import MetadataImage

pytest_plugins = ["pytester"]

BOOT = ("SCRAM-SHA-256", "boot", "boot-password")
# what DescribeConfigs may list as not default on a fresh cluster: static settings and start-up's records
STATIC_AND_FRESH = {"min.insync.replicas", "kraftwire.throttle.auto.remove.enable", "auto.create.topics.enable",
                    "listeners", "advertised.listeners", "listener.security.protocol.map", "sasl.enabled.mechanisms",
                    "inter.broker.listener.name", "authorizer.class.name", "super.users", "broker.id", "node.id",
                    "process.roles", "controller.listener.names", "log.dirs", "sasl.mechanism.inter.broker.protocol",
                    "security.inter.broker.protocol", "broker.rack", "controller.quorum.voters"}


@pytest.fixture(scope="module")
def bg():
    security = Security(listener_name="SASL_PLAINTEXT", plain_users={"admin": "admin-secret"},
                        scram_users=[BOOT], authorizer=True, super_users=("User:admin",))
    with BackgroundCluster(brokers=3, security=security, control_port=0, throttle_auto_remove=False) as cluster:
        yield cluster


@pytest.fixture
def admin(bg):
    client = KafkaAdminClient(bootstrap_servers=bg.bootstrap, security_protocol="SASL_PLAINTEXT",
                              sasl_mechanism="PLAIN", sasl_plain_username="admin", sasl_plain_password="admin-secret",
                              request_timeout_ms=15000)
    yield client
    client.close()


def view(bg) -> dict:
    """The live view's facts (GET /api/state)."""
    with urllib.request.urlopen(bg.cluster.control_server.url + "/api/state", timeout=30) as answer:
        return json.loads(answer.read())


def post_reset(bg, body: bytes = b"{}", token: str | None = None) -> tuple[int, object]:
    cluster = bg.cluster
    request = urllib.request.Request(cluster.control_server.url + "/api/reset", data=body, method="POST",
                                     headers={"Content-Type": "application/json",
                                              "Authorization": f"Bearer {token or cluster.control_token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def identity(bg) -> tuple:
    """What a reset must keep: cluster id, broker ids and ports, the control plane's port."""
    cluster = bg.cluster
    return (cluster.controller.cluster_id, [(b.broker_id, b.port) for b in cluster.brokers],
            cluster.control_server.url)


def dirty(bg, admin) -> None:
    """Topics with configs and a reassignment held pending, broker and cluster-default configs, an ACL,
    a SCRAM user, an injected error, paused replication and a changed speed."""
    admin.create_topics([NewTopic("orders", 3, 2, topic_configs={"retention.ms": "1000"}), NewTopic("kept", 1, 1)])
    admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, "1",
                                        {"leader.replication.throttled.rate": "1000"}),
                         ConfigResource(ConfigResourceType.BROKER, "2", {"log.retention.ms": "5000"})])
    described = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "1"),
                                        ConfigResource(ConfigResourceType.BROKER, "2")])
    assert "leader.replication.throttled.rate" in described["broker"]["1"]  # (what assert_fresh looks for)
    assert "log.retention.ms" in described["broker"]["2"]
    pattern = ResourcePattern(ResourceType.TOPIC, "orders", ACLResourcePatternType.LITERAL)
    assert not admin.create_acls([ACL("User:alice", "*", ACLOperation.READ, ACLPermissionType.ALLOW,
                                      pattern)])["failed"]
    assert admin.alter_user_scram_credentials([UserScramCredentialUpsertion(
        "carol", ScramMechanism.SCRAM_SHA_512, "carol-password", 4096)]) == {"carol": None}
    cluster = bg.cluster
    replicas = bg.call(lambda: list(cluster.controller.committed.topic("orders").partitions[0].replicas))
    target = next(b for b in (1, 2, 3) if b not in replicas)
    bg.run(cluster.pause_replication(target))  # the copy to it cannot end: the reassignment stays pending
    admin.alter_partition_reassignments({TopicPartition("orders", 0): [target, *replicas[1:]]})
    assert admin.list_partition_reassignments()
    cluster.inject_error(19, 41, count=5)
    bg.run(cluster.set_speed(7.0))
    assert bg.call(lambda: len(cluster.network.copies)) > 0


def assert_fresh(bg, admin) -> None:
    cluster = bg.cluster
    assert admin.list_topics() == []
    assert admin.list_partition_reassignments() == {}
    acl_filter = ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
                           ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY))
    acls, _ = admin.describe_acls(acl_filter)
    assert acls == []
    users = admin.describe_user_scram_credentials()
    assert sorted(users) == ["boot"]
    described = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "1"),
                                        ConfigResource(ConfigResourceType.BROKER, "2")])  # non-default values only
    assert set(described["broker"]["1"]) <= STATIC_AND_FRESH and set(described["broker"]["2"]) <= STATIC_AND_FRESH
    assert "leader.replication.throttled.rate" not in described["broker"]["1"]
    assert "log.retention.ms" not in described["broker"]["2"]
    assert bg.call(lambda: [len(b.replica_manager.replicas) for b in cluster.brokers]) == [0, 0, 0]
    assert bg.call(lambda: len(cluster.network.copies)) == 0
    assert not bg.call(lambda: any(cluster.network.is_paused(b) for b in (1, 2, 3)))
    assert cluster.network.speed == 1.0 and cluster.faults.armed == []
    # a topic of a name that existed is created at once, with none of the old one's configs
    admin.create_topics([NewTopic("orders", 2, 3)])
    described = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "orders")])
    assert "retention.ms" not in described["topic"]["orders"]  # the old topic's override went with it
    assert {p["partition_index"] for t in admin.describe_topics(["orders"]) for p in t["partitions"]} == {0, 1}


def test_reset_over_the_control_plane_leaves_a_fresh_cluster(bg, admin):
    before = identity(bg)
    dirty(bg, admin)
    state = view(bg)
    assert state["topics"] and state["reassignments"] and state["throttles"] and state["injected_errors"]
    status, answer = post_reset(bg)
    state = view(bg)
    assert (state["topics"], state["reassignments"], state["throttles"], state["injected_errors"],
            state["catching_up"]) == ([], [], [], [], [])
    assert state["speed"] == 1.0 and all(b["running"] and not b["fenced"] for b in state["brokers"])
    assert status == 200
    assert answer["reset"]["topics"] == 2 and answer["reset"]["acls"] == 1
    assert answer["reset"]["scram_credentials"] == 1 and answer["reset"]["configs"] == 2
    assert identity(bg) == before
    assert_fresh(bg, admin)


def test_reset_from_python_twice_and_of_a_fresh_cluster_writes_nothing(bg, admin):
    bg.reset()  # (the test before left a topic)
    before = identity(bg)
    dirty(bg, admin)
    assert bg.reset()["topics"] == 2
    assert_fresh(bg, admin)
    bg.reset()
    assert bg.reset()["records"] == 0
    assert identity(bg) == before


def test_the_control_plane_guards_reset(bg):
    assert post_reset(bg, token="wrong")[0] == 401
    assert post_reset(bg, b'{"timeout": -1}')[0] == 400
    assert post_reset(bg, b"[1]")[0] == 400


def test_the_decision_replays_to_the_fresh_image():
    """What the audit replays: the reset's records applied to the image leave exactly the fresh state."""
    image = MetadataImage()
    topic_id = uuid.uuid4()
    boot = rec.UserScramCredentialRecord(name="boot", mechanism=1, salt=b"s", stored_key=b"k", server_key=b"v",
                                         iterations=4096)
    for offset, record in enumerate([
            rec.TopicRecord(name="t", topic_id=topic_id),
            rec.ConfigRecord(resource_type=2, resource_name="t", name="retention.ms", value="1"),
            rec.ConfigRecord(resource_type=4, resource_name="", name="min.insync.replicas", value="2"),
            rec.ConfigRecord(resource_type=4, resource_name="1", name="log.retention.ms", value="2"),
            rec.AccessControlEntryRecord(id=topic_id, resource_type=2, resource_name="t", pattern_type=3,
                                         principal="User:a", host="*", operation=3, permission_type=3),
            rec.UserScramCredentialRecord(name="carol", mechanism=2, salt=b"s", stored_key=b"k", server_key=b"v",
                                          iterations=4096)]):
        image.apply(record, offset)
    fresh = reset.FreshState.of([rec.ConfigRecord(resource_type=4, resource_name="", name="min.insync.replicas",
                                                  value="1"), boot])
    records, summary = reset.decide(image, fresh)
    for offset, record in enumerate(records, start=100):
        image.apply(record, offset)
    assert image.topics == {} and image.acls == {}
    assert image.configs == {(4, ""): {"min.insync.replicas": "1"}}
    assert list(image.scram) == [(1, "boot")]
    assert summary.topics == 1 and summary.acls == 1 and summary.scram_credentials == 1
    assert reset.decide(image, fresh).records == []


CLEAN_TESTS = '''
import pytest
from kafka.admin import KafkaAdminClient, NewTopic


@pytest.mark.parametrize("round", [1, 2, 3])
def test_each_test_gets_a_clean_cluster(kraftwire_clean_cluster, kraftwire_bootstrap, round):
    assert kraftwire_bootstrap == kraftwire_clean_cluster.bootstrap
    admin = KafkaAdminClient(bootstrap_servers=kraftwire_bootstrap)
    try:
        assert admin.list_topics() == []
        admin.create_topics([NewTopic("same", 2, 1)])  # TOPIC_ALREADY_EXISTS on a cluster not reset
        from kafka.admin import ConfigResource
        admin.alter_configs([ConfigResource("BROKER", "1", {"log.retention.ms": "5"})])
    finally:
        admin.close()


@pytest.mark.asyncio(loop_scope="session")
@pytest.mark.parametrize("round", [1, 2])
async def test_each_async_test_gets_a_clean_cluster(kraftwire_clean_session_cluster, round):
    cluster = kraftwire_clean_session_cluster
    assert cluster.controller.committed.topics == {}
    from kraftwire.codec.messages import CreateTopicsRequest
    from kraftwire.server.controller.replication import topic_creation
    assert cluster.controller.committed.broker_configs("1") == {}
    await cluster.write(lambda image: topic_creation.decide(image, CreateTopicsRequest(
        topics=[CreateTopicsRequest.CreatableTopic(name="same", num_partitions=1, replication_factor=1,
                                                   assignments=[], configs=[])], timeout_ms=1000)))
    assert "same" in cluster.controller.committed.topic_ids
'''


def test_the_clean_cluster_fixture_resets_the_session_cluster_per_test(pytester):
    pytester.makepyfile(test_user=CLEAN_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=5)


def test_reset_undoes_the_harness_on_brokers():
    """A stopped broker runs again, a failed log directory is back online, a broker asked to be fenced is
    unfenced: the cluster's brokers are as a fresh start has them."""
    with BackgroundCluster(brokers=3, log_dirs=2) as other:
        cluster = other.cluster
        other.run(cluster.fence_broker(1))
        other.run(cluster.fail_log_dir(2, 0))
        other.run(cluster.stop_broker(3))
        brokers = other.call(cluster.list_brokers)
        assert not brokers[2]["running"] and not all(d["online"] for d in brokers[1]["directories"])
        other.reset()
        brokers = other.call(cluster.list_brokers)
        assert all(b["running"] and b["registered"] and not b["fenced"] for b in brokers), brokers
        assert all(d["online"] for b in brokers for d in b["directories"]), brokers
        image = other.call(lambda: cluster.controller.committed)
        assert all(not image.brokers[b].fenced and len(image.brokers[b].log_dirs) == 2 for b in (1, 2, 3))


def test_the_audit_reads_a_reset_as_deletions(tmp_path):
    """The metadata log of a reset, audited (kraftwire.audit, in one process): no violation, and every
    throttle the cluster held ends with the reset (its topic deleted, or its config deleted)."""
    from kraftwire.audit import local

    data_dir = tmp_path / "data"
    with BackgroundCluster(brokers=3, data_dir=data_dir) as other:
        client = KafkaAdminClient(bootstrap_servers=other.bootstrap)
        try:
            client.create_topics([NewTopic("t", 2, 2, topic_configs={
                "leader.replication.throttled.replicas": "*"})])
            client.alter_configs([ConfigResource(ConfigResourceType.BROKER, "2",
                                                 {"follower.replication.throttled.rate": "1000"})])
        finally:
            client.close()
        offset_before = other.call(lambda: other.cluster.controller.committed.offset)
        other.reset()
    logs = [p for p in data_dir.rglob("__cluster_metadata-0") if p.is_dir()]
    result = local.run([str(logs[0])], str(tmp_path / "out"))
    assert result.rows("violations") == []
    throttles = result.rows("throttles")
    assert {(t["resource_type"], t["resource_name"]) for t in throttles} == {("topic", "t"), ("broker", "2")}
    assert all(t["removed_offset"] is not None and t["removed_offset"] > offset_before for t in throttles), throttles
    assert {t["removed_by"] for t in throttles} == {"topic_deleted", "deleted"}
