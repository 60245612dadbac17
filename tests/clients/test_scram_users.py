"""SCRAM users in the metadata log: a bootstrap credential written at first start, users added, listed and
removed with AlterUserScramCredentials and DescribeUserScramCredentials through confluent-kafka, logins
that follow those changes, and no password anywhere on disk."""
from __future__ import annotations

import asyncio

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import (AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialDeletion,
                                   UserScramCredentialUpsertion)

from kraftwire import BackgroundCluster, Security
from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import DescribeClusterRequest, DescribeUserScramCredentialsRequest
from kraftwire.server.raft.storage import kafka_uuid, random_kafka_uuid
from kraftwire.server.wire.client import KafkaClient, KafkaClientError
from kraftwire.server.wire.security import ClientSecurity

BOOT_PASSWORD = "boot-password-never-on-disk"


@pytest.fixture(scope="module")
def bg(tmp_path_factory):
    security = Security(listener_name="SASL_PLAINTEXT", plain_users={"admin": "admin-secret", "alice": "alice-secret"},
                        scram_users=[("SCRAM-SHA-256", "boot", BOOT_PASSWORD)], authorizer=True,
                        super_users=("User:admin",))
    with BackgroundCluster(brokers=1, security=security, data_dir=tmp_path_factory.mktemp("data")) as cluster:
        yield cluster


def admin(bg, user: str) -> AdminClient:
    return AdminClient({"bootstrap.servers": bg.bootstrap, "security.protocol": "SASL_PLAINTEXT",
                        "sasl.mechanism": "PLAIN", "sasl.username": user, "sasl.password": f"{user}-secret"})


def logs_in(bg, mechanism: str, user: str, password: str) -> bool:
    async def attempt():
        host, port = bg.cluster.bootstrap.split(",")[0].rsplit(":", 1)
        client = KafkaClient(host, int(port), "scram-test",
                             ClientSecurity("SASL_PLAINTEXT", None, mechanism, user, password))
        try:
            await client.connect()
            return True
        except KafkaClientError:
            return False
        finally:
            await client.close()
    return bg.run(attempt())


def test_requests_sent_together_on_a_new_connection_wait_for_its_handshake(bg):
    """kraftwire's own client (a broker's to the controllers, the controllers' to each other): requests sent
    at once on a connection not open yet all go out after its ApiVersions and SASL exchange, and each is
    answered. One sent while the first still waited for ApiVersions used to go out at once, with no versions
    known ("does not serve api key"), which failed a broker's heartbeats to a controller it had just found."""
    async def together():
        host, port = bg.cluster.bootstrap.split(",")[0].rsplit(":", 1)
        client = KafkaClient(host, int(port), "scram-test",
                             ClientSecurity("SASL_PLAINTEXT", None, "SCRAM-SHA-256", "boot", BOOT_PASSWORD))
        try:
            first = asyncio.ensure_future(client.send(DescribeClusterRequest()))
            while client._writer is None and not first.done():  # the socket is open, the handshake under way
                await asyncio.sleep(0)
            return await asyncio.gather(first, *(client.send(DescribeClusterRequest()) for _ in range(2)))
        finally:
            await client.close()
    answers = bg.run(together())
    assert [(a.error_code, [b.broker_id for b in a.brokers]) for a in answers] == [(ErrorCode.NONE, [1])] * 3


def test_the_bootstrap_credential_is_in_the_log_salted(bg):
    assert logs_in(bg, "SCRAM-SHA-256", "boot", BOOT_PASSWORD)
    assert not logs_in(bg, "SCRAM-SHA-256", "boot", "wrong")
    client = admin(bg, "admin")
    infos = client.describe_user_scram_credentials(["boot"])["boot"].result(timeout=30).scram_credential_infos
    assert [(i.mechanism, i.iterations) for i in infos] == [(ScramMechanism.SCRAM_SHA_256, 4096)]
    on_disk = b"".join(p.read_bytes() for p in bg.cluster.data_dir.rglob("*") if p.is_file())
    assert b"boot" in on_disk and BOOT_PASSWORD.encode() not in on_disk


def test_users_added_and_removed_through_the_api_log_in_and_out(bg):
    client = admin(bg, "admin")
    upsert = UserScramCredentialUpsertion("dave", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192),
                                          b"dave-secret")
    client.alter_user_scram_credentials([upsert])["dave"].result(timeout=30)
    assert logs_in(bg, "SCRAM-SHA-512", "dave", "dave-secret")
    assert not logs_in(bg, "SCRAM-SHA-256", "dave", "dave-secret")  # no credential for that mechanism
    described = client.describe_user_scram_credentials().result(timeout=30)
    assert {user: [(i.mechanism, i.iterations) for i in d.scram_credential_infos] for user, d in described.items()} \
        == {"boot": [(ScramMechanism.SCRAM_SHA_256, 4096)], "dave": [(ScramMechanism.SCRAM_SHA_512, 8192)]}
    client.alter_user_scram_credentials([UserScramCredentialDeletion("dave", ScramMechanism.SCRAM_SHA_512)]
                                        )["dave"].result(timeout=30)
    assert not logs_in(bg, "SCRAM-SHA-512", "dave", "dave-secret")


def error_code(future) -> int:
    try:
        future.result(timeout=30)
    except KafkaException as refused:
        return refused.args[0].code()
    raise AssertionError("the call succeeded")


def test_kafkas_codes_for_bad_changes_and_unauthorized_callers(bg):
    client, alice = admin(bg, "admin"), admin(bg, "alice")
    gone = UserScramCredentialDeletion("nobody", ScramMechanism.SCRAM_SHA_256)
    assert error_code(client.alter_user_scram_credentials([gone])["nobody"]) == ErrorCode.RESOURCE_NOT_FOUND
    weak = UserScramCredentialUpsertion("erin", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 100), b"pw")
    assert error_code(client.alter_user_scram_credentials([weak])["erin"]) == ErrorCode.UNACCEPTABLE_CREDENTIAL
    fine = UserScramCredentialUpsertion("frank", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), b"pw")
    assert error_code(alice.alter_user_scram_credentials([fine])["frank"]) == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert not logs_in(bg, "SCRAM-SHA-256", "frank", "pw")
    assert error_code(client.describe_user_scram_credentials(["nobody"])["nobody"]) == ErrorCode.RESOURCE_NOT_FOUND

    async def describe_all_as_alice():
        # over kraftwire's own client: librdkafka 2.16 aborts while freeing a DescribeUserScramCredentials
        # result that carries only a top-level error (the answer Kafka gives here too)
        host, port = bg.cluster.bootstrap.split(",")[0].rsplit(":", 1)
        client = KafkaClient(host, int(port), "scram-test",
                             ClientSecurity("SASL_PLAINTEXT", None, "PLAIN", "alice", "alice-secret"))
        try:
            return await client.send(DescribeUserScramCredentialsRequest(users=None))
        finally:
            await client.close()

    answer = bg.run(describe_all_as_alice())
    assert (answer.error_code, list(answer.results)) == (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, [])


def test_users_and_acls_survive_a_restart_through_a_snapshot(tmp_path):
    """SCRAM credentials and ACLs are metadata: after a restart (the image rebuilt from a snapshot and the
    log) the user still logs in, the ACL still holds, and the bootstrap user is not written again."""
    from kafka import KafkaAdminClient
    from kafka.admin import ACL, ACLOperation, ACLPermissionType, ResourcePattern, ResourceType

    from kraftwire.server.raft import RaftConfig

    def start():
        security = Security(listener_name="SASL_PLAINTEXT", plain_users={"admin": "admin-secret"},
                            scram_users=[("SCRAM-SHA-256", "boot", BOOT_PASSWORD)], authorizer=True,
                            super_users=("User:admin",))
        return BackgroundCluster(brokers=1, security=security, data_dir=tmp_path,
                                 log_config=RaftConfig(snapshot_every_records=5))

    acl = ACL("User:boot", "*", ACLOperation.DESCRIBE, ACLPermissionType.ALLOW,
              ResourcePattern(ResourceType.CLUSTER, "kafka-cluster"))
    with start() as bg:
        admin_client = KafkaAdminClient(bootstrap_servers=bg.bootstrap, security_protocol="SASL_PLAINTEXT",
                                        sasl_mechanism="PLAIN", sasl_plain_username="admin",
                                        sasl_plain_password="admin-secret")
        try:
            assert not admin_client.create_acls([acl])["failed"]
        finally:
            admin_client.close()
        salt_before = bg.call(lambda: bg.cluster.controller.committed.scram[(1, "boot")][0])
    assert list((tmp_path / "__cluster_metadata-0").glob("*.checkpoint"))
    with start() as bg:
        assert logs_in(bg, "SCRAM-SHA-256", "boot", BOOT_PASSWORD)
        image = bg.call(lambda: bg.cluster.controller.committed)
        assert image.scram[(1, "boot")][0] == salt_before  # the first start's credential, kept
        assert [(a.principal, a.operation) for a in image.acls.values()] == [("User:boot", ACLOperation.DESCRIBE)]


def test_a_not_controller_answer_names_every_user_once(bg):
    """An AlterUserScramCredentials answered NOT_CONTROLLER (a standby's answer, here injected) carries one
    result per user its deletions and upsertions name, as Kafka's error response does; confluent-kafka
    then reports the code for each user rather than an empty answer."""
    bg.cluster.inject_error(51, ErrorCode.NOT_CONTROLLER, count=10)
    try:
        client = admin(bg, "admin")
        gina = UserScramCredentialUpsertion("gina", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), b"pw")
        futures = client.alter_user_scram_credentials(
            [gina, UserScramCredentialDeletion("gina", ScramMechanism.SCRAM_SHA_512),
             UserScramCredentialDeletion("hank", ScramMechanism.SCRAM_SHA_256)])
        assert {user: error_code(future) for user, future in futures.items()} == \
            {"gina": ErrorCode.NOT_CONTROLLER, "hank": ErrorCode.NOT_CONTROLLER}
    finally:
        bg.cluster.faults.clear()
    assert not logs_in(bg, "SCRAM-SHA-256", "gina", "pw")


def test_a_scram_user_created_through_a_broker_only_process_logs_in_on_its_listener(tmp_path):
    """A cluster in two parts, as ``kraftwire controller`` and ``kraftwire broker`` run it: a controller-only
    ``Cluster`` and a broker-only one following its log. A SCRAM user created through the broker logs in on
    the broker's listener, whose logins read the brokers' own metadata view (the process has no controller:
    reading the controller's image raised IndexError, and the login failed)."""
    def security() -> Security:
        return Security(listener_name="SASL_PLAINTEXT", plain_users={"admin": "admin-secret"})

    cluster_id = kafka_uuid(random_kafka_uuid())
    with BackgroundCluster(0, voters={3000: ("127.0.0.1", 0)}, local_controllers=[3000], cluster_id=cluster_id,
                           data_dir=tmp_path / "controller", security=security()) as controllers:
        address = controllers.call(lambda: (controllers.cluster.controller_node.host,
                                            controllers.cluster.controller_node.port))
        with BackgroundCluster(1, voters={3000: address}, cluster_id=cluster_id, data_dir=tmp_path / "broker",
                               security=security()) as brokers:
            assert brokers.cluster.controllers == []
            upsert = UserScramCredentialUpsertion("erin", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096),
                                                  b"erin-secret")
            client = admin(brokers, "admin")
            client.alter_user_scram_credentials([upsert])["erin"].result(timeout=30)
            assert logs_in(brokers, "SCRAM-SHA-256", "erin", "erin-secret")
            assert not logs_in(brokers, "SCRAM-SHA-256", "erin", "wrong-secret")
