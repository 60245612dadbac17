"""BrokerRegistration (62): a broker joins (or rejoins) the cluster.

Who: brokers, on the controller listener only. The broker gets a new epoch (the offset of its
RegisterBrokerRecord, as Kafka does) and starts fenced; its heartbeats unfence it once it has caught
up. Checks, in Kafka's order: the cluster id must match (INCONSISTENT_CLUSTER_ID, 104); a different
incarnation of the same id with a live session is a duplicate (DUPLICATE_BROKER_REGISTRATION, 101); and
from v2 (directories, KIP-858) the directory list must be non-empty, free of reserved ids and duplicates,
and not owned by another broker (INVALID_REGISTRATION, 119, with Kafka's messages). A v0-v1
registration has no directories: its replicas are MIGRATING.

Rejoining with a new incarnation means the broker restarted: it is fenced and leaves ISRs and
leaderships before the new registration is written, with a new epoch. With eligible leader replicas on,
a restart whose ``PreviousBrokerEpoch`` (v3+) is not the registered epoch was not a clean shutdown: the
broker also leaves every ELR, as its log may have lost acknowledged records (Kafka's
handleBrokerShutdown). Rejoining with the same
incarnation amends the registration, as Kafka does: the epoch and the fencing and controlled-shutdown
states stay, and the new record replaces the rest, the online directories included (how a simulated
broker brings a restored log directory back).
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import BrokerRegistrationRequest, BrokerRegistrationResponse
from kraftwire.server.controller import cluster_control
from kraftwire.server.wire.transport import RequestContext

from .nodes import ControllerNodeApi

API_KEY = 62


async def on_controller(node: ControllerNodeApi, context: RequestContext,
                        request: BrokerRegistrationRequest) -> BrokerRegistrationResponse:
    response: BrokerRegistrationResponse = await node.write(lambda image: cluster_control.register_broker(
        image, request, context.api_version, node.cluster_id, node.session_alive(request.broker_id)))
    if response.error_code == ErrorCode.NONE:
        node.touch_session(request.broker_id)
    return response
