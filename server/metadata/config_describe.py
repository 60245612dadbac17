"""DescribeConfigs entries of topics, brokers and the cluster default, as Kafka's ConfigHelper makes
them: value, source, synonyms, read-only and sensitive flags, type and documentation."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from itertools import dropwhile
from typing import NamedTuple

from kraftwire.codec.constants import ConfigResourceType

from .config_values import ConfigType, InvalidValue, parse, render
from .configs import BROKER_CONFIGS, QUOTA_CONFIGS, SYNONYM_GROUPS, TOPIC_CONFIGS, ConfigKey, topic_value


class ConfigSource(IntEnum):
    """DescribeConfigs ConfigSource ids."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5


Synonym = tuple[str, str | None, int]


@dataclass(frozen=True)
class ConfigEntry:
    """One DescribeConfigs result entry. ``synonyms`` holds (name, value, source), most specific first."""

    name: str
    value: str | None
    read_only: bool
    is_default: bool
    is_sensitive: bool
    source: int
    config_type: int
    documentation: str | None
    synonyms: list[Synonym]


def _synonym_chain(name: str, layers: Sequence[tuple[Mapping[str, str], ConfigSource]]) -> list[Synonym]:
    """Kafka's synonym list for a broker config: every setting of it or of its synonyms, by source
    and then by synonym priority, with Kafka's defaults last, starting at the first entry that names
    the config itself (so log.retention.ms with only log.retention.hours known has none)."""
    group = SYNONYM_GROUPS.get(name, (name,))
    found: list[Synonym] = [(synonym, values[synonym], source) for values, source in layers
             for synonym in group if synonym in values]
    # Kafka knows no static default for its quota keys, so they never get a DEFAULT_CONFIG synonym.
    found += [(synonym, BROKER_CONFIGS[synonym].default_string, ConfigSource.DEFAULT_CONFIG)
              for synonym in group
              if synonym in BROKER_CONFIGS and BROKER_CONFIGS[synonym].default is not None
              and synonym not in QUOTA_CONFIGS]
    return list(dropwhile(lambda synonym: synonym[0] != name, found))


class _Row(NamedTuple):
    """What a DescribeConfigs entry is made from."""

    name: str
    key: ConfigKey | None
    value: str | None
    chain: list[Synonym]
    read_only: bool


def _entry(row: _Row, include_synonyms: bool, include_documentation: bool) -> ConfigEntry:
    # Kafka treats a config it has no definition for as sensitive, and a PASSWORD one: it never shows the value.
    sensitive = row.key is None or row.key.sensitive
    value, chain = row.value, row.chain
    if sensitive:
        value = None
        chain = [(synonym, None, source) for synonym, _, source in chain]
    source = chain[0][2] if chain else ConfigSource.DEFAULT_CONFIG
    return ConfigEntry(
        name=row.name,
        value=value,
        read_only=row.read_only,
        is_default=source == ConfigSource.DEFAULT_CONFIG,
        is_sensitive=sensitive,
        source=int(source),
        config_type=int(row.key.type if row.key else ConfigType.UNKNOWN),
        documentation=row.key.doc if include_documentation and row.key else None,
        synonyms=[(synonym, text, int(source)) for synonym, text, source in chain] if include_synonyms else [],
    )


def describe(resource_type: int, resource_name: str, dynamic: Mapping[str, str],
             broker_defaults: Mapping[str, str], keys: Sequence[str] | None = None,
             include_synonyms: bool = False, include_documentation: bool = False,
             static: Mapping[str, str] | None = None,
             own_broker: Mapping[str, str] | None = None) -> list[ConfigEntry]:
    """The DescribeConfigs entries of one resource, in catalogue order.

    ``dynamic`` holds the resource's own dynamic configs (for the broker resource "" these are the
    cluster defaults); ``broker_defaults`` the cluster defaults. A topic lists every topic config; a
    broker every broker config of the catalogue (so the throttle rates always show, where Kafka shows
    them only once set) plus any custom keys set on it or cluster-wide; the cluster default resource
    only what is set there. ``static`` holds a broker's own startup configs (node.id, listeners, ...),
    reported with source STATIC_BROKER_CONFIG. ``own_broker`` holds the answering broker's own dynamic
    configs: a topic config it does not set takes its broker synonym from there first
    (DYNAMIC_BROKER_CONFIG), then from the cluster defaults, as Kafka's broker computes a topic's
    config from its own. ``keys`` (None or empty for all) filters the result; names that do not exist
    are left out, as Kafka does."""
    def selected(names: Iterable[str]) -> list[str]:
        return [name for name in names if not keys or name in keys]

    if resource_type == ConfigResourceType.TOPIC:
        rows = [_topic_row(name, dynamic, broker_defaults, own_broker or {}) for name in selected(TOPIC_CONFIGS)]
    elif resource_type == ConfigResourceType.BROKER and resource_name == "":
        names = [name for name in BROKER_CONFIGS if name in dynamic]
        names += sorted(dynamic.keys() - BROKER_CONFIGS.keys())
        rows = [_cluster_default_row(name, dynamic) for name in selected(names)]
    elif resource_type == ConfigResourceType.BROKER:
        names = [*BROKER_CONFIGS, *sorted((dynamic.keys() | broker_defaults.keys()) - BROKER_CONFIGS.keys())]
        startup = {"broker.id": resource_name, **(static or {})}
        rows = [_broker_row(name, dynamic, broker_defaults, startup) for name in selected(names)]
    else:
        raise ValueError(f"no dynamic configs for resource type {resource_type}")
    return [_entry(row, include_synonyms, include_documentation) for row in rows]


def _topic_row(name: str, dynamic: Mapping[str, str], broker_defaults: Mapping[str, str],
               own_broker: Mapping[str, str]) -> _Row:
    key = TOPIC_CONFIGS[name]
    value = render(topic_value(dynamic, {**broker_defaults, **own_broker}, name))
    chain: list[Synonym] = [(name, value, ConfigSource.DYNAMIC_TOPIC_CONFIG)] if name in dynamic else []
    if key.broker_synonyms:
        chain += _synonym_chain(key.broker_synonyms[0],
                                [(own_broker, ConfigSource.DYNAMIC_BROKER_CONFIG),
                                 (broker_defaults, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)])
    return _Row(name, key, value, chain, False)


def _broker_row(name: str, per_broker: Mapping[str, str], cluster_defaults: Mapping[str, str],
                static: Mapping[str, str]) -> _Row:
    key = BROKER_CONFIGS.get(name)
    layers = [(per_broker, ConfigSource.DYNAMIC_BROKER_CONFIG),
              (cluster_defaults, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
              (static, ConfigSource.STATIC_BROKER_CONFIG)]
    raw = next((values[name] for values, _ in layers if name in values), None)
    if key is None:
        value = raw
    elif raw is None:
        value = key.default_string
    else:
        try:
            value = render(parse(key, raw))
        except InvalidValue:  # stored through the controller unchecked (Kafka's controller does not check
            value = raw       # broker values); Kafka's broker shows the stored string

    return _Row(name, key, value, _synonym_chain(name, layers), key is None or key.read_only)


def _cluster_default_row(name: str, cluster_defaults: Mapping[str, str]) -> _Row:
    key = BROKER_CONFIGS.get(name)
    layer = [(cluster_defaults, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)]
    chain = [synonym for synonym in _synonym_chain(name, layer)
             if synonym[2] == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]
    return _Row(name, key, cluster_defaults[name], chain, key is None or key.read_only)
