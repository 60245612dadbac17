"""The cluster's data plane: how fast each follower copies its partition from the leader.

``ReplicationNetwork`` (one per cluster) has every out-of-sync follower copy its partition's size at a
simulated rate: the simulated bytes (``kraftwire.partition.size.bytes``) plus the real bytes of the
leader's log, whose batches it moves into the follower's log as the copy's credit covers them
(server/broker/real_bytes.py; the replica managers register how to find each replica's ``Partition``).
A leader's append sets its followers' copies going again (``leader_appended``); a copy of real bytes is
caught up only once the follower's log reaches the leader's high watermark, and the time it last was is
what the leaders' ISR lag rule reads (``last_caught_up``, ``lagging``). The rate follows Kafka's
throttles (KIP-179): a copy is throttled on the leader side when its topic's
``leader.replication.throttled.replicas`` lists partition:leader (or is ``*``), and on the follower
side when ``follower.replication.throttled.replicas`` lists partition:follower; a broker's
``leader.replication.throttled.rate`` is shared by every leader-throttled copy it sends and its
``follower.replication.throttled.rate`` by every follower-throttled copy it receives. Every copy also
shares the sending and the receiving broker's ``kraftwire.replication.bandwidth.bytes.per.second``.
Rates are max-min fair over those shared limits (``allocate_rates``) and are recomputed whenever a copy
starts or ends or a config changes; between those events they are constant, so a copy's end is known in
advance and timed exactly. Simulated time runs ``speed`` times faster than the wall clock.

Work per change is proportional to the change, not to the cluster (issue 18: two million partitions
are four million copies, nearly all caught up). Copies are kept per topic, and the copies that may still
have bytes to copy (``_copying``) apart from those that have caught up: only the former can get a rate,
so settling, rate computation and timing look at those alone. A caught-up copy is looked at again only
when something that can change its standing does: its topic's partition sizes change or the topic goes
(a commit names the topic), or it is followed again; and it is reported to its leader again when
one of its two brokers starts (found by comparing each broker's running state with the one the last
``changed`` saw). Only such copies, once found caught up, are reported to their leader again. A
copy's end is timed (one timer, for the first end due), but a change handled before that timer runs
may settle the copy past its end (in a broker process every commit settles): so the rate computation
that finds a copy that was moving caught up tells its leader, whoever called it; the timer only makes
sure one runs (issue 18: moves whose follower never joined the ISR because that end went unreported).

The network knows brokers only through what each registers with ``register_broker``: whether it is
running, and the callback that tells it, as a partition's leader, that one of its followers has caught
up. The replica managers (server/broker/replica_manager.py) call ``follow``/``unfollow``; the network
never reaches into a manager, and a manager never writes into the network's tables.

Two controls act on the data plane at run time. ``pause(broker)`` stops every copy to or from the
broker (it leads or follows) and ``resume(broker)`` lets them go on from the bytes they had; a paused
copy's rate is 0, so it stands still and its end is not timed. ``set_speed`` changes how fast simulated
time runs from now on: the simulated clock keeps counting from where it was (it never jumps), so copies
keep their bytes and only their ends are timed anew. Whoever else times copies by ``now()`` (the log
directories' future replicas) hears of both through ``add_pace_listener``.

A broker process (``kraftwire broker``) hosts only some of the brokers, each process with its own
network; ``remote_brokers`` makes the network act for a cluster spread over processes, from what every
process has alike, the committed image. A broker the network does not know (one of another process)
moves bytes while the image has it active (registered, unfenced). A follower of another process whose
partition a local broker leads is copied in simulation here too (``RemoteFollower``), at the rate
computed here, so that the leader hears when it has caught up and proposes it for the ISR; the
follower's own process copies the same partition from the same moment and grows its replica, which is
what DescribeLogDirs shows there. Each process shares the limits only among the copies it knows (its
followers' and its leaders'), so rates can differ between processes where a broker's limit is shared
by copies of several processes (README, differences).

With ``virtual_clock`` simulated time does not follow the wall clock at all: it stands still until
``run_next_timer`` moves it to the next timer (a copy's end) and runs that, so a test decides when
data moves (``Cluster.advance``). Everyone times copies with ``call_later`` in simulated seconds, which
is the event loop's timer in the normal mode and the virtual clock's in this one.
"""
from __future__ import annotations

import asyncio
import math
import time
import uuid
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol
from collections.abc import Callable

from kraftwire.codec import records as rec
from kraftwire.codec.constants import ConfigResourceType

from kraftwire.server.metadata import configs
from kraftwire.codec.message import Message
from kraftwire.server.metadata.image import MetadataImage
from . import real_bytes

if TYPE_CHECKING:
    from .replica_manager import Replica

UNLIMITED = float(configs.LONG_MAX)
THROUGHPUT_WINDOW_S = 300.0  # simulated seconds of per-broker throughput kept for the live view
CAUGHT_UP_SLACK = 0.5  # bytes: float rounding of rate x time
# After a change, rates are computed anew once the loop has run for this many times as long as the last
# computation took: a bulk change reaches the brokers as many batches, and recomputing every copy's rate
# after each of them would cost the loop quadratic time.
RECOMPUTE_SPACING = 10
_RETENTION_DEFAULTS = frozenset({"log.retention.bytes", "log.retention.ms", "log.retention.minutes",
                                 "log.retention.hours"})
_RATE_RECORDS = frozenset({rec.ConfigRecord, rec.RemoveTopicRecord})  # record types that change rates


@dataclass(eq=False, slots=True)
class RemoteFollower:
    """A follower replica of another process, as a local leader's copy to it is simulated here."""
    topic_id: uuid.UUID
    topic_name: str
    partition: int
    leader: int
    log_bytes: float = 0.0

    @property
    def key(self) -> tuple[uuid.UUID, int]:
        return self.topic_id, self.partition


class CopiedSlice(Protocol):
    def read(self) -> bytes: ...


class CopiedLog(Protocol):
    """What a copy reads of the leader's log and writes into the follower's (server/storage/: ``PartitionLog``)."""

    @property
    def log_start_offset(self) -> int: ...

    @property
    def log_end_offset(self) -> int: ...

    @property
    def size_bytes(self) -> int: ...

    @property
    def latest_epoch(self) -> int | None: ...

    @property
    def high_watermark(self) -> int: ...

    def update_high_watermark(self, offset: int) -> int: ...

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]: ...

    def read(self, offset: int, max_bytes: int, max_offset: int | None = None,
             min_one_batch: bool = True) -> CopiedSlice: ...

    def append_as_follower(self, records: bytes) -> object: ...

    def truncate_to(self, offset: int) -> object: ...

    def truncate_fully_and_start_at(self, offset: int) -> object: ...


class CopiedPartition(Protocol):
    """A hosted replica whose log holds real bytes (server/broker/partition.py)."""

    @property
    def log(self) -> CopiedLog:
        """Opened on first use."""
        ...

    @property
    def leader_epoch(self) -> int: ...

    @property
    def high_watermark(self) -> int: ...

    @property
    def opened(self) -> bool:
        """Whether its log is open (a replica nothing was written to or read from has none yet)."""
        ...

    def follower_fetched(self, broker_id: int, log_end_offset: int, now_ms: int | None = None,
                         log_start_offset: int | None = None) -> None: ...

    def follower_high_watermark(self, leader_high_watermark: int) -> None: ...

    def follower_offsets(self) -> dict[int, tuple[int, int]]: ...

    @property
    def epoch_start_offset(self) -> int: ...


@dataclass(slots=True)
class ReplicationBytes:
    """The bytes (simulated and real alike) a broker's copies have moved since the network was built:
    received as a follower, sent as a leader, and of those the copies to replicas being added by a
    reassignment (Kafka's ReplicationBytesIn/Out and ReassignmentBytesIn/Out)."""

    bytes_in: float = 0.0
    bytes_out: float = 0.0
    reassignment_in: float = 0.0
    reassignment_out: float = 0.0


def _no_partition(key: tuple[uuid.UUID, int]) -> CopiedPartition | None:
    return None


@dataclass(frozen=True)
class _Member:
    """A broker as the network sees it (``register_broker``)."""

    is_running: Callable[[], bool]
    on_follower_caught_up: Callable[[tuple[uuid.UUID, int]], None]
    partition_of: Callable[[tuple[uuid.UUID, int]], CopiedPartition | None] = _no_partition
    data_arrived: Callable[[tuple[uuid.UUID, int]], None] = lambda key: None


@dataclass(eq=False, slots=True)
class Copy:
    """A follower replica fetching its partition from the leader. ``started_at`` and ``finished_at`` are
    the simulated times it first moved bytes and came to hold the whole partition (None until then),
    worked out from the rates: exact however late the event loop gets round to them."""

    replica: Replica | RemoteFollower
    follower: int
    size: float | None = None  # the partition's, once rates are computed (0 is a size: an empty partition)
    rate: float = 0.0
    started_at: float | None = None
    finished_at: float | None = None


class _Copies(Mapping[tuple[uuid.UUID, int, int], Copy]):
    """Every copy, keyed by (topic id, partition, follower): a read-only view of the per-topic tables."""

    def __init__(self, topics: dict[uuid.UUID, dict[tuple[int, int], Copy]]):
        self._topics = topics

    def __getitem__(self, key: tuple[uuid.UUID, int, int]) -> Copy:
        return self._topics[key[0]][key[1], key[2]]

    def __iter__(self) -> Iterator[tuple[uuid.UUID, int, int]]:
        for topic_id, copies in self._topics.items():
            for partition, follower in copies:
                yield topic_id, partition, follower

    def __len__(self) -> int:
        return sum(map(len, self._topics.values()))


def _key(copy: Copy) -> tuple[uuid.UUID, int, int]:
    return copy.replica.topic_id, copy.replica.partition, copy.follower


def allocate_rates(demands: dict, capacities: dict) -> dict:
    """Max-min fair rates: ``demands`` maps each flow to the limits it goes through, ``capacities``
    each limit to its bytes/s. Repeatedly the limit with the smallest fair share fixes that share for
    all its flows, whose use is taken off the other limits they cross. Flows through the same limits
    get the same share, so they are counted as one class (a bulk move is thousands of flows, one class)."""
    classes: dict[tuple, list] = {}
    for flow, limits in demands.items():
        classes.setdefault(tuple(limits), []).append(flow)
    users: dict = {}  # limit -> the classes through it
    flows: dict = {}  # limit -> how many flows of those classes
    for limits, members in classes.items():
        for limit in limits:
            users.setdefault(limit, set()).add(limits)
            flows[limit] = flows.get(limit, 0) + len(members)
    remaining = dict(capacities)
    rates = {}
    while users:
        limit = min(users, key=lambda user: remaining[user] / flows[user])
        share = max(remaining[limit], 0.0) / flows[limit]
        for cls in users.pop(limit):
            members = classes[cls]
            for flow in members:
                rates[flow] = share
            for other in cls:
                if other in users:
                    users[other].discard(cls)
                    remaining[other] -= share * len(members)
                    flows[other] -= len(members)
                    if not users[other]:
                        del users[other]
    return rates


def _checked_speed(speed: object) -> float:
    if isinstance(speed, bool) or not isinstance(speed, (int, float)) or not math.isfinite(speed) or speed <= 0:
        raise ValueError("the speed must be a positive number")
    return float(speed)


def topic_sizes(image: MetadataImage, topic_name: str) -> tuple[dict[int, int], int]:
    """A topic's simulated partition sizes: those ``kraftwire.partition.sizes.bytes`` lists, and
    ``kraftwire.partition.size.bytes`` for the others."""
    dynamic = image.topic_configs(topic_name)
    listed = dynamic.get(configs.PARTITION_SIZES_BYTES)
    size = configs.topic_value(dynamic, image.broker_configs(""), configs.PARTITION_SIZE_BYTES)
    assert isinstance(size, int)  # a LONG config
    return configs.partition_sizes(listed) if listed else {}, size


def partition_size(image: MetadataImage, topic_name: str, partition: int) -> int:
    listed, default = topic_sizes(image, topic_name)
    return listed.get(partition, default)


def topic_rates(image: MetadataImage, topic_name: str) -> tuple[dict[int, int], int]:
    """A topic's simulated produce rates per partition (bytes/s): those ``kraftwire.partition.ingress.rates``
    lists, and ``kraftwire.partition.ingress.bytes.per.sec`` for the others."""
    dynamic = image.topic_configs(topic_name)
    listed = dynamic.get(configs.INGRESS_RATES)
    rate = configs.topic_value(dynamic, image.broker_configs(""), configs.INGRESS_BYTES_PER_SEC)
    assert isinstance(rate, int)  # a LONG config
    return configs.partition_rates(listed) if listed else {}, rate


@dataclass(slots=True)
class TopicIngress:
    """A topic's simulated produce traffic: each partition's log grows at its rate from its configured
    size, up to the retention bound (``retention.bytes``, and ``retention.ms`` times the rate; Kafka deletes
    whole segments, so its log overshoots the bound by up to a segment). ``grown`` is what each partition
    had grown by at ``since`` (the last change of these configs); a size config set anew starts it again."""

    rates: tuple[dict[int, int], int]
    sizes: tuple[dict[int, int], int]
    retention_bytes: int
    retention_ms: int
    since: float
    grown: dict[int, float]

    def rate(self, partition: int) -> float:
        listed, default = self.rates
        return float(listed.get(partition, default))

    def base(self, partition: int) -> float:
        listed, default = self.sizes
        return float(listed.get(partition, default))

    def bound(self, partition: int) -> float:
        """The most the partition's log holds under retention (the size it stops growing at)."""
        rate, bound = self.rate(partition), math.inf
        if rate > 0 and self.retention_bytes >= 0:
            bound = float(self.retention_bytes)
        if rate > 0 and self.retention_ms >= 0:
            bound = min(bound, rate * self.retention_ms / 1000)
        return bound

    def grown_at(self, partition: int, at: float) -> float:
        """Bytes the partition's log holds at simulated time ``at`` beyond its configured size (negative
        where retention bounds it below that size)."""
        base = self.base(partition)
        grown = self.grown.get(partition, 0.0) + self.rate(partition) * max(at - self.since, 0.0)
        return min(base + grown, self.bound(partition)) - base if self.rate(partition) > 0 else grown

    @staticmethod
    def read(image: MetadataImage, topic_name: str, at: float, before: TopicIngress | None,
             partitions: Iterable[int], resized: bool) -> TopicIngress | None:
        """The topic's ingress from its configs at ``at``, carrying on from ``before`` (None: no ingress)."""
        rates = topic_rates(image, topic_name)
        grown = {} if before is None or resized else {
            p: g for p in partitions if (g := before.grown_at(p, at))}
        if not any(rates[0].values()) and not rates[1] and not grown:
            return None
        dynamic, defaults = image.topic_configs(topic_name), image.broker_configs("")
        retention_bytes = configs.topic_value(dynamic, defaults, "retention.bytes")
        retention_ms = configs.topic_value(dynamic, defaults, "retention.ms")
        assert isinstance(retention_bytes, int) and isinstance(retention_ms, int)  # LONG configs
        return TopicIngress(rates, topic_sizes(image, topic_name), retention_bytes, retention_ms, at, grown)


Throttled = Literal["all"] | frozenset[tuple[int, int]]  # a topic's throttled (partition, broker) replicas


class _Limits:
    """The configs copies are limited by, read once per rate computation."""

    def __init__(self, image: MetadataImage):
        self.image = image
        self._brokers: dict[tuple[int, str], float] = {}
        self._topics: dict[str, list[Throttled]] = {}  # leader-, follower-throttled replicas
        self._sizes: dict[str, tuple[dict[int, int], float]] = {}

    def broker(self, broker_id: int, name: str) -> float:
        key = (broker_id, name)
        if key not in self._brokers:
            value = configs.broker_value(self.image.broker_configs(str(broker_id)), self.image.broker_configs(""), name)
            assert isinstance(value, (int, float))  # the numeric configs the network reads
            self._brokers[key] = float(value)
        return self._brokers[key]

    def topic(self, topic_name: str) -> list[Throttled]:
        """(leader-throttled replicas, follower-throttled replicas) of a topic."""
        if topic_name not in self._topics:
            dynamic = self.image.topic_configs(topic_name)
            self._topics[topic_name] = [configs.throttled_replicas(dynamic[name]) if dynamic.get(name) else frozenset()
                                        for name in (configs.LEADER_THROTTLED_REPLICAS,
                                                     configs.FOLLOWER_THROTTLED_REPLICAS)]
        return self._topics[topic_name]

    def size(self, topic_name: str, partition: int) -> float:
        """A partition's size; the topic's default is one float object, shared by the copies that keep it."""
        if topic_name not in self._sizes:
            listed, whole = topic_sizes(self.image, topic_name)
            self._sizes[topic_name] = listed, float(whole)
        listed, default = self._sizes[topic_name]
        size = listed.get(partition)
        return default if size is None else float(size)

    @staticmethod
    def throttled(listed: Throttled, partition: int, broker_id: int) -> bool:
        return listed == "all" or (partition, broker_id) in listed


class _VirtualTimer:
    """A timer of the virtual clock, run by ``ReplicationNetwork.run_next_timer``."""

    def __init__(self, when: float, callback: Callable[[], None]):
        self.when, self.callback, self.cancelled = when, callback, False

    def cancel(self) -> None:
        self.cancelled = True


Timer = asyncio.TimerHandle | _VirtualTimer  # what ``ReplicationNetwork.call_later`` returns


class ReplicationNetwork:
    """The cluster's simulated data plane (see the module docstring)."""

    def __init__(self, image_source: Callable[[], MetadataImage], speed: float = 1.0, virtual_clock: bool = False,
                 remote_brokers: bool = False):
        self._speed = _checked_speed(speed)
        self._clock_origin = (0.0, 0.0)  # (loop time, simulated time) from which now() counts at speed
        self._virtual_now: float | None = 0.0 if virtual_clock else None
        self._virtual_timers: list[_VirtualTimer] = []
        self._paused: set[int] = set()
        self._pace_listeners: list = []
        self._rate_listeners: list[Callable[[], None]] = []
        self._image = image_source
        self._remote_brokers = remote_brokers
        self._members: dict[int, _Member] = {}
        self._topics: dict[uuid.UUID, dict[tuple[int, int], Copy]] = {}  # topic id -> (partition, follower) -> copy
        self.copies: Mapping[tuple[uuid.UUID, int, int], Copy] = _Copies(self._topics)
        # the copies that may have bytes left (the others have caught up): an insertion-ordered set, so
        # that rates are computed in the same order on every run
        self._copying: dict[Copy, None] = {}
        self._running_seen: dict[int, bool] = {}  # each broker's running state as the last changed() saw it
        # the image the last commit was applied to (a snapshot replaces it)
        self._image_seen: MetadataImage | None = None
        self._settled_at: float | None = None
        self._timer: Timer | None = None
        self._recompute_scheduled = False
        self._recompute_cost = 0.0  # loop seconds the last rate computation took
        self._followed: list[Copy] = []  # copies (re)started since the last recompute
        self._real: dict[Copy, real_bytes.RealCopy] = {}  # copies whose two replicas have logs with real bytes
        self._caught_up_at: dict[Copy, float] = {}  # when each copy with real bytes last held everything
        # (simulated time, {broker: (bytes/s received, bytes/s sent)}) at every change, oldest first
        self._replicated: dict[int, ReplicationBytes] = {}  # by broker: what its copies moved
        self._throughput: deque[tuple[float, dict[int, tuple[float, float]]]] = deque()
        self._ingress: dict[uuid.UUID, TopicIngress] = {}  # the topics with simulated produce traffic
        # copies of those topics that are behind: the limits they go through (for "never"'s reason)
        self._routes: dict[Copy, tuple] = {}
        self._capacities: dict[object, float] = {}  # every limit's bytes/s at the last rate computation
        # how long a change waits for its rate computation, in times the last one's cost (RECOMPUTE_SPACING);
        # on the virtual clock the wait is wall time alone, and ``kraftwire rehearse`` makes it shorter
        self.recompute_spacing: float = RECOMPUTE_SPACING

    def register_broker(self, broker_id: int, is_running: Callable[[], bool],
                        on_follower_caught_up: Callable[[tuple[uuid.UUID, int]], None],
                        partition_of: Callable[[tuple[uuid.UUID, int]], CopiedPartition | None] = _no_partition,
                        data_arrived: Callable[[tuple[uuid.UUID, int]], None] = lambda key: None) -> None:
        """A broker joins the data plane: ``is_running()`` says whether it moves bytes now,
        ``on_follower_caught_up(key)`` is called on a partition's leader when a follower may have caught up,
        ``partition_of(key)`` finds its hosted replica whose log holds the partition's real bytes, and
        ``data_arrived(key)`` is told when real bytes reached one of its replicas or moved its high watermark."""
        self._members[broker_id] = _Member(is_running, on_follower_caught_up, partition_of, data_arrived)

    def hosts(self, broker_id: int) -> bool:
        """Whether the broker is one of this process's (registered here), whose copies this network moves."""
        return broker_id in self._members

    @property
    def speed(self) -> float:
        """How many simulated seconds pass in one second of the wall clock."""
        return self._speed

    def now(self) -> float:
        """Simulated seconds."""
        if self._virtual_now is not None:
            return self._virtual_now
        return self._simulated_at(asyncio.get_running_loop().time())

    @property
    def virtual_clock(self) -> bool:
        return self._virtual_now is not None

    def call_later(self, simulated_seconds: float, callback: Callable[[], None]) -> Timer:
        """Call ``callback`` once that many simulated seconds have passed; returns a handle to ``cancel``."""
        if self._virtual_now is None:
            return asyncio.get_running_loop().call_later(max(simulated_seconds, 0.0) / self._speed, callback)
        timer = _VirtualTimer(self._virtual_now + max(simulated_seconds, 0.0), callback)
        self._virtual_timers.append(timer)
        return timer

    def run_next_timer(self, until: float) -> bool:
        """Virtual clock: move to the earliest timer due by ``until`` and run it; False if there is none."""
        self._virtual_timers = [t for t in self._virtual_timers if not t.cancelled]
        due = min(self._virtual_timers, key=lambda t: t.when, default=None)
        if due is None or due.when > until:
            return False
        self._virtual_timers.remove(due)
        assert self._virtual_now is not None  # a virtual clock's
        self._virtual_now = max(self._virtual_now, due.when)
        due.callback()
        return True

    def run_timers_coalesced(self, until: float) -> None:
        """Virtual clock: run every timer due by ``until`` in time order, but the copies' ends: those due
        are handled once, at ``until`` (settled, rates computed anew, leaders told). Each copy's end is
        still exact (``finished_at``, from the rates); what the copies that ended leave of a shared limit
        goes to the others from ``until`` on, not from their ends: the price of one rate computation per
        step instead of one per copy's end (``kraftwire rehearse`` steps so)."""
        assert self._virtual_now is not None  # a virtual clock's
        ended = False
        while True:
            self._virtual_timers = [t for t in self._virtual_timers if not t.cancelled]
            due = min(self._virtual_timers, key=lambda t: t.when, default=None)
            if due is None or due.when > until:
                break
            self._virtual_timers.remove(due)
            self._virtual_now = max(self._virtual_now, due.when)
            if due is self._timer:
                self._timer, ended = None, True
            else:
                due.callback()
        self._virtual_now = max(self._virtual_now, until)
        if ended:
            self._tick()
        else:
            self._settle()

    def move_clock_to(self, until: float) -> None:
        """Virtual clock: let simulated time reach ``until`` (timers due by then must have run)."""
        self._settle()
        assert self._virtual_now is not None  # a virtual clock's
        self._virtual_now = max(self._virtual_now, until)
        self._settle()

    @property
    def finishing(self) -> bool:
        """A copy is due to catch up at the current rates (its end is timed)."""
        timer = self._timer
        if timer is None:
            return False
        return not (timer.cancelled if isinstance(timer, _VirtualTimer) else timer.cancelled())

    @property
    def idle(self) -> bool:
        """No change of copies waits to be accounted for in this turn of the event loop."""
        return not self._recompute_scheduled

    def _simulated_at(self, loop_time: float) -> float:
        origin_loop_time, origin = self._clock_origin
        return origin + (loop_time - origin_loop_time) * self._speed

    def set_speed(self, speed: float) -> None:
        """Run simulated time ``speed`` times faster than the wall clock from now on; the simulated
        clock goes on from where it is, and every copy's end is timed again."""
        speed = _checked_speed(speed)
        loop_time = asyncio.get_running_loop().time()
        self._clock_origin = (loop_time, self._simulated_at(loop_time))
        self._speed = speed
        self._pace_changed()

    def is_paused(self, broker_id: int) -> bool:
        return broker_id in self._paused

    def pause(self, broker_id: int) -> None:
        """Stop every copy to or from ``broker_id`` where it stands, until ``resume``."""
        if broker_id not in self._paused:
            self._paused.add(broker_id)
            self._pace_changed()

    def resume(self, broker_id: int) -> None:
        if broker_id in self._paused:
            self._paused.discard(broker_id)
            self._pace_changed()

    def add_pace_listener(self, listener: Callable[[], None]) -> None:
        """``listener()`` is called after a pause, a resume or a speed change, to settle and time anew
        other copies timed by ``now()``."""
        self._pace_listeners.append(listener)

    def add_rate_listener(self, listener: Callable[[], None]) -> None:
        """``listener()`` is called after every rate computation (the log directories' capacity watch)."""
        self._rate_listeners.append(listener)

    def growth_rate(self, key: tuple[uuid.UUID, int], broker_id: int, leads: bool) -> float:
        """At most how fast a broker's replica grows now (bytes per simulated second): a copy's rate while
        it is behind, else its partition's ingress (a leader's log, an in-sync follower keeping up)."""
        copies = self._topics.get(key[0])
        copy = copies.get((key[1], broker_id)) if copies is not None and not leads else None
        if copy is not None and copy in self._copying:
            return copy.rate
        return self.ingress_rate(key)

    def _pace_changed(self) -> None:
        self.changed()  # settles at the rates the copies still carry (those before the change), then rates anew
        for listener in self._pace_listeners:
            listener()

    def settle(self) -> None:
        """Bring every copying replica's bytes up to now (before reading replica sizes)."""
        self._settle()

    # --- who copies what --------------------------------------------------------------------------

    def follow(self, follower: int, replica: Replica) -> None:
        """``follower`` hosts ``replica`` as a follower: copy until it has the whole partition."""
        self._before_change()
        copies = self._topics.setdefault(replica.topic_id, {})
        copy = copies.get((replica.partition, follower))
        if copy is None:
            copy = copies[replica.partition, follower] = Copy(replica, follower)
        copy.replica = replica
        self._copying[copy] = None  # looked at by the next rate computation, whatever it holds
        self._followed.append(copy)

    def unfollow(self, follower: int, key: tuple[uuid.UUID, int]) -> None:
        copies = self._topics.get(key[0])
        copy = copies.pop((key[1], follower), None) if copies is not None else None
        if copy is not None:
            self._before_change()
            self._copying.pop(copy, None)
            self._real.pop(copy, None)
            self._caught_up_at.pop(copy, None)
            if not copies:
                del self._topics[key[0]]

    def _drop(self, copy: Copy) -> None:
        """Forget a copy (already taken out of its topic's table, or to be taken out here)."""
        self._copying.pop(copy, None)
        self._real.pop(copy, None)
        self._caught_up_at.pop(copy, None)
        topic_id = copy.replica.topic_id
        copies = self._topics.get(topic_id)
        if copies is not None:
            if copies.get((copy.replica.partition, copy.follower)) is copy:
                del copies[copy.replica.partition, copy.follower]
            if not copies:
                del self._topics[topic_id]

    def _before_change(self) -> None:
        """Settle at the old rates once, then recompute the rates once, after every change made in
        this turn of the event loop (one committed batch may start thousands of copies)."""
        if not self._recompute_scheduled:
            self._settle()
            self._recompute_scheduled = True
            asyncio.get_running_loop().call_later(self._recompute_cost * self.recompute_spacing, self._recompute)

    def _recompute(self) -> None:
        started = time.perf_counter()
        self._recompute_scheduled = False
        self._settle()
        self._reschedule()
        self._recompute_cost = time.perf_counter() - started
        followed, self._followed = self._followed, []
        # a replica that already holds everything (e.g. after a restart); one given a rate still copies
        for copy in followed:
            if not copy.rate and self.caught_up(copy.replica.topic_id, copy.replica.partition, copy.follower):
                self._tell_leader(copy)

    def caught_up(self, topic_id: uuid.UUID, partition: int, follower: int) -> bool:
        copies = self._topics.get(topic_id)
        copy = copies.get((partition, follower)) if copies is not None else None
        return (copy is not None and copy.size is not None and copy.replica.log_bytes >= copy.size - CAUGHT_UP_SLACK
                and self._running(follower) and self._real_caught_up(copy))

    def _real_caught_up(self, copy: Copy) -> bool:
        """A copy of real bytes has caught up only once the follower's log reaches the leader's high
        watermark (Kafka's ``isFollowerInSync``): the credit it was given may predate the leader's last appends."""
        if isinstance(copy.replica, RemoteFollower):
            return self._remote_caught_up(copy)
        if copy not in self._real:
            return True
        key = copy.replica.key
        leader, replica = self._partition_of(copy.replica.leader, key), self._partition_of(copy.follower, key)
        if leader is None or replica is None or not leader.opened:
            return True
        return replica.opened and replica.log.log_end_offset >= leader.high_watermark

    def _remote_caught_up(self, copy: Copy) -> bool:
        """A follower of another process, which fetches the real bytes over TCP (server/broker/replica_fetcher.py),
        has caught up once its last fetch reached the leader's high watermark and the start of the leader's
        epoch (Kafka's ``isFollowerInSync`` at ISR expansion); a leader whose log is not open has no real bytes."""
        leader = self._partition_of(copy.replica.leader, copy.replica.key)
        if leader is None or not leader.opened:
            return True
        reported = leader.follower_offsets().get(copy.follower)
        return reported is not None and reported[0] >= leader.high_watermark \
            and reported[0] >= leader.epoch_start_offset

    def changed(self, topics: Iterable[uuid.UUID] = ()) -> None:
        """Something rates depend on changed (configs, topics, a broker stopped or started): settle at
        the old rates and compute them anew. The copies of ``topics`` (whose partition sizes changed,
        or which are gone) are looked at again, and the leader of each of those and of the copies to or
        from a broker that started since the last call is told if the copy has caught up."""
        self._examine(self._copies_of_topics(topics), self._copies_of_started_brokers())

    def _examine(self, resized: list[Copy], retold: Iterable[Copy] = ()) -> None:
        """Settle, compute rates anew with the ``resized`` copies looked at again (whether they still
        have bytes to copy), then tell the leader of each of these and the ``retold`` that has caught up
        (a broker's start or stop changes no copy's bytes: only whether it can be reported)."""
        self._settle()
        for copy in resized:
            self._copying[copy] = None
        self._reschedule()
        for copy in dict.fromkeys(resized + list(retold)):
            if self.caught_up(*_key(copy)):
                self._tell_leader(copy)

    def _copies_of_topics(self, topic_ids: Iterable[uuid.UUID]) -> list[Copy]:
        return [copy for topic_id in set(topic_ids) for copy in self._topics.get(topic_id, {}).values()]

    def _copies_of_started_brokers(self) -> list[Copy]:
        """The copies to or from a broker that runs now and did not when the last call looked (every copy
        is walked, but only then). A broker that stopped needs none: a copy to it has not caught up,
        and one from it has nobody to tell."""
        brokers = set(self._members)
        if self._remote_brokers:
            brokers |= set(self._image().brokers)
        now = {b: self._running(b) for b in brokers}
        started = {b for b, running in now.items() if running and not self._running_seen.get(b)}
        self._running_seen = now
        if not started:
            return []
        return [copy for copies in self._topics.values() for copy in copies.values()
                if copy.follower in started or copy.replica.leader in started]

    def on_commit(self, committed: list[tuple[int, Message]]) -> None:
        """Controller commit listener: configs and topic removals change rates; partition sizes and
        removals change which copies have caught up (a snapshot loaded in place of the image, all of them)."""
        image = self._image()
        replaced, self._image_seen = image is not self._image_seen and self._image_seen is not None, image
        if replaced:
            self._examine([copy for copies in self._topics.values() for copy in copies.values()])
        topics, new_topics, rates = set(), set(), False
        grown, resized = self._ingress_changes(image, committed)
        if grown or replaced:
            self._refresh_ingress(grown | (set(image.topics) if replaced else set()), resized)
        record: Any  # the record types looked at below
        for _, record in committed:
            kind = type(record)
            if kind in _RATE_RECORDS:
                rates = True
            if kind is rec.TopicRecord:  # its copies are new: looked at when followed
                new_topics.add(record.topic_id)
            elif kind is rec.RemoveTopicRecord:
                topics.add(record.topic_id)
            elif kind is rec.ConfigRecord and record.name in configs.SIZE_CONFIGS:
                topic_id = image.topic_ids.get(record.resource_name)  # size configs are topic configs only
                if topic_id is not None:
                    topics.add(topic_id)
        topics -= new_topics
        topics |= grown - new_topics
        if self._remote_brokers:
            created = self._follow_remote_followers()
            self._examine(self._copies_of_topics(topics), self._copies_of_started_brokers() + created)
        elif rates:
            self.changed(topics)

    def _ingress_changes(self, image: MetadataImage, committed: list[tuple[int, Message]]
                         ) -> tuple[set[uuid.UUID], set[uuid.UUID]]:
        """The topics whose ingress a commit may change (their rate, retention or size configs; every topic
        with ingress for the cluster's retention defaults), and those of them whose size was set."""
        grown: set[uuid.UUID] = set()
        resized: set[uuid.UUID] = set()
        for _, record in committed:
            if type(record) is not rec.ConfigRecord:
                continue
            if record.resource_type == ConfigResourceType.TOPIC and record.name in configs.INGRESS_CONFIGS:
                topic_id = image.topic_ids.get(record.resource_name)
                if topic_id is not None:
                    grown.add(topic_id)
                    if record.name in configs.SIZE_CONFIGS:
                        resized.add(topic_id)
            elif record.resource_type == ConfigResourceType.BROKER and record.name in _RETENTION_DEFAULTS:
                grown |= set(self._ingress)
        return grown, resized

    # --- progress -----------------------------------------------------------------------------

    def progress(self) -> list[dict]:
        """Every follower copy: bytes moved and left (0 once caught up), and its current rate (bytes/s
        of simulated time)."""
        self._settle()
        return [self._progress_of(c) for copies in self._topics.values() for c in copies.values()]

    def _progress_of(self, copy: Copy) -> dict:
        """A copy's progress: ``ingress`` is its partition's produce rate, ``seconds_left`` the simulated
        time until it catches up at the current rates (None if it does not move or never will), ``never``
        why it never will (its rate not above the ingress), else None."""
        left = max(int(copy.size or 0) - int(copy.replica.log_bytes), 0)
        ingress = self._ingress_rate(copy)
        never = self.never_reason(copy) if left else None
        seconds = 0.0 if not left else left / (copy.rate - ingress) if copy.rate > ingress else None
        return {"topic": copy.replica.topic_name, "partition": copy.replica.partition, "follower": copy.follower,
                "leader": copy.replica.leader, "bytes_moved": int(copy.replica.log_bytes), "bytes_left": left,
                "rate": copy.rate, "ingress": ingress, "seconds_left": seconds, "never": never}

    def throughput(self) -> dict:
        """Each broker's replication throughput over the last ``THROUGHPUT_WINDOW_S`` simulated seconds:
        rates are constant between changes, so the changes alone (``[time, {broker: [received, sent]}]``,
        bytes per simulated second) describe it exactly; the first may lie before the window."""
        return {"now": self.now(), "window_seconds": THROUGHPUT_WINDOW_S,
                "changes": [[at, {b: list(r) for b, r in rates.items()}] for at, rates in self._throughput]}

    def replication_bytes(self, broker_id: int) -> ReplicationBytes:
        """What the copies of a broker hosted here have moved so far (settled to now)."""
        self._settle()
        return self._replicated.get(broker_id) or ReplicationBytes()

    def _account(self, copy: Copy, moved: float) -> None:
        """Count ``moved`` bytes of a copy on its two brokers, those hosted here; as in Kafka, a copy
        to a replica the partition is adding also counts as reassignment traffic."""
        if not moved > 0:
            return
        replica, follower = copy.replica, copy.follower
        if isinstance(replica, RemoteFollower):
            topic = self._image().topics.get(replica.topic_id)
            state = topic.partitions.get(replica.partition) if topic is not None else None
            adding = state is not None and follower in state.adding
        else:
            adding = follower in replica.adding
        if follower in self._members:
            counts = self._replicated.get(follower) or self._replicated.setdefault(follower, ReplicationBytes())
            counts.bytes_in += moved
            counts.reassignment_in += moved if adding else 0.0
        leader = replica.leader
        if leader in self._members:
            counts = self._replicated.get(leader) or self._replicated.setdefault(leader, ReplicationBytes())
            counts.bytes_out += moved
            counts.reassignment_out += moved if adding else 0.0

    def _record_throughput(self) -> None:
        rates: dict[int, tuple[float, float]] = {}
        for copy in self._copying:
            if copy.rate > 0:
                received, sent = rates.get(copy.follower, (0.0, 0.0))
                rates[copy.follower] = (received + copy.rate, sent)
                received, sent = rates.get(copy.replica.leader, (0.0, 0.0))
                rates[copy.replica.leader] = (received, sent + copy.rate)
        if self._throughput and self._throughput[-1][1] == rates:
            return
        now = self._settled_at if self._settled_at is not None else 0.0
        self._throughput.append((now, rates))
        while len(self._throughput) > 1 and self._throughput[1][0] <= now - THROUGHPUT_WINDOW_S:
            self._throughput.popleft()

    # --- the clock ------------------------------------------------------------------------------

    def _settle(self) -> None:
        """Account the bytes moved since the last settlement at the rates in force."""
        try:
            now = self.now()
        except RuntimeError:
            return
        if now == self._settled_at:
            return  # nothing moved since (the virtual clock stood still, or settled already)
        advanced: list[Copy] = []
        if self._settled_at is not None:
            elapsed = now - self._settled_at
            if self._ingress and elapsed > 0:
                self._settle_ingress(self._settled_at, now, advanced)
            ingress = self._ingress  # (most rehearsals have none: no topic id hashed then, in Python)
            for copy in self._copying:
                if copy.rate and (not ingress or copy.replica.topic_id not in ingress):
                    left = copy.size - copy.replica.log_bytes  # type: ignore[operator]  # a copying one is sized
                    if copy.finished_at is None and copy.rate * elapsed >= left - CAUGHT_UP_SLACK:
                        copy.finished_at = self._settled_at + max(left, 0.0) / copy.rate
                    had = copy.replica.log_bytes
                    copy.replica.log_bytes = min(copy.size, copy.replica.log_bytes  # type: ignore[type-var, assignment]
                                                 + copy.rate * elapsed)  # (as above)
                    self._account(copy, copy.replica.log_bytes - had)
                    if copy in self._real and elapsed > 0:
                        advanced.append(copy)
        self._settled_at = now
        for copy in advanced:
            self._copy_real(copy)

    def _settle_ingress(self, since: float, now: float, advanced: list[Copy]) -> None:
        """Grow the copies of topics with ingress from ``since`` to ``now``: the leader's log by its rate
        (within retention), a moving copy by its rate less the ingress, an in-sync one keeping up (its
        bandwidth was reserved), one that does not move falling behind (and copying again); what each
        follower's log gained is counted as its replication bytes."""
        elapsed, behind = now - since, []
        moving = self._moving_brokers(self._image())
        for topic_id, ingress in self._ingress.items():
            for (partition, follower), copy in self._topics.get(topic_id, {}).items():
                if copy.size is None:
                    continue
                rate = ingress.rate(partition)
                size = copy.size + ingress.grown_at(partition, now) - ingress.grown_at(partition, since)
                lag = copy.size - copy.replica.log_bytes
                copying = copy in self._copying
                if copying and copy.rate:
                    gain = (copy.rate - rate) * elapsed
                    if copy.finished_at is None and copy.rate > rate and gain >= lag - CAUGHT_UP_SLACK:
                        copy.finished_at = since + max(lag, 0.0) / (copy.rate - rate)
                    lag += (rate - copy.rate) * elapsed
                    if copy in self._real:
                        advanced.append(copy)
                elif not copying and lag <= CAUGHT_UP_SLACK and follower in moving and copy.replica.leader in moving:
                    lag = 0.0
                else:
                    lag += rate * elapsed
                lag = min(max(lag, 0.0), max(size, 0.0))
                self._account(copy, (size - lag) - copy.replica.log_bytes)  # what the follower fetched
                copy.size, copy.replica.log_bytes = size, size - lag
                if lag > CAUGHT_UP_SLACK and not copying:
                    behind.append(copy)
        for copy in behind:
            self._copying[copy] = None

    def _ingress_rate(self, copy: Copy) -> float:
        ingress = self._ingress.get(copy.replica.topic_id)
        return ingress.rate(copy.replica.partition) if ingress is not None else 0.0

    def ingress_rate(self, key: tuple[uuid.UUID, int]) -> float:
        """A partition's simulated produce rate (bytes per simulated second)."""
        ingress = self._ingress.get(key[0])
        return ingress.rate(key[1]) if ingress is not None else 0.0

    def topic_ingress(self, topic_id: uuid.UUID) -> TopicIngress | None:
        """A topic's simulated produce traffic (None: it has none, its logs do not grow)."""
        return self._ingress.get(topic_id)

    def grown(self, key: tuple[uuid.UUID, int]) -> float:
        """The bytes a partition's leader log holds now beyond its configured simulated size (its ingress,
        within retention)."""
        ingress = self._ingress.get(key[0])
        return 0.0 if ingress is None else ingress.grown_at(key[1], self.now())  # a function of the clock alone

    def _refresh_ingress(self, topic_ids: Iterable[uuid.UUID], resized: set[uuid.UUID]) -> None:
        """Read the ingress of ``topic_ids`` from the image anew (settled at the old one first); those
        in ``resized`` had their size set, which their growth starts from again."""
        self._settle()
        image = self._image()
        at = self._settled_at if self._settled_at is not None else 0.0
        for topic_id in set(topic_ids):
            topic = image.topics.get(topic_id)
            ingress = None if topic is None else TopicIngress.read(
                image, topic.name, at, self._ingress.get(topic_id), topic.partitions, topic_id in resized)
            if ingress is None:
                self._ingress.pop(topic_id, None)
            else:
                self._ingress[topic_id] = ingress

    def _running(self, broker_id: int) -> bool:
        member = self._members.get(broker_id)
        if member is not None:
            return member.is_running()
        broker = self._image().brokers.get(broker_id) if self._remote_brokers else None
        return broker is not None and broker.active

    def _follow_remote_followers(self) -> list[Copy]:
        """Keep a copy to every out-of-sync follower of another process whose partition a local broker
        leads, and drop the others (in sync, moved away, or no longer led here); returns the new copies."""
        wanted, created = set(), []
        for topic, index, state in self._image().partitions():
            if state.leader not in self._members:
                continue
            for follower in state.replicas:
                if follower not in self._members and follower not in state.isr:
                    key = (topic.topic_id, index, follower)
                    wanted.add(key)
                    copy = self.copies.get(key)
                    if copy is None or copy.replica.leader != state.leader:
                        self._before_change()
                        if copy is not None:
                            self._drop(copy)
                        remote = RemoteFollower(topic.topic_id, topic.name, index, state.leader)
                        copy = self._topics.setdefault(topic.topic_id, {})[index, follower] = Copy(remote, follower)
                        self._copying[copy] = None
                        created.append(copy)
        for key, copy in list(self.copies.items()):
            if isinstance(copy.replica, RemoteFollower) and key not in wanted:
                self._before_change()
                self._drop(copy)
        return created

    def _moving_brokers(self, image: MetadataImage) -> set[int]:
        """The brokers copies may move between: running (or, remote, active in the image) and not paused."""
        moving = {b for b, member in self._members.items() if member.is_running() and b not in self._paused}
        if self._remote_brokers:
            moving |= {b for b, broker in image.brokers.items()
                       if b not in self._members and broker.active and b not in self._paused}
        return moving

    def _time_next_finish(self) -> None:
        """Arm the one timer for the copy that finishes first at the current rates."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        finishing = [(c.size - c.replica.log_bytes) / (c.rate - ingress)  # type: ignore[operator]  # (sized)
                     for c in self._copying if c.rate > (ingress := self._ingress_rate(c))]
        if finishing:
            self._timer = self.call_later(min(finishing), self._tick)

    def _reschedule(self) -> None:
        image = self._image()
        limits_of = _Limits(image)
        moving = self._moving_brokers(image)
        demands = {}  # copy -> the limits it goes through
        capacities: dict[object, float] = {}
        # (leader, follower, leader-throttled, follower-throttled) -> limits: shared by copies alike
        routes: dict[tuple[int, int, bool, bool], object] = {}
        topics = image.topics
        ended = []  # copies that moved and now hold everything: their leaders are told below
        at = self._settled_at if self._settled_at is not None else 0.0
        self._routes = {}
        for copy in list(self._copying):
            replica = copy.replica
            if replica.topic_id not in topics:
                self._drop(copy)
                continue
            simulated = limits_of.size(replica.topic_name, replica.partition)
            ingress = self._ingress.get(replica.topic_id)
            grown = ingress.grown_at(replica.partition, at) if ingress is not None else 0.0
            copy.size = simulated + grown + self._real_size_of(copy, simulated + grown)
            moved, copy.rate = copy.rate, 0.0
            if replica.log_bytes >= copy.size - CAUGHT_UP_SLACK:
                del self._copying[copy]  # caught up: looked at again only when its standing may change
                if moved or copy in self._real:
                    self._account(copy, copy.size - replica.log_bytes)
                    replica.log_bytes = copy.size
                    self._copy_real(copy, everything=True)
                    ended.append(copy)
                continue
            limits = self._route(limits_of, capacities, routes, moving, copy)
            if limits is not None:
                demands[copy] = limits
                if ingress is not None:
                    self._routes[copy] = limits
        self._capacities = dict(capacities)
        if self._ingress:
            self._reserve_in_sync(limits_of, capacities, routes, moving)
        for copy, rate in allocate_rates(demands, capacities).items():
            copy.rate = rate
            if rate > 0:
                copy.finished_at = None
                if copy.started_at is None:
                    copy.started_at = self._settled_at
        self._record_throughput()
        self._time_next_finish()
        for listener in self._rate_listeners:
            listener()
        for copy in ended:
            self._tell_leader(copy)

    def _route(self, limits_of: _Limits, capacities: dict, routes: dict, moving: set[int],
               copy: Copy) -> tuple | None:
        """The limits a copy goes through (shared by the copies alike), None while it cannot move."""
        replica = copy.replica
        leader, follower = replica.leader, copy.follower
        if leader == follower or leader not in moving or follower not in moving:
            return None
        leader_listed, follower_listed = limits_of.topic(replica.topic_name)
        route = (leader, follower,
                 bool(leader_listed) and limits_of.throttled(leader_listed, replica.partition, leader),
                 bool(follower_listed) and limits_of.throttled(follower_listed, replica.partition, follower))
        limits = routes.get(route)
        if limits is None:
            limits = routes[route] = self._limits(limits_of, capacities, *route)
        return limits

    def _reserve_in_sync(self, limits_of: _Limits, capacities: dict, routes: dict, moving: set[int]) -> None:
        """An in-sync follower of a topic with ingress fetches what is produced, first: its traffic is
        taken off the limits it goes through, the throttles included where its replica is throttled
        (KIP-73: a throttled replica's traffic counts against the throttle, though an in-sync one is
        never held back by it), before the copies that are behind share what is left."""
        for topic_id, ingress in self._ingress.items():
            for (partition, _follower), copy in self._topics.get(topic_id, {}).items():
                if copy in self._copying or copy.size is None:
                    continue
                rate = ingress.rate(partition)
                limits = self._route(limits_of, capacities, routes, moving, copy) if rate > 0 else None
                for limit in limits or ():
                    capacities[limit] = max(capacities[limit] - rate, 0.0)

    def never_reason(self, copy: Copy) -> str | None:
        """Why a copy that is behind can never catch up: its rate is not above its partition's ingress
        (None if it can, or stands still for another reason: a paused or stopped broker)."""
        ingress = self._ingress_rate(copy)
        limits = self._routes.get(copy)
        if ingress <= 0 or limits is None or copy not in self._copying or copy.rate > ingress:
            return None
        kind, broker = min(limits, key=lambda limit: self._capacities.get(limit, UNLIMITED))
        capacity = self._capacities.get((kind, broker), UNLIMITED)
        name = {"leader-throttle": f"throttle {configs.LEADER_THROTTLED_RATE} of broker {broker}",
                "follower-throttle": f"throttle {configs.FOLLOWER_THROTTLED_RATE} of broker {broker}",
                "out": f"bandwidth {configs.REPLICATION_BANDWIDTH} of broker {broker} (out)",
                "in": f"bandwidth {configs.REPLICATION_BANDWIDTH} of broker {broker} (in)"}[kind]
        if capacity <= ingress:
            return f"{name}: {capacity:.0f} B/s below ingress {ingress:.0f} B/s"
        return f"rate {copy.rate:.0f} B/s (its share of the {name}, {capacity:.0f} B/s) below ingress {ingress:.0f} B/s"

    @staticmethod
    def _limits(limits_of: _Limits, capacities: dict, leader: int, follower: int, leader_throttled: bool,
                follower_throttled: bool) -> tuple:
        """The limits a copy from ``leader`` to ``follower`` goes through, their capacities noted."""
        limits = [("out", leader), ("in", follower)]
        for limit in limits:
            if limit not in capacities:
                capacities[limit] = limits_of.broker(limit[1], configs.REPLICATION_BANDWIDTH)
        if leader_throttled:
            rate = limits_of.broker(leader, configs.LEADER_THROTTLED_RATE)
            if rate < UNLIMITED:
                limits.append(("leader-throttle", leader))
                capacities[limits[-1]] = rate
        if follower_throttled:
            rate = limits_of.broker(follower, configs.FOLLOWER_THROTTLED_RATE)
            if rate < UNLIMITED:
                limits.append(("follower-throttle", follower))
                capacities[limits[-1]] = rate
        return tuple(limits)

    # --- real bytes (server/broker/real_bytes.py) ---------------------------------------------------

    def _partition_of(self, broker_id: int, key: tuple[uuid.UUID, int]) -> CopiedPartition | None:
        member = self._members.get(broker_id)
        return member.partition_of(key) if member is not None else None

    def _real_size_of(self, copy: Copy, simulated: float) -> float:
        """The real bytes of the copy's leader's log (0 unless the leader's log is open here and the
        follower is hosted here); a copy with real bytes to move is noted in ``_real``, with the
        partition's ``simulated`` size its credit counts first."""
        key = copy.replica.key
        leader = self._partition_of(copy.replica.leader, key)
        if leader is None or not leader.opened or self._partition_of(copy.follower, key) is None:
            self._real.pop(copy, None)
            return 0.0
        state = self._real.get(copy)
        if state is None:
            state = self._real[copy] = real_bytes.RealCopy()
        state.simulated = simulated
        return float(leader.log.size_bytes)

    def _copy_real(self, copy: Copy, everything: bool = False) -> None:
        """Move into the follower's log the leader's batches the copy's credit now covers."""
        state = self._real.get(copy)
        key = copy.replica.key
        leader_id = copy.replica.leader
        leader, replica = self._partition_of(leader_id, key), self._partition_of(copy.follower, key)
        if state is None or leader is None or replica is None or copy.size is None:
            return
        real_bytes.move(state, key, copy.follower, leader, replica, copy.replica.log_bytes - state.simulated,
                        everything, self.now(), lambda moved: self._tell_data_arrived(copy, moved))
        if everything:
            self._caught_up_at[copy] = self.now()

    def _tell_data_arrived(self, copy: Copy, key: tuple[uuid.UUID, int]) -> None:
        for broker_id in (copy.replica.leader, copy.follower):
            member = self._members.get(broker_id)
            if member is not None:
                member.data_arrived(key)

    def leader_appended(self, leader: int, key: tuple[uuid.UUID, int]) -> None:
        """The leader of ``key`` appended real bytes: its followers copy them, within their rates."""
        copies = self._topics.get(key[0])
        if not copies:
            return
        topic = self._image().topics.get(key[0])
        state = topic.partitions.get(key[1]) if topic is not None else None
        if state is None:
            return
        started = False
        for follower in state.replicas:  # the partition's copies, not the whole topic's
            copy = copies.get((key[1], follower))
            if copy is not None and copy.replica.leader == leader:
                if not started:
                    self._before_change()
                    started = True
                if copy not in self._copying and self.caught_up(key[0], key[1], follower):
                    self._caught_up_at[copy] = self.now()  # it held everything until this append
                self._copying[copy] = None

    def last_caught_up(self, topic_id: uuid.UUID, partition: int, follower: int) -> float | None:
        """The simulated time the follower's copy last held everything the leader had (now, if it does);
        None if it never did (Kafka's ``lastCaughtUpTimeMs``, which the ISR's lag rule reads)."""
        copies = self._topics.get(topic_id)
        copy = copies.get((partition, follower)) if copies is not None else None
        if copy is None:
            return None
        if copy not in self._copying and self.caught_up(topic_id, partition, follower):
            return self.now()
        return self._caught_up_at.get(copy, copy.finished_at)

    def lagging(self, leader: int, max_lag_s: float) -> list[tuple[tuple[uuid.UUID, int], int]]:
        """(partition key, follower) of the copies with real bytes from ``leader`` whose follower last
        held everything longer than ``max_lag_s`` simulated seconds ago (Kafka's ISR lag rule)."""
        self._settle()
        now = self.now()
        found = []
        for copy in self._real:
            if copy.replica.leader != leader:
                continue
            caught_up = self.last_caught_up(copy.replica.topic_id, copy.replica.partition, copy.follower)
            if caught_up is not None and now - caught_up > max_lag_s:
                found.append((copy.replica.key, copy.follower))
        return found

    def _tick(self) -> None:
        """The first copy's end is due: settle, and compute rates anew (which tells the ended copies' leaders)."""
        self._timer = None
        self._settle()
        self._reschedule()

    def _tell_leader(self, copy: Copy) -> None:
        member = self._members.get(copy.replica.leader)  # a leader of another process hears it there
        if member is not None and member.is_running():
            member.on_follower_caught_up(copy.replica.key)
