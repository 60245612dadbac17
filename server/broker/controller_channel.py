"""``ControllerChannel``: how a broker reaches whichever controller is active.

A broker knows every controller's address (Kafka's ``controller.quorum.bootstrap.servers``) and sends to
the one it last found active. An answer that says NOT_CONTROLLER anywhere in it (a standby answers
every write so), a lost connection, or no answer within ``attempt_timeout`` while another controller
is named leader makes it ask every controller which one leads (DescribeCluster for controllers,
KIP-919: each names the Raft leader it knows; the one named most wins, a frozen controller simply does
not answer) and send the request there, until one answers or the request's own deadline passes, as
Kafka's forwarding manager retries forwarded requests against the new controller within the client's
timeout (``timeout_ms`` of the request when it has one, else ``default_timeout``). With one controller
the same loop tries that controller again after a refused or lost connection (it may be restarting),
as Kafka's does, unless the channel is made with ``retries_alone=False``: the metadata follower's
fetch fails at once, and its own loop counts the failure and fetches again. A lone controller's answer
is final, NOT_CONTROLLER too: one whose metadata log failed answers every write so from then on (Kafka's
controller would exit instead).

The channels of one broker (heartbeats and forwarding, its metadata follower's fetches and syncs)
share a ``LeaderPointer``: a leader any of them learns (a Fetch answer naming it, a discovery) is where
all of them send next, and a request waiting on another controller is sent there at once, as Kafka's
broker channels all follow the leader its Raft client knows. So a frozen controller (SIGSTOP, a GC
pause: its connections stay open and unanswered) holds a broker for about one ``attempt_timeout``
(the broker takes two of the quorum's request timeouts), not until the client's deadline, and the new
leader hears the broker's heartbeats well within its session timeout. A discovery asks every
controller but does not wait for the one that went quiet, and finds the named leader by its node id
when the channel knows the controllers' ids (behind a proxy a controller advertises another address
than the one the broker reaches it at).

A request that no controller answers before its deadline fails with ``ForwardTimedOut``, which the
broker's listener answers REQUEST_TIMED_OUT (7) in the API's own shape, keeping the client's connection,
as Kafka's ForwardingManager answers ``getErrorResponse(TimeoutException)`` when its retry timeout passes;
with one controller too.

A relayed answer (bytes, not decoded on the broker) is checked at its top-level error code, read from
the bytes, when the response has one at a fixed place: a kraftwire controller that refuses a forwarded
request (a standby, one that lost the lead mid-write) answers NOT_CONTROLLER in every error code of
the answer, that one included (``fault_injection.error_response``), so a 10,000-partition answer is
not decoded and walked (8 ms) to find it; other answers are decoded.

A request is sent again only once the controller it went to has lost the lead or the connection: a
slow commit is waited for. One retried after that may still have been carried out (the old leader
appended it and the new one committed it), as in Kafka; its retry then gets that view
(TOPIC_ALREADY_EXISTS, say).
"""
from __future__ import annotations

import asyncio
import logging
import struct
from collections.abc import Awaitable, Callable
from typing import Any

from collections import Counter

from kraftwire import codec
from kraftwire.codec import ErrorCode
from kraftwire.codec.message import Message
from kraftwire.codec.messages import DescribeClusterRequest
from kraftwire.codec.model import Struct
from kraftwire.server.wire.client import KafkaClient, KafkaClientError
from kraftwire.server.wire.security import ClientSecurity

log = logging.getLogger("kraftwire.broker")

RETRY_BACKOFF_S = 0.05  # between a refusal and the next attempt (Kafka's retry.backoff.ms is 100)
DISCOVERY_TIMEOUT_S = 1.0
CONTROLLERS_ENDPOINT = 2  # DescribeCluster's EndpointType for controllers
_INT16 = struct.Struct(">h")


def says_not_controller(response: Struct) -> bool:
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


class ChannelClosed(KafkaClientError):
    """The channel was closed (its broker stopped) while a request was under way."""


class ForwardTimedOut(KafkaClientError):
    """No controller answered the request before its deadline: the client is answered REQUEST_TIMED_OUT."""


class LeaderPointer:
    """Which controller (an index into the channel's addresses) the channels of one broker send to.
    Shared by its heartbeat/forwarding channel and its metadata follower's, so that whichever of them
    learns the leader (a Fetch answer naming it, a discovery after a silence) moves them all, as a
    Kafka broker's controller channels all follow the leader its Raft client knows. A move to a
    controller named as the leader wakes the attempts waiting on another one (``named_move``): a
    request waiting on a frozen controller is sent to the leader at once, not after its own timeout."""

    def __init__(self) -> None:
        self.index = 0
        self.named_moves = 0  # how many moves went to a controller named as the leader
        self._named: asyncio.Future | None = None

    def move(self, index: int, named: bool = False) -> None:
        self.index = index
        self.named_moves += named
        if named and self._named is not None:
            if not self._named.done():
                self._named.set_result(index)
            self._named = None

    def named_move(self) -> asyncio.Future:
        """Resolved at the next move to a controller named as the leader."""
        if self._named is None or self._named.done():
            self._named = asyncio.get_running_loop().create_future()
        return self._named


class ControllerChannel:
    """``node_ids``, when given, names the node id of the controller at each address (in the same
    order): a controller named as the leader is then found by its id, not only by the address it
    advertises, which differs from the one this broker reaches it at behind a proxy or a NAT (the
    process harness's link proxies). ``pointer`` is shared with the broker's other channels."""

    def __init__(self, addresses: Callable[[], list[tuple[str, int]]], client_id: str,
                 security: ClientSecurity | None = None,
                 attempt_timeout: float = 5.0, default_timeout: float = 30.0,
                 reachable: Callable[[int], bool] = lambda index: True, retries_alone: bool = True,
                 node_ids: Callable[[], list[int]] | None = None, pointer: LeaderPointer | None = None):
        self._addresses = addresses
        self._node_ids = node_ids
        self.pointer = pointer if pointer is not None else LeaderPointer()
        self._retries_alone = retries_alone
        self._reachable = reachable  # whether the link to the controller at that index is up (the harness cuts it)
        self.client_id = client_id
        self.security = security
        self.attempt_timeout = attempt_timeout
        self.default_timeout = default_timeout
        self._client: KafkaClient | None = None
        self._closed = False  # a closed channel opens no connection: a request under way ends instead

    @property
    def _index(self) -> int:
        return self.pointer.index

    @property
    def current(self) -> int:
        """The index of the controller this channel sends to."""
        return self._index % len(self._addresses())

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
        if self._closed:
            raise ChannelClosed("the broker stopped")
        if not self._reachable(self._index % len(self._addresses())):
            raise KafkaClientError(f"the link to the controller at {self.host}:{self.port} is cut")
        host, port = self._address()
        if self._client is None or (self._client.host, self._client.port) != (host, port):
            if self._client is not None:
                asyncio.ensure_future(self._client.close())
            self._client = KafkaClient(host, port, self.client_id, self.security)
        return self._client

    async def send(self, request: Message, version: int | None = None) -> Any:
        """Send ``request`` to the active controller; its decoded answer."""
        return await self._to_active(lambda client: client.send(request, version), says_not_controller,
                                     getattr(request, "timeout_ms", None))

    async def relay(self, api_key: int, version: int, body: bytes | bytearray | memoryview,
                    timeout_ms: int | None = None) -> bytes:
        """Relay a request body encoded at ``version`` to the active controller; its answer's bytes. With
        several controllers the answer is checked for NOT_CONTROLLER as the module says."""
        response_cls = codec.api(api_key)[1]
        at = response_cls.fixed_offset("error_code", version)

        def refused(answer: bytes) -> bool:
            if at is None:
                return says_not_controller(response_cls.decode_from(answer, 0, version)[0])
            return _INT16.unpack_from(answer, at)[0] == ErrorCode.NOT_CONTROLLER
        return await self._to_active(lambda client: client.relay(api_key, version, body), refused, timeout_ms)

    async def _to_active(self, attempt: Callable[[KafkaClient], Awaitable[Any]], refused: Callable[[Any], bool],
                         timeout_ms: object) -> Any:
        """``attempt`` on the active controller's client, found again and retried as the module says."""
        loop = asyncio.get_running_loop()
        timeout = timeout_ms / 1000 if isinstance(timeout_ms, int) and timeout_ms > 0 else self.default_timeout
        deadline = loop.time() + timeout
        if len(self._addresses()) == 1 and not self._retries_alone:
            try:
                return await asyncio.wait_for(attempt(self._current()), timeout)
            except TimeoutError:
                raise ForwardTimedOut(f"the controller did not answer within {timeout:g} s") from None
        while True:
            answer, failure, client = None, None, None
            tried = self._index
            try:
                client = self._current()
                answer = await self._answer(attempt(client), tried, deadline)
                if not refused(answer) or len(self._addresses()) == 1:
                    return answer
            except (TimeoutError, KafkaClientError) as exc:
                failure = exc
                if client is not None:
                    await self._drop(client)
                if self._closed:
                    raise ChannelClosed("the broker stopped") from None
            if loop.time() >= deadline:
                if answer is not None:
                    return answer
                raise ForwardTimedOut(f"no active controller answered within {timeout:g} s: {failure!r}")
            await asyncio.sleep(RETRY_BACKOFF_S)
            if self._index == tried:  # no other request moved the channel on meanwhile
                await self._discover(tried)

    async def _answer(self, attempt: Awaitable[Any], tried: int, deadline: float) -> Any:
        """The attempt's answer. With none after ``attempt_timeout`` it asks the other controllers who
        leads and waits on unless another controller is named (a busy one may answer nobody in time), asking
        again every quarter of that timeout:
        a slow commit is no reason to send a write twice (the second would find the first's effect,
        TOPIC_ALREADY_EXISTS say); asyncio.TimeoutError once another leads (named so by a controller,
        or by an answer to another channel of this broker, which moves the shared pointer) or the
        deadline passed. A controller that dies or drops the connection fails the attempt at once."""
        loop = asyncio.get_running_loop()
        pending = asyncio.ensure_future(attempt)
        named_moves = self.pointer.named_moves
        wait = self.attempt_timeout
        try:
            while True:
                moved = self.pointer.named_move()
                done, _ = await asyncio.wait({pending, moved}, return_when=asyncio.FIRST_COMPLETED,
                                             timeout=max(0.001, min(wait, deadline - loop.time())))
                if pending in done:
                    return pending.result()
                if self.pointer.named_moves != named_moves and self._index != tried:
                    raise TimeoutError()  # another channel of this broker was told the leader is elsewhere
                if loop.time() >= deadline:
                    raise TimeoutError()
                if moved in done:
                    continue  # named the one waited on again
                # silent past the attempt timeout: an election may be under way elsewhere, so ask again
                # more often (a quarter of it), to reach its winner soon after it wins
                wait = self.attempt_timeout / 4
                waited_on = tried % len(self._addresses())
                leader = await self._named_leader(waited_on)
                if leader is not None and leader != waited_on:
                    if self._index == tried:
                        self.pointer.move(leader, named=True)
                    raise TimeoutError()
        finally:
            pending.cancel()

    async def _named_leader(self, waited_on: int | None = None) -> int | None:
        """The index of the controller most controllers name as the leader, None when none does; with
        ``waited_on``, the first one named other than it, and None as soon as every other controller
        has answered without naming another (``waited_on`` is the one that did not answer in time: a
        frozen controller's silence is not waited for)."""
        addresses = self._addresses()
        named: Counter = Counter()
        asking = {asyncio.ensure_future(self._leader_named_by(i, addresses)): i for i in range(len(addresses))}
        others = len(addresses) - (waited_on is not None)
        try:
            pending = set(asking)
            while pending and others > 0:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    index = task.result()
                    others -= asking[task] != waited_on
                    if index is not None and waited_on is not None and index != waited_on:
                        return index
                    if index is not None:
                        named[index] += 1
        finally:
            for task in asking:
                task.cancel()
        return named.most_common(1)[0][0] if named else None

    def use(self, address: tuple[str, int] | None, node_id: int | None = None) -> bool:
        """Send to the controller ``node_id`` (when this channel knows the controllers' ids) or at
        ``address`` from now on (one an answer named as the leader); False when it is not one of the
        controllers."""
        index = self.index_of(node_id, address)
        if index is None:
            return False
        self.pointer.move(index, named=True)
        return True

    def index_of(self, node_id: int | None, address: tuple[str, int] | None) -> int | None:
        """The index of the controller with that id, else of the one at that address, else None."""
        if node_id is not None and node_id >= 0 and self._node_ids is not None:
            ids = self._node_ids()
            if node_id in ids:
                return ids.index(node_id)
        addresses = self._addresses()
        return addresses.index(address) if address in addresses else None

    async def rediscover(self) -> None:
        """Ask the controllers again which one leads (a no-op with one controller)."""
        if len(self._addresses()) > 1:
            await self._discover(self._index)

    async def _discover(self, tried: int) -> None:
        """Point the channel at the controller most controllers name as the leader (the next one in
        the list when none answers with a leader)."""
        leader = await self._named_leader()
        if self._index != tried:
            return
        self.pointer.move(tried + 1 if leader is None else leader, named=leader is not None)

    async def _leader_named_by(self, i: int, addresses: list[tuple[str, int]]) -> int | None:
        if self._closed or not self._reachable(i):
            return None
        client = KafkaClient(*addresses[i], self.client_id, self.security)
        try:
            answer = await asyncio.wait_for(client.send(DescribeClusterRequest(endpoint_type=CONTROLLERS_ENDPOINT)),
                                            DISCOVERY_TIMEOUT_S)
        except (TimeoutError, KafkaClientError):
            return None
        finally:
            await client.close()
        if answer.error_code or answer.controller_id < 0:
            return None
        leader = next((b for b in answer.brokers if b.broker_id == answer.controller_id), None)
        return self.index_of(answer.controller_id, None if leader is None else (leader.host, leader.port))

    async def _drop(self, client: KafkaClient) -> None:
        if self._client is client:
            self._client = None
        await client.close()

    def reopen(self) -> None:
        """Use the channel again after ``close`` (a stopped broker that starts again)."""
        self._closed = False

    async def close(self) -> None:
        self._closed = True
        if self._client is not None:
            await self._client.close()
            self._client = None
