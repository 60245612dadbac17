"""CreateTopics (19): create topics, placed by the controller or as the client assigns them.

Who: admin clients, through any broker (forwarded) or on the controller listener. The decision (checks,
records, answer) is ``kraftwire.server.controller.replication.topic_creation.decide``, where
Kafka's behaviour is written down; this handler runs it as the controller's one writer and answers once
its records commit.
"""
from __future__ import annotations

from kraftwire.codec.message import Message
from kraftwire.codec.messages import CreateTopicsRequest
from kraftwire.server.apis.nodes import ControllerNodeApi
from kraftwire.server.controller.replication import topic_creation
from kraftwire.server.wire.transport import RequestContext

API_KEY = 19


async def on_controller(node: ControllerNodeApi, context: RequestContext, request: CreateTopicsRequest) -> Message:
    return await node.write(lambda image: topic_creation.decide(image, request, node.rng,
                                                                       startup=node.startup_configs))
