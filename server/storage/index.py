"""A segment's offset index (``.index``: int32 offset - base, int32 byte position) and time index
(``.timeindex``: int64 timestamp, int32 offset - base), in Kafka's format.

The files hold exactly their entries (Kafka pre-allocates them and trims them when the segment is no
longer active; kraftwire writes them at their true length, which Kafka's tools read the same). Lookups
binary-search the file with ``pread``: no index is kept in memory but its last entry."""
from __future__ import annotations

import os
import struct
from pathlib import Path

OFFSET_ENTRY = struct.Struct(">ii")
TIME_ENTRY = struct.Struct(">qi")


class _IndexFile:
    """Fixed-size entries appended to a file, read back by position."""

    def __init__(self, path: Path, entry: struct.Struct, base_offset: int, max_entries: int):
        self.path = path
        self.entry = entry
        self.base_offset = base_offset
        self.max_entries = max_entries
        self._file = -1  # opened on first use: an inactive segment's indexes hold no descriptor until read
        if not path.exists():
            path.touch()
        size = path.stat().st_size
        self.entries = size // entry.size
        if size % entry.size:
            os.truncate(path, self.entries * entry.size)  # a torn last entry
        self._last: tuple[int, int] | None = self._read(self.entries - 1) if self.entries else None

    @property
    def _fd(self) -> int:
        if self._file < 0:
            self._file = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        return self._file

    def _read(self, i: int) -> tuple[int, int]:
        data = os.pread(self._fd, self.entry.size, i * self.entry.size)
        if len(data) != self.entry.size:
            raise OSError(f"{self.path}: entry {i} is cut short")
        first, second = self.entry.unpack(data)
        return first, second

    def _append(self, first: int, second: int) -> None:
        os.pwrite(self._fd, self.entry.pack(first, second), self.entries * self.entry.size)
        self.entries += 1
        self._last = (first, second)

    def _keep(self, entries: int) -> None:
        if entries < self.entries:
            os.ftruncate(self._fd, entries * self.entry.size)
            self.entries = entries
            self._last = self._read(entries - 1) if entries else None

    def _search(self, key_of: int, target: int) -> int:
        """The index of the last entry whose field ``key_of`` (0 or 1) is <= target, or -1."""
        low, high = 0, self.entries - 1
        found = -1
        while low <= high:
            middle = (low + high) // 2
            if self._read(middle)[key_of] <= target:
                found, low = middle, middle + 1
            else:
                high = middle - 1
        return found

    @property
    def is_full(self) -> bool:
        return self.entries >= self.max_entries

    def reset(self) -> None:
        self._keep(0)

    def flush(self) -> None:
        if self._file >= 0:
            os.fsync(self._file)

    def close(self) -> None:
        if self._file >= 0:
            os.close(self._file)
            self._file = -1

    def rename(self, path: Path) -> None:
        os.rename(self.path, path)
        self.path = path


class OffsetIndex(_IndexFile):
    """Maps offsets to the byte position of a batch: an entry (last offset of a batch, its position) is
    written every index.interval.bytes."""

    def __init__(self, path: Path, base_offset: int, max_entries: int):
        super().__init__(path, OFFSET_ENTRY, base_offset, max_entries)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self._last[0] if self._last else self.base_offset

    def append(self, offset: int, position: int) -> None:
        self._append(offset - self.base_offset, position)

    def lookup(self, offset: int) -> tuple[int, int]:
        """(offset, position) of the last entry at or below ``offset``; (base offset, 0) if none."""
        found = self._search(0, offset - self.base_offset)
        if found < 0:
            return self.base_offset, 0
        relative, position = self._read(found)
        return self.base_offset + relative, position

    def truncate_to(self, offset: int) -> None:
        """Drop the entries at or above ``offset``."""
        self._keep(self._search(0, offset - self.base_offset - 1) + 1)

    def sane(self, log_size: int) -> bool:
        """Kafka's sanity check (its first and last entries, not every one): ordered, inside the log."""
        if not self.entries:
            return True
        first, last = self._read(0), self._read(self.entries - 1)
        return 0 <= first[0] <= last[0] and 0 <= first[1] <= last[1] < log_size \
            and (self.entries == 1 or (first[0] < last[0] and first[1] < last[1]))


class TimeIndex(_IndexFile):
    """Maps timestamps to offsets: an entry (max timestamp so far, the offset of the batch holding it)
    when a new offset index entry is written and the max timestamp has grown."""

    def __init__(self, path: Path, base_offset: int, max_entries: int):
        super().__init__(path, TIME_ENTRY, base_offset, max_entries)

    @property
    def last_timestamp(self) -> int:
        return self._last[0] if self._last else -1

    def maybe_append(self, timestamp: int, offset: int) -> None:
        if self._last is None or timestamp > self._last[0]:
            self._append(timestamp, offset - self.base_offset)

    def lookup(self, timestamp: int) -> tuple[int, int]:
        """(timestamp, offset) of the last entry at or below ``timestamp``; (-1, base offset) if none."""
        found = self._search(0, timestamp)
        if found < 0:
            return -1, self.base_offset
        ts, relative = self._read(found)
        return ts, self.base_offset + relative

    def truncate_to(self, offset: int) -> None:
        """Drop the entries whose offset is at or above ``offset`` (offsets grow with the entries)."""
        keep = self.entries
        while keep and self._read(keep - 1)[1] + self.base_offset >= offset:
            keep -= 1
        self._keep(keep)

    def sane(self) -> bool:
        """Kafka's sanity check (the last entry not below the first), and timestamps rising between them
        (a pre-allocated file of zeros Kafka left after a kill is not an index)."""
        if not self.entries:
            return True
        first, last = self._read(0), self._read(self.entries - 1)
        return 0 <= first[1] <= last[1] and (first[0] < last[0] or self.entries == 1)
