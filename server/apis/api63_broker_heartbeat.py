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

from kraftwire.codec import records as rec
from kraftwire.codec.messages import BrokerHeartbeatResponse
from kraftwire.codec import ErrorCode
from kraftwire.codec.constants import ENTER_CONTROLLED_SHUTDOWN

from kraftwire.server.controller.broker_lifecycle import fence_broker, move_off_broker, unfence_broker
from kraftwire.server.controller.result import ControllerResult
from kraftwire.server.metadata.record_versions import CORDONED_LOG_DIRS_LEVEL

API_KEY = 63


def decide(image, request):
    broker = image.brokers.get(request.broker_id)
    if broker is None or broker.epoch != request.broker_epoch:
        return ControllerResult([], BrokerHeartbeatResponse(error_code=ErrorCode.STALE_BROKER_EPOCH, is_fenced=True))
    records, response = _lifecycle(image, broker, request)
    records += offline_directories(image, broker, request.offline_log_dirs)
    return ControllerResult(records + cordoned_directories(image, broker, request.cordoned_log_dirs), response)


def cordoned_directories(image, broker, cordoned) -> list:
    """Kafka's handleDirectoriesCordoned, at the levels that have cordoned directories."""
    if cordoned is None or image.metadata_version_level < CORDONED_LOG_DIRS_LEVEL:
        return []
    if broker.cordoned_log_dirs is not None and set(broker.cordoned_log_dirs) == set(cordoned):
        return []
    return [rec.BrokerRegistrationChangeRecord(broker_id=broker.broker_id, broker_epoch=broker.epoch,
                                               cordoned_log_dirs=list(cordoned))]


def offline_directories(image, broker, offline) -> list:
    """Kafka's handleDirectoriesOffline: records for the broker's online directories in ``offline``."""
    newly_offline = [d for d in broker.log_dirs if d in offline]
    if not newly_offline:
        return []
    records = []
    broker_id = broker.broker_id
    for directory in newly_offline:
        hosted_there = [(topic.topic_id, index) for topic, index, state in image.partitions()
                        if broker_id in state.replicas and state.directory_of(broker_id) == directory]
        records += move_off_broker(image, broker_id, hosted_there)
    remaining = [d for d in broker.log_dirs if d not in offline]
    records.append(rec.BrokerRegistrationChangeRecord(broker_id=broker_id, broker_epoch=broker.epoch,
                                                      log_dirs=remaining))
    return records


def _lifecycle(image, broker, request) -> ControllerResult:
    """Fencing, unfencing and controlled shutdown."""
    caught_up = request.current_metadata_offset >= broker.epoch
    if request.want_shut_down:
        records = []
        if not broker.in_controlled_shutdown:
            records.append(rec.BrokerRegistrationChangeRecord(broker_id=broker.broker_id, broker_epoch=broker.epoch,
                                                              in_controlled_shutdown=ENTER_CONTROLLED_SHUTDOWN))
            records += fence_broker(image, broker.broker_id)[1:]  # the partition moves, not the fence itself
        return ControllerResult(records, BrokerHeartbeatResponse(is_caught_up=caught_up, is_fenced=broker.fenced,
                                                                 should_shut_down=True))
    if request.want_fence:
        return ControllerResult(fence_broker(image, broker.broker_id),
                                BrokerHeartbeatResponse(is_caught_up=caught_up, is_fenced=True))
    if broker.fenced and caught_up:
        return ControllerResult(unfence_broker(image, broker.broker_id),
                                BrokerHeartbeatResponse(is_caught_up=True, is_fenced=False))
    return ControllerResult([], BrokerHeartbeatResponse(is_caught_up=caught_up, is_fenced=broker.fenced))


async def on_controller(node, context, request):
    controller = node.controller
    response = await controller.write(lambda image: decide(image, request))
    if response.error_code == ErrorCode.NONE:
        controller.touch_session(request.broker_id)
    return response
