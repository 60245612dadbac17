"""OffsetCommit (8): a group's consumed positions, written to ``__consumer_offsets``.

Who: consumers and admin clients, on the group's coordinator. Needs READ on the group (every partition
GROUP_AUTHORIZATION_FAILED otherwise) and READ on each topic (TOPIC_AUTHORIZATION_FAILED per partition);
a topic the metadata does not hold is UNKNOWN_TOPIC_OR_PARTITION (v10 names topics by id:
UNKNOWN_TOPIC_ID), as KafkaApis checks; those refusals come first in the answer, and a request with
nothing else is answered without asking the coordinator (so not NOT_COORDINATOR), as Kafka does. The
group's rules (server/groups/offsets.py): a commit with generation -1 is taken while the group is empty
or missing (and makes it), GROUP_ID_NOT_FOUND (v9+) for a missing group otherwise, ILLEGAL_GENERATION,
UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS, OFFSET_METADATA_TOO_LARGE. Answered once
the records are committed. RetentionTimeMs (v2-4) is not kept: offsets.retention.minutes applies.
"""
from __future__ import annotations

import uuid
from typing import Any

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.messages import OffsetCommitRequest, OffsetCommitResponse
from kraftwire.server.metadata.acls import Operation, ResourceType
from kraftwire.server.wire.transport import RequestContext

from .authorization import authorized
from .nodes import BrokerNodeApi

API_KEY = 8
FIRST_VERSION_WITH_TOPIC_IDS = 10


async def on_broker(broker: BrokerNodeApi, context: RequestContext,
                    request: OffsetCommitRequest) -> OffsetCommitResponse:
    version = context.api_version
    if version >= FIRST_VERSION_WITH_TOPIC_IDS:  # names from ids, for the shard's keys
        named = request.replace(topics=[t.replace(name=_name(broker, t.topic_id)) for t in request.topics])
        assert isinstance(named, OffsetCommitRequest)
        request = named
    if not authorized(broker, context, Operation.READ, ResourceType.GROUP, request.group_id):
        return _all(request, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    answer: _Answer = {}
    valid = []
    for topic in request.topics:
        state = broker.image.topic(topic.name) if topic.name else None
        code = ErrorCode.NONE
        if not topic.name and version >= FIRST_VERSION_WITH_TOPIC_IDS:
            code = ErrorCode.UNKNOWN_TOPIC_ID
        elif not authorized(broker, context, Operation.READ, ResourceType.TOPIC, topic.name):
            code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        elif state is None:
            code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        kept = []
        for p in topic.partitions:
            if code or state is None or p.partition_index not in state.partitions:
                _add(answer, topic, p.partition_index, code or ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            else:
                kept.append(p)
        if kept:
            valid.append(topic.replace(partitions=kept))
    if not valid:  # nothing for the coordinator: Kafka answers the refusals without asking it
        return _response(answer)
    asked = request.replace(topics=valid)
    assert isinstance(asked, OffsetCommitRequest)
    try:
        committed: OffsetCommitResponse = await broker.group_call(
            request.group_id, lambda shard, now: shard.commit(asked, version, {}, now))
    except KafkaError as exc:
        return _all(request, exc.code)
    for answered in committed.topics:
        for part in answered.partitions:
            _add(answer, answered, part.partition_index, part.error_code)
    return _response(answer)


_Answer = dict[tuple[str, Any], list[OffsetCommitResponse.OffsetCommitResponsePartition]]


def _add(answer: _Answer, topic: Any, partition: int, code: int) -> None:
    """One partition's code under its topic, the topic listed where it first appears (the order of
    Kafka's OffsetCommitResponse.Builder: the handler's refusals, then the coordinator's answers)."""
    answer.setdefault((topic.name, topic.topic_id), []).append(
        OffsetCommitResponse.OffsetCommitResponsePartition(partition_index=partition, error_code=code))


def _response(answer: _Answer) -> OffsetCommitResponse:
    return OffsetCommitResponse(topics=[OffsetCommitResponse.OffsetCommitResponseTopic(
        name=name, topic_id=topic_id, partitions=parts) for (name, topic_id), parts in answer.items()])


def _all(request: OffsetCommitRequest, code: int) -> OffsetCommitResponse:
    return OffsetCommitResponse(topics=[OffsetCommitResponse.OffsetCommitResponseTopic(
        name=t.name, topic_id=t.topic_id, partitions=[OffsetCommitResponse.OffsetCommitResponsePartition(
            partition_index=p.partition_index, error_code=code) for p in t.partitions]) for t in request.topics])


def _name(broker: BrokerNodeApi, topic_id: uuid.UUID) -> str:
    state = broker.image.topics.get(topic_id)
    return state.name if state is not None else ""
