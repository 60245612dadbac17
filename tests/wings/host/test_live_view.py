"""The live view in headless Chromium: what it shows, and that it follows the cluster by itself.

``--dump-dom`` checks the first rendering; the DevTools protocol over ``--remote-debugging-pipe``
(JSON messages ending in NUL on file descriptors 3 and 4: no WebSocket library needed) samples one
open page over time, to see it refresh without being reloaded.
"""
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, TopicPartition
from kafka.admin import NewTopic

from kraftwire.server.host.cluster import BackgroundCluster


CHROMIUM = shutil.which("chromium")
# tests/setup.sh installs Debian's chromium; on CI its absence is a failure, elsewhere a skip
pytestmark = pytest.mark.skipif(CHROMIUM is None and os.environ.get("CI") != "true",
                                reason="needs Debian's chromium (tests/setup.sh installs it)")
PARTITION_BYTES = 8_000_000
SLOW_BANDWIDTH = 100_000  # bytes/s: an 80 s copy, seen moving however loaded the machine is
FAST_BANDWIDTH = 80_000_000  # then the rest in a tenth of a second


def chromium_args(profile) -> list[str]:
    return [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={profile}"]


class Page:
    """One tab of a headless Chromium driven over the DevTools pipe."""

    def __init__(self, url: str, profile):
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()

        def wire_pipes():  # the browser reads commands on fd 3 and writes answers on fd 4
            commands, answers = os.dup(to_browser_read), os.dup(from_browser_write)
            os.dup2(commands, 3)
            os.dup2(answers, 4)

        self.process = subprocess.Popen(chromium_args(profile) + ["--remote-debugging-pipe", "about:blank"],
                                        preexec_fn=wire_pipes, pass_fds=(3, 4), stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b""
        self._ids = iter(range(1, 1_000_000))
        target = self._call("Target.createTarget", {"url": url})["targetId"]
        self._session = self._call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]

    def _call(self, method: str, params: dict, session: str | None = None) -> dict:
        message_id = next(self._ids)
        message = {"id": message_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + 30
        while True:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                answer = json.loads(raw)
                if answer.get("id") == message_id:
                    assert "error" not in answer, answer
                    return answer["result"]
            ready, _, _ = select.select([self._from_browser], [], [], max(deadline - time.monotonic(), 0))
            assert ready, f"no answer to {method}"
            chunk = os.read(self._from_browser, 1 << 16)
            assert chunk, "the browser went away"
            self._buffer += chunk

    def evaluate(self, expression: str):
        result = self._call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, self._session)
        return result["result"].get("value")

    def close(self) -> None:
        """Close the browser as a user would (it removes its temporary files then); kill it if it hangs."""
        try:
            os.write(self._to_browser, json.dumps({"id": next(self._ids), "method": "Browser.close"}).encode() + b"\0")
            self.process.wait(30)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)


@pytest.fixture
def bg(operable_cluster):
    return operable_cluster


@pytest.fixture
def admin(bg):
    client = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="live-view-test")
    yield client
    client.close()


def test_dump_dom_shows_brokers_directories_topics_and_records(tmp_path):
    with BackgroundCluster(brokers=3, log_dirs=2, control_port=0) as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap)
        admin.create_topics([NewTopic("shown", 2, 2)])
        admin.close()
        bg.run(bg.cluster.fence_broker(3))
        bg.run(bg.cluster.fail_log_dir(2, 1))
        failed = bg.call(lambda: bg.cluster.list_brokers()[1]["directories"][1]["id"])
        dom = subprocess.run(chromium_args(tmp_path) + ["--dump-dom", bg.cluster.control_server.url + "/"],
                             capture_output=True, text=True, timeout=60).stdout
    rows = {broker: dom[dom.index(f'data-broker="{broker}"'):].split("</tr>")[0] for broker in (1, 2, 3)}
    assert ">fenced<" in rows[3] and ">unfenced<" in rows[1]
    assert f"{failed} (offline)" in rows[2] and rows[1].count("(offline)") == 0
    assert 'data-partition="shown-0"' in dom and 'data-partition="shown-1"' in dom
    assert "TopicRecord" in dom and "BrokerRegistrationChangeRecord" in dom
    assert 'id="reassignments"' in dom  # the section, with nothing in progress


def test_page_follows_a_reassignment_without_reloading(bg, admin, tmp_path):
    admin.create_topics([NewTopic("moving", -1, -1, replica_assignments={0: [1]},
                                  topic_configs={"kraftwire.partition.size.bytes": str(PARTITION_BYTES)})])
    for broker in (1, 2):
        bg.run(bg.cluster.set_bandwidth(broker, SLOW_BANDWIDTH))
    page = Page(bg.cluster.control_server.url + "/", tmp_path)
    try:
        deadline = time.monotonic() + 30
        while not page.evaluate("!!document.querySelector('[data-partition=\"moving-0\"]')"):
            assert time.monotonic() < deadline, "the page never showed the topic"
            time.sleep(0.1)
        page.evaluate("window.sameDocument = true")
        admin.alter_partition_reassignments({TopicPartition("moving", 0): [2]})

        sample = ("JSON.stringify([window.sameDocument === true, "
                  "(document.querySelector('[data-reassignment=\"moving-0\"] progress') || {}).value ?? null, "
                  "document.querySelector('#throttles').textContent])")
        seen = []

        def watch_until(condition, what: str) -> str:
            deadline = time.monotonic() + 60
            while True:
                same, progress, throttles = json.loads(page.evaluate(sample))
                assert same, "the page was reloaded"
                seen.append(progress)
                if condition():
                    return throttles
                assert time.monotonic() < deadline, f"{what}: {seen}"
                time.sleep(0.1)

        watch_until(lambda: len({value for value in seen if value is not None}) >= 2, "the bar never moved")
        for broker in (1, 2):
            bg.run(bg.cluster.set_bandwidth(broker, FAST_BANDWIDTH))
        throttles = watch_until(lambda: seen[-1] is None, "the reassignment never went away")
        shown = [value for value in seen if value is not None]
        assert shown == sorted(shown)
        assert 0 < max(shown) <= PARTITION_BYTES
        assert "kraftwire.replication.bandwidth.bytes.per.second" in throttles
        replicas = page.evaluate("document.querySelector('[data-partition=\"moving-0\"]').children[3].textContent")
        assert replicas == "2"
    finally:
        page.close()


def test_throughput_charts_copies_with_their_eta_and_topic_links(tmp_path):
    """On a virtual clock, 10 simulated seconds into moving a 1 GiB partition from broker 1 to 2 and 3
    (broker 3 limited to 20 MiB/s): the charts show what each broker sends and receives, the
    reassignment lists each copy and the slowest one's time left, and a topic's link leads to its
    partitions. The page is captured as a PNG (also into $KRAFTWIRE_SCREENSHOT_DIR when set)."""
    import base64

    with BackgroundCluster(brokers=3, control_port=0, seed=1, virtual_clock=True) as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap)
        try:
            admin.create_topics([NewTopic("orders", -1, -1, replica_assignments={0: [1]},
                                          topic_configs={"kraftwire.partition.size.bytes": str(1 << 30)}),
                                 NewTopic("payments", 4, 2)])
            bg.run(bg.cluster.set_bandwidth(3, 20 << 20))
            admin.alter_partition_reassignments({TopicPartition("orders", 0): [2, 3]})
            bg.run(bg.cluster.advance(10))
        finally:
            admin.close()
        page = Page(bg.cluster.control_server.url + "/", tmp_path / "profile")
        try:
            page._call("Emulation.setDeviceMetricsOverride",
                       {"width": 1280, "height": 1100, "deviceScaleFactor": 1, "mobile": False}, page._session)
            deadline = time.monotonic() + 30
            while not page.evaluate("!!document.querySelector('#throughput figure')"):
                assert time.monotonic() < deadline, "the page never showed the charts"
                time.sleep(0.1)
            captions = page.evaluate("[...document.querySelectorAll('#throughput figcaption')]"
                                     ".map(c => c.textContent)")
            assert captions == ["broker 1: in 0 B/s, out 100.0 MiB/s", "broker 2: in 80.0 MiB/s, out 0 B/s",
                                "broker 3: in 20.0 MiB/s, out 0 B/s"]
            lines = page.evaluate("[...document.querySelectorAll('#throughput svg')].map(s => "
                                  "s.querySelectorAll('polyline').length)")
            assert lines == [2, 2, 2]
            row = "document.querySelector('[data-reassignment=\"orders-0\"]')"
            cells = page.evaluate(f"[...{row}.children].map(c => c.innerText)")
            assert cells[9] == "41.2 s"  # the copy to 3: (1024 - 200) MiB at 20 MiB/s, not the summed rate's
            assert cells[10].split("\n") == ["1→2 78% at 80.0 MiB/s", "1→3 20% at 20.0 MiB/s"]
            page.evaluate("document.querySelector('#topic-list a[href=\"#partitions-payments\"]').click()")
            assert page.evaluate("location.hash") == "#partitions-payments"
            # the element the link leads to (the view is re-rendered every half second, so look it up by id)
            assert page.evaluate("document.getElementById(location.hash.slice(1)).dataset.partition") == "payments-0"
            shot = page._call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True},
                              page._session)
        finally:
            page.close()
    png = base64.b64decode(shot["data"])
    assert png.startswith(b"\x89PNG")
    (tmp_path / "live-view.png").write_bytes(png)
    if os.environ.get("KRAFTWIRE_SCREENSHOT_DIR"):
        (Path(os.environ["KRAFTWIRE_SCREENSHOT_DIR"]) / "live-view.png").write_bytes(png)
