"""Snapshots: ``{end offset:020d}-{epoch:010d}.checkpoint`` files holding the whole metadata image.

A snapshot is a file of v2 batches whose offsets start at 0: a control batch with a SnapshotHeaderRecord
(and, where the voters can change, the KRaftVersionRecord and VotersRecord in force at the snapshot's
end, as Kafka's RecordsSnapshotWriter writes them; server/raft/voters.py), data batches with the image
as metadata records, and a control batch with a SnapshotFooterRecord. Every log record with an offset
below ``end offset`` is folded into it; the epoch is that of the last folded record. It is written to
``<name minus suffix>-<random>.checkpoint.part``, fsync'd and renamed, so a ``.checkpoint`` file is
always complete; ``.part`` leftovers are deleted at start-up, as Kafka does.
"""
from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple, cast

from kraftwire.codec import MalformedError, records
from kraftwire.codec.message import Message
from kraftwire.codec.log_layout import PARTIAL_SNAPSHOT_SUFFIX, SNAPSHOT_SUFFIX, parse_snapshot_name, snapshot_file_name
from kraftwire.codec.records import (ATTR_CONTROL, SnapshotFooterRecord, SnapshotHeaderRecord, UnknownRecordType,
                                     batch_header, control_batch, decode_control, decode_frame, decode_value,
                                     metadata_bodies, read_batch)

from .segments import Damage, UnknownRecordError, mapped, walk
from ..durable.files import fsync_dir
from .storage import StorageError


class SnapshotId(NamedTuple):
    end_offset: int  # exclusive: the first log offset not folded in
    epoch: int

    @property
    def file_name(self) -> str:
        return snapshot_file_name(self.end_offset, self.epoch)


class SnapshotError(StorageError):
    """A snapshot file that is not a complete, valid snapshot."""


def list_snapshots(directory: Path) -> list[tuple[SnapshotId, Path]]:
    """Every ``.checkpoint`` in ``directory``, oldest first."""
    found = []
    for path in directory.iterdir():
        parsed = parse_snapshot_name(path.name)
        if parsed:
            found.append((SnapshotId(*parsed), path))
    return sorted(found)


def remove_partial(directory: Path) -> list[Path]:
    """Delete interrupted snapshot writes; returns what was deleted."""
    partial = [p for p in directory.iterdir() if p.name.endswith(PARTIAL_SNAPSHOT_SUFFIX)]
    for path in partial:
        path.unlink()
    return partial


def write_snapshot(directory: Path, snapshot: SnapshotId, last_timestamp: int, now_ms: int,
                   records: Iterable[tuple[Message, int | None]], control: Sequence[Message] = ()) -> Path:
    """Write ``records`` ((record, version or None) pairs) as the snapshot ``snapshot``, with the
    ``control`` records after the header in its batch; returns its path."""
    return write_snapshot_batches(directory, snapshot, last_timestamp, now_ms,
                                  metadata_bodies(records), control)


def write_snapshot_batches(directory: Path, snapshot: SnapshotId, last_timestamp: int, now_ms: int,
                           batches: Iterable[tuple[int, bytes]], control: Sequence[Message] = ()) -> Path:
    """Write the snapshot ``snapshot`` whose data batches are ``batches``: (record count, records'
    bytes from ``codec.records.metadata_records``), each framed here at its offset with the snapshot's
    epoch and ``now_ms`` (the header's CRC covers both bytes and time, so bytes kept from an earlier
    snapshot make the same batch a fresh encoding would). ``control`` records follow the header in its
    batch; returns the path."""
    final = directory / snapshot.file_name
    part = directory / f"{final.name[: -len(SNAPSHOT_SUFFIX)]}-{secrets.token_hex(8)}{PARTIAL_SNAPSHOT_SUFFIX}"
    epoch = snapshot.epoch
    with open(part, "wb") as out:
        out.write(control_batch(0, epoch, now_ms, [SnapshotHeaderRecord(
            version=0, last_contained_log_timestamp=last_timestamp), *control]))
        offset = 1 + len(control)
        for count, body in batches:
            out.write(batch_header(offset, epoch, now_ms, body, count))
            out.write(body)
            offset += count
        out.write(control_batch(offset, epoch, now_ms, [SnapshotFooterRecord(version=0)]))
        out.flush()
        os.fsync(out.fileno())
    os.replace(part, final)
    fsync_dir(directory)
    return final


def check_snapshot(path: Path) -> None:
    """Raise SnapshotError unless every batch is sound, offsets run from 0, the first batch is the
    header and the last the footer. Data records are not decoded here (``read_snapshot`` does)."""
    with mapped(path) as buf:
        last = None
        try:
            for position, _header in walk(buf, 0, 0):
                if last is None and not _is_control(buf, position, SnapshotHeaderRecord, alone=False):
                    raise SnapshotError(f"{path.name}: does not start with a snapshot header")
                last = position
        except Damage as exc:
            raise SnapshotError(f"{path.name}: damaged batch at byte {exc.position}: {exc.reason}") from None
        if last is None or not _is_control(buf, last, SnapshotFooterRecord):
            raise SnapshotError(f"{path.name}: does not end with a snapshot footer (incomplete)")


def _is_control(buf: bytes, position: int, cls: type[Message], alone: bool = True) -> bool:
    """The batch at ``position`` is a control batch whose first record (its only one, if ``alone``) is a ``cls``."""
    batch = read_batch(buf, position)
    if not batch.is_control or not batch.records or (alone and len(batch.records) != 1):
        return False
    try:
        return isinstance(decode_value(batch, batch.records[0]), cls)
    except MalformedError:
        return False


def read_snapshot(path: Path) -> Iterator[Message]:
    """The metadata records of a checked snapshot, in order."""
    with mapped(path) as buf:
        for batch in _data_batches(buf):
            for record in batch.records:
                try:
                    yield decode_frame(record.value or b"")[0]
                except MalformedError as exc:
                    raise _refusal(path, record.offset, exc) from None


def load_snapshot_frames(path: Path, apply_frames: Callable[[list[bytes]], None]) -> None:
    """Hand the framed metadata records of a checked snapshot to ``apply_frames``, undecoded, a batch
    at a time (the controller's image decodes only what it needs: ``MetadataImage.apply_frames``). A
    record it cannot decode is refused as ``read_snapshot`` refuses it."""
    with mapped(path) as buf:
        for batch in _data_batches(buf):
            frames = [record.value for record in batch.records]
            try:
                if None in frames:
                    raise MalformedError("a record without a value", 0)
                apply_frames(cast(list[bytes], frames))  # none is None: checked above
            except MalformedError as exc:
                for record in batch.records:  # which record: the refusal names it
                    try:
                        decode_frame(record.value or b"")
                    except MalformedError as record_exc:
                        raise _refusal(path, record.offset, record_exc) from None
                raise SnapshotError(f"{path.name}: the batch at offset {batch.base_offset}: {exc.what}") from None


def _data_batches(buf: bytes) -> Iterator[records.Batch]:
    position = 0
    while position < len(buf):
        batch = read_batch(buf, position)
        position += batch.size
        if not batch.attributes & ATTR_CONTROL:
            yield batch


def _refusal(path: Path, offset: int, exc: MalformedError) -> StorageError:
    if isinstance(exc, UnknownRecordType):
        return UnknownRecordError(path, offset, exc)
    return SnapshotError(f"{path.name}: record {offset}: {exc.what}")


def snapshot_control(path: Path) -> list[Message]:
    """The control records after the header in a checked snapshot's first batch (the voter records)."""
    with mapped(path) as buf:
        batch = read_batch(buf, 0)
        try:
            return [decode_control(record.key, record.value) for record in batch.records[1:]]
        except MalformedError as exc:
            raise SnapshotError(f"{path.name}: a control record after the header: {exc.what}") from None
