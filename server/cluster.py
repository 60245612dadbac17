"""``Cluster``: an embedded kraftwire cluster, the same code ``kraftwire serve`` runs.

    async with Cluster(brokers=4) as cluster:
        admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
        await cluster.broker(2).stop()      # the controller fences it after the session timeout

``port=0`` (the default here) gives every listener an ephemeral port, so tests can run side by side;
``kraftwire serve`` uses 9092, 9093, ... for brokers 1, 2, ... Timings are shorter than Kafka's
defaults (heartbeat 500 ms, session 3 s instead of 2 s and 9 s) so that tests see fencing quickly.
``speed`` runs the simulated replication (``server.replication``) that many times faster than real time.
"""
from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from .controller import Controller
from .log import MemoryLog
from .nodes import BrokerNode, ControllerNode
from .replication import ReplicationNetwork

DEFAULT_HEARTBEAT_INTERVAL_MS = 500
DEFAULT_SESSION_TIMEOUT_MS = 3000


class Cluster:
    def __init__(self, brokers: int = 3, *, host: str = "127.0.0.1", port: int = 0, controller_port: int = 0,
                 data_dir: str | Path | None = None, racks: list[str | None] | None = None,
                 heartbeat_interval_ms: int = DEFAULT_HEARTBEAT_INTERVAL_MS,
                 session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS, cluster_id: str | None = None,
                 speed: float = 1.0):
        if brokers < 1:
            raise ValueError("a cluster needs at least one broker")
        self.host = host
        self.data_dir = Path(data_dir) if data_dir is not None else None
        self.log = MemoryLog()
        self.controller = Controller(self.log, cluster_id=cluster_id, session_timeout_ms=session_timeout_ms)
        self.controller_node = ControllerNode(self.controller, host, controller_port)
        self.network = ReplicationNetwork(lambda: self.controller.committed, speed)
        self.controller.add_commit_listener(self.network.on_commit)
        racks = racks or [None] * brokers
        self.brokers = [
            BrokerNode(i + 1, host, port + i if port else 0, self.controller, self.controller_node,
                       rack=racks[i], log_dirs=[uuid.uuid4()], heartbeat_interval_ms=heartbeat_interval_ms,
                       network=self.network)
            for i in range(brokers)
        ]

    def broker(self, broker_id: int) -> BrokerNode:
        return self.brokers[broker_id - 1]

    @property
    def bootstrap(self) -> str:
        """``host:port,...`` of the running brokers, for a client's bootstrap servers."""
        return ",".join(f"{b.host}:{b.port}" for b in self.brokers if b.running)

    async def start(self, ready_timeout: float = 10.0) -> None:
        if self.data_dir is not None:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        await self.controller.start()
        await self.controller_node.start()
        await asyncio.gather(*(b.start() for b in self.brokers))
        await self.wait_until(lambda image: all(
            (b := image.brokers.get(n.broker_id)) is not None and not b.fenced for n in self.brokers), ready_timeout)

    async def stop(self) -> None:
        for broker in self.brokers:
            await broker.stop()
        await self.controller_node.stop()
        await self.controller.stop()

    def reassignment_progress(self) -> dict:
        """Each reassigning partition's data movement: ``{(topic, partition): {"adding": [...],
        "bytes_moved", "bytes_left", "rate"}}``, bytes summed over its adding replicas' copies and the
        rate in bytes per second of simulated time."""
        copies = {(c["topic"], c["partition"], c["follower"]): c for c in self.network.progress()}
        progress = {}
        for topic, index, state in self.controller.committed.partitions():
            if not state.adding and not state.removing:
                continue
            moving = [copies[key] for b in state.adding if (key := (topic.name, index, b)) in copies]
            progress[(topic.name, index)] = {
                "adding": list(state.adding), "removing": list(state.removing),
                "bytes_moved": sum(c["bytes_moved"] for c in moving),
                "bytes_left": sum(c["bytes_left"] for c in moving),
                "rate": sum(c["rate"] for c in moving)}
        return progress

    async def wait_until(self, predicate, timeout: float = 10.0, interval: float = 0.02) -> None:
        """Wait until ``predicate(committed image)`` holds; TimeoutError otherwise."""
        deadline = asyncio.get_running_loop().time() + timeout
        while not predicate(self.controller.committed):
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError("the cluster did not reach the expected state in time")
            await asyncio.sleep(interval)

    async def __aenter__(self) -> "Cluster":
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.stop()


class BackgroundCluster:
    """A ``Cluster`` on its own event loop in a daemon thread, for synchronous code and clients:

        with BackgroundCluster(brokers=3) as bg:
            admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap)
            bg.run(bg.cluster.broker(2).stop())   # run a coroutine on the cluster's loop
    """

    def __init__(self, *args, **kwargs):
        import threading

        self._args, self._kwargs = args, kwargs
        self._loop = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name="kraftwire-cluster", daemon=True)
        self.cluster: Cluster | None = None

    def _main(self) -> None:
        import uvloop

        self._loop = uvloop.new_event_loop()
        asyncio.set_event_loop(self._loop)
        self._ready.set()
        self._loop.run_forever()

    def run(self, coroutine, timeout: float | None = 60.0):
        """Run a coroutine on the cluster's loop and return its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    def call(self, function, *args):
        """Call a plain function on the cluster's loop (to read state without racing it)."""
        async def wrapper():
            return function(*args)
        return self.run(wrapper())

    @property
    def bootstrap(self) -> str:
        return self.call(lambda: self.cluster.bootstrap)

    def start(self) -> "BackgroundCluster":
        self._thread.start()
        self._ready.wait()

        async def create_and_start():
            self.cluster = Cluster(*self._args, **self._kwargs)
            await self.cluster.start()

        self.run(create_and_start())
        return self

    def stop(self) -> None:
        if self.cluster is not None:
            self.run(self.cluster.stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def __enter__(self) -> "BackgroundCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
