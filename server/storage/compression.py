"""Decompressing a record batch's body to validate its records (the stored batch stays compressed).

Kafka's codec ids: 0 none, 1 gzip, 2 snappy (Kafka's producer writes xerial's framing, raw blocks are
accepted too), 3 lz4 (the LZ4 frame format), 4 zstd. The codecs are the python-snappy, lz4 and zstandard
libraries; every decompression is bounded by ``limit`` so a small batch cannot inflate without end."""
from __future__ import annotations

import io
import struct
import zlib

import lz4.frame  # type: ignore[import-untyped]  # the lz4 package ships no types
import snappy  # type: ignore[import-untyped]  # python-snappy ships no types
import zstandard

NONE, GZIP, SNAPPY, LZ4, ZSTD = range(5)
NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = 16  # magic, int32 version, int32 compatible version
_BLOCK_LENGTH = struct.Struct(">i")


class DecompressionError(ValueError):
    """The body does not decompress with its codec, or inflates beyond the limit."""


def decompress(codec: int, body: bytes, limit: int) -> bytes:
    """The records of a batch body compressed with ``codec``; at most ``limit`` bytes."""
    try:
        if codec == GZIP:
            out = _gunzip(body, limit)
        elif codec == SNAPPY:
            out = _unsnappy(body, limit)
        elif codec == LZ4:
            out = lz4.frame.LZ4FrameDecompressor().decompress(body, max_length=limit + 1)
        elif codec == ZSTD:
            out = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(body), read_across_frames=True).read(limit + 1)
        else:
            raise DecompressionError(f"unknown compression codec id {codec}")
    except DecompressionError:
        raise
    except Exception as exc:  # each library has its own error types; all mean "not valid data"
        raise DecompressionError(f"{NAMES.get(codec, codec)} data does not decompress: {exc}") from None
    if len(out) > limit:
        raise DecompressionError(f"{NAMES[codec]} data inflates beyond {limit} bytes")
    return out


def _gunzip(body: bytes, limit: int) -> bytes:
    inflater = zlib.decompressobj(wbits=31)
    out = inflater.decompress(body, limit + 1)
    if len(out) <= limit and not inflater.eof:
        raise DecompressionError("gzip data ends before its stream does")
    return out


def _unsnappy(body: bytes, limit: int) -> bytes:
    if not body.startswith(_XERIAL_MAGIC):
        return _snappy_block(body, limit)
    parts: list[bytes] = []
    size = 0
    pos = _XERIAL_HEADER
    while pos < len(body):
        if pos + 4 > len(body):
            raise DecompressionError("xerial snappy block length cut short")
        (length,) = _BLOCK_LENGTH.unpack_from(body, pos)
        pos += 4
        if length < 0 or pos + length > len(body):
            raise DecompressionError("xerial snappy block beyond the data")
        block = _snappy_block(body[pos:pos + length], limit - size)
        size += len(block)
        parts.append(block)
        pos += length
    return b"".join(parts)


def _snappy_block(block: bytes, limit: int) -> bytes:
    """One raw snappy block, after checking the uncompressed length it declares (its leading varint)."""
    declared, shift = 0, 0
    for i, byte in enumerate(block[:5]):
        declared |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            break
        if i == 4:
            raise DecompressionError("snappy length varint too long")
    if declared > limit:
        raise DecompressionError(f"snappy data inflates beyond {limit} bytes")
    result: bytes = snappy.uncompress(block)
    return result
