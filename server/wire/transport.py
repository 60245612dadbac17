"""Kafka's framing over TCP: size-prefixed frames, request headers v0-v2, in-order pipelined responses.

A ``Listener`` serves one port with a table of handlers (api key -> ``Handler``). A handler returns the
response object, or an awaitable of it; responses go out in request order per connection while later
requests are already being worked on.

Bad input gets Kafka's answer (SocketServer / RequestContext), always on that connection only:
* a frame over 100 MiB (``socket.request.max.bytes``) or a negative size: closed;
* an api key this listener does not serve, or a version outside the served range: closed, except
  ApiVersions, which gets an UNSUPPORTED_VERSION (35) answer in a v0 body (response header v0) that
  lists ApiVersions' own served range, as Kafka's ``ApiVersionsRequest.getErrorResponse`` does
  (KIP-511), so the client can retry at the highest version offered;
* a header or body that does not parse: closed.

Requests after a refused one are not read; those before it are answered, then the connection closes
(Kafka works through one request of a connection at a time, so it has answered them before it reads
the bad one).

A listener with ``security`` (server/wire/security.py) speaks TLS when its protocol says so and gives each
connection a session: before authentication only the SASL exchange is read, frames are capped at 512
KiB, and a failed login closes the connection after the session's delay. ``RequestContext.session``
carries the principal to the handlers.

Hot path: routes (api key, version) -> (request class, request header version, flexible response header)
are computed once per listener; answers that are ready when nothing earlier is pending go into one
buffer written at the end of the read; a response header is the correlation id, plus an empty
tagged-field section (v1) when the response version is flexible.
"""
from __future__ import annotations

import asyncio
import logging
import struct
import time
from collections import deque
from dataclasses import dataclass
from typing import Awaitable, Callable

from kraftwire import codec
from kraftwire.codec.messages import ApiVersionsResponse, RequestHeader
from kraftwire.codec import ErrorCode

log = logging.getLogger("kraftwire.transport")

MAX_FRAME_BYTES = 100 * 1024 * 1024
API_VERSIONS = 18
_SIZE = struct.Struct(">i")
_KEY_VERSION = struct.Struct(">hh")
_SIZE_AND_CORRELATION = struct.Struct(">ii")


@dataclass(slots=True)
class RequestContext:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    peer: tuple | None
    listener: "Listener"
    session: object = None  # the connection's security.Session (principal, SASL state); None: open listener


Handler = Callable[[RequestContext, object], object | Awaitable[object]]
# Told of every answered request: (api key, version, response, perf_counter() when it arrived).
Observer = Callable[[int, int, object, float], None]


def _schema_versions(api_key: int) -> tuple[int, int]:
    versions = codec.api(api_key)[0].VALID_VERSIONS
    return versions.low, versions.high


class Listener:
    """One TCP port speaking the Kafka protocol.

    Each API in ``handlers`` is served over the whole version range of its schema. ``handlers`` may be
    swapped while serving; the APIs served are fixed once the listener is built (the routes and the
    ApiVersions answers are derived from them).
    """

    def __init__(self, name: str, host: str, port: int, handlers: dict[int, Handler], security=None):
        self.name = name
        self.security = security  # a security.ListenerSecurity (TLS, SASL), consulted per connection
        self.host = host
        self.port = port
        self.handlers = handlers
        self.versions = {key: _schema_versions(key) for key in handlers}  # api key -> (min, max) served here
        self.routes = {(key, version): (codec.api(key)[0], codec.request_header_version(key, version),
                                        codec.response_header_version(key, version) == 1)
                       for key, (low, high) in self.versions.items() for version in range(low, high + 1)}
        keys = [ApiVersionsResponse.ApiVersion(api_key=k, min_version=lo, max_version=hi)
                for k, (lo, hi) in sorted(self.versions.items())]
        self._api_versions = ApiVersionsResponse(error_code=ErrorCode.NONE, api_keys=keys)
        self.observer: Observer | None = None  # e.g. the metrics' request counter
        self._server: asyncio.base_events.Server | None = None
        self._connections: set[_Connection] = set()

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _Connection(self), self.host, self.port, reuse_address=True,
                                                 ssl=self.security.ssl_context if self.security else None)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.close()
        for connection in list(self._connections):
            connection.close()
        await self._server.wait_closed()
        self._server = None

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    def api_versions_body(self):
        return self._api_versions

    def unsupported_api_versions_body(self):
        low, high = self.versions[API_VERSIONS]
        return ApiVersionsResponse(error_code=ErrorCode.UNSUPPORTED_VERSION, api_keys=[
            ApiVersionsResponse.ApiVersion(api_key=API_VERSIONS, min_version=low, max_version=high)])


class _Connection(asyncio.Protocol):
    def __init__(self, listener: Listener):
        self.listener = listener
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()  # a partial frame
        self.wanted = 4  # bytes ``buffer`` must hold before a frame can be cut from it
        self.out = bytearray()  # answers to write at the end of this read
        # Answers that must wait for an earlier, still running one, in request order:
        # [done, api_key, version, correlation id, flexible header, response, arrival perf_counter()]
        self.pending: deque[list] = deque()
        self.peer = None
        self.closing = False  # refused or closed: read nothing more
        self.lingering = False  # closing later (a failed authentication): the timer closes it
        self.session = None

    def connection_made(self, transport) -> None:
        self.transport = transport
        self.peer = transport.get_extra_info("peername")
        if self.listener.security is not None:
            self.session = self.listener.security.session(transport)
        self.listener._connections.add(self)

    def connection_lost(self, exc) -> None:
        self.listener._connections.discard(self)
        self.transport = None

    def close(self) -> None:
        self.closing = True
        if self.transport is not None:
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        if self.closing:
            return
        buffer = self.buffer
        if buffer:
            buffer += data
            if len(buffer) < self.wanted:
                return
            data = bytes(buffer)
            buffer.clear()
        length = len(data)
        start = 0
        while length - start >= 4:
            size = _SIZE.unpack_from(data, start)[0]
            limit = MAX_FRAME_BYTES if self.session is None else self.session.max_frame_bytes or MAX_FRAME_BYTES
            if size < 0 or size > limit:
                self._refuse(f"frame of {size} bytes is over the {limit} limit")
                break
            end = start + 4 + size
            if end > length:
                break
            self._handle(data[start + 4:end])
            start = end
            if self.closing:
                break
        if not self.closing and start < length:
            buffer += memoryview(data)[start:]
            self.wanted = 4 + _SIZE.unpack_from(data, start)[0] if length - start >= 4 else 4
        if self.out:
            self._write()

    def _refuse(self, why: str) -> None:
        """Read nothing more; close once the answers to the requests before this one are out."""
        log.warning("%s: closing %s: %s", self.listener.name, self.peer, why)
        self.closing = True
        if not self.pending:
            self._write()

    def _handle(self, frame: bytes) -> None:
        session = self.session
        if session is not None and session.raw_tokens and not session.authenticated:
            return self._raw_token(frame)
        if len(frame) < 8:
            return self._refuse("request shorter than a header")
        api_key, version = _KEY_VERSION.unpack_from(frame, 0)
        listener = self.listener
        if session is not None and not session.admits(api_key):
            return self._refuse(f"api key {api_key} before SASL authentication completed")
        handler = listener.handlers.get(api_key)
        if handler is None:
            return self._refuse(f"api key {api_key} is not served on this listener")
        route = listener.routes.get((api_key, version))
        if route is None:
            low, high = listener.versions[api_key]
            if api_key != API_VERSIONS:
                return self._refuse(f"api key {api_key} version {version} is not served (range {low}-{high})")
            return self._answer_unsupported_api_versions(frame, version)
        request_cls, header_version, flexible = route
        try:
            header, pos = RequestHeader.decode_from(frame, 0, header_version)
            request = request_cls.decode_from(frame, pos, version)[0]
        except codec.MalformedError as exc:
            return self._refuse(f"unparsable api key {api_key} v{version} request: {exc}")
        arrived = time.perf_counter()
        correlation_id = header.correlation_id
        context = RequestContext(api_key, version, correlation_id, header.client_id, self.peer, listener, session)
        try:
            result = handler(context, request)
        except Exception:
            log.exception("%s: handler for api key %d failed; closing the connection", listener.name, api_key)
            return self.close()
        if session is not None and session.close_after is not None:
            self._close_later(session.close_after)
        if hasattr(result, "encode_into"):  # the response itself (cheaper to ask than "is it awaitable?")
            if self.pending:
                self.pending.append([True, api_key, version, correlation_id, flexible, result, arrived])
            else:
                self._append(api_key, version, correlation_id, flexible, result, arrived)
        else:
            entry = [False, api_key, version, correlation_id, flexible, None, arrived]
            self.pending.append(entry)
            asyncio.ensure_future(result).add_done_callback(lambda task: self._completed(entry, task))

    def _raw_token(self, frame: bytes) -> None:
        """SaslHandshake v0: a bare token in, a bare token out; a failure closes without an answer."""
        reply = self.session.token(frame)
        if reply is None:
            return self._close_later(self.session.close_after)
        self.out += _SIZE.pack(len(reply)) + reply

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
        answer = (API_VERSIONS, 0, header.correlation_id, False, self.listener.unsupported_api_versions_body(),
                  time.perf_counter())
        if self.pending:
            self.pending.append([True, *answer])
        else:
            self._append(*answer)

    def _completed(self, entry: list, task: asyncio.Future) -> None:
        if task.cancelled() or task.exception() is not None:
            if not task.cancelled():
                log.error("%s: handler for api key %d failed", self.listener.name, entry[1],
                          exc_info=task.exception())
            return self.close()
        entry[0], entry[5] = True, task.result()
        pending = self.pending
        while pending and pending[0][0]:
            self._append(*pending.popleft()[1:])
        self._write()

    def _append(self, api_key: int, version: int, correlation_id: int, flexible: bool, response, arrived) -> None:
        """Add one answer (size, response header v0 or v1, body) to ``out``."""
        out = self.out
        start = len(out)
        out += _SIZE_AND_CORRELATION.pack(0, correlation_id)
        if flexible:
            out.append(0)  # response header v1: no tagged fields
        try:
            response.encode_into(out, version)
        except codec.CodecError:
            log.exception("%s: cannot encode the answer to api key %d v%d; closing the connection",
                          self.listener.name, api_key, version)
            del out[start:]
            return self.close()
        _SIZE.pack_into(out, start, len(out) - start - 4)
        observer = self.listener.observer
        if observer is not None:
            observer(api_key, version, response, arrived)

    def _write(self) -> None:
        transport = self.transport
        if transport is None:
            return
        if self.out:
            transport.write(self.out)  # a fresh buffer follows: the transport may keep this one
            self.out = bytearray()
        if self.closing and not self.pending and not self.lingering:
            transport.close()  # sends what is buffered first
