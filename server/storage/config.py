"""``LogConfig``: the topic-level configs the log layer obeys, under Kafka's names and with Kafka 4.3's
defaults (``TopicConfig``/``ServerLogConfigs``)."""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from enum import Enum

from kraftwire.codec import ErrorCode

from .errors import LogError

GIB = 1 << 30
DAY_MS = 24 * 60 * 60 * 1000
NEVER = (1 << 63) - 1  # Long.MAX_VALUE: Kafka's "no limit" for the flush and timestamp settings


class TimestampType(Enum):
    """message.timestamp.type: whose clock a record's timestamp is."""

    CREATE_TIME = "CreateTime"
    LOG_APPEND_TIME = "LogAppendTime"


# topic config name -> (LogConfig field, parser)
_INT_FIELDS = {
    "segment.bytes": "segment_bytes",
    "segment.ms": "segment_ms",
    "segment.index.bytes": "segment_index_bytes",
    "index.interval.bytes": "index_interval_bytes",
    "retention.bytes": "retention_bytes",
    "retention.ms": "retention_ms",
    "max.message.bytes": "max_message_bytes",
    "message.timestamp.before.max.ms": "message_timestamp_before_max_ms",
    "message.timestamp.after.max.ms": "message_timestamp_after_max_ms",
    "flush.messages": "flush_messages",
    "flush.ms": "flush_ms",
    "file.delete.delay.ms": "file_delete_delay_ms",
}


@dataclasses.dataclass(frozen=True)
class LogConfig:
    """A partition log's settings (Kafka's topic config name in each comment).

    ``cleanup_policy`` is kept as given: "delete" enables retention; a policy with "compact" makes the log
    refuse records without a key (INVALID_RECORD, as Kafka's validator), but no cleaner runs, so a
    compacted topic keeps every record (a difference from Kafka, which README states).
    ``compression_type`` other than "producer" is recorded but batches are still stored as produced."""

    segment_bytes: int = GIB  # segment.bytes
    segment_ms: int = 7 * DAY_MS  # segment.ms
    segment_index_bytes: int = 10 * 1024 * 1024  # segment.index.bytes: the offset/time index's size limit
    index_interval_bytes: int = 4096  # index.interval.bytes
    retention_bytes: int = -1  # retention.bytes (-1: no size limit)
    retention_ms: int = 7 * DAY_MS  # retention.ms (-1: no time limit)
    max_message_bytes: int = 1048588  # max.message.bytes: the largest batch accepted
    message_timestamp_type: TimestampType = TimestampType.CREATE_TIME  # message.timestamp.type
    message_timestamp_before_max_ms: int = NEVER  # message.timestamp.before.max.ms
    message_timestamp_after_max_ms: int = 3_600_000  # message.timestamp.after.max.ms (1 h since Kafka 4.0)
    flush_messages: int = NEVER  # flush.messages: fsync after this many unflushed records
    flush_ms: int = NEVER  # flush.ms: fsync when the oldest unflushed write is this old (``maybe_flush``)
    cleanup_policy: str = "delete"  # cleanup.policy
    compression_type: str = "producer"  # compression.type
    file_delete_delay_ms: int = 60_000  # file.delete.delay.ms: a deleted segment's files linger this long

    @property
    def compact(self) -> bool:
        return "compact" in self.cleanup_policy.split(",")

    @property
    def retention_enabled(self) -> bool:
        return "delete" in self.cleanup_policy.split(",")

    @property
    def max_index_entries(self) -> int:
        """Entries of the offset index before the segment rolls (Kafka: segment.index.bytes / 8)."""
        return max(1, self.segment_index_bytes // 8)

    @classmethod
    def from_configs(cls, configs: Mapping[str, str]) -> LogConfig:
        """The config of a topic from its effective configs (name -> value as Kafka renders it); names the
        log layer does not use are ignored, a value that does not parse raises LogError(INVALID_CONFIG)."""
        values: dict[str, object] = {}
        for name, field in _INT_FIELDS.items():
            if configs.get(name) is not None:
                try:
                    values[field] = int(configs[name])
                except ValueError:
                    raise LogError(ErrorCode.INVALID_CONFIG, f"{name} {configs[name]!r} is not a number") from None
        kind = configs.get("message.timestamp.type")
        if kind is not None:
            try:
                values["message_timestamp_type"] = TimestampType(kind)
            except ValueError:
                raise LogError(ErrorCode.INVALID_CONFIG, f"message.timestamp.type {kind!r} is not "
                                                         "CreateTime or LogAppendTime") from None
        for name, field in (("cleanup.policy", "cleanup_policy"), ("compression.type", "compression_type")):
            if configs.get(name) is not None:
                values[field] = configs[name].replace(" ", "")
        return dataclasses.replace(cls(), **values)  # type: ignore[arg-type]  # fields by name, types above
