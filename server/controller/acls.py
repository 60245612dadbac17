"""The ACL control manager (Kafka's AclControlManager): it owns the cluster's access control entries.
It decides CreateAcls and DeleteAcls (the AccessControlEntryRecords to add and the
RemoveAccessControlEntryRecords to write, judged against the working image) and answers DescribeAcls
from an image. Pure functions of an image and a request; who may ask is server/apis/authorization.py's.

Each creation is judged on its own (Kafka's AclControlManager): an invalid entry gets INVALID_REQUEST
(42) in its own result and the others go on; an entry identical to one already stored succeeds without
a new record. A DeleteAcls filter removes every stored entry it matches (each once, even when several
filters match it, and listed under each); a filter with an UNKNOWN field gets INVALID_REQUEST.
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec import records as rec
from kraftwire.codec.message import Message
from kraftwire.codec.messages import (CreateAclsRequest, CreateAclsResponse, DeleteAclsRequest, DeleteAclsResponse,
                                      DescribeAclsRequest, DescribeAclsResponse)
from kraftwire.server.metadata.acls import Acl, AclFilter, new_acl_id, validate_filter, validate_new_acl
from kraftwire.server.metadata.image import MetadataImage

from .result import ControllerResult


def create_acls(image: MetadataImage, request: CreateAclsRequest) -> ControllerResult:
    records: list[Message] = []
    results = []
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
        results.append(CreateAclsResponse.AclCreationResult(error_code=ErrorCode.NONE, error_message=""))  # Kafka's
    return ControllerResult(records, CreateAclsResponse(results=results))


def acl_filter(f: DescribeAclsRequest | DeleteAclsRequest.DeleteAclsFilter) -> AclFilter:
    """An AclFilter from a DescribeAcls request or a DeleteAcls filter (the same field names)."""
    return AclFilter(f.resource_type_filter, f.resource_name_filter, f.pattern_type_filter, f.principal_filter,
                     f.host_filter, f.operation, f.permission_type)


def delete_acls(image: MetadataImage, request: DeleteAclsRequest) -> ControllerResult:
    records: list[Message] = []
    results = []
    removed: set[object] = set()
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
            if not acl_filter_.matches(acl):
                continue
            if acl_id not in removed:  # listed under every filter that matches it, removed once (Kafka's)
                removed.add(acl_id)
                records.append(rec.RemoveAccessControlEntryRecord(id=acl_id))
            matching.append(DeleteAclsResponse.DeleteAclsMatchingAcl(
                error_code=ErrorCode.NONE, error_message=None, resource_type=acl.resource_type,
                resource_name=acl.resource_name,
                pattern_type=acl.pattern_type, principal=acl.principal, host=acl.host, operation=acl.operation,
                permission_type=acl.permission))
        results.append(DeleteAclsResponse.DeleteAclsFilterResult(error_code=ErrorCode.NONE, error_message=None,
                                                                 matching_acls=matching))
    return ControllerResult(records, DeleteAclsResponse(filter_results=results))


def describe_acls(image: MetadataImage, request: DescribeAclsRequest) -> DescribeAclsResponse:
    """The entries matching the request's filter, grouped by resource pattern in the order each pattern's
    first entry was created; INVALID_REQUEST for a filter with an UNKNOWN field."""
    wanted = acl_filter(request)
    try:
        validate_filter(wanted)
    except KafkaError as refused:
        return DescribeAclsResponse(error_code=refused.code, error_message=refused.message)
    resources: dict[tuple[int, str, int], list[DescribeAclsResponse.AclDescription]] = {}
    for acl in image.acls.values():
        if wanted.matches(acl):
            resources.setdefault((acl.resource_type, acl.resource_name, acl.pattern_type), []).append(
                DescribeAclsResponse.AclDescription(principal=acl.principal, host=acl.host, operation=acl.operation,
                                                    permission_type=acl.permission))
    return DescribeAclsResponse(error_code=ErrorCode.NONE, error_message="", resources=[  # "" as Kafka's
        DescribeAclsResponse.DescribeAclsResource(resource_type=t, resource_name=n, pattern_type=p, acls=acls)
        for (t, n, p), acls in resources.items()])
