"""kraftwire side by side with its peers, in one run on one machine: every figure also as a ratio.

Four servers, started in turn in every round (``--rounds``, interleaved so that load from elsewhere falls
on all of them alike), each pinned to CPU 0 while this process, the client, runs on CPU 1:

* ``kraftwire``: ``python -m kraftwire serve --brokers 3`` (one controller, as the default cluster);
* ``kfake``: franz-go's in-memory fake cluster of 3 brokers (github.com/twmb/franz-go/pkg/kfake, built
  from bench/kfake_server through the Go module proxy into a temporary directory; never committed);
* ``kafka``: Apache Kafka 4.3.1 from tests/kafka/lib (tests/apache_kafka.py: one combined controller and
  broker plus two brokers, three JVMs; its start-up includes the storage tool's format);
* ``echo``: the bare uvloop echo server (bench/echo_server.py), the floor for a Python server.

Per server and round: **start-up**, from spawning the process(es) until every broker answers a Metadata
v12 request (the echo: until it answers one frame); **idle RSS**, summed over its processes 1 s after
it was ready; **CPU per small request**, the server's user+system time (from /proc) over ``--requests``
ApiVersions v3 requests sent one at a time on one connection, divided by their number. Then, through
kafka-python 3.0.12's admin client (not for the echo): **CreateTopics** of two topics of 5,000
partitions each, every replica on broker 1 (one request each, timed together); **alter**, one AlterPartitionReassignments moving all 10,000
to broker 2 (kraftwire's partitions are made 1 PB, so that the moves stay in progress, as
bench/reassign.py does; kfake accepts and does nothing; Kafka's empty partitions move at once); **list**,
one ListPartitionReassignments of everything (the count listed is printed). Each of the three: wall time
and the server's CPU time. The baseline of the alter is kafka-python's own build and encode of the same
request, timed in this process in the same round (``--encodes`` times, the median).

The table gives medians over the rounds and, per figure, the ratio of kraftwire's to each baseline
(kfake, Kafka, the echo where it has the figure; kafka-python's encode for the alter).

    python bench/peers.py [--rounds 3] [--requests 3000] [--skip kafka] [--encodes 5]
"""
from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from kafka import KafkaAdminClient, TopicPartition  # noqa: E402
from kafka.admin import NewTopic  # noqa: E402
from kafka.protocol.admin import AlterPartitionReassignmentsRequest as KpAlter  # noqa: E402

from provenance import header, load_average  # noqa: E402
from kraftwire.codec.messages import ApiVersionsRequest, MetadataRequest, RequestHeader  # noqa: E402

SERVER_CPU, CLIENT_CPU = 0, 1
TOPIC_PARTITIONS = 5000
HUGE = str(10 ** 15)
_SIZE = struct.Struct(">i")
PEERS = ("kraftwire", "kfake", "kafka", "echo")


def frame(request, api_key: int, version: int, header_version: int, correlation_id: int = 1) -> bytes:
    body = bytearray()
    RequestHeader(request_api_key=api_key, request_api_version=version, correlation_id=correlation_id,
                  client_id="peers-bench").encode_into(body, header_version)
    request.encode_into(body, version)
    return _SIZE.pack(len(body)) + bytes(body)


METADATA = frame(MetadataRequest(topics=[], allow_auto_topic_creation=False), 3, 12, 2)
API_VERSIONS = frame(ApiVersionsRequest(client_software_name="peers", client_software_version="1"), 18, 3, 2)


def exchange(sock: socket.socket, data: bytes) -> bytes:
    sock.sendall(data)
    size = _SIZE.unpack(_read(sock, 4))[0]
    return _read(sock, size)


def _read(sock: socket.socket, count: int) -> bytes:
    chunks, left = [], count
    while left:
        chunk = sock.recv(left)
        if not chunk:
            raise ConnectionError("closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def answers(address: tuple[str, int], data: bytes) -> bool:
    try:
        with socket.create_connection(address, timeout=2) as sock:
            exchange(sock, data)
        return True
    except OSError:
        return False


def until_answered(addresses: list[tuple[str, int]], data: bytes, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    left = list(addresses)
    while left:
        left = [a for a in left if not answers(a, data)]
        if left:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{left} never answered")
            time.sleep(0.002)


def cpu_seconds(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def rss_mib(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total / 1024


def pinned(start: Callable[[], object]) -> object:
    """Start a server with this process on the server's CPU, so that it and its children inherit it."""
    os.sched_setaffinity(0, {SERVER_CPU})
    try:
        return start()
    finally:
        os.sched_setaffinity(0, {CLIENT_CPU})


class Running:
    """One started server: its pids, its brokers' addresses, how to stop it."""

    def __init__(self, pids: list[int], addresses: list[tuple[str, int]], stop: Callable[[], None]):
        self.pids, self.addresses, self.stop = pids, addresses, stop


def _addresses(text: str) -> list[tuple[str, int]]:
    return [(h, int(p)) for h, p in (a.rsplit(":", 1) for a in text.strip().split(","))]


def _stopper(process: subprocess.Popen, directory: str | None = None) -> Callable[[], None]:
    def stop() -> None:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if directory:
            shutil.rmtree(directory, ignore_errors=True)
    return stop


def start_kraftwire() -> Running:
    data = tempfile.mkdtemp(prefix="kraftwire-peers-")
    process = subprocess.Popen([sys.executable, "-m", "kraftwire", "serve", "--brokers", "3", "--port", "0",
                                "--controller-port", "0", "--data-dir", data, "--log-level", "WARNING"],
                               stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    for line in process.stdout:
        if line.startswith("kraftwire ready on "):
            return Running([process.pid], _addresses(line.split()[-1]), _stopper(process, data))
    raise RuntimeError("kraftwire serve did not start")


def start_kfake(binary: Path) -> Running:
    process = subprocess.Popen([str(binary)], stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True)
    line = process.stdout.readline()

    def stop() -> None:
        process.stdin.close()
        _stopper(process)()
    return Running([process.pid], _addresses(line), stop)


def start_kafka() -> Running:
    from apache_kafka import KafkaCluster

    cluster = KafkaCluster(brokers=3, log_dirs=1)
    cluster.start()  # waits (polling every 0.2 s) until node 1 lists every broker
    return Running([p.pid for p in cluster.processes], _addresses(cluster.bootstrap), cluster.stop)


def start_echo() -> Running:
    process = subprocess.Popen([sys.executable, str(ROOT / "bench" / "echo_server.py")],
                               stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True)
    port = int(process.stdout.readline().split()[1])

    def stop() -> None:
        process.stdin.close()
        _stopper(process)()
    return Running([process.pid], [("127.0.0.1", port)], stop)


def build_kfake(into: Path) -> Path:
    """kfake's binary, built from bench/kfake_server (its go.sum pins the modules) into ``into``."""
    binary = into / "kfake_server"
    env = dict(os.environ, GOFLAGS="-buildvcs=false")
    subprocess.run(["go", "build", "-o", str(binary), "."], cwd=ROOT / "bench" / "kfake_server", env=env, check=True)
    return binary


def admin_figures(running: Running, name: str, encodes: int) -> dict[str, float]:
    """CreateTopics, alter and list of 10,000 partitions through kafka-python: wall and server CPU ms."""
    bootstrap = ",".join(f"{h}:{p}" for h, p in running.addresses)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="peers-bench", request_timeout_ms=600000)
    figures: dict[str, float] = {}

    def timed(key: str, call: Callable[[], object]) -> object:
        cpu, start = cpu_seconds(running.pids), time.perf_counter()
        result = call()
        figures[key] = (time.perf_counter() - start) * 1000
        figures[key + "_cpu"] = (cpu_seconds(running.pids) - cpu) * 1000
        return result

    try:
        configs = {"kraftwire.partition.size.bytes": HUGE} if name == "kraftwire" else {}
        topics = [NewTopic(f"bench-{t}", replica_assignments={i: [1] for i in range(TOPIC_PARTITIONS)},
                           topic_configs=configs) for t in "ab"]
        # one request per topic: 10,002 records in one exceeds the controller's 10,000 a write (Kafka's
        # MAX_RECORDS_PER_USER_OP), which both servers refuse
        timed("create", lambda: [admin.create_topics([topic], timeout_ms=600000) for topic in topics])
        time.sleep(1.0)  # the brokers taking up the new partitions
        move = {TopicPartition(f"bench-{t}", i): [2] for t in "ab" for i in range(TOPIC_PARTITIONS)}
        result = timed("alter", lambda: admin.alter_partition_reassignments(move, timeout_ms=600000))
        assert len(result) == len(move) and not any(result.values()), {k: v for k, v in result.items() if v}
        listed = timed("list", admin.list_partition_reassignments)
        figures["listed"] = len(listed)
        figures["alter_encode"] = kafka_python_encode(admin, move, encodes)
    finally:
        admin.close()
    return figures


def kafka_python_encode(admin: KafkaAdminClient, move: dict, encodes: int) -> float:
    """kafka-python's own build and encode of the alter's request (as its admin client builds it), ms."""
    times = []
    for _ in range(encodes):
        start = time.perf_counter()
        request = KpAlter(timeout_ms=600000, topics=admin._process_alter_partition_reassignments_input(move))
        request.encode(version=0)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def small_request_cpu(running: Running, requests: int) -> float:
    """Server CPU µs per ApiVersions v3 request, sent one at a time on one connection."""
    with socket.create_connection(running.addresses[0]) as sock:
        for _ in range(200):  # warm-up
            exchange(sock, API_VERSIONS)
        cpu = cpu_seconds(running.pids)
        for _ in range(requests):
            exchange(sock, API_VERSIONS)
        return (cpu_seconds(running.pids) - cpu) * 1e6 / requests


def one_round(name: str, start: Callable[[], Running], args: argparse.Namespace) -> dict[str, float]:
    began = time.perf_counter()
    running = pinned(start)
    assert isinstance(running, Running)
    try:
        until_answered(running.addresses, METADATA)
        figures = {"startup": (time.perf_counter() - began) * 1000}
        time.sleep(1.0)
        figures["rss"] = rss_mib(running.pids)
        figures["request_cpu"] = small_request_cpu(running, args.requests)
        if name != "echo":
            figures.update(admin_figures(running, name, args.encodes))
    finally:
        running.stop()
    return figures


ROWS = [("startup", "start-up to every broker answering (ms)", "{:.0f}"),
        ("rss", "idle RSS (MiB)", "{:.1f}"),
        ("request_cpu", "server CPU per ApiVersions (µs)", "{:.1f}"),
        ("create", "CreateTopics 10,000 partitions, wall (ms)", "{:.0f}"),
        ("create_cpu", "  server CPU (ms)", "{:.0f}"),
        ("alter", "alter 10,000 partitions, wall (ms)", "{:.0f}"),
        ("alter_cpu", "  server CPU (ms)", "{:.0f}"),
        ("alter_encode", "  kafka-python's own build+encode (ms)", "{:.1f}"),
        ("list", "list reassignments, wall (ms)", "{:.0f}"),
        ("list_cpu", "  server CPU (ms)", "{:.0f}"),
        ("listed", "  partitions listed", "{:.0f}")]


def table(results: dict[str, list[dict[str, float]]]) -> None:
    names = [n for n in PEERS if results.get(n)]
    medians = {n: {k: statistics.median(r[k] for r in results[n]) for k in results[n][0]} for n in names}
    others = [n for n in names if n != "kraftwire"]
    print(f"{'':44}" + "".join(f"{n:>11}" for n in names) + "".join(f"{'÷' + n:>10}" for n in others))
    for key, label, fmt in ROWS:
        if not any(key in medians[n] for n in names):
            continue
        cells = "".join(f"{fmt.format(medians[n][key]) if key in medians[n] else '-':>11}" for n in names)
        ours = medians.get("kraftwire", {}).get(key)
        ratios = ""
        for n in others if key != "alter_encode" else ():  # (the same client-side figure in every round)
            theirs = medians[n].get(key)
            ratios += f"{ours / theirs:>9.2f}x" if ours is not None and theirs else f"{'-':>10}"
        print(f"{label:44}{cells}{ratios}")
    rounds = results.get("kraftwire", [])
    if rounds and "alter" in rounds[0]:  # each round's alter against the encode timed in that same round
        wall = statistics.median(r["alter"] / r["alter_encode"] for r in rounds)
        cpu = statistics.median(r["alter_cpu"] / r["alter_encode"] for r in rounds)
        print(f"\nkraftwire's alter: {wall:.2f}x kafka-python's own build+encode of the same request in the same "
              f"round (wall; the server's CPU {cpu:.2f}x), medians of the rounds' ratios")
    print(f"load {load_average()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--encodes", type=int, default=5)
    parser.add_argument("--skip", action="append", default=[], choices=PEERS)
    args = parser.parse_args()
    header()
    if len(os.sched_getaffinity(0)) < 2:
        sys.exit("needs two CPUs (server on CPU 0, client on CPU 1)")
    os.sched_setaffinity(0, {CLIENT_CPU})
    build = Path(tempfile.mkdtemp(prefix="kfake-build-"))
    try:
        starts: dict[str, Callable[[], Running]] = {"kraftwire": start_kraftwire, "kafka": start_kafka,
                                                    "echo": start_echo}
        if "kfake" not in args.skip:
            binary = build_kfake(build)
            starts["kfake"] = lambda: start_kfake(binary)
        results: dict[str, list[dict[str, float]]] = {n: [] for n in PEERS}
        for round_ in range(args.rounds):
            for name in PEERS:
                if name in args.skip:
                    continue
                figures = one_round(name, starts[name], args)
                results[name].append(figures)
                print(f"round {round_ + 1} {name}: " + ", ".join(f"{k} {v:.1f}" for k, v in figures.items()),
                      flush=True)
        print()
        table(results)
    finally:
        shutil.rmtree(build, ignore_errors=True)


if __name__ == "__main__":
    main()
