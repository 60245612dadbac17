"""Metadata (3): brokers, controller and topic/partition state, from the committed image.

Who: any client, on a broker listener. ``Topics`` null (v1+) or empty (v0) means every topic; v10+
may name topics by id. Unknown topics get UNKNOWN_TOPIC_OR_PARTITION (3) (UNKNOWN_TOPIC_ID (100) by
id); kraftwire never auto-creates topics (it serves no Produce), as if auto.create.topics.enable were
false. Only unfenced brokers are listed; ``ControllerId`` is a random live broker, as KRaft brokers
report it (clients send controller-bound requests there and the broker forwards them). During a
reassignment ``ReplicaNodes`` is the merged replica list. Leaderless partitions carry
LEADER_NOT_AVAILABLE (5); ``OfflineReplicas`` (v5+) lists replicas whose broker is fenced or missing or
whose directory is offline.

With an authorizer (server/apis/authorization.py) a topic needs DESCRIBE: "all topics" lists only
those, a topic named without it gets TOPIC_AUTHORIZATION_FAILED (29) whether it exists or not, and one
named by id gets UNKNOWN_TOPIC_ID, as Kafka answers so that ids do not reveal topics.

The answer to "all topics" is encoded once per image version and served from that cache (without an
authorizer: the answer is then the same for everyone).
"""
from __future__ import annotations

import random

from kraftwire.codec.messages import MetadataResponse
from kraftwire.codec import ErrorCode
from kraftwire.codec.constants import NO_LEADER, ZERO_UUID
from kraftwire.server.metadata.acls import Operation, ResourceType

from .authorization import authorized


API_KEY = 3
Topic = MetadataResponse.MetadataResponseTopic
Partition = MetadataResponse.MetadataResponsePartition


class EncodedBody:
    """A response body already encoded for one version (what the transport writes as is)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes):
        self.data = data

    def encode_into(self, out: bytearray, version: int) -> None:
        out += self.data


def live_broker_id(image, rng=random) -> int:
    live = [b.broker_id for b in image.brokers.values() if not b.fenced]
    return rng.choice(live) if live else -1


def _partition(image, index, state) -> Partition:
    offline = tuple(b for b in state.replicas
                    if (broker := image.brokers.get(b)) is None or broker.fenced
                    or not broker.has_online_dir(state.directory_of(b)))
    return Partition(error_code=ErrorCode.LEADER_NOT_AVAILABLE if state.leader == NO_LEADER else ErrorCode.NONE,
                     partition_index=index, leader_id=state.leader, leader_epoch=state.leader_epoch,
                     replica_nodes=state.replicas, isr_nodes=state.isr, offline_replicas=offline)


def _topic(image, topic) -> Topic:
    return Topic(error_code=ErrorCode.NONE, name=topic.name, topic_id=topic.topic_id, is_internal=False,
                 partitions=[_partition(image, i, s) for i, s in sorted(topic.partitions.items())])


def build_response(image, request, version: int, broker, may_describe=lambda name: True) -> MetadataResponse:
    brokers = [MetadataResponse.MetadataResponseBroker(node_id=b.broker_id, host=e.host, port=e.port, rack=b.rack)
               for b in sorted(image.brokers.values(), key=lambda b: b.broker_id) if not b.fenced
               for e in b.endpoints if e.name == broker.listener_name]
    wanted = request.topics
    if wanted is None or (version == 0 and not wanted):
        topics = [_topic(image, t) for t in sorted(image.topics.values(), key=lambda t: t.name) if may_describe(t.name)]
    else:
        topics = []
        for entry in wanted:
            if entry.name is None and entry.topic_id != ZERO_UUID:
                topic = image.topics.get(entry.topic_id)
                missing = Topic(error_code=ErrorCode.UNKNOWN_TOPIC_ID, name=None, topic_id=entry.topic_id)
                if topic is not None and not may_describe(topic.name):
                    topic = None
            elif not may_describe(entry.name):
                topic, missing = None, Topic(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, name=entry.name)
            else:
                topic = image.topic(entry.name)
                missing = Topic(error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name=entry.name)
            topics.append(missing if topic is None else _topic(image, topic))
    return MetadataResponse(brokers=brokers, cluster_id=broker.cluster_id, controller_id=live_broker_id(image),
                            topics=topics)


def on_broker(broker, context, request):
    image = broker.image
    version = context.api_version
    if broker.authorizer is not None:
        return build_response(image, request, version, broker, lambda name: authorized(
            broker, context, Operation.DESCRIBE, ResourceType.TOPIC, name))
    if request.topics is not None or version == 0:
        return build_response(image, request, version, broker)
    cache = broker.metadata_cache
    key = (image.version, version)
    cached = cache.get(key)
    if cached is None:
        cache.clear()  # the image moved on: older encodings are stale
        body = bytearray()
        build_response(image, request, version, broker).encode_into(body, version)
        cached = cache[key] = EncodedBody(bytes(body))
    return cached
