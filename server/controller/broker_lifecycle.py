"""Pure decisions of the broker lifecycle: fencing and unfencing, with their partition changes.

Fencing a broker (missed heartbeats, or it asked to be fenced) takes it out of every ISR and
leadership; unfencing lets leaderless partitions whose ISR holds it elect it again. Each is one
BrokerRegistrationChangeRecord (Fenced: 1 fence, -1 unfence) followed by PartitionChangeRecords.
"""
from __future__ import annotations

from dataclasses import replace

from kraftwire.codec import records as rec
from kraftwire.codec.constants import FENCE, NO_LEADER, UNFENCE, ConfigResourceType

from kraftwire.server.metadata.image import MetadataImage
from .partition_change import Election, build_change

UNCLEAN_ELECTION_KEY = "unclean.leader.election.enable"


def election_for(image: MetadataImage, topic_name: str) -> Election:
    """UNCLEAN where the topic (or the cluster default) allows unclean leader election."""
    value = image.configs.get((ConfigResourceType.TOPIC, topic_name), {}).get(UNCLEAN_ELECTION_KEY)
    if value is None:
        value = image.configs.get((ConfigResourceType.BROKER, ""), {}).get(UNCLEAN_ELECTION_KEY, "false")
    return Election.UNCLEAN if value.lower() == "true" else Election.ONLINE


def fence_broker(image: MetadataImage, broker_id: int) -> list:
    broker = image.brokers.get(broker_id)
    if broker is None or broker.fenced:
        return []
    records = [rec.BrokerRegistrationChangeRecord(broker_id=broker_id, broker_epoch=broker.epoch, fenced=FENCE)]
    brokers = {**image.brokers, broker_id: replace(broker, fenced=True)}
    led_or_in_sync = [(topic.topic_id, index) for topic, index, state in image.partitions()
                      if broker_id in state.isr or state.leader == broker_id]
    return records + move_off_broker(image, broker_id, led_or_in_sync, brokers)


def move_off_broker(image: MetadataImage, broker_id: int, partitions, brokers=None) -> list:
    """Take ``broker_id`` out of the ISR and leadership of ``partitions`` ((topic id, index) pairs),
    electing new leaders where needed (UNCLEAN where the topic allows it): Kafka's
    generateLeaderAndIsrUpdates with a broker to remove. Each change is computed from ``image``."""
    records = []
    for topic_id, index in partitions:
        topic = image.topics[topic_id]
        change = build_change(brokers or image.brokers, topic_id, index, topic.partitions[index],
                              ineligible=frozenset({broker_id}), election=election_for(image, topic.name))
        if change is not None:
            records.append(change)
    return records


def unfence_broker(image: MetadataImage, broker_id: int) -> list:
    broker = image.brokers.get(broker_id)
    if broker is None or not broker.fenced:
        return []
    records = [rec.BrokerRegistrationChangeRecord(broker_id=broker_id, broker_epoch=broker.epoch, fenced=UNFENCE)]
    brokers = {**image.brokers, broker_id: replace(broker, fenced=False)}
    for topic, index, state in image.partitions():
        if state.leader == NO_LEADER and broker_id in state.replicas:
            change = build_change(brokers, topic.topic_id, index, state, election=election_for(image, topic.name))
            if change is not None:
                records.append(change)
    return records
