"""The fuzz test's long run: ``--frames`` (default 1,000,000) mutated frames for every API at every
version of every listener, against a live ``kraftwire serve`` (3 brokers), seeded by ``--seed``.

Prints the frames sent and their rate, the connections the server closed (its answer to most bad
frames), the server's RSS at the start and its peak (sampled every 500 frames), whether every listener
still answers a fresh ApiVersions, the ERROR/CRITICAL lines the server logged, and ``kraftwire log
verify``'s verdict after a clean stop. Exit status 0 when all of that holds.

Run: python bench/fuzz.py [--frames 1000000] [--seed 1] [--batch 4] [--wait-ms 2]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from provenance import commit, load_average  # noqa: E402
from tests.fuzz_frames import FuzzRun, api_versions_ok, frames, rss_bytes, served_versions  # noqa: E402
from tests.served import Served  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--report-every", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=4,
                        help="frames pipelined per send (default 4; those after a frame that makes the server "
                             "close the connection are never read, as in Kafka; 1 loses fewer that way, slowly)")
    parser.add_argument("--wait-ms", type=float, default=2.0, help="wait for answers or a close after a send")
    args = parser.parse_args()
    print(f"python bench/fuzz.py --frames {args.frames} --seed {args.seed} --batch {args.batch} "
          f"--wait-ms {args.wait_ms:g}")
    print(f"commit: {commit()}; load average at start: {load_average()}", flush=True)
    directory = Path(tempfile.mkdtemp(prefix="kraftwire-fuzz-"))
    served = Served(directory, "--brokers", "3", "--port", "0", "--controller-port", "0", "--data-dir", "data",
                    "--log-level", "INFO")
    pid = served.process.pid
    start_rss = rss_bytes(pid)
    targets = {address: served_versions(address) for address in served.bootstrap.split(",")}
    targets[controller_address(served)] = served_versions(controller_address(served))
    combinations = sum(high - low + 1 for versions in targets.values() for low, high in versions.values())
    run = FuzzRun(pid)
    generator = frames(targets, args.seed)
    started = time.perf_counter()
    while run.sent < args.frames:
        run.send(generator, min(run.sent + args.report_every, args.frames), batch=args.batch,
                 wait=args.wait_ms / 1000)
        elapsed = time.perf_counter() - started
        print(f"  {run.sent:>9} frames  {run.sent / elapsed:7.0f}/s  {run.answered:>8} answered  "
              f"{run.closed:>8} closed by the server  "
              f"peak RSS {run.max_rss >> 20} MiB  alive {served.process.poll() is None}", flush=True)
        if served.process.poll() is not None:
            break
    elapsed = time.perf_counter() - started
    alive = served.process.poll() is None
    answering = alive and all(api_versions_ok(address) for address in targets)
    logged = served.stop() if alive else served.logged()
    problems = [line for line in logged.splitlines() if " ERROR " in line or " CRITICAL " in line]
    verify = subprocess.run([sys.executable, "-m", "kraftwire", "log", "verify", str(directory / "data")],
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    print(f"frames {run.sent} over {combinations} (listener, api, version) combinations, {len(run.covered)} covered; "
          f"{elapsed:.0f} s ({run.sent / elapsed:.0f}/s); {run.answered} answered and {run.closed} connections "
          f"closed by the server (its verdict on {run.answered + run.closed} frames)")
    print(f"RSS {start_rss >> 20} MiB at start, peak {run.max_rss >> 20} MiB; still up: {alive}; "
          f"fresh ApiVersions answered on every listener: {answering}; clean stop: {'Traceback' not in logged}")
    print(f"ERROR/CRITICAL lines logged: {len(problems)}" + "".join(f"\n  {line}" for line in problems[:10]))
    print(f"log verify: {verify.stdout.strip() or verify.stderr.strip()}")
    shutil.rmtree(directory, ignore_errors=True)
    return 0 if alive and answering and not problems and verify.returncode == 0 else 1


def controller_address(served: Served) -> str:
    return re.search(r"controller (\S+:\d+)", served.wait_logged("ready: brokers")).group(1)


if __name__ == "__main__":
    sys.exit(main())
