"""``LogError``: every refusal of the log layer, carrying the Kafka error code a handler answers with."""
from __future__ import annotations

from typing import NamedTuple

from kraftwire.codec import ErrorCode, KafkaError


class RecordError(NamedTuple):
    """One record that failed validation: its index in the batch and why (Produce's RecordErrors)."""

    batch_index: int
    message: str


class LogError(KafkaError):
    """A refused log operation: ``code`` (an ``ErrorCode``), ``message`` (Produce's ErrorMessage) and, for
    per-record refusals (INVALID_RECORD, INVALID_TIMESTAMP), the ``record_errors``. Nothing was written."""

    def __init__(self, code: int, message: str | None = None, record_errors: tuple[RecordError, ...] = ()):
        super().__init__(code, message)
        self.record_errors = record_errors


class LogStorageError(LogError):
    """An I/O failure of the log's files: the caller marks the directory offline (KAFKA_STORAGE_ERROR)."""

    def __init__(self, message: str):
        super().__init__(ErrorCode.KAFKA_STORAGE_ERROR, message)


class UnexpectedAppendOffset(LogError):
    """A follower's batch starts below the log end (Kafka's UnexpectedAppendOffsetException): the fetcher
    truncates or resets instead of appending."""

    def __init__(self, first_offset: int, last_offset: int, log_end_offset: int):
        super().__init__(ErrorCode.UNKNOWN_SERVER_ERROR, f"Unexpected offset in append: first offset {first_offset} "
                                                         f"is less than the next offset {log_end_offset}")
        self.first_offset = first_offset
        self.last_offset = last_offset
        self.log_end_offset = log_end_offset
