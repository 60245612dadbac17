"""Python's cyclic garbage collector, tuned while a cluster runs in the process.

A running cluster keeps hundreds of thousands of long-lived objects (the images' partition states, the
brokers' replicas), and a bulk change allocates as many short-lived ones. With CPython's default
thresholds (700, 10, 10) the collector's full passes rescan every long-lived object, tens of ms on a
10,000-partition cluster, in the middle of a write (bench/reassign.py). So, while a cluster runs: the
objects alive once it has started are frozen (``gc.freeze``: never scanned again; freed by reference
counting as before), and the young generation is collected every ``YOUNG_THRESHOLD`` allocations
rather than every 700, with full passes correspondingly rarer. The process's own settings come back,
and the frozen objects are scanned again, when the last running cluster stops.
"""
from __future__ import annotations

import gc

YOUNG_THRESHOLD = 50_000
THRESHOLDS = (YOUNG_THRESHOLD, 20, 100)

_running: set[int] = set()  # id() of every cluster started and not yet stopped
_saved: tuple[int, int, int] = gc.get_threshold()


def cluster_started(cluster: object) -> None:
    """Freeze what start-up allocated and raise the thresholds (the first running cluster saves the
    process's own)."""
    global _saved
    if not _running:
        _saved = gc.get_threshold()
        gc.set_threshold(*THRESHOLDS)
    _running.add(id(cluster))
    gc.freeze()


def cluster_stopped(cluster: object) -> None:
    """The last running cluster gives the process its settings back (a second stop changes nothing)."""
    if id(cluster) not in _running:
        return
    _running.discard(id(cluster))
    if not _running:
        gc.unfreeze()
        gc.set_threshold(*_saved)
