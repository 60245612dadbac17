"""The HTML page of a ``kraftwire rehearse`` report (server/host/rehearse.py): one self-contained file,
its charts inline SVG drawn here (nothing fetched from the network, no script): per-broker replication
in/out over time, per-directory usage over time against its capacity, a Gantt of the moves, and the
findings table."""
from __future__ import annotations

import html as _html
from typing import Any

WIDTH, HEIGHT, PAD = 720, 220, 64
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")
GANTT_ROWS = 200  # moves drawn in the Gantt (the longest first); the JSON has them all
LEVEL_COLOURS = {"error": "#d62728", "warning": "#ff7f0e", "info": "#1f77b4"}


def _e(value: object) -> str:
    return _html.escape(str(value), quote=True)


def _bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"


def line_chart(title: str, series: list[tuple[str, list[float], list[float]]], unit: str,
               limits: list[tuple[str, float]] | None = None) -> str:
    """An SVG line chart: each series (name, times, values); ``limits`` horizontal lines (name, value)."""
    xs = [x for _n, t, _v in series for x in t] or [0.0]
    limits = limits or []
    ys = [y for _n, _t, v in series for y in v if y is not None] + [v for _n, v in limits] + [0.0]
    x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    y1 = max(ys) * 1.05 or 1.0
    sx = lambda x: PAD + (x - x0) / (x1 - x0) * (WIDTH - 2 * PAD)  # noqa: E731
    sy = lambda y: HEIGHT - PAD + -(y / y1) * (HEIGHT - 2 * PAD)  # noqa: E731
    height = HEIGHT + 20 * ((len(series) + 3) // 4)
    parts = [f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" role="img"'
             f'  aria-label="{_e(title)}"><title>{_e(title)}</title>',
             f'<text x="{PAD}" y="16" font-size="13" font-weight="bold">{_e(title)}</text>',
             f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" stroke="#444"/>',
             f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{HEIGHT - PAD}" stroke="#444"/>',
             f'<text x="{PAD}" y="{HEIGHT - PAD + 16}" font-size="10">{x0:.0f} s</text>',
             f'<text x="{WIDTH - PAD}" y="{HEIGHT - PAD + 16}" font-size="10" text-anchor="end">{x1:.0f} s</text>',
             f'<text x="{PAD - 4}" y="{PAD}" font-size="10" text-anchor="end">{_e(_scale(y1, unit))}</text>']
    for name, value in limits:
        parts.append(f'<line class="limit" x1="{PAD}" x2="{WIDTH - PAD}" y1="{sy(value):.1f}" y2="{sy(value):.1f}" '
                     f'stroke="#d62728" stroke-dasharray="4 3"><title>{_e(name)}</title></line>')
    for i, (name, times, values) in enumerate(series):
        points = " ".join(f"{sx(t):.1f},{sy(v):.1f}" for t, v in zip(times, values) if v is not None)
        colour = COLOURS[i % len(COLOURS)]
        parts.append(f'<polyline class="series" data-name="{_e(name)}" data-points="{len(times)}" fill="none" '
                     f'stroke="{colour}" stroke-width="1.5" points="{points}"><title>{_e(name)}</title></polyline>')
        lx, ly = PAD + (i % 4) * 160, HEIGHT - 8 + 20 * (i // 4)
        parts.append(f'<rect x="{lx}" y="{ly - 9}" width="10" height="10" fill="{colour}"/>'
                     f'<text x="{lx + 14}" y="{ly}" font-size="11">{_e(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _scale(value: float, unit: str) -> str:
    return _bytes(value) + ("/s" if unit == "B/s" else "")


def _rates(times: list[float], totals: list[float]) -> tuple[list[float], list[float]]:
    """Cumulative bytes sampled at ``times`` as the rate over each interval, at its end."""
    out_t, out_v = [], []
    for i in range(1, len(times)):
        span = times[i] - times[i - 1]
        if span > 0:
            out_t.append(times[i])
            out_v.append((totals[i] - totals[i - 1]) / span)
    return out_t, out_v


def gantt(moves: list[dict[str, Any]], total: float) -> str:
    shown = sorted(moves, key=lambda m: -((m["end"] if m["end"] is not None else total) - (m["start"] or 0.0)))
    shown = sorted(shown[:GANTT_ROWS], key=lambda m: (m["start"] or 0.0, m["topic"], m["partition"]))
    row, label = 12, 150
    height = PAD + row * len(shown) + 10
    span = total or 1.0
    sx = lambda x: label + x / span * (WIDTH - label - 10)  # noqa: E731
    parts = [f'<svg class="chart gantt" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
             f'role="img" aria-label="moves"><title>moves</title>',
             f'<text x="4" y="16" font-size="13" font-weight="bold">Moves ({len(shown)} of {len(moves)} drawn, '
             f'the longest)</text>',
             f'<text x="{label}" y="32" font-size="10">0 s</text>'
             f'<text x="{WIDTH - 10}" y="32" font-size="10" text-anchor="end">{total:.0f} s</text>']
    for i, m in enumerate(shown):
        y = PAD + i * row
        start = m["start"] or 0.0
        end = m["end"] if m["end"] is not None else total
        colour = "#d62728" if m["end"] is None else "#2ca02c"
        what = f'{m["topic"]}-{m["partition"]} {m["from"]}→{m["to"]}: ' + (
            f'{start:.1f}–{end:.1f} s' if m["end"] is not None else f'never ({m["never"] or m["error"]})')
        parts.append(f'<text x="{label - 4}" y="{y + 9}" font-size="9" text-anchor="end">'
                     f'{_e(m["topic"])}-{m["partition"]}</text>'
                     f'<rect class="move" x="{sx(start):.1f}" y="{y}" width="{max(sx(end) - sx(start), 1):.1f}" '
                     f'height="{row - 2}" fill="{colour}"><title>{_e(what)}</title></rect>')
    parts.append("</svg>")
    return "".join(parts)


def html(report: dict[str, Any]) -> str:
    total = report["simulated_seconds"]
    brokers = report["brokers"]
    inbound = [(f"broker {b} in", *_rates(s["t"], s["bytes_in"])) for b, s in brokers.items()]
    outbound = [(f"broker {b} out", *_rates(s["t"], s["bytes_out"])) for b, s in brokers.items()]
    dirs = report["directories"]
    usage = [(f"{d['broker']}:{d['index']}", d["t"], d["bytes"]) for d in dirs.values()]
    limits = [(f"capacity of {d['broker']}:{d['index']}", float(d["capacity_bytes"])) for d in dirs.values()
              if d["capacity_bytes"] is not None]
    rows = "".join(f'<tr class="{_e(f["level"])}"><td style="color:{LEVEL_COLOURS[f["level"]]}">{_e(f["level"])}</td>'
                   f'<td>{_e(f["kind"])}</td><td>{_e(f["message"])}</td></tr>' for f in report["findings"])
    dir_rows = "".join(
        f'<tr><td>{d["broker"]}:{d["index"]}</td><td>{_e(d["path"])}</td><td>{_bytes(d["peak_bytes"])} at '
        f'{d["peak_t"]:.1f} s</td><td>{"-" if d["capacity_bytes"] is None else _bytes(d["capacity_bytes"])}</td>'
        f'<td>{"online" if d["online"] else "offline" + (" (full)" if d["full"] else "")}</td></tr>'
        for d in dirs.values())
    done = report["moves_completed"]
    state = "completed" if report["completed"] else "did not complete"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>kraftwire rehearsal</title>
<style>body{{font-family:sans-serif;margin:1.5em;max-width:60em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:2px 6px;font-size:13px;text-align:left}}svg{{display:block;margin:1em 0}}
code{{font-size:12px}}</style></head><body>
<h1>Reassignment rehearsal</h1>
<p id="summary">The plan {state}: <b>{total:.1f} simulated seconds</b> ({_e(report["stopped_because"])}); {done} of
{len(report["moves"])} moves completed; throttle {report["throttle"]} B/s. Wall time {report["wall_seconds"]:.1f} s.</p>
<p><code>{_e(report["command"])}</code></p>
<h2>Findings</h2>
<table id="findings"><tr><th>level</th><th>kind</th><th>finding</th></tr>{rows}</table>
<h2>Replication per broker</h2>
{line_chart("bytes in per second (as follower)", inbound, "B/s")}
{line_chart("bytes out per second (as leader)", outbound, "B/s")}
<h2>Log directories</h2>
{line_chart("bytes held per log directory", usage, "B", limits)}
<table id="directories"><tr><th>directory</th><th>path</th><th>peak</th><th>capacity</th><th>at the end</th></tr>
{dir_rows}</table>
<h2>Moves</h2>
{gantt(report["moves"], total)}
</body></html>
"""
