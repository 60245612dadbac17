"""The configuration control manager (Kafka's ConfigurationControlManager, with the receiving broker's
ConfigAdminManager.preprocess): what DescribeConfigs answers, what AlterConfigs and
IncrementalAlterConfigs write, and what a broker refuses before it forwards them.

Pure functions of an image and a request. The values' rules are ``config_validation``'s; this module
owns the resources: which exist, who may name which broker, the ConfigRecords one change writes (and
the ClearElrRecords after a min.insync.replicas change), and the per-resource answers. The API
contracts are in server/apis/api32_describe_configs.py, api33_alter_configs.py and
api44_incremental_alter_configs.py.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, TypeVar

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec import records as rec
from kraftwire.codec.constants import ConfigResourceType
from kraftwire.codec.message import Message
from kraftwire.codec.messages import (AlterConfigsRequest, AlterConfigsResponse, DescribeConfigsRequest,
                                      DescribeConfigsResponse, IncrementalAlterConfigsRequest,
                                      IncrementalAlterConfigsResponse)
from kraftwire.server.metadata import config_describe, config_values, group_configs
from kraftwire.server.metadata.configs import MIN_INSYNC_REPLICAS
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.metadata.record_versions import CORDONED_LOG_DIRS_LEVEL, elr_enabled

from . import broker_loggers, config_validation
from .result import ControllerResult
from .topics import MAX_RECORDS_PER_USER_OP, invalid_name_reason

# ConfigResource.Type: the ids Kafka knows; kraftwire keeps configs only for TOPIC and BROKER.
RESOURCE_TYPE_NAMES: dict[int, str] = {t: t.name for t in ConfigResourceType if t != ConfigResourceType.UNKNOWN}
INVALID_REQUEST_TEXT = ErrorCode.INVALID_REQUEST.message

_JAVA_INT = re.compile(r"[+-]?[0-9]+")

Outcome = tuple[int, str | None]  # (error code, error message) of one resource
SUCCESS: Outcome = (0, None)
# What Kafka's controller answers every resource when a request would write too many records.
TOO_MANY_RECORDS: Outcome = (ErrorCode.POLICY_VIOLATION, "Unable to perform excessively large batch operation.")

DescribedResult = DescribeConfigsResponse.DescribeConfigsResult
DescribedEntry = DescribeConfigsResponse.DescribeConfigsResourceResult
DescribedSynonym = DescribeConfigsResponse.DescribeConfigsSynonym


class AlteredResource(Protocol):
    """A resource of an AlterConfigs or IncrementalAlterConfigs request (both name it alike)."""

    @property
    def resource_type(self) -> int: ...

    @property
    def resource_name(self) -> str: ...


AlterRequest = AlterConfigsRequest | IncrementalAlterConfigsRequest
AlterResponse = AlterConfigsResponse | IncrementalAlterConfigsResponse
AlterResponseT = TypeVar("AlterResponseT", AlterConfigsResponse, IncrementalAlterConfigsResponse)
LegacyResource = AlterConfigsRequest.AlterConfigsResource
IncrementalResource = IncrementalAlterConfigsRequest.AlterConfigsResource
ResourceT = TypeVar("ResourceT", LegacyResource, IncrementalResource)
# (image, request resource) -> the resource's operations, in the incremental form
OpsOf = Callable[[MetadataImage, ResourceT], list[config_validation.Op]]


def parse_broker_id(name: str) -> int | None:
    """The broker id a resource name stands for, as Java's Integer.parseInt reads it; None if it
    is not one."""
    if not _JAVA_INT.fullmatch(name) or not -(1 << 31) <= int(name) < (1 << 31):
        return None
    return int(name)


# --- DescribeConfigs ------------------------------------------------------------------------------------------------

def _described_entry(entry: config_describe.ConfigEntry, version: int) -> DescribedEntry:
    extra: dict[str, object] = {"is_default": entry.is_default} if version == 0 else {
        "config_source": entry.source,
        "synonyms": [DescribedSynonym(name=name, value=value, source=source) for name, value, source in entry.synonyms]}
    if version >= 3:
        extra.update(config_type=entry.config_type, documentation=entry.documentation)
    return DescribedEntry(name=entry.name, value=entry.value, read_only=entry.read_only,
                          is_sensitive=entry.is_sensitive, **extra)


def _dynamic_configs(image: MetadataImage, broker_id: int, resource_type: int, name: str) -> dict[str, str]:
    """The dynamic configs of a resource this node describes; raises KafkaError for one Kafka would refuse."""
    if resource_type == ConfigResourceType.TOPIC:
        reason = invalid_name_reason(name)
        if reason is not None:
            raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, reason)
        if image.topic(name) is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "")
        return image.topic_configs(name)
    if resource_type == ConfigResourceType.BROKER:
        if name:
            requested = parse_broker_id(name)
            if requested is None:
                raise KafkaError(ErrorCode.INVALID_REQUEST, f"Broker id must be an integer, but it is: {name}")
            if requested != broker_id:
                raise KafkaError(ErrorCode.INVALID_REQUEST,
                                 f"Unexpected broker id, expected {broker_id} or empty string, but received {name}")
        return image.broker_configs(name)
    raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unsupported resource type: {RESOURCE_TYPE_NAMES[resource_type]}")


def _described_resource(image: MetadataImage, broker_id: int, resource: DescribeConfigsRequest.DescribeConfigsResource,
                        request: DescribeConfigsRequest, static: Mapping[str, str],
                        loggers: Mapping[str, str]) -> list[config_describe.ConfigEntry]:
    """The config entries of one resource; raises KafkaError for a resource Kafka would refuse."""
    resource_type, name = resource.resource_type, resource.resource_name
    if resource_type == ConfigResourceType.BROKER_LOGGER:
        return broker_loggers.describe(name, broker_id, resource.configuration_keys, loggers)
    if resource_type == ConfigResourceType.GROUP:
        return _described_group(image, name, resource.configuration_keys, request.include_synonyms, static)
    dynamic = _dynamic_configs(image, broker_id, resource_type, name)
    try:
        return config_describe.describe(resource_type, name, dynamic, image.broker_configs(""),
                                        resource.configuration_keys, request.include_synonyms,
                                        request.include_documentation, static if name else None,
                                        image.broker_configs(str(broker_id)))
    except config_values.InvalidValue as stored_value_broken:  # a log written by another tool or version
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, str(stored_value_broken)) from None


def _described_group(image: MetadataImage, name: str, keys: Sequence[str] | None, synonyms: bool,
                     static: Mapping[str, str]) -> list[config_describe.ConfigEntry]:
    """A GROUP resource's entries (server/metadata/group_configs.py): every group has them, known or not;
    the empty name is INVALID_REQUEST, as Kafka answers."""
    if not name:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Group name must not be empty")
    dynamic = image.configs.get((ConfigResourceType.GROUP, name), {})
    return [config_describe.ConfigEntry(
        name=e.name, value=e.value, read_only=False, is_default=e.source == group_configs.DEFAULT_CONFIG_SOURCE,
        is_sensitive=False, source=e.source, config_type=e.config_type, documentation=None,
        synonyms=list(e.synonyms) if synonyms else []) for e in group_configs.describe(dynamic, static, keys)]


def describe_configs(image: MetadataImage, request: DescribeConfigsRequest, version: int, broker_id: int,
                     static: Mapping[str, str] | None = None,
                     loggers: Mapping[str, str] | None = None) -> DescribeConfigsResponse:
    """The answer of node ``broker_id``, started with ``static`` configs and with ``loggers`` (name: log4j
    level, for BROKER_LOGGER resources), to a DescribeConfigs request, from ``image``: each resource on its
    own, in request order."""
    resources = request.resources
    if any(r.resource_type not in RESOURCE_TYPE_NAMES for r in resources):
        return DescribeConfigsResponse(results=[
            DescribedResult(error_code=ErrorCode.INVALID_REQUEST, error_message=INVALID_REQUEST_TEXT,
                            resource_type=r.resource_type, resource_name=r.resource_name, configs=[])
            for r in resources])
    results = []
    for resource in resources:
        named = {"resource_type": resource.resource_type, "resource_name": resource.resource_name}
        try:
            entries = _described_resource(image, broker_id, resource, request, static or {}, loggers or {})
            results.append(DescribedResult(error_code=ErrorCode.NONE,
                                           configs=[_described_entry(entry, version) for entry in entries], **named))
        except KafkaError as error:
            results.append(DescribedResult(error_code=error.code, error_message=error.message, configs=[], **named))
    return DescribeConfigsResponse(results=results)


# --- AlterConfigs and IncrementalAlterConfigs: the operations -------------------------------------------------------

def incremental_ops(image: MetadataImage, resource: IncrementalResource) -> list[config_validation.Op]:
    """An IncrementalAlterConfigs resource's operations, as given."""
    return [(config.name, config.config_operation, config.value) for config in resource.configs]


def legacy_ops(image: MetadataImage, resource: LegacyResource) -> list[config_validation.Op]:
    """An AlterConfigs resource's operations: set what it gives, delete every other dynamic config."""
    current = image.configs.get((resource.resource_type, resource.resource_name), {})
    return config_validation.legacy_alter_ops(current, [(config.name, config.value) for config in resource.configs])


def _key(resource: AlteredResource) -> tuple[int, str]:
    return resource.resource_type, resource.resource_name


def alter_response(response_cls: type[AlterResponseT], resources: Sequence[AlteredResource],
                   outcomes: Sequence[Outcome]) -> AlterResponseT:
    """The answer: each resource's outcome, in request order."""
    item = response_cls.AlterConfigsResourceResponse
    return response_cls(responses=[
        item(error_code=code, error_message=message, resource_type=r.resource_type, resource_name=r.resource_name)
        for r, (code, message) in zip(resources, outcomes)])


# --- what the receiving broker answers itself ---------------------------------------------------------------------

def _check_own_broker_id(name: str, broker_id: int) -> None:
    requested = parse_broker_id(name)
    if requested is None:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Node id must be an integer, but it is: {name}")
    if requested != broker_id:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unexpected broker id, expected {broker_id}, but received {name}")


def _preprocess_resource(image: MetadataImage, broker_id: int, resource: ResourceT, ops_of: OpsOf[ResourceT],
                         log_dirs: Sequence[str], loggers: Mapping[str, str] | None) -> bool:
    """Raises KafkaError for a resource the broker refuses; True for one it answers itself (its loggers)."""
    ops = ops_of(image, resource)
    config_validation.check_operations(ops)
    if resource.resource_type == ConfigResourceType.BROKER_LOGGER and loggers is not None:
        broker_loggers.check_changes(resource.resource_name, broker_id, ops, loggers)
        return True
    if resource.resource_type == ConfigResourceType.BROKER:
        name = resource.resource_name
        if name:
            _check_own_broker_id(name, broker_id)
        config_validation.validate_broker_changes(name, image.broker_configs(name), ops, log_dirs=log_dirs)
    elif resource.resource_type == ConfigResourceType.GROUP:
        if not resource.resource_name:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Default group resources are not allowed.")
    elif resource.resource_type != ConfigResourceType.TOPIC:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown resource type {resource.resource_type}")
    return False


def preprocess_on_broker(image: MetadataImage, broker_id: int, resources: Sequence[ResourceT], ops_of: OpsOf[ResourceT],
                         log_dirs: Sequence[str] = (), loggers: Mapping[str, str] | None = None) -> dict[int, Outcome]:
    """What broker ``broker_id`` (whose log directories are at the paths ``log_dirs``) answers itself,
    by request index (Kafka's ConfigAdminManager.preprocess); the other resources go to the controller.
    With ``loggers`` (IncrementalAlterConfigs; AlterConfigs has no BROKER_LOGGER resources) the broker
    answers its BROKER_LOGGER resources too (``broker_loggers``): SUCCESS for those it will change."""
    copies = Counter(map(_key, resources))
    refused: dict[int, Outcome] = {}
    for index, resource in enumerate(resources):
        if copies[_key(resource)] > 1:
            refused[index] = (ErrorCode.INVALID_REQUEST, "Each resource must appear at most once.")
            continue
        try:
            if _preprocess_resource(image, broker_id, resource, ops_of, log_dirs, loggers):
                refused[index] = SUCCESS
        except KafkaError as error:
            refused[index] = (error.code, error.message)
    return refused


def logger_changes(resources: Sequence[IncrementalResource],
                   outcomes: Mapping[int, Outcome]) -> list[config_validation.Op]:
    """The operations of the BROKER_LOGGER resources answered SUCCESS (by request index), to carry out."""
    return [op for index, resource in enumerate(resources)
            if resource.resource_type == ConfigResourceType.BROKER_LOGGER and outcomes.get(index) == SUCCESS
            for op in ((c.name, c.config_operation, c.value) for c in resource.configs)]


def merge_answers(response_cls: type[AlterResponseT], resources: Sequence[AlteredResource],
                  refused: Mapping[int, Outcome], forwarded: AlterResponse | None) -> AlterResponseT:
    """The broker's answer: its own refusals (by index) and the controller's outcomes of the rest."""
    decided = {} if forwarded is None else {_key(r): (r.error_code, r.error_message) for r in forwarded.responses}
    outcomes = [refused.get(index) or decided.get(_key(r), (ErrorCode.UNKNOWN_SERVER_ERROR, None))
                for index, r in enumerate(resources)]
    return alter_response(response_cls, resources, outcomes)


# --- what the controller writes -----------------------------------------------------------------------------------

def _topic_changes(image: MetadataImage, name: str, current: Mapping[str, str],
                   ops: Sequence[config_validation.Op]) -> dict[str, str]:
    if not name:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed.")
    reason = invalid_name_reason(name)
    if reason is not None:
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, reason)
    updated = config_validation.validate_topic_changes(current, ops, image.broker_configs(""))
    if image.topic(name) is None:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.")
    return updated


def _broker_changes(image: MetadataImage, name: str, current: Mapping[str, str], ops: Sequence[config_validation.Op],
                    controller_id: int) -> dict[str, str]:
    node_id = parse_broker_id(name) if name else None
    if name and node_id is None:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Unable to parse broker name as a base 10 number.")
    if node_id is not None and node_id < 0:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Invalid negative broker ID.")
    updated = config_validation.validate_broker_changes_at_controller(
        name, current, ops, elr_enabled=elr_enabled(image.features),
        cordoning=image.metadata_version_level >= CORDONED_LOG_DIRS_LEVEL)
    if node_id is not None and node_id not in image.brokers and node_id != controller_id:
        raise KafkaError(ErrorCode.BROKER_ID_NOT_REGISTERED, f"No node with id {node_id} found.")
    return updated


def _resource_records(image: MetadataImage, resource_type: int, name: str, ops: Sequence[config_validation.Op],
                      controller_id: int) -> list[rec.ConfigRecord]:
    """The ConfigRecords of one resource's changes; raises KafkaError when the controller refuses them."""
    current = image.configs.get((resource_type, name), {})
    if resource_type == ConfigResourceType.TOPIC:
        updated = _topic_changes(image, name, current, ops)
    elif resource_type == ConfigResourceType.BROKER:
        updated = _broker_changes(image, name, current, ops, controller_id)
    elif resource_type == ConfigResourceType.GROUP:  # bounds from Kafka's broker defaults (README, differences)
        if not name:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Default group resources are not allowed.")
        updated = config_validation.apply_incremental(resource_type, current, ops)
        group_configs.validate(updated, {})
    else:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown resource type {RESOURCE_TYPE_NAMES[resource_type]}")
    always = resource_type == ConfigResourceType.BROKER  # KAFKA-14136: brokers reload on every record
    return [rec.ConfigRecord(resource_type=resource_type, resource_name=name, name=key, value=updated.get(key))
            for key, _, _ in ops if always or updated.get(key) != current.get(key)]


def _resources_records(image: MetadataImage, resources: Sequence[ResourceT], ops_of: OpsOf[ResourceT],
                       controller_id: int, loggers: Mapping[str, str] | None = None
                       ) -> tuple[list[Message], list[Outcome]]:
    """The controller's records for every resource it accepts, and each resource's outcome. With ``loggers``
    (IncrementalAlterConfigs) it answers its own BROKER_LOGGER resources, as Kafka's ControllerApis does
    (no records: the handler changes the loggers)."""
    copies = Counter(map(_key, resources))
    records: list[Message] = []
    outcomes: list[Outcome] = []
    for resource in resources:
        if copies[_key(resource)] > 1:
            outcomes.append((ErrorCode.INVALID_REQUEST, "Duplicate resource."))
        elif resource.resource_type not in RESOURCE_TYPE_NAMES:
            outcomes.append((ErrorCode.UNSUPPORTED_VERSION, f"Unknown resource type {resource.resource_type}."))
        elif resource.resource_type == ConfigResourceType.BROKER_LOGGER and loggers is not None:
            outcomes.append(_logger_outcome(image, resource, ops_of, controller_id, loggers))
        else:
            try:
                records += _resource_records(image, resource.resource_type, resource.resource_name,
                                             ops_of(image, resource), controller_id)
                outcomes.append(SUCCESS)
            except KafkaError as error:
                outcomes.append((error.code, error.message))
    return records, outcomes


def _logger_outcome(image: MetadataImage, resource: ResourceT, ops_of: OpsOf[ResourceT], node_id: int,
                    loggers: Mapping[str, str]) -> Outcome:
    try:
        ops = ops_of(image, resource)
        config_validation.check_operations(ops)
        broker_loggers.check_changes(resource.resource_name, node_id, ops, loggers)
    except KafkaError as error:
        return error.code, error.message
    return SUCCESS


def _clear_elr_records(image: MetadataImage, records: Sequence[Message]) -> list[Message]:
    """With eligible leader replicas on, a ClearElrRecord after the batch for each min.insync.replicas
    it writes: the topic's for a topic config, every topic's for a broker or cluster one (Kafka's
    createClearElrRecordsAsNeeded), since the ELR was kept for the old minimum."""
    if not elr_enabled(image.features):
        return []
    return [rec.ClearElrRecord(topic_name=r.resource_name if r.resource_type == ConfigResourceType.TOPIC else "")
            for r in records if isinstance(r, rec.ConfigRecord) and r.name == MIN_INSYNC_REPLICAS]


def _alter(image: MetadataImage, resources: Sequence[ResourceT], validate_only: bool, controller_id: int,
           ops_of: OpsOf[ResourceT], response_cls: type[AlterResponseT],
           loggers: Mapping[str, str] | None = None) -> ControllerResult:
    records, outcomes = _resources_records(image, resources, ops_of, controller_id, loggers)
    if len(records) > MAX_RECORDS_PER_USER_OP:
        records, outcomes = [], [TOO_MANY_RECORDS] * len(outcomes)
    records += _clear_elr_records(image, records)
    response = alter_response(response_cls, resources, outcomes)
    return ControllerResult([] if validate_only else records, response)


def incremental_alter_configs(image: MetadataImage, request: IncrementalAlterConfigsRequest,
                              controller_id: int, loggers: Mapping[str, str] | None = None) -> ControllerResult:
    """The records and response of the controller ``controller_id`` for an IncrementalAlterConfigs request:
    all resources' records in one atomic batch, nothing under ``ValidateOnly``; its BROKER_LOGGER
    resources judged against ``loggers`` (``logger_changes`` of the answer says what to change)."""
    return _alter(image, request.resources, request.validate_only, controller_id, incremental_ops,
                  IncrementalAlterConfigsResponse, loggers)


def alter_configs(image: MetadataImage, request: AlterConfigsRequest, controller_id: int) -> ControllerResult:
    """The same for a (legacy) AlterConfigs request: each resource's configs become its whole dynamic set."""
    return _alter(image, request.resources, request.validate_only, controller_id, legacy_ops, AlterConfigsResponse)
