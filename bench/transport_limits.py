"""Server memory under hostile clients, with the default transport limits, and the stall one huge request
causes on the other listeners.

Each load runs against a fresh ``kraftwire serve`` process (3 brokers, default limits) for ``--seconds``;
the server's RSS is sampled every 0.1 s (/proc/PID/status) and its peak reported against ``--bound``:

* pipelining: ``--pipeliners`` connections write Metadata v12 requests as fast as the server reads them
  and never read an answer (flow control must stop reading them);
* partial frames: 8 connections each announce a 90 MiB frame and send all of it but the last byte
  (queued.max.request.bytes must hold all but one back);
* many connections: ``--connections`` connections, each holding half of a small frame.

Then the stall: in this process, a cluster whose broker 1 gets one Metadata request naming ``--topics``
topics while a client times ApiVersions round trips on broker 2, with large requests decoded and encoded
in a worker thread (what kraftwire does) and inline on the event loop (how it was before), the measured
choice.

Run: python bench/transport_limits.py [--seconds 12] [--bound-mib 300] [--topics 600000]
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import select
import socket
import statistics
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from provenance import commit, load_average  # noqa: E402
from kraftwire.codec.messages import ApiVersionsRequest, MetadataRequest  # noqa: E402
from tests.fuzz_frames import rss_bytes  # noqa: E402
from tests.raw_client import RawConnection, encode_request  # noqa: E402
from tests.served import Served  # noqa: E402

_SIZE = struct.Struct(">i")
MIB = 1 << 20


def serve() -> Served:
    return Served(Path(tempfile.mkdtemp(prefix="kraftwire-bench-")), "--brokers", "3", "--port", "0",
                  "--controller-port", "0", "--data-dir", "data", "--log-level", "WARNING")


def sample_rss(pid: int, seconds: float, stop: threading.Event) -> list[int]:
    samples = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not stop.is_set():
        samples.append(rss_bytes(pid))
        time.sleep(0.1)
    return samples


def pipelining(addresses: list[str], connections: int, stop: threading.Event) -> None:
    request = encode_request(MetadataRequest(topics=None, allow_auto_topic_creation=False,
                                             include_topic_authorized_operations=False), 12, 1) * 2000
    socks = []
    for i in range(connections):
        host, port = addresses[i % len(addresses)].rsplit(":", 1)
        sock = socket.create_connection((host, int(port)))
        sock.setblocking(False)
        socks.append(sock)
    while not stop.is_set():
        _, writable, _ = select.select([], socks, [], 0.1)
        for sock in writable:
            try:
                sock.send(request)
            except BlockingIOError:
                pass
    for sock in socks:
        sock.close()


def partial_frames(addresses: list[str], stop: threading.Event, size: int = 90 * MIB) -> None:
    chunk = bytes(MIB)
    socks, left = [], []
    for i in range(8):
        host, port = addresses[i % len(addresses)].rsplit(":", 1)
        sock = socket.create_connection((host, int(port)))
        sock.sendall(_SIZE.pack(size) + struct.pack(">hhi", 3, 12, 1))
        sock.setblocking(False)
        socks.append(sock)
        left.append(size - 8 - 1)
    while not stop.is_set():
        _, writable, _ = select.select([], [s for s, n in zip(socks, left) if n], [], 0.1)
        for sock in writable:
            i = socks.index(sock)
            try:
                left[i] -= sock.send(chunk[:min(left[i], MIB)])
            except BlockingIOError:
                pass
    for sock in socks:
        sock.close()


def many_connections(addresses: list[str], count: int, stop: threading.Event) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    half = encode_request(ApiVersionsRequest(), 0, 1)[:10]
    socks = []
    for i in range(count):
        host, port = addresses[i % len(addresses)].rsplit(":", 1)
        try:
            sock = socket.create_connection((host, int(port)), timeout=5)
            sock.sendall(half)
        except OSError:
            break
        socks.append(sock)
    stop.wait()
    for sock in socks:
        sock.close()


def run_load(name: str, load, seconds: float, bound: int) -> bool:
    served = serve()
    try:
        pid = served.process.pid
        addresses = served.bootstrap.split(",")
        baseline = rss_bytes(pid)
        stop = threading.Event()
        worker = threading.Thread(target=load, args=(addresses, stop), daemon=True)
        worker.start()
        samples = sample_rss(pid, seconds, stop)
        stop.set()
        worker.join(30)
        alive = served.process.poll() is None
        with RawConnection(addresses[0]) as connection:
            answered = connection.send(ApiVersionsRequest(), 3).error_code == 0
        peak = max(samples)
        print(f"{name:<58} baseline {baseline / MIB:6.1f} MiB  peak {peak / MIB:6.1f} MiB  "
              f"end {samples[-1] / MIB:6.1f} MiB  alive {alive}  answers {answered}  "
              f"{'within' if peak <= bound else 'OVER'} {bound // MIB} MiB", flush=True)
        return peak <= bound and alive and answered
    finally:
        served.stop()


def stall(topics: int, rounds: int) -> None:
    from kraftwire.server.host.cluster import BackgroundCluster
    from kraftwire.server.wire import transport

    wanted = [MetadataRequest.MetadataRequestTopic(name=f"topic-{i:024d}") for i in range(topics)]
    frame = encode_request(MetadataRequest(topics=wanted), 1, 1)
    threaded = transport.LARGE_REQUEST_BYTES
    for label, threshold in (("worker thread (kraftwire)", threaded), ("inline on the event loop", 1 << 62)):
        worst, counts, totals = [], [], []
        for _ in range(rounds):
            transport.LARGE_REQUEST_BYTES = threshold
            with BackgroundCluster(brokers=2) as bg:
                one, two = (bg.cluster.broker(i) for i in (1, 2))
                big = socket.create_connection((one.host, one.port))
                other = RawConnection(f"{two.host}:{two.port}")
                started = time.perf_counter()
                big.sendall(frame)
                latencies = []
                while not select.select([big], [], [], 0)[0]:
                    sent = time.perf_counter()
                    other.send(ApiVersionsRequest(), 0)
                    latencies.append(time.perf_counter() - sent)
                _SIZE.unpack(big.recv(4))
                totals.append(time.perf_counter() - started)
                worst.append(max(latencies))
                counts.append(len(latencies))
                big.close()
                other.sock.close()
        transport.LARGE_REQUEST_BYTES = threaded
        print(f"stall, {len(frame) / MIB:.1f} MiB Metadata request, {label:<26}: answer after "
              f"{statistics.median(totals):5.1f} s; broker 2 answered {statistics.median(counts):5.0f} ApiVersions "
              f"meanwhile, worst round trip {statistics.median(worst):5.2f} s (medians of {rounds})", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=12.0)
    parser.add_argument("--bound-mib", type=int, default=300)
    parser.add_argument("--pipeliners", type=int, default=8)
    parser.add_argument("--connections", type=int, default=5000)
    parser.add_argument("--topics", type=int, default=600_000)
    parser.add_argument("--stall-rounds", type=int, default=1)
    args = parser.parse_args()
    bound = args.bound_mib * MIB
    print(f"python bench/transport_limits.py --seconds {args.seconds:g} --bound-mib {args.bound_mib} "
          f"--pipeliners {args.pipeliners} --connections {args.connections} --topics {args.topics}")
    print(f"commit: {commit()}; load average at start: {load_average()}", flush=True)
    ok = run_load(f"pipelining without reading ({args.pipeliners} connections)",
                  lambda a, s: pipelining(a, args.pipeliners, s), args.seconds, bound)
    ok &= run_load("partial 90 MiB frames (8 connections)", partial_frames, args.seconds, bound)
    ok &= run_load(f"many connections ({args.connections}, half a frame each)",
                   lambda a, s: many_connections(a, args.connections, s), args.seconds, bound)
    if args.topics:
        stall(args.topics, args.stall_rounds)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
