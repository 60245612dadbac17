"""DescribeAcls (29), v1-3: the access control entries matching one filter, grouped by resource pattern.

Who: admin clients, on any listener; answered from the committed image, with no write. Needs DESCRIBE on
the cluster: CLUSTER_AUTHORIZATION_FAILED (31) at the top level otherwise. Without an authorizer
configured the answer is SECURITY_DISABLED (54), as Kafka's. A filter with an UNKNOWN field gets
INVALID_REQUEST (42). Patterns are listed in the order their first entry was created.
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.messages import DescribeAclsResponse
from kraftwire.server.controller.acls import acl_filter
from kraftwire.server.metadata.acls import Operation, validate_filter

from .authorization import NO_AUTHORIZER, authorized

API_KEY = 29


def describe(node, context, request) -> DescribeAclsResponse:
    if node.authorizer is None:
        return DescribeAclsResponse(error_code=ErrorCode.SECURITY_DISABLED, error_message=NO_AUTHORIZER)
    if not authorized(node, context, Operation.DESCRIBE):
        return DescribeAclsResponse(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                                    error_message="Authorization failed.")
    wanted = acl_filter(request)
    try:
        validate_filter(wanted)
    except KafkaError as refused:
        return DescribeAclsResponse(error_code=refused.code, error_message=refused.message)
    resources: dict[tuple, list] = {}
    for acl in node.image.acls.values():
        if wanted.matches(acl):
            resources.setdefault((acl.resource_type, acl.resource_name, acl.pattern_type), []).append(
                DescribeAclsResponse.AclDescription(principal=acl.principal, host=acl.host, operation=acl.operation,
                                                    permission_type=acl.permission))
    return DescribeAclsResponse(error_code=ErrorCode.NONE, error_message=None, resources=[
        DescribeAclsResponse.DescribeAclsResource(resource_type=t, resource_name=n, pattern_type=p, acls=acls)
        for (t, n, p), acls in resources.items()])


on_broker = on_controller = describe
