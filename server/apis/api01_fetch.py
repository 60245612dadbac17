"""Fetch (1): reading partitions' records, on both kinds of listener.

On a broker (``on_broker``): consumers and following replicas read topic partitions, by name up to
v12 and by topic id from v13. A consumer needs READ on each topic it reads (a refused one gets
TOPIC_AUTHORIZATION_FAILED), a replica (replica id >= 0: ``ReplicaId`` up to v14, ``ReplicaState``
from v15) CLUSTER_ACTION on the cluster (else every partition is refused), as Kafka's ``KafkaApis``
checks. The broker's fetch manager answers (server/broker/fetch.py: sessions, errors, byte limits,
the long poll).

On the controller listener (``on_controller``): KRaft's pull replication of ``__cluster_metadata``,
between controllers and to brokers, which follow the log as observers (server/broker/metadata_follower.py).
Only ``__cluster_metadata`` partition 0 is served: another topic or partition gets
UNKNOWN_TOPIC_OR_PARTITION (3), another cluster id INCONSISTENT_CLUSTER_ID (104). The Raft core answers
the rest (server/raft/core.py): the records from the fetch offset, or ``DivergingEpoch`` where the
fetcher's log leaves the leader's, the high watermark and ``CurrentLeader``; a fetch at the log end
waits up to ``MaxWaitMs`` for new records. From v16 the answer carries the controller listener of the
leader it names (``NodeEndpoints``), so a fetcher that asked a standby goes straight to the leader.
Kafka requires CLUSTER_ACTION on the cluster for a replica's fetch, and so does kraftwire.
"""
from __future__ import annotations

from kraftwire.codec.messages import FetchRequest, FetchResponse
from kraftwire.codec.model import Struct
from kraftwire.server.metadata.acls import Operation, ResourceType
from kraftwire.server.wire.transport import RequestContext

from .authorization import authorized
from .nodes import BrokerNodeApi, ControllerNodeApi

API_KEY = 1
FIRST_VERSION_WITH_ENDPOINTS = 16
FIRST_VERSION_WITH_REPLICA_STATE = 15


async def on_broker(broker: BrokerNodeApi, context: RequestContext, request: FetchRequest) -> Struct:
    version = context.api_version
    replica_id = request.replica_state.replica_id if version >= FIRST_VERSION_WITH_REPLICA_STATE \
        else request.replica_id
    if replica_id >= 0:
        replica_allowed = authorized(broker, context, Operation.CLUSTER_ACTION)
        return await broker.fetch(request, version, lambda name: replica_allowed)
    decided: dict[str, bool] = {}

    def may_read(name: str) -> bool:
        if name not in decided:
            decided[name] = authorized(broker, context, Operation.READ, ResourceType.TOPIC, name)
        return decided[name]
    return await broker.fetch(request, version, may_read)


async def on_controller(node: ControllerNodeApi, context: RequestContext, request: FetchRequest) -> Struct:
    answer: FetchResponse = await node.quorum.handle(request, context.api_version)
    if context.api_version < FIRST_VERSION_WITH_ENDPOINTS:
        return answer
    endpoints = node.quorum_endpoints()
    named = {p.current_leader.leader_id for t in answer.responses for p in t.partitions} & endpoints.keys()
    return answer.replace(node_endpoints=[
        FetchResponse.NodeEndpoint(node_id=n, host=endpoints[n][0], port=endpoints[n][1]) for n in sorted(named)])
