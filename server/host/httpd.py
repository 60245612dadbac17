"""A small HTTP/1.1 server on asyncio streams, for the metrics and control ports.

Both ports carry a handful of requests a second from test suites, Prometheus and a browser tab, so
the standard library is enough: no aiohttp (a large dependency tree with C extensions for two plain
endpoints) and no ``http.server`` (thread per request, outside our event loop, where handlers would race
the controller). Requests are read with their ``Content-Length`` body (no chunked uploads), answered
with ``Content-Length``, and the connection is kept alive unless the client asks otherwise.

Routes are ``(method, pattern)`` pairs; a pattern is a path whose ``{name}`` segments match one path
segment each and are passed to the handler as keyword arguments. A handler gets the ``Request`` and
returns a ``Response`` (or awaits one); raising ``HttpError`` answers with that status and a JSON error.
A ``guard`` (server/host/http_guard.py), when given, sees every request first and may refuse it.
An unknown path is 404, a known path with another method is 405, a handler that fails is 500: the
server itself never goes down over a request. A request line or header line longer than
``MAX_LINE_BYTES`` is answered 414 or 431 and the connection closed. ``stop`` ends open connections
quietly (a keep-alive connection waiting for its next request is no error).
"""
from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

if TYPE_CHECKING:
    from .http_guard import RequestGuard

log = logging.getLogger("kraftwire.http")

MAX_BODY_BYTES = 1024 * 1024
MAX_HEADER_LINES = 100
MAX_LINE_BYTES = 64 * 1024  # asyncio's stream limit: a longer line is refused, not buffered


class HttpError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(slots=True)
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> dict[str, Any]:
        """The body as a JSON object ({} when empty); 400 when it is not one."""
        if not self.body.strip():
            return {}
        try:
            value = json.loads(self.body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise HttpError(400, f"the body is not valid JSON: {exc}") from None
        if not isinstance(value, dict):
            raise HttpError(400, "the body must be a JSON object")
        return value


@dataclass(slots=True)
class Response:
    status: int = 200
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, value: object, status: int = 200) -> Response:
        """A JSON answer ending in a newline, so that ``curl`` leaves the shell prompt on a line of its own."""
        return cls(status, json.dumps(value).encode() + b"\n", "application/json")

    @classmethod
    def html(cls, text: str) -> Response:
        return cls(200, text.encode(), "text/html; charset=utf-8")


Handler = Callable[..., Response | Awaitable[Response]]


class HttpServer:
    def __init__(self, name: str, host: str, port: int, routes: dict[tuple[str, str], Handler],
                 guard: RequestGuard | None = None):
        self.name = name
        self.guard = guard
        self.host = host
        self.port = port
        self._routes = [(method, pattern.strip("/").split("/"), handler)
                        for (method, pattern), handler in routes.items()]
        self._server: asyncio.base_events.Server | None = None
        self._connections: set[asyncio.Task] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve_connection, self.host, self.port, reuse_address=True,
                                                  limit=MAX_LINE_BYTES)
        self.port = self._server.sockets[0].getsockname()[1]
        if self.guard is not None:
            self.guard.port = self.port

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.close()
        tasks = list(self._connections)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def _route(self, method: str, path: str) -> tuple[Handler, dict[str, str]]:
        segments = [unquote(s) for s in path.strip("/").split("/")]
        allowed = False
        for route_method, pattern, handler in self._routes:
            if len(pattern) != len(segments):
                continue
            params = {}
            for want, got in zip(pattern, segments):
                if want.startswith("{"):
                    params[want[1:-1]] = got
                elif want != got:
                    break
            else:
                if route_method == method:
                    return handler, params
                allowed = True
        if allowed:
            raise HttpError(405, f"{method} is not allowed on {path}")
        raise HttpError(404, f"no such endpoint: {path}")

    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None  # (asyncio.start_server runs each connection in a task of its own)
        self._connections.add(task)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                response = await self._answer(request)
                keep_alive = request.headers.get("connection", "").lower() != "close"
                writer.write(_encode(response, keep_alive))
                await writer.drain()
                if not keep_alive:
                    break
        except HttpError as exc:  # the request itself could not be read: answer and hang up
            writer.write(_encode(Response.json({"error": exc.message}, exc.status), False))
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:  # ``stop``: the connection just ends
            pass
        finally:
            self._connections.discard(task)
            writer.close()

    async def _answer(self, request: Request) -> Response:
        try:
            if self.guard is not None:
                self.guard(request)
            handler, params = self._route(request.method, request.path)
            result = handler(request, **params)
            return await result if inspect.isawaitable(result) else result
        except HttpError as exc:
            return Response.json({"error": exc.message}, exc.status)
        except Exception:
            log.exception("%s: %s %s failed", self.name, request.method, request.path)
            return Response.json({"error": "internal error; see the server log"}, 500)


async def _read_line(reader: asyncio.StreamReader, too_long: HttpError) -> bytes:
    """One line with its end, b"" at the end of the stream; ``too_long`` past MAX_LINE_BYTES."""
    try:
        return await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        return exc.partial
    except asyncio.LimitOverrunError:
        raise too_long from None


async def _read_request(reader: asyncio.StreamReader) -> Request | None:
    line = await _read_line(reader, HttpError(414, f"request lines are limited to {MAX_LINE_BYTES} bytes"))
    if not line:
        return None
    try:
        method, target, _version = line.decode("latin-1").split()
    except ValueError:
        raise HttpError(400, "malformed request line") from None
    headers = {}
    for _ in range(MAX_HEADER_LINES):
        line = await _read_line(reader, HttpError(431, f"header lines are limited to {MAX_LINE_BYTES} bytes"))
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    else:
        raise HttpError(431, "too many header lines")
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        raise HttpError(400, "bad Content-Length") from None
    if not 0 <= length <= MAX_BODY_BYTES:
        raise HttpError(413, f"bodies are limited to {MAX_BODY_BYTES} bytes")
    body = await reader.readexactly(length) if length else b""
    url = urlsplit(target)
    return Request(method.upper(), url.path, parse_qs(url.query), headers, body)


def _encode(response: Response, keep_alive: bool) -> bytes:
    reason = HTTPStatus(response.status).phrase
    lines = [f"HTTP/1.1 {response.status} {reason}",
             f"Content-Type: {response.content_type}",
             f"Content-Length: {len(response.body)}",
             "Cache-Control: no-store",
             f"Connection: {'keep-alive' if keep_alive else 'close'}"]
    lines += [f"{name}: {value}" for name, value in response.headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + response.body
