"""Request throughput and latency of kraftwire's transport, against a bare uvloop framed echo server.

Three processes on the 2-core machine: the server under test (a kraftwire cluster, 3 brokers, the code
``kraftwire serve`` runs; or the echo server) pinned to CPU 0, and this process, the load generator,
pinned to CPU 1. The generator keeps ``--connections`` TCP connections with one request in flight each
(a closed loop, as admin clients do), writes pre-encoded requests whose correlation id it patches in, and
times each answer. The echo server speaks the same framing and answers every request with one fixed
small frame carrying its correlation id: the ceiling for a Python asyncio server on that core.

Cases, each run ``--rounds`` times alternately against kraftwire and the echo server (medians reported):
ApiVersions v3 and Metadata v12 (all topics of an empty cluster). Then Metadata v12 for ``--topics`` x
``--partitions`` (replication factor 3): over the wire (served from the cached encoding), and the broker's
Metadata handler timed in-process with the cache hit vs the response built and encoded afresh.

Also printed: the server process's CPU use (near 100 % means the server was the limit), its CPU time per
request (and that time's user and system parts: Python and the event loop, the kernel's socket calls),
and the generator's own CPU use (near 100 % means the generator was the limit). Last, a figure
no load from elsewhere can move: the Python bytecodes and calls one request takes from the socket's
bytes to the answer handed to the transport (``sys.settrace`` with opcode events, in-process, a broker's
connection and the echo's protocol fed the same frame through a transport that drops what it is given).

With ``--instructions`` (valgrind installed; a few minutes) a figure that no load moves either: the CPU
instructions of that same in-process path per request, counted by callgrind over 2,000 requests fed
from within one C function that it alone counts (start-up and warm-up left out). Under load the
server's CPU time per request scatters; the instructions do not.

With ``--against REV`` a third server runs in every round: the same cluster from an exported copy of
commit REV (``git archive``, imported through PYTHONPATH), so that code before and after a change is
measured side by side, under the same load from elsewhere; the in-process counts are taken for it too.

Run: python bench/requests.py [--connections 64] [--seconds 3] [--rounds 3] [--against REV] [--instructions]
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import itertools
import json
import os
import re
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import timeit
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import uvloop  # noqa: E402

from echo_server import ECHO_BODY, Echo as _Echo  # noqa: E402
from provenance import export_commit, header, load_average  # noqa: E402

from kraftwire import codec  # noqa: E402
from kraftwire.codec import records as rec  # noqa: E402
from kraftwire.server.controller.result import ControllerResult  # noqa: E402
from kraftwire.codec.messages import (ApiVersionsRequest, ApiVersionsResponse, MetadataRequest,  # noqa: E402
                            MetadataResponse, RequestHeader, ResponseHeader)

_SIZE = struct.Struct(">i")
_CORRELATION = struct.Struct(">i")
_SIZE_AND_CORRELATION = struct.Struct(">ii")
SERVER_CPU, GENERATOR_CPU = 0, 1
# Decided at import, before this process pins itself: a server process it starts inherits its CPU mask,
# so the server is told its CPU (it sat on the generator's CPU when it was left to find out).
PINNED = len(os.sched_getaffinity(0)) >= 2 and {SERVER_CPU, GENERATOR_CPU} <= os.sched_getaffinity(0)


# --- servers (run in their own process) ---------------------------------------------------------


def seed_topics(topics: int, partitions: int):
    """A decision creating ``topics`` x ``partitions`` with replicas on brokers 1-3, for controller.write."""
    def decide(image):
        records = []
        for t in range(topics):
            topic_id = uuid.uuid4()
            records.append(rec.TopicRecord(name=f"bench-{t:03d}", topic_id=topic_id))
            for p in range(partitions):
                replicas = [(p + k) % 3 + 1 for k in range(3)]
                records.append(rec.PartitionRecord(partition_id=p, topic_id=topic_id, replicas=replicas, isr=replicas,
                                                   leader=replicas[0], leader_epoch=0, partition_epoch=0))
        return ControllerResult(records)
    return decide


async def serve(kind: str, topics: int, partitions: int) -> None:
    """Start the server on ephemeral ports, print ``ready`` and its ports, serve until SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    if kind == "echo":
        server = await loop.create_server(_Echo, "127.0.0.1", 0)
        print("ready", server.sockets[0].getsockname()[1], flush=True)
        await stop.wait()
        server.close()
        return
    from kraftwire.server.host.cluster import Cluster
    cluster = Cluster(brokers=3)
    await cluster.start()
    if topics:
        await cluster.controller.write(seed_topics(topics, partitions))
        await settle()
    print("ready", *(b.port for b in cluster.brokers), flush=True)
    await stop.wait()
    await cluster.stop()


async def settle(limit: float = 60.0) -> None:
    """Wait until the loop has been idle for a while (the brokers have acted on the new partitions)."""
    loop = asyncio.get_running_loop()
    deadline, quiet = loop.time() + limit, 0
    while quiet < 10 and loop.time() < deadline:
        start = loop.time()
        await asyncio.sleep(0.05)
        quiet = quiet + 1 if loop.time() - start < 0.06 else 0


# --- load generator ----------------------------------------------------------------------------


def request_frame(request, version: int) -> bytes:
    out = bytearray(b"\0\0\0\0")
    RequestHeader(request_api_key=request.API_KEY, request_api_version=version, correlation_id=0,
                  client_id="bench").encode_into(out, codec.request_header_version(request.API_KEY, version))
    request.encode_into(out, version)
    _SIZE.pack_into(out, 0, len(out) - 4)
    return bytes(out)


class _Load(asyncio.Protocol):
    """One connection, one request in flight: send, wait for the whole answer, record, send again."""

    def __init__(self, frame: bytes, run: "_Run"):
        self.frame = bytearray(frame)
        self.run = run
        self.buffer = bytearray()
        self.correlation_id = 0
        self.sent_ns = 0

    def connection_made(self, transport):
        self.transport = transport

    def send(self):
        self.correlation_id += 1
        _CORRELATION.pack_into(self.frame, 8, self.correlation_id)
        self.sent_ns = time.perf_counter_ns()
        self.transport.write(self.frame)  # reused only after its answer came: it has been sent by then

    def data_received(self, data):
        if self.buffer:
            self.buffer += data
            data = self.buffer
        if len(data) < 8:
            return self._keep(data)
        size, correlation_id = _SIZE_AND_CORRELATION.unpack_from(data, 0)
        if len(data) < 4 + size:
            return self._keep(data)
        now = time.perf_counter_ns()
        if correlation_id != self.correlation_id or len(data) != 4 + size:
            raise RuntimeError("not exactly one answer, with the request's correlation id")
        self.buffer = bytearray()
        run = self.run
        if run.measuring:
            run.latencies_ns.append(now - self.sent_ns)
        if not run.stopped:
            self.send()
        else:
            run.idle(self)

    def _keep(self, data):
        if data is not self.buffer:
            self.buffer += data

    def connection_lost(self, exc):
        if not self.run.stopped:
            self.run.failed.set_exception(ConnectionError(f"server closed a connection: {exc}"))


class _Run:
    def __init__(self):
        self.measuring = False
        self.stopped = False
        self.latencies_ns: list[int] = []
        self.waiting: set = set()
        self.all_idle: asyncio.Future | None = None
        self.failed = asyncio.get_running_loop().create_future()

    def idle(self, connection):
        self.waiting.discard(connection)
        if not self.waiting and not self.all_idle.done():
            self.all_idle.set_result(None)


def cpu_seconds(pid: int) -> tuple[float, float]:
    """The process's (user, system) CPU seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) / os.sysconf("SC_CLK_TCK"), int(fields[12]) / os.sysconf("SC_CLK_TCK")


async def load(ports: list[int], frame: bytes, connections: int, seconds: float, server_pid: int) -> dict:
    loop = asyncio.get_running_loop()
    run = _Run()
    conns = []
    for i in range(connections):
        _, protocol = await loop.create_connection(lambda: _Load(frame, run), "127.0.0.1", ports[i % len(ports)])
        conns.append(protocol)
    for c in conns:
        c.send()
    await asyncio.sleep(min(1.0, seconds / 3))  # warm-up
    run.measuring = True
    cpu0, own0, t0 = cpu_seconds(server_pid), time.process_time(), time.perf_counter()
    await asyncio.wait([run.failed, asyncio.ensure_future(asyncio.sleep(seconds))], return_when=asyncio.FIRST_COMPLETED)
    if run.failed.done():
        run.failed.result()
    run.measuring = False
    elapsed, own = time.perf_counter() - t0, time.process_time() - own0
    (user, system), (user0, system0) = cpu_seconds(server_pid), cpu0
    user, system = user - user0, system - system0
    cpu = user + system
    run.stopped = True
    run.waiting = set(conns)
    run.all_idle = loop.create_future()
    await asyncio.wait_for(run.all_idle, 10)
    for c in conns:
        c.transport.close()
    latencies = sorted(run.latencies_ns)
    return {"rps": len(latencies) / elapsed, "p50_ms": latencies[len(latencies) // 2] / 1e6,
            "p99_ms": latencies[int(len(latencies) * 0.99)] / 1e6, "server_cpu": cpu / elapsed,
            "server_us": cpu / len(latencies) * 1e6, "load_cpu": own / elapsed,
            "user_us": user / len(latencies) * 1e6, "system_us": system / len(latencies) * 1e6}


async def one_answer(port: int, request, version: int, response_cls):
    """Send one request and decode its answer (checks the bytes the load will get are right)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request_frame(request, version))
    size = _SIZE.unpack(await reader.readexactly(4))[0]
    data = await reader.readexactly(size)
    writer.close()
    _, pos = ResponseHeader.decode_from(data, 0, codec.response_header_version(request.API_KEY, version))
    return response_cls.decode(data[pos:], version), size


class Server:
    """A server process (kraftwire cluster or echo) pinned to SERVER_CPU; ``imports``: a directory that
    puts another copy of ``kraftwire`` first on its path (``export_commit``)."""

    def __init__(self, kind: str, topics: int = 0, partitions: int = 0, imports: Path | None = None):
        self.kind = kind
        self.command = [sys.executable, __file__, "--serve", kind, "--topics", str(topics),
                        "--partitions", str(partitions)] + (["--cpu", str(SERVER_CPU)] if PINNED else [])
        self.env = None if imports is None else {**os.environ, "PYTHONPATH": str(imports)}

    def __enter__(self):
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                                        env=self.env)
        words = self.process.stdout.readline().split()
        if not words or words[0] != "ready":
            raise RuntimeError(f"{self.kind} server did not start")
        self.ports = [int(p) for p in words[1:]]
        self.port = self.ports[0]
        return self

    def __exit__(self, *exc):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def handler_timing(topics: int, partitions: int, runs: int) -> tuple[float, float, int]:
    """In-process: the broker's Metadata handler, cache hit vs built and encoded afresh (median ms)."""
    from kraftwire.server.apis import api03_metadata
    from kraftwire.server.host.cluster import Cluster
    from kraftwire.server.wire.transport import RequestContext

    async def measure():
        async with Cluster(brokers=3) as cluster:
            await cluster.controller.write(seed_topics(topics, partitions))
            broker = cluster.broker(1)
            await cluster.wait_until(lambda image: len(image.topics) == topics, 60)  # and the brokers fetched it
            context = RequestContext(3, 12, 0, "bench", None, broker.listener)
            request = MetadataRequest(topics=None)
            body = api03_metadata.on_broker(broker, context, request)

            def hit():
                out = bytearray()
                api03_metadata.on_broker(broker, context, request).encode_into(out, 12)

            def fresh():
                broker.metadata_cache.clear()
                hit()

            hit(), fresh()  # warm-up
            return (statistics.median(timeit.repeat(hit, number=1, repeat=runs)) * 1000,
                    statistics.median(timeit.repeat(fresh, number=1, repeat=runs)) * 1000, len(body.data))
    return uvloop.run(measure())


class _Discard:
    """A transport that drops what it is given (counts the writes)."""

    def __init__(self):
        self.writes = 0

    def write(self, data):
        self.writes += 1

    def get_extra_info(self, name):
        return ("127.0.0.1", 0) if name == "peername" else None

    def set_write_buffer_limits(self, high=None, low=None):
        pass

    def pause_reading(self):
        pass

    def resume_reading(self):
        pass

    def close(self):
        pass


def python_path(requests: int = 50) -> dict:
    """{case: (bytecodes, calls) per request} for a broker's connection and the echo's protocol."""
    from kraftwire.server.host.cluster import Cluster
    from kraftwire.server.wire.transport import _Connection

    def traced(receive, frame) -> tuple[float, float]:
        counts = [0, 0]

        def tracer(frame_, event, arg):
            if event == "call":
                counts[1] += 1
                frame_.f_trace_opcodes = True
            elif event == "opcode":
                counts[0] += 1
            return tracer
        sys.settrace(tracer)
        for _ in range(requests):
            receive(frame)
        sys.settrace(None)
        return counts[0] / requests, counts[1] / requests

    async def measure():
        results = {}
        async with Cluster(brokers=1) as cluster:
            for name, request, version, _ in CASES:
                frame = request_frame(request, version)
                connection, echo = _Connection(cluster.broker(1).listener), _Echo()
                for protocol in (connection, echo):
                    protocol.connection_made(_Discard())
                    for _ in range(100):  # warm-up: codecs compiled, caches filled
                        protocol.data_received(frame)
                results[name] = (traced(connection.data_received, frame), traced(echo.data_received, frame))
                assert connection.transport.writes == 100 + requests, "every request answered"
                connection.connection_lost(None)
        return results
    return uvloop.run(measure())


def feed(kind: str, case: int, requests: int) -> None:
    """In-process, for ``instructions``: after a warm-up, ``requests`` frames of ``CASES[case]`` fed to a
    broker's connection (``kind`` "kraftwire") or the echo's protocol, through ``_Discard``, from within
    one C function (``deque`` consuming an iterator) that callgrind counts alone."""
    from kraftwire.server.host.cluster import Cluster
    from kraftwire.server.wire.transport import _Connection

    async def run():
        async with Cluster(brokers=1) as cluster:
            _, request, version, _ = CASES[case]
            frame = request_frame(request, version)
            protocol = _Connection(cluster.broker(1).listener) if kind == "kraftwire" else _Echo()
            protocol.connection_made(_Discard())
            for _ in range(100):
                protocol.data_received(frame)
            collections.deque(map(protocol.data_received, itertools.repeat(frame, requests)), maxlen=0)
            assert protocol.transport.writes == 100 + requests, "every request answered"
    uvloop.run(run())


def instructions(env, requests: int = 2_000) -> dict:
    """{case: (kraftwire's, the echo's) instructions per request}: callgrind counts the instructions run
    within ``feed``'s loop only (``--toggle-collect``), the same in every run and under any load."""
    def count(kind: str, case: int) -> float:
        run = subprocess.run(["valgrind", "--tool=callgrind", "--toggle-collect=consume_iterator",
                              "--callgrind-out-file=/dev/null", sys.executable, __file__, "--feed", kind, str(case),
                              str(requests)], env=env, capture_output=True, text=True, check=True)
        return int(re.search(r"Collected\s*:\s*(\d+)", run.stderr).group(1)) / requests
    return {name: (count("kraftwire", case), count("echo", case)) for case, (name, *_) in enumerate(CASES)}


def summarize(results: list[dict]) -> dict:
    return {key: statistics.median(r[key] for r in results) for key in results[0]}


def print_row(name: str, r: dict, ceiling: dict | None = None) -> None:
    ratio = f"{r['rps'] / ceiling['rps']:>8.0%}" if ceiling else f"{'':>8}"
    print(f"  {name:<46}{r['rps']:>9,.0f}{ratio}{r['p50_ms']:>8.2f}{r['p99_ms']:>8.2f}"
          f"{r['server_cpu']:>8.0%}{r['server_us']:>9.1f}{r['user_us']:>7.1f}{r['system_us']:>7.1f}"
          f"{r['load_cpu']:>8.0%}")


CASES = [("ApiVersions v3", ApiVersionsRequest(client_software_name="bench", client_software_version="1"), 3,
          ApiVersionsResponse),
         ("Metadata v12, all topics (none)", MetadataRequest(topics=None), 12, MetadataResponse)]


async def bench(args, against: tuple[str, Path] | None) -> None:
    print(f"  {'case':<46}{'req/s':>9}{'of echo':>8}{'p50 ms':>8}{'p99 ms':>8}{'srv CPU':>8}"
          f"{'srv us/req':>11}{'user':>7}{'system':>7}{'gen CPU':>8}")
    for name, request, version, response_cls in CASES:
        frame = request_frame(request, version)
        servers = [("kraftwire", None)] + ([(f"kraftwire {against[0]}", against[1])] if against else [])
        runs = {label: [] for label, _ in servers + [("echo", None)]}
        for _ in range(args.rounds):
            for label, imports in servers:
                with Server("kraftwire", imports=imports) as server:
                    answer, size = await one_answer(server.port, request, version, response_cls)
                    assert getattr(answer, "error_code", codec.ErrorCode.NONE) == codec.ErrorCode.NONE
                    runs[label].append(await load(server.ports, frame, args.connections, args.seconds,
                                                  server.process.pid))
            with Server("echo") as server:
                runs["echo"].append(await load(server.ports, frame, args.connections, args.seconds,
                                               server.process.pid))
        ceiling = summarize(runs["echo"])
        for label, _ in servers:
            mine = summarize(runs[label])
            print_row(f"{name}: {label} ({size + 4} B answers)", mine, ceiling)
            per_round = ", ".join(f"{r['server_us'] / e['server_us']:.2f}x" for r, e in zip(runs[label], runs["echo"]))
            print(f"    {label}/echo: throughput {mine['rps'] / ceiling['rps']:.0%}, server CPU per request "
                  f"{mine['server_us'] / ceiling['server_us']:.2f}x the echo's (rounds: {per_round})")
        print_row(f"{name}: bare uvloop echo ({len(ECHO_BODY) + 8} B)", ceiling)
        print(f"    load {load_average()}", flush=True)

    request = MetadataRequest(topics=None)
    with Server("kraftwire", args.topics, args.partitions) as server:
        answer, size = await one_answer(server.port, request, 12, MetadataResponse)
        assert len(answer.topics) == args.topics
        big = await load(server.ports, request_frame(request, 12), args.connections, args.seconds, server.process.pid)
    print_row(f"Metadata v12, {args.topics}x{args.partitions} ({size + 4:,} B), cached", big)
    print(f"    = {big['rps'] * (size + 4) / 1e6:,.0f} MB/s of answers; load {load_average()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=3.0, help="measured time of each run (after a warm-up)")
    parser.add_argument("--rounds", type=int, default=3, help="runs per case and server, alternating")
    parser.add_argument("--topics", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=50)
    parser.add_argument("--against", metavar="REV", help="also run the cluster of this commit, side by side")
    parser.add_argument("--serve", choices=["kraftwire", "echo"], help=argparse.SUPPRESS)
    parser.add_argument("--cpu", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--instructions", action="store_true",
                        help="also count instructions per request with cachegrind (needs valgrind; minutes)")
    parser.add_argument("--python-path", action="store_true", help=argparse.SUPPRESS)  # print python_path()
    parser.add_argument("--feed", nargs=3, metavar=("KIND", "CASE", "REQUESTS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.python_path:
        print(json.dumps(python_path()))
        return 0
    if args.feed:
        feed(args.feed[0], int(args.feed[1]), int(args.feed[2]))
        return 0
    if args.serve:
        if args.cpu is not None:
            os.sched_setaffinity(0, {args.cpu})
        uvloop.run(serve(args.serve, args.topics, args.partitions))
        return 0
    if PINNED:
        os.sched_setaffinity(0, {GENERATOR_CPU})
    header()
    print(f"server on CPU {SERVER_CPU}, load generator on CPU {GENERATOR_CPU}" if PINNED else "not pinned (< 2 CPUs)")
    print(f"{args.connections} connections, 1 request in flight each; medians of {args.rounds} rounds\n")
    with tempfile.TemporaryDirectory(prefix="kraftwire-requests-") as scratch:
        against = export_commit(args.against, Path(scratch)) if args.against else None
        uvloop.run(bench(args, against))
        hit, fresh, size = handler_timing(args.topics, args.partitions, 20)
        print(f"\nMetadata handler in-process, {args.topics}x{args.partitions} ({size:,} B body): "
              f"cached {hit:.3f} ms, built fresh {fresh:.2f} ms ({fresh / hit:,.0f}x)")
        print("\nPython path of one request, socket bytes to answer written (bytecodes, calls):")
        runs = [("kraftwire", None)] + ([(f"kraftwire {against[0]}", against[1])] if against else [])
        for label, imports in runs:
            env = None if imports is None else {**os.environ, "PYTHONPATH": str(imports)}
            counted = json.loads(subprocess.run([sys.executable, __file__, "--python-path"], env=env, check=True,
                                                capture_output=True, text=True).stdout)
            for name, ((ours, our_calls), (echo, echo_calls)) in counted.items():
                print(f"  {name}: {label} {ours:,.0f} bytecodes in {our_calls:.0f} calls "
                      f"({ours / echo:.1f}x the echo's {echo:,.0f} in {echo_calls:.0f})")
        if args.instructions and shutil.which("valgrind") is None:
            print("\nInstructions per request: not counted, valgrind is not installed")
        elif args.instructions:
            print("\nInstructions per request, socket bytes to answer written (callgrind, in-process as above):")
            for label, imports in runs:
                env = None if imports is None else {**os.environ, "PYTHONPATH": str(imports)}
                for name, (ours, echo) in instructions(env).items():
                    print(f"  {name}: {label} {ours:,.0f} ({ours / echo:.2f}x the echo's {echo:,.0f})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
