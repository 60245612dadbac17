"""Topic deletion, DeleteTopics (20): delete topics by name (v0+) or by id (v6+).

Pure: ``decide(image, request, rng)`` returns the ``ControllerResult`` (``rng`` shuffles the results).

Who: admin clients, through any broker (forwarded) or on the controller listener. Follows Kafka's
ControllerApis.deleteTopics: v0-5 name topics in ``TopicNames``, v6 in ``Topics``, each entry with a
name or an id but not both, nor neither (INVALID_REQUEST). A name or id given twice is INVALID_REQUEST
("Duplicate topic name." / "Duplicate topic id."), and so is a name whose topic's id is also given
(then neither entry deletes). Unknown names get UNKNOWN_TOPIC_OR_PARTITION (3), unknown ids
UNKNOWN_TOPIC_ID (100), with Kafka's stock messages. Each deleted topic is one RemoveTopicRecord (its
partitions and configs go with it on replay); all deletions of a request are one atomic batch.
As Kafka does, the results come in random order, so that their positions reveal nothing.

Deliberate differences: ``TimeoutMs`` is not enforced; topic deletion is always enabled
(``delete.topic.enable``); there are no ACLs or quotas.
"""
from __future__ import annotations

import random
import uuid

from kraftwire.codec import ErrorCode
from kraftwire.codec import records as rec
from kraftwire.codec.constants import ZERO_UUID
from kraftwire.codec.messages import DeleteTopicsRequest, DeleteTopicsResponse
from kraftwire.server.metadata.image import MetadataImage

from ..result import ControllerResult
from ..topics import RNG, split_duplicates

UNKNOWN_TOPIC_MESSAGE = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.message
UNKNOWN_TOPIC_ID_MESSAGE = ErrorCode.UNKNOWN_TOPIC_ID.message
Result = DeleteTopicsResponse.DeletableTopicResult


def decide(image: MetadataImage, request: DeleteTopicsRequest, rng: random.Random = RNG) -> ControllerResult:
    """The RemoveTopicRecords and DeleteTopicsResponse."""
    results: list[Result] = []

    def answer(name: str | None, topic_id: uuid.UUID, code: int = 0, message: str | None = None) -> None:
        results.append(Result(name=name, topic_id=topic_id, error_code=code, error_message=message))

    given_names: list[str] = list(request.topic_names)
    given_ids: list[uuid.UUID] = []
    for entry in request.topics:
        if entry.name is None and entry.topic_id == ZERO_UUID:
            answer(None, ZERO_UUID, ErrorCode.INVALID_REQUEST, "Neither topic name nor id were specified.")
        elif entry.name is None:
            given_ids.append(entry.topic_id)
        elif entry.topic_id == ZERO_UUID:
            given_names.append(entry.name)
        else:
            answer(entry.name, entry.topic_id, ErrorCode.INVALID_REQUEST,
                   "You may not specify both topic name and topic id.")
    names, repeated_names = split_duplicates(given_names)
    ids, repeated_ids = split_duplicates(given_ids)
    for name in repeated_names:
        answer(name, ZERO_UUID, ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
    for topic_id in repeated_ids:
        answer(None, topic_id, ErrorCode.INVALID_REQUEST, "Duplicate topic id.")

    doomed: dict[uuid.UUID, str] = {}  # topic id -> name
    for topic_id in ids:
        topic = image.topics.get(topic_id)
        if topic is None:
            answer(None, topic_id, ErrorCode.UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_ID_MESSAGE)
        else:
            doomed[topic_id] = topic.name
    for name in names:
        topic = image.topic(name)
        if topic is None:
            answer(name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_MESSAGE)
        elif topic.topic_id in doomed or topic.topic_id in repeated_ids:
            doomed.pop(topic.topic_id, None)
            answer(name, topic.topic_id, ErrorCode.INVALID_REQUEST,
                   "The provided topic name maps to an ID that was already supplied.")
        else:
            doomed[topic.topic_id] = name
    for topic_id, name in doomed.items():
        answer(name, topic_id)
    rng.shuffle(results)
    records = [rec.RemoveTopicRecord(topic_id=topic_id) for topic_id in doomed]
    return ControllerResult(records, DeleteTopicsResponse(throttle_time_ms=0, responses=results))
