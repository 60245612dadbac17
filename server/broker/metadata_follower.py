"""``FollowerView``: a broker's ``MetadataView`` fed by fetching ``__cluster_metadata`` as a KRaft observer.

A KRaft broker keeps its own replica of the metadata log: it sends Fetch (v17, as the controllers'
own replication does; topic id ``METADATA_TOPIC_ID``, partition 0) to the active controller with its
broker id and log-directory id in ``ReplicaState``/``ReplicaDirectoryId``, the offset after the last
batch it holds and that batch's epoch (``LastFetchedEpoch``). The answer's batches are kept; those
below its ``HighWatermark`` are committed and applied to the image with ``MetadataImage.apply``, the
apply the controllers run, and only then handed to the view's subscribers as (offset, record) pairs.
The batches past the high watermark wait: a ``DivergingEpoch`` cuts them back to where the leader's
log and this one agree (committed batches never diverge). ``NOT_LEADER_OR_FOLLOWER``,
``FENCED_LEADER_EPOCH`` or ``UNKNOWN_LEADER_EPOCH`` make the follower learn the epoch from
``CurrentLeader`` and go to the leader that answer names (``NodeEndpoints``), or, when it names
none, ask the controllers which one leads (``ControllerChannel``'s discovery); so does a lost
connection or no answer. A ``SnapshotId`` in the answer (the fetch offset fell below the leader's log
start) is fetched with FetchSnapshot in chunks and loaded into a fresh image that replaces the old
one; subscribers are then told every record of the snapshot as one commit (at the snapshot's last
offset), which is what each of them needs to re-read the state it follows (configs, sizes, topics).

Besides the records, a replica hands each broker's partition subscriber (its replica manager) the
broker's local changes of each commit, as Kafka's broker publishes a ``TopicsDelta`` whose
``localChanges`` its ReplicaManager applies. They are worked out once per commit for all the brokers
of the process: the changed partitions are those of the PartitionRecords and PartitionChangeRecords,
every partition of a topic a RemoveTopicRecord removes and of the topics a ClearElrRecord names (their
partition epochs may rise), each with its state before the commit (read before the first record of
the commit touching it is applied); a partition concerns the brokers its replicas list before or
after, and each of them is told its state after (None: the topic is gone). Partitions alike (the same
replicas before and after, as in a bulk change) have their brokers worked out once.
Records of a metadata transaction count once it ends. After a snapshot is loaded the subscribers are
told ``None``: every partition may have changed.

``MetadataReplica`` is the image and its subscribers; one replica may be shared by several followers
of one process (the brokers of a ``Cluster``). Each follower still fetches for itself with its own id
and directory and has its own log end offset, so every broker is an observer in DescribeQuorum, but a
committed batch is decoded and applied once, by whichever follower brings it first; a follower whose
own committed end is behind the shared one continues from there (the committed log is the same for
all). So the image is built once per process, not once per broker: with 2,000,000 partitions an image
per broker would multiply the process's largest structure by the broker count. The price: the brokers
of one process see the same image, as fresh as the most advanced of them, where Kafka's brokers each
lag on their own (README, differences).

A snapshot is likewise downloaded and loaded once per process: the follower whose fetch is pointed at
it first fetches and loads it, and the process's other followers pointed at it meanwhile wait for that
load (``MetadataReplica.loading``) instead of fetching their own; they continue from its end, or, if it
failed, fetch it themselves. At 1,000,000 partitions a snapshot is about 110 MB and its load tens of
seconds: once per broker, it kept the event loop blocked for minutes.

``start()`` begins fetching; ``wait_caught_up()`` returns once the replica holds everything below the
high watermark of the first answer, as a Kafka broker catches up before it asks to be unfenced; it
gives up only when the replica made no progress (no batch applied, no snapshot chunk received or
loaded) for its ``stall_timeout``, so a large snapshot takes the time it needs;
``sync()`` returns once it holds what the leader has committed by then (its high watermark, asked with
DescribeQuorum; the broker answers most forwarded requests only after it, README: differences); ``close()`` stops.

A fetch at the leader's log end waits up to ``max_wait_ms`` for new records or a new high watermark
(the leader answers at once when the high watermark moved since its last answer to this observer:
server/raft/log.py). The broker wing may use codec, metadata and wire only, so this module knows the
controllers by address alone.
"""
from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from typing import Any, NamedTuple

from kraftwire.codec import ErrorCode, MalformedError
from kraftwire.codec.log_layout import METADATA_PARTITION, METADATA_TOPIC, METADATA_TOPIC_ID
from kraftwire.codec.messages import DescribeQuorumRequest, FetchRequest, FetchSnapshotRequest
from kraftwire.codec import records as rec
from kraftwire.codec.records import (KRaftVersionRecord, VotersRecord, check_batch, decode_control, decode_frame,
                                     iter_batches, read_batch)
from kraftwire.server.metadata.image import MetadataImage, TopicState
from kraftwire.server.metadata.view import CommitListener, PartitionListener
from kraftwire.server.wire.client import KafkaClientError
from kraftwire.server.wire.security import ClientSecurity
from .controller_channel import ControllerChannel, LeaderPointer

log = logging.getLogger("kraftwire.broker")

FETCH_VERSION = 17  # the version the controllers' replication speaks (server/raft/peer_wire.py)
FETCH_SNAPSHOT_VERSION = 1
DESCRIBE_QUORUM_VERSION = 2
QUORUM_REQUEST = DescribeQuorumRequest(topics=[DescribeQuorumRequest.TopicData(
    topic_name=METADATA_TOPIC, partitions=[DescribeQuorumRequest.PartitionData(partition_index=METADATA_PARTITION)])])
FETCH_MAX_WAIT_MS = 500  # Kafka's controller.quorum.fetch... for observers: replica.fetch.wait.max.ms
FETCH_MAX_BYTES = 8 << 20
SNAPSHOT_CHUNK_BYTES = 8 << 20
RETRY_BACKOFF_S = 0.05
SYNC_TIMEOUT_S = 2.0  # the longest a forwarded answer waits for the broker's metadata
# A fetch unanswered this long past its max wait makes the follower ask who leads: Kafka's
# controller.quorum.request.timeout.ms (default 2 s), after which its observer fetches from another voter.
REQUEST_TIMEOUT_MS = 2000
NO_EPOCH = -1
_LEADER_MOVED = (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.UNKNOWN_LEADER_EPOCH)


class FetchedBatch(NamedTuple):
    """A record batch of the metadata log as fetched, before it is committed."""
    base: int
    last: int
    epoch: int
    data: bytes


class MetadataReplica:
    """The committed metadata image of one process's followers and the subscribers told of each commit.
    ``end_offset`` is the offset after the last committed batch applied (control batches count),
    ``last_epoch`` that batch's epoch."""

    def __init__(self, cluster_id: str):
        self.cluster_id = cluster_id
        self.image = MetadataImage()
        self.end_offset = 0
        self.last_epoch = 0
        self._listeners: list[CommitListener] = []
        self._partition_listeners: dict[int, PartitionListener] = {}  # by broker id
        # partitions changed since the subscribers were last told: topic id's int -> (topic id,
        # {partition: its state before, None for a new one})
        self._changed: dict[int, tuple[uuid.UUID, dict]] = {}
        self._waiting: list[tuple[int, asyncio.Future]] = []  # (end offset, resolved once reached)
        self.loading: asyncio.Future | None = None  # done when the snapshot a follower is loading is in
        self.progress = 0  # counts batches applied, snapshot chunks received and snapshots loaded
        self.loaded_snapshots = 0
        # where the controllers are reached as the log told (the committed VotersRecord, KIP-853) and as
        # the last fetch answer naming a leader did (NodeEndpoints): a broker configured with some of
        # them as controller.quorum.bootstrap.servers reaches the others so (server/host/cluster.py)
        self.voter_endpoints: dict[int, tuple[str, int]] = {}
        self.leader_endpoint: dict[int, tuple[str, int]] = {}

    @property
    def controller_endpoints(self) -> dict[int, tuple[str, int]]:
        return self.voter_endpoints | self.leader_endpoint

    async def reached(self, end_offset: int) -> None:
        """Return once every batch below ``end_offset`` is applied."""
        if self.end_offset < end_offset:
            future = asyncio.get_running_loop().create_future()
            self._waiting.append((end_offset, future))
            await future

    def subscribe(self, listener: CommitListener) -> None:
        self._listeners.append(listener)

    def subscribe_partitions(self, broker_id: int, listener: PartitionListener) -> None:
        self._partition_listeners[broker_id] = listener

    def commit(self, batches: list[FetchedBatch]) -> None:
        """Apply the committed ``batches`` this replica does not hold yet, then tell the subscribers."""
        committed = []
        changed = self._changed
        image = self.image
        run = None  # (topic id's int, its partitions' states before, the topic) of the last partition record
        for batch in batches:
            if batch.base < self.end_offset:
                continue  # another follower of the process brought it first
            decoded = read_batch(batch.data, 0)
            if not decoded.is_control:
                for record in decoded.records:
                    assert record.value is not None  # a metadata record always has a value
                    value = decode_frame(record.value)[0]
                    kind = type(value)
                    if isinstance(value, _PARTITION_RECORDS):
                        # topics by their id's int: UUID's hash and equality are Python code
                        if run is None or run[0] != value.topic_id.int:
                            run = _topic_run(image, changed, value.topic_id)
                        if value.partition_id not in run[1]:
                            run[1][value.partition_id] = (run[2].partitions.get(value.partition_id)
                                                          if run[2] is not None else None)
                    elif kind in _WHOLE_TOPICS:
                        for topic in _topics_of(image, value):
                            befores = _topic_run(image, changed, topic.topic_id)[1]
                            for index, state in topic.partitions.items():
                                befores.setdefault(index, state)
                        run = None
                    elif kind is rec.TopicRecord:
                        run = None
                    image.apply(value, record.offset)
                    committed.append((record.offset, value))
            else:  # the control records a broker reads: kraft.version's level (ApiVersions shows it), the voters
                for record in decoded.records:
                    control = decode_control(record.key, record.value)
                    if isinstance(control, KRaftVersionRecord):
                        self.image.kraft_version = control.k_raft_version
                    elif isinstance(control, VotersRecord):
                        self.voter_endpoints = voter_endpoints(control)
            self.end_offset, self.last_epoch = batch.last + 1, batch.epoch
            self.progress += 1
        if changed and image.pending_transaction is None:
            self._changed = {}
            self._tell_partitions(self._local_changes(changed))
        if committed:
            self._tell(committed)
        self._release()

    def replace(self, snapshot: LoadedSnapshot, end_offset: int, epoch: int) -> None:
        """Take a snapshot's image and voters (its records end before ``end_offset``, written at ``epoch``)."""
        image = self.image = snapshot.image
        self.end_offset, self.last_epoch = end_offset, epoch
        if snapshot.voters is not None:
            self.voter_endpoints = snapshot.voters
        self.progress += 1
        self.loaded_snapshots += 1
        self._changed = {}
        self._tell_partitions(None)
        self._tell([(end_offset - 1, record) for record, _version in image.to_records()])
        self._release()

    def _local_changes(self, changed: dict) -> dict[int, list]:
        """Each subscribed broker's changes: [(topic id, topic or None, [(partition, state after or
        None)])] (module docstring)."""
        local: dict[int, list] = {broker_id: [] for broker_id in self._partition_listeners}
        concerned: dict[tuple, list[int]] = {}  # (replicas before, after) -> the subscribed brokers they list
        topics = self.image.topics
        for topic_id, befores in changed.values():
            topic = topics.get(topic_id)
            afters = topic.partitions if topic is not None else {}
            # a topic's partitions grouped by their replicas before and after (by value: a bulk change's
            # partitions list a handful of distinct replica sets, not always in shared tuples), so that
            # each group is handed to its brokers at once instead of partition by partition
            groups: dict[tuple, list] = {}
            for index, before in befores.items():
                after = afters.get(index)
                pair = (before.replicas if before is not None else (), after.replicas if after is not None else ())
                states = groups.get(pair)
                if states is None:
                    states = groups[pair] = []
                states.append((index, after))
            per_broker: dict[int, list] = {}
            for pair, states in groups.items():
                brokers = concerned.get(pair)
                if brokers is None:
                    brokers = concerned[pair] = [b for b in dict.fromkeys(pair[0] + pair[1]) if b in local]
                for broker_id in brokers:
                    if broker_id in per_broker:
                        per_broker[broker_id] += states
                    else:
                        per_broker[broker_id] = list(states)
            for broker_id, states in per_broker.items():
                local[broker_id].append((topic_id, topic, states))
        return local

    def _tell_partitions(self, local: dict[int, list] | None) -> None:
        for broker_id, listener in list(self._partition_listeners.items()):
            try:
                listener(None if local is None else local[broker_id])
            except Exception:
                log.exception("a metadata partition listener failed")

    def _tell(self, committed: list) -> None:
        for listener in self._listeners:
            try:
                listener(committed)
            except Exception:
                log.exception("a metadata commit listener failed")

    def _release(self) -> None:
        waiting, self._waiting = self._waiting, []
        for end_offset, future in waiting:
            if future.done():
                continue
            if self.end_offset >= end_offset:
                future.set_result(None)
            else:
                self._waiting.append((end_offset, future))


_PARTITION_RECORDS = (rec.PartitionRecord, rec.PartitionChangeRecord)


def error_name(code: int) -> str:
    """The name of the error ``code``."""
    return ErrorCode(code).name
_WHOLE_TOPICS = frozenset({rec.RemoveTopicRecord, rec.ClearElrRecord})


def _topic_run(image: MetadataImage, changed: dict, topic_id: uuid.UUID) -> tuple:
    """(topic id's int, its changed partitions' states before, the image's topic or None)."""
    entry = changed.get(topic_id.int)
    if entry is None:
        entry = changed[topic_id.int] = (topic_id, {})
    return topic_id.int, entry[1], image.topics.get(topic_id)


def _topics_of(image: MetadataImage, record: Any) -> list[TopicState]:
    """The topics a RemoveTopicRecord or ClearElrRecord may change, before it is applied."""
    if type(record) is rec.RemoveTopicRecord:
        return [image.topics[record.topic_id]] if record.topic_id in image.topics else []
    if record.topic_name:
        return [topic] if (topic := image.topic(record.topic_name)) is not None else []
    return list(image.topics.values())


def fetched_batches(data: bytes) -> list[FetchedBatch]:
    """The batches of a Fetch answer, their CRCs checked (records are decoded only when applied)."""
    batches, position = [], 0
    while position < len(data):
        header = check_batch(data, position)
        batches.append(FetchedBatch(header.base_offset, header.base_offset + header.last_offset_delta,
                                    header.partition_leader_epoch, bytes(data[position:position + header.size])))
        position += header.size
    return batches


def voter_endpoints(voters: VotersRecord) -> dict[int, tuple[str, int]]:
    """Each voter's first listener: a kraftwire controller has one, its controller listener."""
    return {v.voter_id: (v.endpoints[0].host, v.endpoints[0].port) for v in voters.voters if v.endpoints}


class LoadedSnapshot(NamedTuple):
    image: MetadataImage
    voters: dict[int, tuple[str, int]] | None  # None: the snapshot holds no VotersRecord (a static quorum)


def load_snapshot(data: bytes, end_offset: int) -> LoadedSnapshot:
    """A snapshot file's records applied, in order, to an empty image, each at ``end_offset - 1`` (as
    the controllers replay a snapshot); kraft.version and the voters from the KRaftVersionRecord and
    VotersRecord a dynamic quorum's snapshot holds after its header."""
    image, voters = MetadataImage(), None
    for batch in iter_batches(data):
        if not batch.is_control:
            for record in batch.records:
                if record.value is None:
                    raise MalformedError(f"a metadata record without a value in the snapshot ending at {end_offset}", 0)
                image.apply(decode_frame(record.value)[0], end_offset - 1)
        else:
            for record in batch.records:
                control = decode_control(record.key, record.value)
                if isinstance(control, KRaftVersionRecord):
                    image.kraft_version = control.k_raft_version
                elif isinstance(control, VotersRecord):
                    voters = voter_endpoints(control)
    return LoadedSnapshot(image, voters)


class FollowerView:
    """A broker's ``MetadataView`` (server/metadata/view.py), kept by fetching the metadata log as an
    observer (module docstring). ``controller_addresses``, ``security`` and ``reachable`` are as for
    ``ControllerChannel``; ``replica`` may be shared with the process's other followers."""

    def __init__(self, broker_id: int, directory_id: uuid.UUID,
                 controller_addresses: Callable[[], list[tuple[str, int]]], cluster_id: str,
                 security: ClientSecurity | None = None, *,
                 replica: MetadataReplica | None = None, reachable: Callable[[int], bool] = lambda index: True,
                 max_wait_ms: int = FETCH_MAX_WAIT_MS, controller_ids: Callable[[], list[int]] | None = None,
                 request_timeout_ms: int = REQUEST_TIMEOUT_MS):
        self.broker_id = broker_id
        self.directory_id = directory_id
        self.replica = replica or MetadataReplica(cluster_id)
        self.max_wait_ms = max_wait_ms
        # one pointer for this broker's channels (its node takes it too): whichever learns the leader moves all
        self.controller_pointer = LeaderPointer()
        self._channel = ControllerChannel(controller_addresses, f"broker-{broker_id}-metadata", security,
                                          attempt_timeout=(max_wait_ms + request_timeout_ms) / 1000,
                                          reachable=reachable, retries_alone=False, node_ids=controller_ids,
                                          pointer=self.controller_pointer)
        self._probe = ControllerChannel(controller_addresses, f"broker-{broker_id}-metadata-sync", security,
                                        attempt_timeout=SYNC_TIMEOUT_S, reachable=reachable, retries_alone=False,
                                        node_ids=controller_ids, pointer=self.controller_pointer)
        self._committed_end, self._committed_epoch = 0, 0  # where this follower's committed log ends
        self._tail: list[FetchedBatch] = []  # fetched past the high watermark
        self.leader_id, self.leader_epoch = -1, -1
        self._catch_up_to: int | None = None  # the high watermark of the first answer
        self._caught_up = asyncio.Event()
        self.failed_fetches = 0  # fetches that got no answer (a lost connection, a cut link, a timeout)
        self.loaded_snapshots = 0
        self._task: asyncio.Task | None = None

    # --- MetadataView ---------------------------------------------------------------------------

    @property
    def cluster_id(self) -> str:
        return self.replica.cluster_id

    @property
    def image(self) -> MetadataImage:
        return self.replica.image

    def subscribe(self, listener: CommitListener) -> None:
        self.replica.subscribe(listener)

    def subscribe_partitions(self, listener: PartitionListener) -> None:
        self.replica.subscribe_partitions(self.broker_id, listener)

    # --- lifecycle -----------------------------------------------------------------------------

    @property
    def end_offset(self) -> int:
        """The offset after the last batch this follower holds: what it asks for next."""
        return self._tail[-1].last + 1 if self._tail else self._committed_end

    async def start(self) -> None:
        if self._task is None:
            self._channel.reopen()
            self._probe.reopen()
            self._caught_up.clear()
            self._catch_up_to = None
            self._task = asyncio.create_task(self._follow(), name=f"metadata-follower-{self.broker_id}")

    async def wait_caught_up(self, stall_timeout: float) -> None:
        """Return once everything below the first answer's high watermark is applied; TimeoutError once
        the replica made no progress for ``stall_timeout`` seconds."""
        caught_up = asyncio.ensure_future(self._caught_up.wait())
        try:
            seen = -1
            while seen != self.replica.progress:
                seen = self.replica.progress
                if (await asyncio.wait([caught_up], timeout=stall_timeout))[0]:
                    return
        finally:
            caught_up.cancel()
        raise TimeoutError(f"broker {self.broker_id}: the metadata log made no progress for {stall_timeout:g} s "
                           f"(applied below offset {self.replica.end_offset}, high watermark "
                           f"{self._catch_up_to if self._catch_up_to is not None else 'not known yet'}, "
                           f"{self.failed_fetches} fetches failed)")

    async def sync(self, timeout: float = SYNC_TIMEOUT_S) -> None:
        """Return once the image holds everything the leader had committed when this was called, as far
        as ``timeout`` allows (then quietly: the answer it delays is not wrong, only possibly ahead of
        this broker's metadata). The leader's high watermark comes from DescribeQuorum, on a
        connection of its own (answers come in order on one connection, and the follower's own may
        hold a long poll)."""
        try:
            await asyncio.wait_for(self._sync(), timeout)
        except (TimeoutError, KafkaClientError, OSError, MalformedError) as exc:
            log.debug("broker %d: metadata sync gave up: %r", self.broker_id, exc)

    async def _sync(self) -> None:
        answer = await self._probe.send(QUORUM_REQUEST, DESCRIBE_QUORUM_VERSION)
        partition = answer.topics[0].partitions[0] if answer.topics and answer.topics[0].partitions else None
        if answer.error_code == ErrorCode.NONE and partition is not None and partition.error_code == ErrorCode.NONE:
            await self.replica.reached(partition.high_watermark)

    def _learn_leader(self, leader: Any) -> bool:
        """Take the leader an answer names if its epoch is at least as new; whether it is newer."""
        newer = leader.leader_epoch > self.leader_epoch
        if leader.leader_epoch >= self.leader_epoch:
            self.leader_id, self.leader_epoch = leader.leader_id, leader.leader_epoch
        return newer

    async def close(self) -> None:
        task, self._task = self._task, None
        while task is not None and not task.done():  # again if a cancellation was lost in a wait_for
            task.cancel()
            await asyncio.wait([task], timeout=RETRY_BACKOFF_S)
        await self._channel.close()
        await self._probe.close()

    # --- the fetch loop ------------------------------------------------------------------------

    async def _follow(self) -> None:
        while self._task is not None:
            try:
                await self._on_answer(await self._channel.send(self._fetch_request(), FETCH_VERSION))
            except (TimeoutError, KafkaClientError, OSError) as exc:
                self.failed_fetches += 1
                log.debug("broker %d: metadata fetch failed: %r", self.broker_id, exc)
                await asyncio.sleep(RETRY_BACKOFF_S)
                await self._channel.rediscover()
            except MalformedError:
                log.exception("broker %d: a malformed metadata fetch answer", self.broker_id)
                await asyncio.sleep(RETRY_BACKOFF_S)

    def _fetch_request(self) -> FetchRequest:
        if self._committed_end < self.replica.end_offset:  # another follower of the process brought more
            self._committed_end, self._committed_epoch = self.replica.end_offset, self.replica.last_epoch
            self._tail = [b for b in self._tail if b.base >= self._committed_end]
        last_epoch = self._tail[-1].epoch if self._tail else self._committed_epoch
        partition = FetchRequest.FetchPartition(
            partition=METADATA_PARTITION, current_leader_epoch=self.leader_epoch, fetch_offset=self.end_offset,
            last_fetched_epoch=last_epoch if self.end_offset else NO_EPOCH, partition_max_bytes=FETCH_MAX_BYTES,
            replica_directory_id=self.directory_id)
        return FetchRequest(cluster_id=self.cluster_id,
                            replica_state=FetchRequest.ReplicaState(replica_id=self.broker_id),
                            max_wait_ms=self.max_wait_ms, min_bytes=1, max_bytes=FETCH_MAX_BYTES,
                            topics=[FetchRequest.FetchTopic(topic_id=METADATA_TOPIC_ID, partitions=[partition])])

    async def _on_answer(self, answer: Any) -> None:
        if answer.error_code != ErrorCode.NONE:
            log.warning("broker %d: metadata fetch refused: %s", self.broker_id, error_name(answer.error_code))
            await asyncio.sleep(RETRY_BACKOFF_S)
            return
        partition = answer.responses[0].partitions[0]
        newer = self._learn_leader(partition.current_leader)
        named = next(((e.host, e.port) for e in answer.node_endpoints if e.node_id == self.leader_id), None)
        if named is not None:
            self.replica.leader_endpoint = {self.leader_id: named}
        if partition.error_code in _LEADER_MOVED or (partition.error_code and newer):
            await self._go_to_leader(answer, self._channel, newer)  # (asked with an older epoch: refused)
            return
        if partition.error_code != ErrorCode.NONE:
            log.warning("broker %d: metadata fetch answered %s", self.broker_id,
                        error_name(partition.error_code))
            await asyncio.sleep(RETRY_BACKOFF_S)
            return
        if partition.snapshot_id.end_offset >= 0:
            await self.fetch_snapshot(partition.snapshot_id.end_offset, partition.snapshot_id.epoch)
        elif partition.diverging_epoch.epoch >= 0:
            self._truncate(partition.diverging_epoch.epoch, partition.diverging_epoch.end_offset)
        else:
            self._append(fetched_batches(partition.records or b""))
        self._commit(partition.high_watermark)

    def _append(self, batches: list[FetchedBatch]) -> None:
        for batch in batches:
            if batch.base == self.end_offset:
                self._tail.append(batch)

    def _truncate(self, epoch: int, end_offset: int) -> None:
        """Keep what both logs hold: batches of an epoch up to ``epoch`` ending before ``end_offset``."""
        kept = 0
        while (kept < len(self._tail) and self._tail[kept].epoch <= epoch
               and self._tail[kept].last < end_offset):
            kept += 1
        log.info("broker %d: the metadata log diverged at epoch %d: %d batches past the high watermark dropped",
                 self.broker_id, epoch, len(self._tail) - kept)
        del self._tail[kept:]

    def _commit(self, high_watermark: int) -> None:
        done = 0
        while done < len(self._tail) and self._tail[done].last < high_watermark:
            done += 1
        if done:
            committed, self._tail = self._tail[:done], self._tail[done:]
            self.replica.commit(committed)
            self._committed_end, self._committed_epoch = committed[-1].last + 1, committed[-1].epoch
        if self._catch_up_to is None and high_watermark >= 0:
            self._catch_up_to = high_watermark
        if self._catch_up_to is not None and max(self._committed_end, self.replica.end_offset) >= self._catch_up_to:
            self._caught_up.set()

    async def _go_to_leader(self, answer: Any, channel: ControllerChannel, learned: bool) -> None:
        """The controller asked does not lead (or knew a newer epoch: ``learned``): go to the leader its
        answer names, else, after a pause (an election may be under way), ask the controllers which one
        leads. A controller naming itself teaches nothing unless its epoch was new (a resigned leader
        names itself until it hears of the next one)."""
        named = self.replica.leader_endpoint.get(self.leader_id)
        index = channel.index_of(self.leader_id, named)
        if index is not None and (learned or index != channel.current) and channel.use(named, self.leader_id):
            return
        await asyncio.sleep(RETRY_BACKOFF_S)
        await channel.rediscover()

    async def fetch_snapshot(self, end_offset: int, epoch: int) -> None:
        """Fetch the leader's snapshot ``end_offset``-``epoch`` (one a Fetch answer named) chunk by chunk
        and replace the image with it; the next fetch continues from its end. While another follower of
        the process loads a snapshot, wait for it instead (module docstring)."""
        replica = self.replica
        while replica.loading is not None:
            await asyncio.shield(replica.loading)
        if replica.end_offset >= end_offset:  # another follower of the process loaded it already
            self._tail = []
            self._committed_end, self._committed_epoch = replica.end_offset, replica.last_epoch
            return
        replica.loading = asyncio.get_running_loop().create_future()
        try:
            data = await self._download_snapshot(end_offset, epoch)
            if data is None:
                return  # the next fetch says again where to start
            snapshot = load_snapshot(data, end_offset)
            self._tail = []
            self._committed_end, self._committed_epoch = end_offset, epoch
            if replica.end_offset < end_offset:
                replica.replace(snapshot, end_offset, epoch)
            self.loaded_snapshots += 1
            log.info("broker %d: loaded the metadata snapshot %d-%d (%d bytes)", self.broker_id, end_offset,
                     epoch, len(data))
        finally:
            loading, replica.loading = replica.loading, None
            loading.set_result(None)

    async def _download_snapshot(self, end_offset: int, epoch: int) -> bytes | None:
        """The snapshot's bytes, fetched in chunks; None when the leader refused it."""
        data = bytearray()
        while True:
            request = FetchSnapshotRequest(
                cluster_id=self.cluster_id, replica_id=self.broker_id, max_bytes=SNAPSHOT_CHUNK_BYTES,
                topics=[FetchSnapshotRequest.TopicSnapshot(name=METADATA_TOPIC, partitions=[
                    FetchSnapshotRequest.PartitionSnapshot(
                        partition=METADATA_PARTITION, current_leader_epoch=self.leader_epoch,
                        snapshot_id=FetchSnapshotRequest.SnapshotId(end_offset=end_offset, epoch=epoch),
                        position=len(data), replica_directory_id=self.directory_id)])])
            answer = await self._channel.send(request, FETCH_SNAPSHOT_VERSION)
            chunk = answer.topics[0].partitions[0] if answer.topics and answer.topics[0].partitions else None
            if chunk is not None and chunk.error_code in _LEADER_MOVED and self._learn_leader(chunk.current_leader):
                continue  # asked with an older epoch than the leader's: again with its own
            if answer.error_code or chunk is None or chunk.error_code:
                log.info("broker %d: snapshot %d-%d not fetched: %s", self.broker_id, end_offset, epoch,
                         error_name(answer.error_code or (chunk.error_code if chunk else 0)))
                await asyncio.sleep(RETRY_BACKOFF_S)
                return None
            data += chunk.unaligned_records
            self.replica.progress += 1
            if not chunk.unaligned_records or len(data) >= chunk.size:
                return bytes(data)
