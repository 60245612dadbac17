"""GROUP config resources (KIP-848's group configs, resource type 32), as Kafka 4.3.1's GroupConfig
defines them: each config's type, its lower bound, the broker config whose value it takes while the
group does not set it (its synonym), and the bounds its value must keep, read from the broker configs
(group.consumer.min.session.timeout.ms and the like), with Kafka's messages. Stored as ConfigRecords of
resource type 32 in the metadata log; a group's configs exist whether or not the group does."""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kraftwire.codec import ErrorCode, KafkaError

from .config_values import ConfigType, InvalidValue, OneOf, Range, Validator, parse
from .configs import BROKER_CONFIGS, ConfigKey

GROUP_CONFIG_SOURCE = 8  # DescribeConfigs ConfigSource GROUP_CONFIG
DEFAULT_CONFIG_SOURCE = 5
STATIC_BROKER_CONFIG_SOURCE = 4
_DURATION = re.compile(r"P(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?", re.IGNORECASE)


def _check_auto_offset_reset(name: str, value: str) -> None:
    text = value.lower()
    if text in ("earliest", "latest"):
        return
    if text.startswith("by_duration:") and _DURATION.fullmatch(value[len("by_duration:"):].strip()) \
            and value[len("by_duration:"):].strip().upper() not in ("P", "PT"):
        return
    raise InvalidValue(f"Invalid value {value} for configuration {name}: Invalid value `{value}` for configuration "
                       f"{name}. The value must be either 'earliest', 'latest' or of the format "
                       f"'by_duration:<PnDTnHnMn.nS>'.")


@dataclass(frozen=True)
class GroupConfig:
    name: str
    type: ConfigType
    default: str
    synonym: str | None  # the broker config supplying the value while the group does not set it
    validator: Validator | None = None
    low: str | None = None  # broker configs bounding the value: at least ``low`` and at most ``high``
    high: str | None = None
    bounded_if_set: bool = False  # Kafka checks the bounds only when the group sets the value


def _int(name: str, synonym: str, at_least: int, low: str | None = None, high: str | None = None,
         bounded_if_set: bool = False) -> GroupConfig:
    return GroupConfig(name, ConfigType.INT, str(BROKER_CONFIGS[synonym].default), synonym, Range(at_least),
                       low, high, bounded_if_set)


def _share(config: str) -> tuple[str, str]:
    return f"group.share.min.{config}", f"group.share.max.{config}"


GROUP_CONFIG_LIST = [
    _int("consumer.session.timeout.ms", "group.consumer.session.timeout.ms", 1,
         "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"),
    _int("consumer.heartbeat.interval.ms", "group.consumer.heartbeat.interval.ms", 1,
         "group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"),
    _int("consumer.assignment.interval.ms", "group.consumer.assignment.interval.ms", 0,
         "group.consumer.min.assignment.interval.ms", "group.consumer.max.assignment.interval.ms", True),
    _int("share.session.timeout.ms", "group.share.session.timeout.ms", 1, *_share("session.timeout.ms")),
    _int("share.heartbeat.interval.ms", "group.share.heartbeat.interval.ms", 1, *_share("heartbeat.interval.ms")),
    _int("share.record.lock.duration.ms", "group.share.record.lock.duration.ms", 1000,
         *_share("record.lock.duration.ms")),
    _int("share.delivery.count.limit", "group.share.delivery.count.limit", 2, *_share("delivery.count.limit")),
    _int("share.partition.max.record.locks", "group.share.partition.max.record.locks", 100,
         *_share("partition.max.record.locks")),
    GroupConfig("share.auto.offset.reset", ConfigType.STRING, "latest", None, _check_auto_offset_reset),
    GroupConfig("share.isolation.level", ConfigType.STRING, "read_uncommitted", None,
                OneOf("read_committed", "read_uncommitted")),
    GroupConfig("share.renew.acknowledge.enable", ConfigType.BOOLEAN, "true", None),
    _int("share.assignment.interval.ms", "group.share.assignment.interval.ms", 0,
         *_share("assignment.interval.ms"), True),
    _int("streams.session.timeout.ms", "group.streams.session.timeout.ms", 1,
         "group.streams.min.session.timeout.ms", "group.streams.max.session.timeout.ms"),
    _int("streams.heartbeat.interval.ms", "group.streams.heartbeat.interval.ms", 1,
         "group.streams.min.heartbeat.interval.ms", "group.streams.max.heartbeat.interval.ms"),
    _int("streams.num.standby.replicas", "group.streams.num.standby.replicas", 0,
         None, "group.streams.max.standby.replicas"),
    _int("streams.initial.rebalance.delay.ms", "group.streams.initial.rebalance.delay.ms", 0),
    _int("streams.assignment.interval.ms", "group.streams.assignment.interval.ms", 0,
         "group.streams.min.assignment.interval.ms", "group.streams.max.assignment.interval.ms", True),
]
GROUP_CONFIGS: dict[str, GroupConfig] = {c.name: c for c in GROUP_CONFIG_LIST}
# session timeout > heartbeat interval, per group type
_SESSION_OVER_HEARTBEAT = [(f"{kind}.session.timeout.ms", f"{kind}.heartbeat.interval.ms")
                           for kind in ("consumer", "share", "streams")]


def as_config_keys() -> dict[str, ConfigKey]:
    """The group configs as catalogue keys (for the incremental operations' LIST check)."""
    return {c.name: ConfigKey(c.name, c.type, c.default, "", c.validator) for c in GROUP_CONFIG_LIST}


def _broker_value(name: str, static: Mapping[str, str]) -> str:
    value = static.get(name)
    return value if value is not None else str(BROKER_CONFIGS[name].default)


def effective(config: GroupConfig, static: Mapping[str, str]) -> str:
    """The value a group takes while it does not set the config."""
    return _broker_value(config.synonym, static) if config.synonym is not None else config.default


def validate(updated: Mapping[str, str], static: Mapping[str, str]) -> None:
    """A group's dynamic configs after a change, checked as GroupConfig.validate does (names, then
    values with the broker's bounds); KafkaError INVALID_CONFIG with Kafka's message."""
    for name in updated:
        if name not in GROUP_CONFIGS:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown group config name: {name}")
    values: dict[str, object] = {}
    for config in GROUP_CONFIG_LIST:
        raw = updated.get(config.name, effective(config, static))
        try:
            values[config.name] = parse(ConfigKey(config.name, config.type, None, "", config.validator), raw)
        except InvalidValue as refused:
            raise KafkaError(ErrorCode.INVALID_CONFIG, str(refused)) from None
    for config in GROUP_CONFIG_LIST:
        if config.bounded_if_set and config.name not in updated:
            continue
        value = values[config.name]
        assert isinstance(value, int) or config.low is None and config.high is None
        if config.low is not None and int(_broker_value(config.low, static)) > value:  # type: ignore[operator]
            raise KafkaError(ErrorCode.INVALID_CONFIG,
                             f"{config.name} must be greater than or equal to {config.low}")
        if config.high is not None and int(_broker_value(config.high, static)) < value:  # type: ignore[operator]
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"{config.name} must be less than or equal to {config.high}")
    for session, heartbeat in _SESSION_OVER_HEARTBEAT:
        if values[session] <= values[heartbeat]:  # type: ignore[operator]
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"{session} must be greater than {heartbeat}")


@dataclass(frozen=True)
class GroupEntry:
    """One DescribeConfigs entry of a group: ``synonyms`` as (name, value, source)."""

    name: str
    value: str
    source: int
    config_type: int
    synonyms: list[tuple[str, str, int]]


def describe(dynamic: Mapping[str, str], static: Mapping[str, str],
             keys: Sequence[str] | None) -> list[GroupEntry]:
    """A group's entries, every config (or those of ``keys`` that exist), by name: the group's own value
    (source GROUP_CONFIG) over the broker synonym's (a static broker config, else Kafka's default)."""
    entries = []
    for config in sorted(GROUP_CONFIG_LIST, key=lambda c: c.name):
        if keys is not None and config.name not in keys:
            continue
        if config.synonym is not None:
            source = STATIC_BROKER_CONFIG_SOURCE if config.synonym in static else DEFAULT_CONFIG_SOURCE
            fallback = (config.synonym, effective(config, static), source)
        else:
            fallback = (config.name, config.default, DEFAULT_CONFIG_SOURCE)
        synonyms = [fallback]
        value, source = fallback[1], fallback[2]
        if config.name in dynamic:
            value, source = dynamic[config.name], GROUP_CONFIG_SOURCE
            synonyms.insert(0, (config.name, value, GROUP_CONFIG_SOURCE))
        entries.append(GroupEntry(config.name, value, source, int(config.type), synonyms))
    return entries
