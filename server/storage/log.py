"""``PartitionLog``: one partition's log directory in Kafka's format (Kafka's UnifiedLog + LocalLog +
LogLoader, without tiered storage or transactions). See the package docstring for the interface."""
from __future__ import annotations

import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

from kraftwire.codec import ErrorCode

from . import batches
from .batches import (DECOMPRESSED_LIMIT_FACTOR, NO_TIMESTAMP, BatchHeader, RecordRules,
                      check_client_batch, crc_valid, iter_headers, stamp, validate_records)
from .checkpoints import PARTITION_METADATA, read_partition_metadata, write_partition_metadata
from .config import LogConfig, TimestampType
from .errors import LogError, LogStorageError, UnexpectedAppendOffset
from .leader_epochs import EpochEntry, LeaderEpochCache
from .producer_state import ProducerStateManager
from .segment import DELETED_SUFFIX, INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, LogSegment

# a retention rule: (segment, base offset of the next segment or None) -> delete it
_Breach = Callable[[LogSegment, "int | None"], bool]

PRODUCER_ID_EXPIRATION_MS = 86_400_000  # producer.id.expiration.ms

# ListOffsets' special timestamps
EARLIEST_TIMESTAMP = -2
LATEST_TIMESTAMP = -1
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4
LATEST_TIERED_TIMESTAMP = -5
EARLIEST_PENDING_UPLOAD_TIMESTAMP = -6


class AppendInfo(NamedTuple):
    """What an append did (Kafka's LogAppendInfo): the offsets of the appended (or, for a duplicate, the
    original) batch, its max timestamp, the log append time (-1 under CreateTime) and the log start."""

    first_offset: int
    last_offset: int
    max_timestamp: int
    log_append_time: int
    log_start_offset: int
    record_count: int
    size_bytes: int
    duplicate: bool = False


class TimestampAndOffset(NamedTuple):
    """A ListOffsets answer: timestamp (-1 for the special ones), offset, the leader epoch of it (or None)."""

    timestamp: int
    offset: int
    leader_epoch: int | None


class LogSlice:
    """Whole batches of one segment file, named so a Fetch can ``os.sendfile`` them: ``fileno()`` (valid
    while the log is open, also after the segment is deleted or truncated away: its files are removed
    file.delete.delay.ms later), ``position``, ``length``; ``read()`` gives the bytes.
    ``first_offset``/``next_offset`` bound the batches. A truncation of the active segment cuts its file
    in place, so a sender must accept a short sendfile (fewer bytes than ``length``)."""

    __slots__ = ("segment", "position", "length", "first_offset", "next_offset")

    def __init__(self, segment: LogSegment | None, position: int, length: int, first_offset: int, next_offset: int):
        self.segment = segment
        self.position = position
        self.length = length
        self.first_offset = first_offset
        self.next_offset = next_offset

    @property
    def path(self) -> Path | None:
        return self.segment.path if self.segment else None

    def fileno(self) -> int:
        if self.segment is None:
            raise ValueError("an empty slice has no file")
        return self.segment.fileno()

    def read(self) -> bytes:
        return self.segment.read_bytes(self.position, self.length) if self.segment and self.length else b""

    def __repr__(self) -> str:
        return (f"LogSlice({self.path}, position={self.position}, length={self.length}, "
                f"offsets=[{self.first_offset}, {self.next_offset}))")


def _wall_ms() -> int:
    return int(time.time() * 1000)


class _Clock:
    """The latest time a caller gave the log (its clock may be virtual); what the calls without a time
    (truncations, DeleteRecords, a follower's append without one) date their deferred deletes by."""

    def __init__(self, now_ms: int):
        self.now_ms = now_ms

    def seen(self, now_ms: int | None) -> int:
        if now_ms is not None and now_ms > self.now_ms:
            self.now_ms = now_ms
        return self.now_ms if now_ms is None else now_ms


class PartitionLog:
    """A partition's log (``open`` builds it); not thread-safe: one owner drives it."""

    def __init__(self, directory: Path, topic_id: uuid.UUID, config: LogConfig):
        self.directory = directory
        self.topic_id = topic_id
        self.config = config
        self.segments: list[LogSegment] = []
        self.epochs = LeaderEpochCache(directory)
        self.producers = ProducerStateManager()
        self._log_start_offset = 0
        self._log_end_offset = 0
        self._high_watermark = 0
        self._recovery_point = 0
        self._unflushed_messages = 0
        self._last_flush_ms = 0
        self._pending_deletes: list[tuple[int, LogSegment]] = []  # (delete after ms, segment)
        self.recovered_bytes_truncated = 0  # what open's recovery cut (tests and logs read it)
        self.clock = _Clock(_wall_ms())

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(cls, directory: Path, topic_id: uuid.UUID, config: LogConfig, now_ms: int,
             recovery_point: int | None = None, log_start_offset: int | None = None,
             high_watermark: int | None = None) -> PartitionLog:
        """Open (creating it if absent) the log in ``directory`` (``<log dir>/<topic>-<partition>``).

        Segments at or past ``recovery_point`` (all of them for None: no clean checkpoint) are re-read:
        each batch's framing, CRC and offsets checked, the indexes rebuilt, and the log cut at the first
        invalid batch, as Kafka's LogLoader. ``partition.metadata`` is written with ``topic_id`` (a
        different id already there raises LogError(INCONSISTENT_TOPIC_ID))."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        existing = read_partition_metadata(directory / PARTITION_METADATA)
        if existing is not None and existing != topic_id:
            raise LogError(ErrorCode.INCONSISTENT_TOPIC_ID, f"{directory} holds topic id {existing}, not {topic_id}")
        if existing is None:
            write_partition_metadata(directory / PARTITION_METADATA, topic_id)
        log = cls(directory, topic_id, config)
        log.clock = _Clock(now_ms)
        log._load(now_ms, recovery_point, log_start_offset)
        log._last_flush_ms = now_ms
        log._high_watermark = min(max(high_watermark or 0, log._log_start_offset), log._log_end_offset)
        return log

    def _load(self, now_ms: int, recovery_point: int | None, log_start_offset: int | None) -> None:
        for leftover in self.directory.iterdir():
            if leftover.name.endswith((DELETED_SUFFIX, ".tmp", ".swap", ".cleaned")):
                leftover.unlink()
        bases = sorted(int(p.name[:-len(LOG_SUFFIX)]) for p in self.directory.glob(f"*{LOG_SUFFIX}")
                       if p.name[:-len(LOG_SUFFIX)].isdigit())
        self._remove_orphan_indexes(set(bases))
        point = 0 if recovery_point is None else recovery_point
        self.segments = [self._new_segment(base, now_ms) for base in bases]
        if not self.segments:
            start = log_start_offset or 0
            self.segments.append(self._new_segment(start, now_ms))
        self._recover_from(point)
        self._log_end_offset = self.segments[-1].next_offset
        first_base = self.segments[0].base_offset
        self._log_start_offset = min(max(log_start_offset or 0, first_base), self._log_end_offset)
        self.epochs.truncate_from_end(self._log_end_offset)
        self.epochs.truncate_from_start(self._log_start_offset)
        self._recovery_point = min(max(point, self._log_start_offset), self._log_end_offset)
        self._rebuild_producer_state()

    def _remove_orphan_indexes(self, bases: set[int]) -> None:
        for suffix in (INDEX_SUFFIX, TIME_INDEX_SUFFIX):
            for path in self.directory.glob(f"*{suffix}"):
                stem = path.name[:-len(suffix)]
                if stem.isdigit() and int(stem) not in bases:
                    path.unlink()

    def _new_segment(self, base: int, now_ms: int) -> LogSegment:
        return LogSegment(self.directory, base, self.config.index_interval_bytes, self.config.max_index_entries, now_ms)

    def _recover_from(self, recovery_point: int) -> None:
        """Trust the segments that end at or below the recovery point (their headers are read, not their
        data); re-validate the rest batch by batch, cutting at the first invalid batch and deleting every
        segment after it. A clean shutdown's recovery point is the log end: nothing is re-read."""
        expected: int | None = None
        for i, segment in enumerate(self.segments):
            torn = segment.load()  # bytes after the last whole batch, cut: this segment is checked whole
            if not torn and segment.next_offset <= recovery_point \
                    and (expected is None or segment.base_offset >= expected):
                expected = segment.next_offset
                continue
            self.epochs.truncate_from_end(segment.base_offset)  # recovery assigns this segment's epochs again
            cut = torn + segment.recover(self._recovered_batch, expected)
            expected = segment.next_offset
            if cut:
                self.recovered_bytes_truncated += cut
                for later in self.segments[i + 1:]:
                    self.recovered_bytes_truncated += later.size
                    later.delete_files()
                del self.segments[i + 1:]
                break
        for segment in self.segments[:-1]:
            segment.on_become_inactive()

    def _recovered_batch(self, position: int, header: BatchHeader) -> None:
        self.epochs.assign(header.partition_leader_epoch, header.base_offset)

    def _rebuild_producer_state(self) -> None:
        self.producers.truncate_and_reload()
        for segment in self.segments:
            for _, header in segment.headers_from(0):
                if header.has_producer_id and header.next_offset > self._log_start_offset:
                    self.producers.update(header, header.max_timestamp)

    # ------------------------------------------------------------------ state

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self._log_end_offset

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    @property
    def recovery_point(self) -> int:
        """Every offset below it is fsync'd (what ``recovery-point-offset-checkpoint`` records)."""
        return self._recovery_point

    @property
    def size_bytes(self) -> int:
        return sum(segment.size for segment in self.segments)

    @property
    def leader_epoch_cache(self) -> tuple[EpochEntry, ...]:
        return self.epochs.entries

    @property
    def latest_epoch(self) -> int | None:
        return self.epochs.latest_epoch

    @property
    def active_segment(self) -> LogSegment:
        return self.segments[-1]

    @property
    def last_stable_offset(self) -> int:
        """The LSO: the high watermark, as kraftwire writes no transactions (Fetch's LastStableOffset)."""
        return self._high_watermark

    def assign_epoch_start_offset(self, epoch: int, start_offset: int) -> None:
        """A replica becoming leader of ``epoch`` records that the epoch starts at ``start_offset`` (its
        log end), before any batch of it is written, as Kafka's Partition.makeLeader does; fsync'd."""
        self.epochs.assign(epoch, start_offset)

    def update_high_watermark(self, offset: int) -> int:
        """Set the HW, clamped to [log start, log end]; returns the value set."""
        self._high_watermark = min(max(offset, self._log_start_offset), self._log_end_offset)
        return self._high_watermark

    # ------------------------------------------------------------------ appending

    def append_as_leader(self, records: bytes, leader_epoch: int, now_ms: int,
                         required_acks: int | None = None) -> AppendInfo:
        """Validate a client's batch as Kafka's leader does, assign its offsets, stamp ``leader_epoch``
        (and, under LogAppendTime, ``now_ms``) and write it. Raises LogError with nothing written.

        ``required_acks`` is accepted for the caller's convenience; min.insync.replicas is the partition's
        check, not the log's. Transactional batches are refused with INVALID_TXN_STATE (Kafka's answer for
        a transactional write the coordinator did not begin; kraftwire has no transaction coordinator)."""
        del required_acks
        self.clock.seen(now_ms)
        view = memoryview(records)
        header = self._single_batch(view)
        self._check_leader_batch(view, header)
        log_append_time = self.config.message_timestamp_type is TimestampType.LOG_APPEND_TIME
        validated = validate_records(view[:header.size], header, self._record_rules(now_ms), self._inflate_limit)
        max_timestamp = now_ms if log_append_time else validated.max_timestamp
        if header.size > self.config.segment_bytes:
            raise LogError(ErrorCode.RECORD_LIST_TOO_LARGE, f"Message batch size is {header.size} bytes in append "
                           f"to partition, which exceeds the maximum configured segment size of "
                           f"{self.config.segment_bytes}.")
        duplicate = self._check_producer(header)
        if duplicate is not None:
            return duplicate
        first = self._log_end_offset
        batch = bytearray(view[:header.size])
        stamp(batch, first, leader_epoch, max_timestamp, log_append_time)
        stamped = batches.parse_header(batch)
        self._write(batch, stamped, now_ms)
        return AppendInfo(first, stamped.last_offset, max_timestamp, now_ms if log_append_time else NO_TIMESTAMP,
                          self._log_start_offset, header.record_count, header.size)

    def _check_producer(self, header: BatchHeader) -> AppendInfo | None:
        """Kafka's producer-state step, after the validator as in Kafka: a duplicate of one of the last 5
        batches answers the original (returned); a stale epoch or a sequence out of order raises."""
        if not header.has_producer_id:
            if header.is_transactional:
                raise LogError(ErrorCode.INVALID_RECORD, "A transactional batch needs a producer id")
            return None
        duplicate = self.producers.find_duplicate(header)
        if duplicate is not None:
            return AppendInfo(duplicate.first_offset, duplicate.last_offset, duplicate.timestamp,
                              duplicate.timestamp, self._log_start_offset, header.record_count, 0, True)
        if header.is_transactional:
            entry = self.producers.producers.get(header.producer_id)
            if entry is not None and header.producer_epoch < entry.epoch:
                raise LogError(ErrorCode.INVALID_PRODUCER_EPOCH, f"Epoch of producer {header.producer_id} is "
                               f"{header.producer_epoch}, which is smaller than the last seen epoch {entry.epoch}")
            raise LogError(ErrorCode.INVALID_TXN_STATE, "Record was not part of an ongoing transaction "
                                                        "(kraftwire does not support transactions)")
        self.producers.check(header, self._log_end_offset)
        return None

    @property
    def _inflate_limit(self) -> int:
        return max(self.config.max_message_bytes, 1 << 20) * DECOMPRESSED_LIMIT_FACTOR

    def _record_rules(self, now_ms: int) -> RecordRules:
        return RecordRules(self.config.message_timestamp_type is TimestampType.LOG_APPEND_TIME, now_ms,
                           self.config.message_timestamp_before_max_ms, self.config.message_timestamp_after_max_ms,
                           self.config.compact)

    @staticmethod
    def _single_batch(view: memoryview) -> BatchHeader:
        """The one batch of a Produce v3+ partition's records (a partial trailing batch is ignored)."""
        found = list(iter_headers(view))
        if not found:
            raise LogError(ErrorCode.INVALID_RECORD, "Produce requests with version 3 and above must have at least "
                                                     "one record batch per partition")
        if len(found) > 1:
            raise LogError(ErrorCode.INVALID_RECORD, "Produce requests with version 3 and above are only allowed to "
                                                     "contain exactly one record batch per partition")
        return found[0][1]

    def _check_leader_batch(self, view: memoryview, header: BatchHeader) -> None:
        if header.base_offset != 0:
            raise LogError(ErrorCode.INVALID_RECORD, f"The baseOffset of the record batch in the append should be 0, "
                                                     f"but it is {header.base_offset}")
        if header.size > self.config.max_message_bytes:
            raise LogError(ErrorCode.MESSAGE_TOO_LARGE, f"The record batch size in the append is {header.size} bytes "
                           f"which exceeds the maximum configured value of {self.config.max_message_bytes}.")
        if not crc_valid(view, 0, header):
            raise LogError(ErrorCode.CORRUPT_MESSAGE, f"Record is corrupt (stored crc = {header.crc})")
        check_client_batch(header, self.config.compact)

    def append_as_follower(self, records: bytes, now_ms: int | None = None,
                           leader_epoch: int | None = None) -> AppendInfo:
        """Append batches a leader assigned (a Fetch answer's records): offsets and epochs kept, CRC and
        framing checked (CORRUPT_MESSAGE), offsets must not go back (``UnexpectedAppendOffset``); batches of
        an epoch above ``leader_epoch`` and all after them are skipped (KAFKA-18723). A partial trailing
        batch is ignored, as Kafka's follower does. Producer state follows without sequence checks."""
        now = self.clock.seen(now_ms)
        view = memoryview(records)
        accepted: list[tuple[int, BatchHeader]] = []
        expected = self._log_end_offset
        for position, header in iter_headers(view):
            if leader_epoch is not None and header.partition_leader_epoch > leader_epoch >= 0:
                break
            if not crc_valid(view, position, header):
                raise LogError(ErrorCode.CORRUPT_MESSAGE, f"Record is corrupt (stored crc = {header.crc})")
            if header.base_offset < expected or header.last_offset_delta < 0:
                raise UnexpectedAppendOffset(header.base_offset, header.last_offset, self._log_end_offset)
            expected = header.next_offset
            accepted.append((position, header))
        if not accepted:
            return AppendInfo(-1, -1, NO_TIMESTAMP, NO_TIMESTAMP, self._log_start_offset, 0, 0)
        max_timestamp = NO_TIMESTAMP
        count = size = 0
        for position, header in accepted:
            self._write(view[position:position + header.size], header, now)
            max_timestamp = max(max_timestamp, header.max_timestamp)
            count += header.record_count
            size += header.size
        return AppendInfo(accepted[0][1].base_offset, accepted[-1][1].last_offset, max_timestamp, NO_TIMESTAMP,
                          self._log_start_offset, count, size)

    def _write(self, batch: bytes | bytearray | memoryview, header: BatchHeader, now_ms: int) -> None:
        """Write one batch with its offsets set: epoch cache, roll, segment, producer state, flush policy."""
        segment = self.segments[-1]
        position = segment.size
        try:
            self.epochs.assign(header.partition_leader_epoch, header.base_offset)
            segment = self._maybe_roll(header, now_ms)
            position = segment.size
            segment.append(batch, header)
        except OSError as exc:
            self._undo_write(segment, position, header)
            raise LogStorageError(f"writing to {segment.path}: {exc}") from exc
        self._log_end_offset = header.next_offset
        self.producers.update(header, header.max_timestamp)
        self._unflushed_messages += header.record_count
        if self._unflushed_messages >= self.config.flush_messages:
            self.flush()

    def _undo_write(self, segment: LogSegment, position: int, header: BatchHeader) -> None:
        """After a failed write (a full disk), leave no part of the batch in the files, as far as the disk
        lets us; the caller takes the directory offline either way."""
        try:
            segment.truncate_bytes(position)
            segment.offset_index.truncate_to(header.base_offset)
            segment.time_index.truncate_to(header.base_offset)
            segment.next_offset = self._log_end_offset
        except OSError:
            pass

    def _maybe_roll(self, header: BatchHeader, now_ms: int) -> LogSegment:
        """Kafka's maybeRoll: a new segment at this batch when the active one is full (segment.bytes), old
        (segment.ms from its first batch's timestamp), its index is full, or offsets would not fit it."""
        active = self.segments[-1]
        if active.size == 0:
            if active.base_offset != header.base_offset and active.next_offset == active.base_offset:
                self._replace_empty_active(header.base_offset, now_ms)
            return self.segments[-1]
        full = active.size > self.config.segment_bytes - header.size
        old = active.time_waited_for_roll(now_ms, header.max_timestamp) > self.config.segment_ms
        if full or old or active.offset_index.is_full or active.time_index.is_full \
                or not active.can_hold(header.last_offset):
            self.roll(now_ms, header.base_offset)
        return self.segments[-1]

    def _replace_empty_active(self, base: int, now_ms: int) -> None:
        empty = self.segments.pop()
        empty.delete_files()
        self.segments.append(self._new_segment(base, now_ms))

    def roll(self, now_ms: int, base_offset: int | None = None) -> LogSegment:
        """Start a new active segment at ``base_offset`` (default: the log end); the old one is fsync'd and
        the recovery point moves to the new base, as Kafka's roll and its flush of the old segment."""
        base = self._log_end_offset if base_offset is None else base_offset
        active = self.segments[-1]
        if active.size == 0:
            self._replace_empty_active(base, now_ms)
            return self.segments[-1]
        active.on_become_inactive()
        active.flush()
        self._recovery_point = max(self._recovery_point, active.next_offset)
        self.segments.append(self._new_segment(base, now_ms))
        return self.segments[-1]

    # ------------------------------------------------------------------ reading

    def read(self, offset: int, max_bytes: int, max_offset: int | None = None,
             min_one_batch: bool = True) -> LogSlice:
        """Whole batches from the one holding ``offset``, within ``max_bytes`` (the first batch whatever
        its size when ``min_one_batch``), only batches ending below ``max_offset`` (the HW, for consumers),
        from one segment. OFFSET_OUT_OF_RANGE outside [log start, log end]; at the log end an empty slice."""
        if offset < self._log_start_offset or offset > self._log_end_offset:
            raise LogError(ErrorCode.OFFSET_OUT_OF_RANGE,
                           f"Received request for offset {offset}, but we only have log segments in the range "
                           f"{self._log_start_offset} to {self._log_end_offset}.")
        limit = self._log_end_offset if max_offset is None else min(max_offset, self._log_end_offset)
        if offset >= limit:
            return LogSlice(None, 0, 0, offset, offset)
        for segment in self.segments[self._segment_index(offset):]:
            found = segment.locate(offset)
            if found is None:
                continue
            return self._slice(segment, found, max_bytes, limit, min_one_batch)
        return LogSlice(None, 0, 0, offset, offset)

    @staticmethod
    def _slice(segment: LogSegment, found: tuple[int, BatchHeader], max_bytes: int, limit: int,
               min_one_batch: bool) -> LogSlice:
        start, first = found
        length, next_offset = 0, first.base_offset
        for position, header in segment.headers_from(start):
            if header.last_offset >= limit:
                break
            if length + header.size > max_bytes and not (min_one_batch and length == 0):
                break
            length = position + header.size - start
            next_offset = header.next_offset
        return LogSlice(segment if length else None, start, length, first.base_offset, next_offset)

    def _segment_index(self, offset: int) -> int:
        """The index of the last segment whose base offset is <= ``offset`` (0 if none)."""
        low, high, found = 0, len(self.segments) - 1, 0
        while low <= high:
            middle = (low + high) // 2
            if self.segments[middle].base_offset <= offset:
                found, low = middle, middle + 1
            else:
                high = middle - 1
        return found

    def batches(self, start_offset: int | None = None) -> Iterator[tuple[LogSegment, int, BatchHeader]]:
        """(segment, position, header) of every batch from the one holding ``start_offset`` (the log start)."""
        start = self._log_start_offset if start_offset is None else start_offset
        for segment in self.segments[self._segment_index(start):]:
            found = segment.locate(start)
            if found is None:
                continue
            for position, header in segment.headers_from(found[0]):
                yield segment, position, header

    # ------------------------------------------------------------------ offsets

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """OffsetForLeaderEpoch: (the largest epoch <= ``epoch``, the offset where it ended); (-1, -1) for
        UNDEFINED_EPOCH (-1) or an epoch beyond the latest (Kafka's LeaderEpochFileCache.endOffsetFor)."""
        return self.epochs.end_offset_for(epoch, self._log_end_offset)

    def offset_for_timestamp(self, timestamp: int) -> TimestampAndOffset | None:
        """ListOffsets (read uncommitted): -2 earliest, -4 earliest local (the same without tiered
        storage), -1 latest, -3 the record with the largest timestamp, -5 latest tiered and -6 earliest
        pending upload ((-1, -1, -1) without tiered storage); otherwise the first record with a timestamp
        >= ``timestamp`` through the time index. None when there is no such record."""
        if timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            first = self.epochs.earliest_entry
            epoch = first.epoch if first is not None and first.start_offset <= self._log_start_offset else None
            return TimestampAndOffset(NO_TIMESTAMP, self._log_start_offset, epoch)
        if timestamp == LATEST_TIMESTAMP:
            return TimestampAndOffset(NO_TIMESTAMP, self._log_end_offset, self.epochs.latest_epoch)
        if timestamp in (LATEST_TIERED_TIMESTAMP, EARLIEST_PENDING_UPLOAD_TIMESTAMP):
            return TimestampAndOffset(NO_TIMESTAMP, -1, -1)
        if timestamp == MAX_TIMESTAMP:
            return self._max_timestamp_offset()
        return self._search_timestamp(timestamp)

    def _max_timestamp_offset(self) -> TimestampAndOffset | None:
        best = self.segments[0]
        for segment in self.segments[1:]:
            if segment.max_timestamp > best.max_timestamp:
                best = segment
        if best.max_timestamp == NO_TIMESTAMP and best.size == 0:
            return None
        found = best.locate(best.offset_of_max_timestamp)
        start = found[0] if found else 0
        for position, header in best.headers_from(start):
            if header.max_timestamp == best.max_timestamp:
                data = best.read_bytes(position, header.size)
                for offset, ts in batches.record_timestamps(data, header, self._inflate_limit):
                    if ts == header.max_timestamp:
                        return TimestampAndOffset(ts, offset, header.partition_leader_epoch
                                                  if header.partition_leader_epoch >= 0 else None)
        return None

    def _search_timestamp(self, timestamp: int) -> TimestampAndOffset | None:
        for segment in self.segments:
            if segment.max_timestamp < timestamp:
                continue
            _, offset = segment.time_index.lookup(timestamp)
            found = segment.locate(max(offset, self._log_start_offset))
            start = found[0] if found else 0
            for position, header in segment.headers_from(start):
                if header.max_timestamp < timestamp:
                    continue
                data = segment.read_bytes(position, header.size)
                for record_offset, ts in batches.record_timestamps(data, header, self._inflate_limit):
                    if ts >= timestamp and record_offset >= self._log_start_offset:
                        return TimestampAndOffset(ts, record_offset, header.partition_leader_epoch
                                                  if header.partition_leader_epoch >= 0 else None)
        return None

    # ------------------------------------------------------------------ truncation and deletion

    def truncate_to(self, offset: int) -> bool:
        """Drop everything from ``offset`` on (a follower's truncation by epoch or HW); whole batches go,
        so the log may end below ``offset`` if it falls inside one. False if nothing was beyond it."""
        if offset >= self._log_end_offset:
            return False
        if offset < self.segments[0].base_offset:
            self.truncate_fully_and_start_at(offset)
            return True
        keep = self._segment_index(offset)
        self._retire(self.segments[keep + 1:], self.clock.seen(None))
        del self.segments[keep + 1:]
        active = self.segments[-1]
        active.truncate_to(offset)
        self._log_end_offset = active.next_offset
        self.epochs.truncate_from_end(self._log_end_offset)
        self._log_start_offset = min(self._log_start_offset, self._log_end_offset)
        self._high_watermark = min(self._high_watermark, self._log_end_offset)
        self._recovery_point = min(self._recovery_point, self._log_end_offset)
        self._rebuild_producer_state()
        return True

    def truncate_fully_and_start_at(self, offset: int, now_ms: int | None = None) -> None:
        """Delete every segment and start empty at ``offset`` (a follower far behind its leader's log
        start): epochs and producers cleared, log start, end, HW and recovery point all ``offset``."""
        now = self.clock.seen(now_ms)
        self._retire(self.segments, now)
        self.segments = [self._new_segment(offset, now)]
        self.epochs.clear()
        self.producers.truncate_and_reload()
        self._log_start_offset = self._log_end_offset = self._high_watermark = self._recovery_point = offset
        self._unflushed_messages = 0

    def delete_records_before(self, offset: int) -> int:
        """DeleteRecords: raise the log start offset to ``offset`` (OFFSET_OUT_OF_RANGE above the HW) and
        delete the segments wholly below it; returns the new log start offset (the low watermark)."""
        if offset > self._high_watermark:
            raise LogError(ErrorCode.OFFSET_OUT_OF_RANGE, f"Cannot increment the log start offset to {offset} "
                           f"since it is larger than the high watermark {self._high_watermark}")
        if offset > self._log_start_offset:
            self._log_start_offset = offset
            self.epochs.truncate_from_start(offset)
            self.producers.remove_before(offset)
            self._delete_segments(lambda segment, following: following is not None and following <= offset, None)
        return self._log_start_offset

    def expire_producers(self, now_ms: int, expiration_ms: int = PRODUCER_ID_EXPIRATION_MS) -> int:
        """Forget idempotent producers silent for producer.id.expiration.ms (a broker config, 1 day by
        default); their next batch may then start at any sequence. Returns how many went."""
        return self.producers.expire(now_ms, expiration_ms)

    def enforce_retention(self, now_ms: int) -> int:
        """Delete whole segments by the log start offset and, with cleanup.policy delete, retention.bytes
        and retention.ms (Kafka's deleteOldSegments): oldest first, only below the HW; the active segment
        goes too when it qualifies and the HW covers it (a new empty one is rolled first). Also removes
        files of deleted segments older than file.delete.delay.ms. Returns the segments deleted."""
        self.clock.seen(now_ms)
        start = self._log_start_offset
        deleted = self._delete_segments(lambda segment, following: following is not None and following <= start,
                                        now_ms)
        if self.config.retention_enabled:
            deleted += self._delete_by_size(now_ms) + self._delete_by_time(now_ms)
        self._purge_deleted(now_ms)
        return deleted

    def _delete_by_size(self, now_ms: int) -> int:
        excess = self.size_bytes - self.config.retention_bytes
        if self.config.retention_bytes < 0 or excess < 0:
            return 0
        budget = [excess]

        def breached(segment: LogSegment, following: int | None) -> bool:
            if budget[0] - segment.size < 0:
                return False
            budget[0] -= segment.size
            return True
        return self._delete_segments(breached, now_ms)

    def _delete_by_time(self, now_ms: int) -> int:
        if self.config.retention_ms < 0:
            return 0
        limit = self.config.retention_ms
        return self._delete_segments(lambda segment, following: now_ms - segment.largest_timestamp() > limit, now_ms)

    def _delete_segments(self, breached: _Breach, now_ms: int | None) -> int:
        deletable: list[LogSegment] = []
        for i, segment in enumerate(self.segments):
            following = self.segments[i + 1].base_offset if i + 1 < len(self.segments) else None
            upper = following if following is not None else self._log_end_offset
            if following is None and segment.size == 0:
                break
            if not (self._high_watermark >= upper and breached(segment, following)):
                break
            deletable.append(segment)
        if not deletable:
            return 0
        now = self.clock.seen(now_ms)
        if len(deletable) == len(self.segments):
            self.roll(now)
        del self.segments[:len(deletable)]
        new_start = self.segments[0].base_offset
        if new_start > self._log_start_offset:
            self._log_start_offset = new_start
            self.epochs.truncate_from_start(new_start)
            self.producers.remove_before(new_start)
        self._retire(deletable, now)
        self._recovery_point = max(self._recovery_point, self._log_start_offset)
        return len(deletable)

    def _retire(self, segments: list[LogSegment], now_ms: int) -> None:
        """Kafka's asynchronous delete: rename to ``.deleted`` now, remove after file.delete.delay.ms, so a
        LogSlice handed out before (a fetch still sending it) keeps reading the file it names."""
        for segment in segments:
            segment.mark_deleted()
            self._pending_deletes.append((now_ms + self.config.file_delete_delay_ms, segment))

    def _purge_deleted(self, now_ms: int) -> None:
        due = [segment for when, segment in self._pending_deletes if when <= now_ms]
        self._pending_deletes = [(when, s) for when, s in self._pending_deletes if when > now_ms]
        for segment in due:
            segment.delete_files()

    # ------------------------------------------------------------------ durability and lifecycle

    def flush(self) -> None:
        """fsync every segment holding unflushed data and move the recovery point to the log end."""
        for segment in self.segments:
            if segment.next_offset > self._recovery_point or segment is self.segments[-1]:
                segment.flush()
        self._recovery_point = self._log_end_offset
        self._unflushed_messages = 0

    def maybe_flush(self, now_ms: int) -> bool:
        """flush.ms: flush when the last flush is that old and data is unflushed (the owner calls this
        periodically, as Kafka's log flusher). True if it flushed."""
        if self._recovery_point < self._log_end_offset and now_ms - self._last_flush_ms >= self.config.flush_ms:
            self.flush()
            self._last_flush_ms = now_ms
            return True
        return False

    def close(self) -> None:
        """Flush and close the files (a clean shutdown: the recovery point is the log end)."""
        self.flush()
        for segment in self.segments:
            segment.close()
        for _, segment in self._pending_deletes:
            segment.delete_files()
        self._pending_deletes = []

    def delete(self) -> None:
        """Close and remove the whole partition directory (a replica removed from this broker)."""
        for segment in self.segments:
            segment.close()
        for _, segment in self._pending_deletes:
            segment.close()
        self._pending_deletes = []
        self.segments = []
        shutil.rmtree(self.directory, ignore_errors=True)

    def __repr__(self) -> str:
        return (f"PartitionLog({self.directory.name}, start={self._log_start_offset}, end={self._log_end_offset}, "
                f"hw={self._high_watermark}, segments={len(self.segments)})")

