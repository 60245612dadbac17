"""Producing under ACLs (Kafka's StandardAuthorizer), through kafka-python over SASL_PLAINTEXT: WRITE on
the topic is what Produce asks (TOPIC_AUTHORIZATION_FAILED otherwise, nothing appended), and an idempotent
producer's InitProducerId needs IDEMPOTENT_WRITE on the cluster or WRITE on some topic
(CLUSTER_AUTHORIZATION_FAILED otherwise)."""
from __future__ import annotations

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ACL, ACLOperation, ACLPermissionType, NewTopic, ResourcePattern, ResourceType
from kafka.errors import ClusterAuthorizationFailedError, KafkaError, TopicAuthorizationFailedError

from kraftwire import BackgroundCluster, Security

USERS = ["admin", "writer", "describer"]


def allow(user: str, operation, topic: str) -> ACL:
    return ACL(f"User:{user}", "*", operation, ACLPermissionType.ALLOW, ResourcePattern(ResourceType.TOPIC, topic))


def options(user: str) -> dict:
    return {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN", "sasl_plain_username": user,
            "sasl_plain_password": f"{user}-secret"}


@pytest.fixture(scope="module")
def bg():
    security = Security(listener_name="SASL_PLAINTEXT", protocol_map={"CONTROLLER": "SASL_PLAINTEXT"},
                        plain_users={u: f"{u}-secret" for u in USERS}, authorizer=True, super_users=("User:admin",))
    with BackgroundCluster(brokers=1, security=security) as cluster:
        admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=15000, **options("admin"))
        try:
            assert not admin.create_acls([allow("writer", ACLOperation.WRITE, "granted"),
                                          allow("writer", ACLOperation.DESCRIBE, "granted"),
                                          allow("describer", ACLOperation.DESCRIBE, "granted")])["failed"]
            admin.create_topics([NewTopic("granted", 1, 1)])
        finally:
            admin.close()
        yield cluster


def end_offset(bg) -> int:
    consumer = KafkaConsumer(bootstrap_servers=bg.bootstrap, **options("admin"))
    try:
        return consumer.end_offsets([TopicPartition("granted", 0)])[TopicPartition("granted", 0)]
    finally:
        consumer.close()


@pytest.mark.parametrize("idempotent", [False, True])
def test_write_on_the_topic_is_what_produce_asks(bg, idempotent):
    before = end_offset(bg)
    producer = KafkaProducer(bootstrap_servers=bg.bootstrap, enable_idempotence=idempotent, acks="all",
                             **options("writer"))
    try:
        assert producer.send("granted", b"allowed").get(timeout=30).offset == before
    finally:
        producer.close()
    assert end_offset(bg) == before + 1


def test_without_write_produce_is_refused_and_nothing_is_appended(bg):
    before = end_offset(bg)
    producer = KafkaProducer(bootstrap_servers=bg.bootstrap, enable_idempotence=False, retries=0,
                             **options("describer"))
    try:
        with pytest.raises(TopicAuthorizationFailedError):
            producer.send("granted", b"refused").get(timeout=30)
    finally:
        producer.close()
    assert end_offset(bg) == before


def test_an_idempotent_producer_without_any_write_gets_no_producer_id(bg):
    producer = KafkaProducer(bootstrap_servers=bg.bootstrap, enable_idempotence=True, **options("describer"))
    try:
        with pytest.raises(KafkaError, match=ClusterAuthorizationFailedError.__name__):  # InitProducerId's code 31
            producer.send("granted", b"refused").get(timeout=30)
    finally:
        producer.close()
