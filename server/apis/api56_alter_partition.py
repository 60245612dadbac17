"""AlterPartition (56): a partition leader proposes a new ISR (and leader recovery state).

Who: brokers, on the controller listener only. The decision (checks, records, answer) is
``kraftwire.server.controller.replication.alter_partition.decide``, where Kafka's behaviour is
written down; this handler runs it as the controller's one writer and answers once its records commit.
"""
from __future__ import annotations

from kraftwire.codec.message import Message
from kraftwire.codec.messages import AlterPartitionRequest
from kraftwire.server.apis.nodes import ControllerNodeApi
from kraftwire.server.controller.replication import alter_partition
from kraftwire.server.wire.transport import RequestContext

API_KEY = 56


async def on_controller(node: ControllerNodeApi, context: RequestContext, request: AlterPartitionRequest) -> Message:
    return await node.write(lambda image: alter_partition.decide(image, request, context.api_version))
