"""BrokerHeartbeat (63): a registered broker keeps its session and asks to be fenced/unfenced.

Who: brokers, on the controller listener only. A broker id or epoch that does not match the current
registration gets STALE_BROKER_EPOCH (77). A fenced broker is unfenced once its
``CurrentMetadataOffset`` has reached its registration (its epoch), unless it asks to stay fenced;
``WantFence`` fences it; ``WantShutDown`` moves its leaderships and ISR memberships away (controlled
shutdown) and answers ``ShouldShutDown``. Every heartbeat renews the session; without one for the
session timeout the controller fences the broker.

``OfflineLogDirs`` (v1+, KIP-858), after the fencing decisions: the listed directories that are among
the broker's registered online ones go offline. Every partition whose replica on this broker lives in
one of them loses the broker from its ISR and leadership (a new leader is elected, unclean where the
topic allows it), and a BrokerRegistrationChangeRecord v2 lists the remaining online directories. Ids the
broker does not own, or already offline, are ignored; the broker stays unfenced.

``CordonedLogDirs`` (v2+, KIP-1066), from metadata.version 4.3-IV0: when given (null means the broker
has not caught up yet) and different, as a set, from the registration's (or the registration has none
yet), a BrokerRegistrationChangeRecord v3 records it. Placement and manual assignments then avoid a
broker whose directories are all cordoned (server/controller/topics.py).
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import BrokerHeartbeatRequest, BrokerHeartbeatResponse
from kraftwire.server.controller import cluster_control
from kraftwire.server.wire.transport import RequestContext

from .nodes import ControllerNodeApi

API_KEY = 63


async def on_controller(node: ControllerNodeApi, context: RequestContext,
                        request: BrokerHeartbeatRequest) -> BrokerHeartbeatResponse:
    response: BrokerHeartbeatResponse = await node.write(lambda image: cluster_control.broker_heartbeat(image, request))
    if response.error_code == ErrorCode.NONE:
        node.touch_session(request.broker_id)
    return response
