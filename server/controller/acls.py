"""Decisions for CreateAcls and DeleteAcls: the AccessControlEntryRecords to add and the
RemoveAccessControlEntryRecords to write, judged against the working image.

Each creation is judged on its own (Kafka's AclControlManager): an invalid entry gets INVALID_REQUEST
(42) in its own result and the others go on; an entry identical to one already stored succeeds without
a new record. A DeleteAcls filter removes every stored entry it matches (each once, even when several
filters match it); a filter with an UNKNOWN field gets INVALID_REQUEST.
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec import records as rec
from kraftwire.codec.messages import CreateAclsResponse, DeleteAclsResponse
from kraftwire.server.metadata.acls import Acl, AclFilter, new_acl_id, validate_filter, validate_new_acl

from .result import ControllerResult


def create_acls(image, request) -> ControllerResult:
    records, results = [], []
    stored = set(image.acls.values())
    taken = set(image.acls)
    for c in request.creations:
        acl = Acl(c.resource_type, c.resource_name, c.resource_pattern_type, c.principal, c.host, c.operation,
                  c.permission_type)
        try:
            validate_new_acl(acl)
        except KafkaError as refused:
            results.append(CreateAclsResponse.AclCreationResult(error_code=refused.code, error_message=refused.message))
            continue
        if acl not in stored:
            acl_id = new_acl_id(taken)
            taken.add(acl_id)
            stored.add(acl)
            records.append(rec.AccessControlEntryRecord(
                id=acl_id, resource_type=acl.resource_type, resource_name=acl.resource_name,
                pattern_type=acl.pattern_type, principal=acl.principal, host=acl.host, operation=acl.operation,
                permission_type=acl.permission))
        results.append(CreateAclsResponse.AclCreationResult(error_code=ErrorCode.NONE, error_message=None))
    return ControllerResult(records, CreateAclsResponse(results=results))


def acl_filter(f) -> AclFilter:
    """An AclFilter from a DescribeAcls request or a DeleteAcls filter (the same field names)."""
    return AclFilter(f.resource_type_filter, f.resource_name_filter, f.pattern_type_filter, f.principal_filter,
                     f.host_filter, f.operation, f.permission_type)


def delete_acls(image, request) -> ControllerResult:
    records, results = [], []
    removed = set()
    for f in request.filters:
        acl_filter_ = acl_filter(f)
        try:
            validate_filter(acl_filter_)
        except KafkaError as refused:
            results.append(DeleteAclsResponse.DeleteAclsFilterResult(
                error_code=refused.code, error_message=refused.message, matching_acls=[]))
            continue
        matching = []
        for acl_id, acl in image.acls.items():
            if acl_id in removed or not acl_filter_.matches(acl):
                continue
            removed.add(acl_id)
            records.append(rec.RemoveAccessControlEntryRecord(id=acl_id))
            matching.append(DeleteAclsResponse.DeleteAclsMatchingAcl(
                error_code=ErrorCode.NONE, error_message=None, resource_type=acl.resource_type, resource_name=acl.resource_name,
                pattern_type=acl.pattern_type, principal=acl.principal, host=acl.host, operation=acl.operation,
                permission_type=acl.permission))
        results.append(DeleteAclsResponse.DeleteAclsFilterResult(error_code=ErrorCode.NONE, error_message=None,
                                                                 matching_acls=matching))
    return ControllerResult(records, DeleteAclsResponse(filter_results=results))
