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

Requests that follow a refused one in the same read are dropped unanswered: the connection is closing.
"""
from __future__ import annotations

import asyncio
import inspect
import logging
import struct
import time
from collections import deque
from dataclasses import dataclass
from typing import Awaitable, Callable

import codec
from codec.messages import ApiVersionsResponse, RequestHeader, ResponseHeader

log = logging.getLogger("kraftwire.transport")

MAX_FRAME_BYTES = 100 * 1024 * 1024
UNSUPPORTED_VERSION = 35
API_VERSIONS = 18
_SIZE = struct.Struct(">i")
_KEY_VERSION = struct.Struct(">hh")


@dataclass(frozen=True, slots=True)
class RequestContext:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    peer: tuple | None
    listener: "Listener"


Handler = Callable[[RequestContext, object], object | Awaitable[object]]
# Told of every answered request: (api key, version, response, perf_counter() when it arrived).
Observer = Callable[[int, int, object, float], None]


class Listener:
    """One TCP port speaking the Kafka protocol."""

    def __init__(self, name: str, host: str, port: int, handlers: dict[int, Handler],
                 versions: dict[int, tuple[int, int]]):
        self.name = name
        self.host = host
        self.port = port
        self.handlers = handlers
        self.versions = versions  # api key -> (min, max) served here
        self.observer: Observer | None = None  # e.g. the metrics' request counter
        self._server: asyncio.base_events.Server | None = None
        self._connections: set[_Connection] = set()

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _Connection(self), self.host, self.port, reuse_address=True)
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
        keys = [ApiVersionsResponse.ApiVersion(api_key=k, min_version=lo, max_version=hi)
                for k, (lo, hi) in sorted(self.versions.items())]
        return ApiVersionsResponse(error_code=0, api_keys=keys)

    def unsupported_api_versions_body(self):
        low, high = self.versions[API_VERSIONS]
        return ApiVersionsResponse(error_code=UNSUPPORTED_VERSION, api_keys=[
            ApiVersionsResponse.ApiVersion(api_key=API_VERSIONS, min_version=low, max_version=high)])


class _Connection(asyncio.Protocol):
    def __init__(self, listener: Listener):
        self.listener = listener
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        # [done, api_key, version, correlation id, response, arrival perf_counter()] in request order
        self.pending: deque[list] = deque()
        self.peer = None
        self.closing = False

    def connection_made(self, transport) -> None:
        self.transport = transport
        self.peer = transport.get_extra_info("peername")
        self.listener._connections.add(self)

    def connection_lost(self, exc) -> None:
        self.listener._connections.discard(self)
        self.transport = None

    def close(self) -> None:
        self.closing = True
        if self.transport is not None:
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        start = 0
        while not self.closing and len(buffer) - start >= 4:
            size = _SIZE.unpack_from(buffer, start)[0]
            if size < 0 or size > MAX_FRAME_BYTES:
                log.warning("%s: closing %s: frame of %d bytes is over the %d limit", self.listener.name,
                            self.peer, size, MAX_FRAME_BYTES)
                self.close()
                return
            end = start + 4 + size
            if len(buffer) < end:
                break
            self._handle(bytes(buffer[start + 4:end]))
            start = end
        del buffer[:start]

    def _refuse(self, why: str) -> None:
        log.warning("%s: closing %s: %s", self.listener.name, self.peer, why)
        self.close()

    def _handle(self, frame: bytes) -> None:
        if len(frame) < 8:
            return self._refuse("request shorter than a header")
        api_key, version = _KEY_VERSION.unpack_from(frame, 0)
        listener = self.listener
        handler = listener.handlers.get(api_key)
        if handler is None:
            return self._refuse(f"api key {api_key} is not served on this listener")
        low, high = listener.versions[api_key]
        unsupported = not low <= version <= high
        if unsupported and api_key != API_VERSIONS:
            return self._refuse(f"api key {api_key} version {version} is not served (range {low}-{high})")
        try:
            header_version = 2 if (version >= 3 if api_key == API_VERSIONS else
                                   codec.request_header_version(api_key, version) == 2) else 1
            header, pos = RequestHeader.decode_from(frame, 0, header_version)
            if unsupported:
                request = None
            else:
                request, pos = codec.api(api_key)[0].decode_from(frame, pos, version)
        except codec.MalformedError as exc:
            return self._refuse(f"unparsable api key {api_key} v{version} request: {exc}")
        entry = [False, api_key, 0 if unsupported else version, header.correlation_id, None, time.perf_counter()]
        self.pending.append(entry)
        if unsupported:
            entry[0], entry[4] = True, listener.unsupported_api_versions_body()
            return self._flush()
        context = RequestContext(api_key, version, header.correlation_id, header.client_id, self.peer, listener)
        try:
            result = handler(context, request)
        except Exception:
            log.exception("%s: handler for api key %d failed; closing the connection", listener.name, api_key)
            return self.close()
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(result)
            task.add_done_callback(lambda t, e=entry: self._completed(e, t))
        else:
            entry[0], entry[4] = True, result
            self._flush()

    def _completed(self, entry: list, task: asyncio.Future) -> None:
        if task.cancelled() or task.exception() is not None:
            if not task.cancelled():
                log.error("%s: handler for api key %d failed", self.listener.name, entry[1],
                          exc_info=task.exception())
            return self.close()
        entry[0], entry[4] = True, task.result()
        self._flush()

    def _flush(self) -> None:
        pending = self.pending
        observer = self.listener.observer
        out = bytearray()
        while pending and pending[0][0]:
            _, api_key, version, correlation_id, response, arrived = pending.popleft()
            body = bytearray(b"\0\0\0\0")
            ResponseHeader(correlation_id=correlation_id).encode_into(
                body, codec.response_header_version(api_key, version))
            response.encode_into(body, version)
            _SIZE.pack_into(body, 0, len(body) - 4)
            out += body
            if observer is not None:
                observer(api_key, version, response, arrived)
        if out and self.transport is not None:
            self.transport.write(bytes(out))
