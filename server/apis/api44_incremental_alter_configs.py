"""IncrementalAlterConfigs (44): SET, DELETE (``Value`` null), APPEND or SUBTRACT single configs of
topics (2) and brokers (4, "<id>" or "" for the cluster-wide defaults).

Who: admin clients, on a broker listener. The broker does Kafka's ``ConfigAdminManager.preprocess``
and answers these resources itself, with INVALID_REQUEST (42) unless said otherwise:
* a (type, name) given twice: "Each resource must appear at most once." for every copy;
* a key given twice in a resource, a null value on an operation other than DELETE, an unknown
  operation;
* a BROKER resource naming another broker ("Unexpected broker id, expected {self}, but received
  {name}") or not an integer ("Node id must be an integer, but it is: {name}"): a broker's configs
  are altered through that broker (clients send them there), the cluster default through any;
* a BROKER value the broker refuses: INVALID_REQUEST, not INVALID_CONFIG (KAFKA-13609);
  APPEND/SUBTRACT on a broker key that is not a list: INVALID_CONFIG;
* a GROUP resource with an empty name: INVALID_REQUEST "Default group resources are not allowed.";
  the controller validates the others as Kafka's GroupConfig does (INVALID_CONFIG "Unknown group config
  name: ...", "... must be greater than or equal to group.consumer.min.session.timeout.ms", a value's
  type and lower bound) and writes ConfigRecords of resource type 32;
* any other resource type: "Unknown resource type {id}" (kraftwire keeps no BROKER_LOGGER or
  CLIENT_METRICS configs; Kafka does).
It forwards the rest to the controller and answers every resource in request order.

The controller (``on_controller``, also reachable directly) decides the records: TOPIC resources are
validated there (INVALID_CONFIG (40) with Kafka's LogConfig texts, e.g. APPEND to a non-list key;
INVALID_TOPIC_EXCEPTION (17) for an illegal name; then UNKNOWN_TOPIC_OR_PARTITION (3) "The topic
'{name}' does not exist."); BROKER ones must name a registered node (BROKER_ID_NOT_REGISTERED, 102).
Unlike Kafka's controller, it checks broker values again (they may have changed since the broker
looked). ``cordoned.log.dirs`` must name the receiving broker's log directories (or ``*``; INVALID_REQUEST
from the broker) and is refused by the controller below metadata.version 4.3-IV0 (INVALID_CONFIG). With
eligible leader replicas on, min.insync.replicas may not be set on one broker nor removed from the
cluster default (INVALID_CONFIG), and each min.insync.replicas record is followed by a ClearElrRecord
(the topic's, or every topic's for a broker or cluster value), as Kafka's controller writes them. Each
change is a ConfigRecord (value null deletes); BROKER records are written even when the
value does not change (KAFKA-14136), TOPIC records only when it does. All resources' records form
one atomic batch, answered after commit; ``ValidateOnly`` writes nothing but answers the same. A
request that would write more than 10000 records fails whole: POLICY_VIOLATION (44) for every resource.
Successes carry a null ErrorMessage, as Kafka's do.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from kraftwire.codec.messages import IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse
from kraftwire.server.controller import broker_loggers, configuration_control
from kraftwire.server.controller.configuration_control import AlterRequest, AlterResponseT, OpsOf, ResourceT
from kraftwire.server.wire.transport import RequestContext

from .nodes import BrokerNodeApi, ControllerNodeApi

API_KEY = 44


async def answer_on_broker(broker: BrokerNodeApi, context: RequestContext, request: AlterRequest,
                           resources: Sequence[ResourceT], ops_of: OpsOf[ResourceT],
                           response_cls: type[AlterResponseT], loggers: Mapping[str, str] | None = None
                           ) -> AlterResponseT:
    """Answer what the broker refuses (and, given its ``loggers``, its BROKER_LOGGER resources), forward
    the rest to the controller, merge in request order (both forms of the config APIs: ``request.resources``
    and the ops that form reads them as)."""
    refused = configuration_control.preprocess_on_broker(broker.image, broker.broker_id, resources, ops_of,
                                                         broker.log_dir_paths(), loggers)
    forwarded = [r for index, r in enumerate(resources) if index not in refused]
    answer = await broker.forward(request.replace(resources=forwarded), context.api_version) if forwarded else None
    return configuration_control.merge_answers(response_cls, resources, refused, answer)


async def on_broker(broker: BrokerNodeApi, context: RequestContext,
                    request: IncrementalAlterConfigsRequest) -> IncrementalAlterConfigsResponse:
    answer = await answer_on_broker(broker, context, request, request.resources,
                                    configuration_control.incremental_ops, IncrementalAlterConfigsResponse,
                                    broker_loggers.loggers())
    _change_loggers(request, answer)
    return answer


def _change_loggers(request: IncrementalAlterConfigsRequest, answer: IncrementalAlterConfigsResponse) -> None:
    """Carry out the BROKER_LOGGER changes the answer accepted (not a dry run's)."""
    if not request.validate_only:
        outcomes = {index: (r.error_code, r.error_message) for index, r in enumerate(answer.responses)}
        broker_loggers.apply_changes(configuration_control.logger_changes(request.resources, outcomes))


async def on_controller(node: ControllerNodeApi, context: RequestContext,
                        request: IncrementalAlterConfigsRequest) -> IncrementalAlterConfigsResponse:
    loggers = broker_loggers.loggers()
    answer = await node.write(lambda image: configuration_control.incremental_alter_configs(image, request,
                                                                                          node.node_id, loggers))
    _change_loggers(request, answer)
    return answer
