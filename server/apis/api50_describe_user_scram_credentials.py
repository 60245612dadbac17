"""DescribeUserScramCredentials (50), v0: the SCRAM mechanisms and iteration counts of users, from the
committed image (never the keys).

Who: admin clients, on any listener. Needs DESCRIBE on the cluster: CLUSTER_AUTHORIZATION_FAILED (31) at
the top level otherwise. Per-user errors: server/controller/scram.py.
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse
from kraftwire.server.controller.scram import describe_user_scram_credentials
from kraftwire.server.metadata.acls import Operation

from kraftwire.server.wire.transport import RequestContext

from .authorization import authorized
from .nodes import NodeApi

API_KEY = 50


def describe(node: NodeApi, context: RequestContext,
             request: DescribeUserScramCredentialsRequest) -> DescribeUserScramCredentialsResponse:
    if not authorized(node, context, Operation.DESCRIBE):
        return DescribeUserScramCredentialsResponse(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                                                    error_message="Authorization failed.")
    return describe_user_scram_credentials(node.image, request)


on_broker = on_controller = describe
