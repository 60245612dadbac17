"""DescribeConfigs (32): the configs of topics and brokers, from the committed image.

Who: any client, on a broker listener or the controller listener (which answers for its own node id
as the broker). Resources are answered in request order, each on its own:
* TOPIC (2): every topic config with its value, source and (``IncludeSynonyms``, v1+) the cluster
  default it falls back to. An illegal name gets INVALID_TOPIC_EXCEPTION (17) with Kafka's
  ``Topic.validate`` text; a topic that does not exist UNKNOWN_TOPIC_OR_PARTITION (3) with an empty
  message, as Kafka sends it.
* BROKER (4) "<id>": that broker's configs, answered only by that broker, as in Kafka. Another
  broker's id gets INVALID_REQUEST (42) "Unexpected broker id, expected {self} or empty string, but
  received {name}"; a name that is not an integer "Broker id must be an integer, but it is: {name}".
  The replication throttle rates are always listed, set or not (kafka-python's alter_configs refuses
  keys the server does not list).
  The broker's startup configs (node.id, process.roles, listeners and advertised.listeners with its
  real address, listener.security.protocol.map, inter.broker.listener.name, controller.listener.names,
  controller.quorum.bootstrap.servers, log.dirs, and the cluster's auto.create.topics.enable,
  num.partitions and default.replication.factor) show with source STATIC_BROKER_CONFIG (4), as a KRaft
  broker's server.properties would give them; the controller listener reports its own.
* BROKER "": the cluster-wide defaults, only those that are set, from any broker.
* BROKER_LOGGER (8), CLIENT_METRICS (16), GROUP (32): INVALID_REQUEST "Unsupported resource type: ..."
  (kraftwire keeps no configs for them; Kafka does). A resource type Kafka does not know fails the
  whole request: every resource gets INVALID_REQUEST with Kafka's stock message, as Kafka answers.

``ConfigurationKeys`` null or empty means every key; unknown keys are left out. ``IncludeDocumentation``
(v3+) adds each key's doc. ``ConfigType`` and ``Documentation`` exist from v3, ``ConfigSource`` and
``Synonyms`` from v1. v0 has ``IsDefault`` instead of a source: kraftwire sets it when the value is
Kafka's default, where Kafka 3.x servers left it false for every key (4.0 dropped v0).
"""
from __future__ import annotations

import re

from kraftwire.codec.messages import DescribeConfigsResponse

from kraftwire.server.metadata import configs
from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.constants import ConfigResourceType
from kraftwire.server.metadata import config_describe
from kraftwire.server.metadata import config_values
from kraftwire.server.controller.topics import invalid_name_reason

API_KEY = 32
Result = DescribeConfigsResponse.DescribeConfigsResult
Entry = DescribeConfigsResponse.DescribeConfigsResourceResult
Synonym = DescribeConfigsResponse.DescribeConfigsSynonym

# ConfigResource.Type: the ids Kafka knows; kraftwire keeps configs only for TOPIC and BROKER.
RESOURCE_TYPE_NAMES = {t: t.name for t in ConfigResourceType if t != ConfigResourceType.UNKNOWN}
INVALID_REQUEST_TEXT = ErrorCode.INVALID_REQUEST.message

_JAVA_INT = re.compile(r"[+-]?[0-9]+")


def parse_broker_id(name: str) -> int | None:
    """The broker id a resource name stands for, as Java's Integer.parseInt reads it; None if it
    is not one."""
    if not _JAVA_INT.fullmatch(name) or not -(1 << 31) <= int(name) < (1 << 31):
        return None
    return int(name)


def _entry(entry: config_describe.ConfigEntry, version: int) -> Entry:
    extra = {"is_default": entry.is_default} if version == 0 else {
        "config_source": entry.source,
        "synonyms": [Synonym(name=name, value=value, source=source) for name, value, source in entry.synonyms]}
    if version >= 3:
        extra.update(config_type=entry.config_type, documentation=entry.documentation)
    return Entry(name=entry.name, value=entry.value, read_only=entry.read_only, is_sensitive=entry.is_sensitive,
                 **extra)


CONTROLLER_LISTENER_NAME = "CONTROLLER"


def _security_protocol_map(*listener_names: str) -> str:
    """The map of PLAINTEXT listeners; a cluster with security puts its own in the startup configs."""
    return ",".join(f"{name}:PLAINTEXT" for name in listener_names)


def broker_static_configs(broker) -> dict[str, str]:
    """What a KRaft broker's server.properties would hold for this simulated broker."""
    name = broker.listener_name
    controller_name = broker.startup_configs.get("controller.listener.names", CONTROLLER_LISTENER_NAME)
    static = {
        "node.id": str(broker.broker_id), "process.roles": "broker",
        "listeners": f"{name}://{broker.host}:{broker.port}",
        "advertised.listeners": f"{name}://{broker.advertised_host}:{broker.port}",
        "listener.security.protocol.map": broker.startup_configs.get(
            "listener.security.protocol.map", _security_protocol_map(controller_name, name)),
        "inter.broker.listener.name": name, "controller.listener.names": controller_name,
        "log.dirs": ",".join(directory.path for directory in broker.log_manager.directories)}
    if broker.client is not None and "controller.quorum.bootstrap.servers" not in broker.startup_configs:
        static["controller.quorum.bootstrap.servers"] = broker.client.bootstrap_servers
    return {**broker.startup_configs, **static}


def controller_static_configs(node) -> dict[str, str]:
    """The same for the controller node."""
    address = f"{node.host}:{node.port}"
    name = node.startup_configs.get("controller.listener.names", CONTROLLER_LISTENER_NAME)
    return {**node.startup_configs, "node.id": str(node.node_id), "process.roles": "controller",
            "listeners": f"{name}://{address}",
            "listener.security.protocol.map": node.startup_configs.get(
                "listener.security.protocol.map", _security_protocol_map(name)),
            "controller.listener.names": name, "controller.quorum.bootstrap.servers": address}


def _describe_resource(image, broker_id: int, resource, include_synonyms: bool, include_documentation: bool,
                       static: dict[str, str]):
    """The config entries of one resource; raises KafkaError for a resource Kafka would refuse."""
    resource_type, name = resource.resource_type, resource.resource_name
    cluster_defaults = image.broker_configs("")
    if resource_type == ConfigResourceType.TOPIC:
        reason = invalid_name_reason(name)
        if reason is not None:
            raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, reason)
        if image.topic(name) is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "")
        dynamic = image.topic_configs(name)
    elif resource_type == ConfigResourceType.BROKER:
        if name:
            requested = parse_broker_id(name)
            if requested is None:
                raise KafkaError(ErrorCode.INVALID_REQUEST, f"Broker id must be an integer, but it is: {name}")
            if requested != broker_id:
                raise KafkaError(ErrorCode.INVALID_REQUEST,
                                 f"Unexpected broker id, expected {broker_id} or empty string, but received {name}")
        dynamic = image.broker_configs(name)
    else:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unsupported resource type: {RESOURCE_TYPE_NAMES[resource_type]}")
    try:
        return config_describe.describe(resource_type, name, dynamic, cluster_defaults, resource.configuration_keys,
                                        include_synonyms, include_documentation, static if name else None)
    except config_values.InvalidValue as stored_value_broken:  # a log written by another tool or version
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, str(stored_value_broken)) from None


def decide(image, request, version: int, broker_id: int,
           static: dict[str, str] | None = None) -> DescribeConfigsResponse:
    """The answer of broker ``broker_id``, started with ``static`` configs, to a DescribeConfigs
    request, from ``image``."""
    resources = request.resources
    if any(r.resource_type not in RESOURCE_TYPE_NAMES for r in resources):
        return DescribeConfigsResponse(results=[
            Result(error_code=ErrorCode.INVALID_REQUEST, error_message=INVALID_REQUEST_TEXT, resource_type=r.resource_type,
                   resource_name=r.resource_name, configs=[]) for r in resources])
    results = []
    for resource in resources:
        named = {"resource_type": resource.resource_type, "resource_name": resource.resource_name}
        try:
            entries = _describe_resource(image, broker_id, resource, request.include_synonyms,
                                         request.include_documentation, static or {})
            results.append(Result(error_code=ErrorCode.NONE, configs=[_entry(entry, version) for entry in entries], **named))
        except KafkaError as error:
            results.append(Result(error_code=error.code, error_message=error.message, configs=[], **named))
    return DescribeConfigsResponse(results=results)


def on_broker(broker, context, request):
    return decide(broker.image, request, context.api_version, broker.broker_id, broker_static_configs(broker))


def on_controller(node, context, request):
    return decide(node.controller.committed, request, context.api_version, node.node_id,
                  controller_static_configs(node))
