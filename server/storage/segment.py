"""``LogSegment``: one ``{base offset:020d}.log`` of back-to-back v2 batches with its ``.index`` and
``.timeindex`` (Kafka's LogSegment). Data is written with ``pwrite`` and read with ``pread``; nothing of
the data is held in memory."""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

from .batches import HEADER_SIZE, LOG_OVERHEAD, NO_TIMESTAMP, BatchHeader, crc_valid, parse_header
from .index import OffsetIndex, TimeIndex

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
DELETED_SUFFIX = ".deleted"
INT32_MAX = (1 << 31) - 1
HEADER_READ = 16 * 1024  # bytes read at once when walking batch headers


def file_name(base_offset: int, suffix: str) -> str:
    return f"{base_offset:020d}{suffix}"


class LogSegment:
    """A segment of a partition log. ``size`` is the bytes of whole batches; ``next_offset`` (set by the
    log) the offset after its last batch."""

    def __init__(self, directory: Path, base_offset: int, index_interval_bytes: int, max_index_entries: int,
                 created_ms: int):
        self.directory = directory
        self.base_offset = base_offset
        self.index_interval_bytes = index_interval_bytes
        self.path = directory / file_name(base_offset, LOG_SUFFIX)
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        self.size = os.fstat(self._fd).st_size
        self.offset_index = OffsetIndex(directory / file_name(base_offset, INDEX_SUFFIX), base_offset,
                                        max_index_entries)
        self.time_index = TimeIndex(directory / file_name(base_offset, TIME_INDEX_SUFFIX), base_offset,
                                    max(1, max_index_entries * 8 // 12))
        self.created_ms = created_ms
        self.next_offset = base_offset
        self.max_timestamp = NO_TIMESTAMP
        self.offset_of_max_timestamp = base_offset
        self.first_batch_timestamp: int | None = None  # the max timestamp of its first batch (segment.ms)
        self._bytes_since_index = 0
        self.deleted = False

    # --- writing

    def append(self, data: bytes | bytearray | memoryview, header: BatchHeader) -> int:
        """Write one batch at the end; returns its position. Index entries as Kafka's LogSegment.append."""
        position = self.size
        view = memoryview(data)
        written = 0
        while written < len(view):
            written += os.pwrite(self._fd, view[written:], position + written)
        self.size += len(view)
        self._track(header, position)
        return position

    def _track(self, header: BatchHeader, position: int) -> None:
        if self.first_batch_timestamp is None:
            self.first_batch_timestamp = header.max_timestamp
        if header.max_timestamp > self.max_timestamp:
            self.max_timestamp, self.offset_of_max_timestamp = header.max_timestamp, header.last_offset
        if self._bytes_since_index > self.index_interval_bytes:
            self.offset_index.append(header.last_offset, position)
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
            self._bytes_since_index = 0
        self._bytes_since_index += header.size
        self.next_offset = header.next_offset

    def on_become_inactive(self) -> None:
        """The segment stops being the active one: its time index ends on its largest timestamp."""
        if self.max_timestamp != NO_TIMESTAMP:
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)

    def can_hold(self, last_offset: int) -> bool:
        return 0 <= last_offset - self.base_offset <= INT32_MAX

    def time_waited_for_roll(self, now_ms: int, batch_timestamp: int) -> int:
        if self.first_batch_timestamp is not None and self.first_batch_timestamp >= 0:
            return batch_timestamp - self.first_batch_timestamp
        return now_ms - self.created_ms

    # --- reading

    def header_at(self, position: int) -> BatchHeader | None:
        """The header of the batch at ``position``; None at the end or at a partial batch."""
        data = os.pread(self._fd, HEADER_SIZE, position)
        if len(data) < HEADER_SIZE:
            return None
        header = parse_header(data)
        if header.length + LOG_OVERHEAD < HEADER_SIZE or position + header.size > self.size:
            return None
        return header

    def headers_from(self, position: int) -> Iterator[tuple[int, BatchHeader]]:
        """(position, header) of each whole batch from ``position``; small batches' headers are parsed
        from one read of up to HEADER_READ bytes rather than a read each."""
        block, block_start = b"", position
        while position < self.size:
            offset = position - block_start
            if offset + HEADER_SIZE > len(block):
                block, block_start, offset = os.pread(self._fd, HEADER_READ, position), position, 0
                if len(block) < HEADER_SIZE:
                    return
            header = parse_header(block, offset)
            if header.length + LOG_OVERHEAD < HEADER_SIZE or position + header.size > self.size:
                return
            yield position, header
            position += header.size

    def locate(self, offset: int) -> tuple[int, BatchHeader] | None:
        """(position, header) of the first batch whose last offset is >= ``offset``."""
        _, start = self.offset_index.lookup(offset)
        for position, header in self.headers_from(start):
            if header.last_offset >= offset:
                return position, header
        return None

    def read_bytes(self, position: int, length: int) -> bytes:
        return os.pread(self._fd, length, position)

    def fileno(self) -> int:
        return self._fd

    def largest_timestamp(self) -> int:
        """Kafka's retention timestamp: the max timestamp, or the file's modification time without one."""
        if self.max_timestamp != NO_TIMESTAMP:
            return self.max_timestamp
        return int(os.fstat(self._fd).st_mtime * 1000)

    # --- recovery and truncation

    def recover(self, on_batch: Callable[[int, BatchHeader], None], expected_offset: int | None) -> int:
        """Re-read every batch: check its framing, CRC and offsets, rebuild both indexes, and cut the file
        at the first invalid batch (Kafka's LogSegment.recover). Returns the bytes cut."""
        self.offset_index.reset()
        self.time_index.reset()
        self._reset_tracking()
        position = 0
        file_size = os.fstat(self._fd).st_size
        self.size = file_size
        while position < file_size:
            header = self.header_at(position)
            if header is None or header.magic != 2 or not self._offsets_fit(header, expected_offset):
                break
            if not crc_valid(self.read_bytes(position, header.size), 0, header):
                break
            self._track(header, position)
            on_batch(position, header)
            expected_offset = header.next_offset
            position += header.size
        self.truncate_bytes(position)
        return file_size - position

    def _offsets_fit(self, header: BatchHeader, expected_offset: int | None) -> bool:
        if header.last_offset_delta < 0 or header.base_offset < self.base_offset:
            return False
        if not self.can_hold(header.last_offset):
            return False
        return expected_offset is None or header.base_offset >= expected_offset

    def _reset_tracking(self) -> None:
        self.next_offset = self.base_offset
        self.max_timestamp = NO_TIMESTAMP
        self.offset_of_max_timestamp = self.base_offset
        self.first_batch_timestamp = None
        self._bytes_since_index = 0

    def load(self) -> int:
        """Read the batch headers (not the data) to learn the segment's offsets and timestamps, trusting
        its batches; rebuild the indexes when they are missing or not sane, and cut a torn tail (bytes
        after the last whole batch: an unflushed write). Returns the bytes cut."""
        rebuild = not self.offset_index.sane(self.size) or not self.time_index.sane()
        if rebuild:
            self.offset_index.reset()
            self.time_index.reset()
        index_entries = self.offset_index.entries
        self._reset_tracking()
        end = 0
        for position, header in self.headers_from(0):
            if rebuild or index_entries == 0:
                self._track(header, position)
            else:
                self._track_without_index(header)
            end = position + header.size
        cut = self.size - end
        if cut:
            self.truncate_bytes(end)
        return cut

    def _track_without_index(self, header: BatchHeader) -> None:
        if self.first_batch_timestamp is None:
            self.first_batch_timestamp = header.max_timestamp
        if header.max_timestamp > self.max_timestamp:
            self.max_timestamp, self.offset_of_max_timestamp = header.max_timestamp, header.last_offset
        self.next_offset = header.next_offset

    def truncate_bytes(self, position: int) -> None:
        if position < os.fstat(self._fd).st_size:
            os.ftruncate(self._fd, position)
        self.size = position

    def truncate_to(self, offset: int) -> int:
        """Drop every batch from the one holding ``offset`` on; returns the bytes dropped."""
        found = self.locate(offset)
        if found is None:
            return 0
        position, _ = found
        dropped = self.size - position
        self.offset_index.truncate_to(offset)
        self.time_index.truncate_to(offset)
        self.truncate_bytes(position)
        self._reset_tracking()
        for _, header in self.headers_from(0):
            self._track_without_index(header)
        return dropped

    # --- files

    def flush(self) -> None:
        os.fsync(self._fd)
        self.offset_index.flush()
        self.time_index.flush()

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        self.offset_index.close()
        self.time_index.close()

    def mark_deleted(self) -> None:
        """Rename the files to ``*.deleted`` (Kafka's deferred delete); an open slice still reads them."""
        for current, setter in ((self.path, None), (self.offset_index.path, self.offset_index),
                                (self.time_index.path, self.time_index)):
            target = current.with_name(current.name + DELETED_SUFFIX)
            if setter is None:
                os.rename(current, target)
                self.path = target
            else:
                setter.rename(target)
        self.deleted = True

    def delete_files(self) -> None:
        self.close()
        for path in (self.path, self.offset_index.path, self.time_index.path):
            path.unlink(missing_ok=True)
