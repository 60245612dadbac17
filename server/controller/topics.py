"""Rules the topic APIs share (CreateTopics, CreatePartitions, DeleteTopics, ElectLeaders).

All pure, on a ``MetadataImage``: Kafka's topic-name rules (``Topic.validate`` and the '.'/'_' collision
check), the checks of a manual replica assignment (``validateManualPartitionAssignment``), placement
of new partitions over the usable brokers, and the PartitionRecord of a new partition (leader = first
active replica, ISR = the active replicas, epochs 0, each replica in its broker's default directory).
"""
from __future__ import annotations

import base64
import random
import uuid
from collections.abc import Hashable, Iterable, Sequence
from typing import TypeVar

from kraftwire.codec import records as rec

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.server.metadata.image import MetadataImage
from .partition_change import default_directory
from .placement import place


# One user operation writes at most this many records (QuorumController.MAX_RECORDS_PER_USER_OP).
MAX_RECORDS_PER_USER_OP = 10_000

_MAX_NAME_LENGTH = 249
_LEGAL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")

Key = TypeVar("Key", bound=Hashable)

# Handlers share one generator for placement and topic ids; decisions take it as an argument.
RNG = random.Random()


def invalid_name_reason(name: str) -> str | None:
    """Kafka's ``Topic.validate`` message for a name it refuses, or None for a legal name."""
    if not name:
        reason = "the empty string is not allowed"
    elif name in (".", ".."):
        reason = f"'{name}' is not allowed"
    elif len(name.encode("utf-16-le")) // 2 > _MAX_NAME_LENGTH:  # Java counts UTF-16 units
        reason = f"the length of '{name}' is longer than the max allowed length {_MAX_NAME_LENGTH}"
    elif not _LEGAL_CHARS.issuperset(name):
        reason = f"'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    else:
        return None
    return "Topic name is invalid: " + reason


def colliding_topic(image: MetadataImage, name: str) -> str | None:
    """An existing topic whose name equals ``name`` once '.' and '_' are unified (they collide in
    metric names), or None. Only names holding '.' or '_' can collide."""
    if "." not in name and "_" not in name:
        return None
    unified = name.replace(".", "_")
    return next((other for other in image.topic_ids
                 if ("." in other or "_" in other) and other.replace(".", "_") == unified), None)


def new_topic_id(rng: random.Random) -> uuid.UUID:
    """A random id as Kafka's ``Uuid.randomUuid`` makes them: never one whose base64 text holds a
    '-' (command-line tools would read it as an option)."""
    while True:
        topic_id = uuid.UUID(int=rng.getrandbits(128), version=4)
        if b"-" not in base64.urlsafe_b64encode(topic_id.bytes):
            return topic_id


def split_duplicates(names: Iterable[Key]) -> tuple[list[Key], list[Key]]:
    """(names (or ids) given once, those given more than once), each in order of first appearance."""
    counts: dict[Key, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return [n for n, c in counts.items() if c == 1], [n for n, c in counts.items() if c > 1]


def active_replicas(image: MetadataImage, replicas: Sequence[int]) -> list[int]:
    """The replicas that may lead or be in sync: registered, unfenced, not shutting down."""
    return [b for b in replicas if (broker := image.brokers.get(b)) is not None and broker.active]


def check_manual_assignment(image: MetadataImage, replicas: Sequence[int],
                            replication_factor: int | None) -> None:
    """Kafka's checks of one partition's replica list given by a client; raises KafkaError
    INVALID_REPLICA_ASSIGNMENT. ``replication_factor``: what earlier partitions have, if any."""
    if not replicas:
        raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                         "The manual partition assignment includes an empty replica list.")
    previous = None
    for broker_id in sorted(replicas):
        if broker_id not in image.brokers:
            raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"The manual partition assignment includes broker "
                                                         f"{broker_id}, but no such broker is registered.")
        if not image.brokers[broker_id].has_uncordoned_dirs:
            raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"The manual partition assignment includes broker "
                                                         f"{broker_id}, but all its log directories are cordoned.")
        if broker_id == previous:
            raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                             f"The manual partition assignment includes the broker {broker_id} more than once.")
        previous = broker_id
    if replication_factor is not None and len(replicas) != replication_factor:
        raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                         f"The manual partition assignment includes a partition with {len(replicas)} replica(s), "
                         f"but this is not consistent with previous partitions, which have {replication_factor} "
                         "replica(s).")


def manual_isr(image: MetadataImage, replicas: Sequence[int], partition_id: int) -> list[int]:
    """The ISR of a manually assigned new partition; INVALID_REPLICA_ASSIGNMENT if none can lead."""
    isr = active_replicas(image, replicas)
    if not isr:
        raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                         "All brokers specified in the manual partition assignment for "
                         f"partition {partition_id} are fenced or in controlled shutdown.")
    return isr


def place_partitions(image: MetadataImage, start_partition: int, count: int, replication_factor: int,
                     rng: random.Random) -> list[list[int]]:
    """Replica lists for new partitions over the usable brokers (all registered ones not in
    controlled shutdown and with a directory that is not cordoned; fenced ones only as followers, and
    only when unfenced ones run out)."""
    usable = [b for b in image.brokers.values() if not b.in_controlled_shutdown and b.has_uncordoned_dirs]
    brokers = [(b.broker_id, b.rack) for b in sorted(usable, key=lambda b: b.broker_id)]
    fenced = {b.broker_id for b in usable if b.fenced}
    return place(brokers, start_partition, count, replication_factor, rng, fenced)


def partition_record(image: MetadataImage, topic_id: uuid.UUID, partition_id: int, replicas: Sequence[int],
                     isr: Sequence[int]) -> rec.PartitionRecord:
    """The PartitionRecord of a new partition: its first in-sync replica leads."""
    return rec.PartitionRecord(
        partition_id=partition_id, topic_id=topic_id, replicas=list(replicas), isr=list(isr),
        removing_replicas=[], adding_replicas=[], leader=isr[0], leader_recovery_state=0, leader_epoch=0,
        partition_epoch=0, directories=[default_directory(image.brokers, b) for b in replicas])
