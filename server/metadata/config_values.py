"""Config values as Kafka's ConfigDef reads and prints them: the DescribeConfigs type ids, parsing of
the strings ConfigRecords store (with Kafka's ConfigException texts) and rendering back to strings, so
that error texts and rendered values match Kafka's to the character. Pure; knows no config names."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from decimal import Decimal
from enum import IntEnum
from typing import Any, Protocol


class ConfigType(IntEnum):
    """DescribeConfigs ConfigType ids."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class InvalidValue(ValueError):
    """A value Kafka's ConfigDef rejects; the text is Kafka's ConfigException message."""


def rejected(name: str, value: object, reason: str) -> InvalidValue:
    return InvalidValue(f"Invalid value {java_str(value)} for configuration {name}: {reason}")


JAVA_TRIMMED = "".join(map(chr, range(0x21)))  # String.trim() drops every char <= ' '
_INTEGER_SYNTAX = re.compile(r"[+-]?[0-9]+")
_DOUBLE_SYNTAX = re.compile(r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?)")
_LIST_SEPARATOR = re.compile(r"[ \t\n\x0b\f\r]*,[ \t\n\x0b\f\r]*")
_INTEGER_BITS = {ConfigType.SHORT: 15, ConfigType.INT: 31, ConfigType.LONG: 63}


def java_double(number: float) -> str:
    """Double.toString: shortest digits, plain between 1e-3 and 1e7, else d.dddE<n>."""
    if math.isnan(number):
        return "NaN"
    sign = "-" if math.copysign(1.0, number) < 0 else ""
    if math.isinf(number):
        return sign + "Infinity"
    if number == 0:
        return sign + "0.0"
    _, digit_tuple, exponent = Decimal(repr(abs(number))).as_tuple()
    assert isinstance(exponent, int)  # a finite number's (NaN and infinities are handled above)
    point = len(digit_tuple) + exponent - 1  # power of ten of the first digit
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    if not 1e-3 <= abs(number) < 1e7:
        return f"{sign}{digits[0]}.{digits[1:] or '0'}E{point}"
    if point < 0:
        return f"{sign}0.{'0' * (-point - 1)}{digits}"
    return f"{sign}{digits[:point + 1].ljust(point + 1, '0')}.{digits[point + 1:] or '0'}"


def java_str(value: object) -> str:
    """How Java's toString prints the parsed value (a list prints as [a, b])."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double(value)
    if isinstance(value, tuple):
        return "[" + ", ".join(value) + "]"
    return str(value)


def render(value: object) -> str:
    """ConfigDef.convertToString: the string DescribeConfigs reports (a list joins with commas)."""
    return ",".join(value) if isinstance(value, tuple) else java_str(value)


def java_split_commas(text: str) -> list[str]:
    """String.split(","): like str.split, but trailing empty parts are dropped."""
    if "," not in text:
        return [text]
    parts = text.split(",")
    while parts and not parts[-1]:
        parts.pop()
    return parts


# ---------------------------------------------------------------------------------------------------
# Validators: called with (config name, parsed value); raise InvalidValue with Kafka's text.

class Range:
    def __init__(self, low: float | None = None, high: float | None = None):
        self.low, self.high = low, high

    def __call__(self, name: str, value: float) -> None:
        # Comparisons with NaN are false, so NaN passes, as it does in Kafka.
        if self.low is not None and value < self.low:
            raise rejected(name, value, f"Value must be at least {self.low}")
        if self.high is not None and value > self.high:
            raise rejected(name, value, f"Value must be no more than {self.high}")


class OneOf:
    def __init__(self, *choices: str):
        self.choices = choices

    def __call__(self, name: str, value: str) -> None:
        if value not in self.choices:
            raise rejected(name, value, "String must be one of: " + ", ".join(self.choices))


class ListOf:
    """A list whose items are each one of the choices; the empty list is allowed. Kafka drops
    duplicate items before checking (see _parse)."""

    def __init__(self, *choices: str):
        self.item = OneOf(*choices)

    def __call__(self, name: str, values: tuple[str, ...]) -> None:
        for value in values:
            if not value:
                raise InvalidValue(f"Configuration '{name}' values must not be empty.")
            self.item(name, value)


class Requirement:
    """A broker-level consistency rule that KafkaConfig enforces with Scala's require()."""

    def __init__(self, holds: Callable[[int], bool], rule: str):
        self.holds, self.rule = holds, rule

    def __call__(self, name: str, value: int) -> None:
        if not self.holds(value):
            raise InvalidValue(f"requirement failed: {self.rule}")


_THROTTLED_REPLICA = re.compile(r"(?:[0-9]+:[0-9]+)?")


def check_throttled_replicas(name: str, items: tuple[str, ...]) -> None:
    """Either exactly '*' or partition:broker pairs; empty items are tolerated."""
    trimmed = [item.strip(JAVA_TRIMMED) for item in items]
    if not (all(_THROTTLED_REPLICA.fullmatch(item) for item in trimmed) or "".join(trimmed) == "*"):
        raise rejected(name, items, f"{name} must be the literal '*' or a list of replicas in the "
                                     "following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")


def check_partition_sizes(name: str, items: tuple[str, ...]) -> None:
    """partition:bytes pairs, each size a whole number of bytes that fits a long."""
    for item in items:
        partition, sep, size = item.strip(JAVA_TRIMMED).partition(":")
        if not (sep and partition.isdigit() and size.isdigit() and int(size) < 1 << 63):
            raise rejected(name, items, f"{name} must be a list of partition sizes in the following format: "
                                        "[partitionId]:[bytes],[partitionId]:[bytes],...")


def check_gzip_level(name: str, level: int) -> None:
    if level > 9 or (level < 1 and level != -1):
        raise rejected(name, level, "Value must be between 1 and 9 or equal to -1")


# A validator is called with the config's name and its parsed value, whose type the config's type sets
# (bool, int, float, str or a tuple of str): hence Any.
Validator = Callable[[str, Any], None]


class Definition(Protocol):
    """What parsing needs of a config's definition (``configs.ConfigKey`` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def type(self) -> ConfigType: ...
    @property
    def validator(self) -> Validator | None: ...


def parse(key: Definition, raw: str) -> object:
    """Parse and check a stored or requested string as Kafka's ConfigDef.parseValue does."""
    text = raw.strip(JAVA_TRIMMED)
    if key.type is ConfigType.BOOLEAN:
        if text.lower() not in ("true", "false"):
            raise rejected(key.name, raw, "Expected value to be either true or false")
        value: object = text.lower() == "true"
    elif key.type in _INTEGER_BITS:
        bits = _INTEGER_BITS[key.type]
        if not _INTEGER_SYNTAX.fullmatch(text) or not -(1 << bits) <= int(text) < (1 << bits):
            raise rejected(key.name, raw, f"Not a number of type {key.type.name}")
        value = int(text)
    elif key.type is ConfigType.DOUBLE:
        if not _DOUBLE_SYNTAX.fullmatch(text):
            raise rejected(key.name, raw, f"Not a number of type {key.type.name}")
        value = float(text.rstrip("fFdD"))
    elif key.type is ConfigType.LIST:
        value = tuple(_LIST_SEPARATOR.split(text)) if text else ()
        if isinstance(key.validator, ListOf):
            value = tuple(dict.fromkeys(value))
    else:
        value = text
    if key.validator is not None:
        key.validator(key.name, value)
    return value


