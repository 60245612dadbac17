"""InitProducerId (22): a producer id and epoch for an idempotent producer.

Who: producers, on a broker's listener. A producer without a transactional id needs IDEMPOTENT_WRITE on
the cluster or WRITE on some topic (CLUSTER_AUTHORIZATION_FAILED otherwise, as Kafka asks); it gets a
new id, never handed out before, with epoch 0, whatever id and epoch it names (Kafka's coordinator does
the same for a producer without a transactional id), from the block the broker holds
(server/broker/producer_ids.py; blocks come from the controller with AllocateProducerIds,
api67_allocate_producer_ids.py). A ProducerId or ProducerEpoch of -1 without the other is
INVALID_REQUEST. While the broker holds no block (its first producer) the answer is
COORDINATOR_LOAD_IN_PROGRESS and a block is asked for, as Kafka answers (clients retry).

A transactional id needs WRITE on it (TRANSACTIONAL_ID_AUTHORIZATION_FAILED otherwise) and then gets
UNSUPPORTED_VERSION: kraftwire serves no transactions, and that is Kafka's answer to a request for a
feature its broker does not enable (README, differences). Clients reach transactions through
FindCoordinator first, which kraftwire does not advertise, so they stop there. v6 (two-phase commit) is
unstable in Kafka 4.3 and not served.
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.messages import InitProducerIdRequest, InitProducerIdResponse
from kraftwire.server.metadata.acls import Operation, ResourceType
from kraftwire.server.wire.transport import RequestContext

from .authorization import authorized, authorized_on_any_topic
from .nodes import BrokerNodeApi

API_KEY = 22
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1


def on_broker(broker: BrokerNodeApi, context: RequestContext,
                    request: InitProducerIdRequest) -> InitProducerIdResponse:
    if request.transactional_id is not None:
        if not authorized(broker, context, Operation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id):
            return _refused(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
        return _refused(ErrorCode.UNSUPPORTED_VERSION)
    if not (authorized(broker, context, Operation.IDEMPOTENT_WRITE)
            or authorized_on_any_topic(broker, context, Operation.WRITE)):
        return _refused(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    if (request.producer_id == NO_PRODUCER_ID) != (request.producer_epoch == NO_PRODUCER_EPOCH):
        return _refused(ErrorCode.INVALID_REQUEST)
    try:
        producer_id = broker.new_producer_id()
    except KafkaError as exc:
        return _refused(exc.code)
    return InitProducerIdResponse(error_code=ErrorCode.NONE, producer_id=producer_id, producer_epoch=0)


def _refused(code: int) -> InitProducerIdResponse:
    """An error answer: no producer id, no epoch (-1, -1), as Kafka's."""
    return InitProducerIdResponse(error_code=code, producer_id=NO_PRODUCER_ID, producer_epoch=NO_PRODUCER_EPOCH)
