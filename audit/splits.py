"""Which files of a metadata log to read, and how to cut them into independent splits.

Input set (reference §2.1, §2.6): every ``{base:020d}.log`` segment of the given directories (a base
offset seen in several directories is read from the first one given), and, when the segments do not
start at offset 0, the oldest snapshot ``{end:020d}-{epoch:010d}.checkpoint`` that reaches the first
segment: its records are the starting state and the log is read from its end offset on. Partial and
deleted files (``.part``, ``.deleted``, ``.cleaned``, ``.swap``) are ignored.

Segment *i* contributes the offsets [its base, the next segment's base): copies archived from
different voters may roll at different offsets, and this keeps each offset from exactly one file.

A segment is cut at positions from its ``.index``, whose entries always point at batch starts, into
splits of about ``split_bytes``; a split is decoded by one task. Index files have no checksum, so a
cut is used only if a batch header with magic 2 and a fitting offset is found there; a segment
without a usable index is one split.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from kraftwire.codec.log_layout import (INDEX_SUFFIX, LOG_SUFFIX, PARTITION_DIR, index_entries, parse_base_offset,
                                       parse_snapshot_name)

from . import storage
from .rows import violation

DEFAULT_SPLIT_BYTES = 16 << 20
_BASE_AND_MAGIC = struct.Struct(">qiib")


@dataclass(frozen=True)
class Split:
    index: int  # position in log order; splits are read and merged in this order
    uri: str
    name: str  # file name, for findings
    start: int  # byte range [start, end) of the file
    end: int
    lo: int  # offsets kept: lo <= offset < hi (hi None: no bound)
    hi: int | None
    snapshot_end: int | None  # set for a snapshot: its records stand at offset snapshot_end - 1
    file_end: bool  # the range ends at the end of the file, so a batch running past it is torn


@dataclass
class Plan:
    splits: list[Split]
    findings: list[tuple]  # violation rows about the file set (see replay.violation)
    snapshot: str | None  # the snapshot used as the starting state
    start_offset: int  # the first offset the replay covers


def plan(directories: list[str], split_bytes: int = DEFAULT_SPLIT_BYTES) -> Plan:
    directories = [partition_directory(d) for d in directories]
    segments: dict[int, storage.FileEntry] = {}
    snapshots: list[tuple[int, int, storage.FileEntry]] = []
    indexes: dict[str, storage.FileEntry] = {}
    for directory in directories:
        for entry in storage.list_files(directory):
            if (base := parse_base_offset(entry.name)) is not None:
                segments.setdefault(base, entry)
            elif snapshot_id := parse_snapshot_name(entry.name):
                snapshots.append((*snapshot_id, entry))
            elif entry.name.endswith(INDEX_SUFFIX):
                indexes.setdefault(entry.uri, entry)
    bases = sorted(segments)
    findings: list[tuple] = []
    snapshot = None
    if not bases:
        snapshot = max(snapshots, key=lambda s: (s[0], s[1]), default=None)
    elif bases[0] > 0:
        reaching = [s for s in snapshots if s[0] >= bases[0]]
        snapshot = min(reaching, key=lambda s: (s[0], -s[1]), default=None)
        if snapshot is None:
            findings.append(violation(bases[0], None, "missing_history", detail=(
                f"the log starts at offset {bases[0]} and no snapshot reaches it: "
                "the state before that offset is unknown"), file=segments[bases[0]].name))
    start_offset = snapshot[0] if snapshot else (bases[0] if bases else 0)

    splits: list[Split] = []
    if snapshot is not None:
        end, _, entry = snapshot
        splits.append(Split(0, entry.uri, entry.name, 0, entry.size, 0, None, end, True))
    for i, base in enumerate(bases):
        hi = bases[i + 1] if i + 1 < len(bases) else None
        entry = segments[base]
        if (hi is not None and hi <= start_offset) or entry.size == 0:
            continue
        index_uri = entry.uri[: -len(LOG_SUFFIX)] + INDEX_SUFFIX
        cuts = _cuts(entry, base, indexes.get(index_uri), split_bytes, findings)
        bounds = [0, *cuts, entry.size]
        for start, end in zip(bounds, bounds[1:]):
            splits.append(Split(len(splits), entry.uri, entry.name, start, end, max(base, start_offset), hi,
                                None, end == entry.size))
    return Plan(splits, findings, snapshot[2].name if snapshot else None, start_offset)


def partition_directory(directory: str) -> str:
    """The metadata partition's directory: ``directory`` itself, or its ``__cluster_metadata-0``."""
    inner = storage.join(directory, PARTITION_DIR)
    return inner if storage.exists(inner) else directory


def _cuts(segment: storage.FileEntry, base: int, index: storage.FileEntry | None, split_bytes: int,
          findings: list) -> list[int]:
    if index is None or index.size == 0 or segment.size <= split_bytes:
        return []
    cuts = []
    last = 0
    for relative, position in index_entries(storage.read_bytes(index.uri)):
        if position - last < split_bytes or position >= segment.size or segment.size - position < split_bytes // 4:
            continue
        header = storage.read_bytes(segment.uri, position, position + _BASE_AND_MAGIC.size)
        batch_base, _, _, magic = _BASE_AND_MAGIC.unpack(header)
        if magic != 2 or not base <= batch_base <= base + relative:
            findings.append(violation(base + relative, None, "bad_index_entry", file=index.name, position=position,
                                      detail=f"index entry ({relative}, {position}) does not point at a batch"))
            continue
        cuts.append(position)
        last = position
    return cuts
