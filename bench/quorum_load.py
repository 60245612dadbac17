"""Controller processes on Kafka's timers starved by SIGSTOP/SIGCONT, the way a loaded machine starves
them (issue 15: a leader lost after ~5 s and then none elected for over a minute, at load average 16 on
2 cores): how long the quorum goes without a leader, and how soon after the starving stops it has one.

Three ``kraftwire controller`` processes and ``--brokers`` brokers (server/host/process_harness.py), each
process frozen independently, so no real CPU is burnt on the shared machine:

* ``--mode duty``: every process runs about ``--run-ms`` then stops about ``--stop-ms``, again and again
  (each ±50 %), the share of the CPU a process gets at a high load average;
* ``--mode bursts``: two threads each freeze a random controller for ``--pause`` seconds (a range),
  about every ``--every`` seconds, so at times two of the three are frozen at once.

The active controller is asked with DescribeQuorum every 0.2 s (a frozen one is skipped). Printed: every
change of (active controller, epoch), the longest stretch without one, and the seconds from the end of
the starving to an active controller.

Run: python bench/quorum_load.py [--mode duty|bursts] [--seconds N] [--brokers N] [--seed N] ...
"""
from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kraftwire.server.host.process_harness import ProcessCluster  # noqa: E402


def duty(cluster: ProcessCluster, node_id: int, rng: random.Random, run_ms: float, stop_ms: float,
         stop: threading.Event) -> None:
    process = cluster.processes[node_id]
    while not stop.is_set():
        time.sleep(rng.uniform(0.5, 1.5) * run_ms / 1000)
        process.send_signal(signal.SIGSTOP)
        time.sleep(rng.uniform(0.5, 1.5) * stop_ms / 1000)
        process.send_signal(signal.SIGCONT)


def bursts(cluster: ProcessCluster, rng: random.Random, pause: tuple[float, float], every: float,
           stop: threading.Event) -> None:
    while not stop.is_set():
        victim = rng.choice(cluster.ids)
        if victim not in cluster.paused:
            cluster.pause(victim)
            time.sleep(rng.uniform(*pause))
            cluster.resume(victim)
        time.sleep(rng.expovariate(1 / every))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=("duty", "bursts"), default="duty")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the starving lasts (default 60)")
    parser.add_argument("--brokers", type=int, default=3, help="broker processes, starved too (default 3)")
    parser.add_argument("--run-ms", type=float, default=20.0, help="duty: running stretch (default 20)")
    parser.add_argument("--stop-ms", type=float, default=140.0, help="duty: stopped stretch (default 140)")
    parser.add_argument("--pause", type=float, nargs=2, default=(0.5, 3.0), help="bursts: seconds frozen")
    parser.add_argument("--every", type=float, default=1.0, help="bursts: mean seconds between freezes")
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    print(f"command: python bench/quorum_load.py {' '.join(sys.argv[1:])}".rstrip())
    print(f"commit {commit}, load average at the start {os.getloadavg()[0]:.2f}", flush=True)
    rng = random.Random(args.seed)
    with ProcessCluster(tempfile.mkdtemp(prefix="quorum-load-"), brokers=args.brokers,
                        quorum_timers="kafka") as cluster:
        cluster.start_all()
        stop = threading.Event()
        if args.mode == "duty":
            threads = [threading.Thread(target=duty, args=(cluster, node_id, random.Random(rng.random()),
                                                           args.run_ms, args.stop_ms, stop))
                       for node_id in cluster.ids + cluster.broker_ids]
        else:
            threads = [threading.Thread(target=bursts, args=(cluster, random.Random(rng.random()), tuple(args.pause),
                                                             args.every, stop)) for _ in range(2)]
        for thread in threads:
            thread.start()
        started = last_seen = time.monotonic()
        longest, previous = 0.0, None
        while time.monotonic() - started < args.seconds:
            described = cluster.describe_quorum()
            now = time.monotonic()
            current = None if described is None else (described[0], described[1].leader_epoch)
            if current is not None:
                longest, last_seen = max(longest, now - last_seen), now
            if current != previous:
                print(f"{now - started:6.1f} s  active controller and epoch: {current}", flush=True)
                previous = current
            time.sleep(0.2)
        longest = max(longest, time.monotonic() - last_seen)
        stop.set()
        for thread in threads:
            thread.join()
        for node_id in list(cluster.paused):
            cluster.resume(node_id)
        for process in cluster.processes.values():  # a duty thread may have left one stopped
            process.send_signal(signal.SIGCONT)
        ended = time.monotonic()
        while cluster.active() is None:
            if time.monotonic() - ended > 120:
                print("no active controller 120 s after the starving stopped")
                return 1
            time.sleep(0.1)
        print(f"longest stretch without an active controller: {longest:.1f} s; active controller "
              f"{time.monotonic() - ended:.1f} s after the starving stopped; "
              f"load average at the end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
