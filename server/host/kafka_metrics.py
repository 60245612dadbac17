"""Kafka's metrics under the names the Prometheus JMX exporter gives them with Strimzi's rules (its
``kafka-metrics`` ConfigMap, ``lowercaseOutputName``): ``kafka.<domain><type=T, name=N, k=v><>Value``
becomes ``kafka_<domain>_<t>_<n>{k="v"}``, a ``...PerSec`` meter's ``Count`` becomes
``kafka_<domain>_<t>_<n without PerSec>_total``, and a histogram's percentiles become
``kafka_<domain>_<t>_<n>{quantile="0.99"}`` with its count as ``..._count``. README's "Kafka's metrics"
lists every MBean served and its series.

One ``kraftwire serve`` process hosts several Kafka nodes, where Kafka has one JVM (one exporter, one
Prometheus ``instance``) per node; so every series here carries ``node_id`` (the broker's or the
controller's id), and a query that Kafka's dashboards group ``by (instance)`` groups ``by (node_id)``.
A stopped broker or controller serves nothing (a stopped JVM is not scraped) but a broker's
``BrokerState`` 0 (NOT_RUNNING).

Values are read when scraped from what the wings expose: each broker's replica manager (the
partition state it acted on, its replicas' sizes and directories), its ``BrokerTopicStats`` (produce
and fetch counts) and listener, the replication network's per-broker bytes (simulated and real alike),
and each controller's committed image and log.
"""
from __future__ import annotations

import functools
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any


from kraftwire import codec
from kraftwire.codec import ErrorCode
from kraftwire.codec import records as rec
from kraftwire.codec.constants import LEADER_RECOVERING, NO_LEADER
from kraftwire.codec.message import Message
from kraftwire.server.controller.active_controller import Controller
from kraftwire.server.broker.node import BrokerNode
from kraftwire.server.broker.topic_stats import TopicCounts
from kraftwire.server.metadata import configs
from kraftwire.server.metadata.image import MetadataImage, PartitionState
from kraftwire.server.wire.transport import LATENCY_BUCKETS, Listener

if TYPE_CHECKING:
    from types import ModuleType

    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric


def _core() -> ModuleType:
    """prometheus_client's metric families, imported by the first scrape (its ~20 ms of imports are not
    start-up's: server/host/metrics.py)."""
    from prometheus_client import core

    return core


def _Counter(*args: Any, **kwargs: Any) -> CounterMetricFamily:  # noqa: N802 (stands for the class)
    return _core().CounterMetricFamily(*args, **kwargs)


def _Gauge(*args: Any, **kwargs: Any) -> GaugeMetricFamily:  # noqa: N802
    return _core().GaugeMetricFamily(*args, **kwargs)


def _Metric(*args: Any, **kwargs: Any) -> Metric:  # noqa: N802
    return _core().Metric(*args, **kwargs)

if TYPE_CHECKING:
    from .cluster import Cluster

# Kafka's BrokerState values (org.apache.kafka.metadata.BrokerState)
NOT_RUNNING, RECOVERY, RUNNING, PENDING_CONTROLLED_SHUTDOWN = 0, 2, 3, 6
# the percentiles a JMX histogram exposes, as Strimzi's rules label them
QUANTILES = (("0.50", 0.5), ("0.75", 0.75), ("0.95", 0.95), ("0.98", 0.98), ("0.99", 0.99), ("0.999", 0.999))

_TOPIC_METERS = (  # BrokerTopicMetrics meter -> TopicCounts field
    ("bytesin", "bytes_in", "Bytes produced (BytesInPerSec)."),
    ("bytesout", "bytes_out", "Bytes fetched by consumers (BytesOutPerSec)."),
    ("messagesin", "messages_in", "Records produced (MessagesInPerSec)."),
    ("totalproducerequests", "produce_requests", "Produce partitions that reached the log."),
    ("failedproducerequests", "failed_produce_requests", "Produce partitions the log refused."),
    ("totalfetchrequests", "fetch_requests", "Fetch partitions answered."),
    ("failedfetchrequests", "failed_fetch_requests", "Fetch partitions answered with an error."),
)
_REPLICA_GAUGES = (  # ReplicaManager gauge -> what it counts of the broker's replicas
    ("partitioncount", "Replicas this broker hosts."),
    ("leadercount", "Partitions this broker leads."),
    ("underreplicatedpartitions", "Led partitions whose ISR is smaller than their replicas minus those being added."),
    ("underminisrpartitioncount", "Led partitions whose ISR is smaller than min.insync.replicas."),
    ("atminisrpartitioncount", "Led partitions whose ISR is exactly min.insync.replicas."),
    ("offlinereplicacount", "Replicas in an offline log directory."),
    ("reassigningpartitions", "Led partitions being reassigned."),
)


def api_name(api_key: int) -> str:
    """Kafka's name of an API (``CreateTopics``), or its key for one without a schema here."""
    try:
        return codec.api(api_key)[0].__name__.removesuffix("Request")
    except KeyError:
        return str(api_key)


def under_replicated_partition(state: PartitionState) -> bool:
    """Kafka's under-replicated partition: it has a leader and its ISR is smaller than its replication
    factor, which during a reassignment is the replicas minus those being added (Kafka's
    ``Partition.isUnderReplicated`` and ``kafka-topics --under-replicated-partitions``). So a healthy
    reassignment is not under-replicated while its new replicas copy, and a leaderless partition counts
    as offline instead. The one definition used by /metrics and the live view."""
    replication_factor = len(set(state.replicas) - set(state.adding))
    return state.leader != NO_LEADER and len(state.isr) < replication_factor


def _error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return str(code)


def quantile_ms(buckets: list[int], fraction: float) -> float:
    """A latency percentile in ms from cumulative-free bucket counts (``LATENCY_BUCKETS``, the last
    +Inf), interpolated linearly inside its bucket; the +Inf bucket reads as the last bound."""
    total = sum(buckets)
    if not total:
        return 0.0
    wanted, seen, lower = fraction * total, 0, 0.0
    for count, upper in zip(buckets, [*LATENCY_BUCKETS, LATENCY_BUCKETS[-1]]):
        if count and seen + count >= wanted:
            return 1000 * (lower + (upper - lower) * (wanted - seen) / count)
        seen, lower = seen + count, upper
    return 1000 * LATENCY_BUCKETS[-1]


class ControllerStats:
    """kafka.controller:type=ControllerStats of each controller, counted from the records it commits:
    UncleanLeaderElectionsPerSec, a partition change whose leader is recovering after an unclean
    election (Kafka's rule in its metadata publisher)."""

    def __init__(self) -> None:
        self.unclean_elections: dict[int, int] = {}

    def watch(self, node_id: int, controller: Controller) -> None:
        """Count a (re)built controller's commits, from 0 as a restarted Kafka controller does."""
        self.unclean_elections[node_id] = 0
        controller.add_commit_listener(functools.partial(self._on_commit, node_id))

    def _on_commit(self, node_id: int, committed: list[tuple[int, Message]]) -> None:
        unclean = sum(isinstance(record, rec.PartitionChangeRecord)
                      and record.leader_recovery_state == LEADER_RECOVERING for _, record in committed)
        if unclean:
            self.unclean_elections[node_id] = self.unclean_elections.get(node_id, 0) + unclean


class KafkaMetricsCollector:
    """Every node's Kafka-named series, made when scraped (see the module docstring)."""

    def __init__(self, cluster: Cluster):
        self._cluster = cluster
        self.controller_stats = ControllerStats()
        for node_id, controller in zip(cluster.controller_ids, cluster.controllers):
            self.controller_stats.watch(node_id, controller)

    def collect(self) -> Iterator[Metric]:
        cluster = self._cluster
        running = [b for b in cluster.brokers if b.running]
        yield from _broker_states(cluster.brokers)
        yield from _topic_meters(running)
        yield from _replication_meters(cluster, running)
        yield from _replica_gauges(running)
        yield from _log_gauges(cluster, running)
        yield from _request_metrics([(str(b.broker_id), b.listener) for b in running] + [
            (str(c["id"]), node.listener) for c, node in zip(cluster.list_controllers(), cluster.controller_nodes)
            if c["running"]])
        yield from _controller_gauges(cluster)
        unclean = _Counter("kafka_controller_controllerstats_uncleanleaderelections", "kafka.controller:"
                                      "type=ControllerStats,name=UncleanLeaderElectionsPerSec.", labels=["node_id"])
        counted = self.controller_stats.unclean_elections
        for described in cluster.list_controllers():
            if described["running"]:
                unclean.add_metric([str(described["id"])], counted.get(described["id"], 0))
        yield unclean


def _broker_states(brokers: list[BrokerNode]) -> Iterator[Metric]:
    state = _Gauge("kafka_server_kafkaserver_brokerstate", "kafka.server:type=KafkaServer,"
                              "name=BrokerState: 0 not running, 2 recovery (fenced), 3 running, 6 pending "
                              "controlled shutdown.", labels=["node_id"])
    for broker in brokers:
        registration = broker.image.brokers.get(broker.broker_id)
        if not broker.running:
            value = NOT_RUNNING
        elif registration is None or registration.fenced:
            value = RECOVERY
        else:
            value = PENDING_CONTROLLED_SHUTDOWN if registration.in_controlled_shutdown else RUNNING
        state.add_metric([str(broker.broker_id)], value)
    yield state


def _topic_meters(brokers: list[BrokerNode]) -> Iterator[Metric]:
    """BrokerTopicMetrics: a series per topic (``topic`` label) and one for all topics (no label)."""
    for name, field, documentation in _TOPIC_METERS:
        family = _Counter(f"kafka_server_brokertopicmetrics_{name}", "kafka.server:type="
                                     f"BrokerTopicMetrics: {documentation}", labels=["node_id", "topic"])
        for broker in brokers:
            stats, node = broker.topic_stats, str(broker.broker_id)
            for topic in _hosted_topics(broker):
                counts = stats.topics.get(topic)
                family.add_metric([node, topic], getattr(counts, field) if counts is not None else 0)
        everything = _Counter(f"kafka_server_brokertopicmetrics_{name}", "", labels=["node_id"])
        for broker in brokers:
            all_topics: TopicCounts = broker.topic_stats.all_topics
            everything.add_metric([str(broker.broker_id)], getattr(all_topics, field))
        family.samples.extend(everything.samples)  # the all-topics series join the family, without a topic
        yield family


def _hosted_topics(broker: BrokerNode) -> list[str]:
    """The topics a broker hosts a replica of: their per-topic series exist (from 0, so that rate()
    sees their first counts) while it does, as Kafka's broker drops a topic's meters with its last
    replica."""
    return sorted({replica.topic_name for replica in broker.replica_manager.replicas.values()})


def _replication_meters(cluster: Cluster, brokers: list[BrokerNode]) -> Iterator[Metric]:
    """All-topics BrokerTopicMetrics of replication: the network's copies plus followers' Fetches."""
    names = (("replicationbytesin", "Bytes this broker's follower replicas received."),
             ("replicationbytesout", "Bytes this broker's leader replicas sent to followers."),
             ("reassignmentbytesin", "Bytes received by this broker's replicas being added by a reassignment."),
             ("reassignmentbytesout", "Bytes sent to replicas being added by a reassignment."))
    families = [_Counter(f"kafka_server_brokertopicmetrics_{name}", "kafka.server:type="
                                    f"BrokerTopicMetrics: {text}", labels=["node_id"]) for name, text in names]
    for broker in brokers:
        moved, stats, node = cluster.network.replication_bytes(broker.broker_id), broker.topic_stats, [
            str(broker.broker_id)]
        values = (moved.bytes_in, moved.bytes_out + stats.replication_bytes_out, moved.reassignment_in,
                  moved.reassignment_out + stats.reassignment_bytes_out)
        for family, value in zip(families, values):
            family.add_metric(node, int(value))
    yield from families


def _min_isr(image: MetadataImage, topic: str, cache: dict[str, int]) -> int:
    value = cache.get(topic)
    if value is None:
        found = configs.topic_value(image.topic_configs(topic), image.broker_configs(""), configs.MIN_INSYNC_REPLICAS)
        value = cache[topic] = found if isinstance(found, int) else 1
    return value


def _replica_gauges(brokers: list[BrokerNode]) -> Iterator[Metric]:
    """ReplicaManager's gauges and kafka.cluster Partition's per led partition, from the partition
    state each replica acted on (a broker's own view, as Kafka's)."""
    families = {name: _Gauge(f"kafka_server_replicamanager_{name}", "kafka.server:type=ReplicaManager: "
                                        + text, labels=["node_id"]) for name, text in _REPLICA_GAUGES}
    per_partition = {name: _Gauge(f"kafka_cluster_partition_{name}", "kafka.cluster:type=Partition "
                                             f"(led partitions): {name}", labels=["node_id", "topic", "partition"])
                     for name in ("underreplicated", "underminisr", "atminisr")}
    for broker in brokers:
        counts = dict.fromkeys(families, 0)
        node, image = str(broker.broker_id), broker.image
        min_isrs: dict[str, int] = {}
        for replica in broker.replica_manager.replicas.values():
            counts["partitioncount"] += 1
            if replica.log_dir is not None and not replica.log_dir.online:
                counts["offlinereplicacount"] += 1
                continue
            if replica.leader != broker.broker_id:
                continue
            state, isr = replica.state, len(replica.isr)
            min_isr = min(_min_isr(image, replica.topic_name, min_isrs), len(state.replicas))
            flags = {"underreplicated": under_replicated_partition(state), "underminisr": isr < min_isr,
                     "atminisr": isr == min_isr}
            counts["leadercount"] += 1
            counts["underreplicatedpartitions"] += flags["underreplicated"]
            counts["underminisrpartitioncount"] += flags["underminisr"]
            counts["atminisrpartitioncount"] += flags["atminisr"]
            counts["reassigningpartitions"] += bool(state.adding or state.removing)
            for name, flag in flags.items():
                per_partition[name].add_metric([node, replica.topic_name, str(replica.partition)], int(flag))
        for name, value in counts.items():
            families[name].add_metric([node], value)
    yield from families.values()
    yield from per_partition.values()


def _log_gauges(cluster: Cluster, brokers: list[BrokerNode]) -> Iterator[Metric]:
    """kafka.log Log Size per replica, LogManager's offline directories, the ReplicaFetcherManager's
    MaxLag (messages a follower's log is behind its leader's, for logs with real records here)."""
    size = _Gauge("kafka_log_log_size", "kafka.log:type=Log,name=Size: bytes of a replica's log "
                             "(simulated and real).", labels=["node_id", "topic", "partition"])
    offline = _Gauge("kafka_log_logmanager_offlinelogdirectorycount", "kafka.log:type=LogManager,"
                                "name=OfflineLogDirectoryCount.", labels=["node_id"])
    max_lag = _Gauge("kafka_server_replicafetchermanager_maxlag", "kafka.server:type="
                                "ReplicaFetcherManager,name=MaxLag,clientId=Replica: the largest lag in "
                                "records of a follower replica here.", labels=["node_id", "clientId"])
    hosted = {b.broker_id: b for b in brokers}
    for broker in brokers:
        node, lag = str(broker.broker_id), 0
        for replica in broker.replica_manager.replicas.values():
            if replica.log_dir is not None and not replica.log_dir.online:
                continue
            size.add_metric([node, replica.topic_name, str(replica.partition)], int(replica.log_bytes))
            leader = hosted.get(replica.leader)
            if leader is not None and leader is not broker:
                lag = max(lag, _record_lag(leader, broker, replica.key))
        offline.add_metric([node], sum(not d.online for d in broker.log_manager.directories))
        max_lag.add_metric([node, "Replica"], lag)
    yield size
    yield offline
    yield max_lag


def _record_lag(leader: BrokerNode, follower: BrokerNode, key: tuple[uuid.UUID, int]) -> int:
    """Records the follower's log lacks of the leader's; 0 unless both logs are open (a scrape opens
    no log: simulated replicas have no records, so no lag in records)."""
    led_replica, followed_replica = leader.replica_manager.replicas.get(key), follower.replica_manager.replicas.get(key)
    led = led_replica.partition_log if led_replica is not None else None
    followed = followed_replica.partition_log if followed_replica is not None else None
    if led is None or followed is None or not (led.opened and followed.opened):
        return 0
    return max(led.log.log_end_offset - followed.log.log_end_offset, 0)


def _request_metrics(listeners: list[tuple[str, Listener]]) -> Iterator[Metric]:
    """kafka.network RequestMetrics: RequestsPerSec (request, version), ErrorsPerSec (request, error),
    TotalTimeMs's percentiles and count (request)."""
    requests = _Counter("kafka_network_requestmetrics_requests", "kafka.network:type=RequestMetrics,"
                                   "name=RequestsPerSec.", labels=["node_id", "request", "version"])
    errors = _Counter("kafka_network_requestmetrics_errors", "kafka.network:type=RequestMetrics,"
                                 "name=ErrorsPerSec.", labels=["node_id", "request", "error"])
    latency = _Gauge("kafka_network_requestmetrics_totaltimems", "kafka.network:type=RequestMetrics,"
                                "name=TotalTimeMs percentiles (since start).",
                                labels=["node_id", "request", "quantile"])
    answered = _Metric("kafka_network_requestmetrics_totaltimems_count", "kafka.network:type=RequestMetrics,"
                      "name=TotalTimeMs count.", "counter")
    for node, listener in listeners:
        counts, latencies = listener.request_stats()
        by_version: dict[tuple[str, str], int] = {}
        by_error: dict[tuple[str, str], int] = {}
        for (api_key, version, error_code), count in counts.items():
            name = api_name(api_key)
            by_version[(name, str(version))] = by_version.get((name, str(version)), 0) + count
            by_error[(name, _error_name(error_code))] = by_error.get((name, _error_name(error_code)), 0) + count
        for labels, count in sorted(by_version.items()):
            requests.add_metric([node, *labels], count)
        for labels, count in sorted(by_error.items()):
            errors.add_metric([node, *labels], count)
        for api_key, (buckets, _seconds) in sorted(latencies.items()):
            name = api_name(api_key)
            for label, fraction in QUANTILES:
                latency.add_metric([node, name, label], quantile_ms(buckets, fraction))
            answered.add_sample(answered.name, {"node_id": node, "request": name}, sum(buckets))
    yield from (requests, errors, latency, answered)


def _controller_gauges(cluster: Cluster) -> Iterator[Metric]:
    """kafka.controller KafkaController's gauges of every running controller, from its own committed
    image (every KRaft controller publishes them; ActiveControllerCount is 1 on the active one)."""
    names = (("activecontrollercount", "1 on the active controller."), ("globaltopiccount", "Topics."),
             ("globalpartitioncount", "Partitions."), ("offlinepartitionscount", "Partitions without a leader."),
             ("preferredreplicaimbalancecount", "Partitions not led by their first replica."),
             ("activebrokercount", "Registered, unfenced brokers."), ("fencedbrokercount", "Fenced brokers."),
             ("lastappliedrecordoffset", "Offset of the last record in the committed image."),
             ("lastcommittedrecordoffset", "Offset of the last committed record."))
    families = {name: _Gauge(f"kafka_controller_kafkacontroller_{name}", "kafka.controller:type="
                                        f"KafkaController: {text}", labels=["node_id"]) for name, text in names}
    for described, controller, log in zip(cluster.list_controllers(), cluster.controllers, cluster.logs):
        if not described["running"]:
            continue
        image = controller.committed
        partitions = offline = imbalanced = 0
        for _topic, _index, state in image.partitions():
            partitions += 1
            offline += state.leader == NO_LEADER
            imbalanced += bool(state.replicas) and state.leader != state.replicas[0]
        fenced = sum(b.fenced for b in image.brokers.values())
        values = {"activecontrollercount": int(bool(described["active"])), "globaltopiccount": len(image.topics),
                  "globalpartitioncount": partitions, "offlinepartitionscount": offline,
                  "preferredreplicaimbalancecount": imbalanced, "activebrokercount": len(image.brokers) - fenced,
                  "fencedbrokercount": fenced, "lastappliedrecordoffset": image.offset,
                  "lastcommittedrecordoffset": log.high_watermark - 1}
        for name, value in values.items():
            families[name].add_metric([str(described["id"])], value)
    yield from families.values()
