"""One partition replica a broker hosts, with its real log (Kafka's ``Partition``).

A ``Partition`` holds the replica's ``PartitionLog`` (server/storage/, Kafka's on-disk format, in
``<log dir>/<topic>-<partition>``) and what the replica's role adds to it: the leader epoch and the ISR of
the last partition state the broker acted on, and, while it leads, each follower's log end and start
offsets as they were last reported (``follower_fetched``), the high watermark they give, and the
producers waiting for it (acks=-1) and the deletions waiting for the low watermark (DeleteRecords).

The high watermark of a leader is the smallest log end offset among the ISR's members, its own
included, and only grows (Kafka's ``maybeIncrementLeaderHW``); a follower whose offset is not known
yet holds it where it is. With an ISR of the leader alone (RF 1, or every follower out of sync) it
follows the leader's log end at once. A follower's high watermark is the one its leader sends it
(``follower_high_watermark``). A waiter is woken when the high watermark passes its offset, when the
replica stops leading (NOT_LEADER_OR_FOLLOWER), or at its timeout (REQUEST_TIMED_OUT), as Kafka's
DelayedProduce completes; one woken by the high watermark is told NOT_ENOUGH_REPLICAS_AFTER_APPEND when
the ISR has meanwhile shrunk below ``min.insync.replicas`` (Kafka's checkEnoughReplicasReachOffset).

The log is opened on first use (Kafka opens it when the replica is created): a cluster of millions of
simulated partitions keeps no files for the partitions nothing is written to or read from, and a
restarted broker recovers a log it kept when that log is first used (README, differences).

Time: ``now_ms`` is the broker's clock (``BrokerClock``): the wall clock, or, with the cluster's virtual
clock on, the wall clock at the cluster's start plus the virtual seconds elapsed since, so that
LogAppendTime stamps, segment rolls and retention follow the virtual clock.
"""
from __future__ import annotations

import asyncio
import functools
import logging
import shutil
import time
import uuid
import weakref
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec import records as rec
from kraftwire.codec.message import Message
from kraftwire.server.metadata import configs
from kraftwire.server.metadata.config_values import render
from kraftwire.server.metadata.image import MetadataImage, PartitionState
from kraftwire.server.storage import (LOG_START_OFFSET_CHECKPOINT, REPLICATION_OFFSET_CHECKPOINT, CheckpointError,
                                      LogConfig, LogDirCheckpoints, LogError, PartitionLog)

if TYPE_CHECKING:
    from .replica_manager import Replica
    from .replication_network import ReplicationNetwork, Timer

log = logging.getLogger("kraftwire.broker")

NO_OFFSET = -1
RETENTION_CHECK_INTERVAL_MS = 300_000  # Kafka's log.retention.check.interval.ms


class AppendResult(NamedTuple):
    """Where a leader's append landed: the first offset given, the log append time (-1 under
    CreateTime), the log start offset, the offset the high watermark must reach for acks=-1, and the
    records appended (0 for a duplicate batch; the broker's MessagesIn counts them)."""

    base_offset: int
    log_append_time_ms: int
    log_start_offset: int
    required_offset: int
    record_count: int = 0


class _Origin:
    """The wall clock's ms at the moment a virtual clock read 0, per network (one per cluster)."""

    origins: weakref.WeakKeyDictionary[ReplicationNetwork, float] = weakref.WeakKeyDictionary()


class BrokerClock:
    """``now_ms`` for the data plane (see the module docstring)."""

    def __init__(self, network: ReplicationNetwork) -> None:
        self._network = network
        if network.virtual_clock and network not in _Origin.origins:
            _Origin.origins[network] = time.time() * 1000 - network.now() * 1000
        self._origin = _Origin.origins.get(network)

    def now_ms(self) -> int:
        if self._origin is None:
            return int(time.time() * 1000)
        return int(self._origin + self._network.now() * 1000)


class Partition:
    """One hosted replica's log and, while it leads, its followers' offsets (see the module docstring).
    ``open_log`` opens (creating or recovering) the replica's log; ``min_insync()`` is the topic's
    ``min.insync.replicas`` now; ``alive(broker)`` says whether a broker is registered and unfenced (the low
    watermark counts only those)."""

    def __init__(self, topic_name: str, topic_id: uuid.UUID, index: int, broker_id: int, state: PartitionState,
                 open_log: Callable[[], PartitionLog], clock: BrokerClock,
                 min_insync: Callable[[], int] = lambda: 1, alive: Callable[[int], bool] = lambda broker: True) -> None:
        self.topic_name = topic_name
        self.topic_id = topic_id
        self.index = index
        self.broker_id = broker_id
        self.clock = clock
        self._open_log = open_log
        self._log: PartitionLog | None = None
        self._alive = alive
        self._min_insync = min_insync
        self.state = state
        self._followers: dict[int, tuple[int, int]] = {}  # broker -> (log end offset, log start offset)
        # the ISR lag rule of followers that fetch (server/broker/replica_fetcher.py): each one's
        # lastCaughtUpTimeMs and (its last fetch's time, the leader's log end then), as Kafka's Replica keeps
        self._caught_up_ms: dict[int, int] = {}
        self._last_fetch: dict[int, tuple[int, int]] = {}
        self._epoch_began_ms: int | None = None
        self._epoch_start: int | None = None  # the log end offset when this leader's epoch began (None: not read)
        # told (appended or not) when the log end or the high watermark moved: the fetches waiting on this
        # partition, and on a leader's append its followers' copies (set by the ReplicaManager)
        self.on_data: Callable[[Partition, bool], None] = _no_listener
        # followers an AlterPartition in flight adds to the ISR: the high watermark waits for them too, as
        # Kafka's leader uses the maximal ISR, so nothing is acknowledged that a joining replica lacks
        # (it may lead once the change commits)
        self.pending_isr: tuple[int, ...] = ()
        self._hw_waiters: list[tuple[int, asyncio.Future[int]]] = []  # (offset, future of an error code)
        self._lw_waiters: list[tuple[int, asyncio.Future[int]]] = []
        self.closed = False

    # --- the log ------------------------------------------------------------------------------------

    @property
    def log(self) -> PartitionLog:
        """The replica's log, opened (created, or recovered from what its directory kept) on first use."""
        if self._log is None:
            if self.closed:
                raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER,
                                 f"{self.topic_name}-{self.index} is no longer hosted on broker {self.broker_id}")
            self._log = self._open_log()
        return self._log

    @property
    def opened(self) -> bool:
        return self._log is not None

    @property
    def epoch_start_offset(self) -> int:
        """As leader, the log end offset when its epoch began (Kafka's leaderEpochStartOffsetOpt; a log
        opened later had appended nothing since); -1 as follower."""
        if not self.is_leader:
            return -1
        if self._epoch_start is None:
            self._epoch_start = self.log.log_end_offset
        return self._epoch_start

    # --- role ---------------------------------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        return self.state.leader == self.broker_id

    @property
    def leader_epoch(self) -> int:
        return self.state.leader_epoch

    @property
    def isr(self) -> tuple[int, ...]:
        return tuple(self.state.isr)

    def update(self, state: PartitionState) -> None:
        """A new partition state from the metadata log (or an AlterPartition answer). A new leader epoch
        forgets what followers reported (Kafka resets the remote replicas' states on becoming leader); a
        replica that stops leading fails its waiters with NOT_LEADER_OR_FOLLOWER."""
        before = self.state
        self.state = state
        if state.leader_epoch != before.leader_epoch or state.leader != before.leader:
            self._followers.clear()
            self._caught_up_ms.clear()
            self._last_fetch.clear()
            self._epoch_began_ms = None
            self._epoch_start = self._log.log_end_offset if self._log is not None and self.is_leader else None
        if not self.is_leader:
            self._fail_waiters(ErrorCode.NOT_LEADER_OR_FOLLOWER)
            return
        self._followers = {b: offsets for b, offsets in self._followers.items() if b in state.replicas}
        self.maybe_increment_high_watermark()

    def follower_fetched(self, broker_id: int, log_end_offset: int, now_ms: int | None = None,
                         log_start_offset: int | None = None) -> None:
        """A follower's fetch told this leader its log end offset (and log start offset): the high
        watermark and the low watermark may move, and waiters wake. ``now_ms`` is kept for the ISR lag
        rule the follower tracking adds."""
        if not self.is_leader or broker_id == self.broker_id:
            return
        start = log_start_offset if log_start_offset is not None else self._followers.get(broker_id, (0, 0))[1]
        self._followers[broker_id] = (log_end_offset, start)
        if now_ms is not None:
            leader_end = self.log.log_end_offset
            last = self._last_fetch.get(broker_id)
            if log_end_offset >= leader_end:
                self._caught_up_ms[broker_id] = now_ms
            elif last is not None and log_end_offset >= last[1]:
                self._caught_up_ms[broker_id] = max(self._caught_up_ms.get(broker_id, last[0]), last[0])
            self._last_fetch[broker_id] = (now_ms, leader_end)
        self.maybe_increment_high_watermark()
        self._wake_low_watermark()

    def lagging_followers(self, followers: Iterable[int], now_ms: int, max_lag_ms: int) -> list[int]:
        """Those of ``followers`` (which fetch from this leader) that last held the leader's log end more
        than ``max_lag_ms`` ago, counting from this epoch's first look when never (Kafka's
        ``getOutOfSyncReplicas``)."""
        if not self.is_leader:
            return []
        if self._epoch_began_ms is None:
            self._epoch_began_ms = now_ms
        return [b for b in followers if now_ms - self._caught_up_ms.get(b, self._epoch_began_ms) > max_lag_ms]

    def follower_offsets(self) -> dict[int, tuple[int, int]]:
        """Each follower's last reported (log end offset, log start offset)."""
        return dict(self._followers)

    # --- the high watermark -------------------------------------------------------------------------

    @property
    def high_watermark(self) -> int:
        return self.log.high_watermark

    def maybe_increment_high_watermark(self) -> bool:
        """As leader: move the high watermark to the ISR's smallest log end offset if that is higher, and
        wake the waiters it passes; True if it moved."""
        if not self.is_leader or self.closed:
            return False
        log = self.log
        candidate = log.log_end_offset
        for member in (*self.state.isr, *self.pending_isr):
            if member == self.broker_id:
                continue
            reported = self._followers.get(member)
            if reported is None:
                return False  # not heard from since this epoch began: the watermark waits
            candidate = min(candidate, reported[0])
        if candidate <= log.high_watermark:
            return False
        log.update_high_watermark(candidate)
        self._wake_high_watermark()
        self.on_data(self, False)
        return True

    def follower_high_watermark(self, leader_high_watermark: int) -> None:
        """As follower: the leader's high watermark, as far as this replica's log reaches."""
        log = self.log
        before = log.high_watermark
        if log.update_high_watermark(min(leader_high_watermark, log.log_end_offset)) != before:
            self.on_data(self, False)

    def _wake_high_watermark(self) -> None:
        hw = self.log.high_watermark
        if not self._hw_waiters:
            return
        enough = len(self.state.isr) >= self.min_insync_replicas()
        still = []
        for offset, future in self._hw_waiters:
            if offset <= hw:
                if not future.done():
                    future.set_result(ErrorCode.NONE if enough else ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND)
            else:
                still.append((offset, future))
        self._hw_waiters = still

    def _fail_waiters(self, code: int) -> None:
        for _, future in [*self._hw_waiters, *self._lw_waiters]:
            if not future.done():
                future.set_result(code)
        self._hw_waiters, self._lw_waiters = [], []

    # --- min.insync.replicas ------------------------------------------------------------------------

    def min_insync_replicas(self) -> int:
        """``min.insync.replicas``, capped at the replica count (Kafka's effectiveMinIsr)."""
        return min(self._min_insync(), len(self.state.replicas))

    # --- appends ------------------------------------------------------------------------------------

    def append_as_leader(self, records: bytes | memoryview, required_acks: int) -> AppendResult:
        """Append a producer's batches (KafkaError when refused, nothing appended): NOT_LEADER_OR_FOLLOWER
        unless this replica leads, NOT_ENOUGH_REPLICAS for acks=-1 while the ISR is smaller than
        ``min.insync.replicas``; the log's own validation (server/storage/) otherwise."""
        if not self.is_leader:
            raise self._not_leader()
        min_isr = self.min_insync_replicas()
        if required_acks == -1 and len(self.state.isr) < min_isr:
            raise KafkaError(ErrorCode.NOT_ENOUGH_REPLICAS,
                             f"The size of the current ISR : {len(self.state.isr)} is insufficient to satisfy the "
                             f"min.isr requirement of {min_isr} for partition {self.topic_name}-{self.index}")
        log = self.log
        info = log.append_as_leader(bytes(records), self.leader_epoch, self.clock.now_ms())
        self.on_data(self, True)
        self.maybe_increment_high_watermark()
        return AppendResult(info.first_offset, info.log_append_time, log.log_start_offset, info.last_offset + 1,
                            0 if info.duplicate else info.record_count)

    def _not_leader(self) -> KafkaError:
        return KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER,
                          f"Leader not local for partition {self.topic_name}-{self.index} on broker {self.broker_id}")

    async def wait_for_high_watermark(self, offset: int, timeout_s: float) -> int:
        """acks=-1: the error code once the high watermark reaches ``offset`` (NONE, or
        NOT_ENOUGH_REPLICAS_AFTER_APPEND), NOT_LEADER_OR_FOLLOWER once this replica stops leading,
        REQUEST_TIMED_OUT after ``timeout_s``."""
        if not self.is_leader:
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        if self.log.high_watermark >= offset:
            enough = len(self.state.isr) >= self.min_insync_replicas()
            return ErrorCode.NONE if enough else ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        entry = (offset, future)
        self._hw_waiters.append(entry)
        code = await _within(future, timeout_s)
        if entry in self._hw_waiters:  # timed out
            self._hw_waiters.remove(entry)
        return code

    # --- DeleteRecords ------------------------------------------------------------------------------

    @property
    def low_watermark(self) -> int:
        """The smallest log start offset among the leader and its followers on live brokers (Kafka's
        lowWatermarkIfLeader)."""
        low = self.log.log_start_offset
        for broker, (_, start) in self._followers.items():
            if broker in self.state.replicas and self._alive(broker):
                low = min(low, start)
        return low

    def delete_records(self, offset: int) -> int:
        """As leader: move the log start offset to ``offset`` (-1: the high watermark); the offset the
        deletion asked for. OFFSET_OUT_OF_RANGE below 0 or beyond the high watermark, as Kafka's
        ``deleteRecordsOnLeader``; NOT_LEADER_OR_FOLLOWER unless leading; POLICY_VIOLATION on a compacted
        topic that does not also delete."""
        if not self.is_leader:
            raise self._not_leader()
        log = self.log
        config = log.config
        if config.compact and not config.retention_enabled:
            raise KafkaError(ErrorCode.POLICY_VIOLATION, f"Records of partition {self.topic_name}-{self.index} "
                                                         "can not be deleted due to the configured policy")
        wanted = log.high_watermark if offset == -1 else offset
        if wanted < 0:
            raise KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE,
                             f"The offset {wanted} for partition {self.topic_name}-{self.index} is not valid")
        if wanted > log.high_watermark:
            raise KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE,
                             f"Cannot increment the log start offset to {wanted} of partition "
                             f"{self.topic_name}-{self.index} since it is larger than the high watermark "
                             f"{log.high_watermark}")
        if wanted > log.log_start_offset:
            log.delete_records_before(wanted)
        return wanted

    async def wait_for_low_watermark(self, offset: int, timeout_s: float) -> int:
        """DeleteRecords: NONE once every live replica's log start offset reached ``offset``,
        NOT_LEADER_OR_FOLLOWER once this replica stops leading, REQUEST_TIMED_OUT after ``timeout_s``."""
        if not self.is_leader:
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        if self.low_watermark >= offset:
            return ErrorCode.NONE
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        entry = (offset, future)
        self._lw_waiters.append(entry)
        code = await _within(future, timeout_s)
        if entry in self._lw_waiters:  # timed out
            self._lw_waiters.remove(entry)
        return code

    def _wake_low_watermark(self) -> None:
        if not self._lw_waiters:
            return
        low = self.low_watermark
        still = []
        for offset, future in self._lw_waiters:
            if offset <= low:
                if not future.done():
                    future.set_result(ErrorCode.NONE)
            else:
                still.append((offset, future))
        self._lw_waiters = still

    # --- ListOffsets --------------------------------------------------------------------------------

    def check_leader_epoch(self, current_leader_epoch: int, require_leader: bool = True) -> None:
        """A client's CurrentLeaderEpoch (-1: unchecked) against this replica's: FENCED_LEADER_EPOCH when
        older, UNKNOWN_LEADER_EPOCH when newer; then NOT_LEADER_OR_FOLLOWER unless leading (when
        ``require_leader``), in Kafka's order (``Partition.getLocalLog``)."""
        if current_leader_epoch >= 0:
            if self.leader_epoch > current_leader_epoch:
                raise KafkaError(ErrorCode.FENCED_LEADER_EPOCH)
            if self.leader_epoch < current_leader_epoch:
                raise KafkaError(ErrorCode.UNKNOWN_LEADER_EPOCH)
        if require_leader and not self.is_leader:
            raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER)

    # --- lifecycle ----------------------------------------------------------------------------------

    def close(self) -> None:
        """The broker stops: the log is closed (flushed as Kafka's clean shutdown does); waiters fail."""
        self._fail_waiters(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        if self._log is not None:
            self._log.close()
            self._log = None

    def delete(self) -> None:
        """The replica is deleted: so is its log, files and directory."""
        self._fail_waiters(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        self.closed = True
        log, self._log = self._log, None
        if log is not None:
            log.delete()


def _no_listener(partition: Partition, appended: bool) -> None:
    pass


async def _within(future: asyncio.Future[int], timeout_s: float) -> int:
    try:
        return await asyncio.wait_for(asyncio.shield(future), max(timeout_s, 0.0))
    except TimeoutError:
        return ErrorCode.REQUEST_TIMED_OUT


def effective_topic_configs(image: MetadataImage, topic_name: str) -> dict[str, str]:
    """A topic's configs as they take effect (its own, else the cluster default of the broker synonym,
    else Kafka's default), rendered as Kafka shows them: what ``LogConfig.from_configs`` reads."""
    dynamic, defaults = image.topic_configs(topic_name), image.broker_configs("")
    effective = {}
    for name in configs.TOPIC_CONFIGS:
        value = configs.topic_value(dynamic, defaults, name)
        if value is not None:
            effective[name] = render(value)
    return effective


class HostedPartitions:
    """The ``Partition`` of each of a broker's replicas that has been used (``ReplicaManager.partition``),
    their logs' directories and checkpoints. ``image()`` is the broker's image."""

    def __init__(self, broker_id: int, image: Callable[[], MetadataImage], network: ReplicationNetwork) -> None:
        self.broker_id = broker_id
        self._image = image
        self.clock = BrokerClock(network)
        # what a log directory's checkpoints kept of logs not opened yet: {(dir path, topic, partition):
        # (log start offset, high watermark)}, read at the broker's start, refreshed as logs close
        self._kept: dict[tuple[str, str, int], tuple[int | None, int | None]] = {}
        self._opened: dict[tuple[uuid.UUID, int], Partition] = {}
        self.acting = False  # between the broker's start and stop: logs are opened only then
        self.on_data: Callable[[Partition, bool], None] = _no_listener  # handed to every Partition made
        self._network = network
        self._timer: Timer | None = None
        self.retention_check_interval_ms = RETENTION_CHECK_INTERVAL_MS

    @staticmethod
    def log_path(log_dir: str, topic_name: str, index: int) -> Path:
        return Path(log_dir) / f"{topic_name}-{index}"

    def partition(self, replica: Replica) -> Partition:
        """The replica's ``Partition``, made on first use; KafkaError KAFKA_STORAGE_ERROR while its log
        directory is offline (or it has none)."""
        log_dir = replica.log_dir
        if log_dir is None or not log_dir.online:
            raise KafkaError(ErrorCode.KAFKA_STORAGE_ERROR,
                             f"the log directory of {replica.topic_name}-{replica.partition} is offline")
        partition = replica.partition_log
        if partition is None:
            partition = replica.partition_log = Partition(
                replica.topic_name, replica.topic_id, replica.partition, self.broker_id, replica.state,
                functools.partial(self._open, replica), self.clock,
                functools.partial(self._min_insync, replica.topic_name), self._alive)
            partition.on_data = self.on_data
            self._opened[replica.key] = partition
        return partition

    def _open(self, replica: Replica) -> PartitionLog:
        if not self.acting or replica.log_dir is None:
            raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, f"broker {self.broker_id} is stopped")
        path = replica.log_dir.path
        start, high_watermark = self._kept.pop((path, replica.topic_name, replica.partition), (None, None))
        config = LogConfig.from_configs(effective_topic_configs(self._image(), replica.topic_name))
        directory = self.log_path(path, replica.topic_name, replica.partition)
        try:
            try:
                opened = PartitionLog.open(directory, replica.topic_id, config, self.clock.now_ms(),
                                           recovery_point=None, log_start_offset=start, high_watermark=high_watermark)
            except LogError as exc:
                if exc.code != ErrorCode.INCONSISTENT_TOPIC_ID:
                    raise
                # a stray log: its topic was deleted (and one of the same name made) while the broker was
                # down; Kafka's broker deletes such a log at start, this one when it is first used
                log.warning("broker %d: deleting the stray log %s (%s)", self.broker_id, directory, exc.message)
                shutil.rmtree(directory)
                opened = PartitionLog.open(directory, replica.topic_id, config, self.clock.now_ms())
        except OSError as exc:
            raise KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, f"cannot open the log of {replica.topic_name}-"
                                                            f"{replica.partition}: {exc}") from None
        if self._timer is None:  # its partition is registered already: the check covers it
            asyncio.get_running_loop().call_soon(self._arm)
        return opened

    def _min_insync(self, topic_name: str) -> int:
        image = self._image()
        value = configs.topic_value(image.topic_configs(topic_name), image.broker_configs(""),
                                    configs.MIN_INSYNC_REPLICAS)
        return value if isinstance(value, int) else 1

    def _alive(self, broker_id: int) -> bool:
        broker = self._image().brokers.get(broker_id)
        return broker is not None and broker.active

    def opened_partitions(self) -> list[Partition]:
        """The ``Partition`` of every replica used so far."""
        return list(self._opened.values())

    def changed(self, replica: Replica) -> None:
        """The replica took a new partition state."""
        partition = replica.partition_log
        if partition is not None:
            partition.update(replica.state)

    def deleted(self, replica: Replica) -> None:
        """The replica is gone from this broker: its log goes, opened or not (Kafka deletes a removed
        replica's log)."""
        partition = replica.partition_log
        replica.partition_log = None
        self._opened.pop(replica.key, None)
        if partition is not None and partition.opened:
            partition.delete()
            return
        if partition is not None:
            partition.closed = True
        if replica.log_dir is not None:
            self._kept.pop((replica.log_dir.path, replica.topic_name, replica.partition), None)
            shutil.rmtree(self.log_path(replica.log_dir.path, replica.topic_name, replica.partition),
                          ignore_errors=True)

    def on_commit(self, committed: list[tuple[int, Message]]) -> None:
        """Commit listener: a topic's (or the cluster default) config changed: its opened logs take the
        new LogConfig."""
        named = {r.resource_name for _, r in committed if isinstance(r, rec.ConfigRecord)}
        if not named or not self._opened:
            return
        image = self._image()
        for partition in self._opened.values():
            if partition.opened and (partition.topic_name in named or "" in named):
                partition.log.config = LogConfig.from_configs(effective_topic_configs(image, partition.topic_name))

    # --- start, stop and checkpoints ---------------------------------------------------------------

    def read_checkpoints(self, directories: Iterable[str]) -> None:
        """At start: what each directory's log-start-offset and replication-offset (high watermark)
        checkpoints kept, for the logs opened later (an unreadable file is logged and ignored)."""
        for path in directories:
            try:
                checkpoints = LogDirCheckpoints(Path(path))
                starts, marks = checkpoints.log_start_offsets(), checkpoints.high_watermarks()
            except (OSError, CheckpointError) as exc:
                log.warning("broker %d: ignoring the checkpoints of %s: %s", self.broker_id, path, exc)
                continue
            for key in starts.keys() | marks.keys():
                self._kept[(path, *key)] = (starts.get(key), marks.get(key))

    def checkpoint_offsets(self) -> dict[str, dict[tuple[str, int], tuple[int, int]]]:
        """Each directory's {(topic, partition): (log start offset, high watermark)}: the opened logs'
        and what the checkpoints kept of the others, taken on the event loop for a writing thread."""
        offsets: dict[str, dict[tuple[str, int], tuple[int, int]]] = {}
        for (path, topic, index), (start, mark) in self._kept.items():
            offsets.setdefault(path, {})[(topic, index)] = (start or 0, mark or 0)
        for partition in self._opened.values():
            replica_log = partition._log
            if replica_log is not None:
                directory = str(replica_log.directory.parent)
                offsets.setdefault(directory, {})[(partition.topic_name, partition.index)] = (
                    replica_log.log_start_offset, replica_log.high_watermark)
        return offsets

    @staticmethod
    def write_checkpoints(paths: Iterable[str], offsets: dict[str, dict[tuple[str, int], tuple[int, int]]]) -> None:
        """Write each directory's log-start-offset and replication-offset checkpoints (in a thread)."""
        for path in paths:
            mine = offsets.get(path, {})
            checkpoints = LogDirCheckpoints(Path(path))
            checkpoints.write(LOG_START_OFFSET_CHECKPOINT, {key: start for key, (start, _) in mine.items()})
            checkpoints.write(REPLICATION_OFFSET_CHECKPOINT, {key: mark for key, (_, mark) in mine.items()})

    def start(self) -> None:
        """The broker started: logs may be opened, and the opened ones are looked after every
        ``log.retention.check.interval.ms`` (on the cluster's clock, virtual when it is)."""
        self.acting = True
        self._arm()

    def _arm(self) -> None:
        """Time the next check while some log is open (none armed otherwise: a virtual clock with no
        real log has no timer of this kind to run)."""
        if self._timer is None and self.acting and any(p.opened for p in self._opened.values()):
            self._timer = self._network.call_later(self.retention_check_interval_ms / 1000, self._maintain)

    def _maintain(self) -> None:
        """Kafka's log retention check and log flusher, over the opened logs: whole segments past
        ``retention.ms``/``retention.bytes`` (or below the log start offset) go, and a log whose
        ``flush.ms`` has passed since its last flush is fsync'd."""
        self._timer = None
        if not self.acting:
            return
        now_ms = self.clock.now_ms()
        for partition in list(self._opened.values()):
            replica_log = partition._log
            if replica_log is None:
                continue
            try:
                replica_log.enforce_retention(now_ms)
                replica_log.maybe_flush(now_ms)
            except (OSError, KafkaError) as exc:
                log.warning("broker %d: looking after %s failed: %s", self.broker_id, replica_log.directory, exc)
        self._arm()

    def close_all(self) -> None:
        """The broker stops: every opened log is flushed and closed, to be opened (recovered) again when
        next used; what it held is kept for that."""
        self.acting = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for partition in self._opened.values():
            replica_log = partition._log
            if replica_log is not None:
                self._kept[(str(replica_log.directory.parent), partition.topic_name, partition.index)] = (
                    replica_log.log_start_offset, replica_log.high_watermark)
                try:
                    partition.close()
                except OSError as exc:
                    log.warning("broker %d: closing %s failed: %s", self.broker_id, replica_log.directory, exc)
