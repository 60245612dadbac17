"""Mutated Kafka frames for every API and version a server serves, sent at a live ``kraftwire serve``.

``frames(targets, seed)`` yields ``(target, api key, version, frame)`` round-robin over every (listener,
api key, version), so any run of at least that many frames covers each once; the order and every
mutation come from ``random.Random(seed)``, so a run can be replayed. Each frame starts from a request
filled with random but plausible values (or the all-defaults one) and gets one to three mutations: bit
flips, random bytes, interesting integers (-1, 0x7fffffff, ...) written over it, bytes cut, inserted or
appended; the size prefix is made to fit the body, except now and then. ``FuzzRun`` sends them,
pipelined a few at a time, reconnecting whenever the server closes a connection (its answer to bad
input), and samples the server's RSS.
"""
from __future__ import annotations

import random
import select
import socket
import struct
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from kraftwire import codec
from kraftwire.codec.messages import ApiVersionsRequest, ApiVersionsResponse, RequestHeader
from tests.raw_client import RawConnection

_SIZE = struct.Struct(">i")
INTERESTING_INT32 = (-1, 0, 1, 0x7FFFFFFF, -0x80000000, 0xFFFF, 0x10000, 1 << 24)
NAMES = ("fuzz-a", "fuzz-b", "", "__cluster_metadata", "x" * 300, "fuzz/../a", "ü")


def _scalar(kind: str, rng: random.Random):
    if kind == "string":
        return rng.choice(NAMES)
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "uuid":
        return uuid.UUID(int=0) if rng.random() < 0.3 else uuid.UUID(int=rng.getrandbits(128))
    if kind == "bytes":
        return rng.randbytes(rng.randrange(8))
    if kind in ("int8", "int16"):
        return rng.choice((-1, 0, 1, 2, 3))
    if kind == "uint16":
        return rng.choice((0, 1, 2, 3, 9092))
    return rng.choice((-1, 0, 1, 2, 3, 4, 1000, 3000))


def _filled(top, struct_cls, spec, version: int, rng: random.Random):
    values = {}
    for f in spec.fields:
        if version not in f.versions:
            continue
        if f.type.startswith("[]"):
            count = rng.randrange(3)
            if f.struct is not None:
                values[f.attr] = [_filled(top, getattr(top, f.struct.name), f.struct, version, rng) for _ in range(count)]
            else:
                values[f.attr] = [_scalar(f.type[2:], rng) for _ in range(count)]
        elif f.struct is not None:
            values[f.attr] = _filled(top, getattr(top, f.struct.name), f.struct, version, rng)
        else:
            values[f.attr] = _scalar(f.type, rng)
    return struct_cls(**values)


def request_frame(api_key: int, version: int, correlation_id: int, rng: random.Random) -> bytes:
    """A well-formed frame: a request with random plausible values (or all defaults)."""
    request_cls = codec.api(api_key)[0]
    out = bytearray(b"\0\0\0\0")
    RequestHeader(request_api_key=api_key, request_api_version=version, correlation_id=correlation_id,
                  client_id="kraftwire-fuzz").encode_into(out, codec.request_header_version(api_key, version))
    header_end = len(out)
    try:
        request = request_cls() if rng.random() < 0.2 else _filled(request_cls, request_cls, request_cls.SPEC.root,
                                                                   version, rng)
        request.encode_into(out, version)
    except codec.CodecError:
        del out[header_end:]
        request_cls().encode_into(out, version)
    _SIZE.pack_into(out, 0, len(out) - 4)
    return bytes(out)


def mutate(frame: bytes, rng: random.Random) -> bytes:
    """One to three mutations, mostly after the api key and version; the size fitted to the body (95%)."""
    data = bytearray(frame[4:])
    for _ in range(rng.randrange(1, 4)):
        low = 0 if rng.random() < 0.05 else min(4, len(data))
        position = rng.randrange(low, len(data)) if len(data) > low else len(data)
        kind = rng.randrange(7)
        if kind == 0 and position < len(data):
            data[position] ^= 1 << rng.randrange(8)
        elif kind == 1 and position < len(data):
            data[position] = rng.randrange(256)
        elif kind == 2:
            data[position:position + 4] = struct.pack(">i", rng.choice(INTERESTING_INT32))
        elif kind == 3:
            del data[position:position + rng.randrange(1, 16)]
        elif kind == 4:
            data[position:position] = rng.randbytes(rng.randrange(1, 32))
        elif kind == 5:
            data += rng.randbytes(rng.randrange(1, 64))
        else:
            data[position:position + 2] = b"\xff\xff"
    size = len(data) if rng.random() < 0.95 else rng.choice((-1, 0, len(data) + 1, len(data) // 2, 1 << 30))
    return _SIZE.pack(size) + bytes(data)


def served_versions(address: str) -> dict[int, tuple[int, int]]:
    """The api key -> (min, max) a listener says it serves, within the versions its schema has (Produce
    is advertised from v0 but served from v3, as Kafka's brokers do: KAFKA-18659)."""
    with RawConnection(address) as connection:
        response = connection.send(ApiVersionsRequest(), 0)
    return {k.api_key: (max(k.min_version, codec.api(k.api_key)[0].VALID_VERSIONS.low), k.max_version)
            for k in response.api_keys}


def frames(targets: dict[str, dict[int, tuple[int, int]]], seed: int):
    """Endless (target, api key, version, frame), round-robin over every combination, shuffled per round."""
    rng = random.Random(seed)
    combinations = [(target, key, version) for target, versions in sorted(targets.items())
                    for key, (low, high) in sorted(versions.items()) for version in range(low, high + 1)]
    correlation_id = 0
    while True:
        rng.shuffle(combinations)
        for target, key, version in combinations:
            correlation_id += 1
            yield target, key, version, mutate(request_frame(key, version, correlation_id, rng), rng)


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for {pid}")


@dataclass
class FuzzRun:
    """Sends frames to the server's listeners; counts what happened."""
    pid: int
    sent: int = 0
    closed: int = 0  # connections the server closed (its answer to most bad frames)
    answered: int = 0  # frames answered
    max_rss: int = 0
    covered: set = field(default_factory=set)
    _sockets: dict = field(default_factory=dict)
    _received: dict = field(default_factory=dict)  # target -> bytes of an answer not yet whole

    def _socket(self, target: str) -> socket.socket:
        sock = self._sockets.get(target)
        if sock is None:
            host, port = target.rsplit(":", 1)
            sock = self._sockets[target] = socket.create_connection((host, int(port)), timeout=30)
            sock.setblocking(False)
        return sock

    def _drop(self, target: str) -> None:
        self._sockets.pop(target).close()
        self._received.pop(target, None)
        self.closed += 1

    def _count_answers(self, target: str, data: bytes) -> None:
        received = self._received.setdefault(target, bytearray())
        received += data
        while len(received) >= 4 and len(received) >= 4 + _SIZE.unpack_from(received, 0)[0]:
            del received[:4 + _SIZE.unpack_from(received, 0)[0]]
            self.answered += 1

    def _drain(self, target: str) -> None:
        sock = self._sockets.get(target)
        while sock is not None and select.select([sock], [], [], 0)[0]:
            try:
                data = sock.recv(1 << 20)
            except (ConnectionError, BlockingIOError):
                data = b""
            if not data:
                self._drop(target)
                return
            self._count_answers(target, data)

    def send(self, generator, count: int, batch: int = 4, rss_every: int = 500, wait: float = 0.002) -> None:
        """Send frames until ``count`` were sent in all, ``batch`` at a time per listener, each batch
        followed by up to ``wait`` seconds for the server's answer or close."""
        pending: dict[str, list[bytes]] = {}
        for target, key, version, frame in generator:
            self.covered.add((target, key, version))
            pending.setdefault(target, []).append(frame)
            self.sent += 1
            if len(pending[target]) >= batch or self.sent >= count:
                self._flush(target, pending.pop(target), wait)
            if self.sent % rss_every == 0:
                self.max_rss = max(self.max_rss, rss_bytes(self.pid))
            if self.sent >= count:
                break
        for target, group in pending.items():
            self._flush(target, group, wait)
        self.max_rss = max(self.max_rss, rss_bytes(self.pid))
        for target in list(self._sockets):
            self._sockets.pop(target).close()

    def _flush(self, target: str, group: list[bytes], wait: float) -> None:
        self._drain(target)
        sock = self._socket(target)
        data = b"".join(group)
        try:
            sock.settimeout(30)
            sock.sendall(data)
            sock.setblocking(False)
        except ConnectionError:
            self._drop(target)
            return
        select.select([sock], [], [], wait)
        self._drain(target)


def api_versions_ok(address: str) -> bool:
    """A fresh connection gets a good ApiVersions answer."""
    with RawConnection(address) as connection:
        response = connection.send(ApiVersionsRequest(), 3)
    return isinstance(response, ApiVersionsResponse) and response.error_code == 0 and bool(response.api_keys)
