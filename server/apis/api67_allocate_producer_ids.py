"""AllocateProducerIds (67, KIP-730): a broker asks for a block of producer ids to hand to its idempotent
producers (InitProducerId, api22_init_producer_id.py).

Who: brokers, on the controller listener only, with CLUSTER_ACTION on the cluster (as Kafka's
controller asks). The decision is ``kraftwire.server.controller.producer_ids.decide``: the block and the
ProducerIdsRecord that takes it; the answer comes once that record commits, so a block handed out is
in the metadata log before any producer holds one of its ids.
"""
from __future__ import annotations

from kraftwire.codec.message import Message
from kraftwire.codec.messages import AllocateProducerIdsRequest
from kraftwire.server.apis.nodes import ControllerNodeApi
from kraftwire.server.controller import producer_ids
from kraftwire.server.wire.transport import RequestContext

API_KEY = 67


async def on_controller(node: ControllerNodeApi, context: RequestContext,
                        request: AllocateProducerIdsRequest) -> Message:
    return await node.write(lambda image: producer_ids.decide(image, request))
