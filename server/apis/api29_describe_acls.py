"""DescribeAcls (29), v1-3: the access control entries matching one filter, grouped by resource pattern.

Who: admin clients, on any listener; answered from the committed image, with no write. Needs DESCRIBE on
the cluster: CLUSTER_AUTHORIZATION_FAILED (31) at the top level otherwise. Without an authorizer
configured the answer is SECURITY_DISABLED (54), as Kafka's. A filter with an UNKNOWN field gets
INVALID_REQUEST (42). Patterns are listed in the order their first entry was created.
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import DescribeAclsRequest, DescribeAclsResponse
from kraftwire.server.controller.acls import describe_acls
from kraftwire.server.metadata.acls import Operation
from kraftwire.server.wire.transport import RequestContext

from .authorization import NO_AUTHORIZER, authorized, needs_permission
from .nodes import NodeApi

API_KEY = 29


def describe(node: NodeApi, context: RequestContext, request: DescribeAclsRequest) -> DescribeAclsResponse:
    if node.authorizer is None:
        return DescribeAclsResponse(error_code=ErrorCode.SECURITY_DISABLED, error_message=NO_AUTHORIZER)
    if not authorized(node, context, Operation.DESCRIBE):
        return DescribeAclsResponse(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                                    error_message=needs_permission(context, Operation.DESCRIBE))
    return describe_acls(node.image, request)


on_broker = on_controller = describe
