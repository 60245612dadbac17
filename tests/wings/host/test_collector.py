"""The garbage collector while a cluster runs (server/host/collector.py): tuned from start to stop, the
process's own settings back afterwards, also with two clusters overlapping.

The collector's settings are the process's, and the suite keeps a session cluster running (the pytest
plugin's ``kraftwire_clean_cluster``), so the check runs in a process of its own with no other cluster."""
from __future__ import annotations

import subprocess
import sys

CHECK = """
import asyncio, gc
from kraftwire import Cluster
from kraftwire.server.host import collector

async def main():
    own = (900, 11, 12)
    gc.set_threshold(*own)
    first = Cluster(brokers=1)
    await first.start()
    assert gc.get_threshold() == collector.THRESHOLDS, gc.get_threshold()
    assert gc.get_freeze_count() > 0  # the start-up heap is frozen
    async with Cluster(brokers=1):
        assert gc.get_threshold() == collector.THRESHOLDS
    assert gc.get_threshold() == collector.THRESHOLDS  # the first one still runs
    await first.stop()
    assert gc.get_threshold() == own, gc.get_threshold()
    assert gc.get_freeze_count() == 0
    print("checked")

asyncio.run(main())
"""


def test_a_running_cluster_tunes_the_collector_and_gives_the_settings_back():
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("checked")
