"""Mutated frames for every API at every version the brokers and the controller serve, against a live
``kraftwire serve``: it stays up, answers a fresh ApiVersions on every listener, keeps its RSS under
the bound, stops cleanly, and its metadata log verifies. Bounded by a frame count (``--fuzz-frames``,
default 6,000), seeded (``--fuzz-seed``); ``bench/fuzz.py`` runs it for a million frames and more."""
from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.fuzz_frames import FuzzRun, api_versions_ok, frames, served_versions
from tests.served import REPO, Served

RSS_BOUND = 300 * 1024 * 1024


def controller_address(served: Served) -> str:
    line = served.wait_logged("ready: brokers")
    return re.search(r"controller (\S+:\d+)", line).group(1)


def test_mutated_frames_for_every_api_and_version(tmp_path, request):
    count = request.config.getoption("--fuzz-frames")
    seed = request.config.getoption("--fuzz-seed")
    served = Served(tmp_path, "--brokers", "2", "--port", "0", "--controller-port", "0", "--data-dir", "data",
                    "--log-level", "INFO")
    try:
        targets = {address: served_versions(address) for address in
                   [*served.bootstrap.split(","), controller_address(served)]}
        combinations = sum(high - low + 1 for versions in targets.values() for low, high in versions.values())
        assert count >= combinations, f"{count} frames cannot cover {combinations} (listener, api, version)"
        run = FuzzRun(served.process.pid)
        run.send(frames(targets, seed), count)
        assert len(run.covered) == combinations
        assert served.process.poll() is None, served.logged()
        for address in targets:
            assert api_versions_ok(address), address
        assert run.max_rss < RSS_BOUND, f"RSS reached {run.max_rss >> 20} MiB"
        print(f"fuzz: {run.sent} frames (seed {seed}) over {combinations} combinations; {run.closed} connections "
              f"closed by the server; {run.answered} answered; max RSS {run.max_rss >> 20} MiB")
    finally:
        logged = served.stop()
    problems = [line for line in logged.splitlines() if " ERROR " in line or " CRITICAL " in line]
    assert not problems and "Traceback" not in logged, "\n".join(problems) or logged[logged.index("Traceback") - 500:][:3000]
    verify = subprocess.run([sys.executable, "-m", "kraftwire", "log", "verify", str(tmp_path / "data")],
                            capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert verify.returncode == 0, verify.stdout + verify.stderr
