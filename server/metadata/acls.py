"""Access control entries and the rules that judge a request by them, with Kafka's StandardAuthorizer
semantics. Pure functions of the image's ACLs; brokers and the controller use the same rules.

* ``super.users`` may do anything;
* an entry applies when its resource type matches, its pattern matches the name (LITERAL: equal, or
  the wildcard ``*``; PREFIXED: the name starts with it), its principal is the caller's or ``User:*``
  and its host is the caller's or ``*``;
* a DENY entry for the operation (or ALL) wins over any ALLOW;
* an ALLOW of READ, WRITE, DELETE or ALTER also allows DESCRIBE, and of ALTER_CONFIGS also
  DESCRIBE_CONFIGS (the implied operations); ALL allows everything;
* with no entry at all on the resource, ``allow.everyone.if.no.acl.found`` decides (default false).

Filters (DescribeAcls, DeleteAcls) match as Kafka's ``AclBindingFilter``: ANY matches every value, a null
name, principal or host every one, and the pattern type MATCH every pattern that would apply to the name.
"""
from __future__ import annotations

import uuid
from collections.abc import Container, Iterable
from dataclasses import dataclass
from enum import IntEnum
from typing import NoReturn

from kraftwire.codec import ErrorCode, KafkaError

CLUSTER_NAME = "kafka-cluster"
WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class Operation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class Permission(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


_IMPLIED_BY: dict[int, set[Operation]] = {  # operation asked -> the ALLOWed operations that also grant it
    Operation.DESCRIBE: {Operation.READ, Operation.WRITE, Operation.DELETE, Operation.ALTER},
    Operation.DESCRIBE_CONFIGS: {Operation.ALTER_CONFIGS},
}


@dataclass(frozen=True, slots=True)
class Acl:
    """One access control entry, as AccessControlEntryRecord holds it (without its id)."""
    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission: int

    def applies_to(self, resource_type: int, name: str) -> bool:
        if self.resource_type != resource_type:
            return False
        if self.pattern_type == PatternType.PREFIXED:
            return name.startswith(self.resource_name)
        return self.resource_name in (name, WILDCARD)


@dataclass(frozen=True, slots=True)
class AclFilter:
    resource_type: int
    resource_name: str | None
    pattern_type: int
    principal: str | None
    host: str | None
    operation: int
    permission: int

    def matches(self, acl: Acl) -> bool:
        if self.resource_type != ResourceType.ANY and acl.resource_type != self.resource_type:
            return False
        if self.pattern_type == PatternType.MATCH:
            if self.resource_name is not None and not (
                    acl.applies_to(acl.resource_type, self.resource_name)
                    and acl.pattern_type in (PatternType.LITERAL, PatternType.PREFIXED)):
                return False
        else:
            if self.pattern_type != PatternType.ANY and acl.pattern_type != self.pattern_type:
                return False
            if self.resource_name is not None and acl.resource_name != self.resource_name:
                return False
        return ((self.principal is None or acl.principal == self.principal)
                and (self.host is None or acl.host == self.host)
                and (self.operation == Operation.ANY or acl.operation == self.operation)
                and (self.permission == Permission.ANY or acl.permission == self.permission))


def validate_new_acl(acl: Acl) -> None:
    """KafkaError as Kafka answers a creation it refuses: INVALID_REQUEST for a CLUSTER resource not named
    kafka-cluster or an empty resource name (its brokers' checks), UNKNOWN_SERVER_ERROR without a message
    for an ANY (or MATCH) in the entry (a binding Kafka cannot build), then INVALID_REQUEST for a type it
    does not know (named UNKNOWN, as Kafka reads an unknown code), or a principal without a colon (Kafka's
    AclControlManager.validateNewAcl; an empty type or name is taken, as Kafka takes it)."""
    def bad(why: str) -> NoReturn:
        raise KafkaError(ErrorCode.INVALID_REQUEST, why)

    if acl.resource_type == ResourceType.CLUSTER and acl.resource_name != CLUSTER_NAME:
        bad(f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}")
    if not acl.resource_name:
        bad("Invalid empty resource name")
    if ResourceType.ANY in (acl.resource_type, acl.operation, acl.permission) \
            or acl.pattern_type in (PatternType.ANY, PatternType.MATCH):
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, None)
    if acl.resource_type not in set(ResourceType) - {ResourceType.ANY, ResourceType.UNKNOWN}:
        bad("Invalid resourceType UNKNOWN")
    if acl.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        bad("Invalid patternType UNKNOWN")
    if acl.operation not in set(Operation) - {Operation.ANY, Operation.UNKNOWN}:
        bad("Invalid operation UNKNOWN")
    if acl.permission not in (Permission.ALLOW, Permission.DENY):
        bad("Invalid permissionType UNKNOWN")
    if ":" not in acl.principal:
        bad(f"Could not parse principal from `{acl.principal}` (no colon is present separating the principal "
            f"type from the principal name)")


def validate_filter(acl_filter: AclFilter) -> None:
    """KafkaError(INVALID_REQUEST) for a filter with an UNKNOWN field, as Kafka refuses one."""
    if ResourceType.UNKNOWN == acl_filter.resource_type or PatternType.UNKNOWN == acl_filter.pattern_type \
            or Operation.UNKNOWN == acl_filter.operation or Permission.UNKNOWN == acl_filter.permission:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "the filter has an UNKNOWN resource type, pattern type, "
                                                    "operation or permission")


class Authorizer:
    """Kafka's StandardAuthorizer over the image's ACLs (``image.acls``: id -> Acl)."""

    def __init__(self, super_users: set[str] | frozenset[str] = frozenset(),
                 allow_everyone_if_no_acl_found: bool = False):
        self.super_users = frozenset(super_users)
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found

    def authorize(self, acls: Iterable[Acl], principal: str, host: str, operation: int, resource_type: int,
                  name: str) -> bool:
        if principal in self.super_users:
            return True
        found_any = allowed = False
        for acl in acls:
            if not acl.applies_to(resource_type, name):
                continue
            found_any = True
            if acl.principal not in (principal, WILDCARD_PRINCIPAL) or acl.host not in (host, WILDCARD):
                continue
            if acl.permission == Permission.DENY:
                if acl.operation in (Operation.ALL, operation):
                    return False
            elif (acl.operation in (Operation.ALL, operation)
                  or acl.operation in _IMPLIED_BY.get(operation, ())):
                allowed = True
        return allowed or (not found_any and self.allow_everyone_if_no_acl_found)


def new_acl_id(existing: Container[uuid.UUID]) -> uuid.UUID:
    while (acl_id := uuid.uuid4()) in existing:
        pass
    return acl_id
