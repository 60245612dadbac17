"""Kafka's primitive wire types as ``construct`` classes.

Each class works as an ordinary construct (``_parse``/``_build`` over a stream), which is the
straightforward reference implementation, and also knows how to emit inline Python for the compiled
codec (``emit_decode``/``emit_encode``), which reads with ``unpack_from`` over one bytes buffer and
appends to one bytearray, and for a validator (``emit_skip``: past the value, refusing what the decoder
refuses, building nothing). construct's own varint and adapters do not compile, hence these.

Emitted code works on the local names ``buf``/``pos`` (decoding) and an output bytearray (encoding);
``Emitter`` (in ``codec.structs``) provides indentation, fresh variable names and module constants.
"""
from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

from construct import Construct, stream_read, stream_write

from .errors import MalformedError

if TYPE_CHECKING:
    from .structs import Emitter

Stream = IO[bytes]
Unpacker = Callable[[bytes, int], tuple[Any, ...]]

_pack = struct.pack
_unpack = struct.unpack
_packers: dict[tuple[str, int], struct.Struct] = {}


def packer(code: str, count: int) -> struct.Struct:
    """A compiled ``struct.Struct`` for ``count`` big-endian values of one type, cached."""
    s = _packers.get((code, count))
    if s is None:
        s = _packers[(code, count)] = struct.Struct(f">{count}{code}")
    return s


SMALL_ARRAY = 64


def small_unpackers(code: str) -> tuple[Unpacker, ...]:
    """``unpack_from`` of n big-endian values of one type, indexed by n < SMALL_ARRAY: Kafka's arrays
    are mostly short, and indexing beats ``packer``'s keyed lookup in the decoders' inner loop."""
    return tuple(packer(code, n).unpack_from for n in range(SMALL_ARRAY))


# --- varints -------------------------------------------------------------------------------------

def read_uvarint(buf: bytes, pos: int, max_bytes: int = 5) -> tuple[int, int]:
    """Decode an unsigned varint at ``pos``; returns (value, new position)."""
    value = 0
    shift = 0
    for i in range(max_bytes):
        try:
            b = buf[pos + i]
        except IndexError:
            raise MalformedError("truncated varint", pos) from None
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos + i + 1
        shift += 7
    raise MalformedError(f"varint longer than {max_bytes} bytes", pos)


def write_uvarint(out: bytearray, value: int) -> None:
    if value < 0:
        raise struct.error(f"unsigned varint cannot hold {value}")
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def read_varint(buf: bytes, pos: int, max_bytes: int = 5) -> tuple[int, int]:
    """Decode a zig-zag signed varint (record batches use these); max_bytes=10 for varlongs."""
    raw, pos = read_uvarint(buf, pos, max_bytes)
    return (raw >> 1) ^ -(raw & 1), pos


def write_varint(out: bytearray, value: int) -> None:
    write_uvarint(out, (value << 1) ^ (value >> 63))


def _stream_uvarint(stream: Stream, path: str) -> int:
    value = shift = 0
    while True:
        b = stream_read(stream, 1, path)[0]
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value
        shift += 7
        if shift > 28:
            raise MalformedError("varint longer than 5 bytes", stream.tell())


def _stream_write_uvarint(stream: Stream, value: int, path: str) -> None:
    out = bytearray()
    write_uvarint(out, value)
    stream_write(stream, bytes(out), len(out), path)


def emit_read_uvarint(e: Emitter, target: str) -> None:
    """Inline fast path for the common one-byte varint."""
    e.line("_b = buf[pos]")
    e.line(f"if _b < 128: {target} = _b; pos += 1")
    e.line(f"else: {target}, pos = read_uvarint(buf, pos)")


def emit_write_uvarint(e: Emitter, expr: str, out: str) -> None:
    e.line(f"_n = {expr}")
    e.line(f"if _n < 128: {out}.append(_n)")
    e.line(f"else: write_uvarint({out}, _n)")


# --- fixed-width numbers -------------------------------------------------------------------------

# struct packs any object as "?" (None as false) while it refuses None for the number codes, so a
# null bool would slip through as false; bools check for it themselves.
NULL_BOOL = "a bool cannot be null"


class Fixed(Construct):
    """A big-endian fixed-width value; consecutive ones are merged into a single (un)pack."""

    def __init__(self, code: str) -> None:
        super().__init__()
        self.code = code
        self.size = struct.calcsize(">" + code)

    def _parse(self, stream: Stream, context: object, path: str) -> Any:
        return _unpack(">" + self.code, stream_read(stream, self.size, path))[0]

    def _build(self, obj: Any, stream: Stream, context: object, path: str) -> Any:
        if obj is None and self.code == "?":
            raise struct.error(NULL_BOOL)
        stream_write(stream, _pack(">" + self.code, obj), self.size, path)
        return obj

    def emit_decode(self, e: Emitter, target: str) -> None:
        emit_fixed_group(e, [(target, self)])

    def emit_encode(self, e: Emitter, expr: str, out: str) -> None:
        emit_fixed_group_encode(e, [(expr, self)], out)

    def emit_skip(self, e: Emitter) -> None:
        e.line(f"pos += {self.size}")


FIXED = {
    "bool": Fixed("?"),
    "int8": Fixed("b"),
    "int16": Fixed("h"),
    "int32": Fixed("i"),
    "int64": Fixed("q"),
    "uint16": Fixed("H"),
    "uint32": Fixed("I"),
    "float64": Fixed("d"),
}


def emit_null_or_fail(e: Emitter, target: str, nullable: bool, what: str) -> None:
    if nullable:
        e.line(f"{target} = None")
    else:
        e.line(f"raise MalformedError({what + ' is null but not nullable'!r}, pos)")


def emit_check_null(e: Emitter, expr: str, nullable: bool, what: str) -> bool:
    """For encoders: refuse None where not nullable. Returns True if the caller must handle None."""
    if not nullable:
        e.line(f"if {expr} is None: raise EncodeError({what + ' is null but not nullable in this version'!r})")
    return nullable


def emit_read_length(e: Emitter, compact: bool, code: str, nullable: bool, target: str, what: str) -> None:
    """Read a length or count into ``_n`` (classic ``code``-sized, or compact varint minus one) and
    handle a negative one: null where allowed, an error otherwise. Leaves an open ``if``/``elif``
    chain for the caller to continue with ``elif``/``else``."""
    if compact:
        emit_read_uvarint(e, "_n")
        e.line("_n -= 1")
    else:
        e.line(f"_n, = unpack_from('>{code}', buf, pos); pos += {struct.calcsize('>' + code)}")
    e.line("if _n < 0:")
    with e.block():
        emit_null_or_fail(e, target, nullable, what)


def emit_write_length(e: Emitter, compact: bool, code: str, length_expr: str, out: str) -> None:
    if compact:
        emit_write_uvarint(e, f"{length_expr} + 1", out)
    else:
        e.line(f"{out} += pack('>{code}', {length_expr})")


# --- uuid ----------------------------------------------------------------------------------------

UUID_CACHE_SIZE = 1 << 16
uuid_cache: dict[bytes, uuid.UUID] = {}


def uuid_from_bytes(raw: bytes) -> uuid.UUID:
    """``uuid.UUID(bytes=raw)``, shared through a bounded cache: the same topic and directory ids come
    back in record after record, and building a UUID costs more than decoding the rest of most records."""
    if len(uuid_cache) >= UUID_CACHE_SIZE:
        uuid_cache.clear()
    value = uuid_cache[raw] = uuid.UUID(bytes=raw)
    return value


class Uuid(Construct):
    def _parse(self, stream: Stream, context: object, path: str) -> Any:
        return uuid.UUID(bytes=stream_read(stream, 16, path))

    def _build(self, obj: Any, stream: Stream, context: object, path: str) -> Any:
        stream_write(stream, obj.bytes, 16, path)
        return obj

    def emit_decode(self, e: Emitter, target: str) -> None:
        e.line("if pos + 16 > _blen: raise MalformedError('truncated uuid', pos)")
        e.line("_u = buf[pos:pos + 16]; pos += 16")
        e.line(f"{target} = uuid_cache.get(_u) or uuid_from_bytes(_u)")

    def emit_encode(self, e: Emitter, expr: str, out: str) -> None:
        e.line(f"{out} += {expr}.bytes")

    def emit_skip(self, e: Emitter) -> None:
        e.line("pos += 16")


# --- length-prefixed strings and bytes -----------------------------------------------------------

class Sized(Construct):
    """A string or byte string with a length prefix: int16 (strings) / int32 (bytes) when classic,
    unsigned varint of length+1 when compact; -1 (classic) or 0 (compact) is null."""

    def __init__(self, is_string: bool, compact: bool, nullable: bool, what: str) -> None:
        super().__init__()
        self.is_string, self.compact, self.nullable, self.what = is_string, compact, nullable, what
        self.prefix = "h" if is_string else "i"

    def _parse(self, stream: Stream, context: object, path: str) -> Any:
        if self.compact:
            n = _stream_uvarint(stream, path) - 1
        else:
            n = _unpack(">" + self.prefix, stream_read(stream, 2 if self.is_string else 4, path))[0]
        if n < 0:
            if not self.nullable:
                raise MalformedError(f"{self.what} is null but not nullable", stream.tell())
            return None
        data = stream_read(stream, n, path)
        return data.decode("utf-8") if self.is_string else data

    def _build(self, obj: Any, stream: Stream, context: object, path: str) -> Any:
        if obj is None:
            data, n = b"", -1
        else:
            data = obj.encode("utf-8") if self.is_string else bytes(obj)
            n = len(data)
        if self.compact:
            _stream_write_uvarint(stream, n + 1, path)
        else:
            stream_write(stream, _pack(">" + self.prefix, n), 2 if self.is_string else 4, path)
        stream_write(stream, data, len(data), path)
        return obj

    def emit_decode(self, e: Emitter, target: str) -> None:
        emit_read_length(e, self.compact, self.prefix, self.nullable, target, self.what)
        e.line("else:")
        with e.block():
            e.line("_end = pos + _n")
            e.line(f"if _end > _blen: raise MalformedError({self.what + ' length beyond the buffer'!r}, pos)")
            e.line(f"{target} = buf[pos:_end]{'.decode()' if self.is_string else ''}; pos = _end")

    def emit_skip(self, e: Emitter) -> None:
        """Past the value: a string is still decoded (bytes that are not UTF-8 are refused as by the
        decoder), a byte string only counted."""
        emit_read_length(e, self.compact, self.prefix, self.nullable, "_", self.what)
        e.line("else:")
        with e.block():
            if self.is_string:
                e.line("_end = pos + _n")
                e.line(f"if _end > _blen: raise MalformedError({self.what + ' length beyond the buffer'!r}, pos)")
                e.line("buf[pos:_end].decode(); pos = _end")
            else:
                e.line("pos += _n")

    def emit_encode(self, e: Emitter, expr: str, out: str) -> None:
        handle_none = emit_check_null(e, expr, self.nullable, self.what)
        if handle_none:
            null = "append(0)" if self.compact else f"extend({_pack('>' + self.prefix, -1)!r})"
            e.line(f"if {expr} is None: {out}.{null}")
            e.line("else:")
            e.indent()
        e.line(f"_s = {expr}.encode()" if self.is_string else f"_s = {expr}")
        emit_write_length(e, self.compact, self.prefix, "len(_s)", out)
        e.line(f"{out} += _s")
        if handle_none:
            e.dedent()


# --- arrays --------------------------------------------------------------------------------------

class Array(Construct):
    """An array: int32 count (classic) or varint count+1 (compact); -1 / 0 is null.
    Arrays of fixed-width numbers are (un)packed in one call."""

    def __init__(self, element: Construct, compact: bool, nullable: bool, what: str) -> None:
        super().__init__()
        self.element, self.compact, self.nullable, self.what = element, compact, nullable, what

    def _parse(self, stream: Stream, context: object, path: str) -> Any:
        n = _stream_uvarint(stream, path) - 1 if self.compact else _unpack(">i", stream_read(stream, 4, path))[0]
        if n < 0:
            if not self.nullable:
                raise MalformedError(f"{self.what} is null but not nullable", stream.tell())
            return None
        return tuple(self.element._parse(stream, context, path) for _ in range(n))

    def _build(self, obj: Any, stream: Stream, context: object, path: str) -> Any:
        n = -1 if obj is None else len(obj)
        if self.compact:
            _stream_write_uvarint(stream, n + 1, path)
        else:
            stream_write(stream, _pack(">i", n), 4, path)
        for item in obj or ():
            self.element._build(item, stream, context, path)
        return obj

    def emit_decode(self, e: Emitter, target: str) -> None:
        emit_read_length(e, self.compact, "i", self.nullable, target, self.what)
        # Like Kafka's readers: a count larger than the bytes left cannot be honest.
        e.line(f"elif _n > _blen - pos: raise MalformedError({self.what + ' count beyond the buffer'!r}, pos)")
        e.line("else:")
        with e.block():
            if isinstance(self.element, Fixed):
                code, size = self.element.code, self.element.size
                unpack = e.module.const(small_unpackers(code), "UNPACK")
                e.line(f"{target} = ({unpack}[_n] if _n < {SMALL_ARRAY} else packer({code!r}, _n).unpack_from)"
                       f"(buf, pos); pos += {size} * _n")
            else:
                items, append, item = e.var("items"), e.var("append"), e.var("item")
                e.line(f"{items} = []; {append} = {items}.append")
                e.line("for _ in range(_n):")
                with e.block():
                    self.element.emit_decode(e, item)
                    e.line(f"{append}({item})")
                e.line(f"{target} = tuple({items})")

    def emit_skip(self, e: Emitter) -> None:
        emit_read_length(e, self.compact, "i", self.nullable, "_", self.what)
        e.line(f"elif _n > _blen - pos: raise MalformedError({self.what + ' count beyond the buffer'!r}, pos)")
        if isinstance(self.element, (Fixed, Uuid)):
            e.line(f"else: pos += {16 if isinstance(self.element, Uuid) else self.element.size} * _n")
            return
        e.line("else:")
        with e.block():
            e.line("for _ in range(_n):")
            with e.block():
                self.element.emit_skip(e)

    def emit_encode(self, e: Emitter, expr: str, out: str) -> None:
        arr = e.var("arr")
        e.line(f"{arr} = {expr}")
        handle_none = emit_check_null(e, arr, self.nullable, self.what)
        if handle_none:
            e.line(f"if {arr} is None: {out}.append(0)" if self.compact
                   else f"if {arr} is None: {out} += b'\\xff\\xff\\xff\\xff'")
            e.line("else:")
            e.indent()
        emit_write_length(e, self.compact, "i", f"len({arr})", out)
        if isinstance(self.element, Fixed):
            e.line(f"{out} += packer({self.element.code!r}, len({arr})).pack(*{arr})")
        else:
            item = e.var("item")
            e.line(f"for {item} in {arr}:")
            with e.block():
                self.element.emit_encode(e, item, out)
        if handle_none:
            e.dedent()


def emit_fixed_group(e: Emitter, fields: list[tuple[str, Fixed]]) -> None:
    """Decode consecutive fixed-width fields with one unpack_from."""
    fmt = "".join(c.code for _, c in fields)
    size = sum(c.size for _, c in fields)
    targets = ", ".join(t for t, _ in fields) + ("," if len(fields) == 1 else "")
    unpack = e.module.const(struct.Struct(">" + fmt).unpack_from, "UNPACK")  # compiled once, not looked up per call
    e.line(f"{targets} = {unpack}(buf, pos); pos += {size}")


def emit_fixed_group_encode(e: Emitter, fields: list[tuple[str, Fixed]], out: str) -> None:
    for expr, c in fields:
        if c.code == "?":
            e.line(f"if {expr} is None: raise struct_error({NULL_BOOL!r})")
    fmt = "".join(c.code for _, c in fields)
    e.line(f"{out} += pack('>{fmt}', {', '.join(x for x, _ in fields)})")
