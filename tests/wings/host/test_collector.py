"""The garbage collector while a cluster runs (server/host/collector.py): tuned from start to stop, the
process's own settings back afterwards, also with two clusters overlapping."""
from __future__ import annotations

import gc

from kraftwire import Cluster
from kraftwire.server.host import collector


async def test_a_running_cluster_tunes_the_collector_and_gives_the_settings_back():
    own = (900, 11, 12)
    gc.set_threshold(*own)
    first = Cluster(brokers=1)
    try:
        await first.start()
        assert gc.get_threshold() == collector.THRESHOLDS
        assert gc.get_freeze_count() > 0  # the start-up heap is frozen
        async with Cluster(brokers=1):
            assert gc.get_threshold() == collector.THRESHOLDS
        assert gc.get_threshold() == collector.THRESHOLDS  # the first one still runs
        await first.stop()
        assert gc.get_threshold() == own
        assert gc.get_freeze_count() == 0
    finally:
        gc.set_threshold(700, 10, 10)
