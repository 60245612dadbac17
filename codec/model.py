"""Immutable, typed message objects.

Every Kafka struct becomes a class whose instances are tuples underneath: one slot per field of the
schema (across all versions), then ``unknown_tagged_fields``. Tuples make decoding cheap (one
``tuple.__new__`` per struct) and instances immutable and hashable. Users build them with keyword
arguments only; absent fields take the schema's defaults; arrays are stored as tuples.
"""
from __future__ import annotations

from collections import _tuplegetter  # type: ignore[attr-defined]  # namedtuple's C accessor, untyped
from typing import Any, Self

from .schema import FieldSpec, StructSpec

_new = tuple.__new__


class Struct(tuple):
    """Base of every generated struct class. See ``bind_struct_class``."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _defaults: tuple[Any, ...] = ()
    _index: dict[str, int]  # field name -> slot
    _spec: StructSpec
    unknown_tagged_fields: tuple[tuple[int, bytes], ...]  # tagged fields the schema does not know, as read

    def __new__(cls, **values: Any) -> Self:
        slots = list(cls._defaults)
        index = cls._index
        for name, value in values.items():
            i = index.get(name)
            if i is None:
                raise TypeError(f"{cls.__qualname__} has no field {name!r}")
            slots[i] = tuple(value) if value.__class__ is list else value
        return _new(cls, slots)

    def replace(self, **changes: Any) -> Self:
        """A copy with some fields changed."""
        current = dict(zip(self._fields, self))
        current.update(changes)
        return type(self)(**current)

    def to_dict(self) -> dict[str, Any]:
        """Plain nested dicts/lists, e.g. for JSON output."""
        return {name: _plain(value) for name, value in zip(self._fields, self)}

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = tuple.__hash__

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{name}={value!r}"
            for name, value in zip(self._fields, self)
            if name != "unknown_tagged_fields" or value
        )
        return f"{type(self).__qualname__}({shown})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), tuple(self)))


def _rebuild(cls: type[Struct], values: tuple[Any, ...]) -> Struct:
    return _new(cls, values)


def _plain(value: object) -> object:
    if isinstance(value, Struct):
        return value.to_dict()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, bytes):
        return value.hex()
    if hasattr(value, "hex") and not isinstance(value, (int, float, str)):
        return str(value)  # uuid.UUID
    return value


def bind_struct_class(cls: type[Struct], spec: StructSpec, struct_classes: dict[str, type[Struct]]) -> None:
    """Give a struct class (declared by the generated modules, with ``__slots__ = ()``) its fields
    from the schema: one tuple slot per field, then ``unknown_tagged_fields``. The classes of nested
    structs must already be bound and in ``struct_classes``."""
    names = tuple(f.attr for f in spec.fields) + ("unknown_tagged_fields",)
    cls._fields = names
    cls._index = {name: i for i, name in enumerate(names)}
    cls._spec = spec
    for i, name in enumerate(names):
        setattr(cls, name, _tuplegetter(i, f"Field {i} of {spec.name}"))
    cls._defaults = tuple(field_default(f, struct_classes) for f in spec.fields) + ((),)


def field_default(f: FieldSpec, struct_classes: dict[str, type[Struct]]) -> Any:
    """The default value of a field, with struct-typed defaults as instances of their class."""
    value = f.default()
    if value is None and f.struct is not None and not f.is_array and f.default_text != "null":
        return struct_classes[f.struct.name]()
    return value
