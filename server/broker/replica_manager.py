"""The replicas one simulated broker hosts, as the metadata log it follows describes them.

``ReplicaManager`` (one per simulated broker) acts on the partitions each committed batch changed, as
Kafka's KRaft broker's ReplicaManager applies a metadata delta (``applyDelta`` with
``TopicsDelta.localChanges``): its broker's ``MetadataReplica`` (server/broker/metadata_follower.py)
works out the changed partitions once per batch for every broker of the process, and each manager looks
their states up in the image. A partition whose replicas list the broker becomes (or stays) a replica
here, led or followed; one that no longer lists it, or whose topic is gone, is deleted (Kafka's stray
and deleted partitions); a change of the directory the metadata names for it is answered with the
directory that holds it (server/broker/log_dirs.py). When its broker starts (caught up with the log and
registered, before it asks to be unfenced) the manager acts on every partition of the image, deleting
what it holds and the image no longer gives it, as Kafka's broker does at its first metadata publish;
a stopped broker acts on nothing, and so a restarted broker, or a broker of another process that
catches up from a snapshot, gets its replicas from the image. A state older than what the replica
already has (an AlterPartition answer can run ahead of the log) is passed over.

As a leader it asks the controller, with AlterPartition over TCP, to add followers that have caught up
to the ISR; that is what completes reassignments, and what heals ISRs after a broker comes back. The
bytes themselves are copied by the cluster's data plane (server/broker/replication_network.py): a
follower replica is handed to it with ``follow``, and the manager registers the callback by which the
network tells it, as leader, that a follower caught up.

A replica that was in the ISR when its broker learnt of it holds the whole partition (a new topic's
replicas, a restarted broker's replicas); one that was not starts with what its log directory's
checkpoint kept of it when its broker's process restarted (server/broker/checkpoints.py), else empty,
or keeps what it had already copied.

Each replica lives in one of its broker's log directories (server/broker/log_dirs.py places it,
KIP-858); a replica whose directory is offline is not served: it copies nothing and, as a leader,
proposes nothing, until the directory is restored.
"""
from __future__ import annotations

import asyncio
import itertools
import logging
import operator
import uuid
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any
from dataclasses import dataclass

from kraftwire.codec import records as rec
from kraftwire.codec.messages import AlterPartitionRequest

from kraftwire.server.metadata import configs
from kraftwire.codec.message import Message
from kraftwire.server.metadata.image import MetadataImage, PartitionState
from kraftwire.server.wire.client import KafkaClientError
from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.constants import UNFENCE
from .partition import HostedPartitions, Partition
from .replica_fetcher import ReplicaFetcher, ReplicationQuota, throttled
from .replication_network import ReplicationNetwork, topic_sizes

if TYPE_CHECKING:  # both import this module
    from .log_dirs import LogDir
    from .node import BrokerNode

log = logging.getLogger("kraftwire.replication")

# a commit's local changes: (topic id, the topic or None once removed, [(partition, its state or None)])
LocalChanges = list[tuple[uuid.UUID, Any, list[tuple[int, Any]]]]

ALTER_PARTITION_VERSION = 3  # with each ISR member's broker epoch (KIP-903)
ALTER_PARTITION_RETRY_S = 0.5  # before an unanswered or wholly refused AlterPartition is asked again
REPLICA_LAG_TIME_MAX_MS = "replica.lag.time.max.ms"
DEFAULT_REPLICA_LAG_TIME_MAX_MS = 30000  # Kafka's
# the records ``on_commit`` looks at (a bulk change commits thousands of others)
_WATCHED = frozenset({rec.ConfigRecord, rec.TopicRecord, rec.UnfenceBrokerRecord, rec.BrokerRegistrationChangeRecord,
                      rec.RegisterBrokerRecord})


@dataclass(eq=False, slots=True)  # slots: every broker holds one per replica (millions at scale)
class Replica:
    """One partition replica hosted by a broker, as the last partition state it acted on described it:
    that state itself (the image's, shared, or one an AlterPartition answer made), not a copy of its
    fields (at RF 3, about 150 bytes a partition less, and one store per state acted on)."""

    topic_id: uuid.UUID
    topic_name: str
    partition: int
    state: PartitionState
    log_bytes: float = 0.0
    log_dir: LogDir | None = None  # the one holding it; None until placed
    partition_log: Partition | None = None  # its real log and leader state, once used (server/broker/partition.py)

    @property
    def key(self) -> tuple[uuid.UUID, int]:
        return self.topic_id, self.partition

    # the state's fields, read through it: leader, leader_epoch, partition_epoch, isr, replicas, adding, removing
    leader = property(operator.attrgetter("state.leader"))
    leader_epoch = property(operator.attrgetter("state.leader_epoch"))
    partition_epoch = property(operator.attrgetter("state.partition_epoch"))
    isr = property(operator.attrgetter("state.isr"))
    replicas = property(operator.attrgetter("state.replicas"))
    adding = property(operator.attrgetter("state.adding"))
    removing = property(operator.attrgetter("state.removing"))


class _Replicas(Mapping[tuple[uuid.UUID, int], Replica]):
    """A broker's replicas by (topic id, partition): a read-only view of the manager's per-topic tables
    (keyed by the topic id's int), so that no key tuple and table entry per replica is kept twice (about
    300 bytes a partition at RF 3)."""

    def __init__(self, topics: dict[int, dict[int, Replica]]):
        self._topics = topics

    def __getitem__(self, key: tuple[uuid.UUID, int]) -> Replica:
        return self._topics[key[0].int][key[1]]

    def get(self, key: tuple[uuid.UUID, int], default: Any = None) -> Any:
        hosted = self._topics.get(key[0].int)
        return default if hosted is None else hosted.get(key[1], default)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, tuple):
            return False
        hosted = self._topics.get(key[0].int)
        return hosted is not None and key[1] in hosted

    def __iter__(self) -> Iterator[tuple[uuid.UUID, int]]:
        for replica in self.values():
            yield replica.topic_id, replica.partition

    def values(self) -> Iterator[Replica]:  # type: ignore[override]  # an iterator, not a values view
        return itertools.chain.from_iterable([hosted.values() for hosted in self._topics.values()])

    def __len__(self) -> int:
        return sum(map(len, self._topics.values()))


class ReplicaManager:
    """The replicas one simulated broker hosts (see the module docstring)."""

    def __init__(self, broker: BrokerNode, network: ReplicationNetwork):
        self.broker = broker
        self.broker_id = broker.broker_id
        self.network = network
        self._by_topic: dict[int, dict[int, Replica]] = {}  # topic id's int -> partition -> replica
        self.replicas: Mapping[tuple[uuid.UUID, int], Replica] = _Replicas(self._by_topic)
        self._acting = False  # between its broker's start and stop
        self._proposing: set[tuple[uuid.UUID, int]] = set()  # partitions with an AlterPartition in flight
        self._to_propose: set[tuple[uuid.UUID, int]] = set()
        self._flush_scheduled = False
        # (image offset, topic -> (its listed partition sizes, the others' size))
        self._sizes: tuple[int, dict[str, tuple[dict[int, int], float]]] = (-2, {})
        self._kept: dict = {}  # the checkpointed logs, (bytes, LogDir), while it starts
        self.partitions = HostedPartitions(self.broker_id, lambda: broker.image, network)
        self.partitions.on_data = self._partition_data
        self._lagging: set[tuple[tuple[uuid.UUID, int], int]] = set()  # ISR members past the lag rule
        self._lag_timer: Any = None
        self.partitions.retention_check_interval_ms = int(broker.startup_configs.get(
            "log.retention.check.interval.ms", self.partitions.retention_check_interval_ms))
        network.register_broker(self.broker_id, lambda: self.running, self.follower_caught_up,
                                self._copied_partition, self._data_arrived)
        # followers whose leader is a broker of another process fetch over TCP (server/broker/replica_fetcher.py)
        self.fetcher = ReplicaFetcher(broker, network, self.hosted_partition)
        self.leader_quota = ReplicationQuota(network.now)  # KIP-73: throttled bytes sent to such followers

    @property
    def running(self) -> bool:
        return self.broker.running

    @property
    def idle(self) -> bool:
        """No AlterPartition is waiting to be sent or answered."""
        return not (self._to_propose or self._proposing or self._flush_scheduled)

    def leaders(self) -> list[Replica]:
        return [r for r in self.replicas.values() if r.leader == self.broker_id]

    # --- the metadata log's changes ---------------------------------------------------------------

    def start(self, kept: dict | None = None) -> None:
        """The broker is up: act on every partition of the image, then on each commit's changes.
        ``kept``: the logs its directories' checkpoints kept, {(topic, partition): (bytes, LogDir)}: a
        replica it did not hold yet starts with that size in that directory (those the image no longer
        gives it are gone)."""
        self._acting = True
        self.fetcher.stopped = False
        self.partitions.start()
        self._kept = kept or {}
        self.apply_changes(None)
        self._kept = {}
        self._arm_lag_check()

    def stop(self) -> None:
        self._acting = False
        self.fetcher.stop()
        self.partitions.close_all()

    def partition(self, topic_id: uuid.UUID, index: int) -> Partition | None:
        """The ``Partition`` (real log, leader state) of a replica hosted here, None if there is none;
        KafkaError KAFKA_STORAGE_ERROR while its log directory is offline."""
        replica = self.replicas.get((topic_id, index))
        return None if replica is None else self.partitions.partition(replica)
        if self._lag_timer is not None:
            self._lag_timer.cancel()
            self._lag_timer = None

    # --- ISR shrink (Kafka's Partition.maybeShrinkIsr) ----------------------------------------------

    @property
    def replica_lag_time_max_s(self) -> float:
        value = self.broker.startup_configs.get(REPLICA_LAG_TIME_MAX_MS, DEFAULT_REPLICA_LAG_TIME_MAX_MS)
        return int(value) / 1000.0

    def _arm_lag_check(self) -> None:
        """Look for lagging followers every half of ``replica.lag.time.max.ms``, as Kafka's leader does,
        on the cluster's clock (the virtual one when it is on)."""
        self._lag_timer = self.network.call_later(self.replica_lag_time_max_s / 2, self._check_lag)

    def _check_lag(self) -> None:
        """Propose to take out of the ISR each follower whose copy of real bytes last held everything the
        leader had more than ``replica.lag.time.max.ms`` ago."""
        self._lag_timer = None
        if not self._acting:
            return
        self._lagging = {(key, follower) for key, follower in self.network.lagging(self.broker_id,
                                                                                   self.replica_lag_time_max_s)
                         if (replica := self.replicas.get(key)) is not None and follower in replica.isr}
        self._lagging |= self._lagging_fetchers()
        for key in {key for key, _ in self._lagging}:
            replica = self.replicas.get(key)
            if replica is not None:
                self._consider_isr(replica)
        self._arm_lag_check()

    def _lagging_fetchers(self) -> set[tuple[tuple[uuid.UUID, int], int]]:
        """ISR members of another process (which fetch over TCP) past the lag rule, by their fetches."""
        now_ms, max_lag_ms = self.now_ms(), int(self.replica_lag_time_max_s * 1000)
        found = set()
        for partition in self.partitions.opened_partitions():
            if not partition.is_leader or partition.closed:
                continue
            remote = [b for b in partition.isr if b != self.broker_id and not self.network.hosts(b)]
            if remote:
                key = (partition.topic_id, partition.index)
                found |= {(key, b) for b in partition.lagging_followers(remote, now_ms, max_lag_ms)}
        return found

    def hosted_partition(self, key: tuple[uuid.UUID, int]) -> Partition | None:
        """The replica's ``Partition`` for a read (Fetch, OffsetForLeaderEpoch); None if not hosted or its
        directory is offline."""
        try:
            return self.partition(*key)
        except KafkaError:
            return None

    def _copied_partition(self, key: tuple[uuid.UUID, int]) -> Partition | None:
        """The replication network's view of a replica's real log: a leader's only once its log was used
        (millions of simulated partitions keep no files), a follower's made when there is something to copy."""
        replica = self.replicas.get(key)
        if replica is None or (replica.partition_log is None and replica.leader == self.broker_id):
            return replica.partition_log if replica is not None else None
        return self.hosted_partition(key)

    def _data_arrived(self, key: tuple[uuid.UUID, int]) -> None:
        """Real bytes reached a replica here or moved its leader's high watermark: wake the fetches."""
        self.broker.fetches.data_arrived(key)

    def _partition_data(self, partition: Partition, appended: bool) -> None:
        """A hosted partition's log end or high watermark moved: wake the fetches waiting on it; a leader's
        append also restarts its followers' copies, and counts in the size its replica reports."""
        key = (partition.topic_id, partition.index)
        self.broker.fetches.data_arrived(key)
        if appended and partition.is_leader:
            replica = self.replicas.get(key)
            if replica is not None:
                replica.log_bytes = self._partition_size(self.broker.image, replica.topic_name, replica.partition) \
                    + partition.log.size_bytes
            self.network.leader_appended(self.broker_id, key)

    def on_partitions(self, changes: LocalChanges | None) -> None:
        """Partition listener of the broker's metadata (``MetadataView.subscribe_partitions``)."""
        if self._acting:
            self.apply_changes(changes)

    def apply_changes(self, changes: LocalChanges | None) -> None:
        """Act on this broker's local changes, [(topic id, topic or None, [(partition, state or
        None)])] (each partition once), or with None on every partition the image gives this broker and every
        replica it holds."""
        image = self.broker.image
        broker_id, by_topic = self.broker_id, self._by_topic
        whole = changes is None
        if changes is None:
            changes = self._whole_image(image)
        place, follow = self.broker.log_manager.place, self.network.follow
        for topic_id, topic, states in changes:
            hosted = by_topic.get(topic_id.int)
            for index, state in states:
                replica = hosted.get(index) if hosted is not None else None
                if state is None or broker_id not in state.replicas:
                    if replica is not None:
                        self._delete((topic_id, index))
                    continue
                if replica is None:
                    replica = Replica(topic_id, topic.name, index, state)
                    if hosted is None:
                        hosted = by_topic[topic_id.int] = {}
                    hosted[index] = replica
                    self._start_log(image, replica)
                    led = kept = False
                else:
                    had = replica.state
                    if state.leader_epoch < had.leader_epoch or (
                            state.leader_epoch == had.leader_epoch and state.partition_epoch < had.partition_epoch):
                        continue  # the replica already has a newer state (an AlterPartition answer)
                    kept = had.leader == state.leader
                    led = had.leader == broker_id and replica.log_dir is not None and replica.log_dir.online
                    replica.state = state
                    self.partitions.changed(replica)
                # placed already in the directory the log names (compared by value, without UUID.__eq__)
                assigned = state.directories[state.replicas.index(broker_id)]
                log_dir = replica.log_dir
                if (log_dir is None or not log_dir.online or assigned.int != log_dir.directory_id.int) \
                        and not place(replica, assigned):
                    continue
                self.fetcher.update(replica)
                if state.leader != broker_id:
                    # an in-sync follower of the same leader has nothing new to copy or to report (the two
                    # of every partition a bulk change keeps): it was followed when it got that leader or
                    # its directory (which it had before this state) came back; a start follows anew
                    if whole or not (kept and log_dir is not None and broker_id in state.isr):
                        follow(broker_id, replica)
                elif not led:
                    self.serve(image, replica)
                else:  # a new state of a partition it leads: a follower that caught up and whose proposal
                    # was refused (a stale partition epoch) or lost in a controller failover is proposed
                    # again; the network tells of a catch-up only once (Kafka's leader sees it at the
                    # follower's next fetch)
                    self._consider_isr(replica)

    def _start_log(self, image: MetadataImage, replica: Replica) -> None:
        """A replica new here: its directory and size as its log directory's checkpoint kept them
        (server/broker/checkpoints.py), whole if in sync when this broker learns of it."""
        kept = self._kept.pop((replica.topic_name, replica.partition), None) if self._kept else None
        if kept is not None:
            self.broker.log_manager.keep_in(replica, kept[1])
        if self.broker_id in replica.state.isr:  # in sync: it holds everything
            replica.log_bytes = self._partition_size(image, replica.topic_name, replica.partition)
        elif kept is not None:
            replica.log_bytes = min(float(kept[0]), self._partition_size(image, replica.topic_name, replica.partition))

    def tables(self) -> Iterable[dict[int, Replica]]:
        """Each topic's table of this broker's replicas, {partition: replica}, to read."""
        return self._by_topic.values()

    def _whole_image(self, image: MetadataImage) -> LocalChanges:
        """Every partition the image gives this broker and every replica it holds, as local changes."""
        changes: dict[uuid.UUID, tuple[uuid.UUID, Any, list[tuple[int, Any]]]] = {}
        for topic in image.topics.values():
            states = [(index, state) for index, state in topic.partitions.items() if self.broker_id in state.replicas]
            if states:
                changes[topic.topic_id] = (topic.topic_id, topic, states)
        for topic_id, index in self.replicas:
            entry = changes.get(topic_id)
            held = image.topics.get(topic_id)
            if entry is None:
                entry = changes[topic_id] = (topic_id, held, [])
            if held is None or index not in held.partitions or self.broker_id not in held.partitions[index].replicas:
                entry[2].append((index, None))
        return list(changes.values())

    def serve(self, image: MetadataImage, replica: Replica) -> None:
        """Act on a replica's state: lead it (its log is the partition's, whole), or copy it from its leader."""
        if replica.leader == self.broker_id:
            # a leader's replica keeps its size without its ingress's growth, which the network adds
            # (``ReplicationNetwork.grown``); a follower's copy counted it
            replica.log_bytes = max(replica.log_bytes - self.network.grown(replica.key),
                                    self._partition_size(image, replica.topic_name, replica.partition))
            self.network.unfollow(self.broker_id, replica.key)
            self._consider_isr(replica)
        else:
            self.network.follow(self.broker_id, replica)

    def _partition_size(self, image: MetadataImage, topic_name: str, partition: int) -> float:
        """A partition's size; a topic's sizes are looked up once per topic and image version (a bulk
        change names the same topics thousands of times)."""
        if self._sizes[0] != image.offset:
            self._sizes = (image.offset, {})
        sizes = self._sizes[1]
        topic = sizes.get(topic_name)
        if topic is None:
            listed, whole = topic_sizes(image, topic_name)
            topic = sizes[topic_name] = listed, float(whole)  # one float shared by the replicas that keep it
        listed, default = topic
        size = listed.get(partition)
        return default if size is None else float(size)

    def on_commit(self, committed: list[tuple[int, Message]]) -> None:
        """Commit listener of the broker's metadata. A broker unfenced: as leader, propose it for the ISR
        where it has caught up (Kafka's leader sees that at its follower's next fetch; no copy here
        fetches once done). A partition's size (``kraftwire.partition.size.bytes``) changed: the leader's
        log takes the new size at once (writes land there first) and followers copy the difference from
        it; a smaller size truncates every replica. Only the resized topics' partitions are looked at; a
        topic created in the same commit is not (a CreateTopics sets the size of every topic it creates,
        and its replicas took that size when ``apply_changes`` made them, before this listener runs)."""
        resized = set()
        created = set()
        unfenced = set()
        record: Any  # one of the _WATCHED types
        for record in [record for _, record in committed if type(record) in _WATCHED]:
            kind = type(record)
            if kind is rec.TopicRecord:
                created.add(record.name)
            elif kind is rec.ConfigRecord:
                if record.name in configs.SIZE_CONFIGS:  # a topic config (no broker synonym)
                    resized.add(record.resource_name)
            elif kind is rec.UnfenceBrokerRecord:
                unfenced.add(record.id)
            elif record.fenced == UNFENCE if kind is rec.BrokerRegistrationChangeRecord else not record.fenced:
                unfenced.add(record.broker_id)  # unfenced, or an amended registration
        if unfenced and self._acting:
            for replica in self.replicas.values():
                if replica.leader == self.broker_id and any(b in unfenced and b not in replica.isr
                                                            for b in replica.replicas):
                    self._consider_isr(replica)
        resized -= created
        if not resized:
            return
        self.network.settle()  # bytes copied so far count at the old size
        image = self.broker.image
        topics = [topic for name in resized if (topic := image.topic(name)) is not None]
        for topic in topics:
            listed, default = topic_sizes(image, topic.name)
            for partition in topic.partitions:
                hosted = self.replicas.get((topic.topic_id, partition))
                if hosted is not None:
                    replica = hosted
                    size = float(listed.get(partition, default))
                    replica.log_bytes = size if replica.leader == self.broker_id else min(replica.log_bytes, size)
        self.network.changed(topic.topic_id for topic in topics)

    def _delete(self, key: tuple[uuid.UUID, int]) -> None:
        hosted = self._by_topic[key[0].int]
        replica = hosted.pop(key[1])
        if not hosted:
            del self._by_topic[key[0].int]
        self.network.unfollow(self.broker_id, key)
        self.fetcher.remove(key)
        self.partitions.deleted(replica)
        self.broker.log_manager.forget(replica)

    # --- ISR expansion --------------------------------------------------------------------------

    def replica_fetched(self, key: tuple[uuid.UUID, int], follower: int) -> None:
        """A follower of another process fetched from a partition this broker leads (server/broker/fetch.py):
        outside the ISR, it may have caught up (Kafka's leader looks at every follower fetch)."""
        replica = self.replicas.get(key)
        if replica is not None and follower not in replica.isr and not self.network.hosts(follower):
            self._consider_isr(replica)

    def now_ms(self) -> int:
        return self.partitions.clock.now_ms()

    def leader_throttled(self, key: tuple[uuid.UUID, int], topic_name: str, follower: int) -> bool:
        """Kafka's ``shouldLeaderThrottle``: a follower outside the ISR of a replica the topic's
        ``leader.replication.throttled.replicas`` lists, while the throttled bytes sent exceed the rate."""
        replica = self.replicas.get(key)
        if replica is None or follower in replica.isr:
            return False
        bound = throttled(self.broker.image, topic_name, key[1], self.broker_id, leader_side=True)
        return bound is not None and self.leader_quota.exceeded(bound)

    def leader_sent(self, key: tuple[uuid.UUID, int], topic_name: str, follower: int, nbytes: int) -> None:
        if throttled(self.broker.image, topic_name, key[1], self.broker_id, leader_side=True) is not None:
            self.leader_quota.record(nbytes)

    def follower_caught_up(self, key: tuple[uuid.UUID, int]) -> None:
        """Some follower of ``key`` may be ready to join the ISR: propose it if this broker leads."""
        replica = self.replicas.get(key)
        if replica is not None:
            self._consider_isr(replica)

    def _take_answer(self, response: Any, sent: dict[tuple[uuid.UUID, int], int],
                     again: set[tuple[uuid.UUID, int]]) -> None:
        """An AlterPartition answer: each accepted partition's state as the controller made it; those to
        look at again (accepted: more may have caught up; newer state arrived meanwhile) into ``again``."""
        for topic in response.topics:
            for result in topic.partitions:
                key = (topic.topic_id, result.partition_index)
                replica = self.replicas.get(key)
                if replica is None:
                    continue
                if result.error_code == ErrorCode.NONE and result.partition_epoch >= replica.partition_epoch:
                    replica.state = replica.state._replace(isr=tuple(result.isr), leader_epoch=result.leader_epoch,
                                                           partition_epoch=result.partition_epoch)
                    self.partitions.changed(replica)
                if result.error_code == ErrorCode.NONE or replica.partition_epoch != sent[key]:
                    again.add(key)

    def _reconsider(self, keys: Iterable[tuple[uuid.UUID, int]]) -> None:
        for key in keys:
            self.follower_caught_up(key)

    def _consider_isr(self, replica: Replica) -> None:
        """Propose, soon, the replicas outside the ISR that have caught up, if this broker leads. Only a
        partition with such a replica now is queued (a bulk change names thousands whose new replicas
        have not caught up): the network tells the leader when one catches up later."""
        if replica.leader != self.broker_id:
            return
        isr, caught_up = replica.isr, self.network.caught_up
        if not (any(b not in isr and caught_up(replica.topic_id, replica.partition, b) for b in replica.replicas)
                or self._shrinking(replica)) or not self.broker.log_manager.online(replica):
            return
        self._to_propose.add(replica.key)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(self._propose()))

    def _shrinking(self, replica: Replica) -> list[int]:
        """The ISR members of a partition it leads that the lag rule took out at its last look (never the
        leader) and that have not caught up since."""
        return [b for b in replica.isr if b != self.broker_id and (replica.key, b) in self._lagging
                and not self.network.caught_up(replica.topic_id, replica.partition, b)]

    def _expanded_isr(self, image: MetadataImage, replica: Replica) -> list[int] | None:
        """The ISR to propose: caught-up replicas join, lagging ones leave; None if it stays as it is."""
        joining = [b for b in replica.replicas if b not in replica.isr
                   and (broker := image.brokers.get(b)) is not None and broker.active
                   and self.network.caught_up(replica.topic_id, replica.partition, b)]
        leaving = self._shrinking(replica)
        if not joining and not leaving:
            return None
        return [b for b in replica.isr if b not in leaving] + joining

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
                partition_index=replica.partition, leader_epoch=replica.leader_epoch,
                new_isr_with_epochs=[AlterPartitionRequest.BrokerState(
                    broker_id=b, broker_epoch=image.brokers[b].epoch if b in image.brokers else -1) for b in isr],
                partition_epoch=replica.partition_epoch))
            sent[key] = replica.partition_epoch
            if replica.partition_log is not None:  # Kafka's maximal ISR: the joining count for the HW at once
                replica.partition_log.pending_isr = tuple(b for b in isr if b not in replica.isr)
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
            for key in sent:
                replica = self.replicas.get(key)
                if replica is not None and replica.partition_log is not None:
                    replica.partition_log.pending_isr = ()
        again = {key for key in self._to_propose if key in sent}  # asked for while in flight
        if response is None or response.error_code != ErrorCode.NONE:
            # unanswered (a controller failover, a lost connection) or refused whole: asked again after
            # a pause, as Kafka's AlterPartitionManager retries (no later state need come to ask again)
            if response is not None:
                log.info("broker %d: AlterPartition refused with error %d", self.broker_id, response.error_code)
            asyncio.get_running_loop().call_later(ALTER_PARTITION_RETRY_S, self._reconsider, list(sent))
        if response is not None:
            self._take_answer(response, sent, again)
        self._to_propose -= again  # looked at anew: queued again only if there is still something to propose
        for key in again:
            self.follower_caught_up(key)

