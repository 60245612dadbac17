"""``kraftwire log dump`` and ``kraftwire log verify``: read a metadata log directory offline.

Both take the partition directory (``.../__cluster_metadata-0``) or the data directory holding it,
and read snapshots (oldest first) then segments (in offset order). ``dump`` prints every record,
control records included: offset, epoch, timestamp, type, version and fields, as text or as JSON
lines.

``verify`` judges the directory with start-up's own judgement (``recovery.recover`` with ``dry_run``:
``quorum-state``, the snapshot start-up would load, every batch it would read, the fsync'd-length rule
for the end of the newest segment) and decodes every record start-up would replay; it exits 1 with the
refusal start-up would stop with, or prints a summary and exits 0 (a torn tail start-up cuts is
reported). What start-up does not read is checked too and reported as warnings, exit 0: damaged
snapshots it passes over or does not need, damage in segments wholly below the snapshot it loads (kept
only for the audit), and ``.index`` entries that do not point at a batch boundary naming that batch's
last offset (start-up rebuilds the index from the batches). A well-framed record of a type (or version)
``schemas/records`` does not hold, as a newer Kafka may write, is no damage: dump shows it as
``UnknownRecord`` with its bytes and verify lists it as a warning and exits 0, saying that start-up
refuses such a log (``segments.UnknownRecordError``): the one refusal verify does not share, since it
is about what this kraftwire can replay, not about the bytes.
"""
from __future__ import annotations

import json
import os
import sys
import uuid
from dataclasses import dataclass
from datetime import datetime, UTC
from pathlib import Path
from typing import NamedTuple, TextIO
from collections.abc import Callable, Iterator

from kraftwire.codec import MalformedError
from kraftwire.codec.log_layout import INDEX_ENTRY, INDEX_SUFFIX, PARTITION_DIR, index_entries, parse_base_offset
from kraftwire.codec.message import Message
from kraftwire.codec.model import Struct
from kraftwire.codec.records import UnknownRecordType, decode_control, decode_frame, read_batch

from .batches import metadata_frame
from .files import RaftConfig
from .recovery import Recovered, recover
from .segments import Damage, judge_damage, mapped, unknown_record_description, walk
from .snapshots import SnapshotError, check_snapshot, list_snapshots
from .storage import StorageError

# ``kraftwire serve``'s default (dynamic voters): a snapshot without voter records makes start-up read the
# whole log (recovery.recover), the strictest case.
VERIFY_KRAFT_VERSION = 1


class Problem(Exception):
    def __init__(self, path: Path, position: int, offset: int | None, reason: str):
        super().__init__(f"{path}: offset {offset} (byte {position}): {reason}")
        self.offset, self.reason = offset, reason


class UnknownRecord(NamedTuple):
    """A framed metadata record the codec has no schema for; ``frame`` is the whole record value."""

    record_type: int
    version: int
    frame: bytes

    def describe(self, with_frame: bool = True) -> str:
        what = unknown_record_description(self.record_type, self.version)
        return f"{what}: {self.frame.hex()}" if with_frame else what


# (offset, epoch, timestamp, is control, record, version) of each record ``read_file`` reads
LogRecord = tuple[int, int, int, bool, "Message | UnknownRecord", int]


def partition_directory(path: str | Path) -> Path:
    path = Path(path)
    return path / PARTITION_DIR if (path / PARTITION_DIR).is_dir() else path


def segment_paths(directory: Path) -> list[Path]:
    return sorted((p for p in directory.iterdir() if parse_base_offset(p.name) is not None),
                  key=lambda p: p.name)


def read_file(path: Path, expected_offset: int | None, epoch: int | None = None,
              boundaries: dict[int, int] | None = None, tail: TailRule | None = None) -> Iterator[LogRecord]:
    """Yield (offset, epoch, timestamp, is control, record, version) for every record of the file,
    checking it as ``walk`` does and decoding every record; raises Problem at the first fault.
    ``boundaries`` collects each batch's start position -> last offset. With ``tail`` (the newest
    segment), damage start-up would cut away as a torn write ends the file instead, and is noted there."""
    with mapped(path) as buf:
        valid_size = 0
        try:
            for position, header in walk(buf, 0, expected_offset, epoch):
                if boundaries is not None:
                    boundaries[position] = header.base_offset + header.last_offset_delta
                yield from batch_records(path, buf, position)
                valid_size = position + header.size
            damage = None
        except Damage as found:
            if tail is None:
                raise Problem(path, found.position, found.offset, found.reason) from None
            damage = found
        except MalformedError as exc:
            raise Problem(path, exc.offset, expected_offset, exc.what) from None
        if tail is not None:
            refusal = judge_damage(path, buf, damage, valid_size, is_last=True, snapshot_end=tail.snapshot_end,
                                   synced_bytes=tail.synced_bytes)
            if refusal is not None:
                raise Problem(path, valid_size if damage is None else damage.position,
                              None if damage is None else damage.offset, refusal)
            if damage is not None:
                tail.torn = (path, valid_size, len(buf) - valid_size, damage.reason)


def batch_records(path: Path, buf: bytes, position: int) -> Iterator[LogRecord]:
    """The decoded records of the (checked) batch at ``position``; Problem for one that cannot be decoded,
    ``UnknownRecord`` for one of a type or version without a schema."""
    try:
        batch = read_batch(buf, position)
    except MalformedError as exc:
        raise Problem(path, position, None, exc.what) from None
    for record in batch.records:
        value: Message | UnknownRecord
        try:
            if batch.is_control:
                value, version = decode_control(record.key, record.value), 0
            else:
                value, version = decode_frame(metadata_frame(record.value))
        except UnknownRecordType as unknown:
            value = UnknownRecord(unknown.record_type, unknown.version, bytes(record.value or b""))
            version = unknown.version
        except MalformedError as exc:
            raise Problem(path, position, record.offset, exc.what) from None
        yield (record.offset, batch.partition_leader_epoch, record.timestamp, batch.is_control, value, version)


@dataclass
class TailRule:
    """What start-up knows when it judges the newest segment: where the newest snapshot ends and how many
    bytes were recorded as fsync'd; ``torn`` is set to (file, byte, bytes past it, why) for a torn tail."""
    snapshot_end: int
    synced_bytes: int | None
    torn: tuple | None = None


def read_log(directory: Path, boundaries: dict[Path, dict[int, int]] | None = None,
             tail: TailRule | None = None) -> Iterator[tuple[Path, tuple]]:
    """(file, record tuple) over the snapshots, then over the segments as one contiguous log;
    ``boundaries`` collects each segment's batch positions (see ``read_file``); ``tail`` judges the
    newest segment as start-up does."""
    for _snapshot, path in list_snapshots(directory):
        for entry in read_file(path, 0):
            yield path, entry
    expected = epoch = None
    paths = segment_paths(directory)
    for path in paths:
        base = parse_base_offset(path.name)
        if expected is not None and base != expected:
            raise Problem(path, 0, expected, f"segment starts at offset {base}, the previous one ends at {expected}")
        expected = base
        found = boundaries.setdefault(path, {}) if boundaries is not None else None
        for entry in read_file(path, expected, epoch, found, tail if path == paths[-1] else None):
            expected, epoch = entry[0] + 1, entry[1]
            yield path, entry


def fields_at(value: object, version: int) -> object:
    """A record's fields as JSON-ready data, only those its version has; unknown tagged fields only
    when there are some."""
    if isinstance(value, UnknownRecord):
        return {"record_type": value.record_type, "frame": value.frame.hex()}
    if isinstance(value, Struct):
        fields: dict[str, object] = {spec.attr: fields_at(item, version)
                  for spec, item in zip(value._spec.fields, value) if version in spec.versions}
        if value.unknown_tagged_fields:
            fields["unknown_tagged_fields"] = [[tag, data.hex()] for tag, data in value.unknown_tagged_fields]
        return fields
    if isinstance(value, tuple):
        return [fields_at(item, version) for item in value]
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    return value


def _timestamp(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# (record, its rendered fields) -> the fields to print; the host passes metadata.redaction's, which raft
# cannot import (it knows which configs are sensitive).
Redactor = Callable[[object, dict], dict]


def dump(directory: str | Path, as_json: bool = False, out: TextIO = sys.stdout,
         redact: Redactor | None = None) -> int:
    """Print every record; ``redact`` (None: every field as written) hides secrets from the output."""
    directory = partition_directory(directory)
    current = None
    try:
        for path, (offset, epoch, timestamp, control, record, version) in read_log(directory):
            fields = fields_at(record, version)
            if redact is not None and isinstance(fields, dict):
                fields = redact(record, fields)
            name = type(record).__name__
            if as_json:
                out.write(json.dumps({"file": path.name, "offset": offset, "epoch": epoch, "timestamp": timestamp,
                                      "control": control, "type": name, "version": version, "fields": fields}) + "\n")
                continue
            if path != current:
                out.write(f"== {path.name}\n")
                current = path
            kind = "control " if control else ""
            out.write(f"offset={offset} epoch={epoch} time={_timestamp(timestamp)} {kind}{name} v{version} "
                      f"{json.dumps(fields)}\n")
    except Problem as problem:
        print(f"damaged: {problem}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # the reader went away (``log dump DIR | head``): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
    return 0


def _check_index(segment: Path, boundaries: dict[int, int]) -> None:
    """``boundaries``: batch start position -> last offset of that batch."""
    index = segment.with_suffix(INDEX_SUFFIX)
    if not index.exists():
        return
    base = parse_base_offset(segment.name)
    assert base is not None  # a segment's name
    for i, (relative, position) in enumerate(index_entries(index.read_bytes())):
        if boundaries.get(position) != base + relative:
            raise Problem(index, i * INDEX_ENTRY.size, base + relative,
                          f"index entry {i} points at byte {position}, which is not the start of a batch ending "
                          f"at offset {base + relative}")


@dataclass
class Findings:
    """What ``verify`` found besides start-up's verdict: warnings, records of unknown type, the offsets."""
    warnings: list[str]
    unknown: int = 0
    first: int | None = None
    last: int | None = None

    def take(self, path: Path, record: LogRecord, in_log: bool) -> None:
        offset, value = record[0], record[4]
        if isinstance(value, UnknownRecord):
            self.unknown += 1
            self.warnings.append(f"{path}: offset {offset}: {value.describe()}")
        if in_log:
            self.first = offset if self.first is None else min(self.first, offset)
            self.last = offset if self.last is None else max(self.last, offset)


def _check_replayed(recovered: Recovered, findings: Findings) -> None:
    """Decode every record start-up replays (the snapshot it loads, the batches it read): Problem as
    start-up's replay refuses. Data records below the snapshot's end are not replayed: a fault there is a
    warning."""
    if recovered.snapshot is not None:
        path = recovered.snapshot[1]
        for record in read_file(path, 0):
            findings.take(path, record, in_log=False)
    start = recovered.snapshot_end
    for batch, (path, position) in zip(recovered.batches, recovered.placed):
        try:
            for record in batch_records(path, batch.data, 0):
                findings.take(path, record, in_log=True)
        except Problem as problem:
            if batch.control or batch.last >= start:
                raise Problem(path, position, problem.offset, problem.reason) from None
            findings.warnings.append(f"{problem} (below the snapshot start-up loads, which it does not replay)")


def _check_unread(directory: Path, recovered: Recovered, findings: Findings) -> None:
    """Warnings for what start-up does not read: other snapshots, segments wholly below the snapshot it
    loads; and for every ``.index`` that does not match its segment (start-up rebuilds it)."""
    used = recovered.snapshot[1] if recovered.snapshot else None
    for _snapshot, path in list_snapshots(directory):
        if path == used:
            continue
        try:
            check_snapshot(path)
            for record in read_file(path, 0):
                findings.take(path, record, in_log=False)
        except (SnapshotError, Problem) as exc:
            findings.warnings.append(f"{path}: {exc} (start-up does not load this snapshot)")
    for path in recovered.unscanned:
        found: dict[int, int] = {}
        try:
            for record in read_file(path, parse_base_offset(path.name), None, found):
                findings.take(path, record, in_log=True)
        except Problem as problem:
            findings.warnings.append(f"{problem} (wholly below the snapshot start-up loads, which does not read it)")
            continue
        _index_warning(path, found, findings)
    for segment in recovered.files.segments:
        if segment.path not in recovered.unscanned:
            end = recovered.torn.position if recovered.torn and recovered.torn.path == segment.path else None
            _index_warning(segment.path, _boundaries(segment.path, end), findings)


def _boundaries(path: Path, end: int | None) -> dict[int, int]:
    with mapped(path) as buf:
        return {position: header.base_offset + header.last_offset_delta
                for position, header in walk(buf[:end] if end is not None else buf)}


def _index_warning(segment: Path, boundaries: dict[int, int], findings: Findings) -> None:
    try:
        _check_index(segment, boundaries)
    except Problem as problem:
        findings.warnings.append(f"{problem} (start-up rebuilds the index from the batches)")


def verify(directory: str | Path, out: TextIO = sys.stdout) -> int:
    """Exit 1 with start-up's refusal, or 0 (module docstring)."""
    directory = partition_directory(directory)
    findings = Findings([])
    try:
        recovered = recover(directory, RaftConfig(), VERIFY_KRAFT_VERSION, dry_run=True)
        _check_replayed(recovered, findings)
        _check_unread(directory, recovered, findings)
    except (StorageError, Problem) as refusal:
        print(f"damaged: {refusal}", file=out)
        return 1
    except OSError as exc:
        print(f"damaged: {directory} cannot be read: {exc}", file=out)
        return 1
    findings.warnings[:0] = [f"{note} (start-up passes over this snapshot)" for note in recovered.passed_over]
    for warning in findings.warnings:
        print(f"warning: {warning}", file=out)
    span = f"offsets {findings.first}..{findings.last}" if findings.first is not None else "no records"
    unknown = findings.unknown
    warnings = f", {unknown} record(s) of unknown type (kraftwire serve refuses to start on them)" if unknown else ""
    segments = len(recovered.files.segments)
    print(f"ok: {segments} segment(s) ({span}), {len(list_snapshots(directory))} snapshot(s) in {directory}"
          f"{warnings}", file=out)
    torn = recovered.torn
    if torn is not None:
        print(f"torn tail: {torn.path} from byte {torn.position} ({torn.dropped} bytes of an unfinished write, "
              f"{torn.reason}); start-up cuts it away", file=out)
    return 0
