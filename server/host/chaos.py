"""Chaos over a cluster of node processes (``ProcessCluster``): a write workload through kafka-python
that records every acknowledged write, the faults thrown at the controller quorum while it runs, and
the check of the controllers' logs afterwards. tests/processes/test_chaos_processes.py runs one round of each
fault; bench/chaos.py runs many and prints figures. It needs kafka-python (the test, clients or bench
extra), which nothing else of the package imports.

The workload is a ``KafkaAdminClient`` on the broker processes, whose brokers forward its writes to
whichever controller is active: it creates topics (one partition, one replica), sets a created topic's
``retention.ms`` and moves a created topic's partition to another broker
(AlterPartitionReassignments), in turn. Every write is unique and the workload never repeats one (a
topic name, a config value, a topic moved once), so the check is exact: each acknowledged write is in
every controller's log exactly once (a TopicRecord, a ConfigRecord, a PartitionChangeRecord adding the
target), and a write that failed or got no answer is there at most once. The logs must also agree
byte for byte, batch for batch, below the high watermark the voters converged on.
"""
from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kafka import TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic

from .process_harness import ProcessCluster

T = TypeVar("T")

FIRST_RETENTION_MS = 3_600_000
PARTITION_BYTES = str(1 << 20)  # simulated: a move between broker processes finishes in well under a second
REQUEST_TIMEOUT_MS = 10_000


@dataclass
class Writes:
    """What the workload asked for: ``acknowledged`` and ``failed`` (an error, or no answer) writes,
    each (kind, key): ("topic", name), ("config", (topic, value)), ("move", (topic, target broker))."""
    acknowledged: list[tuple[str, object]] = field(default_factory=list)
    failed: list[tuple[str, object]] = field(default_factory=list)


class AdminWorkload:
    """A thread writing through kafka-python's admin client until ``stop``."""

    def __init__(self, harness: ProcessCluster):
        self._harness = harness
        self.writes = Writes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kraftwire-chaos-workload", daemon=True)
        self._topics: list[str] = []  # created, not moved yet

    def start(self) -> AdminWorkload:
        self._thread.start()
        return self

    def stop(self) -> Writes:
        self._stop.set()
        self._thread.join(60)
        return self.writes

    def acknowledged_since(self, count: int) -> int:
        return len(self.writes.acknowledged) - count

    def _write(self, admin: KafkaAdminClient, sequence: int) -> tuple[str, object]:
        """Send one write; returns its (kind, key) once acknowledged, raises otherwise."""
        if sequence % 3 == 0 or not self._topics:
            name = f"chaos-{sequence}"
            topic = NewTopic(name, 1, 1, topic_configs={"kraftwire.partition.size.bytes": PARTITION_BYTES})
            admin.create_topics([topic], timeout_ms=REQUEST_TIMEOUT_MS)
            self._topics.append(name)
            return "topic", name
        if sequence % 3 == 1:
            topic, value = self._topics[-1], str(FIRST_RETENTION_MS + sequence)
            answer = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic,
                                                         configs={"retention.ms": value})],
                                        raise_on_unknown=False)
            # kafka-python 3 answers {type: {name: "OK" or the error's text}}: anything but "OK" is a refusal.
            if [result for by_name in answer.values() for result in by_name.values()] != ["OK"]:
                raise RuntimeError(f"alter_configs refused: {answer}")
            return "config", (topic, value)
        topic = self._topics.pop(0)
        leader = admin.describe_topics([topic])[0]["partitions"][0]["replica_nodes"][0]
        target = next(b for b in self._harness.broker_ids if b != leader)
        answer = admin.alter_partition_reassignments({TopicPartition(topic, 0): [target]},
                                                     timeout_ms=REQUEST_TIMEOUT_MS)
        if any(error is not None for error in answer.values()):
            raise RuntimeError(f"alter_partition_reassignments refused: {answer}")
        return "move", (topic, target)

    def _run(self) -> None:
        admin = KafkaAdminClient(bootstrap_servers=self._harness.bootstrap, client_id="kraftwire-chaos",
                                 request_timeout_ms=REQUEST_TIMEOUT_MS)
        sequence = 0
        try:
            while not self._stop.is_set():
                sequence += 1
                try:
                    self.writes.acknowledged.append(self._write(admin, sequence))
                except Exception as exc:  # an error answer, a timeout: it may have been written, at most once
                    self.writes.failed.append(("error", f"{sequence}: {exc!r}"))
        finally:
            admin.close()


def wait_for(predicate: Callable[[], T | None], timeout: float, what: str) -> T:
    """``predicate()`` once it is true (not None, 0 or empty); TimeoutError naming ``what`` otherwise."""
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.05)
    return value


def wait_for_moves(harness: ProcessCluster, writes: Writes, timeout: float = 150.0) -> int:
    """Wait until every acknowledged move has finished (the partition's replicas are just the target:
    the follower, in another broker process than the leader, caught up and joined the ISR); returns
    how many. The bound covers a broker's requests waiting out two controller-channel timeouts (30 s
    each, Kafka's request.timeout.ms) after the last fault; a timeout names the unfinished moves."""
    moves: dict[str, int] = {}  # topic -> the broker it moves to
    for kind, key in writes.acknowledged:
        if kind == "move" and isinstance(key, tuple):
            topic, target = key
            moves[topic] = target
    admin = KafkaAdminClient(bootstrap_servers=harness.bootstrap, client_id="kraftwire-chaos-check",
                             request_timeout_ms=REQUEST_TIMEOUT_MS)
    unfinished: list = []
    try:
        def finished() -> bool:
            described = admin.describe_topics(list(moves))
            unfinished[:] = [(t["name"], moves[t["name"]], t["partitions"]) for t in described
                             if not (t["partitions"] and t["partitions"][0]["replica_nodes"] == [moves[t["name"]]])]
            return not unfinished
        try:
            wait_for(finished, timeout, "every acknowledged reassignment to finish")
        except TimeoutError as exc:
            raise TimeoutError(f"{exc}: {len(unfinished)} of {len(moves)} unfinished (topic, target, partitions): "
                               f"{unfinished[:5]}") from None
    finally:
        admin.close()
    return len(moves)


def wait_for_writes(workload: AdminWorkload, count: int, timeout: float = 60.0) -> None:
    """Wait until ``count`` more writes are acknowledged (the quorum serves again)."""
    start = len(workload.writes.acknowledged)
    wait_for(lambda: workload.acknowledged_since(start) >= count, timeout, f"{count} acknowledged writes")


def new_active(harness: ProcessCluster, old: int | None, timeout: float = 60.0) -> int:
    return wait_for(lambda: (a := harness.active()) not in (None, old) and a, timeout, "another active controller")


def kill_active(harness: ProcessCluster, workload: AdminWorkload, writes: int) -> None:
    """kill -9 the active controller, write on under its successor, restart it."""
    victim = wait_for(harness.active, 60, "an active controller")
    harness.kill(victim)
    new_active(harness, victim)
    wait_for_writes(workload, writes)
    harness.start(victim)


def pause_active(harness: ProcessCluster, workload: AdminWorkload, writes: int) -> None:
    """SIGSTOP the active controller until another leads and writes go on, then SIGCONT it (it must
    step down and follow, not write as a stale leader)."""
    victim = wait_for(harness.active, 60, "an active controller")
    harness.pause(victim)
    new_active(harness, victim)
    wait_for_writes(workload, writes)
    harness.resume(victim)


def isolate_active(harness: ProcessCluster, workload: AdminWorkload, writes: int) -> None:
    """Cut the active controller off from both peers (it keeps its clients' connections), write on
    under the majority's new leader, heal."""
    victim = wait_for(harness.active, 60, "an active controller")
    for other in harness.ids:
        if other != victim:
            harness.cut(victim, other)
    new_active(harness, victim)
    wait_for_writes(workload, writes)
    harness.heal_all()


def cut_follower_link(harness: ProcessCluster, workload: AdminWorkload, writes: int,
                      rng: random.Random) -> None:
    """Cut the link between the active controller and one follower: the other follower keeps a majority."""
    active = wait_for(harness.active, 60, "an active controller")
    follower = rng.choice([i for i in harness.ids if i != active])
    harness.cut(active, follower)
    wait_for_writes(workload, writes)
    harness.heal_all()


FAULTS = ("kill", "pause", "isolate", "cut")


def run_fault(name: str, harness: ProcessCluster, workload: AdminWorkload, writes: int,
              rng: random.Random) -> None:
    if name == "kill":
        kill_active(harness, workload, writes)
    elif name == "pause":
        pause_active(harness, workload, writes)
    elif name == "isolate":
        isolate_active(harness, workload, writes)
    else:
        cut_follower_link(harness, workload, writes, rng)


@dataclass
class Verdict:
    high_watermark: int
    acknowledged: int
    lost: list = field(default_factory=list)  # (controller, write) acknowledged but absent
    duplicated: list = field(default_factory=list)  # (controller, write, times) present more than once
    diverged: list = field(default_factory=list)  # (controller, base offset) of a batch unlike the first one's

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicated or self.diverged)


def _written(records: list[dict[str, Any]], high_watermark: int) -> Counter[tuple[str, object]]:
    """(kind, key) of every workload write among the committed records of one log."""
    found: Counter[tuple[str, object]] = Counter()
    names: dict[str, str] = {}
    for record in records:
        if record["offset"] >= high_watermark:
            continue
        fields, kind = record["fields"], record["type"]
        if kind == "TopicRecord" and fields["name"].startswith("chaos-"):
            names[fields["topic_id"]] = fields["name"]
            found[("topic", fields["name"])] += 1
        elif kind == "ConfigRecord" and fields["name"] == "retention.ms" and fields["resource_name"] in names.values():
            found[("config", (fields["resource_name"], fields["value"]))] += 1
        elif kind == "PartitionChangeRecord" and fields["topic_id"] in names and fields.get("adding_replicas"):
            found[("move", (names[fields["topic_id"]], *fields["adding_replicas"]))] += 1
    return found


def settle_and_check(harness: ProcessCluster, writes: Writes) -> Verdict:
    """Heal and resume everything, start what is down, wait until the voters converge, stop them all,
    and judge their logs offline."""
    harness.heal_all()
    for node_id in list(harness.paused):
        harness.resume(node_id)
    harness.start(*[n for n in harness.ids + harness.broker_ids if n not in harness.processes])
    high_watermark = harness.wait_converged()
    harness.stop_all()
    verdict = Verdict(high_watermark, len(writes.acknowledged))
    reference = None
    for node_id in harness.ids:
        found = _written(harness.log_dump(node_id), high_watermark)
        verdict.lost += [(node_id, w) for w in writes.acknowledged if found[w] == 0]
        verdict.duplicated += [(node_id, w, n) for w, n in found.items() if n > 1]
        batches = harness.committed_batches(node_id, high_watermark)
        if reference is None:
            reference = batches
        else:
            verdict.diverged += [(node_id, base) for (base, data), (_, expected) in zip(batches, reference)
                                 if data != expected]
            if len(batches) != len(reference):
                verdict.diverged.append((node_id, "batch count"))
    return verdict
