"""ACL matching (server/metadata/acls.py) over every pattern type, host and operation, table by table:
the rules Kafka 4.3.1's StandardAuthorizer applies (tests/kafka_oracle/test_acl_differential.py checks
the same bindings against the real Kafka end to end; these check the pure module alone)."""
from __future__ import annotations

import pytest

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.server.metadata.acls import (Acl, AclFilter, Authorizer, Operation, PatternType, Permission,
                                            ResourceType, validate_new_acl)

T, C = ResourceType.TOPIC, ResourceType.CLUSTER
LIT, PRE, ANY_P, MATCH = PatternType.LITERAL, PatternType.PREFIXED, PatternType.ANY, PatternType.MATCH
Op, A, D = Operation, Permission.ALLOW, Permission.DENY
LOCAL, ELSEWHERE = "127.0.0.1", "10.9.8.7"

ACLS = [
    Acl(T, "orders", LIT, "User:alice", "*", Op.READ, A),
    Acl(T, "orders-", PRE, "User:alice", "*", Op.WRITE, A),
    Acl(T, "orders-eu", LIT, "User:alice", "*", Op.WRITE, D),
    Acl(T, "*", LIT, "User:bob", "*", Op.ALL, A),
    Acl(T, "pay", PRE, "User:bob", "*", Op.DELETE, D),
    Acl(T, "payments", LIT, "User:*", "*", Op.DESCRIBE, A),
    Acl(T, "orders", LIT, "User:carol", LOCAL, Op.ALTER_CONFIGS, A),
    Acl(T, "pay", PRE, "User:carol", ELSEWHERE, Op.ALL, A),
    Acl(T, "orders", LIT, "User:heidi", "*", Op.READ, A),
    Acl(T, "orders", LIT, "User:heidi", "*", Op.DESCRIBE, D),
    Acl(T, "*", PRE, "User:ivan", "*", Op.ALL, A),
    Acl(C, "kafka-cluster", LIT, "User:grace", "*", Op.ALL, A),
    Acl(C, "kafka-cluster", LIT, "User:grace", "*", Op.ALTER, D),
    Acl(T, "logs", LIT, "User:frank", "*", Op.DELETE, A),
    Acl(T, "logs", LIT, "User:dave", "*", Op.ALTER, A),
]

# (principal, host, operation, topic or None for the cluster, allowed)
DECISIONS = [
    ("User:alice", LOCAL, Op.READ, "orders", True),
    ("User:alice", LOCAL, Op.DESCRIBE, "orders", True),  # READ implies DESCRIBE
    ("User:alice", LOCAL, Op.WRITE, "orders", False),  # LITERAL: not a prefix
    ("User:alice", LOCAL, Op.WRITE, "orders-us", True),  # PREFIXED
    ("User:alice", LOCAL, Op.DESCRIBE, "orders-us", True),  # WRITE implies DESCRIBE
    ("User:alice", LOCAL, Op.WRITE, "orders-eu", False),  # DENY over the prefix's ALLOW
    ("User:alice", LOCAL, Op.DESCRIBE, "orders-eu", True),  # a DENY of WRITE does not deny DESCRIBE
    ("User:alice", LOCAL, Op.READ, "orders-us", False),
    ("User:bob", LOCAL, Op.ALTER_CONFIGS, "anything", True),  # "*" resource, ALL
    ("User:bob", LOCAL, Op.DELETE, "payments", False),  # DENY by prefix over ALL
    ("User:bob", LOCAL, Op.DESCRIBE, "payments", True),
    ("User:mallory", LOCAL, Op.DESCRIBE, "payments", True),  # User:*
    ("User:mallory", LOCAL, Op.READ, "payments", False),  # DESCRIBE implies nothing
    ("User:mallory", LOCAL, Op.DESCRIBE, "orders", False),
    ("User:carol", LOCAL, Op.DESCRIBE_CONFIGS, "orders", True),  # ALTER_CONFIGS implies DESCRIBE_CONFIGS
    ("User:carol", LOCAL, Op.DESCRIBE, "orders", False),  # ... and not DESCRIBE
    ("User:carol", ELSEWHERE, Op.ALTER_CONFIGS, "orders", False),  # another host
    ("User:carol", LOCAL, Op.READ, "payments", False),  # ALL, but from another host only
    ("User:carol", ELSEWHERE, Op.READ, "payments", True),
    ("User:heidi", LOCAL, Op.READ, "orders", True),
    ("User:heidi", LOCAL, Op.DESCRIBE, "orders", False),  # DENY of DESCRIBE over READ's implication
    ("User:ivan", LOCAL, Op.READ, "orders", False),  # PREFIXED "*" is a prefix, not the wildcard
    ("User:ivan", LOCAL, Op.READ, "*x", True),
    ("User:grace", LOCAL, Op.DESCRIBE, None, True),
    ("User:grace", LOCAL, Op.ALTER, None, False),
    ("User:grace", LOCAL, Op.READ, "orders", False),  # cluster entries say nothing of topics
    ("User:admin", LOCAL, Op.ALTER, None, True),  # super user
    ("User:frank", LOCAL, Op.DESCRIBE, "logs", True),  # DELETE implies DESCRIBE
    ("User:dave", LOCAL, Op.DESCRIBE, "logs", True),  # ALTER implies DESCRIBE
    ("User:dave", LOCAL, Op.DESCRIBE_CONFIGS, "logs", False),  # ... and not DESCRIBE_CONFIGS
]


@pytest.mark.parametrize("principal,host,operation,topic,allowed", DECISIONS)
def test_authorize(principal, host, operation, topic, allowed):
    authorizer = Authorizer({"User:admin"})
    resource = (T, topic) if topic is not None else (C, "kafka-cluster")
    assert authorizer.authorize(ACLS, principal, host, operation, *resource) is allowed


def test_no_entry_on_a_resource_follows_allow_everyone():
    """Only a resource no entry applies to at all is open to everyone; the "*" topic entry applies to
    every topic, so topics stay closed to those it does not name."""
    authorizer = Authorizer(set(), allow_everyone_if_no_acl_found=True)
    assert authorizer.authorize(ACLS, "User:x", LOCAL, Op.READ, ResourceType.GROUP, "free")
    assert not authorizer.authorize(ACLS, "User:x", LOCAL, Op.READ, T, "free")
    assert not Authorizer(set()).authorize(ACLS, "User:x", LOCAL, Op.READ, ResourceType.GROUP, "free")


def matching(f: AclFilter) -> list[int]:
    return [i for i, acl in enumerate(ACLS) if f.matches(acl)]


@pytest.mark.parametrize("name,pattern,expected", [
    ("orders", LIT, [0, 6, 8, 9]),
    ("orders", ANY_P, [0, 6, 8, 9]),  # ANY with a name: that exact name, any pattern type
    ("orders", MATCH, [0, 3, 6, 8, 9]),  # MATCH: the entries that apply to the name, "*" included
    ("orders-eu", MATCH, [1, 2, 3]),
    ("orders-", PRE, [1]),
    ("orders-", ANY_P, [1]),
    ("*", LIT, [3]),
    ("*", MATCH, [3, 10]),
    ("*", PRE, [10]),
    (None, MATCH, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 14]),
    (None, PRE, [1, 4, 7, 10]),
])
def test_filter_patterns(name, pattern, expected):
    assert matching(AclFilter(T, name, pattern, None, None, Op.ANY, Permission.ANY)) == expected


def test_filter_principal_host_operation_permission():
    assert matching(AclFilter(ResourceType.ANY, None, ANY_P, "User:*", None, Op.ANY, Permission.ANY)) == [5]
    assert matching(AclFilter(ResourceType.ANY, None, ANY_P, None, LOCAL, Op.ANY, Permission.ANY)) == [6]
    assert matching(AclFilter(ResourceType.ANY, None, ANY_P, None, None, Op.ALL, Permission.ANY)) == [3, 7, 10, 11]
    assert matching(AclFilter(ResourceType.ANY, None, ANY_P, None, None, Op.ANY, D)) == [2, 4, 9, 12]


@pytest.mark.parametrize("acl,code,message", [
    (Acl(C, "other", LIT, "User:z", "*", Op.ALTER, A), 42,
     "The only valid name for the CLUSTER resource is kafka-cluster"),
    (Acl(T, "", LIT, "User:z", "*", Op.READ, A), 42, "Invalid empty resource name"),
    (Acl(ResourceType.ANY, "x", LIT, "User:z", "*", Op.READ, A), -1, None),
    (Acl(T, "x", MATCH, "User:z", "*", Op.READ, A), -1, None),
    (Acl(T, "x", LIT, "User:z", "*", Op.ANY, A), -1, None),
    (Acl(99, "x", LIT, "User:z", "*", Op.READ, A), 42, "Invalid resourceType UNKNOWN"),
    (Acl(T, "x", 99, "User:z", "*", Op.READ, A), 42, "Invalid patternType UNKNOWN"),
    (Acl(T, "x", LIT, "User:z", "*", 99, A), 42, "Invalid operation UNKNOWN"),
    (Acl(T, "x", LIT, "zed", "*", Op.READ, A), 42,
     "Could not parse principal from `zed` (no colon is present separating the principal type from the principal "
     "name)"),
    (Acl(T, "x", LIT, "User:", "*", Op.READ, A), None, None),  # taken, as Kafka takes it
])
def test_new_acl_checks(acl, code, message):
    if code is None:
        validate_new_acl(acl)
        return
    with pytest.raises(KafkaError) as refused:
        validate_new_acl(acl)
    assert (refused.value.code, refused.value.message) == (ErrorCode(code), message)
