"""Partition creation, CreatePartitions (37): add partitions to existing topics.

Pure: ``decide(image, request, rng)`` returns the ``ControllerResult``.

Who: admin clients, through any broker (forwarded) or on the controller listener. Follows Kafka's
ControllerApis/ReplicationControlManager.createPartitions, per topic:

* a topic named more than once: INVALID_REQUEST "Duplicate topic name." (answered first);
* an unknown topic: UNKNOWN_TOPIC_OR_PARTITION (3), no message;
* ``Count`` must exceed the current partition count: INVALID_PARTITIONS (37) "Topic already has N
  partition(s)." or "The topic T currently has N partition(s); C would not be an increase.";
* ``Assignments`` (null: the controller places the new partitions) must list one replica list per new
  partition, each passing CreateTopics' manual-assignment checks with the topic's replication factor
  (that of its partition 0): INVALID_REPLICA_ASSIGNMENT (39);
* placement failures: INVALID_REPLICATION_FACTOR (38) with the placer's reason.

New partitions are PartitionRecords (leader the first active replica, ISR the active replicas); all
topics of a request are one atomic batch. ``ValidateOnly`` answers the same and writes nothing.

Deliberate differences: ``TimeoutMs`` is not enforced; no quotas or ACLs. A topic that would need more
than 10,000 records gets UNKNOWN_SERVER_ERROR (-1) and adds nothing (Kafka fails the same way but may
still write the records it had built before the limit).
"""
from __future__ import annotations

import random

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.messages import CreatePartitionsRequest, CreatePartitionsResponse
from kraftwire.codec.records import PartitionRecord
from kraftwire.server.metadata.image import MetadataImage

from ..result import ControllerResult
from ..topics import (MAX_RECORDS_PER_USER_OP, RNG, active_replicas, check_manual_assignment, manual_isr,
                      partition_record, place_partitions, split_duplicates)

Result = CreatePartitionsResponse.CreatePartitionsTopicResult


def _new_partitions(image: MetadataImage, request_topic: CreatePartitionsRequest.CreatePartitionsTopic, room: int,
                    rng: random.Random) -> list[PartitionRecord]:
    """The records adding the topic's new partitions; raises KafkaError. ``room``: how many more
    records the request may write."""
    topic = image.topic(request_topic.name)
    if topic is None:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    current, count = len(topic.partitions), request_topic.count
    if count == current:
        raise KafkaError(ErrorCode.INVALID_PARTITIONS, f"Topic already has {current} partition(s).")
    if count < current:
        raise KafkaError(ErrorCode.INVALID_PARTITIONS,
                         f"The topic {topic.name} currently has {current} partition(s); "
                         f"{count} would not be an increase.")
    additional = count - current
    assignments = request_topic.assignments
    if assignments is not None and len(assignments) != additional:
        raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                         f"Attempted to add {additional} additional partition(s), "
                         f"but only {len(assignments)} assignment(s) were specified.")
    if additional > room:
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR)
    replication_factor = len(topic.partitions[min(topic.partitions)].replicas)
    if assignments is not None:
        replica_lists: list[list[int]] = []
        isrs: list[list[int]] = []
        for offset, assignment in enumerate(assignments):
            replicas = list(assignment.broker_ids)
            check_manual_assignment(image, replicas, replication_factor)
            replica_lists.append(replicas)
            isrs.append(manual_isr(image, replicas, current + offset))
    else:
        replica_lists = place_partitions(image, current, additional, replication_factor, rng)
        isrs = [active_replicas(image, replicas) for replicas in replica_lists]
    return [partition_record(image, topic.topic_id, current + offset, replicas, isr)
            for offset, (replicas, isr) in enumerate(zip(replica_lists, isrs, strict=True))]


def decide(image: MetadataImage, request: CreatePartitionsRequest, rng: random.Random = RNG) -> ControllerResult:
    """The records and CreatePartitionsResponse; no records when validating only."""
    unique, duplicates = split_duplicates(t.name for t in request.topics)
    results = [Result(name=name, error_code=ErrorCode.INVALID_REQUEST, error_message="Duplicate topic name.")
               for name in duplicates]
    records: list[PartitionRecord] = []
    wanted = set(unique)
    for request_topic in request.topics:
        if request_topic.name not in wanted:
            continue
        try:
            records += _new_partitions(image, request_topic, MAX_RECORDS_PER_USER_OP - len(records), rng)
            results.append(Result(name=request_topic.name, error_code=ErrorCode.NONE, error_message=None))
        except KafkaError as exc:
            results.append(Result(name=request_topic.name, error_code=exc.code, error_message=exc.message))
    if request.validate_only:
        records = []
    return ControllerResult(records, CreatePartitionsResponse(throttle_time_ms=0, results=results))
