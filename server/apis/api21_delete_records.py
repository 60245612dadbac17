"""DeleteRecords (21): move partitions' log start offsets forward, deleting the records before them.

Who: admin clients and ``kafka-delete-records``, on a broker's listener; the leader deletes. Each topic
needs DELETE (TOPIC_AUTHORIZATION_FAILED otherwise). The rules are the broker's (server/broker/offsets.py,
``Partition.delete_records``): an offset up to the high watermark (-1 means the high watermark itself),
OFFSET_OUT_OF_RANGE beyond it; the answer comes once every live replica's log start offset reached it
(the low watermark), at most TimeoutMs (REQUEST_TIMED_OUT), at once with a single replica.
"""
from __future__ import annotations

from kraftwire.codec.messages import DeleteRecordsRequest, DeleteRecordsResponse
from kraftwire.server.metadata.acls import Operation, ResourceType
from kraftwire.server.wire.transport import RequestContext

from .authorization import authorized
from .nodes import BrokerNodeApi

API_KEY = 21


async def on_broker(broker: BrokerNodeApi, context: RequestContext,
                    request: DeleteRecordsRequest) -> DeleteRecordsResponse:
    def allowed(topic: str) -> bool:
        return authorized(broker, context, Operation.DELETE, ResourceType.TOPIC, topic)

    answer: DeleteRecordsResponse = await broker.delete_records(request, allowed)
    return answer
