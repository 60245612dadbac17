"""Replication between broker processes: a follower fetches its leader's log over TCP, as Kafka's does.

Contract: for every replica a broker hosts as a follower whose leader is a broker of another process
(one its process's ``ReplicationNetwork`` does not host: ``kraftwire broker`` processes), the broker's
``ReplicaFetcher`` keeps the follower's log a prefix of the leader's and brings it up to the leader's
log end with Kafka's replica Fetch, sent to the leader's inter-broker listener (the endpoint of the
broker's own listener name in the image) at the version Kafka's follower uses at the cluster's
metadata.version (18 from 4.1-IV1, 17 from 3.9-IV0, ...), with ``ReplicaState`` naming this broker and
its broker epoch, the partition's current leader epoch, the log end as fetch offset, the log's latest
epoch as ``LastFetchedEpoch``, its log start and high watermark and its log directory's id. What comes
back is appended with ``append_as_follower`` (the leader's batches, offsets, epochs and CRCs as the
leader wrote them, in Kafka's on-disk format), the follower's high watermark follows the leader's, and
its log start follows the leader's up to its high watermark. Followers of a leader in the same process
are the in-process network's (server/broker/replication_network.py, real_bytes.py), never fetched here.

As Kafka's ``ReplicaFetcherThread``: one fetch loop per leader broker (``num.replica.fetchers`` 1),
``replica.fetch.wait.max.ms`` (500), ``replica.fetch.min.bytes`` (1), ``replica.fetch.max.bytes`` (1 MiB
per partition), ``replica.fetch.response.max.bytes`` (10 MiB) and ``replica.fetch.backoff.ms`` (1 s) from
the broker's startup configs. Truncation is Kafka's truncation on fetch (KIP-320's ``DivergingEpoch``,
which Kafka's follower uses instead of OffsetForLeaderEpoch from metadata.version 2.7 on): a diverging
answer truncates the log to the smaller of the leader's end of that epoch and the follower's own end of
it; OFFSET_OUT_OF_RANGE asks the leader's log end with ListOffsets as a replica and truncates to it when
the follower's log is longer, else starts the log again empty at the leader's log start. A partition
whose answer is an error (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, ...) waits
``replica.fetch.backoff.ms`` or its next partition state, whichever comes first.

Throttles (KIP-73), the same configs the in-process path's rates follow, on real bytes: a follower
out of the ISR whose partition ``follower.replication.throttled.replicas`` lists (partition:this broker,
or ``*``) is left out of the fetch while the broker's received throttled bytes exceed
``follower.replication.throttled.rate`` (``ReplicationQuota``, over Kafka's 11 windows of 1 s, on the
network's clock); the leader's side (server/broker/fetch.py) answers such a replica no records while its
sent throttled bytes exceed ``leader.replication.throttled.rate``. In-sync replicas are never held back,
their bytes count against the quota, as Kafka's.
"""
from __future__ import annotations

import asyncio
import logging
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.messages import FetchRequest, ListOffsetsRequest
from kraftwire.server.metadata import configs
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.metadata.record_versions import METADATA_VERSIONS
from kraftwire.server.wire.client import KafkaClient, KafkaClientError

if TYPE_CHECKING:
    from .node import BrokerNode
    from .partition import Partition
    from .replica_manager import Replica
    from .replication_network import ReplicationNetwork

log = logging.getLogger("kraftwire.replication")

NO_EPOCH = -1
FETCH_KEY = 1
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
LIST_OFFSETS_VERSION = 10  # Kafka 4.3's follower (metadata.version 3.x and on)
QUOTA_WINDOWS = 11  # replication.quota.window.num
QUOTA_WINDOW_S = 1.0  # replication.quota.window.size.seconds
DEFAULTS = {"replica.fetch.wait.max.ms": 500, "replica.fetch.min.bytes": 1,
            "replica.fetch.max.bytes": 1048576, "replica.fetch.response.max.bytes": 10485760,
            "replica.fetch.backoff.ms": 1000}


def fetch_version(level: int) -> int:
    """The Fetch version Kafka's follower sends at a metadata.version level (``fetchRequestVersion``)."""
    for name, version in (("4.1-IV1", 18), ("3.9-IV0", 17), ("3.7-IV4", 16), ("3.5-IV1", 15), ("3.5-IV0", 14)):
        if name in METADATA_VERSIONS and level >= METADATA_VERSIONS[name]:
            return version
    return 13


def throttled(image: MetadataImage, topic_name: str, partition: int, broker_id: int, leader_side: bool) -> float | None:
    """The throttle rate (bytes/s) that applies to ``broker_id``'s replica of a partition on one side, or
    None when its topic does not list it (or the broker has no rate)."""
    name = configs.LEADER_THROTTLED_REPLICAS if leader_side else configs.FOLLOWER_THROTTLED_REPLICAS
    listed_text = image.topic_configs(topic_name).get(name)
    if not listed_text:
        return None
    listed = configs.throttled_replicas(listed_text)
    if not (listed == "all" or (partition, broker_id) in listed):
        return None
    rate_name = configs.LEADER_THROTTLED_RATE if leader_side else configs.FOLLOWER_THROTTLED_RATE
    rate = configs.broker_value(image.broker_configs(str(broker_id)), image.broker_configs(""), rate_name)
    assert isinstance(rate, (int, float))
    return None if rate >= configs.LONG_MAX else float(rate)


class ReplicationQuota:
    """Kafka's ``ReplicationQuotaManager`` for one side of one broker: the throttled bytes it moved over
    the last ``QUOTA_WINDOWS`` windows, and whether their rate exceeds the bound. ``now()`` is seconds."""

    def __init__(self, now: Callable[[], float]):
        self._now = now
        self._samples: deque[tuple[float, int]] = deque()  # (window start, bytes)

    def record(self, nbytes: int) -> None:
        now = self._now()
        start = now - now % QUOTA_WINDOW_S
        if self._samples and self._samples[-1][0] == start:
            self._samples[-1] = (start, self._samples[-1][1] + nbytes)
        else:
            self._samples.append((start, nbytes))
        self._expire(now)

    def _expire(self, now: float) -> None:
        while self._samples and self._samples[0][0] <= now - QUOTA_WINDOWS * QUOTA_WINDOW_S:
            self._samples.popleft()

    def rate(self) -> float:
        now = self._now()
        self._expire(now)
        if not self._samples:
            return 0.0
        # as Kafka's Rate: over the elapsed span of the kept windows, at least all windows but one
        elapsed = max(now - self._samples[0][0], (QUOTA_WINDOWS - 1) * QUOTA_WINDOW_S)
        return sum(n for _, n in self._samples) / elapsed

    def exceeded(self, bound: float) -> bool:
        return self.rate() > bound


@dataclass(slots=True)
class _Fetching:
    """One followed partition: the replica it fetches for and until when it waits after an error."""

    replica: Replica
    leader: int
    leader_epoch: int
    delayed_until: float = 0.0


class ReplicaFetcher:
    """The replica fetches of one broker to leaders of other processes (see the module docstring)."""

    def __init__(self, broker: BrokerNode, network: ReplicationNetwork,
                 partition: Callable[[tuple[uuid.UUID, int]], Partition | None]):
        self.broker = broker
        self.network = network
        self._partition = partition
        self._fetching: dict[tuple[uuid.UUID, int], _Fetching] = {}
        self._loops: dict[int, asyncio.Task] = {}
        self._wakes: dict[int, asyncio.Event] = {}
        self._clients: dict[int, KafkaClient] = {}
        self.quota = ReplicationQuota(network.now)  # the follower side's throttled bytes received
        self.stopped = False

    def _config(self, name: str) -> int:
        return int(self.broker.startup_configs.get(name, DEFAULTS[name]))

    # --- which partitions ---------------------------------------------------------------------------

    def update(self, replica: Replica) -> None:
        """The replica took a state: fetch it from its leader if that is a broker of another process."""
        key = replica.key
        leader = replica.leader
        if self.stopped or leader < 0 or leader == self.broker.broker_id or self.network.hosts(leader):
            self.remove(key)
            return
        entry = self._fetching.get(key)
        if entry is None or entry.leader != leader or entry.leader_epoch != replica.leader_epoch:
            if entry is not None and entry.leader != leader:
                self._wake(entry.leader)
            self._fetching[key] = _Fetching(replica, leader, replica.leader_epoch)
        else:
            entry.replica = replica
            entry.delayed_until = 0.0
        loop = self._loops.get(leader)
        if loop is None or loop.done():
            self._wakes[leader] = asyncio.Event()
            self._loops[leader] = asyncio.ensure_future(self._run(leader))
        self._wake(leader)

    def remove(self, key: tuple[uuid.UUID, int]) -> None:
        entry = self._fetching.pop(key, None)
        if entry is not None:
            self._wake(entry.leader)

    def _wake(self, leader: int) -> None:
        wake = self._wakes.get(leader)
        if wake is not None:
            wake.set()

    def fetching(self, key: tuple[uuid.UUID, int]) -> bool:
        return key in self._fetching

    def stop(self) -> None:
        """The broker stops: every loop ends (started again by the next ``update`` after a start)."""
        self.stopped = True
        self._fetching.clear()
        loops, self._loops = list(self._loops.values()), {}
        for task in loops:
            task.cancel()
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            asyncio.ensure_future(client.close())

    # --- one leader's loop --------------------------------------------------------------------------

    def _mine(self, leader: int) -> list[_Fetching]:
        return [entry for entry in self._fetching.values() if entry.leader == leader]

    async def _run(self, leader: int) -> None:
        backoff_s = self._config("replica.fetch.backoff.ms") / 1000.0
        while not self.stopped:
            entries = self._mine(leader)
            if not entries:
                break
            wake = self._wakes[leader]
            wake.clear()
            loop_now = asyncio.get_running_loop().time()
            ready = [e for e in entries if e.delayed_until <= loop_now]
            try:
                sent = await self._fetch_once(leader, ready) if ready else False
            except Exception as exc:  # noqa: BLE001  # a lost connection, a refusal: fetched again after a pause
                log.warning("broker %d: replica fetch from broker %d failed: %s", self.broker.broker_id, leader, exc)
                client = self._clients.pop(leader, None)
                if client is not None:
                    await client.close()
                sent = False
            if not sent:
                delays = [e.delayed_until - loop_now for e in entries if e.delayed_until > loop_now]
                try:
                    await asyncio.wait_for(wake.wait(), min(delays, default=backoff_s))
                except TimeoutError:
                    pass
        if self._loops.get(leader) is asyncio.current_task():
            del self._loops[leader]
            client = self._clients.pop(leader, None)
            if client is not None:
                await client.close()

    def _client(self, leader: int) -> KafkaClient | None:
        client = self._clients.get(leader)
        if client is not None:
            return client
        broker = self.broker.image.brokers.get(leader)
        if broker is None:
            return None
        for endpoint in broker.endpoints:
            if endpoint.name == self.broker.listener_name:
                client = self._clients[leader] = KafkaClient(
                    endpoint.host, endpoint.port, f"replica-fetcher-{self.broker.broker_id}-{leader}")
                return client
        return None

    async def _fetch_once(self, leader: int, entries: list[_Fetching]) -> bool:
        """Send one Fetch for the partitions ready to fetch and act on its answer; False if none was sent."""
        client = self._client(leader)
        if client is None:
            raise KafkaClientError(f"broker {leader} has no {self.broker.listener_name} endpoint in the image")
        image = self.broker.image
        version = fetch_version(image.metadata_version_level)
        topics: dict[uuid.UUID, list[FetchRequest.FetchPartition]] = {}
        asked: dict[tuple[uuid.UUID, int], tuple[_Fetching, Partition, int]] = {}
        for entry in entries:
            replica = entry.replica
            partition = self._hosted(replica)
            if partition is None:
                continue
            if self._held_back(image, replica):
                continue
            partition_log = partition.log
            latest = partition_log.latest_epoch
            topics.setdefault(replica.topic_id, []).append(FetchRequest.FetchPartition(
                partition=replica.partition, current_leader_epoch=entry.leader_epoch,
                fetch_offset=partition_log.log_end_offset,
                last_fetched_epoch=latest if latest is not None else NO_EPOCH,
                log_start_offset=partition_log.log_start_offset,
                partition_max_bytes=self._config("replica.fetch.max.bytes"),
                replica_directory_id=replica.log_dir.directory_id if replica.log_dir is not None else uuid.UUID(int=0),
                high_watermark=partition_log.high_watermark))
            asked[replica.key] = (entry, partition, partition_log.log_end_offset)
        if not asked:
            return False
        if version not in range(*self._range(client)):
            version = min(version, self._range(client)[1] - 1)
        older = version < 15  # ReplicaId up to v14, ReplicaState from v15
        request = FetchRequest(
            replica_id=self.broker.broker_id if older else -1,
            replica_state=FetchRequest.ReplicaState(
                replica_id=-1 if older else self.broker.broker_id, replica_epoch=-1 if older else self.broker.epoch),
            max_wait_ms=self._config("replica.fetch.wait.max.ms"), min_bytes=self._config("replica.fetch.min.bytes"),
            max_bytes=self._config("replica.fetch.response.max.bytes"), isolation_level=0, session_id=0,
            session_epoch=-1, topics=[FetchRequest.FetchTopic(topic_id=topic_id, partitions=partitions)
                                      for topic_id, partitions in topics.items()],
            forgotten_topics_data=[], rack_id="")
        response = await client.send(request, version)
        if response.error_code != ErrorCode.NONE:
            raise KafkaError(response.error_code, f"Fetch refused by broker {leader}")
        for topic in response.responses:
            for data in topic.partitions:
                found = asked.get((topic.topic_id, data.partition_index))
                if found is not None:
                    await self._take(leader, client, *found, data)
        return True

    @staticmethod
    def _range(client: KafkaClient) -> tuple[int, int]:
        low, high = client.versions.get(FETCH_KEY, (0, 18))
        return low, high + 1

    def _hosted(self, replica: Replica) -> Partition | None:
        try:
            partition = self._partition(replica.key)
            if partition is not None:
                partition.log  # noqa: B018  # opened (created or recovered) to fetch into
            return partition
        except KafkaError:
            return None

    def _held_back(self, image: MetadataImage, replica: Replica) -> bool:
        """Kafka's ``shouldFollowerThrottle``: out of the ISR, listed, and the quota exceeded."""
        if self.broker.broker_id in replica.isr:
            return False
        bound = throttled(image, replica.topic_name, replica.partition, self.broker.broker_id, leader_side=False)
        return bound is not None and self.quota.exceeded(bound)

    # --- an answer ----------------------------------------------------------------------------------

    async def _take(self, leader: int, client: KafkaClient, entry: _Fetching, partition: Partition,
                    fetched_at: int, data: Any) -> None:
        key = entry.replica.key
        if self._fetching.get(key) is not entry or partition.closed or partition.is_leader:
            return  # a newer state came while the fetch was out
        log_ = partition.log
        if data.error_code == ErrorCode.OFFSET_OUT_OF_RANGE:
            await self._out_of_range(client, entry, partition)
            return
        if data.error_code != ErrorCode.NONE:
            self._delay(entry)
            return
        if log_.log_end_offset != fetched_at:
            return
        diverging = data.diverging_epoch
        if diverging is not None and (diverging.epoch != NO_EPOCH or diverging.end_offset >= 0):
            self._truncate(partition, diverging.epoch, diverging.end_offset)
            return
        records = bytes(data.records) if data.records else b""
        if records:
            log_.append_as_follower(records, leader_epoch=entry.leader_epoch)
            replica = entry.replica
            if throttled(self.broker.image, replica.topic_name, replica.partition, self.broker.broker_id,
                         leader_side=False) is not None:
                self.quota.record(len(records))
        partition.follower_high_watermark(data.high_watermark)  # then the log start, which may not pass it
        start = min(data.log_start_offset, log_.high_watermark)
        if start > log_.log_start_offset:
            log_.delete_records_before(start)
        if records:
            self.broker.fetches.data_arrived(key)

    def _delay(self, entry: _Fetching) -> None:
        entry.delayed_until = asyncio.get_running_loop().time() + self._config("replica.fetch.backoff.ms") / 1000.0

    @staticmethod
    def _truncate(partition: Partition, leader_epoch: int, leader_end: int) -> None:
        """Kafka's truncation on a diverging epoch: to where the two logs last agree (or, when the
        follower's epoch there differs, to its own end of the epoch below, refined at the next fetch)."""
        log_ = partition.log
        target = min(leader_end, log_.log_end_offset) if leader_end >= 0 else log_.high_watermark
        if leader_epoch != NO_EPOCH and leader_end >= 0:
            epoch, end = log_.end_offset_for_epoch(leader_epoch)
            if epoch == leader_epoch:
                target = min(target, end)
            elif epoch != NO_EPOCH:
                target = min(end, log_.log_end_offset)
        target = max(target, log_.log_start_offset)
        if log_.truncate_to(target):
            log.info("broker %d: truncated %s-%d to %d (diverging epoch %d)", partition.broker_id,
                     partition.topic_name, partition.index, target, leader_epoch)

    async def _out_of_range(self, client: KafkaClient, entry: _Fetching, partition: Partition) -> None:
        """The fetch offset is outside the leader's log: truncate to the leader's end when beyond it, else
        start again empty at its log start (Kafka's ``handleOutOfRangeError``)."""
        leader_end = await self._leader_offset(client, entry, LATEST_TIMESTAMP)
        log_ = partition.log
        if leader_end is None:
            self._delay(entry)
        elif leader_end < log_.log_end_offset:
            log_.truncate_to(max(leader_end, log_.high_watermark if leader_end < 0 else leader_end))
        else:
            leader_start = await self._leader_offset(client, entry, EARLIEST_TIMESTAMP)
            if leader_start is None:
                self._delay(entry)
            elif leader_start > log_.log_end_offset or leader_start < log_.log_start_offset:
                log_.truncate_fully_and_start_at(leader_start)

    async def _leader_offset(self, client: KafkaClient, entry: _Fetching, timestamp: int) -> int | None:
        replica = entry.replica
        request = ListOffsetsRequest(replica_id=self.broker.broker_id, isolation_level=0, timeout_ms=30000, topics=[
            ListOffsetsRequest.ListOffsetsTopic(name=replica.topic_name, partitions=[
                ListOffsetsRequest.ListOffsetsPartition(partition_index=replica.partition,
                                                        current_leader_epoch=entry.leader_epoch,
                                                        timestamp=timestamp)])])
        response = await client.send(request, LIST_OFFSETS_VERSION)
        for topic in response.topics:
            for p in topic.partitions:
                if p.error_code == ErrorCode.NONE:
                    return int(p.offset)
        return None
