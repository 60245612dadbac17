"""Wall time of ``kraftwire rehearse`` on a large twin: a described cluster of ``--brokers`` brokers and
``--topics`` topics of ``--partitions-per-topic`` partitions (replication factor 3, Kafka's spread), each
partition of its own size (1-2 GB, seeded), and a plan of ``--moves`` moves (each replaces one replica
by a broker the partition does not have), run with ``--throttle`` and ``--ingress``. The command runs as a
child process and is timed from its start to its exit (the twin's boot, the plan, the whole simulated
run and the report); the report's own ``wall_seconds`` is the simulated run alone.

Run: python bench/rehearse.py [--topics 100] [--partitions-per-topic 1000] [--moves 10000]
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.provenance import header  # noqa: E402
from kraftwire.server.host.rehearse import kafka_spread  # noqa: E402


def write_inputs(root: Path, args: argparse.Namespace) -> tuple[Path, Path]:
    rng = random.Random(7)
    brokers = list(range(1, args.brokers + 1))
    topics, moves = [], []
    for t in range(args.topics):
        name = f"topic-{t:04d}"
        spread = kafka_spread(brokers, args.partitions_per_topic, 3, rng)
        sizes = {str(p): rng.randrange(10 ** 9, 2 * 10 ** 9) for p in range(args.partitions_per_topic)}
        topics.append({"name": name, "partitions": args.partitions_per_topic, "replication_factor": 3,
                       "assignment": {str(p): r for p, r in enumerate(spread)}, "sizes": sizes})
        for p, replicas in enumerate(spread):
            moves.append((name, p, replicas))
    chosen = rng.sample(moves, args.moves)
    partitions = []
    for name, p, replicas in chosen:
        target = list(replicas)
        target[rng.randrange(3)] = rng.choice([b for b in brokers if b not in replicas])
        partitions.append({"topic": name, "partition": p, "replicas": target, "log_dirs": ["any"] * 3})
    spec, plan = root / "cluster.json", root / "plan.json"
    spec.write_text(json.dumps({"brokers": brokers, "topics": topics}))
    plan.write_text(json.dumps({"version": 1, "partitions": partitions}))
    return spec, plan


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brokers", type=int, default=12)
    parser.add_argument("--topics", type=int, default=100)
    parser.add_argument("--partitions-per-topic", type=int, default=1000)
    parser.add_argument("--moves", type=int, default=10000)
    parser.add_argument("--throttle", type=int, default=100_000_000)
    parser.add_argument("--ingress", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=100)
    args = parser.parse_args()
    header()
    with tempfile.TemporaryDirectory(prefix="bench-rehearse-") as tmp:
        root = Path(tmp)
        spec, plan = write_inputs(root, args)
        report = root / "report.json"
        command = [sys.executable, "-m", "kraftwire", "rehearse", "--cluster-spec", str(spec), "--plan", str(plan),
                   "--throttle", str(args.throttle), "--ingress", str(args.ingress), "--samples", str(args.samples),
                   "--report-json", str(report), "--report-html", str(root / "report.html")]
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        wall = time.perf_counter() - started
        print(done.stdout.strip().splitlines()[0] if done.stdout.strip() else done.stderr[-2000:])
        if not report.exists():
            return 1
        result = json.loads(report.read_text())
        print(f"partitions {args.topics * args.partitions_per_topic}, moves {len(result['moves'])} "
              f"({result['moves_completed']} completed), simulated {result['simulated_seconds']:.0f} s")
        print(f"wall: {wall:.1f} s for the command (goal <= 60 s), of which the simulated run "
              f"{result['wall_seconds']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
