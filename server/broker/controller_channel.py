"""``ControllerChannel``: how a broker reaches whichever controller is active.

A broker knows every controller's address (Kafka's ``controller.quorum.bootstrap.servers``) and sends to
the one it last found active. An answer that says NOT_CONTROLLER anywhere in it (a standby answers
every write so), a lost connection, or no answer within ``attempt_timeout`` sends the request on to
the next controller, round the list, until one answers or the request's own deadline passes, as
Kafka's forwarding manager retries forwarded requests against the new controller within the client's
timeout (``timeout_ms`` of the request when it has one, else ``default_timeout``). With one controller
the channel is a plain connection: nothing is retried.

A request retried after no answer may have been carried out by the controller that went quiet, as in
Kafka; its retry then gets that controller's view (TOPIC_ALREADY_EXISTS, say).
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from kraftwire.codec import ErrorCode
from kraftwire.codec.message import Struct
from kraftwire.server.wire.client import KafkaClient, KafkaClientError

log = logging.getLogger("kraftwire.broker")

ROUND_BACKOFF_S = 0.05  # after every controller refused once


def says_not_controller(response) -> bool:
    """Whether any error code in the answer is NOT_CONTROLLER."""
    stack = [response]
    while stack:
        item = stack.pop()
        if getattr(item, "error_code", None) == ErrorCode.NOT_CONTROLLER:
            return True
        for value in item:
            if isinstance(value, tuple) and value and isinstance(value[0], Struct):
                stack.extend(value)
            elif isinstance(value, Struct):
                stack.append(value)
    return False


class ControllerChannel:
    def __init__(self, addresses: Callable[[], list[tuple[str, int]]], client_id: str, security=None,
                 attempt_timeout: float = 5.0, default_timeout: float = 30.0):
        self._addresses = addresses
        self.client_id = client_id
        self.security = security
        self.attempt_timeout = attempt_timeout
        self.default_timeout = default_timeout
        self._index = 0
        self._client: KafkaClient | None = None

    @property
    def host(self) -> str:
        return self._address()[0]

    @property
    def port(self) -> int:
        return self._address()[1]

    @property
    def bootstrap_servers(self) -> str:
        """Every controller's ``host:port``, as ``controller.quorum.bootstrap.servers`` lists them."""
        return ",".join(f"{host}:{port}" for host, port in self._addresses())

    def _address(self) -> tuple[str, int]:
        addresses = self._addresses()
        return addresses[self._index % len(addresses)]

    def _current(self) -> KafkaClient:
        host, port = self._address()
        if self._client is None or (self._client.host, self._client.port) != (host, port):
            if self._client is not None:
                asyncio.ensure_future(self._client.close())
            self._client = KafkaClient(host, port, self.client_id, self.security)
        return self._client

    async def send(self, request, version: int | None = None):
        if len(self._addresses()) == 1:
            return await self._current().send(request, version)
        loop = asyncio.get_running_loop()
        timeout_ms = getattr(request, "timeout_ms", None)
        deadline = loop.time() + (timeout_ms / 1000 if isinstance(timeout_ms, int) and timeout_ms > 0
                                  else self.default_timeout)
        refusals = 0
        while True:
            client = self._current()
            answer, failure = None, None
            try:
                answer = await asyncio.wait_for(client.send(request, version),
                                                max(0.001, min(self.attempt_timeout, deadline - loop.time())))
                if not says_not_controller(answer):
                    return answer
            except (KafkaClientError, asyncio.TimeoutError) as exc:
                failure = exc
                await self._drop(client)
            if loop.time() >= deadline:
                if answer is not None:
                    return answer
                raise KafkaClientError(f"no active controller answered in time: {failure!r}")
            self._index += 1
            refusals += 1
            if refusals % len(self._addresses()) == 0:
                await asyncio.sleep(ROUND_BACKOFF_S)

    async def _drop(self, client: KafkaClient) -> None:
        if self._client is client:
            self._client = None
        await client.close()

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
