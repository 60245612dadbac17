"""Automatic removal of replication throttles once no reassignment needs them (KIP-179's unshipped idea).

Opt-in: only while the cluster default ``kraftwire.throttle.auto.remove.enable`` (broker resource "")
is true. Kafka leaves throttles in place until ``kafka-reassign-partitions --verify`` removes them; with
the option on, the controller removes them itself when a reassignment ends (completes or is cancelled):
the topic's ``leader.replication.throttled.replicas`` and ``follower.replication.throttled.replicas``
once the topic has no reassigning partition left, and a broker's ``leader.replication.throttled.rate``
and ``follower.replication.throttled.rate`` once no ongoing reassignment has the broker among its
replicas. Only the topics and brokers of the reassignments that just ended are considered, so
throttles set ahead of a reassignment that has not started yet stay. Removals are ordinary
ConfigRecords with a null value, written right after the commit that ended the reassignment.
"""
from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Iterable
from typing import Protocol

from kraftwire.codec import records as rec
from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.constants import ConfigResourceType
from kraftwire.codec.message import Message

from kraftwire.server.metadata import configs
from kraftwire.server.metadata.image import MetadataImage
from .result import ControllerResult

TOPIC_KEYS = (configs.LEADER_THROTTLED_REPLICAS, configs.FOLLOWER_THROTTLED_REPLICAS)
BROKER_KEYS = (configs.LEADER_THROTTLED_RATE, configs.FOLLOWER_THROTTLED_RATE)


def auto_remove_enabled(image: MetadataImage) -> bool:
    return bool(configs.broker_value({}, image.broker_configs(""), configs.THROTTLE_AUTO_REMOVE_ENABLE))


def set_auto_remove(image: MetadataImage, enabled: bool) -> ControllerResult:
    """The cluster-default ConfigRecord switching the option on or off (the record
    ``kafka-configs --entity-default`` writes; ``kraftwire serve --throttle-auto-remove``); none when it
    already is so. Raises KafkaError unless ``enabled`` is a bool."""
    if not isinstance(enabled, bool):
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Throttle auto-removal is true or false, not {enabled!r}.")
    value = str(enabled).lower()
    if image.broker_configs("").get(configs.THROTTLE_AUTO_REMOVE_ENABLE) == value:
        return ControllerResult()
    return ControllerResult([rec.ConfigRecord(resource_type=ConfigResourceType.BROKER, resource_name="",
                                              name=configs.THROTTLE_AUTO_REMOVE_ENABLE, value=value)])


def throttle_removals(image: MetadataImage, topics: Iterable[str], brokers: Iterable[int]) -> list[rec.ConfigRecord]:
    """ConfigRecords deleting the throttles of ``topics`` (names) and ``brokers`` (ids) that no ongoing
    reassignment needs; none when the option is off."""
    if not auto_remove_enabled(image):
        return []
    busy_topics: set[str] = set()
    busy_brokers: set[int] = set()
    for topic, _, state in image.reassigning_partitions():
        busy_topics.add(topic.name)
        busy_brokers.update(state.replicas)
    records: list[rec.ConfigRecord] = []
    for name in sorted(set(topics) - busy_topics):
        present = image.topic_configs(name) if name in image.topic_ids else {}
        records += [rec.ConfigRecord(resource_type=ConfigResourceType.TOPIC, resource_name=name, name=key, value=None)
                    for key in TOPIC_KEYS if key in present]
    for broker_id in sorted(set(brokers) - busy_brokers):
        present = image.broker_configs(str(broker_id))
        records += [rec.ConfigRecord(resource_type=ConfigResourceType.BROKER, resource_name=str(broker_id), name=key,
                                     value=None)
                    for key in BROKER_KEYS if key in present]
    return records


class CommitSource(Protocol):
    """What the cleaner needs of the active controller (``active_controller.Controller``)."""

    committed: MetadataImage
    active: bool

    def add_commit_listener(self, listener: Callable[[list[tuple[int, Message]]], None]) -> None: ...

    def write(self, decide: Callable[[MetadataImage], ControllerResult]) -> Awaitable[object]: ...


class ThrottleCleaner:
    """Watches commits for reassignments that end and writes ``throttle_removals`` after them."""

    def __init__(self, controller: CommitSource) -> None:
        self.controller = controller
        # reassigning partition -> (topic, replicas); None while the option is off
        self._reassigning: dict[tuple[uuid.UUID, int], tuple[str, frozenset[int]]] | None = None

    def start(self) -> None:
        self.controller.add_commit_listener(self.on_commit)

    def on_commit(self, committed: list[tuple[int, Message]]) -> None:
        image = self.controller.committed
        if not auto_remove_enabled(image):
            self._reassigning = None
            return
        if self._reassigning is None:  # just switched on: what is reassigning from now on is watched
            self._reassigning = {(topic.topic_id, index): (topic.name, frozenset(state.replicas))
                                 for topic, index, state in image.reassigning_partitions()}
            return
        ended_topics: set[str] = set()
        ended_brokers: set[int] = set()
        for _, record in committed:
            if isinstance(record, (rec.PartitionChangeRecord, rec.PartitionRecord)):
                key = (record.topic_id, record.partition_id)
                if record.adding_replicas is None and record.removing_replicas is None and key not in self._reassigning:
                    continue
                topic = image.topics.get(record.topic_id)
                state = topic.partitions.get(record.partition_id) if topic is not None else None
                if topic is not None and state is not None and (state.adding or state.removing):
                    self._reassigning[key] = (topic.name, frozenset(state.replicas))
                elif key in self._reassigning:
                    name, brokers = self._reassigning.pop(key)
                    ended_topics.add(name)
                    ended_brokers |= brokers
            elif isinstance(record, rec.RemoveTopicRecord):
                for topic_id, index in [(t, i) for t, i in self._reassigning if t == record.topic_id]:
                    _, brokers = self._reassigning.pop((topic_id, index))
                    ended_brokers |= brokers
        if (ended_topics or ended_brokers) and self.controller.active:  # standbys only follow
            asyncio.ensure_future(self.controller.write(
                lambda working: ControllerResult(throttle_removals(working, ended_topics, ended_brokers))))
