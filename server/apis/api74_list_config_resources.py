"""ListConfigResources (74): the resources configs can be described for (KIP-1142), from the committed
image. Version 0 is Kafka's older ListClientMetricsResources and lists client metrics resources only.

Who: any client, on a broker listener. ``ResourceTypes`` (v1+) empty means every type a v1 broker
supports: GROUP (32), CLIENT_METRICS (16), BROKER_LOGGER (8), BROKER (4) and TOPIC (2), listed in that
order as Kafka lists them. GROUP lists the groups that have configs of their own (not the groups the
coordinators host: README, differences); kraftwire keeps no client metrics resources, so that type
lists nothing; BROKER and BROKER_LOGGER list every registered broker with an endpoint on this listener,
TOPIC every topic (by name). A type outside the supported ones fails the request with UNSUPPORTED_VERSION
(35) and no resources.
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec.constants import ConfigResourceType
from kraftwire.codec.messages import ListConfigResourcesRequest, ListConfigResourcesResponse
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.wire.transport import RequestContext

from .nodes import BrokerNodeApi

API_KEY = 74
TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = (
    ConfigResourceType.TOPIC, ConfigResourceType.BROKER, ConfigResourceType.BROKER_LOGGER,
    ConfigResourceType.CLIENT_METRICS, ConfigResourceType.GROUP)
LISTING_ORDER = (GROUP, CLIENT_METRICS, BROKER_LOGGER, BROKER, TOPIC)
Resource = ListConfigResourcesResponse.ConfigResource


def _names(image: MetadataImage, resource_type: int, listener: str) -> list[str]:
    if resource_type in (BROKER, BROKER_LOGGER):
        return [str(broker_id) for broker_id, broker in sorted(image.brokers.items())
                if any(endpoint.name == listener for endpoint in broker.endpoints)]
    if resource_type == TOPIC:
        return sorted(image.topic_ids)
    if resource_type == GROUP:  # the groups with configs of their own
        return sorted(name for kind, name in image.configs if kind == GROUP)
    return []  # client metrics resources: kraftwire has none


def build_response(image: MetadataImage, request: ListConfigResourcesRequest, version: int,
                   listener: str) -> ListConfigResourcesResponse:
    supported = {CLIENT_METRICS} if version == 0 else set(LISTING_ORDER)
    wanted = set(request.resource_types) if version >= 1 and request.resource_types else supported
    if not wanted <= supported:
        return ListConfigResourcesResponse(error_code=ErrorCode.UNSUPPORTED_VERSION)
    return ListConfigResourcesResponse(config_resources=[
        Resource(resource_name=name, resource_type=resource_type)
        for resource_type in LISTING_ORDER if resource_type in wanted
        for name in _names(image, resource_type, listener)])


def on_broker(broker: BrokerNodeApi, context: RequestContext,
              request: ListConfigResourcesRequest) -> ListConfigResourcesResponse:
    return build_response(broker.image, request, context.api_version, broker.listener_name)
