"""Kafka structs as ``construct`` constructs, and their compilation into fast Python.

``KafkaStruct`` is the construct for one struct at one version: its fields in order, then (in
flexible versions) the tagged-field section. As a plain construct it parses from a stream field by
field. Compiled (``construct``'s ``.compile()``), it emits one decode function per message and one encode
function per struct over a single buffer, merging runs of fixed-width fields into one
``unpack_from``/``pack``. A message's decoder reads its nested structs in line, each array of structs
one loop with no call per element (calls were most of the cost of decoding a partition); a struct's
decode errors still name the struct. Those functions are what messages use; the stream path stays as
the reference the tests compare against. ``compile_validator`` emits, on demand, a function that walks
a message the same way and builds nothing (a broker relaying a request checks it so, at about a third of
the decode's cost).
"""
from __future__ import annotations

import contextlib
import io
import itertools
import struct
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from construct import Construct, stream_read

from .code_cache import compiled
from .errors import EncodeError, MalformedError
from .model import Struct
from .primitives import (
    packer,
    FIXED,
    Array,
    Fixed,
    Sized,
    Stream,
    Uuid,
    _stream_uvarint,
    emit_fixed_group,
    emit_fixed_group_encode,
    emit_read_uvarint,
    read_uvarint,
    uuid_cache,
    uuid_from_bytes,
    write_uvarint,
)
from .schema import FieldSpec, StructSpec


# Like Kafka's writers, refuse rather than silently drop tagged fields a version cannot carry.
UNKNOWN_TAGS_UNSUPPORTED = "unknown tagged fields are set, but this version has no tagged fields"


def uvarint_bytes(value: int) -> bytes:
    out = bytearray()
    write_uvarint(out, value)
    return bytes(out)


Tags = list[tuple[int, bytes]] | tuple[tuple[int, bytes], ...]
Decoder = Callable[[bytes, int], tuple[Any, int]]
Encoder = Callable[[Any, bytearray], None]
Validator = Callable[[bytes, int], int]
StructClasses = dict[str, type[Struct]]


def write_tagged(out: bytearray, known: Tags, unknown: Tags) -> None:
    """Write a tagged-field section: count, then (tag, size, bytes) in ascending tag order."""
    tags = sorted([*known, *unknown], key=lambda t: t[0])
    write_uvarint(out, len(tags))
    for tag, data in tags:
        write_uvarint(out, tag)
        write_uvarint(out, len(data))
        out += data


class ModuleState:
    """What one compilation shares: generated blocks, module constants, already-defined structs."""

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self.flushed = 0  # how many of ``blocks`` construct's code generator has been given
        self.constants: dict[str, object] = {
            "unpack_from": struct.unpack_from,
            "pack": struct.pack,
            "struct_error": struct.error,
            "UUID": uuid.UUID,
            "uuid_cache": uuid_cache,
            "uuid_from_bytes": uuid_from_bytes,
            "MalformedError": MalformedError,
            "EncodeError": EncodeError,
            "read_uvarint": read_uvarint,
            "write_uvarint": write_uvarint,
            "write_tagged": write_tagged,
            "uvarint_bytes": uvarint_bytes,
            "_new": tuple.__new__,
            "packer": packer,
        }
        self.defined: dict[tuple[int, str], str] = {}  # (id of a KafkaStruct, "decode"/"encode") -> function
        self.inlining: set[int] = set()  # the structs whose decoding is being emitted in line
        self._counter = itertools.count()

    def flush(self, code: Any) -> None:
        """Hand construct's code generator the blocks emitted since the last flush (each block once)."""
        code.append("\n\n".join(self.blocks[self.flushed:]))
        self.flushed = len(self.blocks)

    def name(self, prefix: str) -> str:
        return f"{prefix}_{next(self._counter)}"

    def const(self, value: object, prefix: str = "C") -> str:
        name = self.name(prefix)
        self.constants[name] = value
        return name


class Emitter:
    """Builds the source of one function with indentation and fresh local names."""

    def __init__(self, module: ModuleState):
        self.module = module
        self.lines: list[str] = []
        self.depth = 0

    def line(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    def indent(self) -> None:
        self.depth += 1

    def dedent(self) -> None:
        self.depth -= 1

    @contextlib.contextmanager
    def block(self) -> Iterator[None]:
        self.indent()
        yield
        self.dedent()

    def var(self, prefix: str) -> str:
        return self.module.name("_" + prefix)

    def source(self) -> str:
        return "\n".join(self.lines)


class Slot:
    """One field of a struct at one version: where it lives in the tuple and how it is encoded."""

    __slots__ = ("index", "spec", "construct", "tagged", "default")

    def __init__(self, index: int, spec: FieldSpec, construct: Construct | None, tagged: bool, default: object):
        self.index, self.spec, self.construct, self.tagged, self.default = index, spec, construct, tagged, default

    @property
    def present(self) -> Construct:
        """The construct of a field this version has (every plain and tagged slot)."""
        assert self.construct is not None, f"{self.spec.name} is absent in this version"
        return self.construct

    @property
    def tag(self) -> int:
        """The tag of a tagged field."""
        assert self.spec.tag is not None, f"{self.spec.name} has no tag"
        return self.spec.tag


class KafkaStruct(Construct):
    """One Kafka struct at one version (see the module docstring)."""

    def __init__(self, spec: StructSpec, classes: StructClasses, version: int, flexible: bool,
                 cache: dict[str, KafkaStruct] | None = None):
        super().__init__()
        self.spec, self.version, self.flexible = spec, version, flexible
        self.cls = classes[spec.name]
        self.label = f"{self.cls.__qualname__} v{version}"
        cache = {} if cache is None else cache
        cache[spec.name] = self
        self.slots: list[Slot] = []
        for index, f in enumerate(spec.fields):
            present = version in f.versions
            construct = _field_construct(f, classes, version, flexible, cache) if present else None
            self.slots.append(Slot(index, f, construct, present and version in f.tagged, self.cls._defaults[index]))
        self.plain = [s for s in self.slots if s.construct is not None and not s.tagged]
        self.tagged = sorted((s for s in self.slots if s.tagged), key=lambda s: s.tag)
        self.absent = [s for s in self.slots if s.construct is None]

    # --- construct's stream path ---------------------------------------------------------------

    def _parse(self, stream: Stream, context: object, path: str) -> Struct:
        values = list(self.cls._defaults)
        for slot in self.plain:
            values[slot.index] = slot.present._parse(stream, context, path)
        if self.flexible:
            by_tag = {s.tag: s for s in self.tagged}
            unknown = []
            for _ in range(_stream_uvarint(stream, path)):
                tag = _stream_uvarint(stream, path)
                data = stream_read(stream, _stream_uvarint(stream, path), path)
                if tag in by_tag:
                    inner = io.BytesIO(data)
                    values[by_tag[tag].index] = by_tag[tag].present._parse(inner, context, path)
                    if inner.tell() != len(data):
                        raise MalformedError(f"tagged field {tag} of {self.label} has bytes left over", stream.tell())
                else:
                    unknown.append((tag, data))
            values[-1] = tuple(unknown)
        return tuple.__new__(self.cls, values)

    def _build(self, obj: Struct, stream: Stream, context: object, path: str) -> Struct:
        self._check_absent(obj)
        for slot in self.plain:
            if obj[slot.index] is None and not _nullable(slot, self.version):
                raise EncodeError(f"{self.label}: {slot.spec.name} is null but not nullable in this version")
            slot.present._build(obj[slot.index], stream, context, path)
        if self.flexible:
            known = []
            for slot in self.tagged:
                if obj[slot.index] != slot.default:
                    inner = io.BytesIO()
                    slot.present._build(obj[slot.index], inner, context, path)
                    known.append((slot.tag, inner.getvalue()))
            out = bytearray()
            write_tagged(out, known, obj[-1])
            stream.write(bytes(out))
        return obj

    def _check_absent(self, obj: Struct) -> None:
        for slot in self.absent:
            if not slot.spec.ignorable and obj[slot.index] != slot.default:
                raise EncodeError(f"{self.label}: {slot.spec.name} is not supported in this version "
                                  f"(it has a non-default value {obj[slot.index]!r})")
        if not self.flexible and obj[-1]:
            raise EncodeError(f"{self.label}: {UNKNOWN_TAGS_UNSUPPORTED}")

    # --- compiled path -------------------------------------------------------------------------

    def _emitparse(self, code: Any) -> str:
        module = _module_state(code)
        decoder = self.define(module, "decode")
        module.flush(code)
        return f"{decoder}(io.read(), 0)[0]"

    def _emitbuild(self, code: Any) -> str:
        module = _module_state(code)
        encoder = self.define(module, "encode")
        module.flush(code)
        return f"(io.write(_encode_to_bytes({encoder}, obj)), obj)[1]"

    def emit_decode(self, e: Emitter, target: str) -> None:
        """Read this struct in line (a call to its function only if it contains itself)."""
        if id(self) in e.module.inlining:
            e.line(f"{target}, pos = {self.define(e.module, 'decode')}(buf, pos)")
            return
        e.module.inlining.add(id(self))
        self._emit_decode_body(e, target)
        e.module.inlining.discard(id(self))

    def emit_encode(self, e: Emitter, expr: str, out: str) -> None:
        e.line(f"{self.define(e.module, 'encode')}({expr}, {out})")

    def emit_skip(self, e: Emitter) -> None:
        """Check this struct in line without building it (a call to its function only if it contains
        itself)."""
        if id(self) in e.module.inlining:
            e.line(f"pos = {self.define(e.module, 'validate')}(buf, pos)")
            return
        e.module.inlining.add(id(self))
        self._emit_skip_body(e)
        e.module.inlining.discard(id(self))

    def define(self, module: ModuleState, kind: str) -> str:
        """Emit this struct's ``kind`` ("decode", "encode" or "validate") function once per module;
        return its name."""
        name = module.defined.get((id(self), kind))
        if name is None:
            name = module.defined[(id(self), kind)] = module.name(f"{kind}_{self.spec.name}")
            e = Emitter(module)
            if kind == "decode":
                e.line(f"def {name}(buf, pos):")
                with e.block():
                    e.line("_blen = len(buf)")  # what the bounds checks compare with
                    module.inlining.add(id(self))
                    self._emit_decode_body(e, "obj")
                    module.inlining.discard(id(self))
                    e.line("return obj, pos")
                module.blocks.append(e.source())
            elif kind == "validate":
                e.line(f"def {name}(buf, pos):")
                with e.block():
                    e.line("_blen = len(buf)")
                    module.inlining.add(id(self))
                    self._emit_skip_body(e)
                    module.inlining.discard(id(self))
                    # Skipped fixed-width values are counted, not read: one past the end shows here
                    # if no later read at ``pos`` failed on it (positions only grow).
                    e.line(f"if pos > _blen: raise MalformedError('cannot read {self.label}: beyond the buffer', pos)")
                    e.line("return pos")
                module.blocks.append(e.source())
            else:
                module.blocks.append(self._encoder_source(module, name))
        return name

    def _emit_decode_body(self, e: Emitter, target: str) -> None:
        """Statements that read this struct at ``pos`` of ``buf`` into ``target`` and advance ``pos``; its
        field values get names of their own, so that structs read in line do not overwrite each other's."""
        module = e.module
        values = {}
        e.line("try:")
        with e.block():
            group: list[tuple[str, Fixed]] = []
            for slot in self.plain:
                target_var = values[slot.index] = e.var(f"f{slot.index}")
                if isinstance(slot.construct, Fixed):
                    group.append((target_var, slot.construct))
                    continue
                if group:
                    emit_fixed_group(e, group)
                    group = []
                slot.present.emit_decode(e, target_var)
            if group:
                emit_fixed_group(e, group)
            unknown = self._emit_tagged_decode(e, values) if self.flexible else "()"
            if not self.plain and not self.flexible:
                e.line("pass")
        e.line("except MalformedError:")
        e.line("    raise")
        e.line("except (struct_error, IndexError, ValueError) as exc:")
        e.line(f"    raise MalformedError(f'cannot read {self.label}: {{exc}}', pos) from None")
        for slot in self.absent:
            values[slot.index] = module.const(slot.default)
        cls = module.const(self.cls, "CLS")
        fields = ", ".join([values[i] for i in range(len(self.slots))] + [unknown])
        e.line(f"{target} = _new({cls}, ({fields},))")

    def _emit_skip_body(self, e: Emitter) -> None:
        """Statements that move ``pos`` past this struct, refusing what ``_emit_decode_body`` refuses
        (a string that is not UTF-8 included) and building nothing."""
        e.line("try:")
        with e.block():
            fixed = 0
            for slot in self.plain:
                if isinstance(slot.construct, Fixed):
                    fixed += slot.construct.size
                    continue
                if fixed:
                    e.line(f"pos += {fixed}")
                    fixed = 0
                slot.present.emit_skip(e)
            if fixed:
                e.line(f"pos += {fixed}")
            if self.flexible:
                self._emit_tagged_decode(e, None)
            elif not self.plain:
                e.line("pass")
        e.line("except MalformedError:")
        e.line("    raise")
        e.line("except (struct_error, IndexError, ValueError) as exc:")
        e.line(f"    raise MalformedError(f'cannot read {self.label}: {{exc}}', pos) from None")

    def _emit_tagged_decode(self, e: Emitter, values: dict[int, str] | None) -> str:
        """The tagged-field section; returns the name of the unknown tags' tuple. With ``values`` None
        (a validator) it only moves past the section, checking a known tag's value as it is decoded."""
        module = e.module
        decoding = values is not None
        unknown, count, tag, size, end = (e.var(name) for name in ("unknown", "count", "tag", "size", "tend"))
        if values is not None:
            for slot in self.tagged:
                values[slot.index] = e.var(f"f{slot.index}")
                e.line(f"{values[slot.index]} = {module.const(slot.default)}")
        e.line("if buf[pos] == 0:")  # the usual case: no tagged fields at all
        e.line(f"    pos += 1; {unknown} = ()")
        e.line("else:")
        e.indent()
        e.line(f"{unknown} = ()")
        emit_read_uvarint(e, count)
        e.line(f"for _ in range({count}):")
        with e.block():
            emit_read_uvarint(e, tag)
            emit_read_uvarint(e, size)
            e.line(f"{end} = pos + {size}")
            e.line(f"if {end} > _blen: raise MalformedError('tagged field beyond the buffer in {self.label}', pos)")
            keyword = "if"
            for slot in self.tagged:
                e.line(f"{keyword} {tag} == {slot.spec.tag}:")
                with e.block():
                    if values is not None:
                        slot.present.emit_decode(e, values[slot.index])
                    else:
                        slot.present.emit_skip(e)
                    e.line(f"if pos != {end}: raise MalformedError('tagged field {slot.spec.name} of "
                           f"{self.label} does not fill its size', pos)")
                keyword = "elif"
            if self.tagged:
                e.line("else:")
                e.indent()
            if decoding:
                e.line(f"{unknown} += (({tag}, buf[pos:{end}]),)")
            e.line(f"pos = {end}")
            if self.tagged:
                e.dedent()
        e.dedent()
        return unknown

    def _encoder_source(self, module: ModuleState, name: str) -> str:
        e = Emitter(module)
        e.line(f"def {name}(obj, out):")
        e.indent()
        for slot in self.absent:
            if not slot.spec.ignorable:
                e.line(f"if obj[{slot.index}] != {module.const(slot.default)}: raise EncodeError("
                       f"'{self.label}: {slot.spec.name} is not supported in this version (non-default value '"
                       f" + repr(obj[{slot.index}]) + ')')")
        if not self.flexible:
            e.line(f"if obj[-1]: raise EncodeError({self.label + ': ' + UNKNOWN_TAGS_UNSUPPORTED!r})")
        group: list[tuple[str, Fixed]] = []
        for slot in self.plain:
            expr = f"obj[{slot.index}]"
            if isinstance(slot.construct, Fixed):
                group.append((expr, slot.construct))
                continue
            if group:
                emit_fixed_group_encode(e, group, "out")
                group = []
            slot.present.emit_encode(e, expr, "out")
        if group:
            emit_fixed_group_encode(e, group, "out")
        if self.flexible:
            if self.tagged:
                self._emit_tagged_encode(e, module)
            else:
                e.line("if obj[-1]: write_tagged(out, (), obj[-1])")
                e.line("else: out.append(0)")
        return e.source()  # never empty: a non-flexible body checks for unknown tags, a flexible one writes them


    def _emit_tagged_encode(self, e: Emitter, module: ModuleState) -> None:
        """The tagged-field section. Without unknown tags (the usual case) the known ones, already in tag
        order, are written straight into ``out``, each size patched in after its value; with unknown ones,
        every tag goes through ``write_tagged``, which sorts them together."""
        present = {slot.index: f"obj[{slot.index}] != {module.const(slot.default)}" for slot in self.tagged}
        e.line("if obj[-1]:")
        with e.block():
            e.line("_tags = []")
            for slot in self.tagged:
                e.line(f"if {present[slot.index]}:")
                with e.block():
                    e.line("_tb = bytearray()")
                    slot.present.emit_encode(e, f"obj[{slot.index}]", "_tb")
                    e.line(f"_tags.append(({slot.spec.tag}, _tb))")
            e.line("write_tagged(out, _tags, obj[-1])")
        e.line("else:")
        with e.block():
            for slot in self.tagged:
                e.line(f"_p{slot.index} = {present[slot.index]}")
            count = " + ".join(f"_p{slot.index}" for slot in self.tagged)
            e.line(f"out.append({count})" if len(self.tagged) < 0x80 else f"write_uvarint(out, {count})")
            for slot in self.tagged:
                at = f"_at{slot.index}"
                e.line(f"if _p{slot.index}:")
                with e.block():
                    e.line(f"out += {module.const(uvarint_bytes(slot.tag))}")
                    e.line(f"{at} = len(out)")
                    e.line("out.append(0)")
                    slot.present.emit_encode(e, f"obj[{slot.index}]", "out")
                    e.line(f"_size = len(out) - {at} - 1")
                    e.line(f"if _size < 128: out[{at}] = _size")
                    e.line(f"else: out[{at}:{at} + 1] = uvarint_bytes(_size)")


class NullableStruct(Construct):
    """A struct that may be null: an int8 marker (-1 null, 1 present) before the struct, as Kafka does."""

    def __init__(self, struct_construct: KafkaStruct) -> None:
        super().__init__()
        self.struct = struct_construct

    def _parse(self, stream: Stream, context: object, path: str) -> Struct | None:
        marker = stream_read(stream, 1, path)[0]
        return None if marker >= 0x80 else self.struct._parse(stream, context, path)

    def _build(self, obj: Struct | None, stream: Stream, context: object, path: str) -> Struct | None:
        stream.write(b"\xff" if obj is None else b"\x01")
        if obj is not None:
            self.struct._build(obj, stream, context, path)
        return obj

    def emit_decode(self, e: Emitter, target: str) -> None:
        e.line("_b = buf[pos]; pos += 1")
        e.line(f"if _b >= 128: {target} = None")
        e.line("else:")
        with e.block():
            self.struct.emit_decode(e, target)

    def emit_skip(self, e: Emitter) -> None:
        e.line("_b = buf[pos]; pos += 1")
        e.line("if _b < 128:")
        with e.block():
            self.struct.emit_skip(e)

    def emit_encode(self, e: Emitter, expr: str, out: str) -> None:
        e.line(f"if {expr} is None: {out}.append(255)")
        e.line("else:")
        with e.block():
            e.line(f"{out}.append(1)")
            self.struct.emit_encode(e, expr, out)


def _nullable(slot: Slot, version: int) -> bool:
    return version in slot.spec.nullable


def _module_state(code: Any) -> ModuleState:
    # construct's CodeGen keeps linkedinstances and hands them to the compiled module; our emitted
    # functions' constants ride along under one key and are bound into the module by compile_struct.
    state = code.linkedinstances.get("kraftwire")
    if state is None:
        state = code.linkedinstances["kraftwire"] = ModuleState()
        code.append("def _encode_to_bytes(encoder, obj):\n    out = bytearray()\n    encoder(obj, out)\n"
                    "    return bytes(out)")
    return state


def compile_struct(root: KafkaStruct) -> tuple[Any, Decoder, Encoder]:
    """Compile with construct and return the root's fast (decode, encode) functions:
    ``decode(buf: bytes, pos) -> (obj, pos)`` and ``encode(obj, out: bytearray)``."""
    compiled = root.compile()
    namespace = compiled.module.__dict__
    state: ModuleState = compiled.module.linkedinstances["kraftwire"]
    namespace.update(state.constants)
    decoder: Decoder = namespace[state.defined[(id(root), "decode")]]
    encoder: Encoder = namespace[state.defined[(id(root), "encode")]]
    return compiled, decoder, encoder


def compile_function(root: KafkaStruct, kind: str) -> Any:
    """The root's ``kind`` function alone ("decode": ``decode(buf: bytes, pos) -> (obj, pos)``, "encode":
    ``encode(obj, out: bytearray)``, "validate": ``validate(buf, pos) -> pos``), compiled on its own on
    first use. Messages use these: a node decodes most messages it reads and encodes few of them, and
    compiling one direction without construct's module around it costs a fraction of ``compile_struct``
    (start-up compiled ~20 message versions, ~80 ms of a cluster's start)."""
    module = ModuleState()
    name = root.define(module, kind)
    namespace: dict[str, Any] = dict(module.constants)
    exec(compiled("\n\n".join(module.blocks), f"<{kind} {root.label}>"), namespace)
    return namespace[name]


def compile_validator(root: KafkaStruct) -> Validator:
    """The root's ``validate(buf: bytes, pos) -> pos``: where its encoding ends, raising
    ``MalformedError`` for exactly the bytes its decoder refuses, without building anything (a relay
    checks a request it does not read this way). Compiled on its own, on first use: most messages never
    need one."""
    validator: Validator = compile_function(root, "validate")
    return validator


def _field_construct(f: FieldSpec, classes: StructClasses, version: int, flexible: bool,
                     cache: dict[str, KafkaStruct]) -> Construct:
    compact = flexible and (f.flexible_override is None or version in f.flexible_override)
    nullable = version in f.nullable
    what = f.name
    if f.is_array:
        element = _element_construct(f.element_type, f, classes, version, flexible, compact, cache)
        return Array(element, compact, nullable, what)
    if f.struct is not None:
        struct_construct = _struct_construct(f, classes, version, flexible, cache)
        return NullableStruct(struct_construct) if nullable else struct_construct
    return _element_construct(f.type, f, classes, version, flexible, compact, cache, nullable)


def _element_construct(type_name: str, f: FieldSpec, classes: StructClasses, version: int, flexible: bool,
                       compact: bool, cache: dict[str, KafkaStruct], nullable: bool = False) -> Construct:
    if type_name in FIXED:
        return FIXED[type_name]
    if type_name == "uuid":
        return Uuid()
    if type_name == "string":
        return Sized(True, compact, nullable, f.name)
    if type_name in ("bytes", "records"):
        return Sized(False, compact, nullable, f.name)
    return _struct_construct(f, classes, version, flexible, cache)


def _struct_construct(f: FieldSpec, classes: StructClasses, version: int, flexible: bool,
                      cache: dict[str, KafkaStruct]) -> KafkaStruct:
    assert f.struct is not None, f"{f.name} is not a struct field"
    existing = cache.get(f.struct.name)
    if existing is not None:
        return existing
    return KafkaStruct(f.struct, classes, version, flexible, cache)
