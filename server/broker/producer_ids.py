"""The producer ids a broker hands to idempotent producers (Kafka's RPCProducerIdManager).

The broker holds a block of ids the active controller gave it with AllocateProducerIds (67, KIP-730;
the controller's ``producer_ids`` manager writes the ProducerIdsRecord that takes the block) and hands
them out one by one to InitProducerId (api22_init_producer_id.py). It asks for the next block once 90 %
of the current one is used (Kafka's prefetch threshold), so producers seldom wait; a producer that
arrives while no id is left (the broker's first, or one after a block ran out before the next came) is
told COORDINATOR_LOAD_IN_PROGRESS and a block is asked for, as Kafka's manager answers (clients
retry). One request is in flight at a time; a refused or unanswered one is asked again by the next
producer. Ids are never handed out twice: a block lives only in this broker's
memory, and a restarted broker asks for a new one (the unused rest of the old block is skipped, as in
Kafka).
"""
from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.messages import AllocateProducerIdsRequest
from kraftwire.server.wire.client import KafkaClientError

if TYPE_CHECKING:
    from .node import BrokerNode

log = logging.getLogger("kraftwire.broker")

PREFETCH_THRESHOLD = 0.9  # Kafka's RPCProducerIdManager.PidPrefetchThreshold


class ProducerIdManager:
    """One broker's current block of producer ids (see the module docstring)."""

    def __init__(self, broker: BrokerNode) -> None:
        self._broker = broker
        self._next = 0  # the next id of the current block to hand out
        self._end = 0  # one past the current block's last id
        self._size = 0  # the current block's size
        self._prefetched: tuple[int, int] | None = None  # the next block, (first id, one past its last)
        self._fetching: asyncio.Future[None] | None = None

    def next_id(self) -> int:
        """A producer id never handed out before; KafkaError(COORDINATOR_LOAD_IN_PROGRESS) while the
        broker holds no block (one is asked for), as Kafka answers until its first block comes."""
        if not self._take_block():
            self._fetch()
            raise KafkaError(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
                             "the broker is waiting for a block of producer ids from the controller")
        handed = self._next
        self._next += 1
        if self._prefetched is None and self._end - self._next <= self._size * (1 - PREFETCH_THRESHOLD):
            self._fetch()
        return handed

    def _take_block(self) -> bool:
        """An id is left in the current block, or the prefetched block becomes the current one."""
        if self._next < self._end:
            return True
        if self._prefetched is None:
            return False
        (self._next, self._end), self._prefetched = self._prefetched, None
        self._size = self._end - self._next
        return True

    def _fetch(self) -> asyncio.Future[None]:
        if self._fetching is None or self._fetching.done():
            self._fetching = asyncio.ensure_future(self._allocate())
        return self._fetching

    async def _allocate(self) -> None:
        broker = self._broker
        try:
            response = await broker.send_to_controller(
                AllocateProducerIdsRequest(broker_id=broker.broker_id, broker_epoch=broker.epoch))
        except KafkaClientError as exc:
            log.info("broker %d: AllocateProducerIds not answered: %s", broker.broker_id, exc)
            return
        if response.error_code != ErrorCode.NONE:
            log.info("broker %d: AllocateProducerIds refused with error %d", broker.broker_id, response.error_code)
            return
        self._prefetched = (response.producer_id_start, response.producer_id_start + response.producer_id_len)
