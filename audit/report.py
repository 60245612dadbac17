"""What an audit says: a console summary and a self-contained HTML report.

The report is one file (``OUT/report.html``) with inline SVG plots drawn by matplotlib (no pyplot
state, no external files or scripts): a Gantt chart of reassignments, a histogram of their durations,
and under-replicated and leaderless partitions over time; then tables of outcomes, RF changes,
throttles, violations and broker events.
"""
from __future__ import annotations

import html
import io
from collections import Counter
from datetime import UTC, datetime
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

from . import storage, tables
from .joins import Digest
from .results import AuditResult

TABLE_ROWS = Digest.SAMPLE
PLOT_POINTS = 2000  # an SVG with millions of steps would not load
OUTCOME_COLOURS = {"completed": "#2a9d8f", "cancelled": "#e9c46a", "superseded": "#8d99ae", "running": "#e76f51",
                   "deleted": "#6d597a"}


def when(ms: int | None) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "Z"


def span(ms: int | None) -> str:
    if ms is None:
        return "-"
    seconds = ms / 1000
    if seconds < 120:
        return f"{seconds:.3f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def summary(result: AuditResult) -> str:
    """The audit in a few lines of text: the log, then each table's gist."""
    lines = _log_lines(result.log)
    lines += _reassignment_lines(result.digest)
    lines += _throttle_lines(result.rows("throttles"))
    lines += _violation_lines(result.rows("violations"))
    brokers = Counter(b["event"] for b in result.rows("brokers"))
    offline = sum(1 for d in result.rows("directories") if d["event"] == "offline")
    lines.append("  brokers: " + (", ".join(f"{n} {e}" for e, n in sorted(brokers.items())) or "no events")
                 + f"; {offline} directory(ies) went offline")
    urp = result.rows("under_replicated")
    if urp:
        peak = max(urp, key=lambda r: r["under_replicated"])
        lines.append(f"  under-replicated partitions: peak {peak['under_replicated']} at offset {peak['offset']}, "
                     f"{urp[-1]['under_replicated']} at the end; leaderless at the end: {urp[-1]['offline']}")
    lines.append(f"  tables in {result.out}: " + ", ".join(f"{name} {n:,}" for name, n in result.counts.items()))
    return "\n".join(lines)


def _log_lines(log: dict[str, Any]) -> list[str]:
    lines = [f"kraftwire audit ({log['engine']}): {len(log['files'])} file(s), {log['splits']} split(s)"
             + (f", starting from snapshot {log['snapshot']}" if log["snapshot"] else ""),
             f"  log: {log['records']:,} records"
             + (f", offsets {log['start_offset']}..{log['end_offset'] - 1}, {when(log['first_timestamp'])} .. "
                f"{when(log['last_timestamp'])}" if log["records"] else "")
             + f", {log['topics']} topic(s), {log['leader_changes']} leader change(s)"]
    window = log["window"]
    if window["from"] is not None or window["to"] is not None:
        lines.append(f"  reporting {window['by']} {window['from']} .. {window['to']}")
    return lines


def _reassignment_lines(digest: Digest) -> list[str]:
    outcomes = digest.outcomes
    by_outcome = ", ".join(f"{outcomes[o]} {o}" for o in OUTCOME_COLOURS if outcomes[o])
    lines = [f"  reassignments: {sum(outcomes.values())}" + (f" ({by_outcome})" if by_outcome else "")]
    durations = sorted(digest.durations["completed"])
    if durations:
        lines.append(f"    completed in: median {span(durations[len(durations) // 2])}, "
                     f"p95 {span(durations[int(len(durations) * 0.95)])}, max {span(durations[-1])}")
    lines.append(f"  replication-factor changes: {digest.rf_changes}")
    lines += [f"    {r['topic']}-{r['partition']} {r['rf_before']} -> {r['rf_after']} at offset {r['offset']} "
              f"({r['reassignment_outcome']} reassignment from offset {r['reassignment_start_offset']})"
              for r in _dicts("rf_changes", digest.rf_first[:10])]
    return lines


def _throttle_lines(throttles: list[dict[str, Any]]) -> list[str]:
    left = [t for t in throttles if t["left_behind"]]
    lines = [f"  throttles: {len(throttles)} set, {len(left)} left behind"]
    lines += [f"    {t['resource_type']} {t['resource_name']!r} {t['config']}={t['value']} "
              f"set at offset {t['set_offset']}, still set {span(t['lingered_ms'])} after the last reassignment "
              "that needed it" for t in left[:10]]
    return lines


def _violation_lines(violations: list[dict[str, Any]]) -> list[str]:
    kinds = Counter(v["kind"] for v in violations)
    by_kind = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    lines = [f"  violations: {len(violations)}" + (f" ({by_kind})" if kinds else "")]
    lines += [f"    offset {v['offset']}: {v['kind']} "
              + (f"{v['topic']}-{v['partition']} " if v["partition"] is not None else "")
              + (f"[{v['file']}@{v['position']}] " if v["file"] else "") + (v["detail"] or "") for v in violations[:20]]
    return lines


# --- HTML --------------------------------------------------------------------------------------------


def write_html(result: AuditResult) -> str:
    uri = storage.join(result.out, "report.html")
    storage.write_bytes(uri, render_html(result).encode())
    return uri


def render_html(result: AuditResult) -> str:
    log = result.log
    digest = result.digest
    total = sum(digest.outcomes.values())
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>kraftwire audit</title>", _STYLE, "</head><body>",
        "<h1>Metadata log audit</h1>",
        f"<pre>{html.escape(summary(result))}</pre>",
        "<h2>Reassignments</h2>",
        _figure("reassignment-gantt", _gantt(_dicts("reassignments", [ra for _, ra in digest.longest]),
                                             log["last_timestamp"]),
                "Reassignments over time, coloured by outcome"
                + (f" (the {len(digest.longest)} longest of {total})" if total > len(digest.longest) else "")),
        _figure("duration-histogram", _histogram(digest.durations),
                "Durations of completed and cancelled reassignments"),
        _figure("under-replicated", _under_replicated(result.rows("under_replicated"), log),
                "Under-replicated and leaderless partitions over time"),
        _table("Replication-factor changes", "rf_changes", digest.rf_first, digest.rf_changes),
        *(_table(title, name, result.tables[name], len(result.tables[name])) for title, name in (
            ("Throttles", "throttles"), ("Violations", "violations"), ("Broker events", "brokers"),
            ("Directory events", "directories"))),
        _table("Reassignments", "reassignments", digest.first, total),
        "</body></html>",
    ]
    return "\n".join(parts)


_STYLE = """<style>
body{font-family:sans-serif;margin:2em;color:#222} pre{background:#f5f5f5;padding:1em;overflow-x:auto}
table{border-collapse:collapse;font-size:12px;margin-bottom:2em} td,th{border:1px solid #ccc;padding:2px 6px}
th{background:#eee} figure{margin:1em 0} figcaption{font-style:italic;color:#555}
</style>"""


def _figure(element_id: str, svg: str, caption: str) -> str:
    return (f"<figure class='plot' id='{element_id}'>{svg}<figcaption>{html.escape(caption)}</figcaption>"
            "</figure>")


def _svg(fig: Figure) -> str:
    from matplotlib import rc_context

    buf = io.StringIO()
    with rc_context({"svg.fonttype": "none"}):
        fig.savefig(buf, format="svg", bbox_inches="tight")
    text = buf.getvalue()
    return text[text.index("<svg"):]


def _dates(values: Iterable[int]) -> Any:
    from matplotlib import dates

    return dates.date2num([datetime.fromtimestamp(v / 1000, UTC) for v in values])


def _gantt(reassignments: list[dict], end: int | None) -> str:
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    def finish(r: dict[str, Any]) -> int:  # a running reassignment lasts to the end of the log
        return r["end_time"] if r["end_time"] is not None else max(end or 0, r["start_time"])

    shown = sorted((r for r in reassignments if r["start_time"] is not None),
                   key=lambda r: (r["start_time"], r["topic"] or "", r["partition"]))
    fig = Figure(figsize=(10, max(2.0, 0.25 * len(shown) + 1)))
    ax = fig.subplots()
    if not shown:
        ax.text(0.5, 0.5, "no reassignments", ha="center", va="center", transform=ax.transAxes)
    else:
        starts = _dates([r["start_time"] for r in shown])
        ends = _dates([finish(r) for r in shown])
        widths = [max(e - s, 1 / 86_400_000) for s, e in zip(starts, ends)]  # at least 1 ms, visible
        ax.barh(range(len(shown)), widths, left=starts, color=[OUTCOME_COLOURS[r["outcome"]] for r in shown])
        ax.set_yticks(range(len(shown)), [f"{r['topic']}-{r['partition']}" for r in shown], fontsize=7)
        ax.invert_yaxis()
        ax.xaxis_date()
        fig.autofmt_xdate()
        used = [o for o in OUTCOME_COLOURS if any(r["outcome"] == o for r in shown)]
        ax.legend(handles=[Patch(color=OUTCOME_COLOURS[o], label=o) for o in used], loc="best", fontsize=8)
    ax.set_xlabel("time (UTC)")
    return _svg(fig)


def _histogram(durations: dict[str, list]) -> str:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 3.5))
    ax = fig.subplots()
    if not any(durations.values()):
        ax.text(0.5, 0.5, "no finished reassignments", ha="center", va="center", transform=ax.transAxes)
    else:
        for outcome, values in durations.items():
            if values:
                ax.hist([v / 1000 for v in values if v is not None], bins=40, alpha=0.8, label=outcome,
                        color=OUTCOME_COLOURS[outcome])
        ax.legend(fontsize=8)
    ax.set_xlabel("duration (s)")
    ax.set_ylabel("reassignments")
    return _svg(fig)


def _under_replicated(rows: list[dict], log: dict) -> str:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 3.5))
    ax = fig.subplots()
    if not rows:
        ax.text(0.5, 0.5, "no partition was ever under-replicated", ha="center", va="center", transform=ax.transAxes)
    else:
        rows = _peaks(rows)
        times = [r["timestamp"] for r in rows]
        under = [r["under_replicated"] for r in rows]
        offline = [r["offline"] for r in rows]
        if log["first_timestamp"] is not None and log["first_timestamp"] < times[0]:
            times, under, offline = [log["first_timestamp"]] + times, [0] + under, [0] + offline
        if log["last_timestamp"] is not None and log["last_timestamp"] > times[-1]:
            times, under, offline = times + [log["last_timestamp"]], under + under[-1:], offline + offline[-1:]
        x = _dates(times)
        ax.step(x, under, where="post", label="under-replicated", color="#e76f51")
        ax.step(x, offline, where="post", label="leaderless", color="#264653")
        ax.xaxis_date()
        fig.autofmt_xdate()
        ax.legend(fontsize=8)
    ax.set_xlabel("time (UTC)")
    ax.set_ylabel("partitions")
    return _svg(fig)


def _peaks(rows: list[dict], points: int = PLOT_POINTS) -> list[dict]:
    """At most about ``points`` steps: each run of consecutive rows becomes its first time with the
    highest counts of the run, so no peak disappears from the plot."""
    if len(rows) <= points:
        return rows
    size = -(-len(rows) // points)
    runs = (rows[i:i + size] for i in range(0, len(rows), size))
    return [{"timestamp": run[0]["timestamp"], "under_replicated": max(r["under_replicated"] for r in run),
             "offline": max(r["offline"] for r in run)} for run in runs]


def _dicts(table: str, rows: list[tuple]) -> list[dict]:
    return [dict(zip(tables.SCHEMAS[table].names, row)) for row in rows]


def _table(title: str, name: str, rows: list[tuple], total: int) -> str:
    """The first rows of a table (``total`` rows in all)."""
    schema = tables.SCHEMAS[name]
    timestamps = {i for i, f in enumerate(schema) if str(f.type).startswith("timestamp")}
    head = "".join(f"<th>{html.escape(f.name)}</th>" for f in schema)
    body = []
    for row in rows[:TABLE_ROWS]:
        cells = [when(v) if i in timestamps else ("" if v is None else list(v) if isinstance(v, tuple) else v)
                 for i, v in enumerate(row)]
        body.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    shown = min(len(rows), TABLE_ROWS)
    more = f"<p>{total - shown} more rows in the {name} table.</p>" if total > shown else ""
    return (f"<h2 id='{name}'>{html.escape(title)} ({total})</h2>"
            f"<table><tr>{head}</tr>{''.join(body)}</table>{more}")
