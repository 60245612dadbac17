"""OffsetCommit (8): a group's consumed positions, written to ``__consumer_offsets``.

Who: consumers and admin clients, on the group's coordinator. Needs READ on the group (every partition
GROUP_AUTHORIZATION_FAILED otherwise) and READ on each topic (TOPIC_AUTHORIZATION_FAILED per partition);
a topic the metadata does not hold is UNKNOWN_TOPIC_OR_PARTITION (v10 names topics by id:
UNKNOWN_TOPIC_ID), as KafkaApis checks. The group's rules (server/groups/offsets.py): a commit with
generation -1 and no member id is taken while the group is empty (and makes it), ILLEGAL_GENERATION,
UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS, OFFSET_METADATA_TOO_LARGE. Answered once
the records are committed. RetentionTimeMs (v2-4) is not kept: offsets.retention.minutes applies.
"""
from __future__ import annotations

import uuid

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import OffsetCommitRequest, OffsetCommitResponse
from kraftwire.server.metadata.acls import Operation, ResourceType
from kraftwire.server.wire.transport import RequestContext

from .authorization import authorized
from .group_errors import answer_or
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
    refused: dict[tuple[str, int], int] = {}
    for topic in request.topics:
        state = broker.image.topic(topic.name) if topic.name else None
        code = ErrorCode.NONE
        if not topic.name and version >= FIRST_VERSION_WITH_TOPIC_IDS:
            code = ErrorCode.UNKNOWN_TOPIC_ID
        elif not authorized(broker, context, Operation.READ, ResourceType.TOPIC, topic.name):
            code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        for p in topic.partitions:
            own = code
            if own == ErrorCode.NONE and (state is None or p.partition_index not in state.partitions):
                own = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            if own:
                refused[(topic.name, p.partition_index)] = own
    answer: OffsetCommitResponse = await answer_or(
        broker.group_call(request.group_id, lambda shard, now: shard.commit(request, version, refused, now)),
        lambda code: _all(request, code))
    return answer


def _all(request: OffsetCommitRequest, code: int) -> OffsetCommitResponse:
    return OffsetCommitResponse(topics=[OffsetCommitResponse.OffsetCommitResponseTopic(
        name=t.name, topic_id=t.topic_id, partitions=[OffsetCommitResponse.OffsetCommitResponsePartition(
            partition_index=p.partition_index, error_code=code) for p in t.partitions]) for t in request.topics])


def _name(broker: BrokerNodeApi, topic_id: uuid.UUID) -> str:
    state = broker.image.topics.get(topic_id)
    return state.name if state is not None else ""
