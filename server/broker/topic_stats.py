"""What a broker counts as Kafka's ``BrokerTopicMetrics`` do: per topic and for all topics, bytes and
messages produced, bytes fetched by consumers, produce and fetch requests and their failures, and for
all topics the bytes followers fetched over Fetch (``ReplicationBytesOut``, ``ReassignmentBytesOut``).

Counts only grow (the host's /metrics turns them into Prometheus counters); they are kept per broker
(``BrokerNode.topic_stats``) and bumped by the Produce and Fetch paths as they answer, as Kafka's
``ReplicaManager`` marks its meters: a produce request per partition that reached the log (after the
checks of KafkaApis), its bytes and messages once appended; a fetch per partition read, its bytes for a
consumer, or, for a follower, as replication bytes (and reassignment bytes when the follower is a
replica being added). The copies the replication network simulates count their bytes there
(``ReplicationNetwork.replication_bytes``), not here.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class TopicCounts:
    """One topic's (or all topics') counts since the broker was built."""

    bytes_in: int = 0
    messages_in: int = 0
    bytes_out: int = 0
    produce_requests: int = 0
    failed_produce_requests: int = 0
    fetch_requests: int = 0
    failed_fetch_requests: int = 0


@dataclass(slots=True)
class BrokerTopicStats:
    """A broker's counts: ``topics`` by topic name, ``all_topics`` over every topic (kept apart, as
    Kafka's all-topics meters are, so it keeps counting what a deleted topic had), and the bytes
    followers fetched from this broker over Fetch."""

    topics: dict[str, TopicCounts] = field(default_factory=dict)
    all_topics: TopicCounts = field(default_factory=TopicCounts)
    replication_bytes_out: int = 0
    reassignment_bytes_out: int = 0

    def _topic(self, name: str) -> TopicCounts:
        counts = self.topics.get(name)
        if counts is None:
            counts = self.topics[name] = TopicCounts()
        return counts

    def produce_request(self, topic: str, failed: bool) -> None:
        """One partition of a Produce reached the log (and was refused there when ``failed``)."""
        for counts in (self._topic(topic), self.all_topics):
            counts.produce_requests += 1
            counts.failed_produce_requests += failed

    def produced(self, topic: str, size_bytes: int, messages: int) -> None:
        """A leader appended ``messages`` records in ``size_bytes`` bytes of batches."""
        for counts in (self._topic(topic), self.all_topics):
            counts.bytes_in += size_bytes
            counts.messages_in += messages

    def fetch_request(self, topic: str, failed: bool, size_bytes: int, follower: bool, adding: bool) -> None:
        """One partition of a Fetch was answered with ``size_bytes`` of records: a consumer's count as
        bytes out, a follower's as replication bytes (and reassignment bytes for an ``adding`` one)."""
        for counts in (self._topic(topic), self.all_topics):
            counts.fetch_requests += 1
            counts.failed_fetch_requests += failed
            if not follower:
                counts.bytes_out += size_bytes
        if follower:
            self.replication_bytes_out += size_bytes
            if adding:
                self.reassignment_bytes_out += size_bytes
