"""The HTML report, opened in headless Chromium: the DOM holds the three plots with their bars and
lines, and the rendered page shows them (pixels in the plot colours)."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from matplotlib import image

from kraftwire.audit import local, report
from audit_logs import scenario_log

CHROMIUM = shutil.which("chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    if CHROMIUM is None:
        pytest.fail("chromium is not installed (apt-get install chromium)")
    root = tmp_path_factory.mktemp("report")
    scenario_log(root / "log")
    result = local.run([str(root / "log")], str(root / "out"))
    page = root / "out" / "report.html"
    assert report.write_html(result) == str(page)
    browse = [CHROMIUM, *FLAGS, f"--user-data-dir={root / 'profile'}"]
    dom = subprocess.run([*browse, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    shot = root / "shot.png"
    subprocess.run([*browse, f"--screenshot={shot}", "--window-size=1200,2600", "--hide-scrollbars", page.as_uri()],
                   capture_output=True, text=True, timeout=120, check=True)
    return page.read_text(), dom.stdout, image.imread(str(shot))


def figure(dom: str, element_id: str) -> str:
    match = re.search(rf"<figure class=\"plot\" id=\"{element_id}\">(.*?)</figure>", dom, re.S)
    assert match, f"no figure {element_id} in the rendered page"
    return match.group(1)


def test_the_page_is_self_contained(rendered):
    source, _, _ = rendered
    assert not re.search(r"<(script|link|img)\b", source)
    assert not re.search(r"(src|href)=['\"]?(https?:|//)", source)


def test_gantt_chart_has_one_bar_per_reassignment_in_outcome_colours(rendered):
    _, dom, _ = rendered
    gantt = figure(dom, "reassignment-gantt")
    assert "<svg" in gantt
    bars = re.findall(r"fill: ?(#[0-9a-f]{6})", gantt.split('id="legend')[0])
    colours = report.OUTCOME_COLOURS
    assert sorted(c for c in bars if c in colours.values()) == sorted(
        [colours["completed"]] * 3 + [colours[o] for o in ("superseded", "cancelled", "running", "deleted")])
    for label in ("orders-0", "orders-1", "events-0", "scratch-0"):
        assert label in gantt


def test_duration_histogram_and_under_replicated_plot(rendered):
    _, dom, _ = rendered
    histogram = figure(dom, "duration-histogram")
    assert "duration (s)" in histogram and report.OUTCOME_COLOURS["completed"] in histogram
    assert report.OUTCOME_COLOURS["cancelled"] in histogram
    urp = figure(dom, "under-replicated")
    assert "under-replicated" in urp and "leaderless" in urp and "#e76f51" in urp
    assert "Throttles (6)" in dom and "Violations (0)" in dom


def test_the_plots_are_drawn_on_screen(rendered):
    _, _, pixels = rendered
    rgb = (pixels[:, :, :3] * 255).round().astype(int)

    def painted(colour: str) -> int:
        r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
        return int(((abs(rgb[:, :, 0] - r) < 8) & (abs(rgb[:, :, 1] - g) < 8) & (abs(rgb[:, :, 2] - b) < 8)).sum())

    assert painted(report.OUTCOME_COLOURS["completed"]) > 2000  # gantt bars, histogram, legend
    assert painted(report.OUTCOME_COLOURS["running"]) > 500  # the running bar and the URP line
    assert painted(report.OUTCOME_COLOURS["cancelled"]) > 200
