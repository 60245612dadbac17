"""One module per Kafka API, named ``api<key>_<name>.py`` (``api45_alter_partition_reassignments``).

Each module opens with its contract (what it does, who may call it, what null means, version notes)
and defines some of:

* ``API_KEY``
* ``on_broker(broker, context, request)``: answer on a simulated broker's listener;
* ``FORWARD = True``: broker listeners relay the request unchanged to the active controller;
* ``on_controller(node, context, request)``: answer on the controller listener (usually
  ``await node.controller.write(...)`` around a pure ``decide(image, request, version)``).

A module with neither ``on_broker`` nor ``FORWARD`` is not served on broker listeners, and one
without ``on_controller`` not on the controller listener. Versions served are the schema's.
"""
from __future__ import annotations

import importlib
import pkgutil

from kraftwire import codec

MODULES = {}
for _info in pkgutil.iter_modules(__path__):
    if _info.name.startswith("api"):
        _module = importlib.import_module(f"{__name__}.{_info.name}")
        MODULES[_module.API_KEY] = _module


def served_versions(api_key: int) -> tuple[int, int]:
    versions = codec.api(api_key)[0].VALID_VERSIONS
    return versions.low, versions.high


def broker_apis() -> dict:
    return {k: m for k, m in MODULES.items() if hasattr(m, "on_broker") or getattr(m, "FORWARD", False)}


def controller_apis() -> dict:
    return {k: m for k, m in MODULES.items() if hasattr(m, "on_controller")}
