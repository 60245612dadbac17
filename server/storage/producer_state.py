"""Idempotent producers' state of one partition, with Kafka 4.3's rules (ProducerStateManager,
ProducerAppendInfo, ProducerStateEntry).

Each producer id keeps its epoch and the metadata of its last 5 batches. For a batch a client produces:

* a batch equal (same epoch, same first and last sequence) to one of those 5 is a duplicate: nothing is
  written and the original offsets are answered (the producer reads it as success);
* an epoch below the producer's: INVALID_PRODUCER_EPOCH (PRODUCER_FENCED is the transaction
  coordinator's answer to InitProducerId, never the log's);
* a new epoch must start at sequence 0 (unless the producer had no epoch); within an epoch the first
  sequence must follow the last one (Int32.MAX wraps to 0): OUT_OF_ORDER_SEQUENCE_NUMBER otherwise;
* a producer the log has no state for (a new one, or one whose batches retention or DeleteRecords
  removed) may start at any sequence: since KIP-360 Kafka's broker never answers UNKNOWN_PRODUCER_ID.

Batches a follower copies or recovery replays update the state without these checks (an older epoch is
only logged by Kafka). The state is in memory, rebuilt from the batch headers when a log opens (Kafka
keeps ``.snapshot`` files to shorten that replay; kraftwire replays every segment's headers)."""
from __future__ import annotations

import dataclasses
from collections import deque
from typing import NamedTuple

from kraftwire.codec import ErrorCode

from .batches import INT32_MAX, NO_PRODUCER_EPOCH, NO_SEQUENCE, BatchHeader
from .errors import LogError

BATCHES_TO_RETAIN = 5


class BatchMetadata(NamedTuple):
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int  # the batch's max timestamp (its log append time under LogAppendTime)


@dataclasses.dataclass
class ProducerEntry:
    producer_id: int
    epoch: int = NO_PRODUCER_EPOCH
    batches: deque[BatchMetadata] = dataclasses.field(default_factory=lambda: deque(maxlen=BATCHES_TO_RETAIN))
    last_timestamp: int = -1

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    def duplicate_of(self, header: BatchHeader) -> BatchMetadata | None:
        if header.producer_epoch != self.epoch:
            return None
        return next((b for b in self.batches
                     if b.first_seq == header.base_sequence and b.last_seq == header.last_sequence), None)


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


class ProducerStateManager:
    """The producers of one partition's log."""

    def __init__(self) -> None:
        self.producers: dict[int, ProducerEntry] = {}

    def find_duplicate(self, header: BatchHeader) -> BatchMetadata | None:
        entry = self.producers.get(header.producer_id)
        return entry.duplicate_of(header) if entry else None

    def check(self, header: BatchHeader, first_offset: int) -> None:
        """Kafka's epoch and sequence checks of a client's batch (raises LogError; changes nothing)."""
        entry = self.producers.get(header.producer_id) or ProducerEntry(header.producer_id)
        pid, epoch, first_seq = header.producer_id, header.producer_epoch, header.base_sequence
        if epoch < entry.epoch:
            raise LogError(ErrorCode.INVALID_PRODUCER_EPOCH,
                           f"Epoch of producer {pid} at offset {first_offset} is {epoch}, which is < the last "
                           f"seen epoch {entry.epoch}")
        if epoch != entry.epoch:
            if first_seq != 0 and entry.epoch != NO_PRODUCER_EPOCH:
                raise LogError(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                               f"Invalid sequence number for new epoch of producer {pid} at offset {first_offset}: "
                               f"{epoch} (request epoch), {first_seq} (seq. number), {entry.epoch} (current "
                               "producer epoch)")
        elif not (entry.epoch == NO_PRODUCER_EPOCH or _in_sequence(entry.last_seq, first_seq)):
            raise LogError(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                           f"Out of order sequence number for producer {pid} at offset {first_offset}: {first_seq} "
                           f"(incoming seq. number), {entry.last_seq} (current end sequence number)")

    def update(self, header: BatchHeader, timestamp: int) -> None:
        """Record an appended batch (its header carries the offsets the log assigned)."""
        if not header.has_producer_id:
            return
        entry = self.producers.setdefault(header.producer_id, ProducerEntry(header.producer_id))
        if header.producer_epoch != entry.epoch:
            entry.batches.clear()
            entry.epoch = header.producer_epoch
        entry.batches.append(BatchMetadata(header.base_sequence, header.last_sequence, header.base_offset,
                                           header.last_offset, timestamp))
        entry.last_timestamp = timestamp

    def truncate_and_reload(self) -> None:
        """Forget every producer (the log replays its batches again after a truncation)."""
        self.producers.clear()

    def expire(self, now_ms: int, expiration_ms: int) -> int:
        """Forget producers silent for ``expiration_ms`` (producer.id.expiration.ms, by their last batch's
        timestamp, as Kafka's removeExpiredProducers); returns how many went."""
        gone = [pid for pid, entry in self.producers.items() if now_ms - entry.last_timestamp >= expiration_ms]
        for pid in gone:
            del self.producers[pid]
        return len(gone)

    def remove_before(self, log_start_offset: int) -> None:
        """Drop producers whose every retained batch is below the new log start (Kafka evicts them when
        their segments go), so they may begin again at any sequence."""
        gone = [pid for pid, e in self.producers.items() if e.batches and e.batches[-1].last_offset < log_start_offset]
        for pid in gone:
            del self.producers[pid]
