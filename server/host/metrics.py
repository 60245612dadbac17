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

import bisect
import time
from collections.abc import Iterator
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING

from kraftwire.codec.constants import NO_LEADER
from kraftwire.server.broker.metadata_follower import FollowerView
from kraftwire.server.raft.snapshots import list_snapshots
from kraftwire.server.wire.transport import LATENCY_BUCKETS, Listener
from .httpd import HttpServer, Request, Response
from .kafka_metrics import KafkaMetricsCollector, api_name, under_replicated_partition

if TYPE_CHECKING:
    from .cluster import Cluster
    from prometheus_client import CollectorRegistry
    from prometheus_client.core import GaugeMetricFamily, Metric

# prometheus_client (~20 ms of imports) is loaded when a registry is first asked for, by a scrape or
# ``exposition``, not by every cluster's start: the counts are plain numbers until then.



class _RequestCollector:
    """The listeners' own counts (``Listener.request_stats``, plain numbers kept as each answer is
    written), made into metric families only when scraped."""

    def __init__(self, listeners: list[Listener]):
        self._listeners = listeners

    def collect(self) -> Iterator[Metric]:
        from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily

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


class _CommitLatency:
    """The controllers' append-to-commit times as plain bucket counts (each bucket: at most its bound, as
    Prometheus' ``le``), kept from the cluster's start and made into a histogram family when scraped."""

    def __init__(self) -> None:
        self.buckets = [0] * (len(LATENCY_BUCKETS) + 1)  # the last one: above every bound (+Inf)
        self.seconds = 0.0

    def observe(self, seconds: float) -> None:
        self.buckets[bisect.bisect_left(LATENCY_BUCKETS, seconds)] += 1
        self.seconds += seconds

    def collect(self) -> Iterator[Metric]:
        from prometheus_client.core import HistogramMetricFamily

        bounds = [str(b) for b in LATENCY_BUCKETS] + ["+Inf"]
        family = HistogramMetricFamily("kraftwire_metadata_commit_latency_seconds", "Time from appending a "
                                       "write's records to the metadata log to their commit.")
        family.add_metric([], list(zip(bounds, accumulate(self.buckets))), self.seconds)
        yield family


class ClusterMetrics:
    def __init__(self, cluster: Cluster):
        self._commit_latency = _CommitLatency()
        for controller in cluster.controllers:
            controller.commit_observer = self._commit_latency.observe
        self.kafka = KafkaMetricsCollector(cluster)
        self._collectors = (self._commit_latency, _RequestCollector(list(cluster.listeners())),
                            _ClusterStateCollector(cluster), self.kafka)
        self._registry: CollectorRegistry | None = None

    @property
    def registry(self) -> CollectorRegistry:
        """The cluster's own registry, made on first use."""
        if self._registry is None:
            from prometheus_client import CollectorRegistry

            registry = CollectorRegistry(auto_describe=False)
            for collector in self._collectors:
                registry.register(collector)
            self._registry = registry
        return self._registry

    def exposition(self) -> bytes:
        """The registry in Prometheus' text format."""
        from prometheus_client import generate_latest

        return generate_latest(self.registry)

    def http_server(self, host: str, port: int) -> HttpServer:
        from prometheus_client.exposition import CONTENT_TYPE_LATEST

        def scrape(request: Request) -> Response:
            return Response(200, self.exposition(), CONTENT_TYPE_LATEST)

        return HttpServer("metrics", host, port, {("GET", "/metrics"): scrape})


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    from prometheus_client.core import GaugeMetricFamily

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
        from prometheus_client.core import GaugeMetricFamily

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
