"""BROKER_LOGGER resources (config resource type 8): a node's loggers and their levels, described by
DescribeConfigs and changed by IncrementalAlterConfigs, as Kafka's ConfigHelper and RuntimeLoggerManager
answer them. Not metadata: nothing is written to the log, and each node answers for itself.

The loggers are the process's real Python loggers: ``root`` and every logger of kraftwire's own
(``kraftwire`` and ``kraftwire.*``), each with its effective level in log4j's names (CRITICAL is FATAL,
WARNING is WARN, below DEBUG is TRACE, root at NOTSET is ALL). Setting one of Kafka's levels (FATAL, ERROR,
WARN, INFO, DEBUG, TRACE) sets the Python logger's level (TRACE is 5); DELETE unsets it, so it inherits
its parent's. Where kraftwire differs (README): the brokers and controller of one process share its
loggers, so a change made through one of them is seen by all of them.

``loggers`` and ``apply_changes`` read and change the process's logging; the checks and answers in
between are pure functions of a ``{name: level}`` mapping.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.server.metadata.config_describe import ConfigEntry

from .config_validation import AlterOp, Op

ROOT = "root"  # Kafka's name for the root logger
OWN_PREFIX = "kraftwire"
DYNAMIC_BROKER_LOGGER_CONFIG = 6  # DescribeConfigs ConfigSource
LOG4J_LEVELS = {"FATAL": logging.CRITICAL, "ERROR": logging.ERROR, "WARN": logging.WARNING, "INFO": logging.INFO,
                "DEBUG": logging.DEBUG, "TRACE": 5}
VALID_LEVELS_TEXT = ", ".join(sorted(LOG4J_LEVELS))


def log4j_level(level: int) -> str:
    """A Python level in log4j's words."""
    if level == logging.NOTSET:
        return "ALL"
    if level > logging.CRITICAL:
        return "OFF"
    for name, value in sorted(LOG4J_LEVELS.items(), key=lambda item: item[1]):
        if level <= value:
            return name
    return "FATAL"


def loggers() -> dict[str, str]:
    """The process's loggers that a BROKER_LOGGER resource shows: root and kraftwire's, with their levels."""
    shown = {ROOT: log4j_level(logging.getLogger().getEffectiveLevel())}
    for name, logger in list(logging.Logger.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger) and (name == OWN_PREFIX or name.startswith(OWN_PREFIX + ".")):
            shown[name] = log4j_level(logger.getEffectiveLevel())
    return shown


def _node_id(name: str) -> int | None:
    try:
        return int(name)
    except ValueError:
        return None


def describe(resource_name: str, node_id: int, keys: Sequence[str] | None,
             current: Mapping[str, str]) -> list[ConfigEntry]:
    """The DescribeConfigs entries of node ``node_id``'s loggers (``keys``: only those); raises KafkaError
    INVALID_REQUEST with Kafka's words for a resource naming no node or another one."""
    if not resource_name:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Broker id must not be empty")
    requested = _node_id(resource_name)
    if requested is None:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Broker id must be an integer, but it is: {resource_name}")
    if requested != node_id:
        raise KafkaError(ErrorCode.INVALID_REQUEST,
                         f"Unexpected broker id, expected {node_id} but received {resource_name}")
    wanted = set(keys) if keys else None
    return [ConfigEntry(name=name, value=level, read_only=False, is_default=False, is_sensitive=False,
                        source=DYNAMIC_BROKER_LOGGER_CONFIG, config_type=0, documentation=None, synonyms=[])
            for name, level in sorted(current.items()) if wanted is None or name in wanted]


def check_changes(resource_name: str, node_id: int, ops: Sequence[Op], current: Mapping[str, str]) -> None:
    """Kafka's checks of a BROKER_LOGGER resource's operations (RuntimeLoggerManager); raises KafkaError:
    INVALID_REQUEST for another node, root's removal and list operations, INVALID_CONFIG for an unknown
    logger or level."""
    requested = _node_id(resource_name)
    if requested is None:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Node id must be an integer, but it is: {resource_name}")
    if requested != node_id:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unexpected node id. Expected {node_id}, but received {requested}")
    for name, op, value in ops:
        if op in (AlterOp.SET, AlterOp.DELETE) and name not in current:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Logger {name} does not exist!")
        if op == AlterOp.SET and value not in LOG4J_LEVELS:
            raise KafkaError(ErrorCode.INVALID_CONFIG,
                             f"Cannot set the log level of {name} to {value} as it is not a supported log level. "
                             f"Valid log levels are {VALID_LEVELS_TEXT}")
        if op == AlterOp.DELETE and name == ROOT:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Removing the log level of the {ROOT} logger is not allowed")
        if op in (AlterOp.APPEND, AlterOp.SUBTRACT):
            raise KafkaError(ErrorCode.INVALID_REQUEST,
                             f"{AlterOp(op).name} operation is not allowed for the BROKER_LOGGER resource")


def apply_changes(ops: Sequence[Op]) -> None:
    """Carry out checked operations on the process's loggers."""
    for name, op, value in ops:
        logger = logging.getLogger() if name == ROOT else logging.getLogger(name)
        logger.setLevel(LOG4J_LEVELS[value] if op == AlterOp.SET and value is not None else logging.NOTSET)
