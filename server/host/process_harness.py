"""``ProcessCluster``: ``kraftwire controller`` and ``kraftwire broker`` processes of one cluster on this
machine and the harness operations over them, the scripting layer for a multi-process deployment as
``Cluster`` and the control plane are for an in-process one: kill -9 and restart, SIGSTOP and SIGCONT,
cutting and healing the link between two nodes, and which controller is active (DescribeQuorum over TCP).

Every node's ``controller.quorum.voters`` names the controllers at addresses of TCP proxies the harness
owns, one per direction of every link to a controller (``LinkProxy``), so a cut is real on the wire: the
proxies drop their connections and close every new one at once, until the link heals (a controller
never connects to a broker: a cut between them stops the broker's requests and metadata fetches). Nodes listen
on ports the kernel gives; a restarted one gets a new port and the proxies follow it. Each node's
directory is ``<root>/<role>-<id>`` (a controller's metadata.log.dir, a broker's log.dirs), formatted
with ``kraftwire format``, its properties file and its log beside it; after ``stop_all`` the
controllers' logs are read offline with kraftwire's own reader (``log_dump``, ``committed_batches``).
tests/processes/test_chaos_processes.py, tests/processes/test_frozen_controller.py, bench/chaos.py and
bench/frozen_controller.py use it.
"""
from __future__ import annotations

import asyncio
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from kraftwire.codec import ErrorCode
from kraftwire.codec.log_layout import METADATA_PARTITION, METADATA_TOPIC, PARTITION_DIR
from kraftwire.codec.message import Message
from kraftwire.codec.messages import DescribeQuorumRequest, DescribeQuorumResponse
from kraftwire.server.raft.segments import mapped, walk
from kraftwire.server.raft.storage import kafka_uuid, random_kafka_uuid
from kraftwire.server.raft.tools import segment_paths
from kraftwire.server.wire.client import KafkaClient, KafkaClientError

Address = tuple[str, int]
T = TypeVar("T")
HOST = "127.0.0.1"
COPY_CHUNK = 1 << 16


class LinkProxy:
    """One direction of one link: accepts on a kernel-given port and pipes each connection to ``target()``
    (None: the destination is down, the connection is closed), unless the link is cut."""

    def __init__(self, target: Callable[[], Address | None]):
        self._target = target
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()
        self.cut = False
        self.port = 0

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, HOST, 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        target = self._target()
        if self.cut or target is None:
            writer.transport.abort()
            return
        try:
            upstream_reader, upstream = await asyncio.open_connection(*target)
        except OSError:
            writer.transport.abort()
            return
        if self.cut:  # cut while connecting
            writer.transport.abort()
            upstream.transport.abort()
            return
        self._open.update((writer, upstream))
        await asyncio.gather(self._pipe(reader, upstream), self._pipe(upstream_reader, writer))
        self._open.difference_update((writer, upstream))

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(COPY_CHUNK):
                writer.write(data)
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.transport.abort()

    def set_cut(self, cut: bool) -> None:
        self.cut = cut
        if cut:
            for writer in list(self._open):
                writer.transport.abort()

    async def close(self) -> None:
        self.set_cut(True)
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


class ProcessCluster:
    """``count`` controller processes (ids ``first_id``..) and ``brokers`` broker processes (ids 1..) of one
    new cluster under ``root``."""

    def __init__(self, root: str | Path, count: int = 3, brokers: int = 0, first_id: int = 3000,
                 quorum_timers: str = "short", python: str = sys.executable):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.ids = [first_id + i for i in range(count)]  # the controllers
        self.broker_ids = list(range(1, brokers + 1))
        self.cluster_id = kafka_uuid(random_kafka_uuid())
        self._python, self._timers = python, quorum_timers
        self.addresses: dict[int, Address] = {}  # the running nodes' listeners
        self.processes: dict[int, subprocess.Popen] = {}
        self.paused: set[int] = set()
        self.kills = self.pauses = self.cuts = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="kraftwire-harness", daemon=True)
        self._thread.start()
        self.proxies = {(a, b): LinkProxy(self._address_of(b))
                        for a in self.ids + self.broker_ids for b in self.ids if a != b}
        for proxy in self.proxies.values():
            self._run(proxy.start())
        for node_id in self.ids + self.broker_ids:
            self.config_path(node_id).write_text(self.properties(node_id))
            subprocess.run(self.command("format", node_id) + [f"--cluster-id={self.cluster_id}"], check=True,
                           capture_output=True, text=True)

    def _address_of(self, node_id: int) -> Callable[[], Address | None]:
        """Where a node listens while it runs (None while it is down), as its proxies find it."""
        return lambda: self.addresses.get(node_id)

    def _run(self, coroutine: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    # --- configuration --------------------------------------------------------------------------

    def role(self, node_id: int) -> str:
        return "controller" if node_id in self.ids else "broker"

    def data_dir(self, node_id: int) -> Path:
        return self.root / f"{self.role(node_id)}-{node_id}"

    def config_path(self, node_id: int) -> Path:
        return self.root / f"{self.role(node_id)}-{node_id}.properties"

    def properties(self, node_id: int) -> str:
        """A Kafka server.properties for one node: the controllers at the proxies of its links."""
        voters = ",".join(f"{v}@{HOST}:{0 if v == node_id else self.proxies[(node_id, v)].port}" for v in self.ids)
        role = self.role(node_id)
        listener, directory = ("CONTROLLER", "metadata.log.dir") if role == "controller" else ("PLAINTEXT", "log.dirs")
        return (f"process.roles={role}\nnode.id={node_id}\nlisteners={listener}://{HOST}:0\n"
                f"controller.listener.names=CONTROLLER\ncontroller.quorum.voters={voters}\n"
                f"{directory}={self.data_dir(node_id)}\n")

    @property
    def bootstrap(self) -> str:
        """The running brokers, for a client's bootstrap servers."""
        return ",".join(f"{h}:{p}" for b in self.broker_ids if (a := self.addresses.get(b)) for h, p in [a])

    def command(self, subcommand: str, node_id: int) -> list[str]:
        command = [self._python, "-m", "kraftwire", subcommand, "-c", str(self.config_path(node_id))]
        return command + ["--quorum-timers", self._timers] if subcommand in ("controller", "broker") else command

    # --- processes ------------------------------------------------------------------------------

    def start(self, *node_ids: int, timeout: float = 60.0) -> None:
        """Start nodes' processes side by side and wait for each one's ready line (which names its port)."""
        spawned = {}
        for node_id in node_ids:
            with open(self.root / f"{self.role(node_id)}-{node_id}.log", "ab") as log:
                spawned[node_id] = subprocess.Popen(self.command(self.role(node_id), node_id),
                                                    stdout=subprocess.PIPE, stderr=log)
        deadline = time.monotonic() + timeout
        for node_id, process in spawned.items():
            line = b""
            while b"\n" not in line:
                if process.poll() is not None or time.monotonic() > deadline:
                    for started in spawned.values():
                        started.kill()
                        started.wait()
                    name = f"{self.role(node_id)}-{node_id}"
                    raise RuntimeError(f"{name} did not start (see {self.root}/{name}.log)")
                stdout = process.stdout
                assert stdout is not None  # (spawned with stdout=PIPE)
                if select.select([stdout], [], [], 0.1)[0]:
                    line += os.read(stdout.fileno(), 4096)
            host, _, port = line.split(b"\n")[0].decode().rpartition(" ")[2].rpartition(":")
            self.processes[node_id] = process
            self.addresses[node_id] = (host, int(port))

    def start_all(self) -> None:
        """Every node at once: a broker is ready once the quorum has taken its registration."""
        self.start(*self.ids, *self.broker_ids)

    def kill(self, node_id: int) -> None:
        """kill -9: the process loses whatever it had not fsync'd."""
        process = self.processes.pop(node_id)
        self.addresses.pop(node_id, None)
        self.paused.discard(node_id)
        process.send_signal(signal.SIGKILL)
        process.wait()
        self.kills += 1

    def pause(self, node_id: int) -> None:
        """SIGSTOP: frozen, its connections open and unanswered, until ``resume``."""
        self.processes[node_id].send_signal(signal.SIGSTOP)
        self.paused.add(node_id)
        self.pauses += 1

    def resume(self, node_id: int) -> None:
        self.processes[node_id].send_signal(signal.SIGCONT)
        self.paused.discard(node_id)

    def cut(self, a: int, b: int) -> None:
        """Cut the link between two nodes (one of them a controller), both ways, until ``heal``."""
        self._set_cut(a, b, True)
        self.cuts += 1

    def heal(self, a: int, b: int) -> None:
        self._set_cut(a, b, False)

    def _set_cut(self, a: int, b: int, cut: bool) -> None:
        proxies = [p for p in (self.proxies.get((a, b)), self.proxies.get((b, a))) if p is not None]
        if not proxies:
            raise KeyError(f"no link between {a} and {b} goes through the harness")
        self._set_cuts(proxies, cut)

    def heal_all(self) -> None:
        self._set_cuts(list(self.proxies.values()), False)

    def _set_cuts(self, proxies: list[LinkProxy], cut: bool) -> None:
        """Cut or heal on the proxies' own loop: aborting their connections from this thread raced with
        the loop closing one (a transport already detached from its loop failed in ``abort``)."""
        async def apply() -> None:
            for proxy in proxies:
                proxy.set_cut(cut)
        self._run(apply())

    def stop_all(self, timeout: float = 30.0) -> None:
        """SIGCONT the paused, then SIGTERM every controller (a clean stop) and wait; kill -9 after ``timeout``."""
        for node_id in list(self.paused):
            self.resume(node_id)
        for process in self.processes.values():
            process.send_signal(signal.SIGTERM)
        for node_id, process in list(self.processes.items()):
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            self.processes.pop(node_id)
            self.addresses.pop(node_id, None)

    def close(self) -> None:
        self.stop_all()
        for proxy in self.proxies.values():
            self._run(proxy.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def __enter__(self) -> ProcessCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the quorum, over TCP -------------------------------------------------------------------

    def request(self, node_id: int, request: Message, version: int, timeout: float = 5.0) -> Any:
        """Send one request to a running controller's listener (directly, not through a proxy)."""
        async def send() -> Any:
            client = KafkaClient(*self.addresses[node_id], "kraftwire-harness")
            try:
                return await asyncio.wait_for(client.send(request, version), timeout)
            finally:
                await client.close()
        return self._run(send(), timeout + 5)

    def describe_quorum(self) -> tuple[int, DescribeQuorumResponse.PartitionData] | None:
        """(active controller id, its DescribeQuorum partition) from whichever running controller leads,
        or None while none answers as the leader."""
        partition = DescribeQuorumRequest.PartitionData(partition_index=METADATA_PARTITION)
        request = DescribeQuorumRequest(topics=[DescribeQuorumRequest.TopicData(topic_name=METADATA_TOPIC,
                                                                                partitions=[partition])])
        for node_id in sorted(set(self.ids) & set(self.addresses) - self.paused):
            try:
                answer = self.request(node_id, request, 2, timeout=2.0)
            except (TimeoutError, KafkaClientError, OSError, KeyError):
                continue
            if answer.error_code == ErrorCode.NONE and answer.topics[0].partitions[0].error_code == ErrorCode.NONE:
                return node_id, answer.topics[0].partitions[0]
        return None

    def active(self) -> int | None:
        described = self.describe_quorum()
        return None if described is None else described[0]

    def wait_converged(self, timeout: float = 60.0) -> int:
        """Wait until every voter has the leader's whole log and it is all committed; returns the high
        watermark (TimeoutError otherwise)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            described = self.describe_quorum()
            if described is not None:
                leader_id, partition = described
                ends = {v.replica_id: v.log_end_offset for v in partition.current_voters}
                if set(ends) == set(self.ids) and set(ends.values()) == {partition.high_watermark}:
                    return partition.high_watermark
            time.sleep(0.05)
        raise TimeoutError("the controllers did not converge on one committed log in time")

    # --- the logs, offline ----------------------------------------------------------------------

    def log_dump(self, node_id: int) -> list[dict]:
        """``kraftwire log dump --json`` of a stopped controller's data directory, one dict per record."""
        out = subprocess.run([self._python, "-m", "kraftwire", "log", "dump", "--json", str(self.data_dir(node_id))],
                             check=True, capture_output=True, text=True).stdout
        return [json.loads(line) for line in out.splitlines() if line.strip()]

    def committed_batches(self, node_id: int, high_watermark: int) -> list[tuple[int, bytes]]:
        """(base offset, the batch's bytes) of every batch of a stopped controller's segments below the
        high watermark, in log order."""
        batches: list[tuple[int, bytes]] = []
        for path in segment_paths(self.data_dir(node_id) / PARTITION_DIR):
            with mapped(path) as buf:
                for position, header in walk(buf, 0, None, None):
                    if header.base_offset >= high_watermark:
                        return batches
                    batches.append((header.base_offset, bytes(buf[position:position + header.size])))
        return batches
