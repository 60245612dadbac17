"""Idle and active connections: the server's memory per idle connection, and small-request latency and
CPU with and without thousands of idle connections open.

Two processes: the server (a kraftwire cluster, 3 brokers, the code ``kraftwire serve`` runs, started by
bench/requests.py's server mode and pinned to CPU 0) and this process, the load generator, pinned to
CPU 1. First ``--active`` connections run ApiVersions v3 in a closed loop (one request in flight each)
for ``--seconds`` after a warm-up, with nothing else open. Then ``--idle`` connections are opened over
the brokers' ports, each sending one ApiVersions request and reading its answer before it falls silent;
the server's resident memory (VmRSS) is read before and after. Then the same active load runs again
beside them. Answers are checked (size, correlation id) as in bench/requests.py.

Run: python bench/connections.py [--idle 10000] [--active 64] [--seconds 3]
"""
from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import uvloop  # noqa: E402

from provenance import header, load_average  # noqa: E402
from requests import GENERATOR_CPU, PINNED, Server, load, request_frame  # noqa: E402
from kraftwire.codec.messages import ApiVersionsRequest  # noqa: E402

BATCH = 500  # connections opened at a time


class _Idle(asyncio.Protocol):
    """Sends one request, waits for its whole answer, then stays open and silent."""

    def __init__(self, frame: bytes, answered: asyncio.Future):
        self.frame, self.answered, self.received = frame, answered, b""

    def connection_made(self, transport):
        self.transport = transport
        transport.write(self.frame)

    def data_received(self, data):
        self.received += data
        if len(self.received) >= 4 and len(self.received) == 4 + int.from_bytes(self.received[:4], "big"):
            if not self.answered.done():
                self.answered.set_result(None)

    def connection_lost(self, exc):
        if not self.answered.done():
            self.answered.set_exception(ConnectionError(f"the server closed an idle connection: {exc}"))


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def open_idle(ports: list[int], frame: bytes, count: int) -> list:
    loop = asyncio.get_running_loop()
    transports = []
    for start in range(0, count, BATCH):
        answers = []
        for i in range(start, min(start + BATCH, count)):
            answered = loop.create_future()
            transport, _ = await loop.create_connection(lambda a=answered: _Idle(frame, a), "127.0.0.1",
                                                        ports[i % len(ports)])
            transports.append(transport)
            answers.append(answered)
        await asyncio.wait_for(asyncio.gather(*answers), 60)
    return transports


def row(name: str, r: dict) -> None:
    print(f"  {name:<38}{r['rps']:>9,.0f}{r['p50_ms']:>8.2f}{r['p99_ms']:>8.2f}{r['server_cpu']:>8.0%}"
          f"{r['server_us']:>9.1f}   load {load_average()}", flush=True)


async def bench(args) -> None:
    frame = request_frame(ApiVersionsRequest(client_software_name="bench", client_software_version="1"), 3)
    with Server("kraftwire") as server:
        pid = server.process.pid
        print(f"  {'case':<38}{'req/s':>9}{'p50 ms':>8}{'p99 ms':>8}{'srv CPU':>8}{'us/req':>9}")
        row(f"{args.active} active, nothing else open", await load(server.ports, frame, args.active, args.seconds, pid))
        before = rss_kib(pid)
        idle = await open_idle(server.ports, frame, args.idle)
        await asyncio.sleep(1)
        after = rss_kib(pid)
        row(f"{args.active} active beside {args.idle:,} idle",
            await load(server.ports, frame, args.active, args.seconds, pid))
        print(f"server RSS: {before / 1024:.1f} MiB before the idle connections, {after / 1024:.1f} MiB with "
              f"{len(idle):,} open ({(after - before) / len(idle):.1f} KiB each)")
        for transport in idle:
            transport.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=int, default=10000)
    parser.add_argument("--active", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = args.idle + args.active + 256
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(needed, hard), hard))  # the server inherits it
    if PINNED:
        os.sched_setaffinity(0, {GENERATOR_CPU})
    header()
    uvloop.run(bench(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
