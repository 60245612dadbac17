"""Topic creation, CreateTopics (19): create topics, placed by the controller or as the client assigns them.

Pure: ``decide(image, request, rng, startup)`` returns the ``ControllerResult``.

Who: admin clients, through any broker (forwarded) or on the controller listener. Follows Kafka's KRaft
controller (ControllerApis.createTopics, ReplicationControlManager.createTopics), per topic, in order:

* a name given more than once: INVALID_REQUEST "Duplicate topic name."; ``__cluster_metadata``:
  INVALID_REQUEST; both answered after the other topics, as Kafka does;
* an illegal name (Topic.validate: empty, "." or "..", over 249 chars, chars other than
  ``[a-zA-Z0-9._-]``) or one that collides with an existing topic once '.' and '_' are unified:
  INVALID_TOPIC_EXCEPTION (17); an existing name: TOPIC_ALREADY_EXISTS (36);
* a null config value, then any config LogConfig refuses: INVALID_CONFIG (40);
* with ``Assignments``: NumPartitions and ReplicationFactor must be -1 (INVALID_REQUEST), and the lists
  must pass the manual-assignment checks (INVALID_REPLICA_ASSIGNMENT, 39: partitions 0..n-1 each once,
  same size, registered brokers, no broker twice, at least one active broker);
* without: ReplicationFactor 0 or below -1 is INVALID_REPLICATION_FACTOR (38), NumPartitions 0 or below
  -1 INVALID_PARTITIONS (37); -1 means the cluster default (``num.partitions``,
  ``default.replication.factor``: as the cluster was started, else 1 unless the cluster-wide broker
  configs in the log say otherwise); the striped
  placer places the replicas, and too few brokers is INVALID_REPLICATION_FACTOR.

More than 10,000 partitions in one request fail every topic with POLICY_VIOLATION (44).
A created topic is one TopicRecord, its ConfigRecords, then a PartitionRecord per partition (leader the
first active replica, ISR the active replicas); the whole request is one atomic batch. ``validateOnly``
(v1+) answers the same, topic id included, and writes nothing. v5+ answers carry the partition count,
replication factor and every effective topic config, sorted by name; v7 the topic id.

Deliberate differences: ``timeoutMs`` is not enforced (writes commit at once); no create-topic policy,
quotas or ACLs exist, so POLICY_VIOLATION, THROTTLING_QUOTA_EXCEEDED and TOPIC_AUTHORIZATION_FAILED
come only from the cases above.
"""
from __future__ import annotations

import random
from typing import cast

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec import records as rec
from kraftwire.codec.constants import ZERO_UUID, ConfigResourceType
from kraftwire.codec.log_layout import METADATA_TOPIC
from kraftwire.codec.message import Message
from kraftwire.codec.messages import CreateTopicsRequest, CreateTopicsResponse
from kraftwire.server.metadata import config_describe, configs
from kraftwire.server.metadata.image import MetadataImage

from .. import config_validation
from ..result import ControllerResult
from ..topics import (MAX_RECORDS_PER_USER_OP, RNG, active_replicas, check_manual_assignment, colliding_topic,
                      invalid_name_reason, manual_isr, new_topic_id, partition_record, place_partitions,
                      split_duplicates)

MAX_PARTITIONS_PER_BATCH = 10_000
Result = CreateTopicsResponse.CreatableTopicResult
CreatableTopic = CreateTopicsRequest.CreatableTopic
ResultConfig = CreateTopicsResponse.CreatableTopicConfigs


def default_partitions_and_replication(image: MetadataImage, startup: dict[str, str]) -> tuple[int, int]:
    """``num.partitions`` and ``default.replication.factor``: as the cluster was started with them
    (``startup``), else as a cluster-wide config in the log says, else Kafka's 1."""
    cluster_defaults = {**startup, **image.broker_configs("")}
    # both are INT configs, which the catalogue parses to int (its values are typed ``object``)
    return (cast(int, configs.broker_value({}, cluster_defaults, "num.partitions")),
            cast(int, configs.broker_value({}, cluster_defaults, "default.replication.factor")))


def _failed(name: str, code: int, message: str | None) -> Result:
    return Result(name=name, topic_id=ZERO_UUID, error_code=code, error_message=message, configs=[])


def _requested_partitions(topic: CreatableTopic, default_partitions: int) -> int:
    """How many partitions a topic asks for, as Kafka's per-request limit counts them."""
    if topic.assignments:
        return len(topic.assignments)
    if topic.num_partitions == -1:
        return default_partitions
    return max(topic.num_partitions, 0)


def _replica_lists(image: MetadataImage, topic: CreatableTopic, defaults: tuple[int, int], rng: random.Random
                   ) -> tuple[list[list[int]], list[list[int]]]:
    """(replicas, ISR) of each new partition, in partition order; raises KafkaError."""
    if topic.assignments:
        if topic.replication_factor != -1:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "A manual partition assignment was specified, "
                             "but replication factor was not set to -1.")
        if topic.num_partitions != -1:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "A manual partition assignment was specified, "
                             "but numPartitions was not set to -1.")
        assigned: dict[int, tuple[list[int], list[int]]] = {}
        replication_factor: int | None = None
        for assignment in topic.assignments:
            index, replicas = assignment.partition_index, list(assignment.broker_ids)
            if index in assigned:
                raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                 f"Found multiple manual partition assignments for partition {index}")
            check_manual_assignment(image, replicas, replication_factor)
            replication_factor = len(replicas)
            assigned[index] = (replicas, manual_isr(image, replicas, index))
        if any(i not in assigned for i in range(len(assigned))):
            raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                             "partitions should be a consecutive 0-based integer sequence")
        ordered = [assigned[i] for i in range(len(assigned))]
        return [r for r, _ in ordered], [isr for _, isr in ordered]
    if topic.replication_factor < -1 or topic.replication_factor == 0:
        raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR,
                         "Replication factor must be larger than 0, or -1 to use the default value.")
    if topic.num_partitions < -1 or topic.num_partitions == 0:
        raise KafkaError(ErrorCode.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value.")
    default_partitions, default_replication = defaults
    partitions = default_partitions if topic.num_partitions == -1 else topic.num_partitions
    replication = default_replication if topic.replication_factor == -1 else topic.replication_factor
    placed = place_partitions(image, 0, partitions, replication, rng)
    return placed, [active_replicas(image, replicas) for replicas in placed]


def _effective_configs(image: MetadataImage, name: str, dynamic: dict[str, str]) -> list[ResultConfig]:
    entries = config_describe.describe(ConfigResourceType.TOPIC, name, dynamic, image.broker_configs(""))
    return [ResultConfig(name=e.name, value=e.value, read_only=e.read_only, config_source=e.source,
                         is_sensitive=e.is_sensitive) for e in sorted(entries, key=lambda e: e.name)]


def _create(image: MetadataImage, topic: CreatableTopic, defaults: tuple[int, int], rng: random.Random,
            records: list[Message]) -> Result:
    """Check and build one topic: its records go to ``records``; returns its result."""
    given = {c.name: c.value for c in topic.configs}  # a key given twice: the last value wins
    nulls = [c.name for c in topic.configs if c.value is None]
    if nulls:
        raise KafkaError(ErrorCode.INVALID_CONFIG, "Null value not supported for topic configs: " + ",".join(nulls))
    ops = [(key, config_validation.AlterOp.SET, value) for key, value in given.items()]
    dynamic = config_validation.validate_topic_changes({}, ops, image.broker_configs("")) if ops else {}
    replicas, isrs = _replica_lists(image, topic, defaults, rng)
    topic_id = new_topic_id(rng)
    records.append(rec.TopicRecord(name=topic.name, topic_id=topic_id))
    records += [rec.ConfigRecord(resource_type=ConfigResourceType.TOPIC, resource_name=topic.name, name=key,
                                 value=value) for key, value in dynamic.items()]
    records += [partition_record(image, topic_id, index, r, isr)
                for index, (r, isr) in enumerate(zip(replicas, isrs, strict=True))]
    return Result(name=topic.name, topic_id=topic_id, error_code=ErrorCode.NONE, error_message=None,
                  topic_config_error_code=ErrorCode.NONE,
                  num_partitions=len(replicas), replication_factor=len(replicas[0]),
                  configs=_effective_configs(image, topic.name, dynamic))


def _check_name(image: MetadataImage, name: str) -> None:
    if image.topic(name) is not None:
        raise KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
    collision = colliding_topic(image, name)
    if collision is not None:
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"Topic '{name}' collides with existing topic: {collision}")
    reason = invalid_name_reason(name)
    if reason is not None:
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, reason)


def _refused(request: CreateTopicsRequest, code: int, message: str | None) -> CreateTopicsResponse:
    """The answer to a request refused as a whole: every topic entry gets the error."""
    return CreateTopicsResponse(throttle_time_ms=0, topics=[_failed(t.name, code, message) for t in request.topics])


def decide(image: MetadataImage, request: CreateTopicsRequest, rng: random.Random = RNG,
           startup: dict[str, str] | None = None) -> ControllerResult:
    """The records and CreateTopicsResponse; no records when validating only or nothing was created.
    ``startup``: the controller's startup configs (num.partitions, default.replication.factor)."""
    unique, duplicates = split_duplicates(t.name for t in request.topics)
    wanted = set(unique) - {METADATA_TOPIC}
    topics = [t for t in request.topics if t.name in wanted]
    defaults = default_partitions_and_replication(image, startup or {})
    default_partitions, _ = defaults
    if sum(_requested_partitions(t, default_partitions) for t in topics) > MAX_PARTITIONS_PER_BATCH:
        return ControllerResult([], _refused(request, ErrorCode.POLICY_VIOLATION,
                                             "Excessively large number of partitions per request."))
    records: list[Message] = []
    results = []
    for topic in topics:
        try:
            _check_name(image, topic.name)
            results.append(_create(image, topic, defaults, rng, records))
        except KafkaError as exc:
            results.append(_failed(topic.name, exc.code, exc.message))
    if len(records) > MAX_RECORDS_PER_USER_OP:
        return ControllerResult([], _refused(request, ErrorCode.UNKNOWN_SERVER_ERROR, None))
    results += [_failed(name, ErrorCode.INVALID_REQUEST, "Duplicate topic name.") for name in duplicates]
    if METADATA_TOPIC in unique:
        results.append(_failed(METADATA_TOPIC, ErrorCode.INVALID_REQUEST,
                               f"Creation of internal topic {METADATA_TOPIC} is prohibited."))
    if request.validate_only:
        records = []
    return ControllerResult(records, CreateTopicsResponse(throttle_time_ms=0, topics=results))
