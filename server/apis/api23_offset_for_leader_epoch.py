"""OffsetForLeaderEpoch (23): where a leader epoch ended in the partition leader's log.

Who: a following replica before it copies from a new leader and a consumer that validates its position
after a leader change (KIP-320): CLUSTER_ACTION on the cluster allows every topic, else DESCRIBE on each
topic (a refused one gets TOPIC_AUTHORIZATION_FAILED), as Kafka's ``KafkaApis`` checks. Only the
leader answers (NOT_LEADER_OR_FOLLOWER elsewhere); ``CurrentLeaderEpoch`` fences as in Fetch
(FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH); the answer is the largest epoch of the leader's log at or
below the one asked for and the offset where it ended, the log end for the leader's current epoch, and
-1/-1 for an epoch older than the log's first (server/broker/fetch.py).
"""
from __future__ import annotations

from kraftwire.codec.messages import OffsetForLeaderEpochRequest
from kraftwire.codec.model import Struct
from kraftwire.server.metadata.acls import Operation, ResourceType
from kraftwire.server.wire.transport import RequestContext

from .authorization import authorized
from .nodes import BrokerNodeApi

API_KEY = 23


def on_broker(broker: BrokerNodeApi, context: RequestContext, request: OffsetForLeaderEpochRequest) -> Struct:
    if authorized(broker, context, Operation.CLUSTER_ACTION):
        return broker.offsets_for_leader_epochs(request, lambda name: True)
    return broker.offsets_for_leader_epochs(
        request, lambda name: authorized(broker, context, Operation.DESCRIBE, ResourceType.TOPIC, name))
