"""Segments of the metadata partition: ``{base offset:020d}.log`` files of v2 batches and their ``.index``.

A segment holds back-to-back record batches, no header; its name is the offset of its first record.
The offset index is Kafka's: 8-byte entries (int32 offset - base, int32 byte position), one added
for a batch once more than ``index_interval_bytes`` (4096) have gone in since the previous entry,
holding that batch's last offset and its start position. Every indexed position is therefore a batch
boundary, which is what the audit's splitter relies on. Unlike Kafka, index files are not
pre-allocated, and they are fsync'd when a segment rolls or the log closes rather than on every
commit: recovery rebuilds the index of every segment it scans.

``walk`` checks a buffer of batches against the log's rules (framing, CRC-32C, contiguous offsets,
epochs that change only upward and only at a control batch), and ``judge_damage`` decides whether what
it found may be cut away as an unfinished write (``interrupted_write``) or means acknowledged data is
damaged; recovery uses both, and ``kraftwire log verify`` runs recovery itself, so they cannot disagree.

A well-framed record of a type, or a version, that ``schemas/records`` does not hold is no damage, but
start-up cannot replay it: ``UnknownRecordError`` stops start-up naming the file, offset, type and
version, as Kafka's metadata loader fails on a record it cannot read (skipping it would build an image
that differs from the log's). ``kraftwire log verify`` judges bytes, so it passes such a log (exit 0)
and lists each such record as a warning that says start-up refuses it.
"""
from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import cast

from kraftwire.codec.crc import crc32c

from kraftwire.codec import MalformedError
from kraftwire.codec.log_layout import DEFAULT_INDEX_INTERVAL_BYTES, INDEX_ENTRY, INDEX_SUFFIX, segment_file_name
from kraftwire.codec.records import (ATTR_CONTROL, CRC_START, HEADER_SIZE, METADATA_TYPES, BatchHeader,
                                     UnknownRecordType, check_batch)

from .storage import StorageError

_BASE_OFFSET = struct.Struct(">q")
_LENGTH = struct.Struct(">i")
_CRC = struct.Struct(">I")
_CRC_POSITION = 17


def unknown_record_description(record_type: int, version: int) -> str:
    known = METADATA_TYPES.get(record_type)
    return (f"unknown metadata record type {record_type} v{version}" if known is None
            else f"unknown version {version} of {known.__name__} (type {record_type})")


class UnknownRecordError(StorageError):
    """A record start-up cannot replay (see the module docstring)."""

    def __init__(self, path: Path, offset: int, unknown: UnknownRecordType):
        what = unknown_record_description(unknown.record_type, unknown.version)
        super().__init__(f"{path}: offset {offset}: {what}: kraftwire cannot replay it and refuses to start, as "
                         f"Kafka's metadata loader does")
_MAGIC_POSITION = 16


class Damage(Exception):
    """A batch that breaks the log's rules, at byte ``position`` where offset ``offset`` was expected."""

    def __init__(self, position: int, offset: int | None, reason: str):
        super().__init__(reason)
        self.position = position
        self.offset = offset
        self.reason = reason


def walk(buf: bytes, position: int = 0, expected_offset: int | None = None,
         epoch: int | None = None) -> Iterator[tuple[int, BatchHeader]]:
    """Yield (position, header) of each batch in ``buf`` from ``position``, checking framing, CRC,
    offset contiguity (from ``expected_offset`` when known) and epochs (never lower than ``epoch``;
    a change only at a control batch, which is where a new leader starts its epoch). Raises Damage."""
    end = len(buf)
    while position < end:
        try:
            header = check_batch(buf, position)
        except MalformedError as exc:
            raise Damage(position, expected_offset, exc.what) from None
        if expected_offset is not None and header.base_offset != expected_offset:
            raise Damage(position, expected_offset,
                         f"batch starts at offset {header.base_offset}, expected {expected_offset}")
        if header.count != header.last_offset_delta + 1:
            raise Damage(position, header.base_offset,
                         f"{header.count} records but last offset delta {header.last_offset_delta}")
        batch_epoch = header.partition_leader_epoch
        if epoch is not None and (batch_epoch < epoch or (
                batch_epoch != epoch and not header.attributes & ATTR_CONTROL)):
            raise Damage(position, header.base_offset,
                         f"epoch {batch_epoch} after epoch {epoch} without a leader change")
        yield position, header
        epoch = batch_epoch
        expected_offset = header.base_offset + header.count
        position += header.size


def find_batch_after(buf: bytes, position: int, min_offset: int) -> int | None:
    """The position of a valid batch starting after ``position`` whose base offset is at least
    ``min_offset``, if any: telling damage in the middle of a log from a torn write at its end."""
    search = position + 1 + _MAGIC_POSITION
    while True:
        found = buf.find(b"\x02", search)
        if found < 0:
            return None
        candidate = found - _MAGIC_POSITION
        search = found + 1
        if _BASE_OFFSET.unpack_from(buf, candidate)[0] < min_offset:  # its 8 bytes end before the magic found
            continue
        try:
            check_batch(buf, candidate)
        except MalformedError:
            continue
        return candidate


def judge_damage(path: Path, buf: bytes, damage: Damage | None, valid_size: int, *, is_last: bool, snapshot_end: int,
                 synced_bytes: int | None) -> str | None:
    """Why start-up must refuse ``path``, or None when what follows ``valid_size`` (``damage``, or a file
    shorter than it should be) is an unfinished write that may be cut away.

    ``synced_bytes`` is the durable record of the fsync'd length (``files.SyncedLengths``, written and
    fsync'd before any batch below it is acknowledged), None when there is none for this file; a file
    short of it, or damage below it, is acknowledged data damaged. Past it (or without it) only what an
    interrupted write leaves may be cut (``interrupted_write``): a batch the file ends inside, or bytes
    that never reached the disk (zeros). A whole batch whose bytes are wrong is refused wherever it lies,
    since a record restored from an older copy would put acknowledged batches past its length too.
    ``snapshot_end``: where the newest snapshot file (valid or not) ends; every offset below it was
    committed. Without a record, damage followed by a valid batch is damage in the middle."""
    if damage is None:
        if is_last and synced_bytes is not None and valid_size < synced_bytes:
            return (f"{path} ends at byte {valid_size}, short of the {synced_bytes} bytes recorded as fsync'd: "
                    f"acknowledged records are missing; refusing to start")
        return None
    where = f"{path} at byte {damage.position} (offset {damage.offset}): {damage.reason}"
    if not is_last:
        return (f"damaged record batch in {where}; later segments follow, so this is not a torn write: "
                f"refusing to start (see `kraftwire log verify`)")
    if damage.offset is not None and damage.offset < snapshot_end:
        return (f"damaged record batch in {where}; it lies below the newest snapshot (offset {snapshot_end}), "
                f"so committed data is damaged: refusing to start")
    if synced_bytes is not None and damage.position < synced_bytes:
        return (f"damaged record batch in {where}; it lies below the {synced_bytes} bytes recorded as fsync'd, "
                f"so acknowledged data is damaged, not a torn write: refusing to start")
    if synced_bytes is None:
        following = find_batch_after(buf, damage.position, damage.offset or 0)
        if following is not None:
            return (f"damaged record batch in {where}; a valid batch follows at byte {following}, so this is "
                    f"damage in the middle of the log, not a torn write: refusing to start")
    if interrupted_write(buf, damage.position) is None:
        vouched = ("no durable record of the fsync'd length says it was never acknowledged" if synced_bytes is None
                   else f"the {synced_bytes} bytes recorded as fsync'd cannot vouch that it was never acknowledged")
        return (f"damaged record batch in {where}; the batch is whole and its bytes are wrong, which an "
                f"interrupted write does not leave, and {vouched}: refusing to start")
    return None


SECTOR_BYTES = 512  # the unit a disk writes whole: what a power loss leaves unwritten reads back as zeros
_UNWRITTEN_TAIL_BYTES = 32  # zeros from a sector boundary to the end of the file that count as unwritten


def interrupted_write(buf: bytes, position: int) -> str | None:
    """How the bytes from ``position`` (where a batch fails the log's checks) look like a write that never
    finished, or None when they hold a whole batch whose bytes are wrong.

    An interrupted write leaves a batch the file ends inside (its declared length runs past the end, and
    the bytes that are there do not make a whole batch with only its length field damaged: the CRC does
    not cover that field), or sectors that never reached the disk, which read back as zeros: a zeroed
    batch header, a whole zero sector inside the batch, or zeros from a sector boundary to the end."""
    end = len(buf)
    present = end - position
    if not any(buf[position:position + 12]):  # base offset and length zero: no batch was ever written here
        return "a zeroed batch header (bytes that never reached the disk)"
    if present < HEADER_SIZE:
        return f"the file ends {present} bytes into a batch header"
    size = 12 + _LENGTH.unpack_from(buf, position + 8)[0]
    if position + size > end:
        stored_crc = _CRC.unpack_from(buf, position + _CRC_POSITION)[0]
        if crc32c(memoryview(buf)[position + CRC_START:end]) == stored_crc:
            return None  # the whole batch is there; only its length field is wrong
        return f"the file ends inside the batch ({size} bytes declared, {present} present)"
    batch_end = position + size if size >= HEADER_SIZE else end
    first_sector = -(-position // SECTOR_BYTES) * SECTOR_BYTES
    for sector in range(first_sector, batch_end - SECTOR_BYTES + 1, SECTOR_BYTES):
        if not any(buf[sector:sector + SECTOR_BYTES]):
            return f"a sector of zeros at byte {sector} (bytes that never reached the disk)"
    last_written = len(bytes(buf[position:end]).rstrip(b"\0")) + position
    boundary = -(-last_written // SECTOR_BYTES) * SECTOR_BYTES
    if end - boundary >= _UNWRITTEN_TAIL_BYTES:
        return f"zeros from byte {boundary} to the end (bytes that never reached the disk)"
    return None


@contextmanager
def mapped(path: Path) -> Iterator[bytes]:
    """The file's bytes as a read-only buffer (an mmap, or b"" for an empty file). Typed as ``bytes``: the
    readers only slice, search, measure and unpack it, which an mmap does as bytes do."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            yield b""
            return
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as view:
            yield cast(bytes, view)


class Segment:
    """One segment and its index. Appends and syncs come from one thread at a time (the log's I/O
    thread); ``size`` counts valid bytes and ``synced_size`` the bytes known to be on disk."""

    def __init__(self, directory: Path, base_offset: int, index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES):
        self.base_offset = base_offset
        self.path = directory / segment_file_name(base_offset)
        self.index_path = directory / segment_file_name(base_offset, INDEX_SUFFIX)
        self.index_interval_bytes = index_interval_bytes
        self.size = 0
        self.synced_size = 0
        self.next_offset = base_offset
        self.last_epoch: int | None = None
        self._since_index_entry = 0
        self._index = bytearray()
        self._fd: int | None = None
        self._index_fd: int | None = None

    # --- building state from what is on disk ----------------------------------------------------

    def adopt_closed(self) -> None:
        """Take a segment below the recovery point as it is (its size from the file system)."""
        self.size = self.synced_size = self.path.stat().st_size

    def note_recovered(self, position: int, header: BatchHeader) -> None:
        """Take in one batch found valid by a recovery scan (in file order)."""
        self._note_batch(position, header.size, header.base_offset + header.last_offset_delta)
        self.next_offset = header.base_offset + header.count
        self.last_epoch = header.partition_leader_epoch

    def finish_recovery(self, size: int) -> bool:
        """The scan ended with ``size`` valid bytes: rewrite the index unless it already matches what
        the batches imply (no fsync: every recovery rebuilds it again). Returns True if rewritten."""
        self.size = self.synced_size = size
        try:
            if self.index_path.read_bytes() == self._index:
                return False
        except FileNotFoundError:
            pass
        self.index_path.write_bytes(self._index)
        return True

    def truncate(self, size: int) -> None:
        """Cut the file back to ``size`` bytes (made durable by the next ``sync``)."""
        os.truncate(self.path, size)

    # --- appending ---------------------------------------------------------------------------------

    @property
    def is_open(self) -> bool:
        return self._fd is not None

    def _open_fds(self) -> tuple[int, int]:
        """The segment's and its index's descriptors, once open for appends."""
        if self._fd is None or self._index_fd is None:
            raise StorageError(f"{self.path} is not open for appends")
        return self._fd, self._index_fd

    def open_for_append(self) -> None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
        self._fd = os.open(self.path, flags, 0o644)
        self._index_fd = os.open(self.index_path, flags, 0o644)

    def append(self, data: bytes, last_offset: int, next_offset: int, epoch: int) -> None:
        """Write one batch; add an index entry for it when the interval has passed."""
        fd, index_fd = self._open_fds()
        entries_before = len(self._index)
        self._note_batch(self.size, len(data), last_offset)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if len(self._index) > entries_before:
            os.write(index_fd, self._index[entries_before:])
        self.size += len(data)
        self.next_offset = next_offset
        self.last_epoch = epoch

    def _note_batch(self, position: int, size: int, last_offset: int) -> None:
        if self._since_index_entry > self.index_interval_bytes:
            self._index += INDEX_ENTRY.pack(last_offset - self.base_offset, position)
            self._since_index_entry = 0
        self._since_index_entry += size

    def sync(self, index_too: bool = False) -> None:
        fd, index_fd = self._open_fds()
        os.fsync(fd)
        self.synced_size = self.size
        if index_too:
            os.fsync(index_fd)

    def close(self) -> None:
        for fd in (self._fd, self._index_fd):
            if fd is not None:
                os.close(fd)
        self._fd = self._index_fd = None

    def delete(self) -> None:
        self.path.unlink(missing_ok=True)
        self.index_path.unlink(missing_ok=True)
