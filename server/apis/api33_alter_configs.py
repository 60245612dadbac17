"""AlterConfigs (33), the legacy form: replace the whole dynamic config set of topics (2) and brokers
(4, "<id>" or "" for the cluster-wide defaults).

Who: admin clients, on a broker listener; the controller listener serves it too. Each resource's
``Configs`` becomes its complete set of dynamic configs: every key given is set, every key it had and
is not given is deleted (``config_validation.legacy_alter_ops``). A null ``Value`` is refused on the broker with
INVALID_REQUEST "Null value not supported for : {keys}". Everything else follows
IncrementalAlterConfigs (api44_incremental_alter_configs): the receiving broker refuses repeated
resources and keys, other brokers' ids and bad broker values with INVALID_REQUEST and forwards the rest;
the controller validates topics (INVALID_CONFIG, UNKNOWN_TOPIC_OR_PARTITION), writes one ConfigRecord
per change (explicit ones first, then the implicit deletions; BROKER ones even when unchanged) in one
atomic batch, or nothing under ``ValidateOnly``.
"""
from __future__ import annotations

from kraftwire.codec.messages import AlterConfigsResponse

from kraftwire.server.metadata import configs
from kraftwire.server.controller import config_validation
from . import api44_incremental_alter_configs as incremental

API_KEY = 33


def legacy_ops(image, resource) -> list[config_validation.Op]:
    current = image.configs.get((resource.resource_type, resource.resource_name), {})
    return config_validation.legacy_alter_ops(current, [(config.name, config.value) for config in resource.configs])


def decide(image, request, controller_id: int):
    return incremental.decide(image, request, controller_id, legacy_ops, AlterConfigsResponse)


async def on_broker(broker, context, request):
    return await incremental.answer_on_broker(broker, context, request, legacy_ops, AlterConfigsResponse)


async def on_controller(node, context, request):
    return await node.controller.write(lambda image: decide(image, request, node.node_id))
