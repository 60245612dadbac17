"""DeleteTopics (20): delete topics by name (v0+) or by id (v6+).

Who: admin clients, through any broker (forwarded) or on the controller listener. The decision (checks,
records, answer) is ``kraftwire.server.controller.replication.topic_deletion.decide``, where
Kafka's behaviour is written down; this handler runs it as the controller's one writer and answers once
its records commit. A TimeoutMs that has passed before the decision runs (always one of 0 or less) gets
REQUEST_TIMED_OUT and writes nothing, as Kafka's controller (``request_deadlines``).
"""
from __future__ import annotations

import time

from kraftwire.codec.message import Message
from kraftwire.codec.messages import DeleteTopicsRequest
from kraftwire.server.apis.nodes import ControllerNodeApi
from kraftwire.server.controller.replication import topic_deletion
from kraftwire.server.controller.request_deadlines import deadline_of, within_deadline
from kraftwire.server.wire.transport import RequestContext

API_KEY = 20


async def on_controller(node: ControllerNodeApi, context: RequestContext, request: DeleteTopicsRequest) -> Message:
    return await node.write(within_deadline(lambda image: topic_deletion.decide(image, request, node.rng), request,
                                            context.api_version, deadline_of(request.timeout_ms, time.monotonic()),
                                            time.monotonic))
