"""AlterPartition (56): a partition leader proposes a new ISR (and leader recovery state).

Pure: ``decide(image, request, version)`` returns the ``ControllerResult`` (``version``: the
request's, which says how topics and ISR members are named).

Who: brokers, on the controller listener only; kraftwire's simulated brokers send it when a follower
has caught up (ISR expansion), which is how reassignments complete. v0-1 name topics, v2+ use topic
ids; v3 carries each ISR member's broker epoch.

Checks, as Kafka's ReplicationControlManager does them: the sender's broker epoch must be its current
registration's (STALE_BROKER_EPOCH 77, for the whole request). Then per topic: an unknown topic id is
UNKNOWN_TOPIC_ID (100) (an unknown name in v0-1, UNKNOWN_TOPIC_OR_PARTITION (3)); per partition, in
order: unknown partition (3); a leader or partition epoch newer than the controller's (NOT_CONTROLLER
41); an older leader epoch (FENCED_LEADER_EPOCH 74); a sender that is not the leader (INVALID_REQUEST
42); an older partition epoch (INVALID_UPDATE_VERSION 95); an ISR with duplicates or non-replicas, or
without the leader, or with more than one member while RECOVERING, or going RECOVERED -> RECOVERING
(INVALID_REQUEST 42); an ISR member that is unregistered, shutting down, fenced or (v3) of another
broker epoch (INELIGIBLE_REPLICA 107). An accepted proposal goes through ``build_change``, so an ISR
that completes a reassignment completes it in the same record; when that moves leadership away from
the sender the record is still written and the partition answers NEW_LEADER_ELECTED (108). Otherwise
the answer carries the resulting leader, ISR, epochs and recovery state.
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec.constants import LEADER_RECOVERED, LEADER_RECOVERING, LEADER_UNCHANGED
from kraftwire.codec.messages import AlterPartitionRequest, AlterPartitionResponse
from kraftwire.codec.records import PartitionChangeRecord
from kraftwire.server.metadata.image import MetadataImage, PartitionState, TopicState, merged_partition

from ..broker_lifecycle import election_for
from ..partition_change import build_change, rules_for
from ..result import ControllerResult


TOPIC_IDS_VERSION = 2
BROKER_EPOCHS_VERSION = 3

TopicResult = AlterPartitionResponse.TopicData
PartitionResult = AlterPartitionResponse.PartitionData
Proposal = AlterPartitionRequest.PartitionData


def proposed_isr(partition: Proposal, version: int) -> list[tuple[int, int]]:
    """(broker id, broker epoch or -1) of each proposed ISR member."""
    if version >= BROKER_EPOCHS_VERSION:
        return [(member.broker_id, member.broker_epoch) for member in partition.new_isr_with_epochs]
    return [(broker_id, -1) for broker_id in partition.new_isr]


def partition_error(image: MetadataImage, sender: int, state: PartitionState | None, partition: Proposal,
                    isr: list[tuple[int, int]]) -> int:
    """The first of Kafka's checks that the proposal fails, or 0."""
    if state is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if partition.leader_epoch > state.leader_epoch or partition.partition_epoch > state.partition_epoch:
        return ErrorCode.NOT_CONTROLLER
    if partition.leader_epoch < state.leader_epoch:
        return ErrorCode.FENCED_LEADER_EPOCH
    if sender != state.leader:
        return ErrorCode.INVALID_REQUEST
    if partition.partition_epoch < state.partition_epoch:
        return ErrorCode.INVALID_UPDATE_VERSION
    ids = [broker_id for broker_id, _ in isr]
    if len(set(ids)) != len(ids) or any(b not in state.replicas for b in ids) or state.leader not in ids:
        return ErrorCode.INVALID_REQUEST
    recovering = partition.leader_recovery_state == LEADER_RECOVERING
    if recovering and (len(ids) > 1 or state.leader_recovery_state == LEADER_RECOVERED):
        return ErrorCode.INVALID_REQUEST
    for broker_id, epoch in isr:
        broker = image.brokers.get(broker_id)
        if broker is None or not broker.active or (epoch != -1 and epoch != broker.epoch):
            return ErrorCode.INELIGIBLE_REPLICA
    return 0


def _judge(image: MetadataImage, sender: int, topic: TopicState, partition: Proposal, version: int
           ) -> tuple[PartitionResult, PartitionChangeRecord | None]:
    """One partition's answer and the change it writes, if any."""
    index = partition.partition_index
    state = topic.partitions.get(index)
    isr = proposed_isr(partition, version)
    code = partition_error(image, sender, state, partition, isr)
    if code or state is None:
        return PartitionResult(partition_index=index, error_code=code), None
    change = build_change(image.brokers, topic.topic_id, index, state, rules=rules_for(image, topic.name),
                          isr=[b for b, _ in isr], leader_recovery_state=partition.leader_recovery_state,
                          election=election_for(image, topic.name))
    if change is not None:
        if change.leader not in (LEADER_UNCHANGED, sender):
            return PartitionResult(partition_index=index, error_code=ErrorCode.NEW_LEADER_ELECTED), change
        state = merged_partition(state, change)
    return PartitionResult(partition_index=index, leader_id=state.leader, leader_epoch=state.leader_epoch,
                           isr=state.isr, leader_recovery_state=state.leader_recovery_state,
                           partition_epoch=state.partition_epoch), change


def decide(image: MetadataImage, request: AlterPartitionRequest, version: int) -> ControllerResult:
    """The PartitionChangeRecords and AlterPartitionResponse of a leader's proposals."""
    sender = image.brokers.get(request.broker_id)
    if sender is None or sender.epoch != request.broker_epoch:
        return ControllerResult([], AlterPartitionResponse(error_code=ErrorCode.STALE_BROKER_EPOCH))
    records: list[PartitionChangeRecord] = []
    results = []
    for entry in request.topics:
        if version >= TOPIC_IDS_VERSION:
            topic = image.topics.get(entry.topic_id)
            missing = ErrorCode.UNKNOWN_TOPIC_ID
        else:
            topic = image.topic(entry.topic_name)
            missing = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        partitions = []
        for partition in entry.partitions:
            if topic is None:
                partitions.append(PartitionResult(partition_index=partition.partition_index, error_code=missing))
                continue
            answer, change = _judge(image, request.broker_id, topic, partition, version)
            partitions.append(answer)
            if change is not None:
                records.append(change)
        results.append(TopicResult(topic_name=entry.topic_name, topic_id=entry.topic_id, partitions=partitions))
    return ControllerResult(records, AlterPartitionResponse(topics=results))
