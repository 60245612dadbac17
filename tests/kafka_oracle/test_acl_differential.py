"""ACL matching and SASL's edges side by side with a real Apache Kafka 4.3.1 (StandardAuthorizer): the
same ACL bindings created on both, the same raw requests sent by several principals, the same answers back.

Both sides: one broker, its listener SASL_PLAINTEXT with PLAIN and SCRAM-SHA-256, ``User:admin`` the
only super user, ``allow.everyone.if.no.acl.found`` false. ``BINDINGS`` covers LITERAL and PREFIXED
patterns, the ``*`` resource, the ``User:*`` principal, a host of the client's own (127.0.0.1), a host
that is not, ``*``, ALLOW and DENY, and the operations that imply DESCRIBE and DESCRIBE_CONFIGS. Every
principal then asks, in one request each: Metadata of named topics (with their authorized operations)
and of all topics, CreateTopics (validate only), DescribeConfigs, AlterConfigs (validate only),
DeleteTopics of topics that do not exist, Produce, InitProducerId, DescribeAcls, CreateAcls and
DeleteAcls. The super user then lists ACLs through many filters (LITERAL, PREFIXED, MATCH, ANY, by
principal, host, operation, permission, and refused shapes), creates refused bindings, and deletes
through a sequence of filters. Last, fresh connections probe SASL's edges: a request before the
handshake, SaslAuthenticate before SaslHandshake, an unknown mechanism, a wrong password, malformed
PLAIN tokens, a token over ``sasl.server.max.receive.size``, a second handshake after logging in.

Each case's answer is reduced to what a client reads (error codes and messages, which topics are shown,
the authorized-operations bits, the bindings sorted), and the two must be equal case by case, except
for those in ``DELIBERATE``, each listed in README.md's differences section. The message of a refused ACL API
is compared up to the permission it names (``refusal``): Kafka's prints its internal request object.
"""
from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from apache_kafka import ACL_ORACLE_USERS, KafkaCluster
from kraftwire.codec.messages import (
    AlterConfigsRequest, CreateAclsRequest, CreateTopicsRequest, DeleteAclsRequest, DeleteTopicsRequest,
    DescribeAclsRequest, DescribeConfigsRequest, InitProducerIdRequest, MetadataRequest, ProduceRequest,
    SaslAuthenticateRequest, SaslHandshakeRequest)
from kraftwire.codec.records import encode_batch
from kraftwire.server.host.cluster import BackgroundCluster
from kraftwire.server.host.security_settings import Security
from raw_client import RawConnection, encode_request

# Kafka's codes of ResourceType, PatternType, AclOperation and AclPermissionType
UNKNOWN, ANY = 0, 1
TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID = 2, 3, 4, 5
MATCH, LITERAL, PREFIXED = 2, 3, 4
ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION = 2, 3, 4, 5, 6, 7, 8, 9
DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE = 10, 11, 12
DENY, ALLOW = 2, 3
CONFIG_TOPIC, CONFIG_BROKER = 2, 4

CLOSED = "closed"  # the server closed the connection instead of answering
LOCAL, ELSEWHERE = "127.0.0.1", "10.9.8.7"  # the clients' own host, and one that is not
CLUSTER_NAME = "kafka-cluster"
TOPICS = ("orders", "orders-eu", "payments", "logs")
ABSENT_TOPICS = ("ghost", "orders-gone", "pay-gone")
PRINCIPALS = ("alice", "bob", "carol", "dave", "eve", "frank", "grace", "heidi", "ivan", "mallory", "admin")
SUPER = "admin"

Binding = tuple[int, str, int, str, str, int, int]  # resource type, name, pattern, principal, host, op, permission

BINDINGS: list[Binding] = [
    (TOPIC, "orders", LITERAL, "User:alice", "*", READ, ALLOW),
    (TOPIC, "orders-", PREFIXED, "User:alice", "*", WRITE, ALLOW),
    (TOPIC, "orders-eu", LITERAL, "User:alice", "*", WRITE, DENY),
    (GROUP, "g-", PREFIXED, "User:alice", "*", READ, ALLOW),
    (TOPIC, "*", LITERAL, "User:bob", "*", ALL, ALLOW),
    (TOPIC, "pay", PREFIXED, "User:bob", "*", DELETE, DENY),
    (TOPIC, "payments", LITERAL, "User:*", "*", DESCRIBE, ALLOW),
    (TOPIC, "payments", LITERAL, "User:*", ELSEWHERE, READ, DENY),
    (TOPIC, "orders", LITERAL, "User:carol", LOCAL, ALTER_CONFIGS, ALLOW),
    (TOPIC, "pay", PREFIXED, "User:carol", ELSEWHERE, ALL, ALLOW),
    (CLUSTER, CLUSTER_NAME, LITERAL, "User:carol", LOCAL, CREATE, ALLOW),
    (TOPIC, "orders-", PREFIXED, "User:dave", "*", CREATE, ALLOW),
    (TOPIC, "o", PREFIXED, "User:dave", "*", DESCRIBE_CONFIGS, ALLOW),
    (TOPIC, "payments", LITERAL, "User:dave", "*", ALTER, ALLOW),
    (TOPIC, "ghost", LITERAL, "User:dave", "*", DELETE, ALLOW),
    (TOPIC, "logs", LITERAL, "User:dave", "*", WRITE, ALLOW),
    (CLUSTER, CLUSTER_NAME, LITERAL, "User:eve", "*", IDEMPOTENT_WRITE, ALLOW),
    (CLUSTER, CLUSTER_NAME, LITERAL, "User:eve", "*", DESCRIBE, ALLOW),
    (CLUSTER, CLUSTER_NAME, LITERAL, "User:eve", "*", CLUSTER_ACTION, ALLOW),
    (TOPIC, "*", LITERAL, "User:eve", LOCAL, ALL, DENY),
    (TOPIC, "logs", LITERAL, "User:eve", "*", READ, ALLOW),
    (CLUSTER, CLUSTER_NAME, LITERAL, "User:frank", "*", ALTER, ALLOW),
    (TOPIC, "logs", LITERAL, "User:frank", "*", DELETE, ALLOW),
    (TRANSACTIONAL_ID, "tx-", PREFIXED, "User:frank", "*", WRITE, ALLOW),
    (CLUSTER, CLUSTER_NAME, LITERAL, "User:grace", "*", ALL, ALLOW),
    (CLUSTER, CLUSTER_NAME, LITERAL, "User:grace", "*", ALTER, DENY),
    (CLUSTER, CLUSTER_NAME, LITERAL, "User:grace", "*", DESCRIBE_CONFIGS, ALLOW),
    (TOPIC, "orders", LITERAL, "User:heidi", "*", READ, ALLOW),
    (TOPIC, "orders", LITERAL, "User:heidi", "*", DESCRIBE, DENY),
    (TOPIC, "payments", LITERAL, "User:heidi", "*", ALTER_CONFIGS, ALLOW),
    (TOPIC, "logs", LITERAL, "User:heidi", "*", ALTER_CONFIGS, ALLOW),
    (TOPIC, "logs", LITERAL, "User:heidi", "*", DESCRIBE_CONFIGS, DENY),
    (TOPIC, "*", PREFIXED, "User:ivan", "*", ALL, ALLOW),
    (TOPIC, "orders-eu", LITERAL, "User:ivan", LOCAL, DESCRIBE, ALLOW),
    (TOPIC, "orders-eu", LITERAL, "User:ivan", ELSEWHERE, DESCRIBE, DENY),
]

Filter = tuple[int, str | None, int, str | None, str | None, int, int]
EVERYTHING: Filter = (ANY, None, ANY, None, None, ANY, ANY)

DESCRIBE_FILTERS: dict[str, Filter] = {
    "any": EVERYTHING,
    "topic_orders_literal": (TOPIC, "orders", LITERAL, None, None, ANY, ANY),
    "topic_orders_match": (TOPIC, "orders", MATCH, None, None, ANY, ANY),
    "topic_orders_any": (TOPIC, "orders", ANY, None, None, ANY, ANY),
    "topic_orders_eu_match": (TOPIC, "orders-eu", MATCH, None, None, ANY, ANY),
    "topic_orders_eu_prefixed": (TOPIC, "orders-eu", PREFIXED, None, None, ANY, ANY),
    "topic_orders_dash_prefixed": (TOPIC, "orders-", PREFIXED, None, None, ANY, ANY),
    "topic_orders_dash_any": (TOPIC, "orders-", ANY, None, None, ANY, ANY),
    "topic_payments_match": (TOPIC, "payments", MATCH, None, None, ANY, ANY),
    "topic_ghost_match": (TOPIC, "ghost", MATCH, None, None, ANY, ANY),
    "topic_unnamed_match": (TOPIC, None, MATCH, None, None, ANY, ANY),
    "topic_prefixed_all": (TOPIC, None, PREFIXED, None, None, ANY, ANY),
    "topic_star_literal": (TOPIC, "*", LITERAL, None, None, ANY, ANY),
    "topic_star_match": (TOPIC, "*", MATCH, None, None, ANY, ANY),
    "topic_star_prefixed": (TOPIC, "*", PREFIXED, None, None, ANY, ANY),
    "any_type_orders_match": (ANY, "orders", MATCH, None, None, ANY, ANY),
    "group_match": (GROUP, "g-1", MATCH, None, None, ANY, ANY),
    "transactional_match": (TRANSACTIONAL_ID, "tx-9", MATCH, None, None, ANY, ANY),
    "cluster_match": (CLUSTER, CLUSTER_NAME, MATCH, None, None, ANY, ANY),
    "principal_wildcard": (ANY, None, ANY, "User:*", None, ANY, ANY),
    "principal_alice": (ANY, None, ANY, "User:alice", None, ANY, ANY),
    "principal_unknown_user": (ANY, None, ANY, "User:nobody", None, ANY, ANY),
    "principal_other_type": (ANY, None, ANY, "Group:alice", None, ANY, ANY),
    "host_local": (ANY, None, ANY, None, LOCAL, ANY, ANY),
    "host_star": (ANY, None, ANY, None, "*", ANY, ANY),
    "operation_read": (ANY, None, ANY, None, None, READ, ANY),
    "operation_all": (ANY, None, ANY, None, None, ALL, ANY),
    "operation_describe": (ANY, None, ANY, None, None, DESCRIBE, ANY),
    "permission_deny": (ANY, None, ANY, None, None, ANY, DENY),
    "alice_orders_match_write_allow": (TOPIC, "orders-eu", MATCH, "User:alice", "*", WRITE, ALLOW),
    "unknown_resource_type": (UNKNOWN, None, ANY, None, None, ANY, ANY),
    "unknown_pattern_type": (ANY, None, UNKNOWN, None, None, ANY, ANY),
    "unknown_operation": (ANY, None, ANY, None, None, UNKNOWN, ANY),
    "unknown_permission": (ANY, None, ANY, None, None, ANY, UNKNOWN),
    "out_of_range_resource_type": (99, None, ANY, None, None, ANY, ANY),
    "out_of_range_pattern_type": (ANY, None, 99, None, None, ANY, ANY),
    "out_of_range_operation": (ANY, None, ANY, None, None, 99, ANY),
    "literal_without_name": (TOPIC, None, LITERAL, None, None, ANY, ANY),
    "empty_name_literal": (TOPIC, "", LITERAL, None, None, ANY, ANY),
}

# CreateAcls by the super user, one creation each, that Kafka refuses (or takes) at the edges
BAD_CREATIONS: dict[str, Binding] = {
    "resource_type_unknown": (UNKNOWN, "x", LITERAL, "User:zed", "*", READ, ALLOW),
    "resource_type_any": (ANY, "x", LITERAL, "User:zed", "*", READ, ALLOW),
    "resource_type_out_of_range": (99, "x", LITERAL, "User:zed", "*", READ, ALLOW),
    "pattern_unknown": (TOPIC, "x", UNKNOWN, "User:zed", "*", READ, ALLOW),
    "pattern_any": (TOPIC, "x", ANY, "User:zed", "*", READ, ALLOW),
    "pattern_match": (TOPIC, "x", MATCH, "User:zed", "*", READ, ALLOW),
    "pattern_out_of_range": (TOPIC, "x", 99, "User:zed", "*", READ, ALLOW),
    "operation_unknown": (TOPIC, "x", LITERAL, "User:zed", "*", UNKNOWN, ALLOW),
    "operation_any": (TOPIC, "x", LITERAL, "User:zed", "*", ANY, ALLOW),
    "operation_out_of_range": (TOPIC, "x", LITERAL, "User:zed", "*", 99, ALLOW),
    "permission_unknown": (TOPIC, "x", LITERAL, "User:zed", "*", READ, UNKNOWN),
    "permission_any": (TOPIC, "x", LITERAL, "User:zed", "*", READ, ANY),
    "principal_without_colon": (TOPIC, "x", LITERAL, "zed", "*", READ, ALLOW),
    "principal_empty": (TOPIC, "x", LITERAL, "", "*", READ, ALLOW),
    "principal_empty_name": (TOPIC, "x", LITERAL, "User:", "*", READ, ALLOW),
    "principal_empty_type": (TOPIC, "x", LITERAL, ":zed", "*", READ, ALLOW),
    "principal_other_type": (TOPIC, "x", LITERAL, "Group:zed", "*", READ, ALLOW),
    "resource_name_empty": (TOPIC, "", LITERAL, "User:zed", "*", READ, ALLOW),
    "cluster_other_name": (CLUSTER, "other", LITERAL, "User:zed", "*", ALTER, ALLOW),
    "cluster_prefixed": (CLUSTER, "kafka", PREFIXED, "User:zed", "*", ALTER, ALLOW),
    "host_empty": (TOPIC, "x", LITERAL, "User:zed", "", READ, ALLOW),
    "host_name": (TOPIC, "x", LITERAL, "User:zed", "not-an-address", READ, ALLOW),
    "topic_bad_name": (TOPIC, "bad/name", LITERAL, "User:zed", "*", READ, ALLOW),
    "duplicate_of_stored": BINDINGS[0],
}

# DeleteAcls by the super user, in order: each a list of filters sent in one request
DELETE_STEPS: list[tuple[str, list[Filter]]] = [
    ("matches_nothing", [(TOPIC, "nothing", LITERAL, None, None, ANY, ANY)]),
    ("unknown_shapes", [(UNKNOWN, None, ANY, None, None, ANY, ANY), (ANY, None, UNKNOWN, None, None, ANY, ANY),
                        (ANY, None, ANY, None, None, UNKNOWN, ANY), (ANY, None, ANY, None, None, ANY, UNKNOWN),
                        (TOPIC, "nothing", LITERAL, None, None, ANY, ANY)]),
    ("alice_orders_eu_literal", [(TOPIC, "orders-eu", LITERAL, "User:alice", None, ANY, ANY)]),
    ("payments_match_deny", [(TOPIC, "payments", MATCH, None, None, ANY, DENY)]),
    ("overlapping_filters", [(TOPIC, "logs", LITERAL, None, None, ANY, ANY),
                             (ANY, None, ANY, "User:heidi", None, ANY, ANY)]),
    ("host_local", [(ANY, None, ANY, None, LOCAL, ANY, ANY)]),
    ("wildcard_principal", [(ANY, None, ANY, "User:*", None, ANY, ANY)]),
    ("prefixed_orders_dash_any", [(TOPIC, "orders-", ANY, None, None, ANY, ANY)]),
    ("match_unnamed_cluster", [(CLUSTER, None, MATCH, None, None, ALTER, ANY)]),
    ("everything", [EVERYTHING]),
]

# Cases where kraftwire answers otherwise, each with README.md's line saying why
UNKNOWN_CODES = ("**An ACL creation or filter with an UNKNOWN (0) resource type, pattern type, operation or "
                 "permission** gets INVALID_REQUEST (42) in its own result")
DELIBERATE: dict[str, str] = {
    **{f"describe_acls_filter/unknown_{field}": UNKNOWN_CODES
       for field in ("resource_type", "pattern_type", "operation", "permission")},
    **{f"create_acls_input/{field}_unknown": UNKNOWN_CODES
       for field in ("resource_type", "pattern", "operation", "permission")},
    "delete_acls/unknown_shapes": UNKNOWN_CODES,
}
# Kafka's message for a refused ACL API prints its internal request object; kraftwire's names the request
NEEDS_PERMISSION = re.compile(r"^Request .* needs (\w+) permission\.$", re.DOTALL)


# --- the two sides ----------------------------------------------------------------------------------

class Side:
    """One broker's SASL_PLAINTEXT listener: a logged-in raw connection per user."""

    def __init__(self, name: str, address: str, broker_id: int):
        self.name, self.address, self.broker_id = name, address, broker_id
        self.connections: dict[str, RawConnection] = {}

    def send(self, user: str, request, version: int):
        """The answer; ``Closed`` when the server closed the connection instead (the next send opens another)."""
        if user not in self.connections:
            self.connections[user] = login(self.address, user)
        try:
            return self.connections[user].send(request, version)
        except (ConnectionError, TimeoutError) as closed:
            self.connections.pop(user).sock.close()
            raise Closed() from closed

    def close(self) -> None:
        for connection in self.connections.values():
            connection.sock.close()


class Closed(Exception):
    """The server closed the connection rather than answer."""


def answered(ask: Callable[..., Any], *args: Any) -> Any:
    """What ``ask(*args)`` read of the answer, or CLOSED."""
    try:
        return ask(*args)
    except Closed:
        return CLOSED


def login(address: str, user: str, password: str | None = None) -> RawConnection:
    connection = RawConnection(address, timeout=20)
    handshake = connection.send(SaslHandshakeRequest(mechanism="PLAIN"), 1)
    assert handshake.error_code == 0, handshake
    token = f"\0{user}\0{password or ACL_ORACLE_USERS[user]}".encode()
    answer = connection.send(SaslAuthenticateRequest(auth_bytes=token), 2)
    assert answer.error_code == 0, (user, answer)
    return connection


def wait_until(what: str, probe: Callable[[], Any], done: Callable[[Any], bool], timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while not done(value := probe()):
        assert time.monotonic() < deadline, f"{what}: {value}"
        time.sleep(0.05)
    return value


# --- requests and what a client reads of their answers --------------------------------------------

def creation(binding: Binding) -> CreateAclsRequest.AclCreation:
    t, name, pattern, principal, host, operation, permission = binding
    return CreateAclsRequest.AclCreation(resource_type=t, resource_name=name, resource_pattern_type=pattern,
                                         principal=principal, host=host, operation=operation,
                                         permission_type=permission)


def describe_acls_request(f: Filter) -> DescribeAclsRequest:
    t, name, pattern, principal, host, operation, permission = f
    return DescribeAclsRequest(resource_type_filter=t, resource_name_filter=name, pattern_type_filter=pattern,
                               principal_filter=principal, host_filter=host, operation=operation,
                               permission_type=permission)


def delete_filter(f: Filter) -> DeleteAclsRequest.DeleteAclsFilter:
    t, name, pattern, principal, host, operation, permission = f
    return DeleteAclsRequest.DeleteAclsFilter(resource_type_filter=t, resource_name_filter=name,
                                              pattern_type_filter=pattern, principal_filter=principal,
                                              host_filter=host, operation=operation, permission_type=permission)


def refusal(message: str | None) -> str | None:
    """A message, with a refused ACL API's "Request ... needs X permission." reduced to the permission."""
    return NEEDS_PERMISSION.sub(r"Request ... needs \1 permission.", message) if message else message


def described(side: Side, user: str, f: Filter) -> dict:
    answer = side.send(user, describe_acls_request(f), 3)
    bindings = sorted((r.resource_type, r.resource_name, r.pattern_type, a.principal, a.host, a.operation,
                       a.permission_type) for r in answer.resources for a in r.acls)
    return {"error": (answer.error_code, refusal(answer.error_message)), "bindings": bindings}


def stored(side: Side) -> list[Binding]:
    return described(side, SUPER, EVERYTHING)["bindings"]


def metadata(side: Side, user: str) -> dict:
    named = side.send(user, MetadataRequest(
        topics=[MetadataRequest.MetadataRequestTopic(name=t) for t in TOPICS + ABSENT_TOPICS],
        allow_auto_topic_creation=False, include_topic_authorized_operations=True), 12)
    every = side.send(user, MetadataRequest(topics=None, allow_auto_topic_creation=False,
                                            include_topic_authorized_operations=True), 12)
    return {"named": {t.name: (t.error_code, t.topic_authorized_operations, len(t.partitions)) for t in named.topics},
            "all": sorted((t.name, t.topic_authorized_operations) for t in every.topics
                          if not t.name.startswith("__"))}


def create_topics(side: Side, user: str) -> dict:
    answer = side.send(user, CreateTopicsRequest(timeout_ms=15000, validate_only=True, topics=[
        CreateTopicsRequest.CreatableTopic(name=name, num_partitions=1, replication_factor=1, assignments=[],
                                           configs=[])
        for name in ("orders-new", "pay-new", "other-new", "orders")]), 7)
    return {t.name: (t.error_code, t.error_message) for t in answer.topics}


def describe_configs(side: Side, user: str) -> dict:
    resources = [(CONFIG_TOPIC, t) for t in TOPICS + ("ghost",)] + [(CONFIG_BROKER, str(side.broker_id))]
    answer = side.send(user, DescribeConfigsRequest(include_synonyms=False, include_documentation=False, resources=[
        DescribeConfigsRequest.DescribeConfigsResource(resource_type=t, resource_name=n, configuration_keys=None)
        for t, n in resources]), 4)
    return {(r.resource_type, r.resource_name.replace(str(side.broker_id), "broker")):
            (r.error_code, r.error_message) for r in answer.results}


def alter_configs(side: Side, user: str) -> dict:
    resources = [(CONFIG_TOPIC, t, [("retention.ms", "3600000")]) for t in TOPICS + ("ghost",)]
    resources.append((CONFIG_BROKER, str(side.broker_id), []))
    answer = side.send(user, AlterConfigsRequest(validate_only=True, resources=[
        AlterConfigsRequest.AlterConfigsResource(resource_type=t, resource_name=n, configs=[
            AlterConfigsRequest.AlterableConfig(name=k, value=v) for k, v in configs])
        for t, n, configs in resources]), 2)
    return {(r.resource_type, r.resource_name.replace(str(side.broker_id), "broker")):
            (r.error_code, r.error_message) for r in answer.responses}


def delete_topics(side: Side, user: str) -> dict:
    answer = side.send(user, DeleteTopicsRequest(timeout_ms=15000, topics=[
        DeleteTopicsRequest.DeleteTopicState(name=t) for t in ABSENT_TOPICS]), 6)
    return {r.name: (r.error_code, r.error_message) for r in answer.responses}


def produce(side: Side, user: str) -> dict:
    batch = encode_batch(0, -1, int(time.time() * 1000), [(None, b"v")])
    answer = side.send(user, ProduceRequest(acks=1, timeout_ms=5000, topic_data=[
        ProduceRequest.TopicProduceData(name=t, partition_data=[
            ProduceRequest.PartitionProduceData(index=0, records=batch)]) for t in TOPICS + ("ghost",)]), 10)
    return {t.name: [(p.error_code, p.error_message) for p in t.partition_responses] for t in answer.responses}


def init_producer_id(side: Side, user: str) -> tuple:
    answer = side.send(user, InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000,
                                                   producer_id=-1, producer_epoch=-1), 4)
    return answer.error_code, answer.producer_id >= 0


def acl_writes(side: Side, user: str) -> dict:
    """CreateAcls of a binding every side refuses (no resource name), DeleteAcls of one matching nothing:
    the principal's right to write ACLs, without changing any."""
    created = side.send(user, CreateAclsRequest(creations=[creation((TOPIC, "", LITERAL, "User:zed", "*", READ,
                                                                     ALLOW))]), 3)
    deleted = side.send(user, DeleteAclsRequest(filters=[delete_filter((TOPIC, "nothing", LITERAL, None, None,
                                                                        ANY, ANY))]), 3)
    return {"create": [(r.error_code, refusal(r.error_message)) for r in created.results],
            "delete": [(r.error_code, refusal(r.error_message), len(r.matching_acls)) for r in deleted.filter_results]}


PER_PRINCIPAL: dict[str, Callable[[Side, str], Any]] = {
    "metadata": metadata, "create_topics": create_topics, "describe_configs": describe_configs,
    "alter_configs": alter_configs, "delete_topics": delete_topics, "produce": produce,
    "init_producer_id": init_producer_id, "acl_writes": acl_writes,
    "describe_acls": lambda side, user: described(side, user, EVERYTHING)["error"],
}


# --- SASL's edges, each on a fresh connection -----------------------------------------------------

def exchange(address: str, steps: list[tuple[Any, int] | bytes]) -> list:
    """What each step got: the answer's error code and message, or CLOSED once the server closed."""
    seen: list = []
    with RawConnection(address, timeout=20) as connection:
        for number, step in enumerate(steps, 1):
            try:
                if isinstance(step, bytes):
                    connection.sock.sendall(step)
                    seen.append(("frame", len(connection.read_frame())))
                    continue
                request, version = step
                connection.sock.sendall(encode_request(request, version, number))
                answer = connection.read_response(request.API_KEY, version, number)
            except (ConnectionError, OSError):
                seen.append(CLOSED)
                break
            seen.append((answer.error_code, getattr(answer, "error_message", None),
                         getattr(answer, "mechanisms", None)))
    return seen


def plain(user: str, password: str) -> SaslAuthenticateRequest:
    return SaslAuthenticateRequest(auth_bytes=f"\0{user}\0{password}".encode())


HANDSHAKE = (SaslHandshakeRequest(mechanism="PLAIN"), 1)
SASL_CASES: dict[str, list] = {
    "metadata_before_handshake": [(MetadataRequest(topics=None), 12)],
    "authenticate_before_handshake": [(plain("alice", "alice-secret"), 2)],
    "unknown_mechanism": [(SaslHandshakeRequest(mechanism="GSSAPI"), 1), HANDSHAKE],
    "lowercase_mechanism": [(SaslHandshakeRequest(mechanism="plain"), 1)],
    "empty_mechanism": [(SaslHandshakeRequest(mechanism=""), 1)],
    "wrong_password": [HANDSHAKE, (plain("alice", "wrong"), 2), (MetadataRequest(topics=None), 12)],
    "unknown_user": [HANDSHAKE, (plain("nobody", "x"), 2)],
    "plain_one_token": [HANDSHAKE, (SaslAuthenticateRequest(auth_bytes=b"alice"), 2)],
    "plain_four_tokens": [HANDSHAKE, (SaslAuthenticateRequest(auth_bytes=b"\0alice\0alice-secret\0x"), 2)],
    "plain_other_authorization_id": [HANDSHAKE, (SaslAuthenticateRequest(
        auth_bytes=b"bob\0alice\0alice-secret"), 2)],
    "plain_same_authorization_id": [HANDSHAKE, (SaslAuthenticateRequest(
        auth_bytes=b"alice\0alice\0alice-secret"), 2), (MetadataRequest(topics=None), 12)],
    "plain_empty_user": [HANDSHAKE, (plain("", "x"), 2)],
    "plain_empty_token": [HANDSHAKE, (SaslAuthenticateRequest(auth_bytes=b""), 2)],
    "token_under_limit": [HANDSHAKE, (plain("alice", "p" * 500_000), 2)],
    "token_over_limit": [HANDSHAKE, (plain("alice", "p" * 530_000), 2)],
    "scram_unknown_user": [(SaslHandshakeRequest(mechanism="SCRAM-SHA-256"), 1),
                           (SaslAuthenticateRequest(auth_bytes=b"n,,n=nobody,r=abcdefgh"), 2)],
    "scram_garbage": [(SaslHandshakeRequest(mechanism="SCRAM-SHA-256"), 1),
                      (SaslAuthenticateRequest(auth_bytes=b"garbage"), 2)],
    "scram_extension": [(SaslHandshakeRequest(mechanism="SCRAM-SHA-256"), 1),
                        (SaslAuthenticateRequest(auth_bytes=b"n,,n=alice,r=abcdefgh,tokenauth=true"), 2)],
    "second_handshake": [HANDSHAKE, (plain("alice", "alice-secret"), 2), HANDSHAKE,
                         (MetadataRequest(topics=None), 12)],
    "second_authenticate": [HANDSHAKE, (plain("alice", "alice-secret"), 2), (plain("alice", "alice-secret"), 2),
                            (MetadataRequest(topics=None), 12)],
}


# --- the scenario -----------------------------------------------------------------------------------

def scenario(side: Side) -> dict[str, Any]:
    answers: dict[str, Any] = {}
    created = side.send(SUPER, CreateTopicsRequest(timeout_ms=15000, topics=[
        CreateTopicsRequest.CreatableTopic(name=t, num_partitions=1, replication_factor=1, assignments=[],
                                           configs=[]) for t in TOPICS]), 7)
    assert [t.error_code for t in created.topics] == [0] * len(TOPICS), created
    wait_until(f"{side.name}: topics led", lambda: side.send(SUPER, MetadataRequest(topics=[
        MetadataRequest.MetadataRequestTopic(name=t) for t in TOPICS]), 12),
        lambda a: all(t.error_code == 0 and t.partitions and t.partitions[0].leader_id >= 0 for t in a.topics))
    made = side.send(SUPER, CreateAclsRequest(creations=[creation(b) for b in BINDINGS]), 3)
    assert [r.error_code for r in made.results] == [0] * len(BINDINGS), made
    answers["create_acls/bindings"] = [(r.error_code, r.error_message) for r in made.results]
    wait_until(f"{side.name}: ACLs in force", lambda: stored(side), lambda s: s == sorted(BINDINGS))

    for user in PRINCIPALS:
        for what, ask in PER_PRINCIPAL.items():
            answers[f"{what}/{user}"] = answered(ask, side, user)
    for name, f in DESCRIBE_FILTERS.items():
        answers[f"describe_acls_filter/{name}"] = answered(described, side, SUPER, f)

    before = stored(side)
    taken = set()
    for name, binding in BAD_CREATIONS.items():  # one request each: Kafka closes the connection on some
        made = answered(side.send, SUPER, CreateAclsRequest(creations=[creation(binding)]), 3)
        answers[f"create_acls_input/{name}"] = made if made == CLOSED else [
            (r.error_code, r.error_message) for r in made.results]
        if made != CLOSED and made.results[0].error_code == 0:
            taken.add(binding)
    wait_until(f"{side.name}: created ACLs in force", lambda: stored(side),
               lambda s: s == sorted(set(before) | taken))
    answers["create_acls_input/stored_after"] = stored(side)

    for name, filters in DELETE_STEPS:
        before = stored(side)
        answer = answered(side.send, SUPER, DeleteAclsRequest(filters=[delete_filter(f) for f in filters]), 3)
        closed = answer == CLOSED  # (then nothing was deleted: compared below)
        results: list = []
        gone: set[Binding] = set()
        for result in [] if closed else answer.filter_results:
            matching = sorted((m.error_code, m.resource_type, m.resource_name, m.pattern_type, m.principal, m.host,
                               m.operation, m.permission_type) for m in result.matching_acls)
            gone |= {m[1:] for m in matching}
            results.append((result.error_code, result.error_message, matching))
        answers[f"delete_acls/{name}"] = CLOSED if closed else results
        answers[f"delete_acls/{name}/stored_after"] = wait_until(
            f"{side.name}: deletions in force", lambda: stored(side),
            lambda s, before=before, gone=gone: s == sorted(set(before) - gone))

    for name, steps in SASL_CASES.items():
        answers[f"sasl/{name}"] = exchange(side.address, steps)
    return answers


@pytest.fixture(scope="module")
def answers(apache_kafka_acls: KafkaCluster):
    kafka = Side("kafka", apache_kafka_acls.bootstrap, 1)
    try:
        theirs = scenario(kafka)
    finally:
        kafka.close()
    security = Security(listener_name="SASL_PLAINTEXT", mechanisms=("PLAIN", "SCRAM-SHA-256"),
                        plain_users=dict(ACL_ORACLE_USERS), authorizer=True, super_users=("User:admin",))
    with BackgroundCluster(brokers=1, log_dirs=1, security=security) as bg:
        ours_side = Side("kraftwire", bg.bootstrap, bg.call(lambda: bg.cluster.brokers[0].broker_id))
        try:
            ours = scenario(ours_side)
        finally:
            ours_side.close()
    return theirs, ours


def test_acl_and_sasl_answers_equal_kafka(answers):
    theirs, ours = answers
    assert theirs.keys() == ours.keys()
    differing = {case: (theirs[case], ours[case]) for case in theirs if theirs[case] != ours[case]}
    unlisted = {case: d for case, d in differing.items() if case not in DELIBERATE}
    print(f"{len(theirs)} cases compared, {len(theirs) - len(differing)} equal")
    assert unlisted == {}
    assert sorted(differing) == sorted(DELIBERATE), "a deliberate difference no longer happens"


def test_deliberate_differences_are_in_the_readme():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme[readme.index("## Where kraftwire deliberately differs from Kafka"):]
    section = section[:section.index("\n## ", 1)]
    assert [line for line in DELIBERATE.values() if line not in section] == []
