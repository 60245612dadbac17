"""Scale: a separate ``kraftwire serve`` grown to millions of partitions, measured at checkpoints.

The server runs in its own process (4 brokers, a temporary data directory removed afterwards); this
process grows it through CreateTopics requests of 9,980 partitions each (10 topics x 998 partitions, the
most within Kafka's 10,000-record limit of one controller operation; RF 3, placed by the controller;
every topic 1 PB large so no reassignment completes), sent with kraftwire's own wire client. While growing it takes the server's CPU time
of every CreateTopics (the per-change cost, which must not grow with the cluster: printed as the median
of each growth stretch and of its last ten requests, with the mean of it spent in the server's threads
other than the event loop's: the snapshot writer and the log's I/O; ten requests are a noisy figure at
2M, where a snapshot's writing spans 10-15 of them), split into user and system time, with the minor
page faults it took. The split matters on a VM: each request adds ~13 MB to the process, and on a guest
whose host backs memory lazily and takes freed memory back (Firecracker's free page reporting) the
first write to such a page costs several times what it does on memory the guest used lately, in the
kernel, so system time grows with the process while user time and faults stay as they were
(bench/README.md, Scale, page faults). ``page_fault_price`` measures the machine's price of a page
apart from kraftwire, before the server starts and after it exited. At each checkpoint it measures, in this order:

- server RSS (VmRSS and VmHWM from /proc/<pid>/status), snapshot and log size on disk;
- controller restart from snapshot: the controller stops and starts again inside the running ``serve``
  (the control plane's ``POST /api/controllers/{id}/stop`` and ``.../start``) while the 4 brokers keep
  running, timed from the start until the controller is active with its image loaded (its snapshot,
  then the log after it), every broker is unfenced at the epoch it had (none registered again), and a
  Metadata answer through a broker lists every partition with a leader. After a broker session's time
  more, it checks on disk that the restart wrote nothing but its LeaderChange (no fencing, no
  registration, no partition record). This is what KRaft promises at millions of partitions: a
  controller restarts (or fails over) by loading its snapshot, the brokers keep their sessions
  (Kafka's newly active controller gives every registered broker one, ClusterControlManager.activate).
  The control plane's restart is chosen over separate ``kraftwire controller`` and ``broker``
  processes (bench/chaos.py) because it restarts the same data directory and code path (RaftLog.open,
  Controller.start) without a second way of deploying the bench's cluster; the brokers it keeps
  running share the process, so the figures include whatever they do meanwhile (they cannot reach a
  controller: their fetches and heartbeats retry);
- Metadata for all topics, 4 in a row (served from the brokers' cache unless the image moved);
- AlterPartitionReassignments moving 10,000 partitions (one request, answered once committed, that is
  fsync'd), then ListPartitionReassignments of all ongoing; ``--runs`` runs after one warm-up run, a
  cancel of all 10,000 and ``--settle`` seconds of rest between runs, p50 shown;
- controlled shutdown: a BrokerHeartbeat with WantShutDown for one broker, sent to the controller as
  the broker sends it; the answer comes once the records moving the broker's leaderships and ISR
  memberships are committed. The broker chosen is the one leading the most partitions; the number of
  partitions it led is printed beside the time. The broker stays in controlled shutdown until the
  process restarts, so this runs only where a whole-process restart follows, and at the last checkpoint;
- whole-process restart (at checkpoints up to ``--process-restarts-up-to`` partitions): SIGTERM until
  the process has exited, then start again, time until every broker has registered again (a new
  incarnation, which Kafka's controller handles as a shutdown of the old one: out of every ISR and ELR,
  O(partitions) records) and is unfenced and a Metadata answer lists every partition with a leader.
  After it leaderships are skewed (README, differences: no automatic rebalance) and later growth
  slows; at 1M it took minutes (bench/README.md), so a run to 2M skips it there.

Per-partition costs (RSS, both restarts, snapshot bytes) are printed for every checkpoint so that
flatness can be judged. ``--grow-only`` measures growth alone (CreateTopics CPU, RSS, snapshot size at
each checkpoint, no restart or requests).
Run: python bench/scale.py [--partitions 2000000] [--checkpoints 100000,500000,...] [--process-restarts-up-to N]
     [--grow-only]
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kraftwire.codec import ErrorCode  # noqa: E402
from kraftwire.codec.messages import (AlterPartitionReassignmentsRequest, BrokerHeartbeatRequest,  # noqa: E402
                                      CreateTopicsRequest, ListPartitionReassignmentsRequest, MetadataRequest)
from kraftwire.codec.log_layout import parse_snapshot_name  # noqa: E402
from kraftwire.codec.records import CONTROL_TYPES, batch_size_at, check_batch, decode_value, read_batch  # noqa: E402
from kraftwire.server.wire.client import KafkaClient, KafkaClientError  # noqa: E402
from tests.served import free_ports  # noqa: E402  (below the ephemeral range: the server restarts on its ports)

BROKERS = 4
REPLICATION = 3
# Kafka's controller refuses a user operation of more than 10,000 records (MAX_RECORDS_PER_USER_OP): a
# request of 10 topics x 998 partitions writes 10 TopicRecords, 9,980 PartitionRecords, 10 ConfigRecords.
TOPIC_PARTITIONS = 998
TOPICS_PER_REQUEST = 10
ALTER_PARTITIONS = 10_000
HUGE = str(10 ** 15)
TOKEN = "scale-bench"
CONTROL_RECORDS = {cls.__name__ for cls in CONTROL_TYPES.values()}  # what a controller's restart may write


class Usage(collections.namedtuple("Usage", "user system faults loop_user loop_system")):
    """CPU seconds (10 ms resolution) and minor page faults of the server process; ``loop_*`` are its
    event loop's thread's part (the rest is the snapshot writer's and the log's I/O threads')."""

    def __sub__(self, other: "Usage") -> "Usage":
        return Usage(*(a - b for a, b in zip(self, other)))

    @property
    def cpu(self) -> float:
        return self.user + self.system

    @property
    def others(self) -> float:
        return self.cpu - self.loop_user - self.loop_system


class Server:
    """A ``kraftwire serve`` process on a data directory that outlives restarts."""

    def __init__(self, data_dir: Path):
        self.data_dir = data_dir
        self.port = free_ports(BROKERS)
        self.controller_port, self.control_port = free_ports(1), free_ports(1)
        self.process: subprocess.Popen | None = None

    @property
    def command(self) -> list[str]:
        return [sys.executable, "-m", "kraftwire", "serve", "--brokers", str(BROKERS),
                "--data-dir", str(self.data_dir), "--port", str(self.port),
                "--controller-port", str(self.controller_port), "--control-port", str(self.control_port),
                "--control-token", TOKEN, "--log-level", "WARNING"]

    def start(self) -> None:
        self.process = subprocess.Popen(self.command, stdout=subprocess.DEVNULL, stderr=sys.stderr)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=600)

    def check_running(self) -> None:
        """Raise if the server process has exited (e.g. a restart that could not start)."""
        if self.process.poll() is not None:
            raise RuntimeError(f"the server exited with {self.process.returncode}")

    def memory(self) -> dict[str, int]:
        """VmRSS and VmHWM in bytes."""
        fields = {}
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0]) * 1024
        return fields

    def cpu(self) -> float:
        """User + system CPU seconds of the server process so far."""
        return self.usage().cpu

    def usage(self) -> "Usage":
        """The server process's CPU seconds (user, system) and minor page faults so far, and its event
        loop's thread's CPU seconds (the main thread: ``serve`` runs the loop there)."""
        tick = os.sysconf("SC_CLK_TCK")
        process = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        loop = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return Usage(int(process[11]) / tick, int(process[12]) / tick, int(process[7]),
                     int(loop[11]) / tick, int(loop[12]) / tick)

    def snapshot_end(self) -> int:
        """The end offset of the newest snapshot on disk (0 for none)."""
        return max((parse_snapshot_name(p.name)[0] for p in self.data_dir.rglob("*.checkpoint")), default=0)

    def disk(self) -> dict[str, int]:
        snapshots = sorted(self.data_dir.rglob("*.checkpoint"), key=lambda p: p.stat().st_mtime)
        return {"snapshot": snapshots[-1].stat().st_size if snapshots else 0,
                "log": sum(p.stat().st_size for p in self.data_dir.rglob("*.log"))}

    def brokers(self) -> dict[int, dict]:
        """The control plane's view of every broker (epoch, fenced, ...)."""
        listed = self.api("GET", "/api/brokers")
        return {b["id"]: b for b in (listed["brokers"] if isinstance(listed, dict) else listed)}

    def controller(self) -> dict:
        """The control plane's view of the (one) controller: running, active, offsets."""
        return self.api("GET", "/api/controllers")[0]

    def api(self, method: str, path: str, timeout: float = 600):
        request = urllib.request.Request(f"http://127.0.0.1:{self.control_port}{path}", method=method,
                                         headers={"Authorization": f"Bearer {TOKEN}"},
                                         data=b"" if method == "POST" else None)
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return json.load(answer)

    def records_from(self, offset: int) -> collections.Counter:
        """The metadata log's records at ``offset`` and after, counted by type, read from the segment
        files on disk (control records by their control type's name)."""
        counted = collections.Counter()
        for segment in sorted(self.data_dir.rglob("__cluster_metadata-0/*.log")):
            try:
                data = segment.read_bytes()
            except FileNotFoundError:  # retired meanwhile: below the offsets asked for
                continue
            position = 0
            while (size := batch_size_at(data, position)) is not None and position + size <= len(data):
                header = check_batch(data, position)
                if header.base_offset + header.last_offset_delta >= offset:
                    batch = read_batch(data, position)
                    counted.update(type(decode_value(batch, r)).__name__ for r in batch.records if r.offset >= offset)
                position += size
        return counted


async def connect(host: str, port: int, deadline: float, server: Server | None = None) -> KafkaClient:
    while True:
        client = KafkaClient(host, port, "scale-bench")
        try:
            await client.connect()
            return client
        except KafkaClientError:
            if server is not None:
                server.check_running()
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.02)


async def until_brokers_unfenced(client: KafkaClient, deadline: float) -> None:
    """Metadata lists only unfenced brokers; placement needs all of them."""
    while len((await client.send(MetadataRequest(topics=[]), 12)).brokers) < BROKERS:
        if time.monotonic() > deadline:
            raise TimeoutError("the brokers stayed fenced")
        await asyncio.sleep(0.05)


def partition_count(metadata) -> int:
    return sum(len(t.partitions) for t in metadata.topics if t.error_code == ErrorCode.NONE)


async def grow(client: KafkaClient, first_topic: int, partitions: int,
               server: Server | None = None) -> tuple[float, int, list[Usage]]:
    """Create ``partitions`` partitions as topics of TOPIC_PARTITIONS (the last one possibly smaller)
    numbered from ``first_topic``, TOPICS_PER_REQUEST topics a request; returns seconds, the next
    topic number and, given the ``server``, its ``Usage`` during each request of 9,980 partitions."""
    Topic, Config = CreateTopicsRequest.CreatableTopic, CreateTopicsRequest.CreatableTopicConfig
    sizes = [min(TOPIC_PARTITIONS, partitions - done) for done in range(0, partitions, TOPIC_PARTITIONS)]
    began, usages = time.perf_counter(), []
    for batch in range(0, len(sizes), TOPICS_PER_REQUEST):
        topics = [Topic(name=f"scale-{first_topic + index:05d}", num_partitions=sizes[index],
                        replication_factor=REPLICATION,
                        configs=[Config(name="kraftwire.partition.size.bytes", value=HUGE)])
                  for index in range(batch, min(batch + TOPICS_PER_REQUEST, len(sizes)))]
        before = server.usage() if server is not None else None
        answer = await client.send(CreateTopicsRequest(timeout_ms=600000, topics=topics))
        if server is not None and sum(t.num_partitions for t in topics) == TOPICS_PER_REQUEST * TOPIC_PARTITIONS:
            usages.append(server.usage() - before)  # a stretch's last, smaller request is not counted
        bad = [(t.name, t.error_code, t.error_message) for t in answer.topics if t.error_code != ErrorCode.NONE]
        assert not bad, bad[:3]
    return time.perf_counter() - began, first_topic + len(sizes), usages


def moves(metadata) -> tuple[list, list]:
    """The alter of the first ALTER_PARTITIONS partitions in topic order: each partition's last replica
    replaced by the broker it lacks (4 brokers, RF 3); and the cancel of the same partitions."""
    Topic, Partition = AlterPartitionReassignmentsRequest.ReassignableTopic, \
        AlterPartitionReassignmentsRequest.ReassignablePartition
    every = set(range(1, BROKERS + 1))
    alter, cancel, left = [], [], ALTER_PARTITIONS
    for topic in sorted((t for t in metadata.topics if t.name.startswith("scale-")), key=lambda t: t.name):
        chosen = sorted(topic.partitions, key=lambda p: p.partition_index)[:left]
        alter.append(Topic(name=topic.name, partitions=[
            Partition(partition_index=p.partition_index,
                      replicas=list(p.replica_nodes[:-1]) + [min(every - set(p.replica_nodes))]) for p in chosen]))
        cancel.append(Topic(name=topic.name, partitions=[Partition(partition_index=p.partition_index, replicas=None)
                                                         for p in chosen]))
        left -= len(chosen)
        if not left:
            break
    return alter, cancel


def progress(message: str) -> None:
    print(f"  [{time.strftime('%H:%M:%S')}] {message}", flush=True)


async def timed(server: Server, call) -> tuple:
    """The awaited result, the wall seconds and the server's CPU seconds (10 ms resolution) of one call."""
    cpu, began = server.cpu(), time.perf_counter()
    result = await call
    return result, time.perf_counter() - began, server.cpu() - cpu


async def reassignments(server: Server, client: KafkaClient, metadata, runs: int, settle: float) -> dict:
    alter, cancel = moves(metadata)
    size = sum(len(t.partitions) for t in alter)
    alters, lists = [], []
    for run in range(runs + 1):
        answer, *alter_times = await timed(server, client.send(
            AlterPartitionReassignmentsRequest(timeout_ms=600000, topics=alter)))
        assert answer.error_code == ErrorCode.NONE and all(
            p.error_code == ErrorCode.NONE for t in answer.responses for p in t.partitions), answer.error_message
        listed, *list_times = await timed(server, client.send(
            ListPartitionReassignmentsRequest(timeout_ms=600000, topics=None)))
        ongoing = sum(len(t.partitions) for t in listed.topics)
        assert ongoing == size, (ongoing, size)
        if run:  # run 0 is the warm-up
            alters.append(alter_times)
            lists.append(list_times)
        await asyncio.sleep(settle)
        answer = await client.send(AlterPartitionReassignmentsRequest(timeout_ms=600000, topics=cancel))
        assert answer.error_code == ErrorCode.NONE
        await asyncio.sleep(settle)
    return {"partitions": size, "alter": alters, "list": lists}


async def controlled_shutdown(server: Server, metadata) -> dict:
    """Shut down the broker leading the most partitions."""
    leaders = collections.Counter(p.leader_id for t in metadata.topics for p in t.partitions)
    broker_id, led = max((count, broker) for broker, count in leaders.items() if broker >= 0)[::-1]
    epoch = (await asyncio.to_thread(server.brokers))[broker_id]["epoch"]
    client = await connect("127.0.0.1", server.controller_port, time.monotonic() + 60)
    try:
        answer, seconds, cpu = await timed(server, client.send(BrokerHeartbeatRequest(
            broker_id=broker_id, broker_epoch=epoch, current_metadata_offset=2 ** 62, want_fence=False,
            want_shut_down=True)))
    finally:
        await client.close()
    assert answer.error_code == ErrorCode.NONE and answer.should_shut_down, answer
    return {"broker": broker_id, "led": led, "seconds": seconds, "cpu": cpu}


async def served_in_full(client: KafkaClient, partitions: int):
    """A Metadata answer (all topics) through a broker if it lists ``partitions`` partitions, each with a
    leader; else None."""
    metadata = await client.send(MetadataRequest(topics=None), 12)
    leaderless = sum(1 for t in metadata.topics for p in t.partitions if p.leader_id < 0)
    return metadata if partition_count(metadata) == partitions and not leaderless else None


async def controller_restart(server: Server, client: KafkaClient, partitions: int, settle: float) -> dict:
    """Stop the controller and start it again inside the running ``serve`` (the control plane's
    controller stop and start) while the brokers keep running; see the module docstring."""
    # Served before: every partition with a leader (this also warms the brokers' cache of the answer,
    # as a serving cluster's is warm: its first all-topics answer after growth encodes every topic)
    assert await served_in_full(client, partitions) is not None
    before = await asyncio.to_thread(server.brokers)
    controller = await asyncio.to_thread(server.controller)
    figures = {"offset": controller["high_watermark"], "snapshot_end": server.snapshot_end()}
    began = time.perf_counter()
    await asyncio.to_thread(server.api, "POST", f"/api/controllers/{controller['id']}/stop")
    figures["stop"] = time.perf_counter() - began
    began = time.perf_counter()
    await asyncio.to_thread(server.api, "POST", f"/api/controllers/{controller['id']}/start")
    figures["started"] = time.perf_counter() - began  # the answer comes once its image is loaded
    deadline = time.monotonic() + 600
    while not (await asyncio.to_thread(server.controller))["active"]:
        if time.monotonic() > deadline:
            raise TimeoutError("the restarted controller did not become active")
        await asyncio.sleep(0.02)
    figures["active"] = time.perf_counter() - began
    while True:  # the controller's view: every broker registered as before (same epoch) and unfenced
        brokers = await asyncio.to_thread(server.brokers)
        if all(b["epoch"] == before[i]["epoch"] and not b["fenced"] for i, b in brokers.items()):
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"the brokers did not stay as they were: {brokers}")
        await asyncio.sleep(0.02)
    asked, cpu = time.perf_counter(), server.cpu()
    while (metadata := await served_in_full(client, partitions)) is None:
        if time.monotonic() > deadline:
            raise TimeoutError("the brokers did not serve every partition with a leader")
        await asyncio.sleep(0.05)
    figures["restart"] = time.perf_counter() - began
    figures["metadata"] = time.perf_counter() - asked
    figures["metadata_cpu"] = server.cpu() - cpu
    # Past a broker session (3 s in serve) and the heartbeats after it: no broker fenced or registered
    # again, no partition record written; what the restart wrote is on disk after the old high watermark.
    await asyncio.sleep(max(settle, 4.0))
    after = await asyncio.to_thread(server.brokers)
    figures["written"] = dict(await asyncio.to_thread(server.records_from, figures["offset"]))
    unchanged = all(b["epoch"] == before[i]["epoch"] and not b["fenced"] for i, b in after.items())
    # its LeaderChange (read from disk: the reading works) and nothing else
    assert unchanged and "LeaderChangeMessage" in figures["written"] \
        and not set(figures["written"]) - CONTROL_RECORDS, (after, figures["written"])
    return figures, metadata


async def checkpoint(server: Server, client: KafkaClient, partitions: int, args, last: bool) -> dict:
    figures = {"partitions": partitions, **server.memory(), **server.disk()}
    progress(f"RSS {figures['VmRSS'] / 2**20:,.0f} MiB, snapshot {figures['snapshot'] / 2**20:,.1f} MiB")
    if args.grow_only:
        return figures, client
    figures["controller"], metadata = await controller_restart(server, client, partitions, args.settle)
    c = figures["controller"]
    progress(f"controller restarted: active {c['active']:.1f} s, every partition served {c['restart']:.1f} s; "
             f"written {c['written']}")
    figures["controller_rss"] = server.memory()["VmRSS"]
    # Whether an answer was built or cached shows in the server CPU it took.
    figures["metadata"] = []
    for _ in range(4):
        metadata, *times = await timed(server, client.send(MetadataRequest(topics=None), 12))
        figures["metadata"].append(times)
    progress("Metadata ms wall/server CPU: " + ", ".join(f"{w * 1000:,.0f}/{c * 1000:,.0f}" for w, c in figures["metadata"]))
    figures["reassign"] = await reassignments(server, client, metadata, args.runs, args.settle)
    progress(f"alter, list (wall s, server CPU s): {figures['reassign']['alter']}, {figures['reassign']['list']}")
    restart = partitions <= args.process_restarts_up_to
    if restart or last:  # the broker stays in controlled shutdown until the process restarts
        figures["shutdown"] = await controlled_shutdown(server, metadata)
    figures["rss_after"] = server.memory()["VmRSS"]
    if restart:
        client = await process_restart(server, client, partitions, figures)
    return figures, client


async def process_restart(server: Server, client: KafkaClient, partitions: int, figures: dict) -> KafkaClient:
    """Stop the whole ``serve`` process (SIGTERM) and start it again on its data directory."""
    old_epochs = {b: state["epoch"] for b, state in (await asyncio.to_thread(server.brokers)).items()}
    await client.close()
    began = time.perf_counter()
    server.stop()
    figures["stop"] = time.perf_counter() - began
    progress(f"stopped (SIGTERM until the process exited) in {figures['stop']:.1f} s")
    began = time.perf_counter()
    server.start()
    deadline = time.monotonic() + 1800
    client = await connect("127.0.0.1", server.port, deadline, server)
    # Until the served metadata is the restarted cluster's: every broker registered again (a new epoch)
    # and unfenced, every partition listed with a leader. The first answers still show the image read
    # from disk, with the old registrations; while the brokers re-register, partitions lose their leaders.
    while True:
        try:
            brokers = await asyncio.to_thread(server.brokers)
        except urllib.error.URLError:  # the control plane starts after the brokers' listeners
            brokers = {0: {"epoch": None, "fenced": True}}
        server.check_running()
        if all(b["epoch"] != old_epochs.get(i) and not b["fenced"] for i, b in brokers.items()) \
                and await served_in_full(client, partitions) is not None:
            break
        if time.monotonic() > deadline:
            raise TimeoutError("the restarted cluster did not serve every partition")
        await asyncio.sleep(0.05)
    figures["restart"] = time.perf_counter() - began
    progress(f"restarted in {figures['restart']:.1f} s")
    figures["restart_rss"] = server.memory()["VmRSS"]
    return client


def figures_of(usages: list[Usage]) -> dict[str, float]:
    """Medians of CreateTopics' usage (CPU in ms; the other threads' mean), and system seconds per page fault
    over them all (us)."""
    return {"cpu": statistics.median(u.cpu for u in usages) * 1000,
            "user": statistics.median(u.user for u in usages) * 1000,
            "system": statistics.median(u.system for u in usages) * 1000,
            "others": statistics.mean(u.others for u in usages) * 1000,  # spiky: a snapshot spans a few requests
            "faults": statistics.median(u.faults for u in usages),
            "per_fault": sum(u.system for u in usages) / max(1, sum(u.faults for u in usages)) * 1e6}


def page_fault_price(gibibytes: int = 3) -> list[float]:
    """System time per first write to a 4 KiB page of fresh anonymous memory, in us, for each GiB a new
    process maps (64 MiB at a time, every page touched): the machine's price of the memory a growing
    server adds. On a VM whose host backs guest memory lazily (Firecracker with free page reporting,
    which returns freed guest memory to the host) it rises once the guest's recently used memory is
    exhausted; where guest memory stays backed, or on bare metal, it should stay flat (not measured here)."""
    probe = (
        "import mmap, resource\n"
        "kept, out = [], []\n"
        f"for gib in range({gibibytes}):\n"
        "    r = resource.getrusage(resource.RUSAGE_SELF); s0, f0 = r.ru_stime, r.ru_minflt\n"
        "    for _ in range(16):\n"
        "        m = mmap.mmap(-1, 64 << 20)\n"
        "        for off in range(0, 64 << 20, 4096): m[off] = 1\n"
        "        kept.append(m)\n"
        "    r = resource.getrusage(resource.RUSAGE_SELF)\n"
        "    out.append((r.ru_stime - s0) / max(1, r.ru_minflt - f0) * 1e6)\n"
        "print(*out)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return [float(x) for x in done.stdout.split()]


def show_page_fault_price(when: str) -> None:
    print(f"this machine's system time per page fault in a fresh process, by GiB mapped, {when}: "
          + ", ".join(f"{price:.1f} us" for price in page_fault_price()), flush=True)


def show_usage(usages: list[Usage]) -> None:
    stretch, last = figures_of(usages), figures_of(usages[-10:])
    print(f"  server CPU {stretch['cpu']:,.0f} / {last['cpu']:,.0f} ms: user {stretch['user']:,.0f} / "
          f"{last['user']:,.0f} ms, system {stretch['system']:,.0f} / {last['system']:,.0f} ms; in threads other than the "
          f"event loop's (snapshot writing, log I/O; mean) {stretch['others']:,.0f} / {last['others']:,.0f} ms")
    print(f"  minor page faults {stretch['faults']:,.0f} / {last['faults']:,.0f} (the memory a request adds, 4 KiB "
          f"each); system time per fault {stretch['per_fault']:.1f} / {last['per_fault']:.1f} us (sums' ratio)")


def show(f: dict) -> None:
    n = f["partitions"]
    print(f"--- {n:,} partitions (load average {os.getloadavg()[0]:.1f})", flush=True)
    usages = f["grow_usage"]
    print(f"grow to here: {f['grow']:.1f} s ({n / f['grow_total']:,.0f} partitions/s overall); per CreateTopics of "
          f"9,980 partitions, median over this stretch / over its last 10:" if usages else
          f"grow to here: {f['grow']:.1f} s; no CreateTopics of 9,980 partitions in this stretch")
    if usages:
        show_usage(usages)
    print(f"RSS {f['VmRSS'] / 2**20:,.0f} MiB ({f['VmRSS'] / n:,.0f} B/partition), peak {f['VmHWM'] / 2**20:,.0f} MiB")
    print(f"snapshot {f['snapshot'] / 2**20:,.1f} MiB ({f['snapshot'] / n:,.0f} B/partition); log {f['log'] / 2**20:,.1f} MiB",
          flush=True)
    if "controller" not in f:  # --grow-only
        return
    c = f["controller"]
    print(f"controller restart from snapshot (snapshot ends at offset {c['snapshot_end']:,}, log at {c['offset']:,}): "
          f"stop {c['stop']:.2f} s; start answered {c['started']:.2f} s, active {c['active']:.2f} s, every partition "
          f"served {c['restart']:.2f} s ({c['restart'] / n * 1e6:.2f} us/partition; of which the Metadata answer "
          f"{c['metadata']:.2f} s, {c['metadata_cpu']:.2f} s of it server CPU); records written: {c['written']}; RSS then {f['controller_rss'] / 2**20:,.0f} MiB")
    print("Metadata all topics, 4 in a row, ms wall/server CPU: "
          + ", ".join(f"{wall * 1000:,.1f}/{cpu * 1000:,.0f}" for wall, cpu in f["metadata"]))
    r = f["reassign"]
    for label, key in (("alter 10,000", "alter"), ("list 10,000 ongoing", "list")):
        walls, cpus = zip(*r[key])
        print(f"{label}: p50 {statistics.median(walls) * 1000:,.0f} ms wall "
              f"({', '.join(f'{s * 1000:,.0f}' for s in walls)}), server CPU p50 {statistics.median(cpus) * 1000:,.0f} ms")
    if "shutdown" in f:
        s = f["shutdown"]
        print(f"controlled shutdown of broker {s['broker']} leading {s['led']:,} ({s['led'] / n:.0%}): "
              f"{s['seconds'] * 1000:,.0f} ms wall, {s['cpu'] * 1000:,.0f} ms server CPU")
    print(f"RSS after the requests {f['rss_after'] / 2**20:,.0f} MiB", flush=True)
    if "restart" in f:
        print(f"whole process: stop (SIGTERM until the process exited) {f['stop']:.2f} s; restart until every broker "
              f"registered again and every partition is served with a leader: {f['restart']:.2f} s "
              f"({f['restart'] / n * 1e6:.2f} us/partition); RSS then {f['restart_rss'] / 2**20:,.0f} MiB", flush=True)


async def main(args) -> None:
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    print(f"command: python bench/scale.py {' '.join(sys.argv[1:])}; commit {commit}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    checkpoints = sorted({c for c in (int(x) for x in args.checkpoints.split(",")) if c < args.partitions}
                         | {args.partitions})
    show_page_fault_price("before the server starts")
    data_dir = Path(tempfile.mkdtemp(prefix="kraftwire-scale-"))
    server = Server(data_dir)
    print("server:", " ".join(server.command[1:]), flush=True)
    results, created, grown, next_topic = [], 0, 0.0, 0
    try:
        server.start()
        deadline = time.monotonic() + 120
        client = await connect("127.0.0.1", server.port, deadline)
        await until_brokers_unfenced(client, deadline)
        for target in checkpoints:
            seconds, next_topic, usages = await grow(client, next_topic, target - created, server)
            progress(f"grown to {target:,} partitions in {seconds:.1f} s; server CPU per CreateTopics in order, ms, "
                     f"user+system (in other threads than the event loop's): "
                     + " ".join(f"{u.user * 1000:.0f}+{u.system * 1000:.0f}({u.others * 1000:.0f})" for u in usages))
            grown += seconds
            created = target
            figures, client = await checkpoint(server, client, target, args, target == checkpoints[-1])
            figures.update(grow=seconds, grow_total=grown, grow_usage=usages)
            show(figures)
            results.append(figures)
        await client.close()
    finally:
        if server.process is not None and server.process.poll() is None:
            server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    show_page_fault_price("after the server exited (the memory it freed is still the guest's, if a VM's)")
    if len(results) > 1:
        first, last = results[0], results[-1]
        print("--- per-partition cost, last checkpoint against the first")
        if first["grow_usage"] and last["grow_usage"]:
            a, b = figures_of(first["grow_usage"]), figures_of(last["grow_usage"])
            a10, b10 = figures_of(first["grow_usage"][-10:]), figures_of(last["grow_usage"][-10:])
            print("CreateTopics, median over the last 10 requests / over the stretch:")
            for label, key in (("server CPU, user + system", "cpu"), ("server CPU, user", "user"),
                               ("minor page faults", "faults")):
                print(f"  {label}: {b10[key] / a10[key] - 1:+.0%} / {b[key] / a[key] - 1:+.0%}")
            print(f"  system time per page fault: {a['per_fault']:.1f} -> {b['per_fault']:.1f} us (the machine's "
                  f"price of new memory: the probes)")
        for label, get in (("RSS", lambda f: f["VmRSS"]), ("RSS after restart", lambda f: f.get("restart_rss")),
                           ("restart", lambda f: f.get("restart")), ("snapshot", lambda f: f["snapshot"]),
                           ("controller restart", lambda f: f.get("controller", {}).get("restart")),
                           ("controller active", lambda f: f.get("controller", {}).get("active"))):
            if get(first) and get(last):
                ratio = (get(last) / last["partitions"]) / (get(first) / first["partitions"])
                print(f"{label}: {ratio - 1:+.0%}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=2_000_000)
    parser.add_argument("--checkpoints", default="100000,500000,1000000,2000000")
    parser.add_argument("--runs", type=int, default=3, help="timed alter/list runs after one warm-up (default 3)")
    parser.add_argument("--settle", type=float, default=2.0,
                        help="seconds after each alter and cancel for the brokers' follow-up work (default 2)")
    parser.add_argument("--process-restarts-up-to", type=int, default=10 ** 9, metavar="PARTITIONS",
                        help="restart the whole serve process only at checkpoints up to this size (default: all)")
    parser.add_argument("--grow-only", action="store_true",
                        help="at checkpoints measure memory and disk only: no restart, Metadata, alters or shutdown")
    asyncio.run(main(parser.parse_args()))
