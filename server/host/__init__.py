"""The host: what composes the wings into a running cluster and operates it. ``spec`` (``ClusterSpec``:
the one validated description of a cluster, which kwargs, the CLI, kraftwire.toml and server.properties
all build), ``cluster`` (``Cluster``, ``BackgroundCluster``: composed from a spec, the controllers, their
nodes and the brokers wired together, the harness operations),
``cli`` (the ``kraftwire`` command), ``config_file``, ``control_plane`` (HTTP operations and the live
view), ``httpd``, ``metrics`` (and ``kafka_metrics``: Kafka's metrics under Kafka's names),
``fault_injection``, ``healthcheck``, ``twin`` (a production twin's source log and partition sizes),
``collector`` (the garbage collector tuned while a cluster runs), ``node_process`` (one node per
process), ``process_harness`` and ``chaos`` (node processes on one machine).
The top of the import graph: it may import every wing (and the audit, for ``kraftwire audit``); no wing
imports it.
"""
