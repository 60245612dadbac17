"""A frozen active controller against a killed one: the first acknowledged write after each, side by side.

Each round freezes the active controller (SIGSTOP of its process; ``Cluster.pause_controller`` in one
process, what ``serve --controllers 3``'s control plane pauses with) or kills it (kill -9;
``Cluster.kill_controller``), and the clock runs from the fault until a CreateTopics (a new topic each
attempt, one partition, one replica) sent through the broker is acknowledged; then the frozen one is
resumed (the killed one restarted) and the quorum left to converge, with a write acknowledged, before
the next round. Deployments: ``processes`` (three ``kraftwire controller`` processes and one ``kraftwire
broker`` process, server/host/process_harness.py, links through its TCP proxies) and ``serve`` (a
``Cluster(controllers=3)`` with one broker in this process, as ``serve --controllers 3`` runs it), each
on the short test timers and on Kafka's defaults. p50/p99/max over ``--rounds`` rounds of each fault.
Goals: p99 ≤ 1.5 s on the short timers, ≤ 4.5 s on Kafka's, for the frozen controller as for the killed.

Run: python bench/frozen_controller.py [--rounds N] [--deployments processes,serve] [--timers short,kafka]
"""
from __future__ import annotations

import argparse
import asyncio
import functools
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from provenance import header, load_average  # noqa: E402

from kraftwire.codec import ErrorCode  # noqa: E402
from kraftwire.codec.messages import CreateTopicsRequest  # noqa: E402
from kraftwire.server.host.chaos import wait_for  # noqa: E402
from kraftwire.server.host.cluster import BackgroundCluster  # noqa: E402
from kraftwire.server.host.process_harness import ProcessCluster  # noqa: E402
from kraftwire.server.raft import Timers  # noqa: E402
from kraftwire.server.wire.client import KafkaClient, KafkaClientError  # noqa: E402

TIMEOUT_MS = 30_000  # each CreateTopics' own deadline (kafka-python's request timeout)
FAULTS = ("freeze", "kill")


class Writer:
    """CreateTopics through one broker, a new topic name each time."""

    def __init__(self, address: Callable[[], tuple[str, int]]):
        self._address = address
        self._sequence = 0

    def attempt(self) -> int | str:
        self._sequence += 1
        name = f"frozen-bench-{self._sequence}"

        async def send() -> int | str:
            client = KafkaClient(*self._address(), "frozen-controller-bench")
            try:
                answer = await asyncio.wait_for(client.send(CreateTopicsRequest(timeout_ms=TIMEOUT_MS, topics=[
                    CreateTopicsRequest.CreatableTopic(name=name, num_partitions=1, replication_factor=1)])),
                    TIMEOUT_MS / 1000 + 10)
                return answer.topics[0].error_code
            except (KafkaClientError, OSError, TimeoutError) as exc:
                return repr(exc)
            finally:
                await client.close()
        return asyncio.run(send())

    def first_acknowledged(self, since: float, limit: float = 120.0) -> float:
        """Seconds from ``since`` until an attempt is acknowledged (attempts one after another)."""
        while time.monotonic() - since < limit:
            if self.attempt() == ErrorCode.NONE:
                return time.monotonic() - since
            time.sleep(0.02)
        raise TimeoutError(f"no write acknowledged within {limit:g} s")


def process_rounds(timers: str, rounds: int) -> dict[str, list[float]]:
    seconds: dict[str, list[float]] = {fault: [] for fault in FAULTS}
    with tempfile.TemporaryDirectory(prefix="kraftwire-frozen-") as root:
        with ProcessCluster(root, brokers=1, quorum_timers=timers) as harness:
            harness.start_all()
            writer = Writer(lambda: harness.addresses[1])
            writer.first_acknowledged(time.monotonic())
            for _ in range(rounds):
                for fault in FAULTS:
                    victim = wait_for(harness.active, 60, "an active controller")
                    (harness.pause if fault == "freeze" else harness.kill)(victim)
                    seconds[fault].append(writer.first_acknowledged(time.monotonic()))
                    if fault == "freeze":
                        harness.resume(victim)
                    else:
                        harness.start(victim)
                    harness.wait_converged()
                    writer.first_acknowledged(time.monotonic())
    return seconds


def serve_rounds(timers: str, rounds: int) -> dict[str, list[float]]:
    seconds: dict[str, list[float]] = {fault: [] for fault in FAULTS}
    quorum_timers = Timers.kafka_defaults() if timers == "kafka" else Timers()
    with BackgroundCluster(brokers=1, controllers=3, quorum_timers=quorum_timers) as bg:
        cluster = bg.cluster
        broker = bg.call(lambda: (cluster.brokers[0].host, cluster.brokers[0].port))
        writer = Writer(lambda: broker)
        writer.first_acknowledged(time.monotonic())
        for _ in range(rounds):
            for fault in FAULTS:
                victim = wait_for(lambda: bg.call(lambda: cluster.active_controller_id), 60, "an active controller")
                if fault == "freeze":
                    bg.call(cluster.pause_controller, victim)
                else:
                    bg.run(cluster.kill_controller(victim))
                seconds[fault].append(writer.first_acknowledged(time.monotonic()))
                if fault == "freeze":
                    bg.call(cluster.resume_controller, victim)
                else:
                    bg.run(cluster.start_controller(victim))
                log = bg.call(cluster.logs.__getitem__, bg.call(cluster._controller_index, victim))
                wait_for(functools.partial(bg.call, caught_up, cluster, log), 60, "the victim to catch up")
                writer.first_acknowledged(time.monotonic())
    return seconds


def caught_up(cluster, log) -> bool:
    """Whether a resumed or restarted controller's log follows and holds what the leader committed."""
    return not log.active and log.high_watermark >= cluster.log.high_watermark


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10, help="rounds of each fault per configuration (default 10)")
    parser.add_argument("--deployments", default="processes,serve")
    parser.add_argument("--timers", default="short,kafka")
    args = parser.parse_args()
    header()
    goals = {"short": 1.5, "kafka": 4.5}
    print("\n| deployment | timers | fault | rounds | p50 s | p99 s | max s | goal p99 | met |\n"
          "|---|---|---|---|---|---|---|---|---|")
    started = time.monotonic()
    for deployment in args.deployments.split(","):
        for timers in args.timers.split(","):
            run = process_rounds if deployment == "processes" else serve_rounds
            seconds = run(timers, args.rounds)
            for fault, values in seconds.items():
                p99 = percentile(values, 0.99)
                name = {"processes": {"freeze": "SIGSTOP", "kill": "kill -9"},
                        "serve": {"freeze": "pause", "kill": "kill"}}[deployment][fault]
                met = "yes" if p99 <= goals[timers] else "no"
                print(f"| {deployment} | {timers} | {name} | {len(values)} | {statistics.median(values):.3f} | "
                      f"{p99:.3f} | {max(values):.3f} | ≤ {goals[timers]} | {met} |", flush=True)
    print(f"\n{time.monotonic() - started:.0f} s; load average at the end: {load_average()}")


if __name__ == "__main__":
    main()
