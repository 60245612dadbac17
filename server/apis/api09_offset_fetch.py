"""OffsetFetch (9): a group's committed offsets (several groups per request from v8).

Who: consumers and admin clients, on the groups' coordinator. Each group needs DESCRIBE on it
(GROUP_AUTHORIZATION_FAILED for that group), each topic DESCRIBE (TOPIC_AUTHORIZATION_FAILED per
partition when named; left out when listing all). A partition without a commit is offset -1 with no
error; a group this broker does not coordinate is NOT_COORDINATOR. Topics null: every committed
partition. RequireStable (v7+) changes nothing: kraftwire writes no transactional offsets. v10 names
topics by id.
"""
from __future__ import annotations

import uuid
from typing import Any

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.messages import OffsetFetchRequest, OffsetFetchResponse
from kraftwire.server.metadata.acls import Operation, ResourceType
from kraftwire.server.wire.transport import RequestContext

from .authorization import authorized
from .nodes import BrokerNodeApi

API_KEY = 9
FIRST_BATCHED_VERSION = 8
FIRST_VERSION_WITH_TOPIC_IDS = 10
ZERO_UUID = uuid.UUID(int=0)
Part = OffsetFetchResponse.OffsetFetchResponsePartitions


async def on_broker(broker: BrokerNodeApi, context: RequestContext,
                    request: OffsetFetchRequest) -> OffsetFetchResponse:
    version = context.api_version
    if version >= FIRST_BATCHED_VERSION:
        groups = [(g.group_id, _wanted(broker, g.topics, version)) for g in request.groups]
    else:
        old = None if request.topics is None else [(t.name, list(t.partition_indexes)) for t in request.topics]
        groups = [(request.group_id, old)]
    answers = [await _group(broker, context, group_id, wanted) for group_id, wanted in groups]
    if version >= FIRST_BATCHED_VERSION:
        return OffsetFetchResponse(groups=[_group_answer(broker, g, code, parts, version)
                                           for g, code, parts in answers])
    _, code, parts = answers[0]
    topics = [OffsetFetchResponse.OffsetFetchResponseTopic(name=name, partitions=[
        OffsetFetchResponse.OffsetFetchResponsePartition(
            partition_index=p.partition_index, committed_offset=p.committed_offset,
            committed_leader_epoch=p.committed_leader_epoch, metadata=p.metadata, error_code=p.error_code)
        for p in ps]) for name, ps in parts.items()]
    return OffsetFetchResponse(topics=topics, error_code=code)


def _wanted(broker: BrokerNodeApi, topics: Any, version: int) -> list[tuple[str, list[int]]] | None:
    if topics is None:
        return None
    if version >= FIRST_VERSION_WITH_TOPIC_IDS:
        named = []
        for t in topics:
            state = broker.image.topics.get(t.topic_id)
            named.append((state.name if state is not None else "", list(t.partition_indexes)))
        return named
    return [(t.name, list(t.partition_indexes)) for t in topics]


async def _group(broker: BrokerNodeApi, context: RequestContext, group_id: str,
                 wanted: list[tuple[str, list[int]]] | None) -> tuple[str, int, dict[str, list[Part]]]:
    if not authorized(broker, context, Operation.DESCRIBE, ResourceType.GROUP, group_id):
        return group_id, ErrorCode.GROUP_AUTHORIZATION_FAILED, {}
    try:
        found = await broker.group_call(group_id, lambda shard, now: shard.fetch_offsets(group_id, wanted))
    except KafkaError as exc:
        return group_id, exc.code, {}
    parts: dict[str, list[Part]] = {}
    if wanted is None:
        for (topic, index), c in sorted(found.items()):
            if authorized(broker, context, Operation.DESCRIBE, ResourceType.TOPIC, topic):
                parts.setdefault(topic, []).append(_part(index, c))
        return group_id, ErrorCode.NONE, parts
    for topic, indexes in wanted:
        allowed = authorized(broker, context, Operation.DESCRIBE, ResourceType.TOPIC, topic)
        parts[topic] = [_part(i, found.get((topic, i))) if allowed else
                        Part(partition_index=i, committed_offset=-1, committed_leader_epoch=-1, metadata="",
                             error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED) for i in indexes]
    return group_id, ErrorCode.NONE, parts


def _part(index: int, committed: Any) -> Part:
    if committed is None:
        return Part(partition_index=index, committed_offset=-1, committed_leader_epoch=-1, metadata="",
                    error_code=ErrorCode.NONE)
    return Part(partition_index=index, committed_offset=committed.offset, committed_leader_epoch=committed.leader_epoch,
                metadata=committed.metadata, error_code=ErrorCode.NONE)


def _group_answer(broker: BrokerNodeApi, group_id: str, code: int, parts: dict[str, list[Part]],
                  version: int) -> OffsetFetchResponse.OffsetFetchResponseGroup:
    topics = []
    for name, ps in parts.items():
        state = broker.image.topic(name) if version >= FIRST_VERSION_WITH_TOPIC_IDS else None
        topics.append(OffsetFetchResponse.OffsetFetchResponseTopics(
            name=name, topic_id=state.topic_id if state is not None else ZERO_UUID, partitions=ps))
    return OffsetFetchResponse.OffsetFetchResponseGroup(group_id=group_id, topics=topics, error_code=code)
