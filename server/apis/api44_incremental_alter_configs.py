"""IncrementalAlterConfigs (44): SET, DELETE (``Value`` null), APPEND or SUBTRACT single configs of
topics (2) and brokers (4, "<id>" or "" for the cluster-wide defaults).

Who: admin clients, on a broker listener. The broker does Kafka's ``ConfigAdminManager.preprocess``
and answers these resources itself, with INVALID_REQUEST (42) unless said otherwise:
* a (type, name) given twice: "Each resource must appear at most once." for every copy;
* a key given twice in a resource, a null value on an operation other than DELETE, an unknown
  operation;
* a BROKER resource naming another broker ("Unexpected broker id, expected {self}, but received
  {name}") or not an integer ("Node id must be an integer, but it is: {name}"): a broker's configs
  are altered through that broker (clients send them there), the cluster default through any;
* a BROKER value the broker refuses: INVALID_REQUEST, not INVALID_CONFIG (KAFKA-13609);
  APPEND/SUBTRACT on a broker key that is not a list: INVALID_CONFIG;
* any other resource type: "Unknown resource type {id}" (kraftwire keeps no BROKER_LOGGER,
  CLIENT_METRICS or GROUP configs; Kafka does).
It forwards the rest to the controller and answers every resource in request order.

The controller (``on_controller``, also reachable directly) decides the records: TOPIC resources are
validated there (INVALID_CONFIG (40) with Kafka's LogConfig texts, e.g. APPEND to a non-list key;
INVALID_TOPIC_EXCEPTION (17) for an illegal name; then UNKNOWN_TOPIC_OR_PARTITION (3) "The topic
'{name}' does not exist."); BROKER ones must name a registered node (BROKER_ID_NOT_REGISTERED, 102).
Unlike Kafka's controller, it checks broker values again (they may have changed since the broker
looked). ``cordoned.log.dirs`` must name the receiving broker's log directories (or ``*``; INVALID_REQUEST
from the broker) and is refused by the controller below metadata.version 4.3-IV0 (INVALID_CONFIG). With
eligible leader replicas on, min.insync.replicas may not be set on one broker nor removed from the
cluster default (INVALID_CONFIG), and each min.insync.replicas record is followed by a ClearElrRecord
(the topic's, or every topic's for a broker or cluster value), as Kafka's controller writes them. Each change is a ConfigRecord (value null deletes); BROKER records are written even when the
value does not change (KAFKA-14136), TOPIC records only when it does. All resources' records form
one atomic batch, answered after commit; ``ValidateOnly`` writes nothing but answers the same. A
request that would write more than 10000 records fails whole: POLICY_VIOLATION (44) for every resource.
Successes carry a null ErrorMessage, as Kafka's do.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from kraftwire.codec import records as rec
from kraftwire.codec.messages import IncrementalAlterConfigsResponse

from kraftwire.server.metadata import configs
from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.constants import ConfigResourceType
from kraftwire.server.controller import config_validation
from kraftwire.server.controller.topics import MAX_RECORDS_PER_USER_OP, invalid_name_reason
from kraftwire.server.controller.result import ControllerResult
from kraftwire.server.metadata.configs import MIN_INSYNC_REPLICAS
from kraftwire.server.metadata.record_versions import CORDONED_LOG_DIRS_LEVEL, elr_enabled
from .api32_describe_configs import RESOURCE_TYPE_NAMES, parse_broker_id

API_KEY = 44
Outcome = tuple[int, str | None]  # (error code, error message) of one resource
SUCCESS: Outcome = (0, None)
# What Kafka's controller answers every resource when a request would write too many records.
TOO_MANY_RECORDS: Outcome = (ErrorCode.POLICY_VIOLATION, "Unable to perform excessively large batch operation.")
OpsOf = Callable[[object, object], list[config_validation.Op]]  # (image, request resource) -> operations


def incremental_ops(image, resource) -> list[config_validation.Op]:
    return [(config.name, config.config_operation, config.value) for config in resource.configs]


def _key(resource) -> tuple[int, str]:
    return resource.resource_type, resource.resource_name


def _check_own_broker_id(name: str, broker_id: int) -> None:
    requested = parse_broker_id(name)
    if requested is None:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Node id must be an integer, but it is: {name}")
    if requested != broker_id:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unexpected broker id, expected {broker_id}, but received {name}")


def check_on_broker(image, broker_id: int, resources, ops_of: OpsOf, log_dirs=()) -> dict[int, Outcome]:
    """What broker ``broker_id`` (whose log directories are at the paths ``log_dirs``) answers itself,
    by request index; the other resources go to the controller."""
    copies = Counter(map(_key, resources))
    refused = {}
    for index, resource in enumerate(resources):
        if copies[_key(resource)] > 1:
            refused[index] = (ErrorCode.INVALID_REQUEST, "Each resource must appear at most once.")
            continue
        try:
            ops = ops_of(image, resource)
            config_validation.check_operations(ops)
            if resource.resource_type == ConfigResourceType.BROKER:
                name = resource.resource_name
                if name:
                    _check_own_broker_id(name, broker_id)
                config_validation.validate_broker_changes(name, image.broker_configs(name), ops, log_dirs=log_dirs)
            elif resource.resource_type != ConfigResourceType.TOPIC:
                raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown resource type {resource.resource_type}")
        except KafkaError as error:
            refused[index] = (error.code, error.message)
    return refused


def build_response(response_cls, resources, outcomes: list[Outcome]):
    item = response_cls.AlterConfigsResourceResponse
    return response_cls(responses=[
        item(error_code=code, error_message=message, resource_type=r.resource_type, resource_name=r.resource_name)
        for r, (code, message) in zip(resources, outcomes)])


async def answer_on_broker(broker, context, request, ops_of: OpsOf, response_cls):
    """Answer what the broker refuses, forward the rest to the controller, merge in request order."""
    resources = request.resources
    refused = check_on_broker(broker.image, broker.broker_id, resources, ops_of,
                              [d.path for d in broker.log_manager.directories])
    forwarded = [r for index, r in enumerate(resources) if index not in refused]
    decided = {}
    if forwarded:
        answer = await broker.forward(request.replace(resources=forwarded), context.api_version)
        decided = {_key(r): (r.error_code, r.error_message) for r in answer.responses}
    outcomes = [refused.get(index) or decided.get(_key(r), (ErrorCode.UNKNOWN_SERVER_ERROR, None))
                for index, r in enumerate(resources)]
    return build_response(response_cls, resources, outcomes)


def _topic_changes(image, name: str, current, ops) -> dict[str, str]:
    if not name:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed.")
    reason = invalid_name_reason(name)
    if reason is not None:
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, reason)
    updated = config_validation.validate_topic_changes(current, ops, image.broker_configs(""))
    if image.topic(name) is None:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.")
    return updated


def _broker_changes(image, name: str, current, ops, controller_id: int) -> dict[str, str]:
    node_id = parse_broker_id(name) if name else None
    if name and node_id is None:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Unable to parse broker name as a base 10 number.")
    if name and node_id < 0:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Invalid negative broker ID.")
    updated = config_validation.validate_broker_changes(
        name, current, ops, elr_enabled=elr_enabled(image.features),
        cordoning=image.metadata_version_level >= CORDONED_LOG_DIRS_LEVEL)
    if name and node_id not in image.brokers and node_id != controller_id:
        raise KafkaError(ErrorCode.BROKER_ID_NOT_REGISTERED, f"No node with id {node_id} found.")
    return updated


def _resource_records(image, resource_type: int, name: str, ops, controller_id: int) -> list:
    """The ConfigRecords of one resource's changes; raises KafkaError when the controller refuses them."""
    current = image.configs.get((resource_type, name), {})
    if resource_type == ConfigResourceType.TOPIC:
        updated = _topic_changes(image, name, current, ops)
    elif resource_type == ConfigResourceType.BROKER:
        updated = _broker_changes(image, name, current, ops, controller_id)
    else:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown resource type {RESOURCE_TYPE_NAMES[resource_type]}")
    always = resource_type == ConfigResourceType.BROKER  # KAFKA-14136: brokers reload on every record
    return [rec.ConfigRecord(resource_type=resource_type, resource_name=name, name=key, value=updated.get(key))
            for key, _, _ in ops if always or updated.get(key) != current.get(key)]


def decide_resources(image, resources, ops_of: OpsOf, controller_id: int) -> tuple[list, list[Outcome]]:
    """The controller's records for every resource it accepts, and each resource's outcome."""
    copies = Counter(map(_key, resources))
    records, outcomes = [], []
    for resource in resources:
        if copies[_key(resource)] > 1:
            outcomes.append((ErrorCode.INVALID_REQUEST, "Duplicate resource."))
        elif resource.resource_type not in RESOURCE_TYPE_NAMES:
            outcomes.append((ErrorCode.UNSUPPORTED_VERSION, f"Unknown resource type {resource.resource_type}."))
        else:
            try:
                records += _resource_records(image, resource.resource_type, resource.resource_name,
                                             ops_of(image, resource), controller_id)
                outcomes.append(SUCCESS)
            except KafkaError as error:
                outcomes.append((error.code, error.message))
    return records, outcomes


def clear_elr_records(image, records) -> list:
    """With eligible leader replicas on, a ClearElrRecord after the batch for each min.insync.replicas
    it writes: the topic's for a topic config, every topic's for a broker or cluster one (Kafka's
    createClearElrRecordsAsNeeded), since the ELR was kept for the old minimum."""
    if not elr_enabled(image.features):
        return []
    return [rec.ClearElrRecord(topic_name=r.resource_name if r.resource_type == ConfigResourceType.TOPIC else "")
            for r in records if type(r) is rec.ConfigRecord and r.name == MIN_INSYNC_REPLICAS]


def decide(image, request, controller_id: int, ops_of: OpsOf = incremental_ops,
           response_cls=IncrementalAlterConfigsResponse) -> ControllerResult:
    """The records and response of the controller ``controller_id`` for a whole request."""
    records, outcomes = decide_resources(image, request.resources, ops_of, controller_id)
    if len(records) > MAX_RECORDS_PER_USER_OP:
        records, outcomes = [], [TOO_MANY_RECORDS] * len(outcomes)
    records += clear_elr_records(image, records)
    response = build_response(response_cls, request.resources, outcomes)
    return ControllerResult([] if request.validate_only else records, response)


async def on_broker(broker, context, request):
    return await answer_on_broker(broker, context, request, incremental_ops, IncrementalAlterConfigsResponse)


async def on_controller(node, context, request):
    return await node.controller.write(lambda image: decide(image, request, node.node_id))
