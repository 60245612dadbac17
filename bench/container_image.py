"""The container images: their sizes, how long a cached rebuild takes, and how soon a started container
is ready. (bench/image.py is the metadata image, a different thing.)

Sizes as podman reports them (uncompressed layers) for the server image, its base and the audit image.
Rebuild: ``podman build`` of the server target with every layer cached, as CI's re-runs and a re-run of
tests/setup.sh see it. Start-to-ready, ``--runs`` times: from ``podman start`` of a created container
(its brokers' ports published) to the first ApiVersions answer to a client on the host, the probe the
image's HEALTHCHECK sends (server/host/healthcheck.py); and to the "kraftwire ready on" line in its log.
Goals (issue 35): the server image ≤ 250 MB, ready ≤ 2 s after the container starts.

Needs podman and the images tests/setup.sh builds (tests/container_setup.sh).
Run: python bench/container_image.py [--runs 5] [--image localhost/kraftwire:latest]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from provenance import header  # noqa: E402
from served import free_ports  # noqa: E402
from kraftwire.server.host.healthcheck import Unhealthy, probe  # noqa: E402

IMAGES = {"server": "localhost/kraftwire:latest", "base": "docker.io/library/python:3.11-slim",
          "audit": "localhost/kraftwire-audit:latest", "executor": "localhost/kraftwire-executor:latest"}


def podman(*args: str, timeout: float = 600) -> str:
    return subprocess.run(["podman", *args], check=True, capture_output=True, text=True, timeout=timeout).stdout


def size_mb(image: str) -> float | None:
    done = subprocess.run(["podman", "image", "inspect", image], capture_output=True, text=True)
    return json.loads(done.stdout)[0]["Size"] / 1e6 if done.returncode == 0 else None


def cached_rebuild_seconds() -> float:
    start = time.perf_counter()
    podman("build", "-q", "--format", "docker", "-f", "docker/Dockerfile", "--target", "kraftwire",
           "-t", IMAGES["server"], str(ROOT))
    return time.perf_counter() - start


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (the container's kraftwire, seen from the host)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_to_ready(image: str) -> tuple[float, float, float, float]:
    """(seconds until ``podman start`` returned, to the first ApiVersions answer, to the ready line, and the
    CPU seconds kraftwire spent until it answered): on a loaded machine the CPU time is the firmer figure."""
    port = free_ports(3)
    name = f"kraftwire-bench-{uuid.uuid4().hex[:8]}"
    podman("create", "--name", name, "-p", f"{port}-{port + 2}:{port}-{port + 2}", "-e", f"KRAFTWIRE_PORT={port}",
           image)
    try:
        start = time.perf_counter()
        podman("start", name)
        started = time.perf_counter() - start
        while True:
            try:
                probe("127.0.0.1", port, timeout=1)
                answered = time.perf_counter() - start
                cpu = cpu_seconds(int(podman("inspect", "--format", "{{.State.Pid}}", name).strip()))
                break
            except Unhealthy:
                time.sleep(0.01)
            if time.perf_counter() - start > 60:
                raise SystemExit(f"{name} did not answer within 60 s: {podman('logs', name)}")
        while "kraftwire ready on" not in podman("logs", name):
            time.sleep(0.01)
        logged = time.perf_counter() - start
        return started, answered, logged, cpu
    finally:
        subprocess.run(["podman", "rm", "-f", "-v", name], capture_output=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--image", default=IMAGES["server"])
    args = parser.parse_args()
    header()
    for what, image in IMAGES.items():
        size = size_mb(image)
        print(f"size {what:8} {image}: " + (f"{size:.1f} MB" if size is not None else "not built"))
    print(f"cached rebuild of the server image: {cached_rebuild_seconds():.1f} s")
    started, answered, logged, cpu = zip(*(start_to_ready(args.image) for _ in range(args.runs)))
    for label, values in (("'podman start' returning", started), ("first ApiVersions answer", answered),
                          ("'kraftwire ready on' logged", logged),
                          ("the answer, kraftwire's CPU", cpu)):
        print(f"start to {label}: median {statistics.median(values):.2f} s, max {max(values):.2f} s "
              f"over {args.runs} runs")
    size = size_mb(IMAGES["server"]) or 0
    print(f"goals: server image ≤ 250 MB: {'yes' if size <= 250 else 'no'}; "
          f"ready ≤ 2 s: {'yes' if max(answered) <= 2 else 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
