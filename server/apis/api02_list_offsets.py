"""ListOffsets (2): an offset per partition: earliest, latest, by timestamp, or the largest timestamp.

Who: consumers and tools (``kafka-get-offsets``), on a broker's listener; only the partition's leader
answers (NOT_LEADER_OR_FOLLOWER elsewhere), unless the replica id is -2 (Kafka's debugging id). Each
topic needs DESCRIBE (TOPIC_AUTHORIZATION_FAILED otherwise). The lookups, the isolation levels and the
leader-epoch checks (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH) are the broker's
(server/broker/offsets.py), over the partition's log (server/storage/).
"""
from __future__ import annotations

from kraftwire.codec.messages import ListOffsetsRequest, ListOffsetsResponse
from kraftwire.server.metadata.acls import Operation, ResourceType
from kraftwire.server.wire.transport import RequestContext

from .authorization import authorized
from .nodes import BrokerNodeApi

API_KEY = 2


def on_broker(broker: BrokerNodeApi, context: RequestContext, request: ListOffsetsRequest) -> ListOffsetsResponse:
    def allowed(topic: str) -> bool:
        return authorized(broker, context, Operation.DESCRIBE, ResourceType.TOPIC, topic)

    answer: ListOffsetsResponse = broker.list_offsets(request, context.api_version, allowed)
    return answer
