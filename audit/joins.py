"""The end of a replay: what joins the partitions' results with the global one. ``Digest`` gathers
what the end needs of the reassignments and RF changes; ``throttle_rows`` pairs throttle episodes with
the reassignments that needed them; ``under_replicated_rows`` sums the partitions' counts."""
from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections import Counter
from itertools import accumulate
from operator import itemgetter
from typing import TYPE_CHECKING

from kraftwire.codec.constants import ConfigResourceType
from .rows import EVERYTHING, ROW_ORDER, Window, in_window

if TYPE_CHECKING:
    from .global_replay import ThrottleEpisode

NEVER = -1 << 63  # below any timestamp


class Digest:
    """What the end of an audit needs from the reassignments and RF changes the partition replays
    write themselves; mergeable, so that each Spark task sends one back instead of the rows:

    * ``spans``: (start offset, end offset or None, end time, topic, brokers) of every reassignment,
      for the throttle join (``throttle_rows``);
    * within the window: reassignments by outcome, the durations of completed and cancelled ones, the
      ``SAMPLE`` first reassignments and RF changes (by offset), the ``LONGEST`` reassignments (a running
      one lasting to the end of the log) and the number of RF changes."""

    SAMPLE = 200
    LONGEST = 60

    def __init__(self, window: Window = EVERYTHING):
        self.window = window
        self.spans: list[tuple] = []
        self.outcomes: Counter = Counter()
        self.durations: dict[str, list] = {"completed": [], "cancelled": []}
        self.first: list[tuple] = []
        self.longest: list[tuple] = []  # (length in ms, row)
        self.rf_changes = 0
        self.rf_first: list[tuple] = []

    def add(self, reassignments: list[tuple], rf_changes: list[tuple],
            end_timestamp: int | None) -> tuple[list[tuple], list[tuple]]:
        """Take in rows; returns (reassignments, RF changes) within the window: the rows to write."""
        self.spans.extend((ra[3], ra[5], ra[6], ra[0], tuple({*ra[8], *ra[9]})) for ra in reassignments)
        shown = in_window("reassignments", reassignments, self.window)
        for ra in shown:
            self.outcomes[ra[7]] += 1
            if ra[7] in self.durations:
                self.durations[ra[7]].append(ra[15])
        self.first = heapq.nsmallest(self.SAMPLE, self.first + shown, key=ROW_ORDER["reassignments"])
        lasted = [(_lasted(ra, end_timestamp), ra) for ra in shown]
        self.longest = heapq.nlargest(self.LONGEST, self.longest + lasted, key=itemgetter(0))
        rf_shown = in_window("rf_changes", rf_changes, self.window)
        self.rf_changes += len(rf_shown)
        self.rf_first = heapq.nsmallest(self.SAMPLE, self.rf_first + rf_shown, key=ROW_ORDER["rf_changes"])
        return shown, rf_shown

    def merge(self, other: Digest) -> None:
        self.spans.extend(other.spans)
        self.outcomes.update(other.outcomes)
        for outcome, durations in other.durations.items():
            self.durations[outcome].extend(durations)
        self.first = heapq.nsmallest(self.SAMPLE, self.first + other.first, key=ROW_ORDER["reassignments"])
        self.longest = heapq.nlargest(self.LONGEST, self.longest + other.longest, key=itemgetter(0))
        self.rf_changes += other.rf_changes
        self.rf_first = heapq.nsmallest(self.SAMPLE, self.rf_first + other.rf_first, key=ROW_ORDER["rf_changes"])


def _lasted(ra: tuple, end_timestamp: int | None) -> int:
    if ra[4] is None:
        return 0
    end = ra[6] if ra[6] is not None else end_timestamp
    return 0 if end is None else end - ra[4]


class _Intervals:
    """Reassignments (start offset, end offset or None while running, end time) of one resource,
    answering "which of them overlap [first, last]" in O(log n): how many, whether one still runs,
    and the last end time among them (timestamps follow log order)."""

    def __init__(self, spans: list[tuple]):
        spans.sort(key=itemgetter(0))
        starts, ends, end_times = zip(*spans) if spans else ((), (), ())
        self.starts = starts
        self.ends = sorted(e for e in ends if e is not None)
        self.first_running = next((s for s, e in zip(starts, ends) if e is None), None)
        self.last_end_time = list(accumulate((NEVER if t is None else t for t in end_times), max))  # of spans[:i + 1]

    def overlapping(self, first: int, last: int | None) -> tuple[int, bool, int | None]:
        started = len(self.starts) if last is None else bisect_right(self.starts, last)
        count = started - bisect_left(self.ends, first)  # started by ``last``, minus those ended before ``first``
        running = self.first_running is not None and (last is None or self.first_running <= last)
        latest = self.last_end_time[started - 1] if count else NEVER
        return count, running, None if latest == NEVER else latest


def throttle_rows(episodes: list[ThrottleEpisode], spans: list[tuple], end_timestamp: int | None,
                  window: Window = EVERYTHING) -> list[tuple]:
    """One row per throttle episode (a config value, from the record that set it until it is deleted,
    set to another value or the log ends) with the reassignments that needed it: on the topic for a
    replicas list, moving to or from the broker for a rate (any broker for the cluster-wide default
    ""). A throttle that stayed after the last of them ended lingered that long; one still set at the
    end of the log with none in flight is left behind.
    ``spans`` are ``Digest.spans``."""
    throttled = {(episode.key[0], episode.key[1]) for episode in episodes}
    every = (ConfigResourceType.BROKER, "") in throttled
    by_resource: dict[tuple, list] = {resource: [] for resource in throttled}
    for start, end, end_time, topic, brokers in spans:
        span = (start, end, end_time)
        if every:
            by_resource[ConfigResourceType.BROKER, ""].append(span)
        on_topic = by_resource.get((ConfigResourceType.TOPIC, topic))
        if on_topic is not None:
            on_topic.append(span)
        for broker in brokers:
            on_broker = by_resource.get((ConfigResourceType.BROKER, str(broker)))
            if on_broker is not None:
                on_broker.append(span)
    indexes = {resource: _Intervals(found) for resource, found in by_resource.items()}
    rows = []
    for episode in episodes:
        resource_type, name, config = episode.key
        set_offset, set_time = episode.set_offset, episode.set_time
        removed_offset, removed_time = episode.removed_offset, episode.removed_time
        if not window.overlaps(set_offset, set_time, removed_offset, removed_time):
            continue
        needed, running, last_end = indexes[resource_type, name].overlapping(set_offset, removed_offset)
        until = removed_time if removed_time is not None else end_timestamp
        since = set_time if last_end is None else max(last_end, set_time)
        lingered = None if running or until is None else max(0, until - since)
        rows.append(("broker" if resource_type == ConfigResourceType.BROKER else "topic", name, config, episode.value,
                     set_offset, set_time, removed_offset, removed_time, episode.removed_by, needed, last_end, lingered,
                     removed_offset is None and not running))
    return rows


def merge_urp(into: dict[int, list], other: dict[int, list]) -> None:
    """Add the under-replicated counts of another replay (``Output.urp``) to ``into``."""
    for timestamp, (offset, under, offline) in other.items():
        entry = into.get(timestamp)
        if entry is None:
            into[timestamp] = [offset, under, offline]
        else:
            entry[0] = max(entry[0], offset)
            entry[1] += under
            entry[2] += offline


def under_replicated_rows(changes: dict[int, list], window: Window = EVERYTHING) -> list[tuple]:
    """The number of under-replicated and of leaderless partitions at every timestamp (a batch's append
    time) where one changed, with the last offset at that time."""
    rows = []
    under = offline = 0
    for timestamp in sorted(changes):
        offset, d_under, d_offline = changes[timestamp]
        under += d_under
        offline += d_offline
        if (d_under or d_offline) and window.contains(offset, timestamp):
            rows.append((offset, timestamp, under, offline))
    return rows
