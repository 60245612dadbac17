"""A small asyncio Kafka client: how simulated brokers and the controller talk to each other.

It negotiates versions with ApiVersions on connect, then sends requests pipelined over one TCP
connection, matching responses by correlation id. ``send`` picks the highest version both sides serve
unless told otherwise. With a ``security.ClientSecurity`` it speaks TLS and authenticates with SASL
(SaslHandshake v1, SaslAuthenticate) right after ApiVersions, as Kafka's clients do.
"""
from __future__ import annotations

import asyncio
import itertools
import struct
from typing import TYPE_CHECKING, Any

from kraftwire import codec
from kraftwire.codec import ErrorCode
from kraftwire.codec.message import Message
from kraftwire.codec.messages import (ApiVersionsRequest, ApiVersionsResponse, RequestHeader, ResponseHeader,
                                      SaslAuthenticateRequest, SaslHandshakeRequest)

if TYPE_CHECKING:
    from .security import ClientSecurity

_SIZE = struct.Struct(">i")
SASL_AUTHENTICATE_KEY = 36


def _schema_versions(api_key: int) -> tuple[int, int]:
    """The versions kraftwire's schema of ``api_key``'s request spans."""
    versions = codec.api(api_key)[0].VALID_VERSIONS
    assert versions.high is not None  # every request schema names its highest version
    return versions.low, versions.high


class KafkaClientError(ConnectionError):
    """The connection failed or closed before the answer came."""


class KafkaClient:
    def __init__(self, host: str, port: int, client_id: str, security: ClientSecurity | None = None):
        self.host, self.port, self.client_id = host, port, client_id
        self.security = security  # a security.ClientSecurity, or None for PLAINTEXT
        self.versions: dict[int, tuple[int, int]] = {}
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._ready = False  # the connection's ApiVersions (and SASL) exchange is done
        # correlation id -> (the answer's future, response class or None for the body's bytes, version,
        # response header version)
        self._waiting: dict[int, tuple[asyncio.Future[Any], type[Message] | None, int, int]] = {}
        self._correlation = itertools.count(1)
        self._read_task: asyncio.Task | None = None
        self._connecting: asyncio.Lock = asyncio.Lock()

    @property
    def connected(self) -> bool:
        """Whether requests may go out: the connection is open and its handshake done. A request sent
        while another one's ``connect`` is still under way waits for that handshake, not only for the
        socket (it once went out with no versions known yet, as "does not serve api key 63")."""
        return self._ready and self._writer is not None and not self._writer.is_closing()

    async def connect(self) -> None:
        async with self._connecting:
            if self.connected:
                return
            await self._stop_reading()  # the last connection's loop may not have seen its end yet
            self._ready = False
            try:
                context = self.security.ssl_context if self.security is not None else None
                self._reader, self._writer = await asyncio.open_connection(
                    self.host, self.port, ssl=context, server_hostname=self.host if context else None)
            except OSError as exc:
                raise KafkaClientError(f"cannot reach {self.host}:{self.port}: {exc}") from None
            self._read_task = asyncio.create_task(self._read_loop())
            answer = await self._send(ApiVersionsRequest(client_software_name="kraftwire",
                                                          client_software_version="0.1"), 3)
            ours = {k: (lo, hi) for k, (lo, hi) in
                    ((k, _schema_versions(k)) for k in codec.api_keys())}
            self.versions = {a.api_key: (max(a.min_version, ours[a.api_key][0]), min(a.max_version, ours[a.api_key][1]))
                             for a in answer.api_keys if a.api_key in ours}
            if self.security is not None and self.security.mechanism is not None:
                await self._authenticate()
            self._ready = True

    async def _authenticate(self) -> None:
        """SASL over SaslHandshake v1 and SaslAuthenticate; KafkaClientError when refused."""
        security = self.security
        assert security is not None and security.mechanism is not None
        answer = await self._send(SaslHandshakeRequest(mechanism=security.mechanism), 1)
        if answer.error_code != ErrorCode.NONE:
            self._fail(KafkaClientError(f"{self.host}:{self.port} refused SASL mechanism {security.mechanism}"))
            raise KafkaClientError(f"SASL handshake refused with error {answer.error_code}")
        steps = security.sasl_steps()
        token = next(steps)
        version = self.versions.get(SASL_AUTHENTICATE_KEY, (0, 0))[1]
        while True:
            answer = await self._send(SaslAuthenticateRequest(auth_bytes=token), version)
            if answer.error_code != ErrorCode.NONE:
                self._fail(KafkaClientError("authentication failed"))
                raise KafkaClientError(f"SASL authentication failed: {answer.error_message}")
            try:
                token = steps.send(answer.auth_bytes)
            except StopIteration:
                return

    async def send(self, request: Message, version: int | None = None) -> Any:
        """Send ``request`` and return the decoded response (of the request's API: hence Any)."""
        if not self.connected:
            await self.connect()
        key = request.API_KEY
        assert key is not None  # a request names its API
        if version is None:
            if key not in self.versions:
                raise KafkaClientError(f"{self.host}:{self.port} does not serve api key {key}")
            version = self.versions[key][1]
        return await self._send(request, version)

    async def relay(self, api_key: int, version: int, body: bytes | bytearray | memoryview) -> bytes:
        """Send a request body already encoded at ``version`` under a header of this client's own; return
        the response body (after its header) undecoded."""
        if not self.connected:
            await self.connect()
        return await self._exchange(api_key, version, body, None)

    async def _send(self, request: Message, version: int) -> Any:
        key = request.API_KEY
        assert key is not None  # a request names its API
        response_cls = ApiVersionsResponse if key == codec.API_VERSIONS_KEY else codec.api(key)[1]
        return await self._exchange(key, version, request, response_cls)

    async def _exchange(self, key: int, version: int, request: Message | bytes | bytearray | memoryview,
                        response_cls: type[Message] | None) -> Any:
        """Write the request (a message, or a body's bytes) and wait for its answer (decoded with
        ``response_cls``, or the body's bytes when None)."""
        correlation_id = next(self._correlation)
        frame = bytearray(b"\0\0\0\0")
        RequestHeader(request_api_key=key, request_api_version=version, correlation_id=correlation_id,
                      client_id=self.client_id).encode_into(frame, codec.request_header_version(key, version))
        if isinstance(request, Message):
            request.encode_into(frame, version)
        else:
            frame += request
        _SIZE.pack_into(frame, 0, len(frame) - 4)
        future = asyncio.get_running_loop().create_future()
        self._waiting[correlation_id] = (future, response_cls, version, codec.response_header_version(key, version))
        assert self._writer is not None  # connected
        self._writer.write(bytes(frame))
        return await future

    async def _read_loop(self) -> None:
        reader = self._reader
        assert reader is not None  # started once connected
        try:
            while True:
                size = _SIZE.unpack(await reader.readexactly(4))[0]
                frame = await reader.readexactly(size)
                correlation_id = _SIZE.unpack_from(frame, 0)[0]
                future, response_cls, version, header_version = self._waiting.pop(correlation_id)
                _, pos = ResponseHeader.decode_from(frame, 0, header_version)
                if not future.done():
                    future.set_result(frame[pos:] if response_cls is None
                                      else response_cls.decode_from(frame, pos, version)[0])
        except (asyncio.IncompleteReadError, OSError, KeyError, codec.MalformedError) as exc:
            self._fail(KafkaClientError(f"connection to {self.host}:{self.port} lost: {exc!r}"))
        except asyncio.CancelledError:
            self._fail(KafkaClientError("client closed"))
            raise

    def _fail(self, error: Exception) -> None:
        for future, *_ in self._waiting.values():
            if not future.done():
                future.set_exception(error)
        self._waiting.clear()
        if self._writer is not None:
            self._writer.close()
        self._writer = None

    async def _stop_reading(self) -> None:
        if self._read_task is not None:
            self._read_task.cancel()
            try:
                await self._read_task
            except (asyncio.CancelledError, KafkaClientError):
                pass
            self._read_task = None

    async def close(self) -> None:
        await self._stop_reading()
        if self._writer is not None:
            self._writer.close()
            self._writer = None
