"""Kafka's ``auto.create.topics.enable`` for Metadata (3): a broker started with it, asked by a request
that allows it (``AllowAutoTopicCreation``, v4+; always for older versions) about topics that do not
exist, asks the controller to create them and answers at once, without waiting (Kafka's
DefaultAutoTopicCreationManager): those topics get UNKNOWN_TOPIC_OR_PARTITION (3) in this answer and
exist by a later one (illegal names already have INVALID_TOPIC_EXCEPTION and are not sent). The topics
are created with the broker's ``num.partitions`` and ``default.replication.factor`` where it was
started with them, else with -1, the controller's defaults, as Kafka's broker sends them.
"""
from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import CreateTopicsRequest, MetadataRequest, MetadataResponse

from .nodes import BrokerNodeApi

ENABLE = "auto.create.topics.enable"
CREATE_TIMEOUT_MS = 30_000
_log = logging.getLogger(__name__)
_sent: set[asyncio.Task] = set()  # creations under way: held so they are not collected before they finish
# Per broker, the topics it has asked for and not yet heard back about: asked again meanwhile (clients
# retry Metadata quickly), they are answered the same without a second request, as Kafka does.
_in_flight: weakref.WeakKeyDictionary[BrokerNodeApi, set[str]] = weakref.WeakKeyDictionary()


def _anything(name: str) -> bool:
    return True


def create_missing_topics(broker: BrokerNodeApi, request: MetadataRequest, response: MetadataResponse,
                          may_create: Callable[[str], bool] = _anything) -> MetadataResponse:
    """``response``, after sending the missing topics it names for creation when the broker and the
    request allow it; those the client may not create (``may_create``, the authorizer's CREATE) are
    answered TOPIC_AUTHORIZATION_FAILED instead."""
    if broker.startup_configs.get(ENABLE) != "true" or not request.allow_auto_topic_creation:
        return response
    missing = [topic.name for topic in response.topics
               if topic.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION and topic.name is not None]
    refused = {name for name in missing if not may_create(name)}
    if refused:
        missing = [name for name in missing if name not in refused]
        edited = response.replace(topics=[
            topic.replace(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED) if topic.name in refused
            and topic.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION else topic for topic in response.topics])
        assert isinstance(edited, MetadataResponse)
        response = edited
    asking = _in_flight.setdefault(broker, set())
    to_send = [name for name in missing if name not in asking]
    if to_send:
        asking.update(to_send)
        task = asyncio.get_running_loop().create_task(_create(broker, to_send, asking))
        _sent.add(task)
        task.add_done_callback(_sent.discard)
    return response


async def _create(broker: BrokerNodeApi, names: list[str], asking: set[str]) -> None:
    try:
        await _send_creation(broker, names)
    finally:
        asking.difference_update(names)


async def _send_creation(broker: BrokerNodeApi, names: list[str]) -> None:
    startup = broker.startup_configs
    partitions = int(startup.get("num.partitions", -1))
    replication = int(startup.get("default.replication.factor", -1))
    request = CreateTopicsRequest(topics=[
        CreateTopicsRequest.CreatableTopic(name=name, num_partitions=partitions, replication_factor=replication)
        for name in names], timeout_ms=CREATE_TIMEOUT_MS)
    try:
        answer = await broker.send_to_controller(request)
    except Exception as exc:  # the controller went away: a later Metadata request tries again
        _log.warning("broker %d could not ask for topics %s to be created: %s", broker.broker_id, names, exc)
        return
    for topic in answer.topics:
        if topic.error_code:
            _log.warning("auto-creation of topic %s failed: error %d %s", topic.name, topic.error_code,
                         topic.error_message)
