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

from kraftwire.codec import records as rec
from kraftwire.codec.messages import BrokerRegistrationResponse
from kraftwire.codec import ErrorCode
from kraftwire.codec.constants import is_reserved_directory

from kraftwire.server.controller.broker_lifecycle import restart_records
from kraftwire.server.controller.result import ControllerResult

API_KEY = 62


class RegistrationError(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def _check_directories(image, request) -> None:
    dirs = request.log_dirs
    if not dirs:
        raise RegistrationError(ErrorCode.INVALID_REGISTRATION, "No directories specified in request")
    if any(is_reserved_directory(d) for d in dirs):
        raise RegistrationError(ErrorCode.INVALID_REGISTRATION, "Reserved directory ID in request")
    if len(set(dirs)) != len(dirs):
        raise RegistrationError(ErrorCode.INVALID_REGISTRATION, "Duplicate directory ID in request")
    for other in image.brokers.values():
        if other.broker_id != request.broker_id:
            for d in dirs:
                if d in other.log_dirs:
                    raise RegistrationError(
                        ErrorCode.INVALID_REGISTRATION, f"Broker {other.broker_id} is already registered with directory {d}")


def decide(image, request, version: int, cluster_id: str, session_alive: bool):
    """The records and response of a registration; ``session_alive``: the id's current session is live."""
    try:
        if request.cluster_id != cluster_id:
            raise RegistrationError(ErrorCode.INCONSISTENT_CLUSTER_ID,
                                    f"Expected cluster ID {cluster_id}, but got cluster ID {request.cluster_id}")
        existing = image.brokers.get(request.broker_id)
        if existing is not None and existing.incarnation_id != request.incarnation_id and session_alive:
            raise RegistrationError(
                ErrorCode.DUPLICATE_BROKER_REGISTRATION,
                f"Another broker is registered with that broker id, and its session is still active.")
        if version >= 2:
            _check_directories(image, request)
    except RegistrationError as exc:
        return ControllerResult([], BrokerRegistrationResponse(error_code=exc.code))
    amending = existing is not None and existing.incarnation_id == request.incarnation_id
    restarted = existing is not None and not amending
    records = restart_records(image, request.broker_id, existing.epoch == request.previous_broker_epoch) if restarted else []
    epoch = existing.epoch if amending else image.offset + 1 + len(records)
    register = rec.RegisterBrokerRecord(
        broker_id=request.broker_id, incarnation_id=request.incarnation_id, broker_epoch=epoch,
        end_points=[rec.RegisterBrokerRecord.BrokerEndpoint(name=l.name, host=l.host, port=l.port,
                                                            security_protocol=l.security_protocol)
                    for l in request.listeners],
        features=[rec.RegisterBrokerRecord.BrokerFeature(name=f.name, min_supported_version=f.min_supported_version,
                                                         max_supported_version=f.max_supported_version)
                  for f in request.features],
        rack=request.rack, fenced=existing.fenced if amending else True,
        in_controlled_shutdown=amending and existing.in_controlled_shutdown, log_dirs=request.log_dirs)
    records.append(register)
    return ControllerResult(records, BrokerRegistrationResponse(broker_epoch=epoch))


async def on_controller(node, context, request):
    controller = node.controller
    response = await controller.write(lambda image: decide(
        image, request, context.api_version, controller.cluster_id, controller.session_alive(request.broker_id)))
    if response.error_code == ErrorCode.NONE:
        controller.touch_session(request.broker_id)
    return response
