"""Fetch on a broker: reading a partition's log for consumers and following replicas, as Kafka's
``ReplicaManager.fetchMessages`` does, and OffsetForLeaderEpoch's answers.

``FetchManager`` (one per broker) takes a decoded Fetch request whose topics the handler has authorized
(server/apis/api01_fetch.py: READ on each topic for a consumer, CLUSTER_ACTION for a replica) and
answers it:

* Fetch sessions (KIP-227): kraftwire keeps none, as a Kafka broker whose session cache is full (or
  ``max.incremental.fetch.session.cache.slots=0``): a full fetch (session epoch 0 or -1) is answered
  whole with session id 0, which tells the client that no session was made, so the Java client and
  franz-go send full fetches again and librdkafka (which sends epoch -1) never asks; an incremental one
  (epoch above 0) names a session that does not exist and gets FETCH_SESSION_ID_NOT_FOUND, as Kafka
  answers for an evicted session, after which every client starts over with a full fetch.
* Per partition, in Kafka's order of checks: an unknown topic id (v13+) UNKNOWN_TOPIC_ID, an unknown
  topic or partition UNKNOWN_TOPIC_OR_PARTITION, a partition this broker does not host
  NOT_LEADER_OR_FOLLOWER, ``CurrentLeaderEpoch`` older than the replica's FENCED_LEADER_EPOCH and newer
  UNKNOWN_LEADER_EPOCH, a replica that does not lead NOT_LEADER_OR_FOLLOWER (a consumer from v11 reads a
  follower as Kafka lets it, KIP-392, up to the follower's high watermark), a fetch offset below the log
  start or past the log end OFFSET_OUT_OF_RANGE. An error's partition carries -1 offsets and no records;
  NOT_LEADER_OR_FOLLOWER and FENCED_LEADER_EPOCH from v16 carry the current leader and its endpoint
  (KIP-951).
* Records: a consumer reads up to the high watermark, a replica up to the log end; each partition at
  most its ``PartitionMaxBytes`` and what is left of ``MaxBytes``, except that the first batch of the
  first partition with data is returned whole even if larger (Kafka's rule, so a consumer always makes
  progress). The last stable offset is the high watermark (no transactions), aborted transactions are
  null, no preferred read replica is named.
* Long poll: unless an error, a divergence or ``MinBytes`` of data is at hand, the answer waits up to
  ``MaxWaitMs`` and is made again whenever one of its partitions gets new data (``data_arrived``, called
  by whoever appends or advances a high watermark); the wait follows the cluster's virtual clock when it
  is on (``ReplicationNetwork.call_later``), the wall clock otherwise.
* A replica's fetch (replica id >= 0) tells the leader's partition how far the follower's log reaches
  (``follower_fetched``), which moves the high watermark and the ISR, and is checked against the
  leader's epochs: a ``LastFetchedEpoch`` the leader's log ends elsewhere gets ``DivergingEpoch``.

Records are read from the segment files into the answer (``os.pread`` through the log's slice): the
listener writes every answer as one encoded frame, so ``os.sendfile`` would need the transport to write
a file region between two parts of a frame, in order with the connection's other answers; kraftwire
does not do that yet (README, differences).
"""
from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.messages import (FetchRequest, FetchResponse, OffsetForLeaderEpochRequest,
                                      OffsetForLeaderEpochResponse)
from kraftwire.server.metadata.image import MetadataImage, PartitionState
from .topic_stats import BrokerTopicStats

NO_OFFSET = -1
FINAL_EPOCH = -1  # a full fetch that asks for no session
INITIAL_EPOCH = 0  # a full fetch that would open a session
FIRST_VERSION_WITH_TOPIC_IDS = 13
FIRST_VERSION_WITH_LEADER_ENDPOINTS = 16
FIRST_VERSION_READING_FOLLOWERS = 11  # KIP-392: a consumer may fetch from a follower replica
NO_EPOCH = -1
INFINITE_HIGH_WATERMARK = 2**63 - 1  # a v18 request's default: the fetcher tells no high watermark


class ReadSlice(Protocol):
    """Whole batches of one segment (the storage's ``LogSlice``)."""

    @property
    def length(self) -> int: ...

    def read(self) -> bytes: ...


class ReadableLog(Protocol):
    """What the manager reads of a partition's log (server/storage/: ``PartitionLog``)."""

    @property
    def log_start_offset(self) -> int: ...

    @property
    def log_end_offset(self) -> int: ...

    def read(self, offset: int, max_bytes: int, max_offset: int | None = None,
             min_one_batch: bool = True) -> ReadSlice: ...

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]: ...


class HostedPartition(Protocol):
    """One replica this broker hosts, as the manager sees it (server/broker/partition.py)."""

    @property
    def leader_epoch(self) -> int: ...

    @property
    def is_leader(self) -> bool: ...

    @property
    def high_watermark(self) -> int: ...

    @property
    def state(self) -> PartitionState:
        """The partition state it last acted on (its replicas)."""
        ...

    @property
    def log(self) -> ReadableLog:
        """Opened on first use; KafkaError once the replica is gone."""
        ...

    def follower_fetched(self, broker_id: int, log_end_offset: int, now_ms: int | None = None,
                         log_start_offset: int | None = None) -> None: ...


@dataclass(frozen=True, slots=True)
class FetchParams:
    """The request-wide part of a fetch."""

    version: int
    replica_id: int
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    replica_epoch: int = -1

    @property
    def from_follower(self) -> bool:
        return self.replica_id >= 0


@dataclass(slots=True)
class _Wanted:
    """One partition of the request, resolved against the image; ``error`` set when refused before reading."""

    topic_id: uuid.UUID
    topic_name: str
    partition: int
    fetch_offset: int = 0
    current_leader_epoch: int = NO_EPOCH
    last_fetched_epoch: int = NO_EPOCH
    max_bytes: int = 0
    log_start_offset: int = NO_OFFSET  # the follower's
    error: int = ErrorCode.NONE
    high_watermark: int = INFINITE_HIGH_WATERMARK  # the follower's (v18, KIP-1166)


@dataclass(slots=True)
class _Read:
    """What reading one partition gave."""

    error: int = ErrorCode.NONE
    high_watermark: int = NO_OFFSET
    log_start_offset: int = NO_OFFSET
    records: bytes = b""
    diverging: tuple[int, int] | None = None  # (epoch, end offset)
    behind: bool = False  # a follower whose high watermark is below the leader's: answered at once (v18)


@dataclass(eq=False)
class _Waiter:
    keys: frozenset[tuple[uuid.UUID, int]]
    woken: asyncio.Event = field(default_factory=asyncio.Event)


Clock = Callable[[float, Callable[[], None]], Any]  # call_later(seconds, callback) -> a handle to cancel


class ReplicaFetches(Protocol):
    """What a leader does with the fetches of followers of other processes (server/broker/replica_manager.py
    and replica_fetcher.py): the ISR it may expand, the clock of the lag rule, the KIP-73 leader throttle."""

    def replica_fetched(self, key: tuple[uuid.UUID, int], follower: int) -> None: ...

    def now_ms(self) -> int: ...

    def leader_throttled(self, key: tuple[uuid.UUID, int], topic_name: str, follower: int) -> bool:
        """Whether the follower's fetch of a throttled replica outside the ISR gets no records now."""
        ...

    def leader_sent(self, key: tuple[uuid.UUID, int], topic_name: str, follower: int, nbytes: int) -> None:
        """Bytes sent to a follower (those of a throttled replica count against the leader's quota)."""
        ...


def _leader_epoch_error(partition: HostedPartition, current_leader_epoch: int) -> int:
    """Kafka's check of a request's current leader epoch against the replica's."""
    if current_leader_epoch == NO_EPOCH or current_leader_epoch == partition.leader_epoch:
        return ErrorCode.NONE
    return ErrorCode.FENCED_LEADER_EPOCH if current_leader_epoch < partition.leader_epoch \
        else ErrorCode.UNKNOWN_LEADER_EPOCH


class FetchManager:
    """A broker's Fetch and OffsetForLeaderEpoch answers (see the module docstring). ``partition(key)``
    finds a hosted replica (None if there is none; KafkaError KAFKA_STORAGE_ERROR in an offline
    directory), ``image()`` the broker's metadata, ``listener_name`` the listener whose endpoints answers
    name, ``call_later`` the clock long polls wait on."""

    def __init__(self, broker_id: int, partition: Callable[[tuple[uuid.UUID, int]], HostedPartition | None],
                 image: Callable[[], MetadataImage], listener_name: str, call_later: Clock,
                 stats: BrokerTopicStats | None = None, replicas: ReplicaFetches | None = None):
        self.broker_id = broker_id
        self._replicas = replicas
        self._stats = stats if stats is not None else BrokerTopicStats()
        self._partition = partition
        self._image = image
        self._listener_name = listener_name
        self._call_later = call_later
        self._waiters: dict[tuple[uuid.UUID, int], set[_Waiter]] = {}

    # --- notifications ----------------------------------------------------------------------------

    def data_arrived(self, key: tuple[uuid.UUID, int]) -> None:
        """A partition's log end or high watermark moved: wake the fetches waiting on it."""
        waiters = self._waiters.get(key)
        if waiters:
            for waiter in waiters:
                waiter.woken.set()

    # --- Fetch ------------------------------------------------------------------------------------

    async def fetch(self, request: FetchRequest, version: int, allowed: Callable[[str], bool]) -> FetchResponse:
        """Answer a Fetch; ``allowed(topic name)``: whether the caller may read that topic."""
        if request.session_epoch not in (INITIAL_EPOCH, FINAL_EPOCH):
            return FetchResponse(error_code=ErrorCode.FETCH_SESSION_ID_NOT_FOUND, session_id=0)
        replica_id = request.replica_state.replica_id if version >= 15 else request.replica_id
        replica_epoch = request.replica_state.replica_epoch if version >= 15 else -1
        params = FetchParams(version, replica_id, request.max_wait_ms, request.min_bytes, request.max_bytes,
                             replica_epoch)
        wanted = self._resolve(request, version, allowed)
        reads = self._read_all(wanted, params)
        if not self._answer_now(wanted, reads, params):
            reads = await self._wait(wanted, reads, params)
        return self._response(wanted, reads, params)

    def _resolve(self, request: FetchRequest, version: int, allowed: Callable[[str], bool]) -> list[_Wanted]:
        image = self._image()
        wanted = []
        for topic in request.topics:
            if version >= FIRST_VERSION_WITH_TOPIC_IDS:
                state = image.topics.get(topic.topic_id)
                topic_id, name = topic.topic_id, state.name if state is not None else ""
                unknown = ErrorCode.UNKNOWN_TOPIC_ID
            else:
                name = topic.topic
                state = image.topic(name)
                topic_id, unknown = (state.topic_id if state is not None else uuid.UUID(int=0),
                                     ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            for p in topic.partitions:
                entry = _Wanted(topic_id, name, p.partition, p.fetch_offset, p.current_leader_epoch,
                                p.last_fetched_epoch, p.partition_max_bytes, p.log_start_offset,
                                high_watermark=p.high_watermark if version >= 18 else INFINITE_HIGH_WATERMARK)
                if state is None:
                    entry.error = unknown if version >= FIRST_VERSION_WITH_TOPIC_IDS or allowed(name) \
                        else ErrorCode.TOPIC_AUTHORIZATION_FAILED
                elif not allowed(name):
                    entry.error = ErrorCode.TOPIC_AUTHORIZATION_FAILED
                elif p.partition not in state.partitions:
                    entry.error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                wanted.append(entry)
        return wanted

    def _read_all(self, wanted: list[_Wanted], params: FetchParams, report: bool = True) -> list[_Read]:
        """Read every partition in order within the request's byte limits (Kafka's ``readFromLog``)."""
        limit, min_one = params.max_bytes, True
        reads = []
        for entry in wanted:
            read = _Read(entry.error) if entry.error else self._read(entry, params, limit, min_one, report)
            if read.records:
                min_one = False
                limit = max(0, limit - len(read.records))
            reads.append(read)
        return reads

    def _read(self, entry: _Wanted, params: FetchParams, limit: int, min_one: bool, report: bool) -> _Read:
        try:
            partition = self._partition((entry.topic_id, entry.partition))
        except KafkaError as exc:  # its log directory is offline: KAFKA_STORAGE_ERROR
            return _Read(exc.code)
        if partition is None:
            return _Read(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        error = _leader_epoch_error(partition, entry.current_leader_epoch)
        if error:
            return _Read(error)
        if not partition.is_leader and (params.from_follower or params.version < FIRST_VERSION_READING_FOLLOWERS):
            return _Read(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        try:
            return self._read_log(partition, entry, params, limit, min_one, report)
        except KafkaError as exc:  # the replica went (deleted) or its log refused the read
            return _Read(exc.code)

    def _read_log(self, partition: HostedPartition, entry: _Wanted, params: FetchParams, limit: int,
                  min_one: bool, report: bool) -> _Read:
        if params.from_follower and params.replica_id not in partition.state.replicas:
            # Kafka's followerReplicaOrThrow: a replica the leader does not know yet (a reassignment's new
            # one) retries on UNKNOWN_LEADER_EPOCH when it named an epoch
            return _Read(ErrorCode.UNKNOWN_LEADER_EPOCH if entry.current_leader_epoch != NO_EPOCH
                         else ErrorCode.NOT_LEADER_OR_FOLLOWER)
        if params.from_follower and self._stale_broker_epoch(params):
            # Kafka's Partition.updateFollowerFetchState: a fetch of an older incarnation of the follower
            return _Read(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        log = partition.log
        start, end, high_watermark = log.log_start_offset, log.log_end_offset, partition.high_watermark
        if entry.fetch_offset < start or entry.fetch_offset > end:
            return _Read(ErrorCode.OFFSET_OUT_OF_RANGE)
        key = (entry.topic_id, entry.partition)
        replicas = self._replicas
        if params.from_follower:
            if report:
                partition.follower_fetched(params.replica_id, entry.fetch_offset,
                                           replicas.now_ms() if replicas is not None else None, entry.log_start_offset)
                if replicas is not None:
                    replicas.replica_fetched(key, params.replica_id)
                high_watermark = partition.high_watermark
            diverging = self._divergence(log, entry)
            if diverging is not None:
                return _Read(high_watermark=high_watermark, log_start_offset=start, diverging=diverging)
        max_offset = end if params.from_follower else high_watermark
        size = min(entry.max_bytes, limit)
        throttled = params.from_follower and replicas is not None and \
            replicas.leader_throttled(key, entry.topic_name, params.replica_id)
        records = b""
        if entry.fetch_offset < max_offset and (size > 0 or min_one) and not throttled:
            records = log.read(entry.fetch_offset, size, max_offset, min_one).read()
        return _Read(high_watermark=high_watermark, log_start_offset=start, records=records,
                     behind=params.from_follower and entry.high_watermark < high_watermark)

    def _stale_broker_epoch(self, params: FetchParams) -> bool:
        """The fetch names an epoch older than the follower's registration in the image."""
        if params.replica_epoch < 0:
            return False
        broker = self._image().brokers.get(params.replica_id)
        return broker is not None and broker.epoch > params.replica_epoch

    @staticmethod
    def _divergence(log: ReadableLog, entry: _Wanted) -> tuple[int, int] | None:
        """Where the follower's log leaves the leader's, from its last fetched epoch (Kafka's
        ``Partition.fetchRecords`` for a replica), or None."""
        if entry.last_fetched_epoch == NO_EPOCH:
            return None
        epoch, end_offset = log.end_offset_for_epoch(entry.last_fetched_epoch)
        if epoch != entry.last_fetched_epoch or end_offset < entry.fetch_offset:
            return epoch, end_offset
        return None

    @staticmethod
    def _answer_now(wanted: list[_Wanted], reads: list[_Read], params: FetchParams) -> bool:
        """Kafka answers at once when it may not wait, has nothing to wait on, or has enough or an error."""
        if params.max_wait_ms <= 0 or not wanted:
            return True
        if any(read.error or read.diverging is not None or read.behind for read in reads):
            return True
        return sum(len(read.records) for read in reads) >= params.min_bytes

    async def _wait(self, wanted: list[_Wanted], reads: list[_Read], params: FetchParams) -> list[_Read]:
        """Wait for ``MinBytes`` of new data or ``MaxWaitMs``, whichever comes first; read again."""
        waiter = _Waiter(frozenset((w.topic_id, w.partition) for w in wanted))
        expired = asyncio.Event()
        timer = self._call_later(params.max_wait_ms / 1000.0, expired.set)
        for key in waiter.keys:
            self._waiters.setdefault(key, set()).add(waiter)
        try:
            while not expired.is_set():
                woken = asyncio.ensure_future(waiter.woken.wait())
                ended = asyncio.ensure_future(expired.wait())
                try:
                    await asyncio.wait((woken, ended), return_when=asyncio.FIRST_COMPLETED)
                finally:
                    woken.cancel()
                    ended.cancel()
                waiter.woken.clear()
                reads = self._read_all(wanted, params, report=False)
                if self._answer_now(wanted, reads, params):
                    return reads
            return self._read_all(wanted, params, report=False)
        finally:
            timer.cancel()
            for key in waiter.keys:
                waiters = self._waiters.get(key)
                if waiters is not None:
                    waiters.discard(waiter)
                    if not waiters:
                        del self._waiters[key]

    def _current_leader(self, image: MetadataImage, entry: _Wanted) -> tuple[int, int]:
        """The leader as the broker knows it (Kafka's ``getCurrentLeader``: the metadata's)."""
        topic = image.topics.get(entry.topic_id)
        state = topic.partitions.get(entry.partition) if topic is not None else None
        return (state.leader, state.leader_epoch) if state is not None else (-1, -1)

    def _response(self, wanted: list[_Wanted], reads: list[_Read], params: FetchParams) -> FetchResponse:
        image = self._image()
        by_topic: dict[tuple[uuid.UUID, str], list[FetchResponse.PartitionData]] = {}
        leaders: set[int] = set()
        self._count(image, wanted, reads, params)
        if params.from_follower and self._replicas is not None:
            for entry, read in zip(wanted, reads):
                if read.records:
                    self._replicas.leader_sent((entry.topic_id, entry.partition), entry.topic_name,
                                               params.replica_id, len(read.records))
        for entry, read in zip(wanted, reads):
            data = FetchResponse.PartitionData(
                partition_index=entry.partition, error_code=read.error, high_watermark=read.high_watermark,
                last_stable_offset=read.high_watermark, log_start_offset=read.log_start_offset,
                aborted_transactions=None, preferred_read_replica=-1, records=read.records)
            if read.diverging is not None:
                data = data.replace(diverging_epoch=FetchResponse.EpochEndOffset(
                    epoch=read.diverging[0], end_offset=read.diverging[1]))
            if params.version >= FIRST_VERSION_WITH_LEADER_ENDPOINTS and read.error in (
                    ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH):
                leader_id, leader_epoch = self._current_leader(image, entry)
                data = data.replace(current_leader=FetchResponse.LeaderIdAndEpoch(
                    leader_id=leader_id, leader_epoch=leader_epoch))
                leaders.add(leader_id)
            by_topic.setdefault((entry.topic_id, entry.topic_name), []).append(data)
        return FetchResponse(error_code=ErrorCode.NONE, session_id=0, responses=[
            FetchResponse.FetchableTopicResponse(topic=name, topic_id=topic_id, partitions=partitions)
            for (topic_id, name), partitions in by_topic.items()], node_endpoints=self._endpoints(image, leaders))

    def _count(self, image: MetadataImage, wanted: list[_Wanted], reads: list[_Read], params: FetchParams) -> None:
        """Kafka's fetch meters: every partition answered, its bytes a consumer's or a follower's."""
        for entry, read in zip(wanted, reads):
            adding = False
            if params.from_follower:
                topic = image.topics.get(entry.topic_id)
                state = topic.partitions.get(entry.partition) if topic is not None else None
                adding = state is not None and params.replica_id in state.adding
            self._stats.fetch_request(entry.topic_name, bool(read.error), len(read.records or b""),
                                      params.from_follower, adding)

    def _endpoints(self, image: MetadataImage, leaders: set[int]) -> list[FetchResponse.NodeEndpoint]:
        """The listener of each named leader that is alive (Kafka's ``getAliveBrokerNode``)."""
        endpoints = []
        for leader_id in sorted(leaders):
            broker = image.brokers.get(leader_id)
            if broker is None or broker.fenced:
                continue
            for endpoint in broker.endpoints:
                if endpoint.name == self._listener_name:
                    endpoints.append(FetchResponse.NodeEndpoint(node_id=leader_id, host=endpoint.host,
                                                                port=endpoint.port, rack=broker.rack))
        return endpoints

    # --- OffsetForLeaderEpoch ---------------------------------------------------------------------

    def offsets_for_leader_epochs(self, request: OffsetForLeaderEpochRequest,
                                  allowed: Callable[[str], bool]) -> OffsetForLeaderEpochResponse:
        """Kafka's ``ReplicaManager.lastOffsetForLeaderEpoch``: on the leader only, the largest epoch of its
        log at or below the one asked for and where it ended (the log end for the current epoch)."""
        image = self._image()
        topics = []
        for topic in request.topics:
            state = image.topic(topic.topic)
            results = []
            for p in topic.partitions:
                error: int
                found: tuple[int, int] | None
                if not allowed(topic.topic):
                    error, found = ErrorCode.TOPIC_AUTHORIZATION_FAILED, None
                elif state is None or p.partition not in state.partitions:
                    error, found = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
                else:
                    error, found = self._epoch_end(state.topic_id, p.partition, p.current_leader_epoch, p.leader_epoch)
                epoch, end_offset = found if found is not None else (NO_EPOCH, NO_OFFSET)
                results.append(OffsetForLeaderEpochResponse.EpochEndOffset(
                    error_code=error, partition=p.partition, leader_epoch=epoch, end_offset=end_offset))
            topics.append(OffsetForLeaderEpochResponse.OffsetForLeaderTopicResult(topic=topic.topic,
                                                                                   partitions=results))
        return OffsetForLeaderEpochResponse(topics=topics)

    def _epoch_end(self, topic_id: uuid.UUID, index: int, current_leader_epoch: int,
                   leader_epoch: int) -> tuple[int, tuple[int, int] | None]:
        """(error, (epoch, end offset)) of one partition."""
        try:
            partition = self._partition((topic_id, index))
        except KafkaError as exc:
            return exc.code, None
        if partition is None:
            return ErrorCode.NOT_LEADER_OR_FOLLOWER, None
        error = _leader_epoch_error(partition, current_leader_epoch)
        if error:
            return error, None
        if not partition.is_leader:
            return ErrorCode.NOT_LEADER_OR_FOLLOWER, None
        try:
            return ErrorCode.NONE, partition.log.end_offset_for_epoch(leader_epoch)
        except KafkaError as exc:
            return exc.code, None
