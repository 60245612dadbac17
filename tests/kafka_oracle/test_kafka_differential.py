"""Apache Kafka as the oracle: one scenario of raw requests, sent to a real Apache Kafka cluster and to
kraftwire (each 3 brokers, 2 log directories each), every response compared field by field.

Both sides are sent the same bytes by kraftwire's own codec (``KafkaClient``), at the version the
scenario names. Before comparing, each response is normalised (``Normaliser``) so that what differs
between any two clusters does not count: cluster ids, topic ids, directory ids and paths become names
(``topic-id:<topic>``, ``dir:<broker>/<k>``), broker ports become broker ids, throttle times and
timestamps and metadata-log offsets become fixed values, the id a KRaft broker reports as "the
controller" (a random live broker, in Kafka) becomes ``"a broker"``, and lists that clients read as sets
or by key lose their order (``Normaliser`` says which). Every difference left must be in
``DELIBERATE`` below, each listed with its reason in README.md's differences section, and every listed
one must still happen: the test asserts the exact set.
"""
from __future__ import annotations

import asyncio
import base64
import re
import uuid
from pathlib import Path

import pytest

from apache_kafka import KafkaCluster, kafka_version
from kraftwire.codec.messages import (
    AlterConfigsRequest, AlterPartitionReassignmentsRequest, AlterReplicaLogDirsRequest, ApiVersionsRequest,
    CreatePartitionsRequest, CreateTopicsRequest, DeleteTopicsRequest, DescribeClusterRequest,
    DescribeConfigsRequest, DescribeLogDirsRequest, DescribeQuorumRequest, ElectLeadersRequest,
    IncrementalAlterConfigsRequest, ListPartitionReassignmentsRequest, MetadataRequest, UpdateFeaturesRequest)
from kraftwire.server.host.cluster import CONTROLLER_NODE_ID, BackgroundCluster
from kraftwire.server.wire.client import KafkaClient

TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8
CONTROLLER = 0  # the broker number by which a step is sent to the controller's listener
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
PREFERRED, UNCLEAN = 0, 1


# --- the two clusters, seen the same way --------------------------------------------------------------

class Target:
    """One cluster under test: its brokers' ports, directories and ids, and a client per broker."""

    def __init__(self, name: str, ports: list[int], controller_port: int,
                 log_dirs: dict[int, list[tuple[str, uuid.UUID]]], cluster_id: str):
        self.name, self.ports, self.controller_port = name, ports, controller_port
        self.log_dirs, self.cluster_id = log_dirs, cluster_id
        self.clients: dict[int, KafkaClient] = {}
        self.normaliser = Normaliser(self)

    def client(self, broker: int) -> KafkaClient:
        """A client of broker ``broker``, or of the controller's listener for ``CONTROLLER``."""
        if broker not in self.clients:
            port = self.controller_port if broker == CONTROLLER else self.ports[broker - 1]
            self.clients[broker] = KafkaClient("127.0.0.1", port, "differential")
        return self.clients[broker]

    async def send(self, request, version: int, broker: int = 1):
        return await self.client(broker).send(request, version)

    async def close(self) -> None:
        for client in self.clients.values():
            await client.close()


def kafka_target(cluster: KafkaCluster) -> Target:
    log_dirs = {}
    for broker in range(1, cluster.count + 1):
        log_dirs[broker] = []
        for path in cluster.log_dirs(broker):
            meta = dict(line.split("=", 1) for line in (path / "meta.properties").read_text().splitlines()
                        if "=" in line and not line.startswith("#"))
            log_dirs[broker].append((str(path), _kafka_uuid(meta["directory.id"])))
    return Target("kafka", cluster.ports, cluster.controller_port, log_dirs, cluster.cluster_id)


def kraftwire_target(bg: BackgroundCluster) -> Target:
    def read():
        cluster = bg.cluster
        return ([b.port for b in cluster.brokers], cluster.controller_node.port,
                {b.broker_id: [(d.path, d.directory_id) for d in b.log_manager.directories] for b in cluster.brokers},
                cluster.controller.cluster_id)
    return Target("kraftwire", *bg.call(read))


def _kafka_uuid(text: str) -> uuid.UUID:
    """A directory id as meta.properties writes it (URL-safe base64, no padding)."""
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=="))


class Normaliser:
    """Turns a response into plain data in which two equal clusters look the same.

    Ids and paths become names; ports become the broker they belong to; throttle times, timestamps and
    metadata-log offsets (each cluster wrote a different number of records) become fixed values; lists
    that clients read as sets or look up by key lose their order: entries keyed by ``name`` become a
    dict, other entries are sorted by their key, and an ISR is sorted.
    """

    def __init__(self, target: Target):
        self.target = target
        self.names: dict[str, str] = {target.cluster_id: "cluster-id"}
        for broker, dirs in target.log_dirs.items():
            for k, (path, directory_id) in enumerate(dirs):
                self.names[str(path)] = self.names[str(directory_id)] = f"dir:{broker}/{k}"
        self.ports = {port: f"port-of:{broker}" for broker, port in enumerate(target.ports, 1)}
        self.ports[target.controller_port] = "port-of:controller"
        self.brokers = set(range(1, len(target.ports) + 1))

    def __call__(self, value, key: str = ""):
        if isinstance(value, dict):
            if value.get("name") and value.get("topic_id") not in (None, str(uuid.UUID(int=0))):
                self.names[value["topic_id"]] = f"topic-id:{value['name']}"
            return {k: self(v, k) for k, v in value.items() if k != "unknown_tagged_fields" or v}
        if isinstance(value, list):
            items = [self(v, key) for v in value]
            names = [i.get("name") if isinstance(i, dict) else None for i in items]
            if items and None not in names and len(set(names)) == len(names):
                return dict(zip(names, items))
            for sort_key in ("topic_name", "node_id", "replica_id", "partition_index", "log_dir"):
                if items and all(isinstance(i, dict) and sort_key in i for i in items):
                    return sorted(items, key=lambda i: str(i[sort_key]))
            return sorted(items) if key == "isr_nodes" else items
        if key == "throttle_time_ms" or (key.endswith("timestamp") and isinstance(value, int) and value > 0):
            return 0
        if key in ("high_watermark", "log_end_offset") and isinstance(value, int) and value > 0:
            return "offset"
        if key == "port" and value in self.ports:
            return self.ports[value]
        if key == "controller_id" and value in self.brokers:
            return "a broker"
        if isinstance(value, str) and value in self.names:
            return self.names[value]
        return value


def differences(kafka, kraftwire, path: str) -> list[tuple[str, object, object]]:
    """Every leaf where the two differ: ``(path, kafka's value, kraftwire's value)``."""
    if isinstance(kafka, dict) and isinstance(kraftwire, dict):
        found = []
        for key in sorted(set(kafka) | set(kraftwire)):
            found += differences(kafka.get(key, ABSENT), kraftwire.get(key, ABSENT), f"{path}.{key}")
        return found
    if isinstance(kafka, list) and isinstance(kraftwire, list) and len(kafka) == len(kraftwire):
        found = []
        for i, (a, b) in enumerate(zip(kafka, kraftwire)):
            found += differences(a, b, f"{path}[{i}]")
        return found
    return [] if kafka == kraftwire else [(path, kafka, kraftwire)]


# --- the scenario ----------------------------------------------------------------------------------

def creatable(name, assignment=None, partitions=-1, replication=-1, configs=()):
    return CreateTopicsRequest.CreatableTopic(
        name=name, num_partitions=partitions, replication_factor=replication,
        assignments=[CreateTopicsRequest.CreatableReplicaAssignment(partition_index=i, broker_ids=b)
                     for i, b in enumerate(assignment or [])],
        configs=[CreateTopicsRequest.CreatableTopicConfig(name=k, value=v) for k, v in configs])


def reassign(topic, moves, allow_rf_change=True):
    return AlterPartitionReassignmentsRequest(timeout_ms=30000, allow_replication_factor_change=allow_rf_change, topics=[
        AlterPartitionReassignmentsRequest.ReassignableTopic(name=topic, partitions=[
            AlterPartitionReassignmentsRequest.ReassignablePartition(partition_index=p, replicas=r)
            for p, r in moves.items()])])


def incremental(resource_type, name, *ops, validate_only=False):
    return IncrementalAlterConfigsRequest(validate_only=validate_only, resources=[
        IncrementalAlterConfigsRequest.AlterConfigsResource(resource_type=resource_type, resource_name=name, configs=[
            IncrementalAlterConfigsRequest.AlterableConfig(name=k, config_operation=op, value=v) for k, op, v in ops])])


def describe_configs(resource_type, name, keys=None):
    return DescribeConfigsRequest(include_synonyms=True, include_documentation=False, resources=[
        DescribeConfigsRequest.DescribeConfigsResource(resource_type=resource_type, resource_name=name,
                                                       configuration_keys=keys)])


def metadata(*topics, version: int = 12):
    """Metadata of ``topics``, asking not to create them where the version can say so (v4+)."""
    return MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=t) for t in topics],
                           allow_auto_topic_creation=version < 4)


class Run:
    """The scenario against one target: every answer, normalised, by step name."""

    def __init__(self, target: Target):
        self.target, self.answers = target, {}

    async def step(self, name: str, request, version: int, broker: int = 1):
        response = await self.target.send(request, version, broker)
        assert name not in self.answers, name
        self.answers[name] = self.target.normaliser(response.to_dict())
        return response

    async def until(self, what: str, request, version: int, done, broker: int = 1, timeout: float = 60):
        """Resend ``request`` until ``done(response)``: waits for a state, not for a time."""
        deadline = asyncio.get_running_loop().time() + timeout
        while not done(response := await self.target.send(request, version, broker)):
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"{self.target.name}: {what} not reached: {response}")
            await asyncio.sleep(0.1)


def move_replica(path, topic, partition):
    return AlterReplicaLogDirsRequest(dirs=[AlterReplicaLogDirsRequest.AlterReplicaLogDir(path=path, topics=[
        AlterReplicaLogDirsRequest.AlterReplicaLogDirTopic(name=topic, partitions=[partition])])])


def describe_log_dirs(topic, partition):
    return DescribeLogDirsRequest(topics=[DescribeLogDirsRequest.DescribableLogDirTopic(topic=topic,
                                                                                        partitions=[partition])])


def only_in(path):
    """The broker's replica is in ``path``, with no future replica left anywhere."""
    def done(response):
        holding = [(r.log_dir, p.is_future_key) for r in response.results for t in r.topics for p in t.partitions]
        return holding == [(str(path), False)]
    return done


def led_everywhere(topics):
    def done(response):
        shown = {t.name: t for t in response.topics}
        return all(name in shown and shown[name].error_code == 0 and len(shown[name].partitions) == count
                   and all(p.leader_id >= 0 for p in shown[name].partitions) for name, count in topics.items())
    return done


def no_reassignments(response):
    return response.error_code == 0 and not response.topics


async def scenario(run: Run) -> None:
    target = run.target
    await run.step("api_versions", ApiVersionsRequest(client_software_name="differential",
                                                                 client_software_version="1"), 3)

    await run.step("create_topics", CreateTopicsRequest(timeout_ms=30000, topics=[
        creatable("diff-a", [[1, 2], [2, 3]], configs=[("retention.ms", "7200000")]),
        creatable("diff-b", [[3, 1, 2]]),
        creatable("diff-gone", [[1]]),
    ]), 7)
    for broker in (1, 2, 3):
        await run.until("topics led", metadata("diff-a", "diff-b", "diff-gone"), 12,
                        led_everywhere({"diff-a": 2, "diff-b": 1, "diff-gone": 1}), broker=broker)
    await run.step("create_topics_errors", CreateTopicsRequest(timeout_ms=30000, topics=[
        creatable("diff-a", partitions=1, replication=1),
        creatable("bad/name", partitions=1, replication=1),
        creatable("diff-rf", partitions=1, replication=4),
        creatable("diff-zero", partitions=0, replication=1),
        creatable("diff-both", [[1]], partitions=1, replication=1),
        creatable("diff-dup", [[1, 1]]),
        creatable("diff-nobroker", [[1, 9]]),
        creatable("diff-gaps", [[1], [2, 3]]),
        creatable("diff-badvalue", partitions=1, replication=1, configs=[("retention.ms", "soon")]),
        creatable("diff-unknown", partitions=1, replication=1, configs=[("no.such.config", "1")]),
    ]), 7)
    await run.step("create_topics_validate_only", CreateTopicsRequest(timeout_ms=30000, validate_only=True, topics=[
        creatable("diff-never", [[1, 2]])]), 7)
    await run.step("create_topics_v4", CreateTopicsRequest(timeout_ms=30000, topics=[
        creatable("diff-a", partitions=1, replication=1)]), 4)

    for version in range(0, 14):
        await run.step(f"metadata_v{version}", metadata("diff-a", "diff-b", version=version), version)
    await run.step("metadata_unknown", metadata("diff-nothere"), 12)
    for version in (0, 1):
        await run.step(f"describe_cluster_v{version}", DescribeClusterRequest(), version)
    # The other endpoint type, and one that is neither, on each kind of listener (v0 cannot name one).
    for endpoint_type in (1, 2, 3):
        for node in (1, CONTROLLER):
            await run.step(f"describe_cluster_endpoint_{endpoint_type}_on_{node}",
                           DescribeClusterRequest(endpoint_type=endpoint_type), 1, broker=node)
    await run.step("describe_cluster_v0_on_controller", DescribeClusterRequest(), 0, broker=CONTROLLER)

    await run.step("create_partitions", CreatePartitionsRequest(timeout_ms=30000, topics=[
        CreatePartitionsRequest.CreatePartitionsTopic(name="diff-a", count=3, assignments=[
            CreatePartitionsRequest.CreatePartitionsAssignment(broker_ids=[3, 1])])]), 3)
    await run.step("create_partitions_errors", CreatePartitionsRequest(timeout_ms=30000, topics=[
        CreatePartitionsRequest.CreatePartitionsTopic(name="diff-b", count=1),
        CreatePartitionsRequest.CreatePartitionsTopic(name="diff-nothere", count=2),
        CreatePartitionsRequest.CreatePartitionsTopic(name="diff-gone", count=3, assignments=[
            CreatePartitionsRequest.CreatePartitionsAssignment(broker_ids=[2])]),
    ]), 3)
    await run.until("partitions led", metadata("diff-a"), 12, led_everywhere({"diff-a": 3}))
    await deadlines_passed(run)
    await features_updated(run)
    await loggers_described_and_altered(run)

    await run.step("describe_configs_topic", describe_configs(TOPIC, "diff-a"), 4)
    await run.step("describe_configs_topic_keys", describe_configs(TOPIC, "diff-a", ["retention.ms", "no.such"]), 4)
    await run.step("describe_configs_unknown_topic", describe_configs(TOPIC, "diff-nothere"), 4)
    await run.step("describe_configs_broker_keys", describe_configs(BROKER, "1", [
        "leader.replication.throttled.rate", "follower.replication.throttled.rate",
        "replica.alter.log.dirs.io.max.bytes.per.second", "min.insync.replicas", "default.replication.factor",
        "num.partitions", "log.retention.hours", "broker.id", "node.id"]), 4)
    await broker_catalogue(run)
    await run.step("incremental_alter_topic", incremental(
        TOPIC, "diff-a", ("retention.ms", DELETE, None), ("cleanup.policy", APPEND, "compact"),
        ("min.insync.replicas", SET, "2"), ("leader.replication.throttled.replicas", SET, "0:1,0:2")), 1)
    await run.step("incremental_alter_topic_subtract", incremental(
        TOPIC, "diff-a", ("cleanup.policy", SUBTRACT, "delete")), 1)
    await run.step("incremental_alter_errors", incremental(
        TOPIC, "diff-a", ("retention.ms", SET, "soon")), 1)
    await run.step("incremental_alter_unknown_key", incremental(
        TOPIC, "diff-a", ("no.such.config", SET, "1")), 1)
    await run.step("incremental_alter_append_non_list", incremental(
        TOPIC, "diff-a", ("retention.ms", APPEND, "1")), 1)
    await run.step("incremental_alter_unknown_topic", incremental(
        TOPIC, "diff-nothere", ("retention.ms", SET, "1")), 1)
    await run.step("incremental_alter_broker", incremental(
        BROKER, "1", ("leader.replication.throttled.rate", SET, "1000000"),
        ("follower.replication.throttled.rate", SET, "2000000")), 1)
    await run.step("incremental_alter_broker_bad", incremental(
        BROKER, "1", ("leader.replication.throttled.rate", SET, "fast")), 1)
    # Kafka's controller leaves broker config values to the receiving broker: sent to it directly, any passes.
    await run.step("incremental_alter_broker_bad_on_controller", incremental(
        BROKER, "1", ("leader.replication.throttled.rate", SET, "-5"), validate_only=True), 1, broker=CONTROLLER)
    await run.step("incremental_alter_broker_read_only_on_controller", incremental(
        BROKER, "1", ("log.retention.hours", SET, "soon"), validate_only=True), 1, broker=CONTROLLER)
    await run.step("alter_configs_topic", AlterConfigsRequest(resources=[
        AlterConfigsRequest.AlterConfigsResource(resource_type=TOPIC, resource_name="diff-b", configs=[
            AlterConfigsRequest.AlterableConfig(name="retention.bytes", value="1048576")])]), 2)
    # A Kafka broker answers DescribeConfigs from its own copy of the metadata, which may lag the write.
    await run.until("configs seen", describe_configs(TOPIC, "diff-b", ["retention.bytes"]), 4,
                    lambda r: r.results[0].configs[0].value == "1048576")
    await run.until("configs seen", describe_configs(TOPIC, "diff-a", ["min.insync.replicas"]), 4,
                    lambda r: r.results[0].configs[0].value == "2")
    await run.step("describe_configs_topic_after", describe_configs(TOPIC, "diff-a", [
        "retention.ms", "cleanup.policy", "min.insync.replicas", "leader.replication.throttled.replicas"]), 4)
    await run.step("describe_configs_topic_b_after", describe_configs(TOPIC, "diff-b", ["retention.bytes"]), 4)
    await run.until("broker configs seen", describe_configs(BROKER, "1", ["follower.replication.throttled.rate"]), 4,
                    lambda r: r.results[0].configs[0].value == "2000000")
    await run.step("describe_configs_broker_after", describe_configs(BROKER, "1", [
        "leader.replication.throttled.rate", "follower.replication.throttled.rate"]), 4)
    await topic_configs_of_the_answering_broker(run)
    await run.step("incremental_alter_broker_clear", incremental(
        BROKER, "1", ("leader.replication.throttled.rate", DELETE, None),
        ("follower.replication.throttled.rate", DELETE, None)), 1)

    for version in (0, 1):
        # v1 may refuse a change of replication factor (KIP-860); v0 always allows it, so it is not asked.
        kip_860 = [AlterPartitionReassignmentsRequest.ReassignablePartition(partition_index=2, replicas=[1])]
        await run.step(f"reassign_errors_v{version}", AlterPartitionReassignmentsRequest(
            timeout_ms=30000, allow_replication_factor_change=version == 0, topics=[
                AlterPartitionReassignmentsRequest.ReassignableTopic(name="diff-nothere", partitions=[
                    AlterPartitionReassignmentsRequest.ReassignablePartition(partition_index=0, replicas=[1])]),
                AlterPartitionReassignmentsRequest.ReassignableTopic(name="diff-b", partitions=[
                    AlterPartitionReassignmentsRequest.ReassignablePartition(partition_index=5, replicas=[1, 2, 3]),
                    AlterPartitionReassignmentsRequest.ReassignablePartition(partition_index=0, replicas=[]),
                ]),
                AlterPartitionReassignmentsRequest.ReassignableTopic(name="diff-a", partitions=[
                    AlterPartitionReassignmentsRequest.ReassignablePartition(partition_index=0, replicas=[1, 1]),
                    AlterPartitionReassignmentsRequest.ReassignablePartition(partition_index=1, replicas=[2, 9]),
                ] + (kip_860 if version else [])),
            ]), version)
    await run.step("cancel_nothing", reassign("diff-a", {0: None}), 1)
    await run.step("list_reassignments_none", ListPartitionReassignmentsRequest(timeout_ms=30000), 0)
    await run.step("reassign", reassign("diff-a", {0: [2, 3], 1: [3, 1]}), 1)
    await run.until("reassignment done", ListPartitionReassignmentsRequest(timeout_ms=30000), 0, no_reassignments)
    await run.step("reassign_second", reassign("diff-a", {0: [3, 2]}), 1)
    await run.until("second reassignment done", ListPartitionReassignmentsRequest(timeout_ms=30000), 0,
                    no_reassignments)
    await run.until("replicas after the moves", metadata("diff-a"), 12, lambda r: [
        (p.partition_index, p.replica_nodes, set(p.isr_nodes)) for p in r.topics[0].partitions] == [
        (0, (3, 2), {3, 2}), (1, (3, 1), {3, 1}), (2, (3, 1), {3, 1})])
    await run.step("metadata_after_moves", metadata("diff-a"), 12)

    await run.step("elect_preferred", ElectLeadersRequest(election_type=PREFERRED, timeout_ms=30000, topic_partitions=[
        ElectLeadersRequest.TopicPartitions(topic="diff-a", partitions=[0, 1, 7]),
        ElectLeadersRequest.TopicPartitions(topic="diff-nothere", partitions=[0])]), 2)
    await run.step("elect_unclean", ElectLeadersRequest(election_type=UNCLEAN, timeout_ms=30000, topic_partitions=[
        ElectLeadersRequest.TopicPartitions(topic="diff-b", partitions=[0])]), 2)

    # Which directory a new replica lands in is each cluster's own choice: first put diff-b's replicas in
    # every broker's first directory, then compare.
    for broker in (1, 2, 3):
        await run.step(f"place_in_first_dir_{broker}", move_replica(target.log_dirs[broker][0][0], "diff-b", 0), 2,
                       broker=broker)
    for broker in (1, 2, 3):
        await run.until("placed", describe_log_dirs("diff-b", 0), 4, only_in(target.log_dirs[broker][0][0]),
                        broker=broker)
        await run.step(f"describe_log_dirs_{broker}", describe_log_dirs("diff-b", 0), 4, broker=broker)
    second_dir = target.log_dirs[1][1][0]
    await run.step("alter_replica_log_dirs", AlterReplicaLogDirsRequest(dirs=[
        AlterReplicaLogDirsRequest.AlterReplicaLogDir(path=second_dir, topics=[
            AlterReplicaLogDirsRequest.AlterReplicaLogDirTopic(name="diff-b", partitions=[0])]),
        AlterReplicaLogDirsRequest.AlterReplicaLogDir(path="/no/such/dir", topics=[
            AlterReplicaLogDirsRequest.AlterReplicaLogDirTopic(name="diff-a", partitions=[1])]),
        AlterReplicaLogDirsRequest.AlterReplicaLogDir(path=second_dir, topics=[
            AlterReplicaLogDirsRequest.AlterReplicaLogDirTopic(name="diff-nothere", partitions=[0])]),
    ]), 2, broker=1)
    await run.until("moved", describe_log_dirs("diff-b", 0), 4, only_in(second_dir), broker=1)
    await run.step("describe_log_dirs_after_move", describe_log_dirs("diff-b", 0), 4, broker=1)

    await run.step("describe_quorum", DescribeQuorumRequest(topics=[DescribeQuorumRequest.TopicData(
        topic_name="__cluster_metadata", partitions=[DescribeQuorumRequest.PartitionData(partition_index=0)])]), 2)

    await run.step("delete_topics", DeleteTopicsRequest(timeout_ms=30000, topic_names=["diff-gone", "diff-nothere"]), 5)
    await run.step("delete_topics_by_id", DeleteTopicsRequest(timeout_ms=30000, topics=[
        DeleteTopicsRequest.DeleteTopicState(topic_id=uuid.UUID(int=12345))]), 6)
    await run.until("deleted", metadata("diff-gone"), 12, lambda r: r.topics[0].error_code == 3)


# Broker configs kraftwire always lists (README: "always lists the throttle rates of a broker") or has alone.
ALWAYS_LISTED = ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
                 "replica.alter.log.dirs.io.max.bytes.per.second")


async def broker_catalogue(run: Run) -> None:
    """Every broker config a broker lists, with its read-only and sensitive flags and type (the values are
    each cluster's own start-up settings, so they are not compared here)."""
    response = await run.target.send(describe_configs(BROKER, "1"), 4)
    run.answers["describe_configs_broker_catalogue"] = {
        c.name: (c.read_only, c.is_sensitive, c.config_type) for c in response.results[0].configs
        if not c.name.startswith("kraftwire.") and c.name not in ALWAYS_LISTED}


async def topic_configs_of_the_answering_broker(run: Run) -> None:
    """A topic config the topic does not set comes from the answering broker's own dynamic config first
    (DYNAMIC_BROKER_CONFIG), then the cluster default: broker 1 and broker 2 answer differently."""
    await run.step("broker_retention_set", incremental(BROKER, "1", ("log.retention.ms", SET, "7200000")), 1)
    await run.step("cluster_retention_set", incremental(BROKER, "", ("log.retention.ms", SET, "3600000")), 1)
    def seen(response, expected: str) -> bool:  # its own value, and the cluster default among its synonyms
        config = response.results[0].configs[0]
        return config.value == expected and any(
            s.name == "log.retention.ms" and s.value == "3600000" for s in config.synonyms or ())

    for broker, expected in ((1, "7200000"), (2, "3600000")):
        await run.until("retention seen", describe_configs(TOPIC, "diff-b", ["retention.ms"]), 4,
                        lambda r, expected=expected: seen(r, expected), broker=broker)
        await run.step(f"describe_topic_retention_on_{broker}", describe_configs(TOPIC, "diff-b", ["retention.ms"]),
                       4, broker=broker)
    await run.step("retentions_cleared", incremental(BROKER, "1", ("log.retention.ms", DELETE, None)), 1)
    await run.step("cluster_retention_cleared", incremental(BROKER, "", ("log.retention.ms", DELETE, None)), 1)
    for broker in (1, 2):
        await run.until("retention back", describe_configs(TOPIC, "diff-b", ["retention.ms"]), 4,
                        lambda r: r.results[0].configs[0].value == "604800000", broker=broker)


async def deadlines_passed(run: Run) -> None:
    """TimeoutMs 0 or -1 has passed before Kafka's controller would act: REQUEST_TIMED_OUT for the whole
    request, through a broker or on the controller, and nothing changed (the metadata step after)."""
    for timeout in (0, -1):
        for node in (1, CONTROLLER):
            at = f"{timeout}_on_{node}"
            await run.step(f"create_topics_timeout_{at}", CreateTopicsRequest(timeout_ms=timeout, topics=[
                creatable("diff-late", partitions=1, replication=1), creatable("diff-late", partitions=1)]), 7,
                broker=node)
            await run.step(f"delete_topics_timeout_{at}", DeleteTopicsRequest(timeout_ms=timeout, topic_names=[
                "diff-b", "diff-nothere"]), 5, broker=node)
            await run.step(f"delete_topics_by_id_timeout_{at}", DeleteTopicsRequest(timeout_ms=timeout, topics=[
                DeleteTopicsRequest.DeleteTopicState(topic_id=uuid.UUID(int=12345))]), 6, broker=node)
            await run.step(f"create_partitions_timeout_{at}", CreatePartitionsRequest(timeout_ms=timeout, topics=[
                CreatePartitionsRequest.CreatePartitionsTopic(name="diff-a", count=5)]), 3, broker=node)
            await run.step(f"elect_timeout_{at}", ElectLeadersRequest(election_type=PREFERRED, timeout_ms=timeout,
                topic_partitions=[ElectLeadersRequest.TopicPartitions(topic="diff-a", partitions=[0, 1])]), 2,
                broker=node)
            await run.step(f"elect_nothing_timeout_{at}", ElectLeadersRequest(
                election_type=PREFERRED, timeout_ms=timeout, topic_partitions=[]), 2, broker=node)
            await run.step(f"reassign_timeout_{at}", reassign("diff-a", {0: [2, 1]}).replace(timeout_ms=timeout), 1,
                           broker=node)
    await run.step("metadata_after_timeouts", metadata("diff-late", "diff-a", "diff-b"), 12)
    await run.step("list_reassignments_after_timeouts", ListPartitionReassignmentsRequest(timeout_ms=30000), 0)


def feature_updates(*updates, validate_only=True, version=1):
    """UpdateFeatures of ``(feature, level, upgrade type)``; at v0 a downgrade type becomes AllowDowngrade."""
    Update = UpdateFeaturesRequest.FeatureUpdateKey
    return UpdateFeaturesRequest(timeout_ms=30000, validate_only=validate_only and version > 0, feature_updates=[
        Update(feature=f, max_version_level=level, upgrade_type=kind if version else 1,
               allow_downgrade=kind != 1 and version == 0) for f, level, kind in updates])


MV, ELR, KRAFT = "metadata.version", "eligible.leader.replicas.version", "kraft.version"
UPGRADE, SAFE, UNSAFE = 1, 2, 3
FEATURE_CASES = {
    "same": [(MV, 30, UPGRADE)], "newer": [(MV, 31, UPGRADE)], "far": [(MV, 99, SAFE)],
    "down_as_upgrade": [(MV, 29, UPGRADE)], "down_safe": [(MV, 29, SAFE)], "down_unsafe": [(MV, 21, UNSAFE)],
    "below_min": [(MV, 5, SAFE)], "negative": [(MV, -1, SAFE)], "bad_type": [(MV, 30, 7)],
    "up_as_down": [(MV, 31, SAFE)], "unknown": [("no.such.feature", 1, UPGRADE)],
    "unknown_off": [("no.such.feature", 0, SAFE)], "elr_off": [(ELR, 0, SAFE)], "elr_2": [(ELR, 2, UPGRADE)],
    "kraft_up": [(KRAFT, 1, UPGRADE)], "kraft_same": [(KRAFT, 0, SAFE)],
    "second_refused": [(ELR, 1, UPGRADE), ("no.such", 1, UPGRADE)], "nothing": [],
}


async def features_updated(run: Run) -> None:
    """UpdateFeatures (dry runs) with Kafka's checks, at each version, through a broker and on the controller."""
    for name, updates in FEATURE_CASES.items():
        await run.step(f"update_features_{name}", feature_updates(*updates), 1)
    for name in ("same", "down_safe", "unknown", "elr_off"):
        await run.step(f"update_features_v2_{name}", feature_updates(*FEATURE_CASES[name], version=2), 2)
        await run.step(f"update_features_{name}_on_controller", feature_updates(*FEATURE_CASES[name]), 1,
                       broker=CONTROLLER)
    for name in ("newer", "down_safe", "unknown", "negative", "nothing"):  # v0 cannot dry-run: only refusals
        await run.step(f"update_features_v0_{name}", feature_updates(*FEATURE_CASES[name], version=0), 0)


async def loggers_described_and_altered(run: Run) -> None:
    """BROKER_LOGGER resources: each node answers for its own loggers, refusals in Kafka's words (the loggers
    themselves differ: Kafka's log4j ones, kraftwire's Python ones, so only a missing one is described)."""
    for name in ("1", "", "2", "x"):
        await run.step(f"describe_loggers_{name or 'empty'}", describe_configs(BROKER_LOGGER, name, ["no.such"]), 4)
    await run.step("describe_loggers_on_controller", describe_configs(BROKER_LOGGER, str(CONTROLLER_NODE_ID),
                                                                      ["no.such"]), 4, broker=CONTROLLER)
    for step, name, ops in (("unknown", "1", [("kafka.controller", SET, "DEBUG")]),
                            ("bad_level", "1", [("root", SET, "LOUD")]),
                            ("delete_root", "1", [("root", DELETE, None)]),
                            ("append", "1", [("root", APPEND, "DEBUG")]),
                            ("dry_run", "1", [("root", SET, "INFO")]),
                            ("other_node", "2", [("root", SET, "INFO")]),
                            ("not_a_node", "x", [("root", SET, "INFO")])):
        await run.step(f"alter_loggers_{step}", incremental(BROKER_LOGGER, name, *ops, validate_only=True), 1)
    for step, ops in (("unknown", [("kafka.controller", SET, "DEBUG")]), ("dry_run", [("root", SET, "WARN")])):
        await run.step(f"alter_loggers_{step}_on_controller", incremental(
            BROKER_LOGGER, str(CONTROLLER_NODE_ID), *ops, validate_only=True), 1, broker=CONTROLLER)
    await run.step("alter_legacy_loggers", AlterConfigsRequest(resources=[AlterConfigsRequest.AlterConfigsResource(
        resource_type=BROKER_LOGGER, resource_name="1", configs=[
            AlterConfigsRequest.AlterableConfig(name="root", value="INFO")])]), 2)


def run_scenario(target: Target) -> dict:
    async def main():
        run = Run(target)
        try:
            await scenario(run)
        finally:
            await target.close()
        return run.answers
    return asyncio.run(main())


# --- the differences kraftwire keeps on purpose (README.md, "Where kraftwire deliberately differs") ------

ABSENT = "<absent>"


class Deliberate:
    """One listed difference: the paths it covers (a regular expression over ``step.path``), what each
    side answers there, and the README text that gives the reason."""

    def __init__(self, paths: str, kafka, kraftwire, readme: str):
        self.paths, self.kafka, self.kraftwire, self.readme = re.compile(paths), kafka, kraftwire, readme

    def covers(self, path: str, theirs, mine) -> bool:
        return bool(self.paths.search(path)) and self.kafka(theirs) and self.kraftwire(mine)


def anything(_value) -> bool:
    return True


def absent(value) -> bool:
    return value == ABSENT


DELIBERATE = [
    Deliberate(r"\.configs\.kraftwire\.partition\.sizes?\.bytes$", absent, anything,
               "kraftwire.partition.size.bytes"),
    Deliberate(r"\.configs\.kraftwire\.partition\.ingress\.(bytes\.per\.sec|rates)$", absent, anything,
               "kraftwire.partition.ingress.*"),
    Deliberate(r"^describe_configs_broker_keys\..*\.configs\.((leader|follower)\.replication\.throttled\.rate|"
               r"replica\.alter\.log\.dirs\.io\.max\.bytes\.per\.second)$", absent, anything,
               "always lists the throttle rates of a broker"),
    Deliberate(r"^describe_log_dirs.*\.(partition_size|total_bytes|usable_bytes)$", anything, anything,
               "DescribeLogDirs reports simulated sizes"),
    Deliberate(r"^describe_quorum\..*\.observers\[\d\]\.replica_directory_id$", anything,
               lambda value: re.fullmatch(r"dir:\d+/0", value) is not None, "first log directory's id"),
]

# ApiVersions (v3) ranges of the keys kraftwire serves, where they are not Kafka's: kraftwire serves each
# API over its whole schema, with the versions Kafka 4.0 removed (KIP-896) for older clients, ApiVersions
# v5 as trunk defines it.
API_VERSION_DIFFERENCES = {18: ((0, 4), (0, 5)), 19: ((2, 7), (0, 7)), 20: ((1, 6), (0, 6)),
                           32: ((1, 4), (0, 4)), 34: ((1, 2), (0, 2)), 35: ((1, 5), (0, 5))}


def api_version_ranges(answer, served):
    return {k["api_key"]: (k["min_version"], k["max_version"]) for k in answer["api_keys"] if k["api_key"] in served}


@pytest.fixture(scope="module")
def answers(apache_kafka):
    kafka = run_scenario(kafka_target(apache_kafka))
    # The Kafka cluster is formatted with controller.quorum.voters, a static quorum: so is this one.
    with BackgroundCluster(brokers=3, log_dirs=2, kraft_version=0) as bg:
        ours = run_scenario(kraftwire_target(bg))
    return kafka, ours


def compared_fields(answer) -> int:
    if isinstance(answer, dict):
        return sum(compared_fields(v) for v in answer.values())
    if isinstance(answer, list):
        return sum(compared_fields(v) for v in answer) or 1
    return 1


def test_scenario_compared_field_by_field(answers):
    kafka, ours = answers
    assert kafka.keys() == ours.keys()
    unlisted, used = [], set()
    for step in kafka.keys() - {"api_versions"}:
        for path, theirs, mine in differences(kafka[step], ours[step], step):
            listed = [i for i, d in enumerate(DELIBERATE) if d.covers(path, theirs, mine)]
            used.update(listed)
            if not listed:
                unlisted.append((path, theirs, mine))
    print(f"Apache Kafka {kafka_version()}: {len(kafka)} steps, {compared_fields(kafka)} fields compared")
    assert unlisted == []
    assert [d.paths.pattern for i, d in enumerate(DELIBERATE) if i not in used] == [], "listed but gone"


def test_deliberate_differences_are_in_the_readme():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme[readme.index("## Where kraftwire deliberately differs from Kafka"):]
    section = section[:section.index("\n## ", 1)]
    assert [d.readme for d in DELIBERATE if d.readme not in section] == []


def test_api_versions_of_served_keys(answers):
    kafka, ours = answers
    served = {k["api_key"] for k in ours["api_versions"]["api_keys"]}
    theirs, mine = api_version_ranges(kafka["api_versions"], served), api_version_ranges(ours["api_versions"], served)
    assert {k: (theirs.get(k), mine[k]) for k in served if theirs.get(k) != mine[k]} == API_VERSION_DIFFERENCES
