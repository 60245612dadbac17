"""Top-level message classes: the struct classes of ``codec.model`` plus versioned encode/decode.

The classes are declared by name in the generated modules (``codec.messages``,
``codec.record_types``) and bound to their schemas at import by ``bind_message_classes``; their
codecs are compiled lazily, each direction once per version, on first use.
"""
from __future__ import annotations

import struct
from typing import Any, Self, TypeVar

from .errors import EncodeError, MalformedError, UnsupportedVersionError
from .model import Struct, bind_struct_class
from .schema import MessageSpec, Versions
from .primitives import FIXED
from .structs import Decoder, Encoder, KafkaStruct, StructClasses, Validator, compile_function, compile_validator


_S = TypeVar("_S", bound=Struct)

_FIXED_WIDTHS = {"bool": 1, "int8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 8,
                 "float64": 8, "uuid": 16}


class Message(Struct):
    """Base of every generated top-level message and record class."""

    __slots__ = ()
    SPEC: MessageSpec
    API_KEY: int | None
    VALID_VERSIONS: Versions
    FLEXIBLE_VERSIONS: Versions
    _classes: StructClasses  # the root's and its nested structs' classes by schema name
    _decoders: dict[int, Decoder]
    _encoders: dict[int, Encoder]
    _validators: dict[int, Validator]

    @classmethod
    def construct(cls, version: int) -> KafkaStruct:
        """The ``construct`` definition of this message at ``version`` (not compiled)."""
        cls._check_version(version)
        return KafkaStruct(cls.SPEC.root, cls._classes, version, version in cls.FLEXIBLE_VERSIONS)

    @classmethod
    def _decoder(cls, version: int) -> Decoder:
        decoder = cls._decoders.get(version)
        if decoder is None:
            decoder = cls._decoders[version] = compile_function(cls.construct(version), "decode")
        return decoder

    @classmethod
    def _encoder(cls, version: int) -> Encoder:
        encoder = cls._encoders.get(version)
        if encoder is None:
            encoder = cls._encoders[version] = compile_function(cls.construct(version), "encode")
        return encoder

    @classmethod
    def _check_version(cls, version: int) -> None:
        if version not in cls.VALID_VERSIONS:
            raise UnsupportedVersionError(
                f"{cls.__name__} has no version {version} (valid: {cls.VALID_VERSIONS})")

    def encode(self, version: int) -> bytes:
        """The body of this message at ``version``."""
        out = bytearray()
        self.encode_into(out, version)
        return bytes(out)

    def encode_into(self, out: bytearray, version: int) -> None:
        """Append the body at ``version`` to ``out``."""
        encoder = self._encoder(version)
        try:
            encoder(self, out)
        except (struct.error, TypeError, AttributeError, UnicodeEncodeError) as exc:
            raise EncodeError(f"cannot encode {type(self).__name__} v{version}: {exc}") from None

    @classmethod
    def decode(cls, data: bytes, version: int) -> Self:
        """Decode a body that must fill ``data`` exactly."""
        data = bytes(data)
        obj, pos = cls.decode_from(data, 0, version)
        if pos != len(data):
            raise MalformedError(f"{len(data) - pos} bytes left over after {cls.__name__} v{version}", pos)
        return obj

    @classmethod
    def fixed_offset(cls, attr: str, version: int) -> int | None:
        """Where top-level field ``attr`` starts in every body at ``version``, when only fixed-width
        fields come before it (None otherwise): lets a relay read a response's error code unparsed."""
        pos = 0
        for f in cls.SPEC.root.fields:
            if version not in f.versions or version in f.tagged:
                continue
            if f.attr == attr:
                return pos
            width = _FIXED_WIDTHS.get(f.type)
            if width is None:
                return None
            pos += width
        return None

    @classmethod
    def fixed_value(cls, attr: str, version: int, buf: bytes | bytearray | memoryview, pos: int = 0) -> Any:
        """Top-level number or bool ``attr`` of the body at ``pos`` of ``buf``, read where
        ``fixed_offset`` puts it; ``LookupError`` when it has no such place (or is not such a field)."""
        at = cls.fixed_offset(attr, version)
        field = next((f for f in cls.SPEC.root.fields if f.attr == attr), None)
        if at is None or field is None or field.type not in FIXED:
            raise LookupError(f"{cls.__name__} v{version} has no {attr} at a fixed offset")
        return struct.unpack_from(">" + FIXED[field.type].code, buf, pos + at)[0]

    @classmethod
    def validator(cls, version: int) -> Validator:
        """The generated ``validate(buf, pos) -> next position`` at ``version``: refuses (MalformedError)
        exactly the bodies the decoder refuses, and builds nothing."""
        validate = cls._validators.get(version)
        if validate is None:
            validate = cls._validators[version] = compile_validator(cls.construct(version))
        return validate

    @classmethod
    def decoder(cls, version: int) -> Decoder:
        """The generated ``decode(buf, pos) -> (object, next position)`` at ``version``, for callers that
        decode one version often (the transport, per route)."""
        return cls._decoder(version)

    @classmethod
    def decode_from(cls, buf: bytes, pos: int, version: int) -> tuple[Self, int]:
        """Decode one message starting at ``pos`` of ``buf`` (bytes); returns (object, next position)."""
        return cls._decoder(version)(buf, pos)


def bind_message_classes(namespace: dict[str, Any], specs: dict[str, MessageSpec]) -> dict[str, type[Message]]:
    """Bind each schema's generated class in ``namespace`` (a generated module's globals) to the schema;
    returns {name: class}. A schema without a class there (generated code older than ``schemas/``)
    gets one made here, so that the generator can still import the codec to write it."""
    bound = {}
    for name, spec in specs.items():
        root: type[Message] | None = namespace.get(name)
        if root is None:
            root = namespace[name] = _declare(name, Message, namespace["__name__"])
        bound[name] = _bind_message_class(root, spec)
    return bound


def _bind_message_class(root: type[Message], spec: MessageSpec) -> type[Message]:
    """One class per struct of the schema; nested ones hang off the root class by their names."""
    classes: StructClasses = {}
    for name, struct_spec in spec.structs.items():  # nested structs come before their parents
        cls: type[Struct] | None
        if struct_spec is spec.root:
            cls = root
        else:
            cls = root.__dict__.get(name)
            if cls is None:
                cls = _declare(name, Struct, root.__module__, f"{root.__qualname__}.{name}")
                setattr(root, name, cls)
        bind_struct_class(cls, struct_spec, classes)
        classes[name] = cls
    root.SPEC = spec
    root.API_KEY = spec.api_key
    root.VALID_VERSIONS = spec.valid
    root.FLEXIBLE_VERSIONS = spec.flexible
    root._classes = classes
    root._decoders = {}
    root._encoders = {}
    root._validators = {}
    return root


def _declare(name: str, base: type[_S], module: str, qualname: str | None = None) -> type[_S]:
    cls: type[_S] = type(name, (base,), {"__slots__": (), "__module__": module})
    cls.__qualname__ = qualname or name
    return cls
