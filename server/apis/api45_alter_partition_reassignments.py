"""AlterPartitionReassignments (45): start, change or cancel partition reassignments (KIP-455).

Who: admin clients, on any broker listener (forwarded to the controller) or on the controller listener.
The decision (checks, merged lists, records, answer) is
``kraftwire.server.controller.replication.reassignment.decide``, where Kafka's behaviour is
written down; this handler runs it as the controller's one writer and answers once its records commit.
An empty ``Topics`` array is answered at once with the default response (ErrorMessage "").
"""
from __future__ import annotations

from kraftwire.codec.message import Message
from kraftwire.codec.messages import AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse
from kraftwire.server.apis.nodes import ControllerNodeApi
from kraftwire.server.controller.replication import reassignment
from kraftwire.server.wire.transport import RequestContext

API_KEY = 45


async def on_controller(node: ControllerNodeApi, context: RequestContext,
                        request: AlterPartitionReassignmentsRequest) -> Message:
    if not request.topics:
        return AlterPartitionReassignmentsResponse()
    return await node.write(lambda image: reassignment.decide(image, request))
