"""Simulated replication: what each broker hosts, and how fast new replicas copy their data.

``ReplicaManager`` (one per simulated broker) keeps the replicas the broker hosts, as the controller's
LeaderAndIsr requests describe them: it creates a replica when the broker becomes one, deletes it when
the broker leaves the replica list, and answers stale leader epochs with STALE_CONTROLLER_EPOCH (11),
as Kafka's ReplicaManager does. As a leader it asks the controller, with AlterPartition over TCP, to
add followers that have caught up to the ISR; that is what completes reassignments, and what heals
ISRs after a broker comes back.

``ReplicationNetwork`` (one per cluster) is the data plane: no bytes move, but every out-of-sync
follower copies its partition's size (``kraftwire.partition.size.bytes``) at a simulated rate. The
rate follows Kafka's throttles (KIP-179): a copy is throttled on the leader side when its topic's
``leader.replication.throttled.replicas`` lists partition:leader (or is ``*``), and on the follower
side when ``follower.replication.throttled.replicas`` lists partition:follower; a broker's
``leader.replication.throttled.rate`` is shared by every leader-throttled copy it sends and its
``follower.replication.throttled.rate`` by every follower-throttled copy it receives. Every copy also
shares the sending and the receiving broker's ``kraftwire.replication.bandwidth.bytes.per.second``.
Rates are max-min fair over those shared limits (``allocate_rates``) and are recomputed whenever a copy
starts or ends or a config changes; between those events they are constant, so a copy's end is known in
advance and timed exactly. Simulated time runs ``speed`` times faster than the wall clock.

Two controls act on the data plane at run time. ``pause(broker)`` stops every copy to or from the
broker (it leads or follows) and ``resume(broker)`` lets them go on from the bytes they had; a paused
copy's rate is 0, so it stands still and its end is not timed. ``set_speed`` changes how fast simulated
time runs from now on: the simulated clock keeps counting from where it was (it never jumps), so copies
keep their bytes and only their ends are timed anew. Whoever else times copies by ``now()`` (the log
directories' future replicas) hears of both through ``add_pace_listener``.

A replica that was in the ISR when its broker learnt of it holds the whole partition (a new topic's
replicas, a restarted broker's replicas); one that was not starts empty, or keeps what it had already
copied.

Each replica lives in one of its broker's log directories (server/broker/log_dirs.py places it, KIP-858); a
replica whose directory is offline is not served: its LeaderAndIsr entries answer KAFKA_STORAGE_ERROR
(56), it copies nothing and, as a leader, proposes nothing, until the directory is restored.
"""
from __future__ import annotations

import asyncio
import logging
import math
import uuid
from dataclasses import dataclass, field

from kraftwire.codec import records as rec
from kraftwire.codec.messages import AlterPartitionRequest, LeaderAndIsrResponse

from kraftwire.server.metadata import configs
from kraftwire.server.wire.client import KafkaClientError
from kraftwire.codec import ErrorCode
from kraftwire.codec.constants import LEADER_AND_ISR_FULL
from kraftwire.server.metadata.image import MetadataImage

log = logging.getLogger("kraftwire.replication")

TOPIC_IDS_VERSION = 5  # LeaderAndIsr responses group partitions by topic id from v5
ALTER_PARTITION_VERSION = 3  # with each ISR member's broker epoch (KIP-903)
UNLIMITED = float(configs.LONG_MAX)
CAUGHT_UP_SLACK = 0.5  # bytes: float rounding of rate x time


@dataclass(eq=False)
class Replica:
    """One partition replica hosted by a broker, as the last LeaderAndIsr described it."""

    topic_id: uuid.UUID
    topic_name: str
    partition: int
    leader: int
    leader_epoch: int
    partition_epoch: int
    isr: tuple[int, ...]
    replicas: tuple[int, ...]
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()
    log_bytes: float = 0.0
    log_dir: object = None  # the log_dirs.LogDir holding it; None until placed

    @property
    def key(self) -> tuple[uuid.UUID, int]:
        return self.topic_id, self.partition


@dataclass(eq=False)
class Copy:
    """A follower replica fetching its partition from the leader. ``started_at`` and ``finished_at`` are
    the simulated times it first moved bytes and came to hold the whole partition (None until then),
    worked out from the rates: exact however late the event loop gets round to them."""

    replica: Replica
    follower: int
    size: float = 0.0
    rate: float = 0.0
    started_at: float | None = None
    finished_at: float | None = None


def allocate_rates(demands: dict, capacities: dict) -> dict:
    """Max-min fair rates: ``demands`` maps each flow to the limits it goes through, ``capacities``
    each limit to its bytes/s. Repeatedly the limit with the smallest fair share fixes that share for
    all its flows, whose use is taken off the other limits they cross."""
    users: dict = {}
    for flow, limits in demands.items():
        for limit in limits:
            users.setdefault(limit, set()).add(flow)
    remaining = dict(capacities)
    rates = {}
    while users:
        limit = min(users, key=lambda l: remaining[l] / len(users[l]))
        share = max(remaining[limit], 0.0) / len(users[limit])
        for flow in users.pop(limit):
            rates[flow] = share
            for other in demands[flow]:
                if other in users:
                    users[other].discard(flow)
                    remaining[other] -= share
                    if not users[other]:
                        del users[other]
    return rates


def _checked_speed(speed) -> float:
    if isinstance(speed, bool) or not isinstance(speed, (int, float)) or not math.isfinite(speed) or speed <= 0:
        raise ValueError("the speed must be a positive number")
    return float(speed)


def partition_size(image: MetadataImage, topic_name: str) -> int:
    return configs.topic_value(image.topic_configs(topic_name), image.broker_configs(""),
                               configs.PARTITION_SIZE_BYTES)


class _Limits:
    """The configs copies are limited by, read once per rate computation."""

    def __init__(self, image: MetadataImage):
        self.image = image
        self._brokers: dict = {}
        self._topics: dict = {}

    def broker(self, broker_id: int, name: str) -> float:
        key = (broker_id, name)
        if key not in self._brokers:
            self._brokers[key] = float(configs.broker_value(
                self.image.broker_configs(str(broker_id)), self.image.broker_configs(""), name))
        return self._brokers[key]

    def topic(self, topic_name: str):
        """(partition size, leader-throttled replicas, follower-throttled replicas) of a topic."""
        if topic_name not in self._topics:
            dynamic = self.image.topic_configs(topic_name)
            listed = [configs.throttled_replicas(dynamic[name]) if dynamic.get(name) else frozenset()
                      for name in (configs.LEADER_THROTTLED_REPLICAS, configs.FOLLOWER_THROTTLED_REPLICAS)]
            self._topics[topic_name] = (float(partition_size(self.image, topic_name)), *listed)
        return self._topics[topic_name]

    @staticmethod
    def throttled(listed, partition: int, broker_id: int) -> bool:
        return listed == "all" or (partition, broker_id) in listed


class ReplicationNetwork:
    """The cluster's simulated data plane (see the module docstring)."""

    def __init__(self, image_source, speed: float = 1.0):
        self._speed = _checked_speed(speed)
        self._clock_origin = (0.0, 0.0)  # (loop time, simulated time) from which now() counts at speed
        self._paused: set[int] = set()
        self._pace_listeners: list = []
        self._image = image_source
        self.managers: dict[int, ReplicaManager] = {}
        self.copies: dict[tuple[uuid.UUID, int, int], Copy] = {}
        self._settled_at: float | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._recompute_scheduled = False
        self._followed: list[Copy] = []  # copies (re)started since the last recompute

    @property
    def speed(self) -> float:
        """How many simulated seconds pass in one second of the wall clock."""
        return self._speed

    def now(self) -> float:
        """Simulated seconds."""
        return self._simulated_at(asyncio.get_running_loop().time())

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

    def add_pace_listener(self, listener) -> None:
        """``listener()`` is called after a pause, a resume or a speed change, to settle and time anew
        other copies timed by ``now()``."""
        self._pace_listeners.append(listener)

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
        key = (replica.topic_id, replica.partition, follower)
        copy = self.copies.get(key)
        if copy is None:
            copy = self.copies[key] = Copy(replica, follower)
        copy.replica = replica
        self._followed.append(copy)

    def unfollow(self, follower: int, key: tuple[uuid.UUID, int]) -> None:
        if (key[0], key[1], follower) in self.copies:
            self._before_change()
            del self.copies[(key[0], key[1], follower)]

    def _before_change(self) -> None:
        """Settle at the old rates once, then recompute the rates once, after every change made in
        this turn of the event loop (a LeaderAndIsr request may start thousands of copies)."""
        if not self._recompute_scheduled:
            self._settle()
            self._recompute_scheduled = True
            asyncio.get_running_loop().call_soon(self._recompute)

    def _recompute(self) -> None:
        self._recompute_scheduled = False
        self._settle()
        self._reschedule()
        followed, self._followed = self._followed, []
        for copy in followed:  # a replica that already holds everything (e.g. after a restart)
            if self.caught_up(copy.replica.topic_id, copy.replica.partition, copy.follower):
                self._tell_leader(copy)

    def caught_up(self, topic_id: uuid.UUID, partition: int, follower: int) -> bool:
        copy = self.copies.get((topic_id, partition, follower))
        manager = self.managers.get(follower)
        return (copy is not None and manager is not None and manager.running
                and copy.replica.log_bytes >= copy.size - CAUGHT_UP_SLACK and copy.size > 0)

    def changed(self) -> None:
        """Something rates depend on changed (configs, topics, a broker stopped or started)."""
        self._settle()
        self._reschedule()
        for copy in list(self.copies.values()):
            if self.caught_up(copy.replica.topic_id, copy.replica.partition, copy.follower):
                self._tell_leader(copy)

    def on_commit(self, committed) -> None:
        """Controller commit listener: configs and topic removals change rates."""
        if any(isinstance(record, (rec.ConfigRecord, rec.RemoveTopicRecord)) for _, record in committed):
            self.changed()

    # --- progress -----------------------------------------------------------------------------

    def progress(self) -> list[dict]:
        """Every follower copy: bytes moved and left (0 once caught up), and its current rate (bytes/s
        of simulated time)."""
        self._settle()
        return [{"topic": c.replica.topic_name, "partition": c.replica.partition, "follower": c.follower,
                 "leader": c.replica.leader, "bytes_moved": int(c.replica.log_bytes),
                 "bytes_left": max(int(c.size) - int(c.replica.log_bytes), 0), "rate": c.rate}
                for c in self.copies.values()]

    # --- the clock ------------------------------------------------------------------------------

    def _settle(self) -> None:
        """Account the bytes moved since the last settlement at the rates in force."""
        try:
            now = self.now()
        except RuntimeError:
            return
        if self._settled_at is not None:
            elapsed = now - self._settled_at
            for copy in self.copies.values():
                if copy.rate:
                    left = copy.size - copy.replica.log_bytes
                    if copy.finished_at is None and copy.rate * elapsed >= left - CAUGHT_UP_SLACK:
                        copy.finished_at = self._settled_at + max(left, 0.0) / copy.rate
                    copy.replica.log_bytes = min(copy.size, copy.replica.log_bytes + copy.rate * elapsed)
        self._settled_at = now

    def _running(self, broker_id: int) -> bool:
        manager = self.managers.get(broker_id)
        return manager is not None and manager.running

    def _reschedule(self) -> None:
        image = self._image()
        limits_of = _Limits(image)
        demands = {}
        capacities = {}
        for key, copy in list(self.copies.items()):
            replica = copy.replica
            if replica.topic_id not in image.topics:
                del self.copies[key]
                continue
            copy.size, leader_listed, follower_listed = limits_of.topic(replica.topic_name)
            copy.rate = 0.0
            leader, follower = replica.leader, copy.follower
            if replica.log_bytes >= copy.size - CAUGHT_UP_SLACK or leader < 0 or leader == follower \
                    or not self._running(leader) or not self._running(follower) \
                    or leader in self._paused or follower in self._paused:
                continue
            limits = [("out", leader), ("in", follower)]
            for limit in limits:
                capacities[limit] = limits_of.broker(limit[1], configs.REPLICATION_BANDWIDTH)
            for side, broker_id, listed, rate_name in (
                    ("leader-throttle", leader, leader_listed, configs.LEADER_THROTTLED_RATE),
                    ("follower-throttle", follower, follower_listed, configs.FOLLOWER_THROTTLED_RATE)):
                if limits_of.throttled(listed, replica.partition, broker_id):
                    rate = limits_of.broker(broker_id, rate_name)
                    if rate < UNLIMITED:
                        limits.append((side, broker_id))
                        capacities[limits[-1]] = rate
            demands[key] = limits
        for key, rate in allocate_rates(demands, capacities).items():
            copy = self.copies[key]
            copy.rate = rate
            if rate > 0:
                copy.finished_at = None
                if copy.started_at is None:
                    copy.started_at = self._settled_at
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        finishing = [(c.size - c.replica.log_bytes) / c.rate for c in self.copies.values() if c.rate > 0]
        if finishing:
            self._timer = asyncio.get_running_loop().call_later(max(min(finishing), 0.0) / self._speed, self._tick)

    def _tick(self) -> None:
        self._timer = None
        self._settle()
        done = [c for c in self.copies.values() if c.rate > 0 and c.replica.log_bytes >= c.size - CAUGHT_UP_SLACK]
        for copy in done:
            copy.replica.log_bytes = copy.size
        self._reschedule()
        for copy in done:
            self._tell_leader(copy)

    def _tell_leader(self, copy: Copy) -> None:
        manager = self.managers.get(copy.replica.leader)
        if manager is not None and manager.running:
            manager.follower_caught_up(copy.replica.key)


class ReplicaManager:
    """The replicas one simulated broker hosts (see the module docstring)."""

    def __init__(self, broker, network: ReplicationNetwork):
        self.broker = broker
        self.broker_id = broker.broker_id
        self.network = network
        self.replicas: dict[tuple[uuid.UUID, int], Replica] = {}
        self.controller_epoch = -1
        self._proposing: set[tuple[uuid.UUID, int]] = set()  # partitions with an AlterPartition in flight
        self._to_propose: set[tuple[uuid.UUID, int]] = set()
        self._flush_scheduled = False
        network.managers[self.broker_id] = self

    @property
    def running(self) -> bool:
        return self.broker.running

    def leaders(self) -> list[Replica]:
        return [r for r in self.replicas.values() if r.leader == self.broker_id]

    # --- LeaderAndIsr ---------------------------------------------------------------------------

    def become_leader_or_follower(self, request, version: int) -> LeaderAndIsrResponse:
        if request.controller_epoch < self.controller_epoch:
            return LeaderAndIsrResponse(error_code=ErrorCode.STALE_CONTROLLER_EPOCH)
        self.controller_epoch = request.controller_epoch
        image = self.broker.image
        errors: dict[uuid.UUID, list] = {}
        for topic_name, topic_id, state in _partition_states(image, request):
            code = self._apply(image, topic_name, topic_id, state)
            errors.setdefault(topic_id, []).append((topic_name, state.partition_index, code))
        if request.type == LEADER_AND_ISR_FULL:  # every partition this broker hosts: anything else is a stray
            listed = {(topic_id, p) for topic_id, results in errors.items() for _, p, _ in results}
            for key in [k for k in self.replicas if k not in listed]:
                self._delete(key)
        Error = LeaderAndIsrResponse.LeaderAndIsrPartitionError
        if version >= TOPIC_IDS_VERSION:
            return LeaderAndIsrResponse(topics=[
                LeaderAndIsrResponse.LeaderAndIsrTopicError(
                    topic_id=topic_id or uuid.UUID(int=0),  # a topic it could not resolve: the zero id
                    partition_errors=[Error(partition_index=p, error_code=c) for _, p, c in results])
                for topic_id, results in errors.items()])
        return LeaderAndIsrResponse(partition_errors=[Error(topic_name=t, partition_index=p, error_code=c)
                                                      for results in errors.values() for t, p, c in results])

    def _apply(self, image, topic_name: str, topic_id: uuid.UUID | None, state) -> int:
        if topic_id is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        key = (topic_id, state.partition_index)
        replica = self.replicas.get(key)
        if replica is not None and (state.leader_epoch, state.partition_epoch) < (replica.leader_epoch,
                                                                                  replica.partition_epoch):
            return ErrorCode.STALE_CONTROLLER_EPOCH
        if self.broker_id not in state.replicas:
            if key in self.replicas:
                self._delete(key)
            return ErrorCode.NONE
        if replica is None:
            replica = self.replicas[key] = Replica(topic_id, topic_name, state.partition_index, state.leader,
                                                   state.leader_epoch, state.partition_epoch, (), ())
        replica.leader, replica.leader_epoch, replica.partition_epoch = (state.leader, state.leader_epoch,
                                                                        state.partition_epoch)
        replica.isr, replica.replicas = tuple(state.isr), tuple(state.replicas)
        replica.adding, replica.removing = tuple(state.adding_replicas), tuple(state.removing_replicas)
        if not self.broker.log_manager.place(image, replica):
            return ErrorCode.KAFKA_STORAGE_ERROR
        self.serve(image, replica)
        return ErrorCode.NONE

    def serve(self, image, replica: Replica) -> None:
        """Act on a replica's state: lead it, or copy it from its leader."""
        if self.broker_id in replica.isr:
            replica.log_bytes = max(replica.log_bytes, float(partition_size(image, replica.topic_name)))
        if replica.leader == self.broker_id:
            self.network.unfollow(self.broker_id, replica.key)
            self.follower_caught_up(replica.key)
        else:
            self.network.follow(self.broker_id, replica)

    def _delete(self, key: tuple[uuid.UUID, int]) -> None:
        replica = self.replicas.pop(key)
        self.network.unfollow(self.broker_id, key)
        self.broker.log_manager.forget(replica)

    # --- ISR expansion --------------------------------------------------------------------------

    def follower_caught_up(self, key: tuple[uuid.UUID, int]) -> None:
        """Some follower of ``key`` may be ready to join the ISR: propose it if this broker leads."""
        replica = self.replicas.get(key)
        if replica is None or replica.leader != self.broker_id or not self.broker.log_manager.online(replica):
            return
        self._to_propose.add(key)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(self._propose()))

    def _expanded_isr(self, image, replica: Replica) -> list[int] | None:
        joining = [b for b in replica.replicas if b not in replica.isr
                   and (broker := image.brokers.get(b)) is not None and broker.active
                   and self.network.caught_up(replica.topic_id, replica.partition, b)]
        return list(replica.isr) + joining if joining else None

    async def _propose(self) -> None:
        self._flush_scheduled = False
        if not self.running or self.broker.client is None:
            self._to_propose.clear()
            return
        image = self.broker.image
        keys = self._to_propose - self._proposing  # the others wait for their answer
        self._to_propose -= keys
        topics: dict[uuid.UUID, list] = {}
        sent: dict[tuple[uuid.UUID, int], int] = {}
        for key in keys:
            replica = self.replicas.get(key)
            if replica is None or replica.leader != self.broker_id:
                continue
            isr = self._expanded_isr(image, replica)
            if isr is None:
                continue
            topics.setdefault(replica.topic_id, []).append(AlterPartitionRequest.PartitionData(
                partition_index=replica.partition, leader_epoch=replica.leader_epoch, new_isr_with_epochs=[AlterPartitionRequest.BrokerState(
                    broker_id=b, broker_epoch=image.brokers[b].epoch if b in image.brokers else -1) for b in isr],
                partition_epoch=replica.partition_epoch))
            sent[key] = replica.partition_epoch
        if not sent:
            return
        self._proposing |= set(sent)
        request = AlterPartitionRequest(
            broker_id=self.broker_id, broker_epoch=self.broker.epoch,
            topics=[AlterPartitionRequest.TopicData(topic_id=t, partitions=p) for t, p in topics.items()])
        try:
            response = await self.broker.client.send(request, ALTER_PARTITION_VERSION)
        except KafkaClientError as exc:
            log.warning("broker %d: AlterPartition failed: %s", self.broker_id, exc)
            response = None
        finally:
            self._proposing -= set(sent)
        again = {key for key in self._to_propose if key in sent}  # asked for while in flight
        for topic in response.topics if response is not None else ():
            for result in topic.partitions:
                key = (topic.topic_id, result.partition_index)
                replica = self.replicas.get(key)
                if replica is None:
                    continue
                if result.error_code == ErrorCode.NONE and result.partition_epoch >= replica.partition_epoch:
                    replica.isr, replica.leader_epoch = tuple(result.isr), result.leader_epoch
                    replica.partition_epoch = result.partition_epoch
                if result.error_code == ErrorCode.NONE or replica.partition_epoch != sent[key]:
                    again.add(key)  # more may have caught up, or newer state arrived meanwhile
        for key in again:
            self.follower_caught_up(key)


def _partition_states(image: MetadataImage, request):
    """(topic name, topic id or None, partition state) of every partition in a LeaderAndIsr request."""
    for topic in request.topic_states:
        topic_id = topic.topic_id if topic.topic_id.int else image.topic_ids.get(topic.topic_name)
        for state in topic.partition_states:
            yield topic.topic_name, topic_id, state
    for state in request.ungrouped_partition_states:
        yield state.topic_name, image.topic_ids.get(state.topic_name), state
