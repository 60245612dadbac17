"""The cluster control manager (Kafka's ClusterControlManager with its broker heartbeat handling): who
is a member of the cluster and in what state. It decides BrokerRegistration (a broker joins, rejoins
after a restart, or amends its registration) and BrokerHeartbeat (unfencing once caught up, fencing
on request, controlled shutdown, directories gone offline or cordoned).

Pure functions of an image and a request; the records that fence, unfence or move a broker off its
partitions are ``broker_lifecycle``'s. Sessions (the time since a broker's last heartbeat) are soft
state of the active controller (``Controller.session_alive``, ``touch_session``), handed in here as a
fact. The API contracts are in server/apis/api62_broker_registration.py and api63_broker_heartbeat.py.
"""
from __future__ import annotations

import uuid
from collections.abc import Sequence

from kraftwire.codec import ErrorCode
from kraftwire.codec import records as rec
from kraftwire.codec.constants import ENTER_CONTROLLED_SHUTDOWN, is_reserved_directory
from kraftwire.codec.message import Message
from kraftwire.codec.messages import (BrokerHeartbeatRequest, BrokerHeartbeatResponse, BrokerRegistrationRequest,
                                      BrokerRegistrationResponse)
from kraftwire.server.metadata.image import BrokerState, MetadataImage
from kraftwire.server.metadata.record_versions import CORDONED_LOG_DIRS_LEVEL

from .broker_lifecycle import fence_broker, move_off_broker, restart_records, unfence_broker
from .result import ControllerResult

FIRST_VERSION_WITH_DIRECTORIES = 2  # BrokerRegistration v2 (KIP-858)


class RegistrationError(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


# --- BrokerRegistration ---------------------------------------------------------------------------------------------

def _check_directories(image: MetadataImage, request: BrokerRegistrationRequest) -> None:
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
                    raise RegistrationError(ErrorCode.INVALID_REGISTRATION,
                                            f"Broker {other.broker_id} is already registered with directory {d}")


def _check_registration(image: MetadataImage, request: BrokerRegistrationRequest, version: int, cluster_id: str,
                        session_alive: bool) -> None:
    """Kafka's checks, in its order; raises RegistrationError."""
    if request.cluster_id != cluster_id:
        raise RegistrationError(ErrorCode.INCONSISTENT_CLUSTER_ID,
                                f"Expected cluster ID {cluster_id}, but got cluster ID {request.cluster_id}")
    existing = image.brokers.get(request.broker_id)
    if existing is not None and existing.incarnation_id != request.incarnation_id and session_alive:
        raise RegistrationError(ErrorCode.DUPLICATE_BROKER_REGISTRATION,
                                "Another broker is registered with that broker id, and its session is still active.")
    if version >= FIRST_VERSION_WITH_DIRECTORIES:
        _check_directories(image, request)


def _register_record(request: BrokerRegistrationRequest, epoch: int,
                     amended: BrokerState | None) -> rec.RegisterBrokerRecord:
    return rec.RegisterBrokerRecord(
        broker_id=request.broker_id, incarnation_id=request.incarnation_id, broker_epoch=epoch,
        end_points=[rec.RegisterBrokerRecord.BrokerEndpoint(name=listener.name, host=listener.host, port=listener.port,
                                                            security_protocol=listener.security_protocol)
                    for listener in request.listeners],
        features=[rec.RegisterBrokerRecord.BrokerFeature(name=f.name, min_supported_version=f.min_supported_version,
                                                         max_supported_version=f.max_supported_version)
                  for f in request.features],
        rack=request.rack, fenced=amended.fenced if amended is not None else True,
        in_controlled_shutdown=amended is not None and amended.in_controlled_shutdown, log_dirs=request.log_dirs)


def register_broker(image: MetadataImage, request: BrokerRegistrationRequest, version: int, cluster_id: str,
                    session_alive: bool) -> ControllerResult:
    """The records and response of a registration; ``session_alive``: the id's current session is live.

    The broker gets a new epoch (the offset of its RegisterBrokerRecord) and starts fenced; a new
    incarnation of a registered id first leaves its ISRs (and, without a clean shutdown and with ELR on,
    its ELRs); the same incarnation amends the registration, keeping its epoch and states."""
    try:
        _check_registration(image, request, version, cluster_id, session_alive)
    except RegistrationError as exc:
        return ControllerResult([], BrokerRegistrationResponse(error_code=exc.code))
    existing = image.brokers.get(request.broker_id)
    amended = existing if existing is not None and existing.incarnation_id == request.incarnation_id else None
    records: list[Message] = []
    if existing is not None and amended is None:  # restarted
        records += restart_records(image, request.broker_id, existing.epoch == request.previous_broker_epoch)
    epoch = amended.epoch if amended is not None else image.offset + 1 + len(records)
    records.append(_register_record(request, epoch, amended))
    return ControllerResult(records, BrokerRegistrationResponse(broker_epoch=epoch))


# --- BrokerHeartbeat ------------------------------------------------------------------------------------------------

def cordoned_directories(image: MetadataImage, broker: BrokerState,
                         cordoned: Sequence[uuid.UUID] | None) -> list[Message]:
    """Kafka's handleDirectoriesCordoned, at the levels that have cordoned directories."""
    if cordoned is None or image.metadata_version_level < CORDONED_LOG_DIRS_LEVEL:
        return []
    if broker.cordoned_log_dirs is not None and set(broker.cordoned_log_dirs) == set(cordoned):
        return []
    return [rec.BrokerRegistrationChangeRecord(broker_id=broker.broker_id, broker_epoch=broker.epoch,
                                               cordoned_log_dirs=list(cordoned))]


def offline_directories(image: MetadataImage, broker: BrokerState, offline: Sequence[uuid.UUID]) -> list[Message]:
    """Kafka's handleDirectoriesOffline: records for the broker's online directories in ``offline``."""
    newly_offline = [d for d in broker.log_dirs if d in offline]
    if not newly_offline:
        return []
    records: list[Message] = []
    broker_id = broker.broker_id
    for directory in newly_offline:
        hosted_there = [(topic.topic_id, index) for topic, index, state in image.partitions()
                        if broker_id in state.replicas and state.directory_of(broker_id) == directory]
        records += move_off_broker(image, broker_id, hosted_there)
    remaining = [d for d in broker.log_dirs if d not in offline]
    records.append(rec.BrokerRegistrationChangeRecord(broker_id=broker_id, broker_epoch=broker.epoch,
                                                      log_dirs=remaining))
    return records


def _lifecycle(image: MetadataImage, broker: BrokerState, request: BrokerHeartbeatRequest) -> ControllerResult:
    """Fencing, unfencing and controlled shutdown."""
    caught_up = request.current_metadata_offset >= broker.epoch
    if request.want_shut_down:
        records: list[Message] = []
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


def broker_heartbeat(image: MetadataImage, request: BrokerHeartbeatRequest) -> ControllerResult:
    """The records and response of a heartbeat: STALE_BROKER_EPOCH unless it names the current
    registration; then the fencing decisions, the directories gone offline, the cordoned ones."""
    broker = image.brokers.get(request.broker_id)
    if broker is None or broker.epoch != request.broker_epoch:
        return ControllerResult([], BrokerHeartbeatResponse(error_code=ErrorCode.STALE_BROKER_EPOCH, is_fenced=True))
    records, response = _lifecycle(image, broker, request)
    records = [*records, *offline_directories(image, broker, request.offline_log_dirs)]
    return ControllerResult(records + cordoned_directories(image, broker, request.cordoned_log_dirs), response)
