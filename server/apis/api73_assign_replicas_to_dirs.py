"""AssignReplicasToDirs (73, KIP-858): a broker reports which of its log directories holds each replica.

Who: brokers, on the controller listener only. The decision (checks, records, answer) is
``kraftwire.server.controller.replication.directories.decide``, where Kafka's behaviour
is written down; this handler runs it as the controller's one writer and answers once its records commit.
"""
from __future__ import annotations

from kraftwire.codec.message import Message
from kraftwire.codec.messages import AssignReplicasToDirsRequest
from kraftwire.server.apis.nodes import ControllerNodeApi
from kraftwire.server.controller.replication import directories
from kraftwire.server.wire.transport import RequestContext

API_KEY = 73


async def on_controller(node: ControllerNodeApi, context: RequestContext,
                        request: AssignReplicasToDirsRequest) -> Message:
    return await node.write(lambda image: directories.decide(image, request))
