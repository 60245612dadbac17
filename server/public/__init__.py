"""kraftwire: a Kafka-wire-compatible cluster controller for partition reassignment, throttles and JBOD
log directories.

This is the ``kraftwire`` package itself, the public API a test suite imports::

    from kraftwire import Cluster, BackgroundCluster, Security

Everything else lives in its subpackages: ``kraftwire.codec`` (schemas to bytes), ``kraftwire.server``
(the controller, the Raft log, the simulated brokers and the host that composes them),
``kraftwire.audit`` (the Spark audit) and ``kraftwire.schemas`` (the JSON schemas as package data).
The source tree keeps those as top-level folders; pyproject.toml maps each onto its ``kraftwire.`` name,
and this folder (``server/public/``) onto ``kraftwire`` itself (ARCHITECTURE.md, "Packages").
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kraftwire.server.host.cluster import BackgroundCluster, Cluster, Security

__all__ = ["BackgroundCluster", "Cluster", "Security"]


def __getattr__(name: str) -> object:
    # Loaded on first use, so that ``import kraftwire.codec`` or ``kraftwire.audit`` (on a Spark executor,
    # say) does not pull in the server and its dependencies.
    if name in __all__:
        from kraftwire.server.host import cluster
        return getattr(cluster, name)
    raise AttributeError(f"module 'kraftwire' has no attribute {name!r}")
