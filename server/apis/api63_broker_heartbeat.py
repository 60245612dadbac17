"""BrokerHeartbeat (63): a registered broker keeps its session and asks to be fenced/unfenced.

Who: brokers, on the controller listener only. A broker id or epoch that does not match the current
registration gets STALE_BROKER_EPOCH (77). A fenced broker is unfenced once its
``CurrentMetadataOffset`` has reached its registration (its epoch), unless it asks to stay fenced;
``WantFence`` fences it; ``WantShutDown`` moves its leaderships and ISR memberships away (controlled
shutdown) and answers ``ShouldShutDown``. Every heartbeat renews the session; without one for the
session timeout the controller fences the broker.

Deliberate gap: ``OfflineLogDirs`` (v1+) and ``CordonedLogDirs`` (v2+) are accepted and ignored here.
"""
from __future__ import annotations

from codec import records as rec
from codec.messages import BrokerHeartbeatResponse

from ..brokers import fence_broker, unfence_broker

API_KEY = 63
STALE_BROKER_EPOCH = 77
IN_CONTROLLED_SHUTDOWN_VERSION = 1


def decide(image, request):
    broker = image.brokers.get(request.broker_id)
    if broker is None or broker.epoch != request.broker_epoch:
        return [], BrokerHeartbeatResponse(error_code=STALE_BROKER_EPOCH, is_fenced=True)
    caught_up = request.current_metadata_offset >= broker.epoch
    if request.want_shut_down:
        records = []
        if not broker.in_controlled_shutdown:
            records.append((rec.BrokerRegistrationChangeRecord(broker_id=broker.broker_id, broker_epoch=broker.epoch,
                                                               in_controlled_shutdown=1),
                            IN_CONTROLLED_SHUTDOWN_VERSION))
            records += fence_broker(image, broker.broker_id)[1:]  # the partition moves, not the fence itself
        return records, BrokerHeartbeatResponse(is_caught_up=caught_up, is_fenced=broker.fenced, should_shut_down=True)
    if request.want_fence:
        return fence_broker(image, broker.broker_id), BrokerHeartbeatResponse(is_caught_up=caught_up, is_fenced=True)
    if broker.fenced and caught_up:
        return unfence_broker(image, broker.broker_id), BrokerHeartbeatResponse(is_caught_up=True, is_fenced=False)
    return [], BrokerHeartbeatResponse(is_caught_up=caught_up, is_fenced=broker.fenced)


async def on_controller(node, context, request):
    controller = node.controller
    response = await controller.write(lambda image: decide(image, request))
    if response.error_code == 0:
        controller.touch_session(request.broker_id)
        # the broker's metadata log ends after the last offset it applied (DescribeQuorum's observers)
        controller.log.observe(request.broker_id, request.current_metadata_offset + 1)
    return response
