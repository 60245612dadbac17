"""Replica directories, AssignReplicasToDirs (73, KIP-858): a broker reports which of its log
directories holds each replica.

Pure: ``decide(image, request)`` returns the ``ControllerResult``.

Who: brokers, on the controller listener only (simulated brokers send it for replicas they placed
themselves, i.e. were given as UNASSIGNED, and when a future replica made by AlterReplicaLogDirs takes
over). Whole-request failure, before anything else: an unregistered broker id or a broker epoch other
than the registration's is STALE_BROKER_EPOCH (77), answered with the top-level ErrorCode and no
Directories. kraftwire runs at metadata.version 3.9-IV0 or later, so Kafka's UNSUPPORTED_VERSION below
3.7-IV2 never applies. A cordoned directory is accepted, as Kafka's controller accepts it (the broker
is what keeps new replicas off its cordoned directories, server/broker/log_dirs.py).

Then every directory -> topic -> partition entry is answered in the request's order and nesting,
duplicates included: an unknown topic id is UNKNOWN_TOPIC_ID (100) for each of its partitions; an
unknown partition UNKNOWN_TOPIC_OR_PARTITION (3); a broker that is not in the partition's replicas
(adding ones count) NOT_LEADER_OR_FOLLOWER (6); otherwise NONE, with a PartitionChangeRecord setting the
broker's slot of ``Directories`` when it differs (partition epoch +1, leader epoch unchanged). The
directory id is not checked: when it is not one of the broker's online directories (unknown, offline,
or LOST) the partition also gets a second record, after every directory record, taking the broker out
of its ISR and leadership. As in Kafka, every record is computed from the partition as it was before
the request (so duplicates each write a record). Kafka appends the records as a non-atomic batch;
kraftwire appends them as one atomic batch, which no client can tell apart.
"""
from __future__ import annotations

import logging
import uuid

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import AssignReplicasToDirsRequest, AssignReplicasToDirsResponse
from kraftwire.codec.message import Message
from kraftwire.server.metadata.image import MetadataImage

from ..broker_lifecycle import move_off_broker
from ..partition_change import build_change, rules_for
from ..result import ControllerResult


log = logging.getLogger("kraftwire.controller")

Response = AssignReplicasToDirsResponse


def stale_epoch_message(image: MetadataImage, broker_id: int, broker_epoch: int) -> str | None:
    """Kafka's checkBrokerEpoch: the reason the sender's epoch is stale, or None."""
    broker = image.brokers.get(broker_id)
    if broker is None:
        return f"No broker registration found for broker id {broker_id}"
    if broker.epoch != broker_epoch:
        return f"Expected broker epoch {broker.epoch}, but got broker epoch {broker_epoch}"
    return None


def decide(image: MetadataImage, request: AssignReplicasToDirsRequest) -> ControllerResult:
    """The PartitionChangeRecords and AssignReplicasToDirsResponse of a broker's report."""
    stale = stale_epoch_message(image, request.broker_id, request.broker_epoch)
    if stale is not None:
        log.info("AssignReplicasToDirs from broker %d refused: %s", request.broker_id, stale)
        return ControllerResult([], Response(error_code=ErrorCode.STALE_BROKER_EPOCH))
    broker_id = request.broker_id
    broker = image.brokers[broker_id]
    records: list[Message] = []
    # (topic id, index) -> None: partitions assigned to a directory that is not online
    to_move_off: dict[tuple[uuid.UUID, int], None] = {}
    directories = []
    for entry in request.directories:
        offline = not broker.has_online_dir(entry.id)
        topics = []
        for topic_entry in entry.topics:
            topic = image.topics.get(topic_entry.topic_id)
            partitions = []
            for partition in topic_entry.partitions:
                index = partition.partition_index
                state = topic.partitions.get(index) if topic is not None else None
                if topic is None:
                    code = ErrorCode.UNKNOWN_TOPIC_ID
                elif state is None:
                    code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                elif broker_id not in state.replicas:
                    code = ErrorCode.NOT_LEADER_OR_FOLLOWER
                else:
                    code = ErrorCode.NONE
                    slot = state.replicas.index(broker_id)
                    moved = state.directories[:slot] + (entry.id,) + state.directories[slot + 1:]
                    change = build_change(image.brokers, topic.topic_id, index, state,
                                          rules=rules_for(image, topic.name), directories=moved)
                    if change is not None:
                        records.append(change)
                    if offline:
                        to_move_off[(topic.topic_id, index)] = None
                partitions.append(Response.PartitionData(partition_index=index, error_code=code))
            topics.append(Response.TopicData(topic_id=topic_entry.topic_id, partitions=partitions))
        directories.append(Response.DirectoryData(id=entry.id, topics=topics))
    records += move_off_broker(image, broker_id, to_move_off)
    return ControllerResult(records, Response(directories=directories))
