"""The replicas one simulated broker hosts, as the controller's LeaderAndIsr requests describe them.

``ReplicaManager`` (one per simulated broker) creates a replica when the broker becomes one, deletes it
when the broker leaves the replica list, and answers stale leader epochs with STALE_CONTROLLER_EPOCH
(11), as Kafka's ReplicaManager does. As a leader it asks the controller, with AlterPartition over TCP,
to add followers that have caught up to the ISR; that is what completes reassignments, and what heals
ISRs after a broker comes back. The bytes themselves are copied by the cluster's data plane
(server/broker/replication_network.py): a follower replica is handed to it with ``follow``, and the
manager registers the callback by which the network tells it, as leader, that a follower caught up.

A replica that was in the ISR when its broker learnt of it holds the whole partition (a new topic's
replicas, a restarted broker's replicas); one that was not starts empty, or keeps what it had already
copied.

Each replica lives in one of its broker's log directories (server/broker/log_dirs.py places it,
KIP-858); a replica whose directory is offline is not served: its LeaderAndIsr entries answer
KAFKA_STORAGE_ERROR (56), it copies nothing and, as a leader, proposes nothing, until the directory is
restored.
"""
from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass

from kraftwire.codec import records as rec
from kraftwire.codec.messages import AlterPartitionRequest, LeaderAndIsrResponse

from kraftwire.server.metadata import configs
from kraftwire.server.wire.client import KafkaClientError
from kraftwire.codec import ErrorCode
from kraftwire.codec.constants import LEADER_AND_ISR_FULL
from kraftwire.server.metadata.image import MetadataImage
from .replication_network import ReplicationNetwork, topic_sizes

log = logging.getLogger("kraftwire.replication")

TOPIC_IDS_VERSION = 5  # LeaderAndIsr responses group partitions by topic id from v5
ALTER_PARTITION_VERSION = 3  # with each ISR member's broker epoch (KIP-903)
_Error = LeaderAndIsrResponse.LeaderAndIsrPartitionError
assert _Error._fields == ("topic_name", "partition_index", "error_code", "unknown_tagged_fields")
_new = tuple.__new__


@dataclass(eq=False, slots=True)  # slots: every broker holds one per replica (millions at scale)
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
        self._sizes: tuple[int, dict[str, float]] = (-2, {})  # (image offset, topic -> partition size)
        network.register_broker(self.broker_id, lambda: self.running, self.follower_caught_up)

    @property
    def running(self) -> bool:
        return self.broker.running

    @property
    def idle(self) -> bool:
        """No AlterPartition is waiting to be sent or answered."""
        return not (self._to_propose or self._proposing or self._flush_scheduled)

    def leaders(self) -> list[Replica]:
        return [r for r in self.replicas.values() if r.leader == self.broker_id]

    # --- LeaderAndIsr ---------------------------------------------------------------------------

    def become_leader_or_follower(self, request, version: int) -> LeaderAndIsrResponse:
        if request.controller_epoch < self.controller_epoch:
            return LeaderAndIsrResponse(error_code=ErrorCode.STALE_CONTROLLER_EPOCH)
        self.controller_epoch = request.controller_epoch
        image = self.broker.image
        errors: dict[uuid.UUID, list] = {}
        apply = self._apply
        for topic_name, topic_id, states in _topic_states(image, request):
            results = errors.setdefault(topic_id, [])
            for state in states:
                results.append((topic_name, state.partition_index, apply(image, topic_name, topic_id, state)))
        if request.type == LEADER_AND_ISR_FULL:  # every partition this broker hosts: anything else is a stray
            listed = {(topic_id, p) for topic_id, results in errors.items() for _, p, _ in results}
            for key in [k for k in self.replicas if k not in listed]:
                self._delete(key)
        # entries built positionally (topic name, partition, error code, tagged fields): one per partition
        if version >= TOPIC_IDS_VERSION:
            return LeaderAndIsrResponse(topics=[
                LeaderAndIsrResponse.LeaderAndIsrTopicError(
                    topic_id=topic_id or uuid.UUID(int=0),  # a topic it could not resolve: the zero id
                    partition_errors=[_new(_Error, ("", p, c, ())) for _, p, c in results])
                for topic_id, results in errors.items()])
        return LeaderAndIsrResponse(partition_errors=[_new(_Error, (t, p, c, ()))
                                                      for results in errors.values() for t, p, c in results])

    def _apply(self, image, topic_name: str, topic_id: uuid.UUID | None, state) -> int:
        if topic_id is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        key = (topic_id, state.partition_index)
        replica = self.replicas.get(key)
        if replica is not None and (state.leader_epoch < replica.leader_epoch or (
                state.leader_epoch == replica.leader_epoch and state.partition_epoch < replica.partition_epoch)):
            return ErrorCode.STALE_CONTROLLER_EPOCH
        if self.broker_id not in state.replicas:
            if replica is not None:
                self._delete(key)
            return ErrorCode.NONE
        if replica is None:
            replica = self.replicas[key] = Replica(topic_id, topic_name, state.partition_index, state.leader,
                                                   state.leader_epoch, state.partition_epoch, (), ())
            if self.broker_id in state.isr:  # in sync when this broker learns of it: it holds everything
                replica.log_bytes = self._partition_size(image, topic_name, state.partition_index)
        replica.leader, replica.leader_epoch, replica.partition_epoch = (state.leader, state.leader_epoch,
                                                                        state.partition_epoch)
        # decoded arrays are tuples already
        replica.isr, replica.replicas = state.isr, state.replicas
        replica.adding, replica.removing = state.adding_replicas, state.removing_replicas
        if not self.broker.log_manager.place(image, replica):
            return ErrorCode.KAFKA_STORAGE_ERROR
        self.serve(image, replica)
        return ErrorCode.NONE

    def serve(self, image, replica: Replica) -> None:
        """Act on a replica's state: lead it (its log is the partition's, whole), or copy it from its leader."""
        if replica.leader == self.broker_id:
            replica.log_bytes = max(replica.log_bytes,
                                    self._partition_size(image, replica.topic_name, replica.partition))
            self.network.unfollow(self.broker_id, replica.key)
            self._consider_isr(replica)
        else:
            self.network.follow(self.broker_id, replica)

    def _partition_size(self, image, topic_name: str, partition: int) -> float:
        """A partition's size; a topic's sizes are looked up once per topic and image version (a bulk
        LeaderAndIsr names the same topics thousands of times)."""
        if self._sizes[0] != image.offset:
            self._sizes = (image.offset, {})
        sizes = self._sizes[1]
        topic = sizes.get(topic_name)
        if topic is None:
            topic = sizes[topic_name] = topic_sizes(image, topic_name)
        listed, default = topic
        return float(listed.get(partition, default))

    def on_commit(self, committed) -> None:
        """A partition's size (``kraftwire.partition.size.bytes``) changed: the leader's log takes the new
        size at once (writes land there first) and followers copy the difference from it; a smaller size
        truncates every replica. Commit listener of the broker's metadata; it looks at the resized
        topics' partitions only (a CreateTopics sets the size of every topic it creates)."""
        resized = {record.resource_name for _, record in committed  # a topic config only (no broker synonym)
                   if type(record) is rec.ConfigRecord and record.name in configs.SIZE_CONFIGS}
        if not resized:
            return
        self.network.settle()  # bytes copied so far count at the old size
        image = self.broker.image
        topics = [topic for name in resized if (topic := image.topic(name)) is not None]
        for topic in topics:
            listed, default = topic_sizes(image, topic.name)
            for partition in topic.partitions:
                replica = self.replicas.get((topic.topic_id, partition))
                if replica is not None:
                    size = float(listed.get(partition, default))
                    replica.log_bytes = size if replica.leader == self.broker_id else min(replica.log_bytes, size)
        self.network.changed(topic.topic_id for topic in topics)

    def _delete(self, key: tuple[uuid.UUID, int]) -> None:
        replica = self.replicas.pop(key)
        self.network.unfollow(self.broker_id, key)
        self.broker.log_manager.forget(replica)

    # --- ISR expansion --------------------------------------------------------------------------

    def follower_caught_up(self, key: tuple[uuid.UUID, int]) -> None:
        """Some follower of ``key`` may be ready to join the ISR: propose it if this broker leads."""
        replica = self.replicas.get(key)
        if replica is not None:
            self._consider_isr(replica)

    def _consider_isr(self, replica: Replica) -> None:
        """Propose, soon, the replicas outside the ISR that have caught up, if this broker leads (a
        partition whose replicas are all in the ISR has none: a bulk LeaderAndIsr names thousands)."""
        if (replica.leader != self.broker_id or all(b in replica.isr for b in replica.replicas)
                or not self.broker.log_manager.online(replica)):
            return
        self._to_propose.add(replica.key)
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


def _topic_states(image: MetadataImage, request):
    """(topic name, topic id or None, partition states) for the partitions of a LeaderAndIsr request:
    each topic of v2+ at once, each ungrouped partition of v0-1 alone."""
    for topic in request.topic_states:
        topic_id = topic.topic_id if topic.topic_id.int else image.topic_ids.get(topic.topic_name)
        yield topic.topic_name, topic_id, topic.partition_states
    for state in request.ungrouped_partition_states:
        yield state.topic_name, image.topic_ids.get(state.topic_name), (state,)
