"""Authorization with ACLs (Kafka's StandardAuthorizer semantics), through kafka-python and confluent-kafka
over SASL_PLAINTEXT: the ACL APIs themselves, a matrix of principals and operations answered with
exactly Kafka's codes at Kafka's level, unauthorized writes that change nothing, and the controller's
broker RPCs refused to a principal without CLUSTER_ACTION.

Each case uses its own user, so the cases share one cluster and do not see each other's ACLs.
"""
from __future__ import annotations

import time

import pytest
from kafka import KafkaAdminClient
from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, NewTopic,
                         ResourcePattern, ResourcePatternFilter, ResourceType)
from kafka.errors import KafkaError

from kraftwire import BackgroundCluster, Security
from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import (AlterPartitionRequest, BrokerHeartbeatRequest, BrokerRegistrationRequest,
                                      DescribeAclsRequest, DescribeClusterRequest, MetadataRequest)
from kraftwire.server.wire.client import KafkaClient
from kraftwire.server.wire.security import ClientSecurity

USERS = ["admin", "none", "describer", "alterer", "denied", "creator", "prefixed", "configs", "wildcard", "deleter",
         "acl-viewer", "nobody", "lister"]
CLUSTER = ResourcePattern(ResourceType.CLUSTER, "kafka-cluster")
ANY_ACL = ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
                    ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY))


def allow(user: str, operation, pattern, permission=ACLPermissionType.ALLOW) -> ACL:
    return ACL(f"User:{user}", "*", operation, permission, pattern)


SETUP = [
    allow("describer", ACLOperation.DESCRIBE, CLUSTER),
    allow("alterer", ACLOperation.ALTER, CLUSTER),
    allow("denied", ACLOperation.ALL, CLUSTER),
    allow("denied", ACLOperation.DESCRIBE, CLUSTER, ACLPermissionType.DENY),
    allow("creator", ACLOperation.CREATE, CLUSTER),
    allow("prefixed", ACLOperation.CREATE, ResourcePattern(ResourceType.TOPIC, "pre-", ACLResourcePatternType.PREFIXED)),
    allow("configs", ACLOperation.ALTER_CONFIGS, ResourcePattern(ResourceType.TOPIC, "existing")),
    allow("*", ACLOperation.DESCRIBE_CONFIGS, ResourcePattern(ResourceType.TOPIC, "public")),
    allow("deleter", ACLOperation.DELETE, ResourcePattern(ResourceType.TOPIC, "doomed")),
    allow("acl-viewer", ACLOperation.DESCRIBE, CLUSTER),
    allow("lister", ACLOperation.READ, ResourcePattern(ResourceType.TOPIC, "pub", ACLResourcePatternType.PREFIXED)),
]


@pytest.fixture(scope="module")
def bg():
    security = Security(listener_name="SASL_PLAINTEXT", protocol_map={"CONTROLLER": "SASL_PLAINTEXT"},
                        plain_users={u: f"{u}-secret" for u in USERS}, authorizer=True, super_users=("User:admin",))
    with BackgroundCluster(brokers=2, security=security) as cluster:
        admin = kafka_admin(cluster, "admin")
        try:
            assert not admin.create_acls(SETUP)["failed"]
            admin.create_topics([NewTopic(name, 1, 1) for name in ("existing", "public", "doomed", "kept")])
        finally:
            admin.close()
        yield cluster


def kafka_admin(bg, user: str) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=bg.bootstrap, security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                            sasl_plain_username=user, sasl_plain_password=f"{user}-secret", request_timeout_ms=15000)


def code(call) -> int:
    """The Kafka error code a kafka-python call ended with (0 when it succeeded)."""
    try:
        call()
    except KafkaError as error:
        return error.errno
    return 0


def topics(bg) -> set[str]:
    return bg.call(lambda: {t.name for t in bg.cluster.controller.committed.topics.values()})


def as_user(bg, user: str, action) -> int:
    admin = kafka_admin(bg, user)
    try:
        return code(lambda: action(admin))
    finally:
        admin.close()


list_reassignments = lambda a: a.list_partition_reassignments()  # noqa: E731
alter_reassignments = lambda a: a.alter_partition_reassignments({})  # noqa: E731


@pytest.mark.parametrize("user,action,expected", [
    ("none", list_reassignments, ErrorCode.CLUSTER_AUTHORIZATION_FAILED),      # no ACL at all: denied
    ("describer", list_reassignments, ErrorCode.NONE),                          # DESCRIBE on CLUSTER
    ("describer", alter_reassignments, ErrorCode.CLUSTER_AUTHORIZATION_FAILED),  # ... is not ALTER
    ("alterer", alter_reassignments, ErrorCode.NONE),                           # ALTER on CLUSTER
    ("alterer", list_reassignments, ErrorCode.NONE),                            # ALTER implies DESCRIBE
    ("admin", alter_reassignments, ErrorCode.NONE),                             # super user, no ACL needed
    ("denied", alter_reassignments, ErrorCode.NONE),                            # ALLOW ALL ...
    ("denied", list_reassignments, ErrorCode.CLUSTER_AUTHORIZATION_FAILED),      # ... but DENY DESCRIBE wins
    ("none", lambda a: a.describe_acls(ANY_ACL), ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
    ("describer", lambda a: a.describe_log_dirs(), ErrorCode.NONE),
    ("none", lambda a: a.list_config_resources(), ErrorCode.CLUSTER_AUTHORIZATION_FAILED),  # DESCRIBE_CONFIGS
    ("denied", lambda a: a.list_config_resources(), ErrorCode.NONE),                        # ALL includes it
], ids=["none-list", "describe-list", "describe-alter", "alter-alter", "alter-implies-describe", "super-user",
        "allow-all", "deny-beats-allow", "describe-acls-denied", "describe-log-dirs", "list-config-resources-denied",
        "list-config-resources-allowed"])
def test_cluster_level_matrix_kafka_python(bg, user, action, expected):
    assert as_user(bg, user, action) == expected


def test_create_topics_per_topic_codes_and_prefixed_patterns(bg):
    """CREATE on CLUSTER covers any topic; a PREFIXED pattern only its names; a refused topic is not made."""
    assert as_user(bg, "creator", lambda a: a.create_topics([NewTopic("by-creator", 1, 1)])) == ErrorCode.NONE
    assert as_user(bg, "prefixed", lambda a: a.create_topics([NewTopic("pre-one", 1, 1)])) == ErrorCode.NONE
    assert as_user(bg, "prefixed", lambda a: a.create_topics([NewTopic("other-one", 1, 1)])) \
        == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    assert as_user(bg, "none", lambda a: a.create_topics([NewTopic("by-none", 1, 1)])) \
        == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    made = topics(bg)
    assert {"by-creator", "pre-one"} <= made and not {"other-one", "by-none"} & made


def test_metadata_shows_only_the_topics_a_principal_may_describe(bg):
    """READ implies DESCRIBE (here by a PREFIXED pattern); other topics are left out of "all topics" and
    answer 29 when named, existing or not."""
    from confluent_kafka.admin import AdminClient

    lister = AdminClient({"bootstrap.servers": bg.bootstrap, "security.protocol": "SASL_PLAINTEXT",
                          "sasl.mechanism": "PLAIN", "sasl.username": "lister", "sasl.password": "lister-secret"})
    assert set(lister.list_topics(timeout=15).topics) == {"public"}
    named = lister.list_topics(topic="kept", timeout=15).topics["kept"]
    assert named.error.code() == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    admin = kafka_admin(bg, "lister")
    try:
        assert set(admin.list_topics()) == {"public"}
    finally:
        admin.close()
    assert "existing" in set(kafka_admin_topics(bg, "admin"))


def test_describe_topic_partitions_shows_only_the_topics_a_principal_may_describe(bg):
    """As Metadata: "all topics" leaves the others out, a named one answers 29, existing or not, after
    the page; each topic carries the operations the principal is allowed on it: READ (and the DESCRIBE
    it implies) from its own ACL, DESCRIBE_CONFIGS from User:*'s."""
    admin = kafka_admin(bg, "lister")
    try:
        listed = admin.describe_topic_partitions([])
        named = admin.describe_topic_partitions(["kept", "public", "no-such-topic"])
    finally:
        admin.close()
    allowed = sum(1 << op.value for op in (ACLOperation.READ, ACLOperation.DESCRIBE, ACLOperation.DESCRIBE_CONFIGS))
    assert [(t["name"], t["error_code"], t["topic_authorized_operations"]) for t in listed["topics"]] == [
        ("public", 0, allowed)]
    assert [(t["name"], t["error_code"]) for t in named["topics"]] == [
        ("public", 0), ("kept", ErrorCode.TOPIC_AUTHORIZATION_FAILED),
        ("no-such-topic", ErrorCode.TOPIC_AUTHORIZATION_FAILED)]
    assert named["topics"][0]["partitions"] and not named["topics"][1]["partitions"]


def test_auto_creation_needs_create_on_the_cluster_or_the_topic():
    """With auto.create.topics.enable a missing topic the principal may describe but not create answers
    29 and is not created; with CREATE on the topic it answers 3 and is created."""
    users = {name: f"{name}-secret" for name in ("admin", "viewer", "maker")}
    security = Security(listener_name="SASL_PLAINTEXT", plain_users=users, authorizer=True,
                        super_users=("User:admin",))
    with BackgroundCluster(brokers=1, security=security, auto_create_topics=True) as cluster:
        async def ask(user: str, topic: str) -> int:
            client = KafkaClient("127.0.0.1", cluster.cluster.brokers[0].port, user,
                                 ClientSecurity("SASL_PLAINTEXT", None, "PLAIN", user, users[user]))
            try:
                answer = await client.send(MetadataRequest(
                    topics=[MetadataRequest.MetadataRequestTopic(name=topic)], allow_auto_topic_creation=True), 9)
                return answer.topics[0].error_code
            finally:
                await client.close()

        pattern = ResourcePattern(ResourceType.TOPIC, "made-by-maker")
        assert as_user(cluster, "admin", lambda a: a.create_acls([
            allow("maker", ACLOperation.CREATE, pattern), allow("*", ACLOperation.DESCRIBE, pattern)])) == 0
        assert cluster.run(ask("viewer", "made-by-maker")) == ErrorCode.TOPIC_AUTHORIZATION_FAILED
        assert "made-by-maker" not in topics(cluster)
        assert cluster.run(ask("maker", "made-by-maker")) == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        deadline = time.monotonic() + 15
        while "made-by-maker" not in topics(cluster) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "made-by-maker" in topics(cluster)


def test_broker_static_configs_name_the_listener_protocols(bg):
    """DescribeConfigs on a broker reports the security protocols its listeners really speak."""
    from kafka.admin import ConfigResource

    admin = kafka_admin(bg, "admin")
    try:
        described = admin.describe_configs([ConfigResource("BROKER", "1")], config_filter="all")["broker"]["1"]
    finally:
        admin.close()
    assert described["listener.security.protocol.map"]["value"] == "CONTROLLER:SASL_PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT"
    assert described["listeners"]["value"].startswith("SASL_PLAINTEXT://")
    assert described["controller.listener.names"]["value"] == "CONTROLLER"


def kafka_admin_topics(bg, user: str) -> list[str]:
    admin = kafka_admin(bg, user)
    try:
        return admin.list_topics()
    finally:
        admin.close()


def test_delete_topics_needs_delete_on_the_topic(bg):
    assert as_user(bg, "deleter", lambda a: a.delete_topics(["kept"])) == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    assert "kept" in topics(bg)
    assert as_user(bg, "deleter", lambda a: a.delete_topics(["doomed"])) == ErrorCode.NONE
    assert "doomed" not in topics(bg)


def describe_configs_codes(bg, user: str, resources: list[tuple[int, str]]) -> dict:
    from confluent_kafka.admin import AdminClient, ConfigResource as Resource

    admin = AdminClient({"bootstrap.servers": bg.bootstrap, "security.protocol": "SASL_PLAINTEXT",
                         "sasl.mechanism": "PLAIN", "sasl.username": user, "sasl.password": f"{user}-secret"})
    futures = admin.describe_configs([Resource(kind, name) for kind, name in resources], request_timeout=15)
    codes = {}
    for resource, future in futures.items():
        try:
            future.result(timeout=30)
            codes[resource.name] = 0
        except Exception as error:  # confluent-kafka raises KafkaException carrying the KafkaError
            codes[resource.name] = error.args[0].code()
    return codes


def test_describe_configs_per_resource_confluent(bg):
    """ALTER_CONFIGS implies DESCRIBE_CONFIGS; User:* applies to everyone; a broker's configs need the cluster;
    each refusal is in its own result, at Kafka's code."""
    codes = describe_configs_codes(bg, "configs", [("TOPIC", "existing"), ("TOPIC", "public"), ("TOPIC", "kept"),
                                                   ("BROKER", "1")])
    assert codes == {"existing": 0, "public": 0, "kept": ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                     "1": ErrorCode.CLUSTER_AUTHORIZATION_FAILED}


def test_alter_configs_without_alter_configs_changes_nothing(bg):
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource as Resource)

    admin = AdminClient({"bootstrap.servers": bg.bootstrap, "security.protocol": "SASL_PLAINTEXT",
                         "sasl.mechanism": "PLAIN", "sasl.username": "configs", "sasl.password": "configs-secret"})

    def alter(topic: str):
        resource = Resource("TOPIC", topic, incremental_configs=[
            ConfigEntry("retention.ms", "1000", incremental_operation=AlterConfigOpType.SET)])
        return admin.incremental_alter_configs([resource])[resource].result(timeout=30)

    with pytest.raises(KafkaException) as refused:
        alter("kept")
    assert refused.value.args[0].code() == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    assert bg.call(lambda: bg.cluster.controller.committed.topic_configs("kept")) == {}
    alter("existing")
    assert bg.call(lambda: bg.cluster.controller.committed.topic_configs("existing")) == {"retention.ms": "1000"}


def test_acl_apis_through_confluent(bg):
    """Only ALTER on the cluster may create or delete ACLs; DESCRIBE on the cluster may list them."""
    from confluent_kafka.admin import (AclBinding, AclBindingFilter, AclOperation, AclPermissionType, AdminClient,
                                       ResourcePatternType, ResourceType as Kind)
    from confluent_kafka import KafkaException

    def admin(user):
        return AdminClient({"bootstrap.servers": bg.bootstrap, "security.protocol": "SASL_PLAINTEXT",
                            "sasl.mechanism": "PLAIN", "sasl.username": user, "sasl.password": f"{user}-secret"})

    binding = AclBinding(Kind.TOPIC, "from-confluent", ResourcePatternType.LITERAL, "User:nobody", "*",
                         AclOperation.READ, AclPermissionType.ALLOW)
    viewer, super_user = admin("acl-viewer"), admin("admin")  # kept alive while their futures run
    with pytest.raises(KafkaException) as refused:
        viewer.create_acls([binding])[binding].result(timeout=30)
    assert refused.value.args[0].code() == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    super_user.create_acls([binding])[binding].result(timeout=30)
    wanted = AclBindingFilter(Kind.TOPIC, "from-confluent", ResourcePatternType.ANY, None, None, AclOperation.ANY,
                              AclPermissionType.ANY)
    assert viewer.describe_acls(wanted).result(timeout=30) == [binding]
    assert super_user.delete_acls([wanted])[wanted].result(timeout=30) == [binding]
    assert viewer.describe_acls(wanted).result(timeout=30) == []


def test_controller_refuses_broker_rpcs_without_cluster_action(bg):
    """An authenticated user without CLUSTER_ACTION cannot register, heartbeat or propose an ISR on the
    controller listener: 31 each, and nothing changes."""
    async def attempt():
        port = bg.cluster.controller_node.port
        client = KafkaClient("127.0.0.1", port, "intruder",
                             ClientSecurity("SASL_PLAINTEXT", None, "PLAIN", "alterer", "alterer-secret"))
        try:
            registration = await client.send(BrokerRegistrationRequest(
                broker_id=1, cluster_id=bg.cluster.controller.cluster_id, listeners=[]))
            heartbeat = await client.send(BrokerHeartbeatRequest(broker_id=1, broker_epoch=0, want_fence=True))
            alter = await client.send(AlterPartitionRequest(broker_id=1, broker_epoch=0, topics=[]))
            acls = await client.send(DescribeAclsRequest(resource_type_filter=1, pattern_type_filter=1, operation=1,
                                                         permission_type=1))
            return registration.error_code, heartbeat.error_code, alter.error_code, acls.error_code
        finally:
            await client.close()

    async def describe_cluster_on_controller(user):
        client = KafkaClient("127.0.0.1", bg.cluster.controller_node.port, "describe",
                             ClientSecurity("SASL_PLAINTEXT", None, "PLAIN", user, f"{user}-secret"))
        try:
            return (await client.send(DescribeClusterRequest(endpoint_type=2))).error_code  # controllers
        finally:
            await client.close()

    # the controller asks ALTER on the cluster for DescribeCluster; a broker asks nothing
    assert bg.run(describe_cluster_on_controller("describer")) == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert bg.run(describe_cluster_on_controller("alterer")) == ErrorCode.NONE
    assert as_user(bg, "nobody", lambda a: a.describe_cluster()) == ErrorCode.NONE

    epoch_before = bg.call(lambda: bg.cluster.controller.committed.brokers[1].epoch)
    assert bg.run(attempt()) == (ErrorCode.CLUSTER_AUTHORIZATION_FAILED,) * 3 + (ErrorCode.NONE,)
    broker = bg.call(lambda: bg.cluster.controller.committed.brokers[1])
    assert broker.epoch == epoch_before and not broker.fenced


def test_without_an_authorizer_everything_is_open_and_acl_apis_say_security_disabled(bg_cluster):
    admin = KafkaAdminClient(bootstrap_servers=bg_cluster.bootstrap)
    try:
        assert code(lambda: admin.list_partition_reassignments()) == ErrorCode.NONE
        assert code(lambda: admin.describe_acls(ANY_ACL)) == ErrorCode.SECURITY_DISABLED
    finally:
        admin.close()
