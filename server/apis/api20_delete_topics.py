"""DeleteTopics (20): delete topics by name (v0+) or by id (v6+).

Who: admin clients, through any broker (forwarded) or on the controller listener. The decision (checks,
records, answer) is ``kraftwire.server.controller.replication.topic_deletion.decide``, where
Kafka's behaviour is written down; this handler runs it as the controller's one writer and answers once
its records commit.
"""
from __future__ import annotations

from kraftwire.codec.message import Message
from kraftwire.codec.messages import DeleteTopicsRequest
from kraftwire.server.apis.nodes import ControllerNodeApi
from kraftwire.server.controller.replication import topic_deletion
from kraftwire.server.wire.transport import RequestContext

API_KEY = 20


async def on_controller(node: ControllerNodeApi, context: RequestContext, request: DeleteTopicsRequest) -> Message:
    return await node.write(lambda image: topic_deletion.decide(image, request, node.rng))
