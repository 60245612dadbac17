"""UpdateFeatures (57): change the finalized level of cluster features (``kafka-features upgrade``,
``downgrade``, ``disable``, each with ``--dry-run``).

Who: admin clients with ALTER on the cluster, through any broker (relayed) or on the controller listener.
The decision (Kafka's checks and words, the FeatureLevelRecords, the answer) is
``kraftwire.server.controller.feature_control.decide``; this handler runs it as the controller's one
writer and answers once its records commit. Kafka's controller gives this request no deadline
(its TimeoutMs is not enforced), and neither does this one.
"""
from __future__ import annotations

from kraftwire.codec.message import Message
from kraftwire.codec.messages import UpdateFeaturesRequest
from kraftwire.server.apis.nodes import ControllerNodeApi
from kraftwire.server.controller import feature_control
from kraftwire.server.wire.transport import RequestContext

API_KEY = 57


async def on_controller(node: ControllerNodeApi, context: RequestContext, request: UpdateFeaturesRequest) -> Message:
    static_min_insync = node.startup_configs.get("min.insync.replicas")
    return await node.write(lambda image: feature_control.decide(image, request, context.api_version, node.node_id,
                                                                 static_min_insync))
