"""ApiVersions (18): the APIs and version ranges this listener serves.

Who: any client, first thing on a connection (KIP-511). Every simulated broker advertises the same
ranges (kafkajs reads only the seed broker's). A request newer than served never reaches this module:
the transport answers it with UNSUPPORTED_VERSION (35) in a v0 body. v3+ also report the supported and
finalized features: ``metadata.version``, ``eligible.leader.replicas.version``, ``group.version`` and
``kraft.version``
(the metadata log's, 1 for a dynamic quorum; listed as finalized only when on, as Kafka leaves out
features at level 0). A v5+ request that names a cluster (KIP-1242) must name this
broker's cluster id and node id, or it gets REBOOTSTRAP_REQUIRED (129) and no API list, as Kafka's
brokers answer a client whose bootstrap address now leads to another node; the controller listener,
like Kafka's, does not check.

The answer depends only on the listener, the version asked and the image, so it is encoded once per
image version and served from that cache.
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import ApiVersionsRequest, ApiVersionsResponse
from kraftwire.codec.model import Struct
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.metadata.record_versions import (KRAFT_VERSION_FEATURE, METADATA_VERSION_FEATURE,
                                                      METADATA_VERSION_LEVEL, supported_features)
from kraftwire.server.wire.transport import Encoded, RequestContext

from .nodes import BrokerNodeApi, ControllerNodeApi

API_KEY = 18


def _answer(context: RequestContext, image: MetadataImage) -> Encoded:
    key = (API_KEY, context.api_version)
    cached = context.listener.answers.get(key)  # (image, its version, Encoded)
    if cached is None or cached[0] is not image or cached[1] != image.version:
        body = bytearray()
        answer = _build(context, image)
        assert isinstance(answer, ApiVersionsResponse)
        answer.encode_into(body, context.api_version)
        cached = context.listener.answers[key] = (image, image.version, Encoded(bytes(body)))
    return cached[2]


def _build(context: RequestContext, image: MetadataImage) -> Struct:
    body = context.listener.api_versions_body()
    finalized = {METADATA_VERSION_FEATURE: METADATA_VERSION_LEVEL, **image.features,
                 KRAFT_VERSION_FEATURE: image.kraft_version}
    return body.replace(
        supported_features=[ApiVersionsResponse.SupportedFeatureKey(name=name, min_version=low, max_version=high)
                            for name, (low, high) in supported_features(image.metadata_version_level).items()],
        finalized_features_epoch=image.offset,
        finalized_features=[ApiVersionsResponse.FinalizedFeatureKey(name=name, max_version_level=level,
                                                                    min_version_level=level)
                            for name, level in finalized.items() if level > 0])


def on_broker(broker: BrokerNodeApi, context: RequestContext,
              request: ApiVersionsRequest) -> ApiVersionsResponse | Encoded:
    if context.api_version >= 5 and request.cluster_id is not None and (
            request.cluster_id != broker.cluster_id or request.node_id != broker.broker_id):
        return ApiVersionsResponse(error_code=ErrorCode.REBOOTSTRAP_REQUIRED)
    return _answer(context, broker.image)


def on_controller(node: ControllerNodeApi, context: RequestContext, request: ApiVersionsRequest) -> Encoded:
    return _answer(context, node.image)
