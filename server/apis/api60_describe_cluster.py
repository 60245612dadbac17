"""DescribeCluster (60): cluster id, controller id and the brokers (or controllers).

Who: admin clients (``describe_cluster``). On a broker listener ``EndpointType`` must be BROKERS (1):
``ControllerId`` is then a random live broker, as in KRaft, and the brokers are the unfenced ones
(v2 ``IncludeFencedBrokers`` adds the fenced ones with ``IsFenced``). On the controller listener it
must be CONTROLLERS (2), lists every controller of the quorum and names the active one (the Raft
leader; -1 while there is none). The wrong endpoint type gets
UNSUPPORTED_ENDPOINT_TYPE (115). Authorized operations are not tracked (left at Kafka's "not
requested" value).
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


def _wrong_endpoint(request: DescribeClusterRequest, expected: int) -> DescribeClusterResponse:
    return DescribeClusterResponse(error_code=ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, endpoint_type=request.endpoint_type,
                                   error_message=f"Only endpoint type {expected} is served on this listener.")


def on_broker(broker: BrokerNodeApi, context: RequestContext,
              request: DescribeClusterRequest) -> DescribeClusterResponse:
    if request.endpoint_type != BROKERS:
        return _wrong_endpoint(request, BROKERS)
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
        return _wrong_endpoint(request, CONTROLLERS)
    listed = [Broker(broker_id=node_id, host=host, port=port, rack=None)
              for node_id, (host, port) in sorted(node.quorum_endpoints().items())]
    return DescribeClusterResponse(error_message=None, endpoint_type=CONTROLLERS, cluster_id=node.cluster_id,
                                   controller_id=node.quorum.leader_id, brokers=listed)
