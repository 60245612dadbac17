"""The host: what composes the wings into a running cluster and operates it. ``cluster`` (``Cluster``,
``BackgroundCluster``: a controller, its node and the brokers wired together, the harness operations),
``cli`` (the ``kraftwire`` command), ``config_file``, ``control_plane`` (HTTP operations and the live
view), ``httpd``, ``metrics``, ``fault_injection``, ``healthcheck``, ``twin`` (a production twin's
source log and partition sizes) and ``collector`` (the garbage collector tuned while a cluster runs).
The top of the import graph: it may import every wing (and the audit, for ``kraftwire audit``); no wing
imports it.
"""
