"""The producer id control manager (Kafka's ProducerIdControlManager): hands brokers blocks of producer
ids for the idempotent producers they serve (AllocateProducerIds, KIP-730).

Each block is ``BLOCK_SIZE`` ids from the image's next free id; the ProducerIdsRecord that gives it
moves the next free id past it, so a block is never given twice, across controller failovers too (the
image holds the next id: ``MetadataImage.next_producer_id``). The asking broker must name its current
registration (STALE_BROKER_EPOCH otherwise, as Kafka's ``checkBrokerEpoch``); once the ids would pass
int64's range every request is refused with UNKNOWN_SERVER_ERROR, as Kafka's. The API's contract is in
server/apis/api67_allocate_producer_ids.py.
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec import records as rec
from kraftwire.codec.messages import AllocateProducerIdsRequest, AllocateProducerIdsResponse
from kraftwire.server.metadata.image import MetadataImage

from .result import ControllerResult

BLOCK_SIZE = 1000  # Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE
INT64_MAX = (1 << 63) - 1


def decide(image: MetadataImage, request: AllocateProducerIdsRequest) -> ControllerResult:
    """The next block for the asking broker, with the ProducerIdsRecord that takes it."""
    broker = image.brokers.get(request.broker_id)
    if broker is None or broker.epoch != request.broker_epoch:
        return ControllerResult([], AllocateProducerIdsResponse(error_code=ErrorCode.STALE_BROKER_EPOCH))
    first = image.next_producer_id
    if first > INT64_MAX - BLOCK_SIZE:
        return ControllerResult([], AllocateProducerIdsResponse(error_code=ErrorCode.UNKNOWN_SERVER_ERROR))
    record = rec.ProducerIdsRecord(broker_id=request.broker_id, broker_epoch=request.broker_epoch,
                                   next_producer_id=first + BLOCK_SIZE)
    return ControllerResult([record], AllocateProducerIdsResponse(
        error_code=ErrorCode.NONE, producer_id_start=first, producer_id_len=BLOCK_SIZE))
