"""Produce (0): a producer's record batches, appended by each partition's leader.

Who: any client, on a broker's listener. Each topic needs WRITE (TOPIC_AUTHORIZATION_FAILED otherwise,
per partition, the others appended). The checks, the append and the acks rules are the broker's
(server/broker/produce.py, with server/broker/partition.py and the log layer, server/storage/): acks 1
answers once the leader wrote the batch, -1 once the ISR has it (at most TimeoutMs, then
REQUEST_TIMED_OUT), and acks 0 is never answered: when a partition was refused the connection is closed
instead, as Kafka's broker does, so that the client sees it. Transactional batches are refused with
INVALID_TXN_STATE (kraftwire has no transaction coordinator: README, differences). v13 names topics by
id; from v10 a NOT_LEADER_OR_FOLLOWER carries the leader to write to next (KIP-951).
"""
from __future__ import annotations

from collections.abc import Awaitable

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import ProduceRequest, ProduceResponse
from kraftwire.server.metadata.acls import Operation, ResourceType
from kraftwire.server.wire.transport import RequestContext, Unanswered

from .authorization import authorized
from .nodes import BrokerNodeApi

API_KEY = 0


def on_broker(broker: BrokerNodeApi, context: RequestContext,
              request: ProduceRequest) -> ProduceResponse | Unanswered | Awaitable[ProduceResponse]:
    def allowed(topic: str) -> bool:
        return authorized(broker, context, Operation.WRITE, ResourceType.TOPIC, topic)

    # appended before the handler returns (a connection's next request sees the records), answered
    # at once, or with acks=-1 once the ISR has them
    response = broker.produce(request, context.api_version, allowed)
    if request.acks == 0:
        return _unanswered(response)
    return response


def _unanswered(response: ProduceResponse) -> Unanswered:
    refused = any(p.error_code != ErrorCode.NONE for t in response.responses for p in t.partition_responses)
    return Unanswered(close=refused)
