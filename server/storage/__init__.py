"""Kafka's log layer for topic partitions, in Kafka's on-disk format (what ``kafka-dump-log`` reads).

A partition lives in ``<log dir>/<topic>-<partition>/`` (the caller names it): ``{base:020d}.log``
segments of v2 record batches as produced (compressed ones stay compressed), their ``.index`` and
``.timeindex``, ``leader-epoch-checkpoint`` and ``partition.metadata``. Data stays on disk: reads go to
the files (``pread``, or ``os.sendfile`` on a ``LogSlice``), nothing of a log is cached in memory but its
segments' bookkeeping and the idempotent producers' last batches.

The interface (stable: later versions add, never rename):

* ``LogConfig`` (frozen): segment.bytes, segment.ms, segment.index.bytes, index.interval.bytes,
  retention.bytes, retention.ms, max.message.bytes, message.timestamp.type (``TimestampType``),
  message.timestamp.before/after.max.ms, flush.messages, flush.ms (Kafka's defaults: no fsync per write),
  cleanup.policy (compact: keys required, no cleaner runs), file.delete.delay.ms;
  ``LogConfig.from_configs({name: value})`` from a topic's effective configs.
* ``PartitionLog.open(directory, topic_id, config, now_ms, recovery_point, log_start_offset,
  high_watermark=None)``: creates the directory and ``partition.metadata``, loads the segments, recovers
  from the recovery point (None: everything) by re-validating batches and cutting at the first invalid
  one, loads the epochs, rebuilds producer state.
* properties ``log_start_offset``, ``log_end_offset``, ``high_watermark`` (``update_high_watermark``),
  ``recovery_point``, ``size_bytes``, ``leader_epoch_cache`` (``EpochEntry`` tuples), ``latest_epoch``,
  ``last_stable_offset`` (the HW: no transactions); ``assign_epoch_start_offset(epoch, offset)`` for a new
  leader's epoch before its first batch.
* ``append_as_leader(records, leader_epoch, now_ms, required_acks=None) -> AppendInfo``: Kafka's
  validation (magic 2, one batch, CRC-32C, sizes, counts, codecs, timestamps, idempotent sequences),
  offsets, epoch and LogAppendTime stamped; a duplicate of one of a producer's last 5 batches answers its
  original offsets (``AppendInfo.duplicate``). Refusals raise ``LogError`` (``.code`` an ``ErrorCode``,
  ``.message``, ``.record_errors``) and write nothing. Transactional batches: INVALID_TXN_STATE.
* ``append_as_follower(records, now_ms=None, leader_epoch=None) -> AppendInfo``: the leader's offsets
  and epochs kept; ``UnexpectedAppendOffset`` (a ``LogError``) when a batch starts below the log end.
* ``read(offset, max_bytes, max_offset=None, min_one_batch=True) -> LogSlice``: whole batches of one
  segment (``fileno()``, ``position``, ``length``, ``read()``, ``next_offset``); LogError
  OFFSET_OUT_OF_RANGE outside [log start, log end].
* ``truncate_to(offset)``, ``truncate_fully_and_start_at(offset)``, ``end_offset_for_epoch(epoch) ->
  (epoch, end offset)`` ((-1, -1) for UNDEFINED), ``offset_for_timestamp(ts) -> TimestampAndOffset |
  None`` (-2, -1, -3, -4, -5, -6 as Kafka, else through the time index), ``delete_records_before(offset)
  -> new log start`` (OFFSET_OUT_OF_RANGE above the HW), ``enforce_retention(now_ms) -> segments
  deleted``, ``expire_producers(now_ms)`` (producer.id.expiration.ms), ``roll(now_ms)``, ``flush()``,
  ``maybe_flush(now_ms)`` (flush.ms), ``close()``, ``delete()``; ``batches(start)`` walks the headers.
* ``LogDirCheckpoints(log_dir)``: ``read``/``write`` of ``recovery-point-offset-checkpoint``,
  ``log-start-offset-checkpoint`` and ``replication-offset-checkpoint`` ({(topic, partition): offset}).

Modules: ``log`` (``PartitionLog``), ``segment``, ``index``, ``batches`` (the v2 header, the validator),
``compression``, ``producer_state``, ``leader_epochs``, ``checkpoints``, ``config``, ``errors``.

Where it differs from Kafka (deliberately, for now): no log cleaner (cleanup.policy=compact keeps every
record); no producer-state ``.snapshot`` files (the state is rebuilt from the batch headers at open);
compression.type other than "producer" does not recompress; a batch whose inner offsets are not 0, 1, ...
is refused (INVALID_RECORD) instead of rebuilt; a compressed batch may inflate to at most 256x
max.message.bytes (CORRUPT_MESSAGE beyond); index files are written at their true length, not
pre-allocated; the log end after ``truncate_to`` inside a batch is that batch's base, not the target.

It imports only ``kraftwire.codec`` (and the codec libraries python-snappy, lz4, zstandard).
"""
from .batches import BatchHeader
from .checkpoints import (LEADER_EPOCH_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT, PARTITION_METADATA,
                          RECOVERY_POINT_CHECKPOINT, REPLICATION_OFFSET_CHECKPOINT, CheckpointError,
                          LogDirCheckpoints, kafka_uuid, parse_kafka_uuid)
from .config import LogConfig, TimestampType
from .errors import LogError, RecordError, UnexpectedAppendOffset
from .leader_epochs import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, EpochEntry
from .log import (EARLIEST_LOCAL_TIMESTAMP, EARLIEST_TIMESTAMP, LATEST_TIERED_TIMESTAMP, LATEST_TIMESTAMP,
                  MAX_TIMESTAMP, AppendInfo, LogSlice, PartitionLog, TimestampAndOffset)

__all__ = ["AppendInfo", "BatchHeader", "CheckpointError", "EARLIEST_LOCAL_TIMESTAMP", "EARLIEST_TIMESTAMP",
           "EpochEntry", "LATEST_TIERED_TIMESTAMP", "LATEST_TIMESTAMP", "LEADER_EPOCH_CHECKPOINT",
           "LOG_START_OFFSET_CHECKPOINT", "LogConfig", "LogDirCheckpoints", "LogError", "LogSlice",
           "MAX_TIMESTAMP", "PARTITION_METADATA", "PartitionLog", "RECOVERY_POINT_CHECKPOINT",
           "REPLICATION_OFFSET_CHECKPOINT", "RecordError", "TimestampAndOffset", "TimestampType",
           "UNDEFINED_EPOCH", "UNDEFINED_EPOCH_OFFSET", "UnexpectedAppendOffset", "kafka_uuid",
           "parse_kafka_uuid"]
