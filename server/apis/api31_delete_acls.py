"""DeleteAcls (31), v1-3: remove every access control entry matching the filters, written as
RemoveAccessControlEntryRecords.

Who: admin clients, on a broker listener (checked there, then forwarded) or on the controller listener.
Needs ALTER on the cluster: otherwise every filter gets CLUSTER_AUTHORIZATION_FAILED (31); without an
authorizer configured every one gets SECURITY_DISABLED (54). Matching is server/metadata/acls.py's.
"""
from __future__ import annotations

from kraftwire.codec.messages import DeleteAclsResponse
from kraftwire.server.controller.acls import delete_acls

from .authorization import acl_write_refusal

API_KEY = 31


def refusal(node, context, request) -> DeleteAclsResponse | None:
    """The answer when this caller may not delete ACLs here, else None."""
    refused = acl_write_refusal(node, context)
    if refused is None:
        return None
    code, message = refused
    return DeleteAclsResponse(filter_results=[
        DeleteAclsResponse.DeleteAclsFilterResult(error_code=code, error_message=message, matching_acls=[])
        for _ in request.filters])


async def on_broker(broker, context, request):
    refused = refusal(broker, context, request)
    return refused if refused is not None else await broker.forward(request, context.api_version)


async def on_controller(node, context, request):
    refused = refusal(node, context, request)
    return refused if refused is not None else await node.controller.write(lambda image: delete_acls(image, request))
