"""Injected errors: answer the next N requests of an API with an error code, for client retry tests.

``ErrorInjector.inject(api_key, code, count, topic=None, partition=None)`` arms a rule on every broker
listener: while a rule for that key is armed the listener's handler for it is wrapped, so listeners
without rules pay nothing. A request matches the oldest armed rule whose topic (and partition) it
names (a rule without a topic matches every request of that API); a matched request is not handled at
all: it gets ``error_response`` and the rule's count goes down. When the last rule of a key is used up
the original handler is put back.

``error_response`` builds a response of the API's own shape from its schema: every ``ErrorCode``
reachable in it carries the code, and where the response lists per-item results (topics, partitions,
resources) it lists one per item of the request, keyed as the request keys them. Kafka's own
``getErrorResponse`` does the same per request type.

Deliberate difference from a real failure: a request that names several topics gets the code on all
of them, even when the rule names just one.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kraftwire import codec
from kraftwire.codec.messages import AlterUserScramCredentialsRequest
from kraftwire.codec.message import Message
from kraftwire.codec.model import Struct
from kraftwire.codec.schema import FieldSpec, StructSpec
from kraftwire.server.wire.transport import Handler, Listener, RequestContext

INJECTED_MESSAGE = None  # clients print the code's stock message, as for most Kafka errors
TOPIC_KEYS = ("name", "topic", "topic_name", "resource_name")
PARTITION_KEYS = ("partition_index", "partition", "partition_id", "partitions", "partition_indexes")
# Fields that identify an item; an error response copies these from the request and nothing else.
KEY_FIELDS = frozenset(TOPIC_KEYS + ("topic_id", "resource_type", "partition_index", "partition", "partition_id"))


@dataclass(slots=True)
class InjectedError:
    api_key: int
    error_code: int
    remaining: int
    topic: str | None = None
    partition: int | None = None

    def matches(self, request: object) -> bool:
        if self.topic is None:
            return True
        return any(self.partition is None or _names_partition(item, self.partition)
                   for item in _items_naming(request, self.topic))

    def to_dict(self) -> dict[str, object]:
        return {"api_key": self.api_key, "error_code": self.error_code, "remaining": self.remaining,
                "topic": self.topic, "partition": self.partition}


class ErrorInjector:
    def __init__(self, listeners: list[Listener]):
        self._listeners = listeners
        self._rules: dict[int, list[InjectedError]] = {}
        self._originals: dict[tuple[str, int], Handler] = {}

    @property
    def armed(self) -> list[InjectedError]:
        return [rule for rules in self._rules.values() for rule in rules]

    def inject(self, api_key: int, error_code: int, count: int = 1, topic: str | None = None,
               partition: int | None = None) -> InjectedError:
        """Answer the next ``count`` matching requests of ``api_key`` with ``error_code``."""
        if not any(api_key in listener.handlers for listener in self._listeners):
            raise ValueError(f"api key {api_key} is not served by the brokers")
        if not -32768 <= error_code <= 32767:
            raise ValueError(f"error code {error_code} does not fit an INT16")
        if count < 1:
            raise ValueError("count must be at least 1")
        if partition is not None and topic is None:
            raise ValueError("a partition needs its topic")
        rule = InjectedError(api_key, error_code, count, topic, partition)
        rules = self._rules.setdefault(api_key, [])
        rules.append(rule)
        if len(rules) == 1:
            for listener in self._listeners:
                self._wrap(listener, api_key)
        return rule

    def clear(self) -> None:
        for api_key in list(self._rules):
            self._disarm(api_key)

    def _wrap(self, listener: Listener, api_key: int) -> None:
        original = listener.handlers.get(api_key)
        if original is None:
            return
        self._originals[(listener.name, api_key)] = original

        def injecting(context: RequestContext, request: object) -> object:
            rule = self._take(api_key, request)
            if rule is None:
                return original(context, request)
            return error_response(api_key, context.api_version, request, rule.error_code)

        listener.handlers[api_key] = injecting

    def _take(self, api_key: int, request: object) -> InjectedError | None:
        rules = self._rules.get(api_key, [])
        for rule in rules:
            if rule.matches(request):
                rule.remaining -= 1
                if rule.remaining == 0:
                    rules.remove(rule)
                    if not rules:
                        self._disarm(api_key)
                return rule
        return None

    def _disarm(self, api_key: int) -> None:
        self._rules.pop(api_key, None)
        for listener in self._listeners:
            original = self._originals.pop((listener.name, api_key), None)
            if original is not None:
                listener.handlers[api_key] = original


def _items_naming(value: object, topic: str) -> Iterator[Struct]:
    """The structs in a request that name ``topic`` (by name or by topic id)."""
    if isinstance(value, Struct):
        for attr, field_value in zip(value._fields, value):
            if (attr in TOPIC_KEYS and field_value == topic) or (attr == "topic_id" and str(field_value) == topic):
                yield value
                return
        for field_value in value:
            yield from _items_naming(field_value, topic)
    elif isinstance(value, tuple):
        for item in value:
            yield from _items_naming(item, topic)


def _names_partition(value: object, partition: int) -> bool:
    if isinstance(value, Struct):
        return any((attr in PARTITION_KEYS and (field_value == partition or
                                                (isinstance(field_value, tuple) and partition in field_value)))
                   or (isinstance(field_value, tuple) and _names_partition(field_value, partition))
                   for attr, field_value in zip(value._fields, value))
    if isinstance(value, tuple):
        return any(_names_partition(item, partition) for item in value)
    return False


# --- the error response ----------------------------------------------------------------------------------


def error_response(api_key: int, version: int, request: Any, error_code: int) -> Message:
    """A response to ``request`` (at ``version``) in which every error code is ``error_code``."""
    response_class: type[Message] = codec.api(api_key)[1]
    if api_key == AlterUserScramCredentialsRequest.API_KEY:
        return _scram_error_response(response_class, request, error_code)
    return _mirror(response_class, response_class.SPEC.root, request, version, error_code)


def _scram_error_response(response_class: Any, request: Any, error_code: int) -> Message:
    """AlterUserScramCredentials answers one result per user, named by its deletions and its upsertions
    together (Kafka's error response lists each such user once, sorted): two request arrays behind one
    response array, which the schema-driven mirroring cannot pair."""
    users = sorted({item.name for item in (*request.deletions, *request.upsertions)})
    result = response_class.AlterUserScramCredentialsResult
    response: Message = response_class(results=[result(user=user, error_code=error_code, error_message=INJECTED_MESSAGE)
                                   for user in users])
    return response


def _present(spec: StructSpec, version: int) -> list[FieldSpec]:
    return [f for f in spec.fields if version in f.versions]


def _has_error_code(spec: StructSpec) -> bool:
    return any(f.attr == "error_code" or (f.struct is not None and _has_error_code(f.struct)) for f in spec.fields)


def _shares_key(response_spec: StructSpec, request_item: object, version: int) -> bool:
    """Whether a response item can be keyed from a request item (a key field in common)."""
    if not isinstance(request_item, Struct):
        return True
    return any(f.attr in KEY_FIELDS and f.attr in request_item._fields for f in _present(response_spec, version))


def _pair_arrays(response_fields: list[FieldSpec], request: object) -> dict[str, str]:
    """Response array field -> the request array it lists items of: same name first, then the one left
    on each side (CreatePartitions' topics -> results, DescribeConfigs' resources -> results). Empty
    request arrays do not count (DeleteTopics has both TopicNames and Topics, one per version range)."""
    if not isinstance(request, Struct):
        return {}
    request_arrays = [attr for attr, value in zip(request._fields, request)
                      if value and isinstance(value, tuple) and attr != "unknown_tagged_fields"]
    response_arrays = [f.attr for f in response_fields if f.is_array and f.struct is not None]
    pairs = {attr: attr for attr in response_arrays if attr in request_arrays}
    left_response = [a for a in response_arrays if a not in pairs]
    left_request = [a for a in request_arrays if a not in pairs.values()]
    if len(left_response) == 1 and len(left_request) == 1:
        pairs[left_response[0]] = left_request[0]
    return pairs


def _mirror(root: type[Message], spec: StructSpec, request_item: object, version: int, error_code: int) -> Any:
    """One response struct of ``spec`` answering ``request_item`` (a request struct or a bare key)."""
    fields = _present(spec, version)
    values: dict[str, object] = {}
    if not isinstance(request_item, Struct):
        _key_from_primitive(values, fields, request_item)
    pairs = _pair_arrays(fields, request_item)
    for f in fields:
        if f.attr == "error_code":
            values[f.attr] = error_code
        elif f.attr == "error_message" and version in f.nullable:
            values[f.attr] = INJECTED_MESSAGE
        elif f.is_array and f.struct is not None:
            source = getattr(request_item, pairs[f.attr]) if f.attr in pairs else None
            if source and _has_error_code(f.struct) and _shares_key(f.struct, source[0], version):
                values[f.attr] = [_mirror(root, f.struct, item, version, error_code) for item in source]
        elif f.attr in KEY_FIELDS and isinstance(request_item, Struct) and f.attr in request_item._fields:
            values[f.attr] = getattr(request_item, f.attr)
    # (the nested classes are bound at import by codec.message.bind_message_classes; Message does not declare them)
    struct_class = root if spec is root.SPEC.root else root._classes[spec.name]
    return struct_class(**values)


def _key_from_primitive(values: dict[str, object], fields: list[FieldSpec], item: object) -> None:
    """A request listing bare names or indexes (DeleteTopics v0-5, ElectLeaders' partitions): the
    item goes into the response item's first field of its type."""
    wanted = ("string",) if isinstance(item, str) else ("uuid",) if isinstance(item, uuid.UUID) else ("int32",)
    for f in fields:
        if f.type in wanted and f.attr != "error_code":
            values.setdefault(f.attr, item)
            return
