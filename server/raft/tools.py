"""``kraftwire log dump`` and ``kraftwire log verify``: read a metadata log directory offline.

Both take the partition directory (``.../__cluster_metadata-0``) or the data directory holding it,
and read snapshots (oldest first) then segments (in offset order). ``dump`` prints every record,
control records included: offset, epoch, timestamp, type, version and fields, as text or as JSON
lines. ``verify`` checks every batch of every file (framing, CRC-32C, contiguous offsets across
segments, epochs, every record decodable, snapshots framed by header and footer) and every ``.index``
entry (it must point at a batch boundary and name that batch's last offset); it prints the first
problem with its file and offset and exits 1, or a summary and exits 0. The newest segment is judged
as start-up judges it (``segments.judge_damage``): damage past the length recorded as fsync'd is a
torn tail start-up cuts away (reported, exit 0); damage below it, or a file cut short of it, exits 1.
A well-framed record of a type (or version) ``schemas/records`` does not hold, as a newer Kafka may
write, is no damage: dump shows it as ``UnknownRecord`` with its bytes and verify lists it as a warning
and exits 0, saying that start-up refuses such a log (``segments.UnknownRecordError``).
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
from kraftwire.codec.records import (SnapshotFooterRecord, SnapshotHeaderRecord, UnknownRecordType,
                                     decode_control, decode_frame, read_batch)

from .batches import metadata_frame
from .recovery import read_synced_lengths
from .segments import Damage, judge_damage, mapped, unknown_record_description, walk
from .snapshots import list_snapshots


class Problem(Exception):
    def __init__(self, path: Path, position: int, offset: int | None, reason: str):
        super().__init__(f"{path}: offset {offset} (byte {position}): {reason}")


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
                batch = read_batch(buf, position)
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
                    yield (record.offset, batch.partition_leader_epoch, record.timestamp, batch.is_control, value,
                           version)
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


@dataclass
class TailRule:
    """What start-up knows when it judges the newest segment: where the newest snapshot ends and how many
    bytes were recorded as fsync'd; ``torn`` is set to (file, byte, bytes past it, why) for a torn tail."""
    snapshot_end: int
    synced_bytes: int | None
    torn: tuple | None = None

    @classmethod
    def of(cls, directory: Path, segment: Path) -> TailRule:
        snapshots = list_snapshots(directory)
        return cls(snapshots[-1][0].end_offset if snapshots else 0,
                   read_synced_lengths(directory).get(segment.name))


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


def verify(directory: str | Path, out: TextIO = sys.stdout) -> int:
    directory = partition_directory(directory)
    boundaries: dict[Path, dict[int, int]] = {}
    snapshot_ends: dict[Path, list] = {}  # snapshot -> [first record, last record]
    first = last = None
    unknown = 0
    try:
        tail_rule = TailRule.of(directory, segment_paths(directory)[-1]) if segment_paths(directory) else None
        for path, (offset, _epoch, _ts, _control, record, _version) in read_log(directory, boundaries, tail_rule):
            if isinstance(record, UnknownRecord):
                unknown += 1
                print(f"warning: {path}: offset {offset}: {record.describe()}", file=out)
            if path in boundaries:
                first = offset if first is None else first
                last = offset
            else:
                snapshot_ends.setdefault(path, [record, record])[1] = record
        snapshots = list_snapshots(directory)
        for _snapshot, path in snapshots:
            head, tail = snapshot_ends.get(path, (None, None))
            if not isinstance(head, SnapshotHeaderRecord):
                raise Problem(path, 0, 0, "does not start with a snapshot header")
            if not isinstance(tail, SnapshotFooterRecord):
                raise Problem(path, 0, None, "does not end with a snapshot footer")
        for segment, found in boundaries.items():
            _check_index(segment, found)
    except Problem as problem:
        print(f"damaged: {problem}", file=out)
        return 1
    span = f"offsets {first}..{last}" if first is not None else "no records"
    warnings = f", {unknown} record(s) of unknown type (kraftwire serve refuses to start on them)" if unknown else ""
    print(f"ok: {len(boundaries)} segment(s) ({span}), {len(snapshots)} snapshot(s) in {directory}{warnings}",
          file=out)
    if tail_rule is not None and tail_rule.torn is not None:
        path, position, dropped, reason = tail_rule.torn
        print(f"torn tail: {path} from byte {position} ({dropped} bytes past the fsync'd length, {reason}); "
              f"start-up cuts it away", file=out)
    return 0
