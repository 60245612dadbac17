"""DeleteAcls (31), v1-3: remove every access control entry matching the filters, written as
RemoveAccessControlEntryRecords.

Who: admin clients, on a broker listener (checked there, then forwarded) or on the controller listener.
Needs ALTER on the cluster: otherwise every filter gets CLUSTER_AUTHORIZATION_FAILED (31); without an
authorizer configured every one gets SECURITY_DISABLED (54). Matching is server/metadata/acls.py's.
"""
from __future__ import annotations

from kraftwire.codec.messages import DeleteAclsRequest, DeleteAclsResponse
from kraftwire.server.controller.acls import delete_acls

from kraftwire.server.wire.transport import RequestContext

from .authorization import acl_write_refusal
from .nodes import BrokerNodeApi, ControllerNodeApi, NodeApi

API_KEY = 31


def refusal(node: NodeApi, context: RequestContext, request: DeleteAclsRequest) -> DeleteAclsResponse | None:
    """The answer when this caller may not delete ACLs here, else None."""
    refused = acl_write_refusal(node, context)
    if refused is None:
        return None
    code, message = refused
    return DeleteAclsResponse(filter_results=[
        DeleteAclsResponse.DeleteAclsFilterResult(error_code=code, error_message=message, matching_acls=[])
        for _ in request.filters])


async def on_broker(broker: BrokerNodeApi, context: RequestContext, request: DeleteAclsRequest) -> DeleteAclsResponse:
    refused = refusal(broker, context, request)
    return refused if refused is not None else await broker.forward(request, context.api_version)


async def on_controller(node: ControllerNodeApi, context: RequestContext,
                        request: DeleteAclsRequest) -> DeleteAclsResponse:
    refused = refusal(node, context, request)
    return refused if refused is not None else await node.write(lambda image: delete_acls(image, request))
