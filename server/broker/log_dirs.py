"""The log directories of a simulated broker (JBOD, KIP-858): which directory holds each replica, future
replicas moving between directories, directory failure, and the AssignReplicasToDirs reports.

Each broker has one or more ``LogDir``s: a stable id (kept in the directory's ``meta.properties``), an
absolute path (what DescribeLogDirs shows and AlterReplicaLogDirs names) and a simulated capacity.

Placement follows Kafka's broker. A replica new to the broker goes where AlterReplicaLogDirs asked
earlier, else to the directory the metadata names if it is one of the broker's online directories, else
(UNASSIGNED, LOST, unknown, offline) to the online directory holding the fewest logs
(LogManager.nextLogDirs), leaving out cordoned directories (``cordoned.log.dirs``, KIP-1066) unless every
online one is cordoned. Whenever the metadata names another directory than the one holding a replica,
the broker reports the real one (AssignmentSender, Kafka's AssignmentsManager).

AlterReplicaLogDirs starts a future replica in the target directory that copies the current one at
``replica.alter.log.dirs.io.max.bytes.per.second`` (a broker config; every move of the broker shares
it, and none goes faster than the broker's simulated ``kraftwire.replication.bandwidth.bytes.per.second``),
and none while replication is paused on the broker (``ReplicationNetwork.pause``).
Once it has caught up with the current replica the broker reports the new directory, and when the
controller has accepted it the future replica replaces the current one. Sizes count bytes; offsets are
bytes too (one offset per byte), so OffsetLag is the bytes a log still lacks.

Cordoned directories (``cordoned.log.dirs``, the broker's own value or the cluster default; ``*`` cordons
every directory) take no new replica and no AlterReplicaLogDirs move (INVALID_REPLICA_ASSIGNMENT, 39);
from metadata.version 4.3-IV0 the broker reports them in its heartbeats (CordonedLogDirs) and
DescribeLogDirs v5 flags them (IsCordoned).

A failed directory takes its replicas offline (they stop copying and are not served), drops the
future replicas in it or of replicas in it, and is reported in every heartbeat (OfflineLogDirs). A
broker whose last online directory fails stops, as Kafka's halts. Restoring a directory brings its
replicas back (the broker then re-registers with it online, see server/broker/node.py).

Deliberate differences from Kafka: a failed Kafka directory comes back only with a broker restart;
here ``restore`` brings it back in place and the broker amends its registration (same incarnation), so
it stays unfenced and keeps its epoch, and its replicas there rejoin their ISRs through AlterPartition,
but a partition left leaderless by the failure is not re-elected by the amendment (Kafka's restart would
unfence the broker and elect it): an ElectLeaders or a broker restart does it. A failure lasts while the
process runs (it is not kept in the data directory). Directory moves are not limited by disk speed, only
by the configs above.
"""
from __future__ import annotations

import asyncio
import functools
import logging
import random
import uuid
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kraftwire.codec import records as rec
from kraftwire.codec.messages import AssignReplicasToDirsRequest, DescribeLogDirsResponse

from kraftwire.server.metadata import configs
from kraftwire.server.metadata.record_versions import CORDONED_LOG_DIRS_LEVEL
from kraftwire.server.wire.client import KafkaClientError
from kraftwire.codec import ErrorCode
from kraftwire.codec.message import Message
from kraftwire.server.metadata.image import MetadataImage

from .replica_manager import Replica
from .replication_network import CAUGHT_UP_SLACK, ReplicationNetwork, Timer, TopicIngress, partition_size

if TYPE_CHECKING:  # the node imports this module
    from .node import BrokerNode

log = logging.getLogger("kraftwire.log_dirs")

DEFAULT_CAPACITY_BYTES = 1 << 40  # 1 TiB per directory
CAPACITY_SLACK = 1.0  # bytes: a directory this close to its capacity is full (float rounding of rate x time)
MAX_ASSIGNMENTS_PER_REQUEST = 2250
BACKOFF_INITIAL_S, BACKOFF_MULTIPLIER, BACKOFF_MAX_S, BACKOFF_JITTER = 0.1, 2, 10.0, 0.02
MAX_LOG_DIR_NAME = 255  # a future log's directory name, <topic>-<partition>.<32 hex>-future, must fit
FUTURE_NAME_EXTRA = len(".") + 32 + len("-future")

Key = tuple[uuid.UUID, int]
Result = DescribeLogDirsResponse.DescribeLogDirsResult


@dataclass(eq=False)
class LogDir:
    directory_id: uuid.UUID
    path: str
    capacity_bytes: int = DEFAULT_CAPACITY_BYTES
    online: bool = True
    full: bool = False  # it went offline because its replicas filled its capacity
    # whether filling it fails it: a capacity given (not the reported default) is enforced
    enforced: bool = False


@dataclass(eq=False)
class FutureReplica:
    """The copy of ``replica`` that AlterReplicaLogDirs is building in ``target``."""

    replica: Replica
    target: LogDir
    copied: float = 0.0
    rate: float = 0.0
    caught_up: bool = False  # the new directory has been reported; waiting for the controller


def backoff_seconds(failures: int) -> float:
    """Kafka's ExponentialBackoff(100 ms, x2, 10 s, 2% jitter) after ``failures`` failures in a row."""
    term = BACKOFF_INITIAL_S * BACKOFF_MULTIPLIER ** failures
    return min(term * random.uniform(1 - BACKOFF_JITTER, 1 + BACKOFF_JITTER), BACKOFF_MAX_S)


@dataclass(eq=False)
class Assignment:
    directory_id: uuid.UUID
    on_success: Callable[[], object] | None = None  # called once the controller has accepted it


class AssignmentSender:
    """Reports replica directories to the controller with AssignReplicasToDirs, as Kafka's
    AssignmentsManager: the latest assignment per partition waits 100 ms to batch with others (none if
    more than a request's 2250 are ready), one request in flight at a time, assignments whose partition
    is gone or no longer on this broker are dropped before sending; a partition that fails is retried
    with the next request, a request that fails whole (timeout, disconnection, top-level error) is retried
    after an exponential backoff."""

    def __init__(self, broker: BrokerNode) -> None:
        self.broker = broker
        self.ready: dict[Key, Assignment] = {}
        self.inflight: dict[Key, Assignment] = {}
        self.global_failures = 0
        self._timer: asyncio.TimerHandle | None = None
        self._send_at = 0.0

    @property
    def idle(self) -> bool:
        """Nothing waits to be sent or answered (a stopped broker sends nothing until it starts again)."""
        return not (self.ready or self.inflight) or not self.broker.running

    def assign(self, key: Key, directory_id: uuid.UUID, on_success: Callable[[], object] | None = None) -> None:
        pending = self.ready.get(key) or self.inflight.get(key)
        if on_success is None and pending is not None and pending.directory_id == directory_id:
            return
        self.ready[key] = Assignment(directory_id, on_success)
        self._schedule()

    def resume(self) -> None:
        """The broker (re)started: send what is waiting."""
        self.global_failures = 0
        if self.ready:
            self._schedule()

    def _schedule(self) -> None:
        loop = asyncio.get_running_loop()
        if self.global_failures:
            delay = backoff_seconds(self.global_failures)
        elif len(self.ready) > MAX_ASSIGNMENTS_PER_REQUEST and not self.inflight:
            delay = 0.0
        else:
            delay = BACKOFF_INITIAL_S
        send_at = loop.time() + delay
        if self._timer is not None:
            if self._send_at <= send_at:
                return
            self._timer.cancel()
        self._send_at = send_at
        self._timer = loop.call_later(delay, self._send_ready)

    def _send_ready(self) -> None:
        self._timer = None
        if self.inflight or not self.ready or not self.broker.running:
            return
        image = self.broker.image
        batch: dict[Key, Assignment] = {}
        for key in list(self.ready):
            if len(batch) == MAX_ASSIGNMENTS_PER_REQUEST:
                break
            assignment = self.ready.pop(key)
            topic = image.topics.get(key[0])
            state = topic.partitions.get(key[1]) if topic is not None else None
            if state is not None and self.broker.broker_id in state.replicas:
                batch[key] = assignment
        if batch:
            self.inflight = batch
            asyncio.ensure_future(self._send(batch))
        elif self.ready:
            self._schedule()

    def _request(self, batch: dict[Key, Assignment]) -> AssignReplicasToDirsRequest:
        Request = AssignReplicasToDirsRequest
        grouped: dict[uuid.UUID, dict[uuid.UUID, list[int]]] = {}
        for (topic_id, index), assignment in batch.items():
            grouped.setdefault(assignment.directory_id, {}).setdefault(topic_id, []).append(index)
        return Request(broker_id=self.broker.broker_id, broker_epoch=self.broker.epoch, directories=[
            Request.DirectoryData(id=directory, topics=[
                Request.TopicData(topic_id=topic_id, partitions=[Request.PartitionData(partition_index=i)
                                                                 for i in indexes])
                for topic_id, indexes in topics.items()])
            for directory, topics in grouped.items()])

    async def _send(self, batch: dict[Key, Assignment]) -> None:
        try:
            if self.broker.client is None:
                raise KafkaClientError("the broker is stopped")
            response = await self.broker.client.send(self._request(batch))
        except KafkaClientError as exc:
            log.info("broker %d: AssignReplicasToDirs not answered: %s", self.broker.broker_id, exc)
            response = None
        self.inflight = {}
        if response is None or response.error_code:
            self.global_failures += 1
            if response is not None:
                log.info("broker %d: AssignReplicasToDirs failed with error %d; retrying",
                         self.broker.broker_id, response.error_code)
        else:
            self.global_failures = 0
            for directory in response.directories:
                for topic in directory.topics:
                    for partition in topic.partitions:
                        assignment = batch.pop((topic.topic_id, partition.partition_index), None)
                        if assignment is None:
                            continue
                        if partition.error_code == ErrorCode.NONE:
                            if assignment.on_success is not None:
                                assignment.on_success()
                        else:
                            self.ready.setdefault((topic.topic_id, partition.partition_index), assignment)
        for key, assignment in batch.items():  # not answered: try again
            self.ready.setdefault(key, assignment)
        if self.ready:
            self._schedule()


class LogDirManager:
    """One broker's log directories and the replicas in them (see the module docstring)."""

    def __init__(self, broker: BrokerNode, directories: list[LogDir], network: ReplicationNetwork) -> None:
        if not directories:
            raise ValueError("a broker needs at least one log directory")
        self.broker = broker
        self.directories = directories
        self.network = network
        self.futures: dict[Key, FutureReplica] = {}
        self.preferred: dict[tuple[str, int], LogDir] = {}  # asked for (or kept there) before the replica existed here
        self._current_logs = {d: 0 for d in directories}  # replicas (not futures) in each directory
        self.assignments = AssignmentSender(broker)
        self._settled_at: float | None = None
        self._timer: Timer | None = None
        self._capacity_timer: Timer | None = None
        self._capacity_check_due = False
        self._failing: set[asyncio.Task] = set()  # the heartbeats telling of a directory that filled
        network.add_pace_listener(self._changed)
        network.add_rate_listener(self.watch_capacity)

    def directory(self, path_or_index: int | str | uuid.UUID) -> LogDir:
        """A directory by its index in the broker's list, its path, or its id."""
        if isinstance(path_or_index, int):
            return self.directories[path_or_index]
        for d in self.directories:
            if path_or_index in (d.path, d.directory_id, str(d.directory_id)):
                return d
        raise KeyError(f"broker {self.broker.broker_id} has no log directory {path_or_index}")

    def cordoned(self) -> list[LogDir]:
        """The directories ``cordoned.log.dirs`` names (all for ``*``), in the broker's order."""
        image = self.broker.image
        named = configs.broker_value(image.broker_configs(str(self.broker.broker_id)), image.broker_configs(""),
                                     configs.CORDONED_LOG_DIRS)
        assert isinstance(named, tuple)  # a LIST config
        if configs.CORDONED_LOG_DIRS_ALL in named:
            return list(self.directories)
        return [d for d in self.directories if d.path in named]

    def reported_cordoned(self) -> list[uuid.UUID] | None:
        """The heartbeat's CordonedLogDirs: None below metadata.version 4.3-IV0, where there are none."""
        if self.broker.image.metadata_version_level < CORDONED_LOG_DIRS_LEVEL:
            return None
        return [d.directory_id for d in self.cordoned()]

    def _by_path(self, path: str) -> LogDir | None:
        return next((d for d in self.directories if d.path == path), None)

    @property
    def _replicas(self) -> Mapping[Key, Replica]:
        return self.broker.replica_manager.replicas

    @staticmethod
    def online(replica: Replica) -> bool:
        return replica.log_dir is not None and replica.log_dir.online

    # --- placement ----------------------------------------------------------------------------------

    def place(self, replica: Replica, assigned: uuid.UUID) -> bool:
        """Put a replica in a directory if it has none yet, and report its directory if the metadata
        names another (``assigned``); False when its directory is offline (or none is online)."""
        if replica.log_dir is None:
            replica.log_dir = self._directory_for_new(replica, assigned)
            if replica.log_dir is None:
                return False
            self._current_logs[replica.log_dir] += 1
        elif not replica.log_dir.online:
            return False
        if assigned.int != replica.log_dir.directory_id.int and not (self.futures and replica.key in self.futures):
            self.assignments.assign(replica.key, replica.log_dir.directory_id)
        return True

    def keep_in(self, replica: Replica, directory: LogDir) -> None:
        """A new replica whose log a directory kept across a restart is placed there, as Kafka's log
        stays in the directory on disk that holds it (and is reported if the metadata names another)."""
        self.preferred.setdefault((replica.topic_name, replica.partition), directory)

    def _directory_for_new(self, replica: Replica, assigned: uuid.UUID | None) -> LogDir | None:
        if len(self.directories) == 1 and not self.preferred:  # the one choice (a bulk change places thousands)
            return self.directories[0] if self.directories[0].online else None
        online = [d for d in self.directories if d.online]
        if not online:
            return None
        preferred = self.preferred.pop((replica.topic_name, replica.partition), None) if self.preferred else None
        if preferred is not None and preferred.online:
            return preferred
        if len(online) == 1:
            return online[0]
        named = next((d for d in online if d.directory_id == assigned), None)
        if named is not None:
            return named
        cordoned = self.cordoned()
        open_dirs = [d for d in online if d not in cordoned]
        if not open_dirs:
            return online[0]
        logs = dict(self._current_logs)
        for future in self.futures.values():
            logs[future.target] += 1
        return min(open_dirs, key=logs.__getitem__)

    def forget(self, replica: Replica) -> None:
        """The replica was deleted: so is its future replica."""
        if replica.log_dir is not None:
            self._current_logs[replica.log_dir] -= 1
        if self.futures and self.futures.pop(replica.key, None) is not None:
            self._changed()

    # --- failure ---------------------------------------------------------------------------------

    def fail(self, directory: LogDir) -> None:
        if not directory.online:
            return
        directory.online = False
        log.warning("broker %d: log directory %s (%s) failed", self.broker.broker_id, directory.path,
                    directory.directory_id)
        for key, future in list(self.futures.items()):
            if directory in (future.target, future.replica.log_dir):
                self._drop_future(key)
        for replica in self._replicas.values():
            if replica.log_dir is directory:
                self.network.unfollow(self.broker.broker_id, replica.key)
        self._changed()

    def restore(self, directory: LogDir) -> None:
        """The directory works again: serve its replicas from their last known state (one that filled
        fails again at once unless its capacity was raised or it holds less)."""
        if directory.online:
            return
        directory.online, directory.full = True, False
        image = self.broker.image
        for replica in list(self._replicas.values()):
            if replica.log_dir is directory:
                self.broker.replica_manager.serve(image, replica)

    # --- capacity -------------------------------------------------------------------------------

    def set_capacity(self, directory: LogDir, capacity_bytes: int) -> None:
        """The directory's simulated capacity (what DescribeLogDirs reports as TotalBytes) from now on."""
        if isinstance(capacity_bytes, bool) or not isinstance(capacity_bytes, int) or capacity_bytes < 0:
            raise ValueError("a capacity is a whole number of bytes, at least 0")
        directory.capacity_bytes, directory.enforced = capacity_bytes, True
        self.watch_capacity()

    def usage(self) -> dict[LogDir, float]:
        """Bytes each directory holds now: its replicas' real and simulated bytes (a leader's with its
        ingress's growth), removing ones until deleted, and the future replicas being copied into it."""
        self.network.settle()
        self._settle()
        used = {d: 0.0 for d in self.directories}
        topics, broker_id, now = self.broker.image.topics, self.broker.broker_id, self.network.now()
        # ``_logs``' sizes, without the whole sizes it also works out. O(replicas) a call, so each topic is
        # looked up once: by the identity of its id object (the replicas of a topic share one, and all
        # stay alive meanwhile; an equal id in another object is looked up on its own, to the same answer),
        # as hashing a UUID runs in Python. A topic with no ingress adds no growth.
        looked: dict[int, tuple[bool, TopicIngress | None]] = {}
        for replica in self._replicas.values():
            directory = replica.log_dir
            if directory is None:
                continue
            topic_id = replica.topic_id
            topic = looked.get(id(topic_id))
            if topic is None:
                topic = looked[id(topic_id)] = (topic_id in topics, self.network.topic_ingress(topic_id))
            if topic[0]:
                if replica.state.leader == broker_id and topic[1] is not None:
                    used[directory] += replica.log_bytes + topic[1].grown_at(replica.partition, now)
                else:
                    used[directory] += replica.log_bytes
        for future in self.futures.values():
            used[future.target] += future.copied
        return used

    def watch_capacity(self) -> None:
        """Rates may have changed: look (once this turn of the loop) when a directory will fill."""
        if not self._capacity_check_due:
            self._capacity_check_due = True
            asyncio.get_running_loop().call_soon(self._check_capacity)

    def _growth(self) -> dict[LogDir, float]:
        """At most how fast each directory fills now (bytes per simulated second)."""
        rates = {d: 0.0 for d in self.directories}
        broker_id = self.broker.broker_id
        for replica in self._replicas.values():
            if replica.log_dir is not None and replica.log_dir.online:
                rates[replica.log_dir] += self.network.growth_rate(replica.key, broker_id,
                                                                   replica.leader == broker_id)
        for future in self.futures.values():
            rates[future.target] += future.rate
        return rates

    def _check_capacity(self) -> None:
        """Fail every directory whose bytes reached its capacity (Kafka's KafkaStorageException on a full
        disk: the directory goes offline, the broker reports it), and time the next look at the earliest
        moment another may fill at the current rates (an upper bound: the look may come early, never late)."""
        self._capacity_check_due = False
        if self._capacity_timer is not None:
            self._capacity_timer.cancel()
            self._capacity_timer = None
        if not self.broker.running or not any(d.enforced for d in self.directories):
            return
        used, rates, wait = self.usage(), self._growth(), math.inf
        for directory in self.directories:
            if not directory.online or not directory.enforced:
                continue
            free = directory.capacity_bytes - used[directory]
            if free <= CAPACITY_SLACK:
                log.error("broker %d: log directory %s is full (%d of %d bytes): it goes offline",
                          self.broker.broker_id, directory.path, int(used[directory]), directory.capacity_bytes)
                directory.full = True
                task = asyncio.ensure_future(self.broker.fail_log_dir(directory))
                self._failing.add(task)
                task.add_done_callback(self._failing.discard)
            elif rates[directory] > 0:
                wait = min(wait, free / rates[directory])
        if wait < math.inf:
            self._capacity_timer = self.network.call_later(wait, self._check_capacity)

    # --- AlterReplicaLogDirs ---------------------------------------------------------------------

    def alter(self, image: MetadataImage, topic_name: str, partition: int, path: str) -> int:
        """Move (or, for a replica not here yet, pre-place) a replica into the directory at ``path``;
        the error code, checked in ReplicaManager.alterReplicaLogDirs's order."""
        if len(f"{topic_name}-{partition}") + FUTURE_NAME_EXTRA > MAX_LOG_DIR_NAME:
            return ErrorCode.INVALID_TOPIC_EXCEPTION
        target = self._by_path(path)
        if target is None:
            return ErrorCode.LOG_DIR_NOT_FOUND
        if not target.online:
            return ErrorCode.KAFKA_STORAGE_ERROR
        if target in self.cordoned():
            return ErrorCode.INVALID_REPLICA_ASSIGNMENT
        topic_id = image.topic_ids.get(topic_name)
        replica = self._replicas.get((topic_id, partition)) if topic_id is not None else None
        if replica is None or topic_id is None:
            self.preferred[(topic_name, partition)] = target
            topic = image.topics.get(topic_id) if topic_id is not None else None
            return ErrorCode.REPLICA_NOT_AVAILABLE if topic is not None and partition in topic.partitions \
                else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        if not self.online(replica):
            return ErrorCode.KAFKA_STORAGE_ERROR
        key = (topic_id, partition)
        future = self.futures.get(key)
        if future is not None and future.target is not target:
            self._drop_future(key)
        if replica.log_dir is target or key in self.futures:
            return ErrorCode.NONE
        if any(not d.online for d in self.directories):  # no future logs while a directory is offline
            return ErrorCode.KAFKA_STORAGE_ERROR
        self.futures[key] = FutureReplica(replica, target)
        self._changed()
        return ErrorCode.NONE

    def _drop_future(self, key: Key) -> None:
        """Abandon a future replica; if its directory was already reported, report the current one back."""
        future = self.futures.pop(key)
        replica = future.replica
        if future.caught_up and self.online(replica) and self._replicas.get(key) is replica:
            assert replica.log_dir is not None  # online
            self.assignments.assign(key, replica.log_dir.directory_id)
        self._changed()

    def _promote(self, key: Key, future: FutureReplica) -> None:
        """The controller accepted the new directory: the future replica replaces the current one."""
        if self.futures.get(key) is not future:
            return
        del self.futures[key]
        assert future.replica.log_dir is not None  # a future replica moves a placed one
        self._current_logs[future.replica.log_dir] -= 1
        self._current_logs[future.target] += 1
        future.replica.log_dir = future.target
        self._changed()

    # --- copying -----------------------------------------------------------------------------------

    def on_commit(self, committed: list[tuple[int, Message]]) -> None:
        """Controller commit listener: configs change copy rates; a deleted topic drops its futures."""
        if not self.futures:
            return
        relevant = False
        for _, record in committed:
            if isinstance(record, rec.RemoveTopicRecord):
                for key in [k for k in self.futures if k[0] == record.topic_id]:
                    del self.futures[key]
                relevant = True
            elif isinstance(record, rec.ConfigRecord):
                relevant = True
        if relevant:
            self._changed()

    def changed(self) -> None:
        """The broker started or stopped: copies pause or resume, reports go out again."""
        self._changed()
        if self.broker.running:
            self.assignments.resume()

    def _changed(self) -> None:
        self._settle()
        self._reschedule()
        self.watch_capacity()

    def _settle(self) -> None:
        now = self.network.now()
        if self._settled_at is not None:
            elapsed = now - self._settled_at
            for future in self.futures.values():
                if future.rate:
                    future.copied = min(future.copied + future.rate * elapsed, future.replica.log_bytes)
        self._settled_at = now

    def _io_rate(self) -> float:
        image = self.broker.image
        own, default = image.broker_configs(str(self.broker.broker_id)), image.broker_configs("")
        io_max = configs.broker_value(own, default, configs.ALTER_LOG_DIRS_IO_MAX_BYTES)
        bandwidth = configs.broker_value(own, default, configs.REPLICATION_BANDWIDTH)
        assert isinstance(io_max, int) and isinstance(bandwidth, int)  # LONG configs
        return float(min(io_max, bandwidth))

    def _reschedule(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        moving = self.broker.running and not self.network.is_paused(self.broker.broker_id)
        copying = [f for f in self.futures.values() if not f.caught_up] if moving else []
        for future in self.futures.values():
            future.rate = 0.0
        if not copying:
            return
        share = self._io_rate() / len(copying)
        if share <= 0:
            return
        for future in copying:
            future.rate = share
        left = min(max(f.replica.log_bytes - f.copied, 0.0) for f in copying)
        self._timer = self.network.call_later(left / share, self._tick)

    def _tick(self) -> None:
        self._timer = None
        self.network.settle()
        self._settle()
        for key, future in list(self.futures.items()):
            if not future.caught_up and future.copied >= future.replica.log_bytes - CAUGHT_UP_SLACK:
                future.caught_up = True
                self.assignments.assign(key, future.target.directory_id,
                                        on_success=functools.partial(self._promote, key, future))
        self._reschedule()

    # --- DescribeLogDirs ---------------------------------------------------------------------------

    def checkpoint(self) -> list[list[Replica]]:
        """Every topic's replicas, a list per topic, for the checkpoints (server/broker/checkpoints.py):
        copied on the event loop (one C-level copy of each topic's table; a loop over every replica cost
        each broker ~0.3 s at 2M partitions), their sizes and directories read by the writing thread."""
        self.network.settle()
        return [list(hosted.values()) for hosted in self.broker.replica_manager.tables()]

    def _logs(self) -> Iterator[tuple[Replica, float, float, bool]]:
        """(replica, size, whole, is future) of every placed replica and future replica (settled by the
        caller): a leader's size with its ingress's growth, a follower's what it has copied, and what it
        would hold caught up (its lag is the difference)."""
        image = self.broker.image
        for replica in self._replicas.values():
            if replica.log_dir is not None and replica.topic_id in image.topics:
                grown = self.network.grown(replica.key)  # the leader's log beyond its configured size
                size = replica.log_bytes + grown if replica.leader == self.broker.broker_id else replica.log_bytes
                whole = partition_size(image, replica.topic_name, replica.partition) + grown
                yield replica, size, max(whole, size), False
        for future in self.futures.values():
            yield future.replica, future.copied, future.replica.log_bytes, True

    def describe(self, wanted: set[tuple[str, int]] | None) -> list:
        """One result per directory: its replicas (those in ``wanted``, every one for None) and future
        replicas with sizes and lags, its capacity and free bytes; an offline one KAFKA_STORAGE_ERROR."""
        self.network.settle()
        self._settle()
        image = self.broker.image
        logs: dict[LogDir, list] = {d: [] for d in self.directories}
        for entry in self._logs():
            replica, is_future = entry[0], entry[3]
            logs[self.futures[replica.key].target if is_future else replica.log_dir].append(  # type: ignore[index]
                (replica, int(entry[1]), int(entry[2]) - int(entry[1]), is_future))
        cordoned = self.cordoned() if image.metadata_version_level >= CORDONED_LOG_DIRS_LEVEL else []
        results = []
        for directory in self.directories:
            if not directory.online:
                results.append(Result(error_code=ErrorCode.KAFKA_STORAGE_ERROR, log_dir=directory.path))
                continue
            used = sum(size for _, size, _, _ in logs[directory])
            topics: dict[str, list] = {}
            for replica, size, lag, is_future in sorted(logs[directory],
                                                        key=lambda log: (log[0].topic_name, log[0].partition, log[3])):
                if wanted is None or (replica.topic_name, replica.partition) in wanted:
                    topics.setdefault(replica.topic_name, []).append(DescribeLogDirsResponse.DescribeLogDirsPartition(
                        partition_index=replica.partition, partition_size=size, offset_lag=lag,
                        is_future_key=is_future))
            results.append(Result(
                log_dir=directory.path, is_cordoned=directory in cordoned, total_bytes=directory.capacity_bytes,
                usable_bytes=max(directory.capacity_bytes - used, 0),
                topics=[DescribeLogDirsResponse.DescribeLogDirsTopic(name=name, partitions=partitions)
                        for name, partitions in topics.items()]))
        return results
