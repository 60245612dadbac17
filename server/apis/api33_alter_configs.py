"""AlterConfigs (33), the legacy form: replace the whole dynamic config set of topics (2) and brokers
(4, "<id>" or "" for the cluster-wide defaults).

Who: admin clients, on a broker listener; the controller listener serves it too. Each resource's
``Configs`` becomes its complete set of dynamic configs: every key given is set, every key it had and
is not given is deleted (``configuration_control.legacy_ops``). A null ``Value`` is refused on the broker with
INVALID_REQUEST "Null value not supported for : {keys}". Everything else follows
IncrementalAlterConfigs (api44_incremental_alter_configs): the receiving broker refuses repeated
resources and keys, other brokers' ids and bad broker values with INVALID_REQUEST and forwards the rest;
the controller validates topics (INVALID_CONFIG, UNKNOWN_TOPIC_OR_PARTITION), writes one ConfigRecord
per change (explicit ones first, then the implicit deletions; BROKER ones even when unchanged) in one
atomic batch, or nothing under ``ValidateOnly``.
"""
from __future__ import annotations

from kraftwire.codec.messages import AlterConfigsRequest, AlterConfigsResponse
from kraftwire.server.controller import configuration_control
from kraftwire.server.wire.transport import RequestContext

from .api44_incremental_alter_configs import answer_on_broker
from .nodes import BrokerNodeApi, ControllerNodeApi

API_KEY = 33


async def on_broker(broker: BrokerNodeApi, context: RequestContext,
                    request: AlterConfigsRequest) -> AlterConfigsResponse:
    return await answer_on_broker(broker, context, request, request.resources, configuration_control.legacy_ops,
                                  AlterConfigsResponse)


async def on_controller(node: ControllerNodeApi, context: RequestContext,
                        request: AlterConfigsRequest) -> AlterConfigsResponse:
    return await node.write(lambda image: configuration_control.alter_configs(image, request, node.node_id))
