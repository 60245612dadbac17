"""AlterUserScramCredentials (51), v0: add, replace or remove users' SCRAM credentials, written as
UserScramCredentialRecord / RemoveUserScramCredentialRecord (server/controller/scram.py).

Who: admin clients, on a broker listener (checked there, then forwarded) or on the controller listener.
Needs ALTER on the cluster: otherwise every user named gets CLUSTER_AUTHORIZATION_FAILED (31). A new
credential takes effect for the next login; open connections stay as they are.
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse
from kraftwire.server.controller.scram import alter_user_scram_credentials
from kraftwire.server.metadata.acls import Operation

from kraftwire.server.wire.transport import RequestContext

from .authorization import authorized
from .nodes import BrokerNodeApi, ControllerNodeApi, NodeApi

API_KEY = 51


def refusal(node: NodeApi, context: RequestContext,
            request: AlterUserScramCredentialsRequest) -> AlterUserScramCredentialsResponse | None:
    if authorized(node, context, Operation.ALTER):
        return None
    users = dict.fromkeys([*(c.name for c in request.deletions), *(c.name for c in request.upsertions)])
    Result = AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult
    return AlterUserScramCredentialsResponse(results=[
        Result(user=user, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, error_message="Authorization failed.")
        for user in users])


async def on_broker(broker: BrokerNodeApi, context: RequestContext,
                    request: AlterUserScramCredentialsRequest) -> AlterUserScramCredentialsResponse:
    refused = refusal(broker, context, request)
    return refused if refused is not None else await broker.forward(request, context.api_version)


async def on_controller(node: ControllerNodeApi, context: RequestContext,
                        request: AlterUserScramCredentialsRequest) -> AlterUserScramCredentialsResponse:
    refused = refusal(node, context, request)
    return refused if refused is not None else await node.write(
        lambda image: alter_user_scram_credentials(image, request))
