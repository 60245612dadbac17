"""Pure decisions of the broker lifecycle: fencing and unfencing, with their partition changes, and
moving a broker off partitions. The records ``cluster_control`` (registration, heartbeats), the
active controller's session expiry and the harness's ``fence_broker`` write; ``election_for`` is also
the replication decisions' (the election a topic's configs allow).

Fencing a broker (missed heartbeats, or it asked to be fenced) takes it out of every ISR and
leadership; unfencing lets leaderless partitions whose ISR holds it elect it again. Each is one
BrokerRegistrationChangeRecord (Fenced: 1 fence, -1 unfence) followed by PartitionChangeRecords.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import replace

from kraftwire.codec import records as rec
from kraftwire.codec.constants import FENCE, NO_LEADER, UNFENCE, ConfigResourceType

from kraftwire.codec.message import Message
from kraftwire.server.metadata.image import BrokerState, MetadataImage
from kraftwire.server.metadata.record_versions import elr_enabled
from .partition_change import ChangeRules, Election, build_change, rules_for

UNCLEAN_ELECTION_KEY = "unclean.leader.election.enable"


def election_for(image: MetadataImage, topic_name: str) -> Election:
    """UNCLEAN where the topic (or the cluster default) allows unclean leader election."""
    value = image.configs.get((ConfigResourceType.TOPIC, topic_name), {}).get(UNCLEAN_ELECTION_KEY)
    if value is None:
        value = image.configs.get((ConfigResourceType.BROKER, ""), {}).get(UNCLEAN_ELECTION_KEY, "false")
    return Election.UNCLEAN if value.lower() == "true" else Election.ONLINE


class _TopicRules(dict[str, tuple[ChangeRules, Election]]):
    """A topic's change rules and election, worked out once per topic of a bulk change (they depend on
    its configs only, and a broker's fencing or restart changes every partition it holds)."""

    def __init__(self, image: MetadataImage):
        super().__init__()
        self.image = image

    def __missing__(self, topic_name: str) -> tuple[ChangeRules, Election]:
        value = self[topic_name] = rules_for(self.image, topic_name), election_for(self.image, topic_name)
        return value


def fence_broker(image: MetadataImage, broker_id: int) -> list[Message]:
    broker = image.brokers.get(broker_id)
    if broker is None or broker.fenced:
        return []
    records: list[Message] = [rec.BrokerRegistrationChangeRecord(broker_id=broker_id, broker_epoch=broker.epoch,
                                                                 fenced=FENCE)]
    return records + _leave_isrs(image, broker_id)


def _leave_isrs(image: MetadataImage, broker_id: int) -> list[Message]:
    """Take a broker being fenced out of the ISRs and leaderships it holds."""
    broker = image.brokers.get(broker_id)
    brokers = image.brokers if broker is None else {**image.brokers, broker_id: replace(broker, fenced=True)}
    led_or_in_sync = [(topic.topic_id, index) for topic, index, state in image.partitions()
                      if broker_id in state.isr or state.leader == broker_id]
    return move_off_broker(image, broker_id, led_or_in_sync, brokers)


def move_off_broker(image: MetadataImage, broker_id: int, partitions: Iterable[tuple[uuid.UUID, int]],
                    brokers: dict[int, BrokerState] | None = None, *, unclean_shutdown: bool = False) -> list[Message]:
    """Take ``broker_id`` out of the ISR and leadership of ``partitions`` ((topic id, index) pairs),
    electing new leaders where needed (UNCLEAN where the topic allows it): Kafka's
    generateLeaderAndIsrUpdates with a broker to remove, or, for a broker that restarted without a
    clean shutdown, one to take out of the eligible leader replicas as well. Each change is computed
    from ``image``."""
    records: list[Message] = []
    removed = frozenset({broker_id})
    ineligible, shut_down_unclean = (frozenset[int](), removed) if unclean_shutdown else (removed, frozenset[int]())
    topic_rules = _TopicRules(image)
    for topic_id, index in partitions:
        topic = image.topics[topic_id]
        rules, election = topic_rules[topic.name]
        change = build_change(brokers or image.brokers, topic_id, index, topic.partitions[index],
                              rules=rules, election=election, ineligible=ineligible,
                              unclean_shutdown=shut_down_unclean)
        if change is not None:
            records.append(change)
    return records


def restart_records(image: MetadataImage, broker_id: int, clean: bool) -> list[Message]:
    """What a new incarnation of a registered broker changes before it registers again (Kafka's
    handleBrokerShutdown): with eligible leader replicas on and no clean shutdown, the broker leaves
    every ISR and ELR it is in, since its log may have lost acknowledged records; otherwise it leaves
    the ISRs it is in (and so its leaderships), as a fenced broker does, but no fencing is written: the
    new registration is fenced itself."""
    if clean or not elr_enabled(image.features):
        return _leave_isrs(image, broker_id)
    in_isr_or_elr = [(topic.topic_id, index) for topic, index, state in image.partitions()
                     if broker_id in state.isr or broker_id in state.elr]
    return move_off_broker(image, broker_id, in_isr_or_elr, unclean_shutdown=True)


def unfence_broker(image: MetadataImage, broker_id: int) -> list[Message]:
    broker = image.brokers.get(broker_id)
    if broker is None or not broker.fenced:
        return []
    records: list[Message] = [rec.BrokerRegistrationChangeRecord(broker_id=broker_id, broker_epoch=broker.epoch,
                                                                 fenced=UNFENCE)]
    brokers = {**image.brokers, broker_id: replace(broker, fenced=False)}
    topic_rules = _TopicRules(image)
    for topic, index, state in image.partitions():
        if state.leader == NO_LEADER and broker_id in state.replicas:
            rules, election = topic_rules[topic.name]
            change = build_change(brokers, topic.topic_id, index, state, rules=rules, election=election)
            if change is not None:
                records.append(change)
    return records
