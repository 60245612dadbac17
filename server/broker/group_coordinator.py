"""The group coordinator's runtime on a broker (Kafka's CoordinatorRuntime over ``__consumer_offsets``).

A group belongs to partition Utils.abs(Java String.hashCode(group id)) % offsets.topic.num.partitions of
``__consumer_offsets`` (Kafka's Utils.abs maps Integer.MIN_VALUE to 0, as ``java_abs`` does); the broker
leading that partition is its coordinator. For each such partition it leads the broker hosts a
``GroupShard`` (server/groups/shard.py), loaded by replaying the partition's log the first time a
request needs it under the current leader epoch (so a new leader, after a
reassignment, an election or a broker's death, reads every committed offset back); a replica that does
not lead answers NOT_COORDINATOR and its shard is dropped, with every waiting JoinGroup/SyncGroup told
NOT_COORDINATOR. An operation's records are appended to the partition's log as one batch, replayed into
the shard, and answered once the high watermark passes them (acks=-1); a failed append answers
NOT_COORDINATOR (the leader moved) or COORDINATOR_NOT_AVAILABLE, and, unlike Kafka, does not revert the
replay (README, differences). Timers (sessions, rebalances, group.initial.rebalance.delay.ms) run on
the broker's clock (``BrokerClock``), checked every ``TICK_S``.

``__consumer_offsets`` is created by the first FindCoordinator of a group, with
offsets.topic.num.partitions (50) and offsets.topic.replication.factor (3): a cluster with fewer brokers
cannot create it and answers COORDINATOR_NOT_AVAILABLE until it can, as Kafka does.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec import records as rec
from kraftwire.codec.messages import CreateTopicsRequest
from kraftwire.server.groups.consumer import ConsumerLimits
from kraftwire.server.groups.shard import GroupLimits, GroupShard, Outcome, Waiter, unrouted

from .partition import BrokerClock, Partition

if TYPE_CHECKING:
    from .node import BrokerNode

OFFSETS_TOPIC = "__consumer_offsets"
TICK_S = 0.1
APPEND_TIMEOUT_S = 30.0
READ_CHUNK = 1 << 20
_log = logging.getLogger("kraftwire.broker.groups")


def java_hash(text: str) -> int:
    """Java's String.hashCode (over UTF-16 code units), as a signed 32-bit int."""
    data = text.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def java_abs(value: int) -> int:
    """Kafka's Utils.abs: the absolute value, and 0 for Integer.MIN_VALUE (whose Java abs overflows)."""
    return 0 if value == -(1 << 31) else abs(value)


def limits_of(configs: dict[str, str]) -> GroupLimits:
    def get(name: str, default: int) -> int:
        return int(configs.get(name, default))
    return GroupLimits(
        min_session_timeout_ms=get("group.min.session.timeout.ms", 6000),
        max_session_timeout_ms=get("group.max.session.timeout.ms", 1_800_000),
        max_size=get("group.max.size", 2_147_483_647),
        initial_rebalance_delay_ms=get("group.initial.rebalance.delay.ms", 3000),
        metadata_max_bytes=get("offset.metadata.max.bytes", 4096),
        retention_ms=get("offsets.retention.minutes", 10080) * 60_000,
        consumer=ConsumerLimits(heartbeat_interval_ms=get("group.consumer.heartbeat.interval.ms", 5000),
                                session_timeout_ms=get("group.consumer.session.timeout.ms", 45000),
                                max_size=get("group.consumer.max.size", 2_147_483_647)))


class _Hosted:
    def __init__(self, partition: Partition, shard: GroupShard, epoch: int) -> None:
        self.partition, self.shard, self.epoch = partition, shard, epoch


class GroupCoordinator:
    """A broker's shards, their waiting requests and their timer (see the module docstring)."""

    def __init__(self, broker: BrokerNode, clock: BrokerClock,
                 call_later: Callable[[float, Callable[[], None]], Any]) -> None:
        self.broker = broker
        self.clock = clock
        self._call_later = call_later
        self.limits = limits_of(broker.startup_configs)
        self.num_partitions = int(broker.startup_configs.get("offsets.topic.num.partitions", 50))
        self.replication_factor = int(broker.startup_configs.get("offsets.topic.replication.factor", 3))
        self.hosted: dict[int, _Hosted] = {}
        self.waiters: dict[Waiter, asyncio.Future[Any]] = {}
        self._timer: Any = None
        self._creating: asyncio.Task | None = None

    # --- where a group lives ------------------------------------------------------------------

    def partition_of(self, group_id: str) -> int:
        topic = self.broker.image.topic(OFFSETS_TOPIC)
        count = len(topic.partitions) if topic is not None else self.num_partitions
        return java_abs(java_hash(group_id)) % count

    def find(self, group_id: str) -> tuple[int, int, str, int]:
        """FindCoordinator for a group: (error code, node id, host, port); asks for ``__consumer_offsets``
        when it does not exist yet (COORDINATOR_NOT_AVAILABLE meanwhile)."""
        image = self.broker.image
        topic = image.topic(OFFSETS_TOPIC)
        if topic is None:
            self._create_topic()
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, "", -1
        state = topic.partitions.get(self.partition_of(group_id))
        broker = image.brokers.get(state.leader) if state is not None else None
        endpoint = next((e for e in broker.endpoints if e.name == self.broker.listener_name), None) \
            if broker is not None else None
        if broker is None or endpoint is None or broker.fenced:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, "", -1
        return ErrorCode.NONE, broker.broker_id, endpoint.host, endpoint.port

    def _create_topic(self) -> None:
        if self._creating is not None and not self._creating.done():
            return
        self._creating = asyncio.get_running_loop().create_task(self._send_creation())

    async def _send_creation(self) -> None:
        configs = [CreateTopicsRequest.CreatableTopicConfig(name=k, value=v) for k, v in (
            ("cleanup.policy", "compact"), ("compression.type", "producer"), ("segment.bytes", "104857600"))]
        request = CreateTopicsRequest(topics=[CreateTopicsRequest.CreatableTopic(
            name=OFFSETS_TOPIC, num_partitions=self.num_partitions, replication_factor=self.replication_factor,
            configs=configs)], timeout_ms=30_000)
        try:
            answer = await self.broker.send_to_controller(request)
        except Exception as exc:  # the controller went away: the next FindCoordinator asks again
            _log.warning("broker %d could not create %s: %s", self.broker.broker_id, OFFSETS_TOPIC, exc)
            return
        for topic in answer.topics:
            if topic.error_code not in (ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS):
                _log.warning("%s not created: error %d %s", OFFSETS_TOPIC, topic.error_code, topic.error_message)

    # --- a group's shard -----------------------------------------------------------------------

    def shard(self, group_id: str) -> _Hosted:
        """The hosted shard of the group's partition, loaded; KafkaError NOT_COORDINATOR when this
        broker does not lead it, COORDINATOR_NOT_AVAILABLE when the topic is missing."""
        return self.shard_at(self.partition_of(group_id))

    def shard_at(self, index: int) -> _Hosted:
        """``shard`` by the partition's index."""
        topic = self.broker.image.topic(OFFSETS_TOPIC)
        if topic is None:
            raise KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"{OFFSETS_TOPIC} does not exist")
        hosted = self.hosted.get(index)
        try:
            partition = self.broker.replica_manager.partition(topic.topic_id, index)
        except KafkaError:
            partition = None
        if partition is None or not partition.is_leader:
            if hosted is not None:
                self._drop(index)
            raise KafkaError(ErrorCode.NOT_COORDINATOR, f"broker {self.broker.broker_id} is not the coordinator")
        if hosted is None or hosted.partition is not partition or hosted.epoch != partition.leader_epoch:
            if hosted is not None:
                self._drop(index)
            hosted = self.hosted[index] = _Hosted(partition, self._load(partition), partition.leader_epoch)
            self._arm()
        return hosted

    def _load(self, partition: Partition) -> GroupShard:
        """Replay the partition's log into a new shard (Kafka's CoordinatorLoaderImpl)."""
        shard = GroupShard(self.limits)
        log = partition.log
        offset = log.log_start_offset
        while offset < log.log_end_offset:
            piece = log.read(offset, READ_CHUNK)
            data = piece.read()
            if not data:
                break
            for batch in rec.iter_batches(data):
                if not batch.is_control:
                    for record in batch.records:
                        if record.key is not None:
                            shard.replay(record.key, record.value)
            offset = piece.next_offset
        shard.loaded(self.clock.now_ms())
        return shard

    def _drop(self, index: int) -> None:
        """Leadership left: the shard goes, its waiting requests are told NOT_COORDINATOR."""
        hosted = self.hosted.pop(index, None)
        if hosted is None:
            return
        for waiter in [w for w in self.waiters if self.partition_of(w[0]) == index]:
            future = self.waiters.pop(waiter)
            if not future.done():
                future.set_exception(KafkaError(ErrorCode.NOT_COORDINATOR, "the coordinator moved"))

    # --- running an operation -------------------------------------------------------------------

    async def run(self, group_id: str, operation: Callable[[GroupShard, int], Outcome], named: bool = False,
                  session_timeout_ms: int | None = None) -> Any:
        """Run ``operation`` on the group's shard; its answer once its records are committed (or, when it
        waits, the completion its outcome names). KafkaError for NOT_COORDINATOR and the like, and for what
        Kafka refuses before routing (``unrouted``: an empty group id where ``named``, a JoinGroup's
        session timeout out of bounds)."""
        code = unrouted(group_id, self.limits, named, session_timeout_ms)
        if code:
            raise KafkaError(code, "refused before reaching the group's coordinator")
        hosted = self.shard(group_id)
        outcome = operation(hosted.shard, self.clock.now_ms())
        future = None
        if outcome.response is None and outcome.waiter is not None:
            future = self.waiters[outcome.waiter] = asyncio.get_running_loop().create_future()
        await self._settle(hosted, outcome)
        if future is None:
            return outcome.response
        return await future

    async def _settle(self, hosted: _Hosted, outcome: Outcome) -> None:
        """Append and replay the outcome's records, wait for their commit, then complete its waiters."""
        if outcome.records:
            code = await self._append(hosted, outcome.records)
            if code:
                error = KafkaError(code, "the records of the group could not be written")
                for waiter, _ in outcome.completions:
                    self._complete(waiter, error)
                raise error
        for waiter, response in outcome.completions:
            self._complete(waiter, response)

    def _complete(self, waiter: Waiter, answer: Any) -> None:
        future = self.waiters.pop(waiter, None)
        if future is None or future.done():
            return
        if isinstance(answer, Exception):
            future.set_exception(answer)
        else:
            future.set_result(answer)

    async def _append(self, hosted: _Hosted, records: list[tuple[bytes, bytes | None]]) -> int:
        partition = hosted.partition
        batch = rec.encode_batch(0, partition.leader_epoch, self.clock.now_ms(), list(records))
        try:
            result = partition.append_as_leader(batch, -1)
        except KafkaError as exc:
            return ErrorCode.NOT_COORDINATOR if exc.code == ErrorCode.NOT_LEADER_OR_FOLLOWER \
                else ErrorCode.COORDINATOR_NOT_AVAILABLE
        for key, value in records:
            hosted.shard.replay(key, value)
        code = await partition.wait_for_high_watermark(result.required_offset, APPEND_TIMEOUT_S)
        if code == ErrorCode.NOT_LEADER_OR_FOLLOWER:
            return ErrorCode.NOT_COORDINATOR
        return ErrorCode.NONE if code == ErrorCode.NONE else ErrorCode.COORDINATOR_NOT_AVAILABLE

    # --- time -----------------------------------------------------------------------------------

    def _arm(self) -> None:
        if self._timer is None and self.broker.running:
            self._timer = self._call_later(TICK_S, self._tick)

    def _tick(self) -> None:
        self._timer = None
        now = self.clock.now_ms()
        for index, hosted in list(self.hosted.items()):
            if not hosted.partition.is_leader or hosted.partition.leader_epoch != hosted.epoch:
                self._drop(index)
                continue
            deadline = hosted.shard.next_deadline()
            if deadline is not None and deadline <= now:
                outcome = hosted.shard.tick(now)
                if outcome.records or outcome.completions:
                    asyncio.ensure_future(self._settle_quietly(hosted, outcome))
        if self.hosted:
            self._arm()

    async def _settle_quietly(self, hosted: _Hosted, outcome: Outcome) -> None:
        try:
            await self._settle(hosted, outcome)
        except KafkaError as exc:
            _log.info("broker %d: a group's timer records were not written: %s", self.broker.broker_id, exc)

    def loaded_shards(self) -> list[GroupShard]:
        return _loaded_shards(self)

    def stop(self) -> None:
        for index in list(self.hosted):
            self._drop(index)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def _loaded_shards(coordinator: GroupCoordinator) -> list[GroupShard]:
    """The shards of the partitions it leads, each loaded first (ListGroups reads them all)."""
    topic = coordinator.broker.image.topic(OFFSETS_TOPIC)
    if topic is None:
        return []
    shards = []
    for replica in coordinator.broker.replica_manager.leaders():
        if replica.key[0] == topic.topic_id:
            group_index = replica.key[1]
            try:
                shards.append(coordinator.shard_at(group_index).shard)
            except KafkaError:
                continue
    return shards
