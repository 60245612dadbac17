"""Write a ``__cluster_metadata-0`` directory the way Kafka lays it out, from codec batches.

For tests, benchmarks and hand-made logs: segments ``{base offset:020d}.log`` of back-to-back v2
batches, each with the ``.index`` Kafka keeps (8-byte entries: offset - base, byte position; an entry
for a batch once more than ``index_interval_bytes`` went in since the last one, holding the batch's
last offset and its start position), rolled when a segment would pass ``segment_bytes``; and
snapshots ``{end offset:020d}-{epoch:010d}.checkpoint`` framed by SnapshotHeader/SnapshotFooter
control batches with offsets counted from 0. Offsets and timestamps are the caller's business, so a
log can be written with gaps, damage or any ordering a test needs.
"""
from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import BinaryIO

from kraftwire.codec import records as rec
from kraftwire.codec.log_layout import (DEFAULT_INDEX_INTERVAL_BYTES, INDEX_ENTRY, INDEX_SUFFIX, segment_file_name,
                                       snapshot_file_name)
from kraftwire.codec.message import Message


class LogWriter:
    """Appends encoded batches to the segments of one directory.

    ``append`` takes bytes from ``codec.records.metadata_batch``/``control_batch`` (or anything else,
    for damaged logs); ``metadata``/``control`` encode and append in one go, numbering offsets from
    ``next_offset``."""

    def __init__(self, directory: str | os.PathLike, segment_bytes: int = 1 << 30,
                 index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES, base_offset: int = 0):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.segment_bytes = segment_bytes
        self.index_interval_bytes = index_interval_bytes
        self.next_offset = base_offset
        self._log: BinaryIO | None = None
        self._index: BinaryIO | None = None
        self._base = self._size = self._since_entry = 0

    def _roll(self, base_offset: int) -> None:
        self.close()
        self._base, self._size, self._since_entry = base_offset, 0, 0
        self._log = open(self.directory / segment_file_name(base_offset), "wb")
        self._index = open(self.directory / segment_file_name(base_offset, INDEX_SUFFIX), "wb")

    def append(self, batch: bytes, base_offset: int | None = None, last_offset: int | None = None) -> None:
        """Append one batch; its offsets are read from its header unless given (damaged batches)."""
        if base_offset is None:
            base_offset, _, _, _, _, _, last_delta = struct.unpack_from(">qiibIhi", batch)
            last_offset = base_offset + last_delta
        if last_offset is None:
            raise ValueError("a batch's last offset goes with its base offset")
        if self._log is None or self._index is None or (self._size and self._size + len(batch) > self.segment_bytes):
            self._roll(base_offset)
        log, index = self._log, self._index
        assert log is not None and index is not None  # opened by _roll
        if self._since_entry > self.index_interval_bytes:
            index.write(INDEX_ENTRY.pack(last_offset - self._base, self._size))
            self._since_entry = 0
        log.write(batch)
        self._size += len(batch)
        self._since_entry += len(batch)
        self.next_offset = last_offset + 1

    @property
    def position(self) -> tuple[str, int]:
        """(current segment's file name, its size): where the next batch goes."""
        return segment_file_name(self._base), self._size

    def metadata(self, timestamp: int, records: list, epoch: int = 1) -> int:
        """Append a batch of (record, version or None) or bare records; returns its base offset."""
        base = self.next_offset
        entries = _entries(records)
        self.append(rec.metadata_batch(base, epoch, timestamp, entries))
        return base

    def control(self, timestamp: int, records: list, epoch: int = 1) -> int:
        base = self.next_offset
        self.append(rec.control_batch(base, epoch, timestamp, records))
        return base

    def close(self) -> None:
        for f in (self._log, self._index):
            if f is not None:
                f.close()
        self._log = self._index = None

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_snapshot(directory: str | os.PathLike, end_offset: int, epoch: int, timestamp: int,
                   records: list, batch_size: int = 1000) -> Path:
    """A snapshot holding ``records`` (metadata records, or (record, version)) as of ``end_offset``."""
    entries = _entries(records)
    out = bytearray(rec.control_batch(0, epoch, timestamp, [
        rec.SnapshotHeaderRecord(version=0, last_contained_log_timestamp=timestamp)]))
    offset = 1
    for i in range(0, len(entries), batch_size):
        chunk = entries[i:i + batch_size]
        out += rec.metadata_batch(offset, epoch, timestamp, chunk)
        offset += len(chunk)
    out += rec.control_batch(offset, epoch, timestamp, [rec.SnapshotFooterRecord(version=0)])
    path = Path(directory) / snapshot_file_name(end_offset, epoch)
    path.write_bytes(bytes(out))
    return path


def _entries(records: list) -> list:
    """(record, version) pairs from records given bare or as pairs (messages are tuples themselves)."""
    return [(r, None) if isinstance(r, Message) else r for r in records]
