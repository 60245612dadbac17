"""ListPartitionReassignments (46): the partitions with a reassignment in progress.

Who: admin clients, on any broker listener (forwarded to the controller) or on the controller listener;
answered from the last committed image, with no write. The answer is
``kraftwire.server.controller.replication.reassignment_listing.decide``, where Kafka's behaviour is
written down; the answer to "all" (``Topics`` null) comes encoded once per committed image version from
``reassignment_listing.LISTINGS``, and is returned as the wire's ``Encoded`` body.
"""
from __future__ import annotations

from kraftwire.codec.message import Message
from kraftwire.codec.messages import ListPartitionReassignmentsRequest
from kraftwire.server.apis.nodes import ControllerNodeApi
from kraftwire.server.controller.replication import reassignment_listing
from kraftwire.server.wire.transport import Encoded, RequestContext

API_KEY = 46


def on_controller(node: ControllerNodeApi, context: RequestContext,
                  request: ListPartitionReassignmentsRequest) -> Message | Encoded:
    if request.topics is None:
        return Encoded(reassignment_listing.LISTINGS.all_encoded(node.image, context.api_version))
    return reassignment_listing.decide(node.image, request)
