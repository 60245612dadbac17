"""The replay of everything but the partitions: topics (names, deletions), broker registrations,
fencing, online directories, throttle configs and control records. Pure Python, no Spark; the
partitions' replay (``audit.partition_replay``) needs only its ``Topics``."""
from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kraftwire.codec import MalformedError
from kraftwire.codec import records as rec
from kraftwire.codec.constants import ENTER_CONTROLLED_SHUTDOWN, FENCE, ConfigResourceType
from kraftwire.codec.message import Message

from .partition_replay import TopicLife, Topics
from .rows import Output, Raw, decode, record_row, undecodable, violation

THROTTLE_RATES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
THROTTLED_REPLICAS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")

Broker = dict[str, Any]  # a registered broker: epoch, fenced, shutdown, rack, dirs, incarnation
ThrottleKey = tuple[int, str, str]  # (config resource type, resource name, config name)


@dataclass(slots=True)
class ThrottleEpisode:
    """A throttle config's value from the record that set it until one deleted it or set another value
    (``removed_by``: ``deleted``, ``replaced``, ``topic_deleted``); open while ``removed_offset`` is None."""

    key: ThrottleKey
    value: str
    set_offset: int
    set_time: int
    removed_offset: int | None = None
    removed_time: int | None = None
    removed_by: str | None = None


class GlobalReplay:
    """Topics, brokers, directories, throttle configs and log statistics."""

    def __init__(self, out: Output):
        self.out = out
        self.topics = Topics()
        self.topic_ids: dict[str, uuid.UUID] = {}
        self.brokers: dict[int, Broker] = {}
        self.throttles: dict[ThrottleKey, ThrottleEpisode] = {}  # the open episodes
        self.episodes: list[ThrottleEpisode] = []  # closed and open, in the order they started
        self.leader_changes = 0

    def feed(self, raw: Raw) -> uuid.UUID | None:
        """Apply one record; returns the topic id when the record deletes a topic."""
        out = self.out
        try:
            record, version = decode(raw)
        except MalformedError as exc:
            undecodable(out, raw, exc)
            return None
        kind = type(record)
        out.record_types[kind.__name__] += 1
        offset, timestamp = raw[0], raw[1]
        if out.window.contains(offset, timestamp):
            topic = topic_id = None
            if isinstance(record, rec.TopicRecord):
                topic, topic_id = record.name, str(record.topic_id)
            elif isinstance(record, rec.RemoveTopicRecord):
                topic_id = str(record.topic_id)
                topic = self.topics.name_at(record.topic_id, offset)
            out.rows["records"].append(record_row(raw, record, version, topic, topic_id))
        handler = _GLOBAL_HANDLERS.get(kind)
        return handler(self, offset, timestamp, record) if handler else None

    # --- topics and configs --------------------------------------------------------------------------

    def _topic(self, offset: int, timestamp: int, r: rec.TopicRecord) -> None:
        self.topics.by_id[r.topic_id] = TopicLife(r.name, offset)
        self.topic_ids[r.name] = r.topic_id

    def _remove_topic(self, offset: int, timestamp: int, r: rec.RemoveTopicRecord) -> uuid.UUID | None:
        topic = self.topics.by_id.get(r.topic_id)
        if topic is None or topic.deleted is not None:
            self._violation(offset, timestamp, "unknown_topic", f"RemoveTopicRecord for unknown topic id {r.topic_id}")
            return None
        topic.deleted, topic.deleted_time = offset, timestamp
        self.topic_ids.pop(topic.name, None)
        for config in THROTTLED_REPLICAS:
            self._end_throttle((ConfigResourceType.TOPIC, topic.name, config), offset, timestamp, "topic_deleted")
        return r.topic_id

    def _config(self, offset: int, timestamp: int, r: rec.ConfigRecord) -> None:
        if r.name not in (THROTTLE_RATES if r.resource_type == ConfigResourceType.BROKER else
                          THROTTLED_REPLICAS if r.resource_type == ConfigResourceType.TOPIC else ()):
            return
        key: ThrottleKey = (r.resource_type, r.resource_name, r.name)
        if r.value is None:
            self._end_throttle(key, offset, timestamp, "deleted")
            return
        episode = self.throttles.get(key)
        if episode is not None:
            if episode.value == r.value:
                return  # set again to the same value: the same episode
            self._end_throttle(key, offset, timestamp, "replaced")
        episode = self.throttles[key] = ThrottleEpisode(key, r.value, offset, timestamp)
        self.episodes.append(episode)

    def _end_throttle(self, key: ThrottleKey, offset: int, timestamp: int, removed_by: str) -> None:
        episode = self.throttles.pop(key, None)
        if episode is not None:
            episode.removed_offset, episode.removed_time, episode.removed_by = offset, timestamp, removed_by

    # --- brokers and directories -------------------------------------------------------------------

    def _register(self, offset: int, timestamp: int, r: rec.RegisterBrokerRecord) -> None:
        broker: Broker = {"epoch": r.broker_epoch, "fenced": r.fenced, "shutdown": r.in_controlled_shutdown,
                          "rack": r.rack, "dirs": tuple(r.log_dirs), "incarnation": str(r.incarnation_id)}
        old = self.brokers.get(r.broker_id)
        self.brokers[r.broker_id] = broker
        self._broker_row(offset, timestamp, r.broker_id, "registered", broker)
        self._directory_changes(offset, timestamp, r.broker_id, old["dirs"] if old else (), broker["dirs"],
                                "registered")

    def _unregister(self, offset: int, timestamp: int, r: rec.UnregisterBrokerRecord) -> None:
        broker = self.brokers.pop(r.broker_id, None)
        if broker is None:
            self._violation(offset, timestamp, "unknown_broker", f"UnregisterBrokerRecord for broker {r.broker_id}",
                            broker=r.broker_id)
            return
        self._broker_row(offset, timestamp, r.broker_id, "unregistered", broker)
        self._directory_changes(offset, timestamp, r.broker_id, broker["dirs"], (), "unregistered")

    def _fence(self, offset: int, timestamp: int, broker_id: int, fenced: bool) -> None:
        self._broker_change(offset, timestamp, broker_id, "fenced" if fenced else "unfenced", fenced=fenced)

    def _registration_change(self, offset: int, timestamp: int, r: rec.BrokerRegistrationChangeRecord) -> None:
        if r.fenced:
            self._fence(offset, timestamp, r.broker_id, r.fenced == FENCE)
        if r.in_controlled_shutdown == ENTER_CONTROLLED_SHUTDOWN:
            self._broker_change(offset, timestamp, r.broker_id, "controlled_shutdown", shutdown=True)
        if r.log_dirs:
            broker = self.brokers.get(r.broker_id)
            old = broker["dirs"] if broker else ()
            if self._broker_change(offset, timestamp, r.broker_id, "log_dirs_changed", dirs=tuple(r.log_dirs)):
                self._directory_changes(offset, timestamp, r.broker_id, old, tuple(r.log_dirs), "broker_change")

    def _broker_change(self, offset: int, timestamp: int, broker_id: int, event: str, **changes: object) -> bool:
        broker = self.brokers.get(broker_id)
        if broker is None:
            self._violation(offset, timestamp, "unknown_broker", f"{event} for unregistered broker {broker_id}",
                            broker=broker_id)
            return False
        broker.update(changes)
        self._broker_row(offset, timestamp, broker_id, event, broker)
        return True

    def _broker_row(self, offset: int, timestamp: int, broker_id: int, event: str, b: Broker) -> None:
        if self.out.window.contains(offset, timestamp):
            self.out.rows["brokers"].append((offset, timestamp, broker_id, event, b["epoch"], b["fenced"],
                                             b["shutdown"], b["rack"], tuple(map(str, b["dirs"])), b["incarnation"]))

    def _directory_changes(self, offset: int, timestamp: int, broker_id: int, old: tuple[uuid.UUID, ...],
                           new: tuple[uuid.UUID, ...], cause: str) -> None:
        if not self.out.window.contains(offset, timestamp):
            return
        rows = self.out.rows["directories"]
        rows.extend((offset, timestamp, broker_id, str(d), "offline", cause) for d in old if d not in new)
        rows.extend((offset, timestamp, broker_id, str(d), "online", cause) for d in new if d not in old)

    def _leader_change(self, offset: int, timestamp: int, r: rec.LeaderChangeMessage) -> None:
        self.leader_changes += 1

    def _violation(self, offset: int, timestamp: int, kind: str, detail: str, broker: int | None = None) -> None:
        if self.out.window.contains(offset, timestamp):
            self.out.rows["violations"].append(violation(offset, timestamp, kind, detail=detail, broker=broker))


# the record types the global replay acts on; the record's type picks the handler, hence the Any
_GLOBAL_HANDLERS: dict[type[Message], Callable[[GlobalReplay, int, int, Any], uuid.UUID | None]] = {
    rec.TopicRecord: GlobalReplay._topic,
    rec.RemoveTopicRecord: GlobalReplay._remove_topic,
    rec.ConfigRecord: GlobalReplay._config,
    rec.RegisterBrokerRecord: GlobalReplay._register,
    rec.UnregisterBrokerRecord: GlobalReplay._unregister,
    rec.FenceBrokerRecord: lambda g, o, t, r: g._fence(o, t, r.id, True),
    rec.UnfenceBrokerRecord: lambda g, o, t, r: g._fence(o, t, r.id, False),
    rec.BrokerRegistrationChangeRecord: GlobalReplay._registration_change,
    rec.LeaderChangeMessage: GlobalReplay._leader_change,
}
