"""``kraftwire rehearse``: a reassignment plan run on a twin on the virtual clock, to its end or until it
is clear that it never ends, with a report (JSON and HTML, server/host/rehearse_report.py).

The source is a copy of a real cluster's metadata log (``--from-log DIR`` with ``--sizes`` and rates,
as ``kraftwire serve`` takes them: server/host/twin.py) or a description of a cluster
(``--cluster-spec FILE``, JSON, ``describe_source``): either becomes a ``TwinSource`` and boots the same
way, in this process, with ports of the kernel's and a temporary data directory. The plan is Kafka's
reassignment JSON (``--plan``) or one ``--generate`` makes for ``--broker-list`` (``generate_plan``:
Kafka's rack-unaware spread, seeded). It is executed as ``kafka-reassign-partitions --execute`` does,
over TCP against a broker of the twin: with ``--throttle`` the topics' leader/follower throttled
replicas (the moving partitions' current replicas, and their new ones) and the reassigning brokers'
``leader.``/``follower.replication.throttled.rate``, with ``--replica-alter-log-dirs-throttle``
``replica.alter.log.dirs.io.max.bytes.per.second`` on the plan's brokers; then
AlterPartitionReassignments.

Simulated time then moves on sample by sample (``Rehearsal.run``): between two samples every timer of
the virtual clock due runs (copies' ends, the capacity watch, the ISR checks) and the cluster is let
come to rest at the sample's time, so a move's end is its copies' exact end (``Copy.finished_at``) and
what follows it (the AlterPartition completing it, replicas deleted) lands at the next sample. Each
sample keeps every broker's replication bytes in and out, every log directory's bytes against its
capacity, and the partitions under ``min.insync.replicas`` (from the commits: ``_IsrWatch``). The run
stops when no partition reassigns, or when none of the copies left will ever end: held below its
partition's ingress (the network's ``never`` reason) or not moving at all (a broker down, a throttle of
0). The findings are judged from the samples and the final image (``judge``).
"""
from __future__ import annotations

import argparse
import json
import logging
import math
import os
import random
import shutil
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kraftwire.codec import records as rec
from kraftwire.codec.constants import ConfigResourceType
from kraftwire.codec.message import Message
from kraftwire.codec.messages import (AlterPartitionReassignmentsRequest, IncrementalAlterConfigsRequest)
from kraftwire.server.metadata import configs
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.metadata.record_versions import DEFAULT_METADATA_VERSION, METADATA_VERSION_FEATURE, TWIN_LEVELS
from kraftwire.server.raft import StorageError
from kraftwire.server.wire.client import KafkaClient
from .cluster import Cluster, seconds_left
from .spec import BrokerSpec, ClusterSpec, SimulationSpec, StorageSpec
from .twin import SourceError, TwinSource, load_twin

log = logging.getLogger("kraftwire.rehearse")

ERROR, WARNING, INFO = "error", "warning", "info"
DEFAULT_SAMPLES = 100
DEFAULT_MAX_SECONDS = 30 * 86400.0  # a plan still running after 30 simulated days is reported as such
RECOMPUTE_SPACING = 1.0  # the network's wait for a rate computation, in times the last one's cost
NEAR_FULL = 0.9  # a directory peaking above this share of its capacity is warned about
IMBALANCE_PERCENT = 10  # Kafka's leader.imbalance.per.broker.percentage default
BROKER_THROTTLES = (configs.LEADER_THROTTLED_RATE, configs.FOLLOWER_THROTTLED_RATE, configs.ALTER_LOG_DIRS_IO_MAX_BYTES)
TOPIC_THROTTLES = (configs.LEADER_THROTTLED_REPLICAS, configs.FOLLOWER_THROTTLED_REPLICAS)


class PlanError(ValueError):
    """A plan, a description or an option the rehearsal cannot run (the message says why, in one line)."""


# --- the source ---------------------------------------------------------------------------------------

def describe_source(path: str | Path) -> TwinSource:
    """A twin's source from a JSON description of a cluster::

        {"brokers": 3 | [1, 2, 3], "racks": {"1": "a"}, "log_dirs": 1,
         "topics": [{"name": "t", "partitions": 4, "replication_factor": 2,
                     "assignment": {"0": [1, 2]}, "size_bytes": 1000000, "sizes": {"0": 5000000},
                     "ingress_bytes_per_sec": 100, "rates": {"0": 200}, "configs": {"min.insync.replicas": "2"}}],
         "broker_configs": {"1": {"leader.replication.throttled.rate": "1000"}},
         "down": [3]}

    Replicas not given by ``assignment`` are spread as Kafka's rack-unaware placement spreads them
    (seeded); every replica is in the ISR and the first leads. ``down`` names brokers stopped before the
    plan runs (``Rehearsal.down``). PlanError for another shape."""
    try:
        given = json.loads(Path(path).read_text(encoding="utf-8"))
        return _described(given)
    except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError, AttributeError) as exc:
        raise PlanError(f"--cluster-spec {path}: {exc}") from None


def _described(given: dict[str, Any]) -> TwinSource:
    brokers = given.get("brokers", 3)
    ids = list(range(1, brokers + 1)) if isinstance(brokers, int) else [int(b) for b in brokers]
    if not ids or len(set(ids)) != len(ids):
        raise ValueError("brokers: a count of at least 1 or a list of distinct ids")
    racks = {int(b): str(r) for b, r in given.get("racks", {}).items()}
    dirs_per_broker = int(given.get("log_dirs", 1))
    rng = random.Random(f"kraftwire-describe-{given.get('seed', 0)}")
    new_id = lambda: uuid.UUID(int=rng.getrandbits(128), version=4)  # noqa: E731
    image, offset = MetadataImage(), 0

    def apply(record: Message) -> None:
        nonlocal offset
        image.apply(record, offset)
        offset += 1

    apply(rec.FeatureLevelRecord(name=METADATA_VERSION_FEATURE, feature_level=TWIN_LEVELS[DEFAULT_METADATA_VERSION]))
    directories = {b: [new_id() for _ in range(dirs_per_broker)] for b in ids}
    for epoch, b in enumerate(ids, 1):
        apply(rec.RegisterBrokerRecord(
            broker_id=b, incarnation_id=new_id(), broker_epoch=epoch, fenced=False, rack=racks.get(b),
            log_dirs=directories[b], end_points=[rec.RegisterBrokerRecord.BrokerEndpoint(
                name="PLAINTEXT", host=f"broker-{b}.example", port=9092, security_protocol=0)]))
    for topic in given.get("topics", []):
        _describe_topic(topic, ids, directories, rng, apply)
    for broker, values in given.get("broker_configs", {}).items():
        for name, value in values.items():
            apply(rec.ConfigRecord(resource_type=ConfigResourceType.BROKER, resource_name=str(broker), name=name,
                                   value=str(value)))
    image.offset = offset - 1
    source = TwinSource(Path("<cluster description>"), image, None, offset, 1, int(time.time() * 1000))
    source.notes.append("a described cluster: the twin takes a new cluster id")
    return source


def _describe_topic(topic: dict[str, Any], ids: list[int], directories: dict[int, list[uuid.UUID]],
                    rng: random.Random, apply: Any) -> None:
    name, count = str(topic["name"]), int(topic.get("partitions", 1))
    factor = int(topic.get("replication_factor", min(3, len(ids))))
    if count < 1 or not 1 <= factor <= len(ids):
        raise ValueError(f"topic {name!r}: at least 1 partition, and a replication factor from 1 to {len(ids)}")
    topic_id = uuid.UUID(int=rng.getrandbits(128), version=4)
    apply(rec.TopicRecord(name=name, topic_id=topic_id))
    spread = kafka_spread(ids, count, factor, rng)
    given = {int(p): [int(b) for b in r] for p, r in topic.get("assignment", {}).items()}
    for index in range(count):
        replicas = given.get(index, spread[index])
        if any(b not in directories for b in replicas) or len(set(replicas)) != len(replicas):
            raise ValueError(f"topic {name!r} partition {index}: replicas {replicas} are not distinct brokers of "
                             f"the cluster")
        apply(rec.PartitionRecord(partition_id=index, topic_id=topic_id, replicas=replicas, isr=replicas,
                                  leader=replicas[0], leader_epoch=0, partition_epoch=0,
                                  directories=[directories[b][index % len(directories[b])] for b in replicas]))
    values: dict[str, str] = {k: str(v) for k, v in topic.get("configs", {}).items()}
    if "size_bytes" in topic:
        values[configs.PARTITION_SIZE_BYTES] = str(int(topic["size_bytes"]))
    if "sizes" in topic:
        values[configs.PARTITION_SIZES_BYTES] = ",".join(f"{int(p)}:{int(s)}" for p, s in topic["sizes"].items())
    if "ingress_bytes_per_sec" in topic:
        values[configs.INGRESS_BYTES_PER_SEC] = str(int(topic["ingress_bytes_per_sec"]))
    if "rates" in topic:
        values[configs.INGRESS_RATES] = ",".join(f"{int(p)}:{int(r)}" for p, r in topic["rates"].items())
    for config, value in values.items():
        apply(rec.ConfigRecord(resource_type=ConfigResourceType.TOPIC, resource_name=name, name=config, value=value))


def kafka_spread(brokers: list[int], partitions: int, factor: int, rng: random.Random) -> list[list[int]]:
    """Replicas for ``partitions`` partitions over ``brokers`` as Kafka's rack-unaware placement spreads
    them: the first replicas round-robin from a random start, the others shifted by a random amount that
    grows by one every time the first replicas have gone round the brokers once."""
    ordered, n = sorted(brokers), len(brokers)
    start, shift = rng.randrange(n), rng.randrange(n)
    placed = []
    for p in range(partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start) % n
        others = [(first + 1 + (shift + j) % (n - 1)) % n for j in range(factor - 1)] if n > 1 else []
        placed.append([ordered[first]] + [ordered[i] for i in others])
    return placed


def add_ingress(source: TwinSource, bytes_per_second: int) -> None:
    """``--ingress``: every topic's partitions produce at this rate but those given a rate of their own."""
    for topic in source.image.topics.values():
        if configs.INGRESS_BYTES_PER_SEC not in source.image.topic_configs(topic.name):
            source.image.apply(rec.ConfigRecord(resource_type=ConfigResourceType.TOPIC, resource_name=topic.name,
                                                name=configs.INGRESS_BYTES_PER_SEC, value=str(bytes_per_second)),
                               source.image.offset)


# --- the plan -----------------------------------------------------------------------------------------

Plan = dict[tuple[str, int], list[int]]


def read_plan(path: str | Path, image: MetadataImage) -> tuple[Plan, list[str]]:
    """Kafka's reassignment JSON (``{"version": 1, "partitions": [{"topic", "partition", "replicas",
    "log_dirs"}]}``) and notes on what is not rehearsed (log directory moves). PlanError for another
    shape, as kafka-reassign-partitions refuses it."""
    try:
        given = json.loads(Path(path).read_text(encoding="utf-8"))
        entries = given["partitions"]
        plan: Plan = {}
        notes = []
        for entry in entries:
            key = (str(entry["topic"]), int(entry["partition"]))
            replicas = [int(b) for b in entry["replicas"]]
            if key in plan:
                raise ValueError(f"partition {key[0]}-{key[1]} is listed twice")
            if len(set(replicas)) != len(replicas) or not replicas:
                raise ValueError(f"partition {key[0]}-{key[1]}: replicas {replicas} are empty or repeat a broker")
            if any(d != "any" for d in entry.get("log_dirs", [])):
                notes.append(f"{key[0]}-{key[1]}: its log_dirs (AlterReplicaLogDirs) are not rehearsed")
            plan[key] = replicas
    except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError) as exc:
        raise PlanError(f"--plan {path}: not Kafka's reassignment JSON: {exc}") from None
    return plan, notes


def read_topics_to_move(path: str | Path) -> list[str]:
    """Kafka's ``--topics-to-move-json``: ``{"version": 1, "topics": [{"topic": "t"}]}``."""
    try:
        return [str(t["topic"]) for t in json.loads(Path(path).read_text(encoding="utf-8"))["topics"]]
    except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError) as exc:
        raise PlanError(f"--topics-to-move-json {path}: {exc}") from None


def generate_plan(image: MetadataImage, broker_list: list[int], topics: list[str] | None, seed: int = 0) -> Plan:
    """``--generate``: the topics' partitions spread over ``broker_list`` at their replication factors, as
    kafka-reassign-partitions --generate proposes (its rack-unaware placement; seeded here)."""
    names = sorted(t.name for t in image.topics.values()) if topics is None else topics
    if len(set(broker_list)) != len(broker_list) or any(b not in image.brokers for b in broker_list):
        raise PlanError(f"--broker-list {broker_list}: not distinct brokers of the cluster ({sorted(image.brokers)})")
    rng, plan = random.Random(f"kraftwire-generate-{seed}"), {}
    for name in names:
        topic = image.topic(name)
        if topic is None:
            raise PlanError(f"--topics-to-move-json: topic {name!r} does not exist")
        factor = max(len(s.replicas) for s in topic.partitions.values())
        if factor > len(broker_list):
            raise PlanError(f"topic {name!r} has replication factor {factor}, more than the {len(broker_list)} "
                            f"brokers of --broker-list")
        spread = kafka_spread(broker_list, len(topic.partitions), factor, rng)
        for index in sorted(topic.partitions):
            plan[(name, index)] = spread[index]
    return plan


def plan_json(plan: Plan) -> dict[str, Any]:
    return {"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": r, "log_dirs": ["any"] * len(r)}
                                         for (t, p), r in sorted(plan.items())]}


# --- the run ------------------------------------------------------------------------------------------

@dataclass
class Options:
    throttle: int = -1  # --throttle: B/s, -1 none (as kafka-reassign-partitions)
    log_dirs_throttle: int = -1  # --replica-alter-log-dirs-throttle
    samples: int = DEFAULT_SAMPLES
    max_seconds: float = DEFAULT_MAX_SECONDS
    down: list[int] = field(default_factory=list)


@dataclass
class Move:
    topic: str
    partition: int
    before: list[int]
    target: list[int]
    start: float | None = None
    end: float | None = None
    never: str | None = None
    error: str | None = None
    bytes: float = 0.0
    copies: list[Any] = field(default_factory=list)  # its copies (ReplicationNetwork's), while it runs


class _IsrWatch:
    """Partitions whose ISR is smaller than their ``min.insync.replicas``, kept from the commits: each
    window (topic, partition, from, to) while it was, on the network's clock."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.open: dict[tuple[str, int], tuple[float, int, int]] = {}  # -> since, smallest ISR, min ISR
        self.windows: list[dict[str, Any]] = []
        image = cluster.metadata.image
        for topic, index, state in image.partitions():
            self._look(image, topic.name, index, len(state.isr) if state.leader >= 0 else 0)
        cluster.metadata.subscribe(self.on_commit)

    def _look(self, image: MetadataImage, name: str, index: int, isr: int) -> None:
        key, now = (name, index), self.cluster.network.now()
        wanted = configs.topic_value(image.topic_configs(name), image.broker_configs(""), configs.MIN_INSYNC_REPLICAS)
        assert isinstance(wanted, int)
        if isr < wanted:
            since, least, _ = self.open.get(key, (now, isr, wanted))
            self.open[key] = (since, min(least, isr), wanted)
        elif key in self.open:
            self._close(key, now)

    def _close(self, key: tuple[str, int], now: float) -> None:
        since, least, wanted = self.open.pop(key)
        self.windows.append({"topic": key[0], "partition": key[1], "from": since, "to": now, "smallest_isr": least,
                             "min_insync_replicas": wanted})

    def on_commit(self, committed: list[tuple[int, Message]]) -> None:
        image = self.cluster.metadata.image
        for _offset, record in committed:
            if isinstance(record, (rec.PartitionChangeRecord, rec.PartitionRecord)):
                topic = image.topics.get(record.topic_id)
                state = topic.partitions.get(record.partition_id) if topic is not None else None
                if topic is not None and state is not None:
                    self._look(image, topic.name, record.partition_id, len(state.isr) if state.leader >= 0 else 0)

    def finish(self) -> list[dict[str, Any]]:
        now = self.cluster.network.now()
        for key in list(self.open):
            self._close(key, now)
            self.windows[-1]["to"] = None  # still under at the end
        return self.windows


class Rehearsal:
    """One rehearsal: the twin, the plan, the samples (see the module docstring)."""

    def __init__(self, cluster: Cluster, plan: Plan, options: Options) -> None:
        self.cluster, self.plan, self.options = cluster, plan, options
        image = cluster.controller.committed
        self.moves: dict[tuple[str, int], Move] = {}
        for key, target in plan.items():
            topic = image.topic(key[0])
            state = topic.partitions.get(key[1]) if topic is not None else None
            self.moves[key] = Move(key[0], key[1], list(state.replicas) if state is not None else [], target)
        self.samples: list[dict[str, Any]] = []
        self.throttles_before = _throttles(image)
        self.notes: list[str] = []
        self.stopped_because = "every move completed"
        self.wall_seconds = 0.0
        self.origin = self.end = 0.0  # simulated times of the run's start and stop
        self.leaders: dict[int, int] = {}  # partitions each broker leads after the plan
        self.under_min_isr: list[dict[str, Any]] = []

    @property
    def reassigning_brokers(self) -> set[int]:
        return {b for m in self.moves.values() if m.before != m.target for b in m.before + m.target}

    async def execute(self) -> None:
        """Throttles and the reassignment, as kafka-reassign-partitions --execute sends them: a broker's
        configs to that broker (as Kafka's admin client routes them), the rest to the first running one."""
        running = {b.broker_id: b for b in self.cluster.brokers if b.running}
        first = next(iter(running.values()))
        clients: dict[int, KafkaClient] = {}

        def client(broker_id: int) -> KafkaClient:
            if broker_id not in clients:
                node = running[broker_id]
                clients[broker_id] = KafkaClient(node.host, node.port, "kraftwire-rehearse")
            return clients[broker_id]

        try:
            for resource in self._throttle_resources():
                broker = int(resource.resource_name) if resource.resource_type == ConfigResourceType.BROKER \
                    else first.broker_id
                if broker not in running:
                    wanted = _said({c.name: c.value or "" for c in resource.configs})
                    self.notes.append(f"broker {broker} is down: its throttle ({wanted}) cannot be set "
                                      f"(kafka-reassign-partitions fails the same way)")
                    continue
                answer = await client(broker).send(IncrementalAlterConfigsRequest(resources=[resource]))
                for r in answer.responses:
                    if r.error_code:
                        self.notes.append(f"throttle on {r.resource_name}: error {r.error_code} {r.error_message}")
            await self._alter(client(first.broker_id))
        finally:
            for c in clients.values():
                await c.close()

    async def _alter(self, client: KafkaClient) -> None:
        by_topic: dict[str, list[AlterPartitionReassignmentsRequest.ReassignablePartition]] = {}
        for (topic, index), target in sorted(self.plan.items()):
            by_topic.setdefault(topic, []).append(
                AlterPartitionReassignmentsRequest.ReassignablePartition(partition_index=index, replicas=target))
        answer = await client.send(AlterPartitionReassignmentsRequest(timeout_ms=60000, topics=[
            AlterPartitionReassignmentsRequest.ReassignableTopic(name=t, partitions=p)
            for t, p in by_topic.items()]), 0)
        if answer.error_code:
            raise PlanError(f"AlterPartitionReassignments refused: error {answer.error_code} {answer.error_message}")
        for topic in answer.responses:
            for p in topic.partitions:
                if p.error_code:
                    self.moves[(topic.name, p.partition_index)].error = f"error {p.error_code}: {p.error_message}"

    def _throttle_resources(self) -> list[IncrementalAlterConfigsRequest.AlterConfigsResource]:
        config = IncrementalAlterConfigsRequest.AlterableConfig
        resource = IncrementalAlterConfigsRequest.AlterConfigsResource
        resources = []
        if self.options.throttle >= 0:
            leaders: dict[str, set[str]] = {}
            followers: dict[str, set[str]] = {}
            for m in self.moves.values():
                leaders.setdefault(m.topic, set()).update(f"{m.partition}:{b}" for b in m.before)
                followers.setdefault(m.topic, set()).update(f"{m.partition}:{b}" for b in m.target
                                                            if b not in m.before)
            for topic in sorted(leaders):
                resources.append(resource(resource_type=ConfigResourceType.TOPIC, resource_name=topic, configs=[
                    config(name=configs.LEADER_THROTTLED_REPLICAS, config_operation=0,
                           value=",".join(sorted(leaders[topic]))),
                    config(name=configs.FOLLOWER_THROTTLED_REPLICAS, config_operation=0,
                           value=",".join(sorted(followers[topic])))]))
        brokers = sorted(self.reassigning_brokers | {b for m in self.moves.values() for b in m.target})
        for b in brokers:
            changes = []
            if self.options.throttle >= 0 and b in self.reassigning_brokers:
                changes += [config(name=name, config_operation=0, value=str(self.options.throttle))
                            for name in (configs.LEADER_THROTTLED_RATE, configs.FOLLOWER_THROTTLED_RATE)]
            if self.options.log_dirs_throttle >= 0:
                changes.append(config(name=configs.ALTER_LOG_DIRS_IO_MAX_BYTES, config_operation=0,
                                      value=str(self.options.log_dirs_throttle)))
            if changes:
                resources.append(resource(resource_type=ConfigResourceType.BROKER, resource_name=str(b),
                                          configs=changes))
        return resources

    async def run(self) -> None:
        """Move simulated time on, sample by sample, until no partition reassigns or none of the moves
        left can end."""
        started = time.perf_counter()
        cluster, network = self.cluster, self.cluster.network
        network.recompute_spacing = RECOMPUTE_SPACING  # simulated time stands still while it waits
        await cluster.advance(0)
        self.origin = network.now()
        self.isr = _IsrWatch(cluster)
        step = self._first_step()
        self._sample()
        while True:
            progress = self.progress()
            pending = [k for k in progress if k in self.moves]
            self._note_moves(progress)
            if not progress:
                break
            if not network.finishing:
                never = {k: p["never"] for k, p in progress.items() if p["never"]}
                for key, p in progress.items():
                    if key in self.moves:
                        self.moves[key].never = never.get(key) or (
                            self._why_still(self.moves[key]) if p["rate"] <= 0 else self.moves[key].never)
                self.stopped_because = (f"{len(pending)} move(s) never complete" if never
                                        else f"{len(pending)} move(s) stand still")
                break
            if network.now() - self.origin >= self.options.max_seconds:
                self.stopped_because = f"still running after {self.options.max_seconds:.0f} simulated seconds"
                break
            if len(self.samples) >= 2 * self.options.samples:
                step *= 2
                self.samples = self.samples[::2]
            until = network.now() + step
            network.run_timers_coalesced(until)
            await cluster.advance(0)
            self._sample()
        self.end = network.now()
        self._sample()
        self.under_min_isr = self.isr.finish()
        self.wall_seconds = time.perf_counter() - started

    def progress(self) -> dict[tuple[str, int], dict[str, Any]]:
        """Each reassigning partition's copies to its adding replicas: rate, time left, why never
        (``Cluster.reassignment_progress`` for the reassigning partitions alone, from their copies)."""
        network = self.cluster.network
        network.settle()
        found = {}
        for topic, index, state in self.cluster.controller.committed.reassigning_partitions():
            copies: list[dict[str, Any]] = []
            for b in state.adding:
                copy = network.copies.get((topic.topic_id, index, b))
                if copy is None:
                    continue
                left = max((copy.size or 0.0) - copy.replica.log_bytes, 0.0)
                copies.append({"bytes_left": left, "rate": copy.rate,  # (seconds_left's shape)
                               "ingress": network.ingress_rate((topic.topic_id, index)),
                               "never": network.never_reason(copy) if left else None})
            found[(topic.name, index)] = {"rate": sum(c["rate"] for c in copies), "seconds_left": seconds_left(copies),
                                          "never": next((c["never"] for c in copies if c["never"]), None)}
        return found

    def _why_still(self, move: Move) -> str:
        """Why a move's copies do not move at all."""
        for b in [*move.target, *move.before]:
            node = next((n for n in self.cluster.brokers if n.broker_id == b), None)
            if node is None or not node.running:
                return f"no copy of it moves: broker {b} is down"
        for b in move.target:
            node = next(n for n in self.cluster.brokers if n.broker_id == b)
            offline = [d.path for d in node.log_manager.directories if not d.online]
            if offline:
                return f"no copy of it moves: broker {b}'s log directory {offline[0]} is offline"
        return "no copy of it moves (a paused broker, or a throttle of 0)"

    def _first_step(self) -> float:
        """The sample spacing: the slowest move's time left at the first rates, over the samples wanted."""
        waits = [p["seconds_left"] for p in self.progress().values()
                 if p["seconds_left"] is not None]
        longest = max(waits, default=0.0) or 1.0
        return max(longest / max(self.options.samples, 1), 1e-3)

    def _note_moves(self, progress: dict) -> None:
        """Starts and ends of the moves, from their copies (exact on the virtual clock): the copies are
        kept while the move runs, as the network forgets them once it completes."""
        network = self.cluster.network
        image = self.cluster.controller.committed
        for key, move in self.moves.items():
            if move.end is not None or move.error is not None:
                continue
            if key in progress:
                topic = image.topic(move.topic)
                if topic is not None:
                    move.copies = [c for b in move.target if b not in move.before
                                   if (c := network.copies.get((topic.topic_id, move.partition, b))) is not None]
                    move.bytes = sum(c.size or 0.0 for c in move.copies)
            starts = [c.started_at for c in move.copies if c.started_at is not None]
            if starts and move.start is None:
                move.start = min(starts) - self.origin
            if key not in progress:
                ends = [c.finished_at for c in move.copies if c.finished_at is not None]
                move.end = (max(ends) if ends and len(ends) == len(move.copies) else network.now()) - self.origin
                move.start = move.start if move.start is not None else move.end
                move.bytes = max(move.bytes, sum(c.size or 0.0 for c in move.copies))

    def _sample(self) -> None:
        cluster, network = self.cluster, self.cluster.network
        brokers = {}
        for node in cluster.brokers:
            moved = network.replication_bytes(node.broker_id)
            brokers[node.broker_id] = [moved.bytes_in, moved.bytes_out]
        directories = {}
        for node in cluster.brokers:
            for index, (directory, used) in enumerate(node.log_manager.usage().items()):
                directories[f"{node.broker_id}:{index}"] = [used, directory.online]
        self.samples.append({"t": network.now() - self.origin, "brokers": brokers, "dirs": directories})

    def directory_info(self) -> dict[str, dict[str, Any]]:
        found = {}
        for node in self.cluster.brokers:
            for index, directory in enumerate(node.log_manager.directories):
                found[f"{node.broker_id}:{index}"] = {
                    "broker": node.broker_id, "index": index, "path": directory.path,
                    "capacity_bytes": directory.capacity_bytes if directory.enforced else None,
                    "online": directory.online, "full": directory.full}
        return found


def _throttles(image: MetadataImage) -> dict[str, dict[str, str]]:
    """The throttle configs set: ``broker:<id>`` and ``topic:<name>`` -> {config: value}."""
    found = {}
    for (kind, name), values in sorted(image.configs.items()):
        names = BROKER_THROTTLES if kind == ConfigResourceType.BROKER else \
            TOPIC_THROTTLES if kind == ConfigResourceType.TOPIC else ()
        set_ = {n: v for n, v in values.items() if n in names and v}
        if set_:
            found[f"{'broker' if kind == ConfigResourceType.BROKER else 'topic'}:{name}"] = set_
    return found


# --- findings and the report --------------------------------------------------------------------------

def judge(r: Rehearsal) -> list[dict[str, Any]]:
    """The findings, each ``{"level", "kind", "message"}`` and what it is about."""
    findings: list[dict[str, Any]] = []

    def add(level: str, kind: str, message: str, **about: Any) -> None:
        findings.append({"level": level, "kind": kind, "message": message, **about})

    for note in r.notes:
        add(INFO, "note", note)
    for m in r.moves.values():
        name = f"{m.topic}-{m.partition}"
        if m.error:
            add(ERROR, "move-refused", f"{name}: AlterPartitionReassignments answered {m.error}", partition=name)
        elif m.end is None and m.never:
            add(ERROR, "move-never-completes", f"{name} never completes: {m.never}", partition=name, reason=m.never)
        elif m.end is None:
            add(ERROR, "move-unfinished", f"{name} had not completed when the rehearsal stopped ({r.stopped_because})",
                partition=name)
    _judge_directories(r, add)
    _judge_throttles(r, add)
    _judge_leaders(r, add)
    for w in r.under_min_isr:
        until = "the end" if w["to"] is None else f"{w['to']:.1f} s"
        add(WARNING, "under-min-isr", f"{w['topic']}-{w['partition']}: ISR of {w['smallest_isr']} below "
            f"min.insync.replicas {w['min_insync_replicas']} from {w['from']:.1f} s to {until} (acks=all produce "
            f"fails with NOT_ENOUGH_REPLICAS)", partition=f"{w['topic']}-{w['partition']}")
    return findings


def _judge_directories(r: Rehearsal, add: Any) -> None:
    for key, info in r.directory_info().items():
        used = [(s["t"], s["dirs"][key][0]) for s in r.samples if key in s["dirs"]]
        peak_t, peak = max(used, key=lambda u: u[1], default=(0.0, 0.0))
        capacity = info["capacity_bytes"]
        went = next((s["t"] for s in r.samples if key in s["dirs"] and not s["dirs"][key][1]), None)
        if info["full"] or (went is not None and capacity is not None):
            add(ERROR, "directory-fills", f"broker {info['broker']} log directory {info['index']} ({info['path']}) "
                f"fills ({capacity} bytes) and goes offline at about {went or r.end - r.origin:.1f} s: its replicas go "
                f"offline (KAFKA_STORAGE_ERROR), leaders move", directory=key)
        elif capacity is not None and peak >= NEAR_FULL * capacity:
            add(WARNING, "directory-near-full", f"broker {info['broker']} log directory {info['index']} peaks at "
                f"{peak / capacity:.0%} of its capacity at {peak_t:.1f} s", directory=key)


def _judge_throttles(r: Rehearsal, add: Any) -> None:
    image = r.cluster.controller.committed
    moving = r.reassigning_brokers
    for resource, values in r.throttles_before.items():
        kind, name = resource.split(":", 1)
        if kind == "broker" and int(name) not in moving:
            add(WARNING, "throttle-outside-plan", f"broker {name} is throttled ({_said(values)}) but takes no part "
                f"in the plan: a throttle left from an earlier reassignment", resource=resource)
    after = _throttles(image)
    for resource, values in after.items():
        kind, name = resource.split(":", 1)
        if kind == "broker":
            broker = image.brokers.get(int(name))
            down = broker is None or broker.fenced or int(name) in r.options.down
            if down:
                add(WARNING, "throttle-on-down-broker", f"broker {name} is down and throttled ({_said(values)}): "
                    f"kafka-reassign-partitions --verify cannot be relied on to clear it (KAFKA-13392); remove it "
                    f"with kafka-configs --entity-type brokers --entity-name {name} --alter --delete-config",
                    resource=resource)
    if after:
        left = ", ".join(f"{res} ({_said(v)})" for res, v in after.items())
        add(WARNING, "throttles-left-behind", f"throttles still set after the plan: {left}; kafka-reassign-partitions "
            f"--verify removes them once every move is complete", resources=sorted(after))


def _said(values: dict[str, str]) -> str:
    return ", ".join(f"{k}={v if len(v) < 40 else v[:37] + '...'}" for k, v in sorted(values.items()))


def _judge_leaders(r: Rehearsal, add: Any) -> None:
    """Leadership after the plan: leaders per broker, and Kafka's preferred-leader imbalance per broker."""
    image = r.cluster.controller.committed
    leaders = {b: 0 for b in image.brokers}
    preferred = {b: 0 for b in image.brokers}
    not_led = {b: 0 for b in image.brokers}
    for _topic, _index, state in image.partitions():
        if state.adding or state.removing:
            continue  # a move not completed: its preferred leader is not settled
        if state.leader in leaders:
            leaders[state.leader] += 1
        if state.replicas and state.replicas[0] in preferred:
            preferred[state.replicas[0]] += 1
            not_led[state.replicas[0]] += state.leader != state.replicas[0]
    r.leaders = leaders
    mean = sum(leaders.values()) / max(len(leaders), 1)
    for b in sorted(leaders):
        ratio = not_led[b] / preferred[b] if preferred[b] else 0.0
        if ratio * 100 > IMBALANCE_PERCENT:
            add(WARNING, "leadership-skew", f"broker {b} is the preferred leader of {preferred[b]} partitions but "
                f"leads {preferred[b] - not_led[b]} of them ({ratio:.0%} imbalance, above Kafka's "
                f"leader.imbalance.per.broker.percentage {IMBALANCE_PERCENT}): kafka-leader-election --election-type "
                f"PREFERRED, or the controller's auto rebalance, moves them back", broker=b)
    if mean and max(leaders.values()) > max(1.2 * mean, mean + 2):
        top = max(leaders, key=lambda b: leaders[b])
        add(WARNING, "leadership-skew", f"broker {top} leads {leaders[top]} partitions against a mean of "
            f"{mean:.1f} after the plan", broker=top)


def report(r: Rehearsal, command: str) -> dict[str, Any]:
    findings = judge(r)
    directories = r.directory_info()
    for key, info in directories.items():
        used = [(s["t"], s["dirs"][key][0]) for s in r.samples if key in s["dirs"]]
        info["peak_t"], info["peak_bytes"] = max(used, key=lambda u: u[1], default=(0.0, 0.0))
    times = [s["t"] for s in r.samples]
    done = [m for m in r.moves.values() if m.end is not None]
    return {
        "command": command,
        "simulated_seconds": max((m.end or 0.0 for m in done), default=0.0) if len(done) == len(r.moves)
        else r.end - r.origin,
        "completed": all(m.end is not None for m in r.moves.values()),
        "stopped_because": r.stopped_because,
        "wall_seconds": r.wall_seconds,
        "throttle": r.options.throttle,
        "moves": [{"topic": m.topic, "partition": m.partition, "from": m.before, "to": m.target, "start": m.start,
                   "end": m.end, "seconds": None if m.end is None or m.start is None else m.end - m.start,
                   "bytes": m.bytes, "never": m.never if m.end is None else None, "error": m.error}
                  for m in sorted(r.moves.values(), key=lambda m: (m.topic, m.partition))],
        "moves_completed": len(done),
        "brokers": {str(b): {"t": times, "bytes_in": [s["brokers"][b][0] for s in r.samples],
                             "bytes_out": [s["brokers"][b][1] for s in r.samples], "leaders_after": r.leaders.get(b)}
                    for b in sorted(r.samples[0]["brokers"])},
        "directories": {k: {**info, "t": times, "bytes": [s["dirs"].get(k, [None])[0] for s in r.samples]}
                        for k, info in directories.items()},
        "under_min_isr": r.under_min_isr,
        "findings": sorted(findings, key=lambda f: ({ERROR: 0, WARNING: 1, INFO: 2}[f["level"]], f["kind"])),
    }


# --- the command --------------------------------------------------------------------------------------

def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser("rehearse", help="run a reassignment plan on a twin on the virtual clock; report JSON and HTML",
                       description="Run a reassignment plan on a production twin (or a described cluster) on the "
                                   "virtual clock to its end, or until it is clear that it never ends, and write a "
                                   "report. Exit 0, 1 when a finding is an error, 2 for bad input.")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--from-log", metavar="DIR", help="a copy of the cluster's metadata log (as serve --from-log)")
    source.add_argument("--cluster-spec", metavar="FILE", help="a JSON description of a cluster (README: rehearse)")
    p.add_argument("--sizes", metavar="FILE", help="with --from-log: kafka-log-dirs --describe output")
    p.add_argument("--sizes-later", metavar="FILE", help="with --sizes: a second snapshot, for the rates")
    p.add_argument("--sizes-interval", type=float, metavar="SECONDS", help="seconds between the two snapshots")
    p.add_argument("--rates", metavar="FILE", help="with --from-log: produce rates as JSON (as serve --rates)")
    plan = p.add_mutually_exclusive_group(required=True)
    plan.add_argument("--plan", metavar="FILE", help="Kafka's reassignment JSON (kafka-reassign-partitions)")
    plan.add_argument("--generate", action="store_true", help="propose the plan for --broker-list, as --generate does")
    p.add_argument("--broker-list", default=None, help="with --generate: brokers to spread over, e.g. 1,2,3")
    p.add_argument("--topics-to-move-json", metavar="FILE", help="with --generate: the topics (default every topic)")
    p.add_argument("--throttle", type=int, default=-1, metavar="BYTES/S",
                   help="as kafka-reassign-partitions: the inter-broker throttle, B/s (default -1: none)")
    p.add_argument("--replica-alter-log-dirs-throttle", type=int, default=-1, metavar="BYTES/S",
                   help="as kafka-reassign-partitions: replica.alter.log.dirs.io.max.bytes.per.second (default -1)")
    p.add_argument("--ingress", type=int, default=None, metavar="BYTES/S",
                   help="every partition's produce rate, but those the source or --rates give one")
    p.add_argument("--log-dir-capacity-bytes", type=int, default=None, help="each log directory's capacity")
    p.add_argument("--log-dir-capacities", default="", metavar="BROKER:K=BYTES,...", help="per-directory capacities")
    p.add_argument("--down", default="", metavar="1,2", help="brokers stopped before the plan runs")
    p.add_argument("--samples", type=int, default=DEFAULT_SAMPLES,
                   help=f"samples over time (default {DEFAULT_SAMPLES})")
    p.add_argument("--max-simulated-seconds", type=float, default=DEFAULT_MAX_SECONDS,
                   help="stop a plan still running after this long (default 30 days)")
    p.add_argument("--report-json", metavar="PATH", help="write the report as JSON here")
    p.add_argument("--report-html", metavar="PATH", help="write the report as a self-contained HTML page here")
    p.add_argument("--data-dir", default=None, metavar="DIR",
                   help="where the twin's temporary data directory goes, removed at the end (default /dev/shm)")
    p.add_argument("--write-plan", metavar="PATH", help="with --generate: write the proposed plan (Kafka's JSON)")
    return p


def _ids(text: str | None) -> list[int]:
    try:
        return [int(x) for x in (text or "").split(",") if x.strip()]
    except ValueError:
        raise PlanError(f"not a comma-separated list of broker ids: {text!r}") from None


def _source(args: argparse.Namespace) -> TwinSource:
    if args.cluster_spec is not None:
        if args.sizes or args.rates or args.sizes_later:
            raise PlanError("--sizes, --sizes-later and --rates go with --from-log; a description gives its own")
        source = describe_source(args.cluster_spec)
        down = json.loads(Path(args.cluster_spec).read_text(encoding="utf-8")).get("down", [])
        args.down = ",".join(str(b) for b in [*_ids(args.down), *down])
    else:
        source = load_twin(args.from_log, args.sizes, None, None, args.sizes_later, args.sizes_interval, args.rates)
    if args.ingress is not None:
        if args.ingress < 0:
            raise PlanError("--ingress must be at least 0 B/s")
        add_ingress(source, args.ingress)
    return source


async def rehearse(args: argparse.Namespace, command: str) -> dict[str, Any]:
    """The rehearsal ``args`` describe, its report."""
    from .cli import log_dir_capacities

    source = _source(args)
    if args.generate:
        broker_list = _ids(args.broker_list)
        if not broker_list:
            raise PlanError("--generate needs --broker-list")
        topics = read_topics_to_move(args.topics_to_move_json) if args.topics_to_move_json else None
        plan, notes = generate_plan(source.image, broker_list, topics), list[str]()
        if args.write_plan:
            Path(args.write_plan).write_text(json.dumps(plan_json(plan)) + "\n", encoding="utf-8")
    else:
        plan, notes = read_plan(args.plan, source.image)
    options = Options(throttle=args.throttle, log_dirs_throttle=args.replica_alter_log_dirs_throttle,
                      samples=max(args.samples, 2), max_seconds=args.max_simulated_seconds, down=_ids(args.down))
    data_dir = Path(tempfile.mkdtemp(prefix="kraftwire-rehearse-", dir=args.data_dir or _memory_dir()))
    try:
        spec = ClusterSpec(
            brokers=BrokerSpec(log_dir_capacity_bytes=args.log_dir_capacity_bytes,
                               log_dir_capacities=log_dir_capacities(args.log_dir_capacities)),
            storage=StorageSpec(data_dir=data_dir, from_log=source),
            simulation=SimulationSpec(virtual_clock=True, seed=0))
        cluster = Cluster.from_spec(spec)
        await cluster.start(ready_timeout=max(10.0, 0.0005 * sum(len(t.partitions) for t in
                                                                 source.image.topics.values())))
        try:
            rehearsal = Rehearsal(cluster, plan, options)
            rehearsal.notes += notes
            for broker in options.down:
                await cluster.stop_broker(broker)
            await rehearsal.execute()
            await rehearsal.run()
            return report(rehearsal, command)
        finally:
            await cluster.stop()
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def _memory_dir() -> str | None:
    """Where the twin's data directory goes by default: /dev/shm (memory: the twin's fsyncs, of the
    replicas' files a plan creates, cost nothing there), else the system's temporary directory."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


def run_command(args: argparse.Namespace, argv: list[str]) -> int:
    """``kraftwire rehearse``: 0, 1 with an error-level finding, 2 for input it cannot rehearse."""
    from . import rehearse_report
    import uvloop

    command = "kraftwire rehearse " + " ".join(argv)
    if args.samples < 2 or not args.max_simulated_seconds > 0:
        print("kraftwire rehearse: --samples takes at least 2, --max-simulated-seconds above 0", file=sys.stderr)
        return 2
    try:
        result = uvloop.run(rehearse(args, command))
    except (PlanError, SourceError, StorageError, ValueError) as exc:
        print(f"kraftwire rehearse: {exc}", file=sys.stderr)
        return 2
    if args.report_json:
        Path(args.report_json).write_text(json.dumps(result, indent=1, default=_finite) + "\n", encoding="utf-8")
    if args.report_html:
        Path(args.report_html).write_text(rehearse_report.html(result), encoding="utf-8")
    errors = [f for f in result["findings"] if f["level"] == ERROR]
    print(f"simulated {result['simulated_seconds']:.1f} s ({result['stopped_because']}); "
          f"{result['moves_completed']} of {len(result['moves'])} moves completed; "
          f"{len(result['findings'])} findings, {len(errors)} errors; wall {result['wall_seconds']:.1f} s")
    for f in result["findings"]:
        if f["level"] != INFO:
            print(f"{f['level']}: {f['message']}")
    return 1 if errors else 0


def _finite(value: object) -> object:
    return None if isinstance(value, float) and not math.isfinite(value) else str(value)

