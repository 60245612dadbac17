"""The controller's (and the receiving broker's) judgement of AlterConfigs, IncrementalAlterConfigs
and CreateTopics configs: the operations applied to a resource's dynamic configs, checked with
Kafka's error codes and texts (ConfigAdminManager, ConfigurationControlManager, LogConfig,
KafkaConfig). Pure: plain dicts of the strings ConfigRecords store, one per resource."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import IntEnum

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.constants import ConfigResourceType
from kraftwire.server.metadata.config_values import ConfigType, InvalidValue, java_split_commas, parse
from kraftwire.server.metadata.configs import (BROKER_CONFIGS, CORDONED_LOG_DIRS, CORDONED_LOG_DIRS_ALL,
                                               MIN_INSYNC_REPLICAS, QUOTA_CONFIGS, TOPIC_CONFIGS, ConfigKey,
                                               catalogue_of, topic_value)


class AlterOp(IntEnum):
    """IncrementalAlterConfigs ConfigOperation ids."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


# The controller refuses longer values (ConfigurationControlManager), counted in Java chars.
_MAX_VALUE_CHARS = 32767
_OWN_PREFIX = "kraftwire."

Op = tuple[str, int, str | None]
_OPERATION_IDS = frozenset(AlterOp)


def legacy_alter_ops(current: Mapping[str, str], configs: Sequence[tuple[str, str | None]]) -> list[Op]:
    """The incremental form of a (non-incremental) AlterConfigs resource: it sets every config given
    and deletes every other one the resource has."""
    given = {name for name, _ in configs}
    ops: list[Op] = [(name, AlterOp.SET, value) for name, value in configs]
    return ops + [(name, AlterOp.DELETE, None) for name in current if name not in given]


def apply_incremental(resource_type: int, current: Mapping[str, str], ops: Sequence[Op]) -> dict[str, str]:
    """The resource's dynamic configs after the operations, as Kafka's controller computes them.

    APPEND and SUBTRACT work on the comma-separated items of LIST configs, starting from Kafka's
    default when the config is unset: APPEND adds each item not yet present, in order; SUBTRACT
    removes the first occurrence of each. Raises KafkaError INVALID_CONFIG for them on other configs."""
    catalogue = catalogue_of(resource_type)
    updated = dict(current)
    for name, op, value in ops:
        if op == AlterOp.DELETE:
            updated.pop(name, None)
            continue
        assert value is not None, "check_operations refuses a null value but for DELETE"
        if op == AlterOp.SET:
            updated[name] = value
        else:
            key = catalogue.get(name)
            if key is None or key.type is not ConfigType.LIST:
                raise KafkaError(ErrorCode.INVALID_CONFIG,
                                 f"Can't {AlterOp(op).name} to key {name} because its type is not LIST.")
            base = updated.get(name, key.default_string)
            items = [item for item in base.split(",") if item] if base is not None else []
            for item in java_split_commas(value):
                if op == AlterOp.APPEND and item not in items:
                    items.append(item)
                elif op == AlterOp.SUBTRACT and item in items:
                    items.remove(item)
            updated[name] = ",".join(items)
    return updated


def validate_topic_changes(current: Mapping[str, str], ops: Sequence[Op],
                           broker_defaults: Mapping[str, str]) -> dict[str, str]:
    """Check an alteration of a topic's configs as Kafka's broker and controller do, and return the
    topic's new dynamic configs. Raises KafkaError: INVALID_REQUEST for malformed operations,
    INVALID_CONFIG for anything Kafka's LogConfig rejects."""
    check_operations(ops)
    updated = apply_incremental(ConfigResourceType.TOPIC, current, ops)
    _check_records(current, updated, ops, only_changes=True)
    unknown = next((name for name in updated if name not in TOPIC_CONFIGS), None)
    if unknown is not None:
        raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown topic config name: {unknown}")
    _parse_all(TOPIC_CONFIGS, updated, ErrorCode.INVALID_CONFIG)
    min_lag = topic_value(updated, broker_defaults, "min.compaction.lag.ms")
    max_lag = topic_value(updated, broker_defaults, "max.compaction.lag.ms")
    assert isinstance(min_lag, int) and isinstance(max_lag, int)  # LONG configs
    if min_lag > max_lag:
        raise KafkaError(ErrorCode.INVALID_CONFIG, "conflict topic config setting min.compaction.lag.ms "
                                         f"({min_lag}) > max.compaction.lag.ms ({max_lag})")
    if topic_value(updated, broker_defaults, "remote.storage.enable"):
        raise KafkaError(ErrorCode.INVALID_CONFIG, "Tiered Storage functionality is disabled in the broker. "
                                         "Topic cannot be configured with remote log storage.")
    return updated


def validate_topic_creation(configs: Sequence[tuple[str, str | None]],
                            broker_defaults: Mapping[str, str]) -> dict[str, str]:
    """Check the configs of a CreateTopics topic as Kafka's controller does and return them as the
    new topic's dynamic configs (a repeated name keeps its last value). Raises KafkaError
    INVALID_CONFIG, also for null values, which only this path words this way."""
    missing = [name for name, value in configs if value is None]
    if missing:
        raise KafkaError(ErrorCode.INVALID_CONFIG, "Null value not supported for topic configs: " + ",".join(missing))
    return validate_topic_changes({}, [(name, AlterOp.SET, value) for name, value in dict(configs).items()],
                                  broker_defaults)


def validate_broker_changes(resource_name: str, current: Mapping[str, str], ops: Sequence[Op], *,
                            elr_enabled: bool = False, cordoning: bool = True,
                            log_dirs: Sequence[str] | None = None) -> dict[str, str]:
    """Check an alteration of a broker's configs ("<id>", or "" for the cluster default) as the
    receiving broker and then the controller do, and return the resource's new dynamic configs.

    Values Kafka's broker rejects come back as INVALID_REQUEST, not INVALID_CONFIG (KAFKA-13609).
    Names Kafka does not know are accepted as custom configs, except under the kraftwire. prefix.
    ``elr_enabled`` adds the controller's min.insync.replicas rules for eligible leader replicas;
    ``cordoning`` false (metadata.version below 4.3-IV0) makes the controller refuse cordoned.log.dirs;
    ``log_dirs`` (the receiving broker's) are what cordoned.log.dirs may name."""
    check_operations(ops)
    _check_broker_list_operations(ops)
    updated = apply_incremental(ConfigResourceType.BROKER, current, ops)
    _check_broker_updatable(resource_name, updated)
    _parse_all(BROKER_CONFIGS, updated, ErrorCode.INVALID_REQUEST)
    if log_dirs is not None and updated.get(CORDONED_LOG_DIRS):
        _check_cordoned_log_dirs(updated[CORDONED_LOG_DIRS], log_dirs)
    _check_records(current, updated, ops, only_changes=False, elr_resource=resource_name if elr_enabled else None)
    if not cordoning and any(name == CORDONED_LOG_DIRS for name, _, _ in ops):
        raise KafkaError(ErrorCode.INVALID_CONFIG, f"The {CORDONED_LOG_DIRS} configuration value cannot be set because "
                                                   "it requires metadata.version >= 4.3-IV0")
    return updated


def validate_broker_changes_at_controller(resource_name: str, current: Mapping[str, str], ops: Sequence[Op], *,
                                          elr_enabled: bool = False, cordoning: bool = True) -> dict[str, str]:
    """The controller's own check of a broker resource's alteration, and the resource's new dynamic configs.

    Kafka's controller leaves the values of broker configs to the receiving broker (its
    ControllerConfigurationValidator checks only the resource name for BROKER), so a request sent to
    the controller directly may set any value, e.g. ``leader.replication.throttled.rate=-5``; what it
    keeps are its record rules (LIST-only APPEND/SUBTRACT, eligible leader replicas' min.insync.replicas,
    the value size, cordoned.log.dirs' metadata.version). kraftwire adds only the rules of its own
    configs (``kraftwire.*``, and those it cannot change while a broker runs), which Kafka has not."""
    check_operations(ops)
    updated = apply_incremental(ConfigResourceType.BROKER, current, ops)
    _check_kraftwire_rules(resource_name, updated)
    own = {name: key for name, key in BROKER_CONFIGS.items() if name.startswith(_OWN_PREFIX)}
    _parse_all(own, updated, ErrorCode.INVALID_REQUEST)
    _check_records(current, updated, ops, only_changes=False, elr_resource=resource_name if elr_enabled else None)
    if not cordoning and any(name == CORDONED_LOG_DIRS for name, _, _ in ops):
        raise KafkaError(ErrorCode.INVALID_CONFIG, f"The {CORDONED_LOG_DIRS} configuration value cannot be set because "
                                                   "it requires metadata.version >= 4.3-IV0")
    return updated


def _check_broker_list_operations(ops: Sequence[Op]) -> None:
    """APPEND and SUBTRACT apply only to known LIST broker configs (not quotas): INVALID_CONFIG."""
    for name, op, _ in ops:
        if op in (AlterOp.APPEND, AlterOp.SUBTRACT):
            key = BROKER_CONFIGS.get(name)
            if key is None or name in QUOTA_CONFIGS:
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown config name: {name}")
            if key.type is not ConfigType.LIST:
                raise KafkaError(ErrorCode.INVALID_CONFIG,
                                 f"Config value {AlterOp(op).name.lower()} is not allowed for config key: {name}")


def _check_broker_updatable(resource_name: str, updated: Mapping[str, str]) -> None:
    """The configs set must be ones that may change on a running broker (or on this resource): INVALID_REQUEST."""
    fixed = sorted(name for name in updated if name in BROKER_CONFIGS and BROKER_CONFIGS[name].read_only)
    if fixed:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Cannot update these configs dynamically: [{', '.join(fixed)}]")
    per_broker = sorted(name for name in updated if name in BROKER_CONFIGS and BROKER_CONFIGS[name].per_broker_only)
    if not resource_name and per_broker:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Cannot update these configs at default cluster level, broker id "
                                                    f"must be specified: [{', '.join(per_broker)}]")
    _check_kraftwire_rules(resource_name, updated)


def _check_kraftwire_rules(resource_name: str, updated: Mapping[str, str]) -> None:
    """kraftwire's own limits, which Kafka has not: what a simulated broker cannot change while it runs,
    unknown ``kraftwire.`` names, and its cluster-only configs: INVALID_REQUEST."""
    fixed_here = sorted(name for name in updated if name in BROKER_CONFIGS and BROKER_CONFIGS[name].startup_only)
    if fixed_here:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "kraftwire cannot update these configs of a running broker, "
                                                    f"which Kafka can: [{', '.join(fixed_here)}]")
    unknown_own = next((name for name in updated if name.startswith(_OWN_PREFIX) and name not in BROKER_CONFIGS), None)
    if unknown_own is not None:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown kraftwire config name: {unknown_own}")
    cluster_only = sorted(name for name in updated if name in BROKER_CONFIGS and BROKER_CONFIGS[name].cluster_only)
    if resource_name and cluster_only:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Cannot update these configs for a single broker, only as the "
                                          f"cluster default (empty broker id): [{', '.join(cluster_only)}]")


def _check_cordoned_log_dirs(value: str, log_dirs: Sequence[str]) -> None:
    """The receiving broker's check (DynamicLogConfig): entries of its log.dirs, or * (all of them)."""
    entries = parse(BROKER_CONFIGS[CORDONED_LOG_DIRS], value)
    assert isinstance(entries, tuple)  # a LIST config parses to a tuple of str
    if CORDONED_LOG_DIRS_ALL in entries:
        return
    unknown = next((entry for entry in entries if entry not in log_dirs), None)
    if unknown is not None:
        raise KafkaError(ErrorCode.INVALID_REQUEST,
                         f"Invalid value [{', '.join(entries)}] for configuration {CORDONED_LOG_DIRS}: "
                         f"Invalid entry in {CORDONED_LOG_DIRS}: {unknown}. "
                         "All cordoned log dirs must be entries of log.dirs or log.dir.")


def check_operations(ops: Sequence[Op]) -> None:
    """The receiving broker's checks of a resource's operations, before anything else."""
    names = [name for name, _, _ in ops]
    if len(set(names)) != len(names):
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
    missing = [name for name, op, value in ops if op != AlterOp.DELETE and value is None]
    if missing:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Null value not supported for : " + ", ".join(missing))
    bad_op = next((op for _, op, _ in ops if op not in _OPERATION_IDS), None)
    if bad_op is not None:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown operations type {bad_op}")


def _check_records(current: Mapping[str, str], updated: Mapping[str, str], ops: Sequence[Op], *,
                   only_changes: bool, elr_resource: str | None = None) -> None:
    """The controller's checks of each ConfigRecord it would write. Topic records are written only
    for changed values, broker records always (KAFKA-14136). ``elr_resource`` names the broker
    resource when eligible leader replicas are on: min.insync.replicas then lives only on the
    cluster default."""
    for name, _, _ in ops:
        value = updated.get(name)
        if only_changes and value == current.get(name):
            continue
        if elr_resource is not None and name == MIN_INSYNC_REPLICAS:
            if elr_resource:
                raise KafkaError(ErrorCode.INVALID_CONFIG,
                                 "Broker-level min.insync.replicas cannot be altered while ELR is enabled.")
            if value is None:
                raise KafkaError(ErrorCode.INVALID_CONFIG,
                                 "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.")
        if value is not None and len(value.encode("utf-16-le")) // 2 > _MAX_VALUE_CHARS:
            raise KafkaError(ErrorCode.INVALID_CONFIG, "The configuration value cannot be added because it exceeds "
                                             f"the maximum value size of {_MAX_VALUE_CHARS} bytes.")


def _parse_all(catalogue: Mapping[str, ConfigKey], configs: Mapping[str, str], error_code: int) -> None:
    """Parse every known config that is set, in definition order, so the first failure reported is
    the one Kafka would report."""
    try:
        for name, key in catalogue.items():
            if name in configs:
                parse(key, configs[name])
    except InvalidValue as invalid:
        raise KafkaError(error_code, str(invalid)) from None
