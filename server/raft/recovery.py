"""What a ``RaftLog`` finds on disk at ``open``: the newest valid snapshot, the segments after it, and the
quorum state, checked, with torn tails cut away (``recover``, run in the I/O thread before anything else
touches the files); and the state its core starts from (``log_entries``, ``election_state``).

``recover`` is the one judgement of a log directory: ``kraftwire log verify`` runs it too, with
``dry_run`` (the same checks and refusals, nothing written), so verify fails exactly when start-up
refuses. It refuses (``StorageError``) a damaged ``quorum-state``, a log missing records, damage in any
batch it reads but the unfinished write at the end of the newest segment (``segments.judge_damage``,
against the durable fsync'd length of ``synced-lengths.json``: damage below it, a file short of it, and
without it or past it any whole batch whose bytes are wrong, are refused). A damaged snapshot that is not
needed (an older valid one and the log after it cover its offsets) is passed over and noted; every
offset below the newest snapshot file, valid or not, counts as committed. A whole downloaded snapshot
with an empty segment at its end is an install a crash interrupted, finished here; a partial one is
deleted.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

from kraftwire.codec.log_layout import (PARTIAL_SNAPSHOT_SUFFIX, SNAPSHOT_SUFFIX, parse_base_offset,
                                        parse_snapshot_name, segment_file_name)
from kraftwire.codec.records import ATTR_CONTROL

from . import voters as voter_sets
from .batches import VOTER_DATA, LogBatch, entries_of
from .core import Entry
from .files import SYNCED_LENGTHS, LogCorruptError, RaftConfig, SegmentFiles
from .quorum_state import NO_ID, QuorumState, read_quorum_state
from .segments import Damage, Segment, judge_damage, mapped, walk
from .snapshots import SnapshotError, SnapshotId, check_snapshot, list_snapshots, remove_partial, snapshot_control
from ..durable.files import fsync_dir
from .voters import SnapshotVoters

log = logging.getLogger("kraftwire.raft")


def read_synced_lengths(directory: Path) -> dict[str, int]:
    """``synced-lengths.json``: bytes of the active segment recorded as fsync'd (empty when unreadable)."""
    try:
        synced = json.loads((directory / SYNCED_LENGTHS).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(synced, dict):
        return {}
    return {name: length for name, length in synced.items()
            if isinstance(length, int) and not isinstance(length, bool) and length >= 0}


def voters_of(path: Path) -> SnapshotVoters:
    """The voter records a checked snapshot holds after its header."""
    return SnapshotVoters.of_records(snapshot_control(path))


@dataclass(frozen=True)
class TornTail:
    """The unfinished write cut from the end of the newest segment: from byte ``position``, ``dropped``
    bytes, and why they fail the checks."""
    path: Path
    position: int
    offset: int
    dropped: int
    reason: str


@dataclass
class Recovered:
    """A log as ``recover`` found it: its files (the active segment open for appends), quorum state,
    newest valid snapshot and the voter records it holds, and every batch checked after it; where the
    newest snapshot file ends (``committed_end``), the torn tail cut, and the damaged snapshots passed over."""
    files: SegmentFiles
    state: QuorumState | None
    snapshot: tuple[SnapshotId, Path] | None
    snapshot_voters: SnapshotVoters
    batches: list[LogBatch] = field(default_factory=list)
    placed: list[tuple[Path, int]] = field(default_factory=list)  # each batch's file and byte position
    committed_end: int = 0
    dry_run: bool = False
    torn: TornTail | None = None
    passed_over: list[str] = field(default_factory=list)
    unscanned: list[Path] = field(default_factory=list)  # segments wholly below the snapshot, taken as they are

    @property
    def snapshot_end(self) -> int:
        return self.snapshot[0].end_offset if self.snapshot else 0


def recover(directory: Path, config: RaftConfig, bootstrap_kraft_version: int, dry_run: bool = False) -> Recovered:
    """Runs in the I/O thread before anything else touches the files. With ``dry_run`` nothing is written
    (no cut, no index, no install finished, no file created): ``kraftwire log verify``'s judgement."""
    if not dry_run:
        directory.mkdir(parents=True, exist_ok=True)
    state = read_quorum_state(directory)
    files = SegmentFiles(directory, config)
    install = _interrupted_install(directory)
    if install is not None and not dry_run:
        log.warning("finishing the install of snapshot %s, interrupted by a crash", install[1].name)
        files.install(*install)
        install = None
    if not dry_run:
        for path in remove_partial(directory):
            log.info("deleted the interrupted snapshot %s", path.name)
    passed_over: list[str] = []
    snapshot = install or _newest_valid_snapshot(directory, passed_over)
    recovered = Recovered(files, state, snapshot, voters_of(snapshot[1]) if snapshot else SnapshotVoters(),
                          dry_run=dry_run, passed_over=passed_over)
    recovered.committed_end = max([recovered.snapshot_end, *(s.end_offset for s, _ in list_snapshots(directory))])
    # An older kraftwire kept a dynamic quorum's whole log and wrote its snapshots without voter records.
    whole = bootstrap_kraft_version >= 1 and snapshot is not None and recovered.snapshot_voters.kraft_version is None
    only = [install[0].end_offset] if install is not None else None  # after the install, only its empty segment
    _recover_segments(recovered, read_synced_lengths(directory), whole, only)
    if dry_run:
        return recovered
    active = files.active
    active.open_for_append()
    active.sync()  # what a killed process left in the page cache is part of the log from now on
    files.publish_synced_lengths()
    return recovered


def _newest_valid_snapshot(directory: Path, passed_over: list[str]) -> tuple[SnapshotId, Path] | None:
    for snapshot, path in reversed(list_snapshots(directory)):
        try:
            check_snapshot(path)
            return snapshot, path
        except SnapshotError as exc:
            log.error("ignoring snapshot %s: %s", path, exc)
            passed_over.append(f"{path}: {exc}")
    return None


def _recover_segments(recovered: Recovered, synced: dict[str, int], whole: bool = False,
                      only: list[int] | None = None) -> int:
    """Check every batch from the segment holding the snapshot's end on (from the first, if ``whole``) and
    keep them for the core; cut a torn tail; returns the epoch of the last batch (0 if none)."""
    files, start = recovered.files, recovered.snapshot_end
    directory, interval = files.directory, files.config.index_interval_bytes
    bases = only if only is not None else sorted(
        b for p in directory.iterdir() if (b := parse_base_offset(p.name)) is not None)
    segments = [Segment(directory, base, interval) for base in bases]
    if not segments:
        if recovered.committed_end > start:
            raise LogCorruptError(f"{directory}: no segment holds the offsets from {start}, below the end of the "
                                  f"newest snapshot ({recovered.committed_end}): records are missing")
        segment = Segment(directory, start, interval)
        if not recovered.dry_run:
            segment.path.touch()
            fsync_dir(directory)
        files.segments = [segment]
        return 0
    if segments[0].base_offset > start:
        raise LogCorruptError(f"{segments[0].path}: the log starts at offset {segments[0].base_offset}, but no "
                              f"valid snapshot covers the offsets before it (newest usable ends at {start})")
    first = 0 if whole else max(i for i, s in enumerate(segments) if s.base_offset <= start)
    for segment in segments[:first]:
        segment.adopt_closed()
        recovered.unscanned.append(segment.path)
    expected = segments[first].base_offset
    epoch: int | None = None
    for i in range(first, len(segments)):
        segment = segments[i]
        if segment.base_offset != expected:
            raise LogCorruptError(f"{segment.path}: starts at offset {segment.base_offset}, but the segment "
                                  f"before it ends at offset {expected}: records are missing")
        expected, epoch = _recover_segment(recovered, segment, expected, epoch, synced,
                                           is_last=i == len(segments) - 1)
    end = max(start, recovered.committed_end)
    if expected < end:
        raise LogCorruptError(f"{segments[-1].path}: the log ends at offset {expected}, before the end of the "
                              f"newest snapshot ({end}): records are missing")
    files.segments = segments
    return epoch or 0


def _recover_segment(recovered: Recovered, segment: Segment, expected: int, epoch: int | None,
                     synced: dict[str, int], is_last: bool) -> tuple[int, int | None]:
    """Check one segment's batches from offset ``expected`` on and keep them; cut a torn tail; returns the
    offset expected next and the epoch of its last batch."""
    size = 0
    torn_at = None
    with mapped(segment.path) as buf:
        length = len(buf)
        try:
            for position, header in walk(buf, 0, expected, epoch):
                segment.note_recovered(position, header)
                size = position + header.size
                expected = header.base_offset + header.count
                epoch = header.partition_leader_epoch
                recovered.batches.append(LogBatch(
                    header.base_offset, expected - 1, bytes(buf[position:size]), epoch,
                    header.base_timestamp, bool(header.attributes & ATTR_CONTROL)))
                recovered.placed.append((segment.path, position))
        except Damage as damage:
            torn_at = damage
        refusal = judge_damage(segment.path, buf, torn_at, size, is_last=is_last,
                               snapshot_end=recovered.committed_end, synced_bytes=synced.get(segment.path.name))
        if refusal is not None:
            raise LogCorruptError(refusal)
    if torn_at is not None:
        recovered.torn = TornTail(segment.path, size, expected, length - size, torn_at.reason)
        if recovered.dry_run:
            return expected, epoch
        log.warning("%s: torn write at the tail: truncating at byte %d (offset %d), dropping %d bytes (%s)",
                    segment.path, size, expected, length - size, torn_at.reason)
        segment.truncate(size)
    if recovered.dry_run:
        segment.size = segment.synced_size = size
    elif segment.finish_recovery(size):
        log.info("%s: rebuilt the offset index", segment.index_path.name)
    return expected, epoch


def _interrupted_install(directory: Path) -> tuple[SnapshotId, Path] | None:
    """A whole downloaded snapshot with an empty segment at its end is an install the crash interrupted
    (recovery deletes the segments below it and renames it, as the install would)."""
    for part in sorted(directory.glob("*" + PARTIAL_SNAPSHOT_SUFFIX)):
        parsed = parse_snapshot_name(part.name.removesuffix(PARTIAL_SNAPSHOT_SUFFIX) + SNAPSHOT_SUFFIX)
        first = directory / segment_file_name(parsed[0]) if parsed else None
        if parsed is None or first is None or not first.exists() or first.stat().st_size:
            continue
        try:
            check_snapshot(part)
        except SnapshotError:
            continue
        return SnapshotId(*parsed), part
    return None


def log_entries(recovered: Recovered) -> tuple[list[Entry], SnapshotVoters]:
    """The core's entries from the snapshot's end on, and the voter records in force at the snapshot's
    end: the snapshot's, or (a snapshot without voter records) those of the log below it."""
    start = recovered.snapshot_end
    entries: list[Entry] = []
    below: list[object] = []
    for batch in recovered.batches:
        if batch.base >= start:  # below it, the snapshot holds the records
            entries.extend(entries_of(batch))
        elif batch.control:  # a snapshot without voter records: the log below it has them (see recover)
            below.extend(e.data for e in entries_of(batch) if isinstance(e.data, VOTER_DATA))
    snapshot_voters = recovered.snapshot_voters
    if below and snapshot_voters.kraft_version is None:
        snapshot_voters = SnapshotVoters(
            next((d.kraft_version for d in reversed(below) if isinstance(d, voter_sets.KRaftVersionRecord)), None),
            next((d.voters for d in reversed(below) if isinstance(d, voter_sets.VotersRecord)), None))
    return entries, snapshot_voters


def started_static(recovered: Recovered, entries: list[Entry], snapshot_voters: SnapshotVoters) -> bool:
    """A log that holds records but no KRaftVersionRecord was started at kraft.version 0 (and keeps its
    static voters, as kafka-storage format fixes it at the first start)."""
    return ((recovered.snapshot is not None or bool(entries)) and snapshot_voters.kraft_version is None
            and not any(isinstance(e.data, voter_sets.KRaftVersionRecord) for e in entries))


def election_state(recovered: Recovered, entries: list[Entry]) -> tuple[int, int, int]:
    """(epoch, leader id, voted id) the core starts in: the quorum state's, or unattached in the log's
    epoch when the quorum state is older than the log."""
    snapshot = recovered.snapshot
    last_epoch = max(entries[-1].epoch if entries else 0, snapshot[0].epoch if snapshot else 0)
    state = recovered.state
    epoch, leader, voted = (state.leader_epoch, state.leader_id, state.voted_id) if state else (0, NO_ID, NO_ID)
    if last_epoch > epoch:
        return last_epoch, NO_ID, NO_ID
    return epoch, leader, voted
