"""CreateAcls (30), v1-3: add access control entries, written as AccessControlEntryRecords.

Who: admin clients, on a broker listener (checked there, then forwarded) or on the controller listener.
Needs ALTER on the cluster: otherwise every creation gets CLUSTER_AUTHORIZATION_FAILED (31); without
an authorizer configured every one gets SECURITY_DISABLED (54). Each creation is judged on its own
(server/controller/acls.py).
"""
from __future__ import annotations

from kraftwire.codec.messages import CreateAclsRequest, CreateAclsResponse
from kraftwire.server.controller.acls import create_acls

from kraftwire.server.wire.transport import RequestContext

from .authorization import acl_write_refusal
from .nodes import BrokerNodeApi, ControllerNodeApi, NodeApi

API_KEY = 30


def refusal(node: NodeApi, context: RequestContext, request: CreateAclsRequest) -> CreateAclsResponse | None:
    """The answer when this caller may not create ACLs here, else None."""
    refused = acl_write_refusal(node, context)
    if refused is None:
        return None
    code, message = refused
    return CreateAclsResponse(results=[CreateAclsResponse.AclCreationResult(error_code=code, error_message=message)
                                       for _ in request.creations])


async def on_broker(broker: BrokerNodeApi, context: RequestContext, request: CreateAclsRequest) -> CreateAclsResponse:
    refused = refusal(broker, context, request)
    return refused if refused is not None else await broker.forward(request, context.api_version)


async def on_controller(node: ControllerNodeApi, context: RequestContext,
                        request: CreateAclsRequest) -> CreateAclsResponse:
    refused = refusal(node, context, request)
    return refused if refused is not None else await node.write(lambda image: create_acls(image, request))
