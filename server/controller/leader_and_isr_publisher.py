"""The controller's LeaderAndIsr pushes: how simulated brokers learn what they host.

KRaft brokers replay the metadata log instead; kraftwire's controller sends LeaderAndIsr (api key 4)
over TCP, as Kafka's controller did for ZooKeeper-mode brokers, using the mapping Kafka's KRaft
controller used in migration mode (reference §2.11): ``isKRaftController`` true, per-partition
``ControllerEpoch`` -1, ``PartitionEpoch`` the partition epoch, the merged ``Replicas`` with
``AddingReplicas``/``RemovingReplicas``, ``IsNew`` for a broker that is new to the partition, topics
grouped with their ids, ``LiveLeaders`` the leaders' endpoints.

Shortly after a commit (a linger of 10 ms, plus 10 ms per 1000 changed partitions up to 200 ms, that
also gathers the commits that follow it), each changed partition is sent to the brokers that host it now or hosted it when
last told (so removed replicas learn they are gone), in INCREMENTAL requests of at most 1000
partitions. A broker that is unfenced, or registers again while unfenced (an amended registration: a
restored log directory, a production twin's first start), gets a FULL request with every partition it
hosts: that is how a restarted broker picks its replicas up again. Requests to a broker go one at a
time, in commit order, at the highest version both sides serve; a broker that cannot be reached loses
what was queued for it before the newest FULL request (that one and what follows are still sent) and
is brought up to date by the FULL request when it is unfenced again.
"""
from __future__ import annotations

import asyncio
import logging
import uuid

from kraftwire.codec import records as rec
from kraftwire.codec.messages import LeaderAndIsrRequest
from kraftwire.codec.constants import LEADER_AND_ISR_FULL, LEADER_AND_ISR_INCREMENTAL, NO_LEADER, UNFENCE

from kraftwire.server.wire.client import KafkaClient, KafkaClientError
from kraftwire.server.metadata.image import MetadataImage

log = logging.getLogger("kraftwire.leader_and_isr")

KRAFT_CONTROLLER_EPOCH = -1  # per-partition ControllerEpoch in KRaft's mapping
# Commits are gathered for 10 ms, plus 10 ms per 1000 changed partitions (at most 200 ms): the writes'
# own answers go out before the brokers' LeaderAndIsr work takes the loop.
PUBLISH_LINGER_S = 0.01
LINGER_PER_PARTITION_S = 0.00001
MAX_LINGER_S = 0.2
MAX_PARTITIONS_PER_REQUEST = 1000  # INCREMENTAL requests are cut so that no one blocks the loop for long

PartitionState = LeaderAndIsrRequest.LeaderAndIsrPartitionState
TopicState = LeaderAndIsrRequest.LeaderAndIsrTopicState
LiveLeader = LeaderAndIsrRequest.LeaderAndIsrLiveLeader
_new = tuple.__new__
_STATE_FIELDS = ("topic_name", "partition_index", "controller_epoch", "leader", "leader_epoch", "isr",
                 "partition_epoch", "replicas", "adding_replicas", "removing_replicas", "is_new",
                 "leader_recovery_state", "unknown_tagged_fields")
assert PartitionState._fields == _STATE_FIELDS


def build_request(image: MetadataImage, controller_id: int, controller_epoch: int, broker_id: int,
                  partitions, request_type: int) -> LeaderAndIsrRequest:
    """The request telling ``broker_id`` about ``partitions``: (topic, index, state, is_new) tuples."""
    topics: dict[uuid.UUID, tuple[str, list]] = {}
    leaders = set()
    for topic, index, state, is_new in partitions:
        states = topics.get(topic.topic_id)
        if states is None:
            states = topics[topic.topic_id] = (topic.name, [])
        # built positionally, in _STATE_FIELDS order: a bulk change sends tens of thousands of these
        states[1].append(_new(PartitionState, (
            "", index, KRAFT_CONTROLLER_EPOCH, state.leader, state.leader_epoch, state.isr, state.partition_epoch,
            state.replicas, state.adding, state.removing, is_new, state.leader_recovery_state, ())))
        leaders.add(state.leader)
    leaders.discard(NO_LEADER)
    broker = image.brokers.get(broker_id)
    live = [LiveLeader(broker_id=b, host_name=e.host, port=e.port)
            for b in sorted(leaders) if (leader := image.brokers.get(b)) is not None
            for e in leader.endpoints[:1]]
    return LeaderAndIsrRequest(
        controller_id=controller_id, is_k_raft_controller=True, controller_epoch=controller_epoch,
        broker_epoch=broker.epoch if broker is not None else -1, type=request_type,
        topic_states=[TopicState(topic_name=name, topic_id=topic_id, partition_states=states)
                      for topic_id, (name, states) in topics.items()],
        live_leaders=live)


def _keep_from_newest_full(queue: asyncio.Queue) -> None:
    """After a lost request, drop what was queued before the newest FULL request (it covers them) and keep
    it and what follows; with no FULL queued drop everything: the FULL request at the broker's next
    unfence covers it."""
    queued = [queue.get_nowait() for _ in range(queue.qsize())]
    newest_full = max((i for i, (_, request_type) in enumerate(queued) if request_type == LEADER_AND_ISR_FULL),
                      default=len(queued))
    for item in queued[newest_full:]:
        queue.put_nowait(item)


class LeaderAndIsrPublisher:
    """Pushes committed partition state to the brokers concerned (see the module docstring)."""

    def __init__(self, controller):
        self.controller = controller
        # partition -> replicas last sent: the image's own (shared) tuple, no per-partition set
        self._told: dict[tuple[uuid.UUID, int], tuple[int, ...]] = {}
        self._dirty: set[tuple[uuid.UUID, int]] = set()
        self._full: set[int] = set()
        self._scheduled = False
        self._queues: dict[int, asyncio.Queue] = {}
        self._senders: dict[int, asyncio.Task] = {}
        self._clients: dict[int, KafkaClient] = {}
        self.client_security = None  # a wire.security.ClientSecurity for the brokers' listeners, or None
        self._sending = 0  # requests sent and not yet answered
        self.reachable = lambda broker_id: True  # whether the link to a broker is up (the harness cuts it)
        # Whether becoming active sends the unfenced brokers a FULL request. Off while the host's brokers
        # start: the image may name endpoints of an earlier run or, in a production twin, the source
        # cluster's brokers, which must never be contacted; starting brokers register and get one anyway.
        self.full_on_activation = False

    @property
    def idle(self) -> bool:
        """Nothing committed waits to be sent, and every request sent was answered."""
        return not (self._scheduled or self._dirty or self._full or self._sending
                    or any(not queue.empty() for queue in self._queues.values()))

    def start(self) -> None:
        self.controller.add_commit_listener(self.on_commit)
        self.controller.add_leadership_listener(self.on_leadership)

    def on_leadership(self, active: bool) -> None:
        """A newly active controller tells every unfenced broker everything it hosts (a FULL request),
        since its predecessor may not have sent the last changes; a standby sends nothing."""
        self._dirty.clear()
        self._full.clear()
        for queue in self._queues.values():
            while not queue.empty():
                queue.get_nowait()
        if not active or not self.full_on_activation:
            return
        image = self.controller.committed
        self._told = {(topic.topic_id, index): state.replicas for topic, index, state in image.partitions()}
        self._full.update(b for b, broker in image.brokers.items() if not broker.fenced)
        if self._full and not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_later(PUBLISH_LINGER_S, self._publish)

    async def stop(self) -> None:
        for task in self._senders.values():
            task.cancel()
        for client in self._clients.values():
            await client.close()
        self._senders.clear()
        self._clients.clear()

    def on_commit(self, committed) -> None:
        if not self.controller.active:
            return
        for _, record in committed:
            kind = type(record)
            if kind is rec.PartitionChangeRecord or kind is rec.PartitionRecord:
                self._dirty.add((record.topic_id, record.partition_id))
            elif kind is rec.UnfenceBrokerRecord:
                self._full.add(record.id)
            elif kind is rec.BrokerRegistrationChangeRecord and record.fenced == UNFENCE:
                self._full.add(record.broker_id)
            elif kind is rec.RegisterBrokerRecord and not record.fenced:  # an amended registration
                self._full.add(record.broker_id)
        if (self._dirty or self._full) and not self._scheduled:
            self._scheduled = True
            linger = min(PUBLISH_LINGER_S + len(self._dirty) * LINGER_PER_PARTITION_S, MAX_LINGER_S)
            asyncio.get_running_loop().call_later(linger, self._publish)

    def _publish(self) -> None:
        self._scheduled = False
        image = self.controller.committed
        per_broker: dict[int, list] = {}
        for key in self._dirty:
            topic = image.topics.get(key[0])
            state = topic.partitions.get(key[1]) if topic is not None else None
            if state is None:
                self._told.pop(key, None)
                continue
            before = self._told.get(key, ())
            for broker_id in set(before).union(state.replicas):
                per_broker.setdefault(broker_id, []).append((topic, key[1], state, broker_id not in before))
            self._told[key] = state.replicas
        self._dirty.clear()
        for broker_id, partitions in per_broker.items():
            if broker_id not in self._full:
                for start in range(0, len(partitions), MAX_PARTITIONS_PER_REQUEST):
                    self._send(image, broker_id, partitions[start:start + MAX_PARTITIONS_PER_REQUEST],
                               LEADER_AND_ISR_INCREMENTAL)
        for broker_id in self._full:
            hosted = [(topic, index, state, False) for topic, index, state in image.partitions()
                      if broker_id in state.replicas]
            self._send(image, broker_id, hosted, LEADER_AND_ISR_FULL)
        self._full.clear()

    def _send(self, image: MetadataImage, broker_id: int, partitions, request_type: int) -> None:
        if broker_id not in image.brokers:
            return
        queue = self._queues.get(broker_id)
        if queue is None:
            queue = self._queues[broker_id] = asyncio.Queue()
            self._senders[broker_id] = asyncio.create_task(self._sender(broker_id, queue))
        queue.put_nowait((partitions, request_type))

    async def _sender(self, broker_id: int, queue: asyncio.Queue) -> None:
        while True:
            partitions, request_type = await queue.get()
            client = self._client(broker_id)
            if client is None:
                continue
            request = build_request(self.controller.committed, self.controller.node_id, self.controller.log.epoch,
                                    broker_id, partitions, request_type)
            self._sending += 1
            try:
                response = await client.send(request)
            except KafkaClientError as exc:
                log.info("LeaderAndIsr to broker %d not delivered: %s", broker_id, exc)
                client = self._clients.pop(broker_id, None)
                if client is not None:
                    await client.close()
                _keep_from_newest_full(queue)
                continue
            finally:
                self._sending -= 1
            failed = [(p.partition_index, p.error_code) for t in response.topics for p in t.partition_errors
                      if p.error_code] + [(p.partition_index, p.error_code) for p in response.partition_errors
                                          if p.error_code]
            if response.error_code or failed:
                log.info("LeaderAndIsr to broker %d: error %d, partition errors %s", broker_id,
                         response.error_code, failed[:10])

    def _client(self, broker_id: int) -> KafkaClient | None:
        broker = self.controller.committed.brokers.get(broker_id)
        if broker is None or not broker.endpoints or not self.reachable(broker_id):
            return None
        endpoint = broker.endpoints[0]
        client = self._clients.get(broker_id)
        if client is not None and (client.host, client.port) != (endpoint.host, endpoint.port):
            asyncio.ensure_future(client.close())
            client = None
        if client is None:
            client = self._clients[broker_id] = KafkaClient(endpoint.host, endpoint.port,
                                                            f"controller-{self.controller.node_id}",
                                                            self.client_security)
        return client
