"""The end of an audit, whichever engine ran the replay: join the global and per-partition results,
write the small tables and ``summary.json``, and hand back what the console summary and the HTML
report show."""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from . import storage, tables
from .reader import SplitStats, gap_detail
from .replay import (BIG_TABLES, COLUMNS, GlobalReplay, Window, in_window, throttle_rows, under_replicated_rows,
                     violation)
from .splits import Plan

SMALL_TABLES = tuple(name for name in COLUMNS if name not in BIG_TABLES)
_SORT_KEYS = {
    "violations": lambda r: (r[0] if r[0] is not None else -1, r[2], r[3] or "", r[5] if r[5] is not None else -1),
    "reassignments": lambda r: (r[3], r[0] or "", r[2]),
    "rf_changes": lambda r: (r[3], r[0] or "", r[2]),
}


@dataclass
class AuditResult:
    out: str
    window: Window
    tables: dict[str, list[tuple]]  # the small tables, as written
    counts: dict[str, int]  # rows written per table, the big ones included
    log: dict = field(default_factory=dict)  # facts about the log read

    def rows(self, table: str) -> list[dict]:
        """A small table as dicts by column name."""
        return [dict(zip(COLUMNS[table], row)) for row in self.tables[table]]


def conclude(out: str, window: Window, plan: Plan, stats: list[SplitStats], glob: GlobalReplay,
             partition_rows: dict[str, list], urp: dict[int, list], record_types: Counter,
             big_counts: dict[str, int], engine: str) -> AuditResult:
    """``partition_rows`` holds the small-table rows the partition replays produced (violations of
    the global replay are in ``glob.out``); ``big_counts`` the rows written to the big tables."""
    stats = sorted(stats, key=lambda s: s.index)
    found = list(plan.findings)
    for s in stats:
        found.extend(s.findings)
    found.extend(_gaps_between(plan, stats))
    found = [f for f in found if window.contains(f[0] if f[0] is not None else -1, f[1])]
    small = {name: list(glob.out.rows[name]) + list(partition_rows.get(name, ())) for name in SMALL_TABLES}
    small["violations"] += found
    end_timestamp = max((s.max_timestamp for s in stats if s.max_timestamp is not None), default=None)
    small["throttles"] = throttle_rows(glob.episodes, small["reassignments"], end_timestamp, window)
    small["under_replicated"] = under_replicated_rows(urp, window)
    for name in ("reassignments", "rf_changes"):
        small[name] = in_window(name, small[name], window)
    for name, key in _SORT_KEYS.items():
        small[name].sort(key=key)

    writer = tables.TableWriter(out, 0)
    for name in SMALL_TABLES:
        writer.write(name, small[name])
    counts = dict(big_counts, **writer.close())
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
    summary = {"log": log, "rows": counts,
               "outcomes": dict(Counter(r[7] for r in small["reassignments"])),
               "violations": dict(Counter(r[2] for r in small["violations"])),
               "throttles_left_behind": sum(1 for r in small["throttles"] if r[-1])}
    storage.write_bytes(storage.join(out, "summary.json"), json.dumps(summary, indent=2).encode())
    return AuditResult(out, window, small, counts, log)


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
