"""Prometheus metrics of one cluster, served at ``/metrics`` on ``--metrics-port``.

Each cluster has its own ``CollectorRegistry`` (not prometheus-client's global one), so several
clusters in one process (a test session) keep separate counts.

* Per request, counted by the transport as its response is written (``Listener.request_stats``):
  ``kraftwire_requests_total`` by listener, api, version and error code (the response's top-level
  ``ErrorCode``, 0 for responses without one, as Kafka's request metrics do not look inside either), and
  ``kraftwire_request_latency_seconds`` by listener and api (arrival to response written, Kafka's
  TotalTimeMs). Both are plain counts per listener, made into metric families when scraped.
* Cluster state, computed when scraped from the committed image and the running nodes (no bookkeeping
  on every change): brokers and fenced brokers, partitions, under-replicated (``under_replicated``:
  Kafka's rule) and offline (leaderless) partitions, offline log directories, partitions being
  reassigned and the bytes their new replicas have copied and have left to copy (the simulated
  replication's progress), open connections per listener, and the metadata log's end offset, high
  watermark and newest snapshot (where it ends, how old it is).
* ``kraftwire_metadata_commit_latency_seconds``: each controller write's time from append to commit
  (the fsync, and the quorum once there are several voters).
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING

from kraftwire.codec.constants import NO_LEADER
from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from kraftwire.server.broker.metadata_follower import FollowerView
from kraftwire.server.raft.snapshots import list_snapshots
from kraftwire.server.wire.transport import LATENCY_BUCKETS, Listener
from .httpd import HttpServer, Request, Response
from .kafka_metrics import KafkaMetricsCollector, api_name, under_replicated_partition

if TYPE_CHECKING:
    from .cluster import Cluster



class _RequestCollector:
    """The listeners' own counts (``Listener.request_stats``, plain numbers kept as each answer is
    written), made into metric families only when scraped."""

    def __init__(self, listeners: list[Listener]):
        self._listeners = listeners

    def collect(self) -> Iterator[Metric]:
        requests = CounterMetricFamily("kraftwire_requests", "Requests answered, by listener, api, version and "
                                       "top-level error code.", labels=["listener", "api", "version", "error_code"])
        latency = HistogramMetricFamily("kraftwire_request_latency_seconds", "Time from a request's arrival to "
                                        "its response being written.", labels=["listener", "api"])
        bounds = [str(b) for b in LATENCY_BUCKETS] + ["+Inf"]
        for listener in self._listeners:
            counts, latencies = listener.request_stats()
            for (api_key, version, error_code), count in sorted(counts.items()):
                requests.add_metric([listener.name, api_name(api_key), str(version), str(error_code)], count)
            for api_key, (buckets, seconds) in sorted(latencies.items()):
                cumulative = list(accumulate(buckets))
                latency.add_metric([listener.name, api_name(api_key)], list(zip(bounds, cumulative)), seconds)
        yield requests
        yield latency


class ClusterMetrics:
    def __init__(self, cluster: Cluster):
        self.registry = CollectorRegistry(auto_describe=False)
        commit_latency = Histogram("kraftwire_metadata_commit_latency_seconds", "Time from appending a write's "
                                   "records to the metadata log to their commit.", buckets=LATENCY_BUCKETS,
                                   registry=self.registry)
        for controller in cluster.controllers:
            controller.commit_observer = commit_latency.observe
        self.registry.register(_RequestCollector(list(cluster.listeners())))
        self.registry.register(_ClusterStateCollector(cluster))
        self.kafka = KafkaMetricsCollector(cluster)
        self.registry.register(self.kafka)

    def exposition(self) -> bytes:
        """The registry in Prometheus' text format."""
        return generate_latest(self.registry)

    def http_server(self, host: str, port: int) -> HttpServer:
        def scrape(request: Request) -> Response:
            return Response(200, self.exposition(), CONTENT_TYPE_LATEST)

        return HttpServer("metrics", host, port, {("GET", "/metrics"): scrape})


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, value=value)


class _ClusterStateCollector:
    """Gauges read from the cluster when scraped."""

    def __init__(self, cluster: Cluster):
        self._cluster = cluster

    def collect(self) -> Iterator[Metric]:
        cluster = self._cluster
        image = cluster.controller.committed
        brokers = image.brokers.values()
        yield _gauge("kraftwire_brokers", "Registered brokers.", len(image.brokers))
        yield _gauge("kraftwire_fenced_brokers", "Registered brokers that are fenced.", sum(b.fenced for b in brokers))
        partitions = under_replicated = offline = 0
        for _topic, _index, state in image.partitions():
            partitions += 1
            under_replicated += under_replicated_partition(state)
            offline += state.leader == NO_LEADER
        yield _gauge("kraftwire_partitions", "Partitions.", partitions)
        yield _gauge("kraftwire_under_replicated_partitions", "Partitions with a leader whose ISR is smaller than "
                     "their replicas minus those being added (Kafka's rule).", under_replicated)
        yield _gauge("kraftwire_offline_partitions", "Partitions without a leader.", offline)
        progress = cluster.reassignment_progress().values()
        yield _gauge("kraftwire_ongoing_reassignments", "Partitions being reassigned.", len(progress))
        yield _gauge("kraftwire_reassignment_bytes_left", "Bytes the adding replicas of ongoing reassignments "
                     "still have to copy.", sum(p["bytes_left"] for p in progress))
        yield _gauge("kraftwire_reassignment_bytes_moved", "Bytes the adding replicas of ongoing reassignments "
                     "have copied.", sum(p["bytes_moved"] for p in progress))
        yield _gauge("kraftwire_offline_log_directories", "Log directories of registered brokers that are not "
                     "online.", sum(not d["online"] for b in cluster.list_brokers() if b["registered"]
                                    for d in b["directories"]))
        connections = GaugeMetricFamily("kraftwire_open_connections", "Open TCP connections, by listener.",
                                        labels=["listener"])
        for listener in cluster.listeners():
            connections.add_metric([listener.name], listener.connection_count)
        yield connections
        log = cluster.log
        yield _gauge("kraftwire_metadata_log_end_offset", "Offset the next metadata record gets.", log.end_offset)
        yield _gauge("kraftwire_metadata_high_watermark", "Offset of the first uncommitted metadata record.",
                     log.high_watermark)
        yield _gauge("kraftwire_metadata_image_offset", "Offset of the last record in the committed image.",
                     image.offset)
        fetched = GaugeMetricFamily("kraftwire_broker_metadata_end_offset", "Offset after the last metadata "
                                    "batch a broker has fetched (it lags the high watermark until it fetches).",
                                    labels=["broker"])
        for broker in cluster.brokers:
            if isinstance(broker.metadata, FollowerView):  # (every broker a Cluster builds)
                fetched.add_metric([str(broker.broker_id)], broker.metadata.end_offset)
        yield fetched
        yield _gauge("kraftwire_metadata_log_failed", "1 once a write of the metadata log failed (the server is "
                     "stopping), else 0.", int(cluster.failure is not None))
        yield from _newest_snapshot(log.directory)


def _newest_snapshot(directory: Path) -> Iterator[Metric]:
    """Where the newest snapshot ends and how old its file is (nothing before the first snapshot)."""
    try:
        snapshot, path = list_snapshots(directory)[-1]
        age = time.time() - path.stat().st_mtime
    except (IndexError, OSError):  # none yet, or retention removed it while we looked
        return
    yield _gauge("kraftwire_metadata_snapshot_end_offset", "Offset the newest metadata snapshot ends at "
                 "(exclusive).", snapshot.end_offset)
    yield _gauge("kraftwire_metadata_snapshot_age_seconds", "Seconds since the newest metadata snapshot was "
                 "written.", age)
