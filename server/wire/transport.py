"""Kafka's framing over TCP: size-prefixed frames, request headers v0-v2, in-order pipelined responses.

A ``Listener`` serves one port with a table of handlers (api key -> ``Handler``). A handler returns the
response object, or an awaitable of it; responses go out in request order per connection while later
requests are already being worked on.

Bad input gets Kafka's answer (SocketServer / RequestContext), always on that connection only:
* a frame over ``socket.request.max.bytes`` (100 MiB) or a negative size: closed;
* an api key this listener does not serve, or a version outside the served range: closed, except
  ApiVersions, which gets an UNSUPPORTED_VERSION (35) answer in a v0 body (response header v0) that
  lists ApiVersions' own served range, as Kafka's ``ApiVersionsRequest.getErrorResponse`` does
  (KIP-511), so the client can retry at the highest version offered;
* a header or body that does not parse: closed. A request whose handler only relays its bytes
  (``Listener(relaying=...)``: a broker forwarding to the controller) is checked by the message's
  generated validator, which refuses exactly what its decoder refuses but builds nothing, and reaches
  the handler as an ``Undecoded``: decoding a 10,000-partition reassignment the broker does not read
  cost ~4.5 ms on the broker, the check ~1.6 ms.

Requests after a refused one are not read; those before it are answered, then the connection closes
(Kafka works through one request of a connection at a time, so it has answered them before it reads
the bad one).

A listener with ``security`` (server/wire/security.py) speaks TLS when its protocol says so and gives each
connection a session: before authentication only the SASL exchange is read, frames are capped at 512
KiB, and a failed login closes the connection after the session's delay. ``RequestContext.session``
carries the principal to the handlers.

Limits (``TransportLimits``, Kafka's socket-server settings, shared through one ``Quotas`` by every
listener of a server, as a Kafka broker shares them across its listeners):
* ``queued.max.request.bytes``: the bytes of frames still arriving are reserved, at their declared size,
  from one pool; a connection whose frame does not fit stops being read until memory is released (as
  Kafka mutes a channel its memory pool cannot serve). Unlike Kafka, the pool never overshoots, except
  for one frame when nothing else holds memory, and its default is 100 MiB rather than unbounded.
* ``connections.max.idle.ms``: a connection with no bytes read or written for that long is closed,
  half-sent frames included.
* ``max.connections`` and ``max.connections.per.ip``: a connection over either is closed at once,
  with a log line. ``max.connections`` defaults to the file-descriptor limit less a reserve (Kafka's
  default is unbounded), so the server never runs out of descriptors and refuses everyone silently.
* Flow control: a connection is not read while its answers wait on the socket (asyncio's
  ``pause_writing``, above ``WRITE_BUFFER_HIGH`` bytes) or while ``MAX_IN_FLIGHT`` of its requests are
  being worked on; the requests already read wait in its buffer and are handled, in order, when it
  drains. So a client that pipelines without reading holds a bounded amount of the server's memory.
* Frames of ``LARGE_REQUEST_BYTES`` or more are decoded, and their answers encoded, in a worker thread
  while the connection waits (its later requests are not handled before it), so one huge request does
  not stall the event loop and every other listener for its whole decode and encode; the handler itself
  still runs on the loop, as it reads the live image (bench/transport_limits.py measures the stall).

Hot path (bench/requests.py measures it; bench/README.md "Requests" says where the time goes): one
``_Route`` per (api key, version) served, built with the listener and found by the request's first four
bytes read as one int32 (with the correlation id, in one ``unpack_from``), holds the request class,
header version, flexible response header and the generated decoder; ``data_received`` cuts the frames
and ``_handle`` routes, decodes, calls the handler and, when the answer is ready and nothing earlier is
pending, adds it to the answers written in one call at the end of the read. A small frame's route keeps
what its bytes after the correlation id decoded to (``_Route.keep``), so a request sent again (the
usual client: ApiVersions, Metadata, heartbeats) is not decoded again; otherwise a request header v1,
or v2 without tagged fields, is read with one ``unpack_from`` (anything else goes through the generated
decoder). A response header is the correlation id, plus an empty tagged-field section (v1) when the
response version is flexible. A handler may answer with an ``Encoded`` body (a cached encoding, or a
relayed answer): its frame is its size and header packed and joined to it, the one copy of the body
(a read with one answer writes that frame itself; several are joined). ``RequestContext`` is a named
tuple (one ``tuple.__new__`` per request); ``RequestContext.body`` is the request's body as received,
for relaying it without encoding it again. Each route counts the answers written there (its latency
histogram, and apart those with a top-level error code) and their latencies: a few additions, no call
but the clock's (``Listener.request_stats``, read by the metrics when scraped). ``_handle`` makes no
closure, so that its variables are not cells (its helpers that make closures are apart).
"""
from __future__ import annotations

import asyncio
import logging
import resource
import struct
import time
from bisect import bisect_left
from collections import defaultdict, deque
from dataclasses import dataclass
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast

from kraftwire import codec
from kraftwire.codec.messages import ApiVersionsResponse, RequestHeader
from kraftwire.codec import ErrorCode
from kraftwire.codec.message import Message

if TYPE_CHECKING:
    from .security import ListenerSecurity, Session

log = logging.getLogger("kraftwire.transport")

MAX_FRAME_BYTES = 100 * 1024 * 1024  # socket.request.max.bytes
WRITE_BUFFER_HIGH = 1 << 20  # answers waiting on a socket before its connection stops being read
MAX_IN_FLIGHT = 64  # requests of one connection being worked on before it stops being read
LARGE_REQUEST_BYTES = 1 << 20  # decoded in a worker thread
KEPT_FRAME_BYTES = 256  # frames up to this size have what they decode to kept by their route (_Route.keep)
# ... except frames that carry secrets, which are not kept past their request: SaslAuthenticate (PLAIN's
# password, SCRAM's proofs) and AlterUserScramCredentials (salted passwords)
NEVER_KEPT = frozenset({36, 51})
KEPT_PER_ROUTE = 8  # at most ~4 KiB a route; a listener has a route per served (api key, version)
DESCRIPTOR_RESERVE = 128  # file descriptors kept for segments, snapshots, HTTP and outgoing connections
API_VERSIONS = 18
# Produce is advertised from v0 though served from v3, as Kafka 4's brokers do (KAFKA-18659: librdkafka
# writes v2 record batches only to a broker whose ApiVersions lists Produce v0); a v0-2 request is refused
# as any version outside the schema is.
ADVERTISED_FROM = {0: 0}
_SIZE = struct.Struct(">i")
_KEY_VERSION = struct.Struct(">hh")
# a request's api key and version read as one number (its route's key), then its correlation id
_ROUTE_AND_CORRELATION = struct.Struct(">ii")
_SIZE_AND_CORRELATION = struct.Struct(">ii")
_SIZE_CORRELATION_NO_TAGS = struct.Struct(">iiB")  # ... and an empty tagged-field section (response header v1)
_CORRELATION = struct.Struct(">i")  # at byte 4 of every request header
_CLIENT_ID_SIZE = struct.Struct(">h")  # at byte 8 of a request header v1+
_monotonic = time.monotonic
_new_tuple = tuple.__new__
# Bounds (seconds) of the request-latency histogram: a request's arrival to its answer written.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_FIRST_BUCKET = LATENCY_BUCKETS[0]


def route_key(api_key: int, version: int) -> int:
    """The first four bytes of a request (api key, version) as one big-endian int32."""
    return api_key << 16 | version


class _Route:
    """What serving one (api key, version) takes, found by the request's first four bytes: its request
    class and header version, whether the response header is flexible, and the request's decoder
    (the generated function, bound on first use so that a listener does not compile every version).
    It also counts what its listener answered there (``Listener.request_stats``): kept on the route,
    counting costs the answer a few additions and no call."""

    __slots__ = ("api_key", "version", "request_cls", "header_version", "flexible", "decode", "validate",
                 "decoded", "errors", "latency", "seconds")

    def __init__(self, api_key: int, version: int):
        self.api_key, self.version = api_key, version
        self.request_cls = codec.api(api_key)[0]
        self.header_version = codec.request_header_version(api_key, version)
        self.flexible = codec.response_header_version(api_key, version) == 1
        self.decode: Callable[..., Any] | None = None  # the version's generated decoder, once bound
        self.validate: Callable[..., Any] | None = None  # and validator
        self.decoded: dict[bytes, tuple] = {}  # a small frame's bytes after its correlation id -> ``_decode``'s
        self.errors: defaultdict[int, int] = defaultdict(int)  # top-level error code -> answers written with it
        self.latency = [0] * (len(LATENCY_BUCKETS) + 1)  # every answer, by LATENCY_BUCKETS bucket (last: +Inf)
        self.seconds = 0.0  # their latencies' sum

    def decoder(self) -> Callable[..., Any]:
        decode = self.decode = self.request_cls.decoder(self.version)
        return decode

    def validator(self) -> Callable[..., Any]:
        validate = self.validate = self.request_cls.validator(self.version)
        return validate

    def keep(self, tail: bytes, decoded: tuple) -> None:
        """Keep what a small frame decoded to, by its bytes after the correlation id: a client sends the
        same request again and again (ApiVersions, Metadata, heartbeats, the same fetch) and its header
        and body are then read once. The request is immutable (tuples all the way down), so one object
        serves every frame of those bytes. Up to ``KEPT_PER_ROUTE`` frames; past that it starts afresh.
        Nothing is kept for the APIs whose requests carry secrets (``NEVER_KEPT``)."""
        if self.api_key in NEVER_KEPT:
            return
        decoded_ = self.decoded
        if len(decoded_) >= KEPT_PER_ROUTE:
            decoded_.clear()
        decoded_[tail] = decoded


class RequestContext(NamedTuple):
    """What a handler knows of a request besides its body. A named tuple, so that the transport builds
    one per request with a single ``tuple.__new__`` and no Python-level ``__init__``."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    peer: tuple | None
    listener: Listener
    session: object = None  # the connection's security.Session (principal, SASL state); None: open listener
    frame: bytes = b""  # the request as received, header included
    body_start: int = 0  # where its body starts in ``frame``

    @property
    def body(self) -> memoryview:
        """The request's body as received, for relaying it unchanged."""
        return memoryview(self.frame)[self.body_start:]


Handler = Callable[[RequestContext, object], object | Awaitable[object]]


class Undecoded:
    """A request its listener checked but did not decode, for a handler that relays its bytes
    (``RequestContext.body``). A top-level number the body has at a fixed place (``timeout_ms``) is
    read from the bytes; any other field decodes the request, once; an attribute the request does not
    have raises AttributeError. ``decode()`` is the request itself (for an error answer in its shape)."""

    __slots__ = ("_route", "_frame", "_pos", "_request")

    def __init__(self, route: _Route, frame: bytes, pos: int):
        self._route, self._frame, self._pos = route, frame, pos
        self._request: Message | None = None

    def decode(self) -> Message:
        if self._request is None:
            route = self._route
            self._request = (route.decode or route.decoder())(self._frame, self._pos)[0]
        return self._request

    def __getattr__(self, name: str) -> Any:
        route = self._route
        if name not in route.request_cls._fields:
            raise AttributeError(name)
        if self._request is None:
            try:
                return route.request_cls.fixed_value(name, route.version, self._frame, self._pos)
            except LookupError:
                pass
        return getattr(self.decode(), name)


def _schema_versions(api_key: int) -> tuple[int, int]:
    versions = codec.api(api_key)[0].VALID_VERSIONS
    assert versions.high is not None  # every request schema names its highest version
    return versions.low, versions.high


@dataclass(frozen=True)
class TransportLimits:
    """Kafka's socket-server settings; None means unbounded (``max_connections``: see ``Quotas``)."""
    socket_request_max_bytes: int = MAX_FRAME_BYTES
    queued_max_request_bytes: int | None = MAX_FRAME_BYTES  # Kafka: -1, unbounded
    connections_max_idle_ms: int = 600_000
    max_connections: int | None = None  # Kafka: Int.MaxValue
    max_connections_per_ip: int | None = None  # Kafka: Int.MaxValue

    def __post_init__(self) -> None:
        for name in ("socket_request_max_bytes", "queued_max_request_bytes", "connections_max_idle_ms",
                     "max_connections", "max_connections_per_ip"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name.replace('_', '.')} must be at least 1, not {value}")


def descriptor_budget() -> int:
    """Connections the process can hold: its file-descriptor limit less ``DESCRIPTOR_RESERVE``."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return max(16, (soft if soft != resource.RLIM_INFINITY else 1 << 20) - DESCRIPTOR_RESERVE)


class Quotas:
    """What every listener of one server shares: connection counts and the request memory pool."""

    def __init__(self, limits: TransportLimits = TransportLimits()):
        self.limits = limits
        self.max_connections = limits.max_connections or descriptor_budget()
        self.connections = 0
        self.per_ip: dict[str | None, int] = {}  # by peer IP (None: a peer that is no IP address)
        self.memory_reserved = 0  # bytes of frames still arriving
        self._waiting: deque[tuple[_Connection, int]] = deque()

    def admit(self, ip: str | None) -> str | None:
        """Count a new connection, or say why it is refused."""
        if self.connections >= self.max_connections:
            return f"max.connections ({self.max_connections}) reached"
        per_ip = self.limits.max_connections_per_ip
        if per_ip is not None and self.per_ip.get(ip, 0) >= per_ip:
            return f"max.connections.per.ip ({per_ip}) reached for {ip}"
        self.connections += 1
        self.per_ip[ip] = self.per_ip.get(ip, 0) + 1
        return None

    def leave(self, ip: str | None) -> None:
        self.connections -= 1
        left = self.per_ip[ip] - 1
        if left:
            self.per_ip[ip] = left
        else:
            del self.per_ip[ip]

    def reserve(self, connection: _Connection, size: int) -> bool:
        """Reserve ``size`` bytes for a frame ``connection`` is receiving; if they do not fit, queue it (it
        gets them, in turn, from ``release``) and return False."""
        pool = self.limits.queued_max_request_bytes
        if pool is None or (not self._waiting and (self.memory_reserved + size <= pool or not self.memory_reserved)):
            self.memory_reserved += size
            connection.reserved = size
            return True
        self._waiting.append((connection, size))
        return False

    def release(self, connection: _Connection) -> None:
        self.memory_reserved -= connection.reserved
        connection.reserved = 0
        self._waiting = deque((c, size) for c, size in self._waiting if c is not connection)
        pool = self.limits.queued_max_request_bytes
        while self._waiting and (pool is None or self.memory_reserved + self._waiting[0][1] <= pool
                                 or not self.memory_reserved):
            waiting, size = self._waiting.popleft()
            self.memory_reserved += size
            waiting.reserved = size
            waiting.memory_granted()


class Listener:
    """One TCP port speaking the Kafka protocol.

    Each API in ``handlers`` is served over the whole version range of its schema. ``handlers`` may be
    swapped while serving; the APIs served are fixed once the listener is built (the routes and the
    ApiVersions answers are derived from them). ``quotas`` is shared by the listeners of one server (set
    it before ``start``).
    """

    def __init__(self, name: str, host: str, port: int, handlers: dict[int, Handler],
                 security: ListenerSecurity | None = None, relaying: Iterable[int] = ()):
        self.name = name
        self.security = security  # a security.ListenerSecurity (TLS, SASL), consulted per connection
        self.host = host
        self.port = port
        self.handlers = handlers
        # api key -> its handler, when that handler relays the request's bytes and reads nothing of it
        # but top-level numbers: while it is the one serving (a swapped one, such as the error
        # injector's, gets the request decoded), such a request is only checked (``Undecoded``)
        self.relaying = {key: handlers[key] for key in relaying}
        self.versions = {key: _schema_versions(key) for key in handlers}  # api key -> (min, max) served here
        self.routes = {route_key(key, version): _Route(key, version)  # the served keys only
                       for key, (low, high) in self.versions.items() for version in range(low, high + 1)}
        keys = [ApiVersionsResponse.ApiVersion(api_key=k, min_version=min(lo, ADVERTISED_FROM.get(k, lo)),
                                               max_version=hi)
                for k, (lo, hi) in sorted(self.versions.items())]
        self._api_versions = ApiVersionsResponse(error_code=ErrorCode.NONE, api_keys=keys)
        self.answers: dict = {}  # answers handlers encode once for this listener, by route key (ApiVersions)
        # Turns a handler's exception into an answer (None: close the connection, as for a bug).
        self.error_answer: Callable[[RequestContext, object, BaseException], object | None] | None = None
        # Why the server is failing (its metadata log directory failed): ApiVersions answers
        # KAFKA_STORAGE_ERROR (56) then, so health checks and new clients see it at once.
        self.failure: str | None = None
        self.quotas = Quotas()
        self._server: asyncio.base_events.Server | None = None
        self._connections: set[_Connection] = set()
        self._reaper: asyncio.Task | None = None

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _Connection(self), self.host, self.port, reuse_address=True,
                                                 ssl=self.security.ssl_context if self.security else None)
        self.port = self._server.sockets[0].getsockname()[1]
        self._reaper = loop.create_task(self._close_idle_connections())

    async def stop(self, drain_timeout: float = 5.0) -> None:
        """Stop accepting; connections with requests under way read nothing more and close once those
        are answered (within ``drain_timeout`` seconds), the others at once."""
        if self._server is None:
            return
        if self._reaper is not None:
            self._reaper.cancel()
        self._server.close()
        busy = []
        for connection in list(self._connections):
            if connection.pending:
                connection.closing = True
                busy.append(connection)
            else:
                connection.close()
        deadline = time.monotonic() + drain_timeout
        while any(c.transport is not None and c.pending for c in busy) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        for connection in list(self._connections):
            connection.close()
        await self._server.wait_closed()
        self._server = None

    async def _close_idle_connections(self) -> None:
        """connections.max.idle.ms: close connections nothing was read from or written to for that long."""
        idle = self.quotas.limits.connections_max_idle_ms / 1000
        while True:
            await asyncio.sleep(min(max(idle / 4, 0.01), 30))
            cutoff = time.monotonic() - idle
            for connection in [c for c in self._connections if c.last_active < cutoff]:
                log.info("%s: closing %s: idle for over %d ms", self.name, connection.peer,
                         self.quotas.limits.connections_max_idle_ms)
                connection.close()

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    def request_stats(self) -> tuple[dict[tuple[int, int, int], int], dict[int, tuple[list[int], float]]]:
        """What this listener answered: answers by (api key, version, top-level error code, 0 for a
        response without one), and by api key their latencies (answers per ``LATENCY_BUCKETS`` bucket,
        the last +Inf; the sum of seconds)."""
        counts: dict[tuple[int, int, int], int] = {}
        latencies: dict[int, tuple[list[int], float]] = {}
        for route in self.routes.values():
            answered = sum(route.latency)
            if not answered:
                continue
            without_error = answered - sum(route.errors.values())
            if without_error:
                counts[(route.api_key, route.version, ErrorCode.NONE)] = without_error
            for error_code, answers in route.errors.items():
                counts[(route.api_key, route.version, error_code)] = answers
            buckets, seconds = latencies.get(route.api_key, ([0] * len(route.latency), 0.0))
            latencies[route.api_key] = ([a + b for a, b in zip(buckets, route.latency)], seconds + route.seconds)
        return counts, latencies

    def api_versions_body(self) -> ApiVersionsResponse:
        return self._api_versions

    def unsupported_api_versions_body(self) -> ApiVersionsResponse:
        low, high = self.versions[API_VERSIONS]
        return ApiVersionsResponse(error_code=ErrorCode.UNSUPPORTED_VERSION, api_keys=[
            ApiVersionsResponse.ApiVersion(api_key=API_VERSIONS, min_version=low, max_version=high)])


class Encoded:
    """A response body already encoded (once per image version by a handler's cache, in a worker thread,
    or by the server a request was relayed to), written as is; ``error_code`` is its top-level error
    code, for the request counts."""

    __slots__ = ("data", "error_code")

    def __init__(self, data: bytes, error_code: int = ErrorCode.NONE):
        self.data, self.error_code = data, error_code

    def encode_into(self, out: bytearray, version: int) -> None:
        out += self.data


class Unanswered:
    """A handler's answer that sends nothing back: Produce with acks=0. ``close``: close the connection
    instead, once the answers before it are written (Kafka's answer to an acks=0 Produce that failed, so
    that the client notices)."""

    __slots__ = ("close",)

    def __init__(self, close: bool = False):
        self.close = close

    def encode_into(self, out: bytearray, version: int) -> None:
        raise TypeError("an Unanswered request has no answer to encode")


class Encodable(Protocol):
    """What a listener writes as an answer: a response message, or an ``Encoded`` body."""

    def encode_into(self, out: bytearray, version: int) -> None: ...


def _encode(response: Encodable, version: int) -> bytes:
    body = bytearray()
    response.encode_into(body, version)
    return bytes(body)


async def _encode_aside(result: Any, version: int) -> Encoded | Unanswered:
    """``result`` (an answer, or an awaitable of one) encoded in a worker thread."""
    response: Encodable = result if hasattr(result, "encode_into") else await result
    if isinstance(response, Unanswered):  # nothing to encode
        return response
    data = await asyncio.get_running_loop().run_in_executor(None, _encode, response, version)
    return Encoded(data, getattr(response, "error_code", 0))


def _decode(route: _Route, frame: bytes, relayed: bool = False) -> tuple:
    """(client id, request, where its body starts in ``frame``): everything a request holds but its
    correlation id (bytes 4-8 of every header version, read apart). ``relayed``: the body is only
    checked, and the request is an ``Undecoded``.

    A request header v1, or v2 without tagged fields (what clients send), is read with one
    ``unpack_from``; any other header goes through the generated decoder (which refuses a malformed one
    with the reason)."""
    header_version = route.header_version
    pos = 0
    if header_version and len(frame) >= 10:
        size = _CLIENT_ID_SIZE.unpack_from(frame, 8)[0]
        if size < 0:  # null, as the generated decoder reads any negative length of a nullable string
            client_id, pos = None, 10
        elif 10 + size <= len(frame):
            try:
                client_id = frame[10:10 + size].decode()
                pos = 10 + size
            except UnicodeDecodeError:
                pass
        if pos and header_version == 2:  # then an empty tagged-field section, or the generated decoder
            pos = pos + 1 if pos < len(frame) and not frame[pos] else 0
    if not pos:
        header, pos = RequestHeader.decode_from(frame, 0, header_version)
        client_id = header.client_id
    if relayed:
        (route.validate or route.validator())(frame, pos)
        return client_id, Undecoded(route, frame, pos), pos
    return client_id, (route.decode or route.decoder())(frame, pos)[0], pos


class _Connection(asyncio.Protocol):
    def __init__(self, listener: Listener):
        self.listener = listener
        self.quotas = listener.quotas
        self.routes = listener.routes
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()  # a partial frame, or requests read while the connection is held back
        self.wanted = 4  # bytes ``buffer`` must hold before a frame can be cut from it
        self.out: list = []  # answers (each a whole frame, bytes or bytearray) to write at the end of this read
        self.out_bytes = 0  # their size (give or take their size fields)
        # Answers that must wait for an earlier, still running one, in request order:
        # [done, route, correlation id, response, arrival (_monotonic(), of the read)]
        self.pending: deque[list] = deque()
        self.peer = None
        self.ip = None
        self.admitted = False
        self.closing = False  # refused or closed: read nothing more
        self.lingering = False  # closing later (a failed authentication): the timer closes it
        self.session: Session | None = None
        self.reserved = 0  # bytes of the request memory pool held for the frame in ``buffer``
        self.waiting_for_memory = False
        self.write_paused = False  # the transport asked us to stop writing (its buffer is full)
        self.decoding = False  # a large frame is being decoded in a worker thread
        self.reading = True
        self.last_active = _monotonic()

    # --- life of the connection -------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a stream server's transport (uvloop's is no asyncio.Transport subclass, hence no isinstance)
        transport = cast(asyncio.Transport, transport)
        self.transport = transport
        self.peer = transport.get_extra_info("peername")
        self.ip = self.peer[0] if isinstance(self.peer, tuple) else None
        refusal = self.quotas.admit(self.ip)
        if refusal is not None:
            log.warning("%s: closing the new connection from %s: %s", self.listener.name, self.peer, refusal)
            self.closing = True
            transport.abort()
            return
        self.admitted = True
        transport.set_write_buffer_limits(high=WRITE_BUFFER_HIGH)
        if self.listener.security is not None:
            self.session = self.listener.security.session(transport)
        self.listener._connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.admitted:
            self.admitted = False
            self.quotas.leave(self.ip)
        if self.reserved or self.waiting_for_memory:
            self.quotas.release(self)
        self.listener._connections.discard(self)
        self.transport = None
        self.closing = True
        self.buffer = bytearray()

    def close(self) -> None:
        self.closing = True
        if self.transport is not None:
            self.transport.close()

    # --- flow control -------------------------------------------------------------------------------

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        self.last_active = _monotonic()  # the transport sent what it held
        self._go_on()

    def memory_granted(self) -> None:
        self.waiting_for_memory = False
        self._go_on()

    def _held_back(self) -> bool:
        """Whether requests already read must wait before being handled."""
        return self.write_paused or self.decoding or len(self.pending) >= MAX_IN_FLIGHT

    def _go_on(self) -> None:
        """Something that held the connection back is gone: handle what waits in the buffer, read again."""
        if self.closing or self.transport is None:
            return
        if not self._held_back() and len(self.buffer) >= self.wanted:
            self._take_buffer()
        else:
            self._expect_frame()  # a frame begun while held back reserves its memory now
            self._read_while_free()

    def _read_while_free(self) -> None:
        """Read from the socket only while nothing holds the connection back."""
        free = not (self._held_back() or self.waiting_for_memory)
        if free != self.reading and self.transport is not None and not self.closing:
            self.reading = free
            (self.transport.resume_reading if free else self.transport.pause_reading)()

    # --- reading ------------------------------------------------------------------------------------

    def data_received(self, data: bytes, first: bytes | None = None) -> None:
        """Handle every whole frame of ``data`` while nothing holds the connection back, and keep the rest.
        ``first``: a frame (without its size) that ``_take_buffer`` took out of the buffer, handled before
        ``data`` (the rest of the buffer); the usual read has one frame, handled with no call between the
        socket and ``_handle``."""
        if self.closing:
            return
        self.last_active = now = _monotonic()
        if self.buffer:  # the rest of a frame begun earlier (off the one-read-one-frame path)
            return self._buffer_more(data)
        buffer = self.buffer
        pending = self.pending
        if self.write_paused or self.decoding or len(pending) >= MAX_IN_FLIGHT:  # _held_back(), inlined
            buffer += data
            return
        # closing or _held_back(), inlined: checked after each request
        held = False if first is None else self._handle_first(first, now)
        length = len(data)
        start = 0
        limit = self.quotas.limits.socket_request_max_bytes  # a session's smaller cap is checked apart
        session = self.session
        while not held and length - start >= 4:
            size = _SIZE.unpack_from(data, start)[0]
            end = start + 4 + size
            if size < 0 or size > limit or (session is not None and size > self._frame_limit()[0]):
                limit, setting = self._frame_limit()
                self._refuse(f"frame of {size} bytes is over the {limit} limit ({setting})")
                break
            if end > length:
                break
            self._handle(data[start + 4:end], now)
            if self.reserved and not self.decoding:
                self.quotas.release(self)
            start = end
            if self.out_bytes >= WRITE_BUFFER_HIGH:
                self._write()
            held = self.closing or self.write_paused or self.decoding or len(pending) >= MAX_IN_FLIGHT
        if start < length and not self.closing:
            self._keep_rest(data, start)
        else:
            self.wanted = 4
        self._end_read(held)

    def _end_read(self, held: bool) -> None:
        """After a read's frames: write their answers, and pause or resume reading as ``held`` (by the
        requests' state) and the write buffer say."""
        if self.out:
            self._write()  # may pause writing
        if held or self.write_paused or self.waiting_for_memory or not self.reading:
            self._read_while_free()

    # (data_received's paths off the usual read, apart: they cost it no branch and no call)

    def _buffer_more(self, data: bytes) -> None:
        """Add a read to the frame the buffer holds the start of; handle it once whole."""
        buffer = self.buffer
        buffer += data
        if len(buffer) >= self.wanted and not self._held_back():
            self._take_buffer()

    def _handle_first(self, first: bytes, now: float) -> bool:
        """Handle the frame ``_take_buffer`` took out of the buffer; whether the connection is held back."""
        self._handle(first, now)
        if self.reserved and not self.decoding:  # the frame it was reserved for is decoded
            self.quotas.release(self)
        return self.closing or self.write_paused or self.decoding or len(self.pending) >= MAX_IN_FLIGHT

    def _keep_rest(self, data: bytes, start: int) -> None:
        """Keep the bytes of ``data`` from ``start`` on: a frame not read whole yet."""
        self.buffer += memoryview(data)[start:]
        self._expect_frame()

    def _take_buffer(self) -> None:
        """Handle what the buffer holds; a large first frame is copied out of it once, by itself."""
        buffer = self.buffer
        first = None
        if self.wanted >= LARGE_REQUEST_BYTES:
            with memoryview(buffer) as view:
                first, data = bytes(view[4:self.wanted]), bytes(view[self.wanted:])
        else:
            data = bytes(buffer)
        buffer.clear()
        self.data_received(data, first)

    def _expect_frame(self) -> None:
        """The buffer starts a frame not read whole: note its size, and reserve memory for it."""
        buffer = self.buffer
        if len(buffer) < 4:
            self.wanted = 4
            return
        size = _SIZE.unpack_from(buffer, 0)[0]
        limit, setting = self._frame_limit()
        if size < 0 or size > limit:
            self._refuse(f"frame of {size} bytes is over the {limit} limit ({setting})")
            return
        self.wanted = 4 + size
        if len(buffer) < self.wanted and not self.reserved and not self.waiting_for_memory and not self._held_back():
            self.waiting_for_memory = not self.quotas.reserve(self, size)

    def _frame_limit(self) -> tuple[int, str]:
        """The largest frame read now and the setting behind it: ``socket.request.max.bytes``, or the
        session's smaller cap until SASL authentication completes."""
        limit = self.quotas.limits.socket_request_max_bytes
        cap = self.session.max_frame_bytes if self.session is not None else None
        if cap is not None and cap < limit:
            return cap, "before SASL authentication"
        return limit, "socket.request.max.bytes"

    def _refuse(self, why: str) -> None:
        """Read nothing more; close once the answers to the requests before this one are out."""
        log.warning("%s: closing %s: %s", self.listener.name, self.peer, why)
        self.closing = True
        if not self.pending:
            self._write()

    def _handle(self, frame: bytes, arrived: float, aside: tuple | None = None) -> None:
        """Route, decode and answer one request (a frame without its size) read at ``arrived``
        (``_monotonic``); ``aside``: (route, then what ``_decode`` returns) for a large request decoded in
        a worker thread, answered here once it is."""
        session = self.session
        if aside is None:
            if session is not None and session.raw_tokens and not session.authenticated:
                return self._raw_token(frame)
            size = len(frame)
            if size < 8:
                return self._refuse("request shorter than a header")
            key, correlation_id = _ROUTE_AND_CORRELATION.unpack_from(frame, 0)
            route = self.routes.get(key)
            if route is None or (session is not None and not session.admits(route.api_key)):
                return self._unrouted(frame)
            if size <= KEPT_FRAME_BYTES:
                decoded = route.decoded.get(frame[8:])
                if decoded is None:
                    decoded = self._decode(route, frame)
                    if decoded is None:
                        return
                    route.keep(frame[8:], decoded)
            elif size < LARGE_REQUEST_BYTES:
                decoded = self._decode(route, frame, self._relayed(route))
                if decoded is None:
                    return
            else:
                return self._decode_aside(route, frame, arrived)
            client_id, request, body_start = decoded
        else:
            route, client_id, request, body_start = aside
            correlation_id = _CORRELATION.unpack_from(frame, 4)[0]
            request = self._decoded_aside(route, request)
        listener = self.listener
        api_key = route.api_key
        context = _new_tuple(RequestContext, (api_key, route.version, correlation_id, client_id, self.peer, listener,
                                              session, frame, body_start))
        result: Any  # the answer (a response, an Encoded) or an awaitable of it
        if listener.failure is not None and api_key == API_VERSIONS:
            result = listener.api_versions_body().replace(error_code=ErrorCode.KAFKA_STORAGE_ERROR)
        else:
            try:
                result = listener.handlers[api_key](context, request)
            except Exception as exc:
                result = self._error_answer(context, request, exc)
                if result is None:
                    return self.close()
        if aside is not None:  # its answer is likely large too: encoded in a worker thread
            result = _encode_aside(result, route.version)
        if session is not None and session.close_after is not None:
            self._close_later(session.close_after)
        if result.__class__ is Encoded or hasattr(result, "encode_into"):  # the answer itself, not an awaitable
            if self.pending:
                self.pending.append([True, route, correlation_id, result, arrived])
            else:
                self._append(route, correlation_id, result, arrived)
        else:
            self._await(result, route, correlation_id, arrived, context, request)

    def _decoded_aside(self, route: _Route, request: object) -> object:
        """A request decoded in a worker thread, decoded whole if its handler was swapped meanwhile for
        one that reads it."""
        if isinstance(request, Undecoded) and not self._relayed(route):
            return request.decode()
        return request

    # (helpers that make closures, apart: a closure's variables would cost ``_handle`` cells on every call)

    def _decode_aside(self, route: _Route, frame: bytes, arrived: float) -> None:
        """Decode a large request in a worker thread; the connection waits for it (``_decoded``)."""
        self.decoding = True
        decoding = asyncio.get_running_loop().run_in_executor(None, _decode, route, frame, self._relayed(route))
        decoding.add_done_callback(lambda done: self._decoded(done, route, frame, arrived))

    def _await(self, result: Awaitable[object], route: _Route, correlation_id: int, arrived: float,
               context: RequestContext, request: object) -> None:
        """A handler's awaitable answer: it takes its place among the pending ones (``_completed``)."""
        entry = [False, route, correlation_id, None, arrived]
        self.pending.append(entry)
        asyncio.ensure_future(result).add_done_callback(lambda task: self._completed(entry, task, context, request))

    def _relayed(self, route: _Route) -> bool:
        """Whether the request goes to a handler that relays its bytes (``Listener.relaying``)."""
        handler = self.listener.relaying.get(route.api_key)
        return handler is not None and handler is self.listener.handlers.get(route.api_key)

    def _decode(self, route: _Route, frame: bytes, relayed: bool = False) -> tuple | None:
        """``_decode``, or None once the connection is refused for a request that does not parse. (A
        small frame is decoded even for a relay: what it decodes to is kept for its route.)"""
        try:
            return _decode(route, frame, relayed)
        except codec.MalformedError as exc:
            self._refuse(f"unparsable api key {route.api_key} v{route.version} request: {exc}")
            return None

    def _unrouted(self, frame: bytes) -> None:
        """A request this connection may not send yet, or at a version or api key not served here."""
        api_key, version = _KEY_VERSION.unpack_from(frame, 0)
        listener = self.listener
        if self.session is not None and not self.session.admits(api_key):
            return self._refuse(f"api key {api_key} before SASL authentication completed")
        if api_key not in listener.versions:
            return self._refuse(f"api key {api_key} is not served on this listener")
        low, high = listener.versions[api_key]
        if api_key != API_VERSIONS:
            return self._refuse(f"api key {api_key} version {version} is not served (range {low}-{high})")
        return self._answer_unsupported_api_versions(frame, version)

    def _decoded(self, done: asyncio.Future, route: _Route, frame: bytes, arrived: float) -> None:
        self.decoding = False
        self.last_active = _monotonic()
        if self.reserved:
            self.quotas.release(self)
        if self.closing:
            return
        try:
            aside = (route, *done.result())
        except codec.MalformedError as exc:
            self._refuse(f"unparsable api key {route.api_key} v{route.version} request: {exc}")
            return
        self._handle(frame, arrived, aside)
        if self.out:
            self._write()
        self._go_on()

    def _error_answer(self, context: RequestContext, request: object, exc: BaseException) -> object | None:
        """The listener's answer to a handler's exception, or None (logged) to close the connection."""
        if isinstance(request, Undecoded):  # the answer lists what the request names
            request = request.decode()
        if self.listener.error_answer is not None:
            answer = self.listener.error_answer(context, request, exc)
            if answer is not None:
                return answer
        log.error("%s: handler for api key %d failed; closing the connection", self.listener.name,
                  context.api_key, exc_info=exc)
        return None

    def _raw_token(self, frame: bytes) -> None:
        """SaslHandshake v0: a bare token in, a bare token out; a failure closes without an answer."""
        session = self.session
        assert session is not None  # SaslHandshake v0 tokens come only on a listener with SASL
        reply = session.token(frame)
        if reply is None:
            return self._close_later(session.close_after or 0.0)
        self._add(_SIZE.pack(len(reply)) + reply)

    def _close_later(self, delay: float) -> None:
        """Read nothing more; send what is answered and close ``delay`` seconds on."""
        self.closing = self.lingering = True
        asyncio.get_running_loop().call_later(delay, self.close)

    def _answer_unsupported_api_versions(self, frame: bytes, version: int) -> None:
        """KIP-511: the header still parses (v2 from v3 on, like every ApiVersions); the body is not read."""
        try:
            header = RequestHeader.decode_from(frame, 0, 2 if version >= 3 else 1)[0]
        except codec.MalformedError as exc:
            return self._refuse(f"unparsable ApiVersions v{version} request header: {exc}")
        answer = (self.listener.routes[route_key(API_VERSIONS, 0)], header.correlation_id,
                  self.listener.unsupported_api_versions_body(), _monotonic())
        if self.pending:
            self.pending.append([True, *answer])
        else:
            self._append(*answer)

    def _completed(self, entry: list[Any], task: asyncio.Future[object], context: RequestContext,
                   request: object) -> None:
        if task.cancelled():
            return self.close()
        failure = task.exception()
        if failure is not None:
            answer = self._error_answer(context, request, failure)
            if answer is None:
                return self.close()
            entry[3] = answer
        else:
            entry[3] = task.result()
        entry[0] = True
        self.last_active = _monotonic()
        pending = self.pending
        while pending and pending[0][0]:
            self._append(*pending.popleft()[1:])
        self._write()
        self._go_on()

    # --- writing ------------------------------------------------------------------------------------

    def _append(self, route: _Route, correlation_id: int, response: Any, arrived: float) -> None:
        """Add one answer (size, response header v0 or v1, body) to ``out``, and count it on its route
        (an ``Unanswered`` adds nothing, or closes the connection after what ``out`` holds)."""
        if response.__class__ is Unanswered:
            if response.close:
                self._write()
                return self.close()
            error_code: int = ErrorCode.NONE
        elif response.__class__ is Encoded:  # its size is known: the frame is its header and body joined
            data = response.data
            if route.flexible:  # response header v1: an empty tagged-field section
                size = len(data) + 5
                self.out.append(_SIZE_CORRELATION_NO_TAGS.pack(size, correlation_id, 0) + data)
            else:
                size = len(data) + 4
                self.out.append(_SIZE_AND_CORRELATION.pack(size, correlation_id) + data)
            self.out_bytes += size
            error_code = response.error_code
        elif self._encode_answer(route, correlation_id, response):
            error_code = getattr(response, "error_code", 0)
        else:
            return self.close()
        if error_code:
            route.errors[error_code] += 1
        elapsed = _monotonic() - arrived
        route.latency[0 if elapsed < _FIRST_BUCKET else bisect_left(LATENCY_BUCKETS, elapsed)] += 1
        route.seconds += elapsed

    def _encode_answer(self, route: _Route, correlation_id: int, response: Encodable) -> bool:
        """Encode the answer, add it to ``out``; False (logged, nothing added) if it fails."""
        answer = bytearray(_SIZE_CORRELATION_NO_TAGS.pack(0, correlation_id, 0) if route.flexible
                           else _SIZE_AND_CORRELATION.pack(0, correlation_id))
        try:
            response.encode_into(answer, route.version)
        except codec.CodecError:
            log.exception("%s: cannot encode the answer to api key %d v%d; closing the connection",
                          self.listener.name, route.api_key, route.version)
            return False
        _SIZE.pack_into(answer, 0, len(answer) - 4)
        self._add(answer)
        return True

    def _add(self, answer: bytes | bytearray) -> None:
        self.out.append(answer)
        self.out_bytes += len(answer)

    def _write(self) -> None:
        transport = self.transport
        if transport is None:
            return
        out = self.out
        if out:  # last_active: set by the read, or the completion, that led here
            # one write: the answer itself, or the answers joined (what the transport keeps is never changed)
            transport.write(out[0] if len(out) == 1 else b"".join(out))
            out.clear()
            self.out_bytes = 0
        if self.closing and not self.pending and not self.lingering:
            transport.close()  # sends what is buffered first
