"""DescribeCluster (60): cluster id, controller id and the brokers (or controllers).

Who: admin clients (``describe_cluster``). On a broker listener ``EndpointType`` must be BROKERS (1):
``ControllerId`` is then a random live broker, as in KRaft, and the brokers are the unfenced ones
(v2 ``IncludeFencedBrokers`` adds the fenced ones with ``IsFenced``). On the controller listener it
must be CONTROLLERS (2), lists every controller of the quorum and names the active one (the Raft
leader; -1 while there is none). As Kafka's AuthHelper answers: the other endpoint type gets
MISMATCHED_ENDPOINT_TYPE (114), a type that is neither UNSUPPORTED_ENDPOINT_TYPE (115), and both
INVALID_REQUEST (42) at v0, with Kafka's messages and the rest of the response at its defaults.
Authorized operations are not tracked (left at Kafka's "not requested" value).
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import DescribeClusterRequest, DescribeClusterResponse
from kraftwire.server.wire.transport import RequestContext

from .api03_metadata import live_broker_id
from .nodes import BrokerNodeApi, ControllerNodeApi

API_KEY = 60
BROKERS, CONTROLLERS = 1, 2
Broker = DescribeClusterResponse.DescribeClusterBroker


ENDPOINT_TYPE_NAMES = {BROKERS: "BROKER", CONTROLLERS: "CONTROLLER"}


def _wrong_endpoint(context: RequestContext, request: DescribeClusterRequest,
                    expected: int) -> DescribeClusterResponse:
    """Kafka's refusal of an endpoint type this listener does not serve (AuthHelper's words)."""
    asked = ENDPOINT_TYPE_NAMES.get(request.endpoint_type)
    if asked is None:
        code, message = ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, f"Unsupported endpoint type {request.endpoint_type}"
    else:
        code = ErrorCode.MISMATCHED_ENDPOINT_TYPE
        message = (f"The request was sent to an endpoint of type {ENDPOINT_TYPE_NAMES[expected]}, "
                   f"but we wanted an endpoint of type {asked}")
    return DescribeClusterResponse(error_code=ErrorCode.INVALID_REQUEST if context.api_version == 0 else code,
                                   error_message=message)


def on_broker(broker: BrokerNodeApi, context: RequestContext,
              request: DescribeClusterRequest) -> DescribeClusterResponse:
    if request.endpoint_type != BROKERS:
        return _wrong_endpoint(context, request, BROKERS)
    image = broker.image
    listed = [Broker(broker_id=b.broker_id, host=e.host, port=e.port, rack=b.rack, is_fenced=b.fenced)
              for b in sorted(image.brokers.values(), key=lambda b: b.broker_id)
              if request.include_fenced_brokers or not b.fenced
              for e in b.endpoints if e.name == broker.listener_name]
    return DescribeClusterResponse(error_message=None, endpoint_type=BROKERS, cluster_id=broker.cluster_id,
                                   controller_id=live_broker_id(image), brokers=listed)


def on_controller(node: ControllerNodeApi, context: RequestContext,
                  request: DescribeClusterRequest) -> DescribeClusterResponse:
    if request.endpoint_type != CONTROLLERS:
        return _wrong_endpoint(context, request, CONTROLLERS)
    listed = [Broker(broker_id=node_id, host=host, port=port, rack=None)
              for node_id, (host, port) in sorted(node.quorum_endpoints().items())]
    return DescribeClusterResponse(error_message=None, endpoint_type=CONTROLLERS, cluster_id=node.cluster_id,
                                   controller_id=node.quorum.leader_id, brokers=listed)
