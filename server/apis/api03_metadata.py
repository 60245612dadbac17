"""Metadata (3): brokers, controller and topic/partition state, from the committed image.

Who: any client, on a broker listener. ``Topics`` null (v1+) or empty (v0) means every topic; v10+
may name topics by id. Unknown topics get UNKNOWN_TOPIC_OR_PARTITION (3) (UNKNOWN_TOPIC_ID (100) by
id), or INVALID_TOPIC_EXCEPTION (17) when the name is illegal (Kafka's ``Topic.validate``); a cluster
started with auto.create.topics.enable creates them (``auto_topic_creation``). Only unfenced brokers are
listed; ``ControllerId`` is a random live broker, as KRaft brokers
report it (clients send controller-bound requests there and the broker forwards them). During a
reassignment ``ReplicaNodes`` is the merged replica list. Leaderless partitions carry
LEADER_NOT_AVAILABLE (5); ``OfflineReplicas`` (v5+) lists replicas whose broker is fenced or missing or
whose directory is offline. v0 answers, as Kafka's, leave out replicas (and ISR members) whose broker
is fenced or missing, and a partition with a leader that lost some that way carries
REPLICA_NOT_AVAILABLE (9). v10 and v11 requests naming a topic by id or without a name are invalid
(Kafka: "Topic IDs are not supported in requests for version ..."): every topic asked for is answered
INVALID_REQUEST (42), a null name as "", in the shape of Kafka's generic error response.

With an authorizer (server/apis/authorization.py) a topic needs DESCRIBE: "all topics" lists only
those, a topic named without it gets TOPIC_AUTHORIZATION_FAILED (29) whether it exists or not, and one
named by id gets UNKNOWN_TOPIC_ID, as Kafka answers so that ids do not reveal topics. Auto-creation
also needs CREATE on the cluster or the topic; a missing topic without it gets TOPIC_AUTHORIZATION_FAILED.

The answer to "all topics" is encoded once per image version and served from that cache (without an
authorizer: the answer is then the same for everyone). Each topic's part of it is kept too, by the
topic's change count and the brokers' states, so that after a change only the topics it touched are
encoded again: in a cluster of millions of partitions the image moves all the time.
"""
from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from kraftwire.codec.messages import MetadataRequest, MetadataResponse
from kraftwire.codec import ErrorCode
from kraftwire.codec.constants import NO_LEADER, ZERO_UUID
from kraftwire.codec.primitives import write_uvarint
from kraftwire.server.controller.topics import invalid_name_reason
from kraftwire.server.metadata.acls import Operation, ResourceType
from kraftwire.server.metadata.image import MetadataImage, PartitionState, TopicState
from kraftwire.server.wire.transport import Encoded, RequestContext

from .authorization import authorized
from kraftwire.server.metadata.fast_paths import missing_topic

from .auto_topic_creation import create_missing_topics
from .nodes import BrokerNodeApi

API_KEY = 3
FIRST_TOPIC_ID_VERSION = 12  # v10 and v11 carry the TopicId field, but Kafka refuses requests that use it
Topic = MetadataResponse.MetadataResponseTopic
Partition = MetadataResponse.MetadataResponsePartition


class _Chooser(Protocol):
    def choice(self, seq: Sequence[int]) -> int: ...


def live_broker_id(image: MetadataImage, rng: _Chooser = random) -> int:
    live = [b.broker_id for b in image.brokers.values() if not b.fenced]
    return rng.choice(live) if live else -1


def _partition(image: MetadataImage, index: int, state: PartitionState, only_available: bool = False) -> Partition:
    def available(broker_id: int) -> bool:
        return (broker := image.brokers.get(broker_id)) is not None and not broker.fenced

    offline = tuple(b for b in state.replicas
                    if not available(b) or not image.brokers[b].has_online_dir(state.directory_of(b)))
    error = ErrorCode.LEADER_NOT_AVAILABLE if state.leader == NO_LEADER else ErrorCode.NONE
    replicas, isr = state.replicas, state.isr
    if only_available:  # v0: Kafka's filterUnavailableEndpoints
        replicas, isr = tuple(b for b in replicas if available(b)), tuple(b for b in isr if available(b))
        if error == ErrorCode.NONE and (len(replicas) < len(state.replicas) or len(isr) < len(state.isr)):
            error = ErrorCode.REPLICA_NOT_AVAILABLE
    return Partition(error_code=error, partition_index=index, leader_id=state.leader,
                     leader_epoch=state.leader_epoch, replica_nodes=replicas, isr_nodes=isr,
                     offline_replicas=offline)


def _topic(image: MetadataImage, topic: TopicState, version: int) -> Topic:
    return Topic(error_code=ErrorCode.NONE, name=topic.name, topic_id=topic.topic_id, is_internal=False,
                 partitions=[_partition(image, i, s, version == 0) for i, s in sorted(topic.partitions.items())])




def _anything(name: str | None) -> bool:
    return True


def build_response(image: MetadataImage, request: MetadataRequest, version: int, broker: BrokerNodeApi,
                   may_describe: Callable[[str | None], bool] = _anything) -> MetadataResponse:
    brokers = [MetadataResponse.MetadataResponseBroker(node_id=b.broker_id, host=e.host, port=e.port, rack=b.rack)
               for b in sorted(image.brokers.values(), key=lambda b: b.broker_id) if not b.fenced
               for e in b.endpoints if e.name == broker.listener_name]
    wanted = request.topics
    if wanted is None or (version == 0 and not wanted):
        topics = [_topic(image, t, version) for t in sorted(image.topics.values(), key=lambda t: t.name)
                  if may_describe(t.name)]
    else:
        topics = []
        missing: tuple[int, str | None, uuid.UUID]
        topic: TopicState | None
        for entry in wanted:
            if entry.name is None and entry.topic_id != ZERO_UUID:
                topic = image.topics.get(entry.topic_id)
                missing = (ErrorCode.UNKNOWN_TOPIC_ID, None, entry.topic_id)
                if topic is not None and not may_describe(topic.name):
                    topic = None
            elif not may_describe(entry.name):
                topic, missing = None, (ErrorCode.TOPIC_AUTHORIZATION_FAILED, entry.name, ZERO_UUID)
            else:
                topic = image.topic(entry.name) if entry.name is not None else None
                illegal = entry.name is not None and invalid_name_reason(entry.name) is not None
                missing = (ErrorCode.INVALID_TOPIC_EXCEPTION if illegal else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                           entry.name, ZERO_UUID)
            topics.append(missing_topic(*missing) if topic is None else _topic(image, topic, version))
    return MetadataResponse(brokers=brokers, cluster_id=broker.cluster_id, controller_id=live_broker_id(image),
                            topics=topics)


def _uses_topic_ids_too_early(request: MetadataRequest, version: int) -> bool:
    return version < FIRST_TOPIC_ID_VERSION and request.topics is not None and any(
        t.name is None or t.topic_id != ZERO_UUID for t in request.topics)


def invalid_request_response(request: MetadataRequest) -> MetadataResponse:
    """Kafka's generic Metadata error answer: each topic asked for, with INVALID_REQUEST and no partitions."""
    return MetadataResponse(brokers=[], cluster_id=None, controller_id=-1, topics=[
        Topic(error_code=ErrorCode.INVALID_REQUEST, name="" if t.name is None else t.name, topic_id=t.topic_id,
              is_internal=False, partitions=[]) for t in request.topics or ()])


def may_create(broker: BrokerNodeApi, context: RequestContext, name: str) -> bool:
    """Auto-creation needs CREATE on the cluster or on the topic, as Kafka asks."""
    return (authorized(broker, context, Operation.CREATE)
            or authorized(broker, context, Operation.CREATE, ResourceType.TOPIC, name))


def on_broker(broker: BrokerNodeApi, context: RequestContext, request: MetadataRequest) -> MetadataResponse | Encoded:
    image = broker.image
    version = context.api_version
    if request.topics is None and version and broker.authorizer is None:  # all topics, the same for everyone
        cache = broker.metadata_cache
        cached = cache.get("answer")
        if cached is None or cached[0] != image.version or cached[1] != version:
            cached = cache["answer"] = (image.version, version,
                                        Encoded(_all_topics_body(image, version, broker, cache)))
        return cached[2]
    if _uses_topic_ids_too_early(request, version):
        return invalid_request_response(request)
    if broker.authorizer is not None:
        return _authorized_answer(broker, context, request, image, version)
    return create_missing_topics(broker, request, build_response(image, request, version, broker))


def _authorized_answer(broker: BrokerNodeApi, context: RequestContext, request: MetadataRequest,
                       image: MetadataImage, version: int) -> MetadataResponse:
    """The answer with an authorizer: topics without DESCRIBE left out or refused, creation needing CREATE."""
    response = build_response(image, request, version, broker, lambda name: name is not None and authorized(
        broker, context, Operation.DESCRIBE, ResourceType.TOPIC, name))
    answer = create_missing_topics(broker, request, response, lambda name: may_create(broker, context, name))
    if not (request.include_topic_authorized_operations and version >= 8):
        return answer
    return answer.replace(topics=[t if t.error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED or t.name is None
                                  else t.replace(topic_authorized_operations=_topic_operations(broker, context, t.name))
                                  for t in answer.topics])


# The operations a topic's authorized-operations bits report (Kafka's: a bit 1 << code for each allowed)
_TOPIC_OPERATIONS = (Operation.READ, Operation.WRITE, Operation.CREATE, Operation.DELETE, Operation.ALTER,
                     Operation.DESCRIBE, Operation.DESCRIBE_CONFIGS, Operation.ALTER_CONFIGS)


def _topic_operations(broker: BrokerNodeApi, context: RequestContext, name: str) -> int:
    return sum(1 << op for op in _TOPIC_OPERATIONS if authorized(broker, context, op, ResourceType.TOPIC, name))


def _suffix_size(version: int) -> int:
    """Bytes a MetadataResponse holds after its Topics array: ClusterAuthorizedOperations (v8-10),
    ErrorCode (v13+) and the tagged fields (v9+, none set)."""
    return 4 * (8 <= version <= 10) + 2 * (version >= 13) + (version >= 9)


def _encoded(response: MetadataResponse, version: int) -> bytes:
    body = bytearray()
    response.encode_into(body, version)
    return bytes(body)


def _topic_bytes(image: MetadataImage, topic: TopicState, version: int) -> bytes:
    """One topic's entry as the Topics array holds it: cut from a response holding only that topic
    (its count, 1, has the size of an empty array's count, 0, in every version)."""
    empty = _encoded(MetadataResponse(brokers=[], topics=[]), version)
    alone = _encoded(MetadataResponse(brokers=[], topics=[_topic(image, topic, version)]), version)
    suffix = _suffix_size(version)
    return alone[len(empty) - suffix:len(alone) - suffix]


def _all_topics_body(image: MetadataImage, version: int, broker: BrokerNodeApi, cache: dict[str, Any]) -> bytes:
    """The all-topics answer: the head (brokers, cluster and controller ids) encoded afresh, the
    topics' entries reused where neither the topic nor any broker changed since they were encoded."""
    brokers_now = tuple(image.brokers.values())
    # one version's entries only: at millions of partitions each version's would be a whole answer
    kept_version, kept_brokers, kept = cache.get("topics", (None, (), {}))
    if kept_version != version or kept_brokers != brokers_now:
        kept = {}
    fresh, parts = {}, []
    for topic in sorted(image.topics.values(), key=lambda t: t.name):
        entry = kept.get(topic.topic_id)
        if entry is None or entry[0] is not topic or entry[1] != topic.changes:
            entry = (topic, topic.changes, _topic_bytes(image, topic, version))
        fresh[topic.topic_id] = entry
        parts.append(entry[2])
    cache["topics"] = (version, brokers_now, fresh)
    head = _encoded(build_response(image, MetadataRequest(topics=[]), version, broker), version)
    suffix = _suffix_size(version)
    count_size = 1 if version >= 9 else 4  # an empty array's count: uvarint 1, or int32 0
    body = bytearray(head[:len(head) - suffix - count_size])
    if version >= 9:
        write_uvarint(body, len(parts) + 1)
    else:
        body += len(parts).to_bytes(4, "big")
    body += b"".join(parts)
    body += head[len(head) - suffix:]
    return bytes(body)
