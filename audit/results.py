"""The end of an audit, whichever engine ran the replay: join the global and per-partition results,
write the driver's tables and ``summary.json``, and hand back what the console summary and the HTML
report show.

The partition tables (records, partition states, reassignments, RF changes) are written by whoever
replayed the partitions; what the end needs of them comes as a ``Digest``. ``AuditResult.rows`` reads
them back from the Parquet files when asked.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from . import storage, tables
from .reader import SplitStats, gap_detail
from .global_replay import GlobalReplay
from .joins import Digest, throttle_rows, under_replicated_rows
from .rows import COLUMNS, PARTITION_TABLES, ROW_ORDER, Window, violation
from .splits import Plan

DRIVER_TABLES = tuple(name for name in COLUMNS if name not in PARTITION_TABLES)


@dataclass
class AuditResult:
    out: str
    window: Window
    tables: dict[str, list[tuple]]  # the driver's tables, as written
    digest: Digest  # of the reassignments and RF changes
    counts: dict[str, int]  # rows written per table
    log: dict = field(default_factory=dict)  # facts about the log read

    def rows(self, table: str) -> list[dict]:
        """A table as dicts by column name, read back from OUT for the partition tables (lists as
        tuples, timestamps as ms), in ``ROW_ORDER`` where the table has one."""
        if table in self.tables:
            return [dict(zip(COLUMNS[table], row)) for row in self.tables[table]]
        found = tables.read_rows(self.out, table)
        if table in ROW_ORDER:
            found.sort(key=ROW_ORDER[table])
        return [dict(zip(COLUMNS[table], row)) for row in found]


def conclude(out: str, window: Window, plan: Plan, stats: list[SplitStats], glob: GlobalReplay,
             partition_violations: list[tuple], digest: Digest, urp: dict[int, list], record_types: Counter,
             partition_counts: dict[str, int], engine: str) -> AuditResult:
    """``partition_violations`` are those the partition replays found (the global replay's are in
    ``glob.out``); ``partition_counts`` the rows they wrote."""
    stats = sorted(stats, key=lambda s: s.index)
    found = list(plan.findings)
    for s in stats:
        found.extend(s.findings)
    found.extend(_gaps_between(plan, stats))
    found = [f for f in found if window.contains(f[0] if f[0] is not None else -1, f[1])]
    end_timestamp = max((s.max_timestamp for s in stats if s.max_timestamp is not None), default=None)
    driver = {name: list(glob.out.rows[name]) for name in DRIVER_TABLES}
    driver["violations"] += partition_violations + found
    driver["violations"].sort(key=ROW_ORDER["violations"])
    driver["throttles"] = throttle_rows(glob.episodes, digest.spans, end_timestamp, window)
    driver["under_replicated"] = under_replicated_rows(urp, window)

    writer = tables.TableWriter(out, 0)
    for name in DRIVER_TABLES:
        writer.write(name, driver[name])
    counts = {name: partition_counts.get(name, 0) for name in PARTITION_TABLES}
    counts.update(writer.close())
    offsets = [s.next_offset for s in stats if s.next_offset is not None]
    log = {
        "engine": engine,
        "files": sorted({s.name for s in stats}),
        "splits": len(plan.splits),
        "snapshot": plan.snapshot,
        "start_offset": plan.start_offset,
        "end_offset": max(offsets) if offsets else plan.start_offset,
        "records": sum(s.records for s in stats),
        "first_timestamp": min((s.min_timestamp for s in stats if s.min_timestamp is not None), default=None),
        "last_timestamp": end_timestamp,
        "record_types": dict(sorted(record_types.items())),
        "leader_changes": glob.leader_changes,
        "topics": len(glob.topics.by_id),
        "window": {"from": window.lo, "to": window.hi, "by": "time" if window.by_time else "offset"},
    }
    summary = {"log": log, "rows": counts, "outcomes": dict(digest.outcomes),
               "violations": dict(Counter(r[2] for r in driver["violations"])),
               "throttles_left_behind": sum(1 for r in driver["throttles"] if r[-1])}
    storage.write_bytes(storage.join(out, "summary.json"), json.dumps(summary, indent=2).encode())
    return AuditResult(out, window, driver, digest, counts, log)


def _gaps_between(plan: Plan, stats: list[SplitStats]) -> list[tuple]:
    """Offsets missing where one split's records end and the next one's begin."""
    gaps = []
    expected = plan.start_offset
    snapshot_splits = {s.index for s in plan.splits if s.snapshot_end is not None}
    for s in stats:
        if s.index in snapshot_splits:
            continue
        if s.first_offset is not None and s.first_offset != expected:
            gaps.append(violation(expected, None, "offset_gap", file=s.name,
                                  detail=gap_detail(expected, s.first_offset)))
        if s.next_offset is not None:
            expected = s.next_offset
    return gaps
