"""Chaos soak over node processes: three ``kraftwire controller`` and ``--brokers`` ``kraftwire broker``
processes (server/host/process_harness.py), kafka-python's admin client writing topics, topic configs and
reassignments throughout (server/host/chaos.py), and ``--rounds`` faults drawn at random from kill -9 of
the active controller (restarted after), SIGSTOP/SIGCONT of it, its isolation from both peers and a cut
link to one follower, each held until ``--writes`` more writes are acknowledged. At the end every
controller is stopped and its log read offline: every acknowledged write must be in every log exactly
once, the committed logs must agree byte for byte, and every acknowledged reassignment (between broker
processes) must have finished. The goal is 0 losses, duplicates and divergences.

Run: python bench/chaos.py [--rounds N] [--writes N] [--brokers N] [--seed N] [--quorum-timers short|kafka]
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kraftwire.server.host.chaos import (FAULTS, AdminWorkload, run_fault, settle_and_check, wait_for,  # noqa: E402
                                        wait_for_moves)
from kraftwire.server.host.process_harness import ProcessCluster  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20, help="faults thrown (default 20)")
    parser.add_argument("--writes", type=int, default=10, help="acknowledged writes under each fault (default 10)")
    parser.add_argument("--brokers", type=int, default=2, help="broker processes (default 2)")
    parser.add_argument("--seed", type=int, default=15, help="seed of the fault sequence (default 15)")
    parser.add_argument("--quorum-timers", choices=("short", "kafka"), default="short")
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    print(f"command: python bench/chaos.py {' '.join(sys.argv[1:])}".rstrip())
    print(f"commit {commit}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")
    rng = random.Random(args.seed)
    started = time.monotonic()
    faults = {name: 0 for name in FAULTS}
    with tempfile.TemporaryDirectory(prefix="kraftwire-chaos-") as root:
        with ProcessCluster(root, brokers=args.brokers, quorum_timers=args.quorum_timers) as harness:
            harness.start_all()
            wait_for(harness.active, 120, "a first active controller")
            workload = AdminWorkload(harness).start()
            try:
                for _ in range(args.rounds):
                    name = rng.choice(FAULTS)
                    run_fault(name, harness, workload, args.writes, rng)
                    faults[name] += 1
            finally:
                writes = workload.stop()
            moved = time.monotonic()
            moves = wait_for_moves(harness, writes, 300)
            moved = time.monotonic() - moved
            verdict = settle_and_check(harness, writes)
            kills, pauses, cuts = harness.kills, harness.pauses, harness.cuts
    kinds = {kind: sum(1 for k, _ in writes.acknowledged if k == kind) for kind in ("topic", "config", "move")}
    print(f"{sum(faults.values())} faults {faults}: {kills} kills -9, {pauses} SIGSTOPs, {cuts} link cuts, "
          f"in {time.monotonic() - started:.0f} s (load average {os.getloadavg()[0]:.1f} at the end)")
    print(f"acknowledged writes: {verdict.acknowledged} {kinds}; failed or unanswered: {len(writes.failed)}")
    for _kind, failure in writes.failed[:10]:
        print("  ", failure[:200])
    print(f"every acknowledged move finished ({moves}, between broker processes), {moved:.1f} s after the last fault")
    print(f"committed log: {verdict.high_watermark} offsets on each of {len(harness.ids)} controllers")
    print(f"lost: {len(verdict.lost)}, duplicated: {len(verdict.duplicated)}, diverged batches: "
          f"{len(verdict.diverged)}")
    for problem in (verdict.lost + verdict.duplicated + verdict.diverged)[:20]:
        print("  ", problem)
    return 0 if verdict.ok else 1


if __name__ == "__main__":
    sys.exit(main())
