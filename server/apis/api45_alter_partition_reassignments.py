"""AlterPartitionReassignments (45): start, change or cancel partition reassignments (KIP-455).

Who: admin clients, on any broker listener (forwarded to the controller) or on the controller listener.
The decision (checks, merged lists, records, answer) is
``kraftwire.server.controller.replication.reassignment.decide``, where Kafka's behaviour is
written down; this handler runs it as the controller's one writer and answers once its records commit.
An empty ``Topics`` array is answered at once with the default response (ErrorMessage "").
A TimeoutMs that has passed before the decision runs (always one of 0 or less) gets REQUEST_TIMED_OUT
and writes nothing, as Kafka's controller (``request_deadlines``).
"""
from __future__ import annotations

import time

from kraftwire.codec.message import Message
from kraftwire.codec.messages import AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse
from kraftwire.server.apis.nodes import ControllerNodeApi
from kraftwire.server.controller.replication import reassignment
from kraftwire.server.controller.request_deadlines import deadline_of, within_deadline
from kraftwire.server.wire.transport import RequestContext

API_KEY = 45


async def on_controller(node: ControllerNodeApi, context: RequestContext,
                        request: AlterPartitionReassignmentsRequest) -> Message:
    if not request.topics:
        return AlterPartitionReassignmentsResponse()
    return await node.write(within_deadline(lambda image: reassignment.decide(image, request), request,
                                            context.api_version, deadline_of(request.timeout_ms, time.monotonic()),
                                            time.monotonic))
