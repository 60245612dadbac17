"""Load Kafka-style JSON schemas (``schemas/``) into a small typed model.

The model is pure data: which fields a struct has, in which versions each field exists, is nullable or
tagged, and what its default is. ``codec.generate`` declares a class per schema from it, and
``codec.structs`` turns it into codecs.
"""
from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

PRIMITIVES = frozenset(
    {"bool", "int8", "int16", "int32", "int64", "uint16", "uint32", "float64", "string", "bytes", "uuid", "records"}
)


@dataclass(frozen=True)
class Versions:
    """An inclusive version range; ``high=None`` means open-ended ("3+"). ``Versions.NONE`` is empty."""

    low: int
    high: int | None

    @classmethod
    def parse(cls, text: str | None) -> Versions:
        text = (text or "none").strip()
        if text == "none":
            return NO_VERSIONS
        if text.endswith("+"):
            return cls(int(text[:-1]), None)
        if "-" in text:
            low, high = text.split("-")
            return cls(int(low), int(high))
        return cls(int(text), int(text))

    def __contains__(self, version: int) -> bool:
        return self.low <= version and (self.high is None or version <= self.high)

    def __iter__(self) -> Iterator[int]:
        if self.high is None:
            raise ValueError("an open version range cannot be iterated")
        return iter(range(self.low, self.high + 1))

    def __str__(self) -> str:
        if self is NO_VERSIONS or self.low > (self.high if self.high is not None else self.low):
            return "none"
        if self.high is None:
            return f"{self.low}+"
        return f"{self.low}" if self.low == self.high else f"{self.low}-{self.high}"


NO_VERSIONS = Versions(1, 0)


def snake_case(name: str) -> str:
    """``TimeoutMs`` -> ``timeout_ms``; ``isKRaftController`` -> ``is_k_raft_controller``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


@dataclass(frozen=True)
class FieldSpec:
    name: str
    attr: str  # snake_case attribute name on message objects
    type: str  # primitive name, struct name, or "[]" + element type
    versions: Versions
    nullable: Versions
    tagged: Versions
    tag: int | None
    ignorable: bool
    flexible_override: Versions | None  # a field-level flexibleVersions ("none" for RequestHeader.ClientId)
    default_text: str | None
    struct: StructSpec | None  # the element/struct type for struct and struct-array fields
    about: str = ""  # the schema's description of the field, whitespace collapsed

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:] if self.is_array else self.type

    def default(self) -> Any:
        """The value a reader assumes when the field is absent, following Kafka's generator rules."""
        text = self.default_text
        if text == "null":
            return None
        if self.is_array:
            return ()
        if self.struct is not None:
            return None  # replaced by an instance of the struct class by the object model
        t = self.type
        if t == "bool":
            return text == "true" if text else False
        if t in ("int8", "int16", "int32", "int64", "uint16", "uint32"):
            return int(text, 0) if text else 0
        if t == "float64":
            return float(text) if text else 0.0
        if t == "string":
            return text or ""
        if t == "uuid":
            return uuid.UUID(int=0)
        return b""  # bytes, records


@dataclass(frozen=True)
class StructSpec:
    name: str
    fields: tuple[FieldSpec, ...]
    versions: Versions


@dataclass(frozen=True)
class MessageSpec:
    name: str
    type: str  # request, response, header, metadata, data
    api_key: int | None
    valid: Versions
    flexible: Versions
    root: StructSpec
    structs: dict[str, StructSpec] = field(default_factory=dict)  # every named struct, nested ones included
    control_record_type: int | None = None


def strip_comments(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))


def _default_text(value: object) -> str | None:
    """Kafka writes defaults as strings ("-1", "true"); accept bare JSON values too."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return None if value is None else str(value)


def parse_message(text: str) -> MessageSpec:
    raw = json.loads(strip_comments(text))
    structs: dict[str, StructSpec] = {}
    common = {c["name"]: c for c in raw.get("commonStructs", ())}

    def build_struct(name: str, raw_fields: list[dict[str, Any]], versions: Versions) -> StructSpec:
        if name in structs:
            return structs[name]
        spec = StructSpec(name, tuple(build_field(f) for f in raw_fields), versions)
        structs[name] = spec
        return spec

    def build_field(f: dict[str, Any]) -> FieldSpec:
        versions = Versions.parse(f["versions"])
        element = f["type"][2:] if f["type"].startswith("[]") else f["type"]
        struct = None
        if element not in PRIMITIVES:
            if "fields" in f:
                struct = build_struct(element, f["fields"], versions)
            else:
                c = common[element]
                struct = build_struct(element, c["fields"], Versions.parse(c.get("versions", "0+")))
        return FieldSpec(
            name=f["name"],
            attr=snake_case(f["name"]),
            type=f["type"],
            versions=versions,
            nullable=Versions.parse(f.get("nullableVersions")),
            tagged=Versions.parse(f.get("taggedVersions")),
            tag=f.get("tag"),
            ignorable=bool(f.get("ignorable", False)),
            flexible_override=Versions.parse(f["flexibleVersions"]) if "flexibleVersions" in f else None,
            default_text=_default_text(f.get("default")),
            struct=struct,
            about=" ".join(str(f.get("about", "")).split()),
        )

    valid = Versions.parse(raw["validVersions"])
    root = build_struct(raw["name"], raw.get("fields", ()), valid)
    return MessageSpec(
        name=raw["name"],
        type=raw["type"],
        api_key=raw.get("apiKey"),
        valid=valid,
        flexible=Versions.parse(raw.get("flexibleVersions")),
        root=root,
        structs=structs,
        control_record_type=raw.get("controlRecordType"),
    )


def load_package(package: str) -> dict[str, MessageSpec]:
    """Every ``*.json`` schema of a schema package (``kraftwire.schemas.messages`` or ``.records``)."""
    specs = {}
    for entry in sorted(resources.files(package).iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".json"):
            spec = parse_message(entry.read_text(encoding="utf-8"))
            specs[spec.name] = spec
    return specs
