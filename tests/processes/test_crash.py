"""Crash tests: ``kraftwire serve`` as a process, driven by kafka-python, killed with SIGKILL at random
moments and restarted on the same data directory, dozens of times.

After each kill, most of the time the active segment is also cut back to a random length at or above
what the server had fsync'd (``synced-lengths.json``): a SIGKILL leaves the page cache intact, a power
loss would not. Every restart must then hold every acknowledged write, and nothing that was not
acknowledged may be half there: a topic has all its partitions or does not exist, a config holds an
acknowledged value or a later one, a reassigned partition targets its last acknowledged replica set or a
later one. The log of the last run must pass ``kraftwire log verify``.
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

import pytest
from kafka import KafkaAdminClient, TopicPartition
from kafka.admin import ConfigResource, NewTopic
from kafka.errors import KafkaConnectionError, KafkaTimeoutError, NodeNotReadyError, RequestTimedOutError

from tests.raft_helpers import partition_dir

# The suite's run kills the server ten times or more; a soak sets more, e.g.
# CRASH_KILLS=200 CRASH_TIME_BUDGET_S=3600 python -m pytest tests/processes/test_crash.py
KILLS = int(os.environ.get("CRASH_KILLS", "12"))
TIME_BUDGET_S = float(os.environ.get("CRASH_TIME_BUDGET_S", "40"))
MIN_KILLS = min(KILLS, 10)
BROKERS = 3
# What kafka-python raises when the server goes away under a request (RequestTimedOutError is also what
# it raises itself when no answer comes). Anything else (an error code in an answer, an answer it cannot
# read) came from a live server and fails the test.
TRANSPORT_ERRORS = (KafkaConnectionError, KafkaTimeoutError, NodeNotReadyError, RequestTimedOutError, OSError)


class Server:
    """One ``kraftwire serve`` process on a data directory; small segments and frequent snapshots so that
    kills land in rolls and snapshot writes too."""

    def __init__(self, data_dir, stderr_path):
        self.data_dir = data_dir
        self.stderr_path = stderr_path
        self.process: subprocess.Popen | None = None
        self.ready = threading.Event()
        self.bootstrap = ""

    def start(self) -> None:
        """Every listener on a port the kernel picks (none is probed, then lost to another socket)."""
        self.ready.clear()
        with open(self.stderr_path, "a") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "kraftwire", "serve", "--data-dir", str(self.data_dir),
                 "--brokers", str(BROKERS), "--port", "0", "--controller-port", "0",
                 "--log-segment-bytes", "16384", "--snapshot-every-records", "120", "--speed", "50",
                 "--log-level", "WARNING"], stdout=subprocess.PIPE, stderr=stderr, text=True)
        threading.Thread(target=self._watch, args=(self.process,), daemon=True).start()

    def _watch(self, process) -> None:
        with process.stdout:
            for line in process.stdout:
                if line.startswith("kraftwire ready on "):
                    self.bootstrap = line.split()[-1]
                    self.ready.set()

    def wait_ready(self, timeout: float = 60) -> None:
        if not self.ready.wait(timeout):
            raise AssertionError(f"the server did not become ready; exit code {self.process.poll()}; "
                                 f"stderr ends with:\n{self.stderr_tail()}")

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(30)

    def stderr_tail(self) -> str:
        with open(self.stderr_path) as f:
            return "".join(f.readlines()[-30:])


def lose_unsynced_data(data_dir, rng: random.Random) -> str:
    """Cut the active segment back to a random length no shorter than what was fsync'd."""
    directory = partition_dir(data_dir)
    report = directory / "synced-lengths.json"
    if not report.exists():  # killed in its first start-up, before the log had fsync'd anything
        return "nothing fsync'd yet"
    synced = json.loads(report.read_text())
    cuts = []
    for name, synced_bytes in synced.items():
        path = directory / name
        size = path.stat().st_size
        assert size >= synced_bytes, f"{name}: {size} bytes on disk but {synced_bytes} reported fsync'd"
        cut = rng.randint(synced_bytes, size)
        os.truncate(path, cut)
        cuts.append(f"{name} {size} -> {cut} (fsync'd {synced_bytes})")
    return "; ".join(cuts)


@dataclass
class Expected:
    """What the test asked for, and which of it was acknowledged ("acked") or left in doubt ("unknown")."""

    topics: dict = field(default_factory=dict)  # name -> {"partitions": n, "created": status, "deleted": status|None}
    configs: dict = field(default_factory=dict)  # topic -> [(value, status)], values increasing
    targets: dict = field(default_factory=dict)  # (topic, partition) -> [(replicas, status)]


class Driver:
    """Issues random admin operations until the server dies; records each outcome."""

    def __init__(self, expected: Expected, rng: random.Random):
        self.expected = expected
        self.rng = rng
        self.counter = 0

    def run(self, admin: KafkaAdminClient, killing: threading.Event) -> int:
        """Operations until the server is killed; how many were answered. Closes ``admin``."""
        done = 0
        try:
            while not killing.is_set():
                if not self._one(admin, killing):
                    break
                done += 1
        finally:
            admin.close()
        return done

    def _live_topics(self) -> list[str]:
        return [name for name, t in self.expected.topics.items() if t["created"] == "acked" and t["deleted"] is None]

    def _one(self, admin, killing: threading.Event) -> bool:
        """One random operation; False when the kill cut it off. A live server's error answer, or a lost
        connection while nobody was killing the server, fails the test."""
        rng, expected = self.rng, self.expected
        live = self._live_topics()
        choice = rng.random()
        self.counter += 1
        try:
            if not live or choice < 0.35:
                name = f"t{self.counter:05d}"
                partitions = rng.randint(1, 6)
                expected.topics[name] = {"partitions": partitions, "created": "unknown", "deleted": None}
                admin.create_topics([NewTopic(name, partitions, rng.randint(1, BROKERS))])  # raises an error answer
                expected.topics[name]["created"] = "acked"
            elif choice < 0.7:
                name = rng.choice(live)
                history = expected.configs.setdefault(name, [])
                value = str(self.counter)
                history.append([value, "unknown"])
                answer = admin.alter_configs([ConfigResource("TOPIC", name, {"retention.ms": value})])
                assert answer == {"topic": {name: "OK"}}, f"alter_configs of live topic {name}: {answer}"
                history[-1][1] = "acked"
            elif choice < 0.9:
                name = rng.choice(live)
                partition = rng.randrange(expected.topics[name]["partitions"])
                target = rng.sample(range(1, BROKERS + 1), rng.randint(1, BROKERS))
                history = expected.targets.setdefault((name, partition), [])
                history.append([target, "unknown"])
                key = TopicPartition(name, partition)
                answer = admin.alter_partition_reassignments({key: target})
                assert answer == {key: None}, f"reassignment of live {key} to {target} refused: {answer}"
                history[-1][1] = "acked"
            else:
                name = rng.choice(live)
                expected.topics[name]["deleted"] = "unknown"
                admin.delete_topics([name])  # raises an error answer
                expected.topics[name]["deleted"] = "acked"
        except TRANSPORT_ERRORS:
            if killing.is_set():
                return False  # the server died under this request: its outcome stays "unknown"
            raise  # the server was not being killed: it hung, crashed or dropped the connection
        return True


def check(admin, expected: Expected) -> None:
    # Reassignments first: one listed now may complete before the topics are described, never the reverse
    # (nothing starts a new one while this runs).
    ongoing = admin.list_partition_reassignments()
    names = sorted(expected.topics)
    present = {t["name"]: t for t in admin.describe_topics() if not t.get("is_internal")}
    assert set(present) <= set(names), f"topics nobody created: {set(present) - set(names)}"
    for name, wanted in expected.topics.items():
        topic = present.get(name)
        if wanted["deleted"] == "acked":
            assert topic is None, f"{name}: deleted (acknowledged) but still there"
        elif wanted["created"] == "acked" and wanted["deleted"] is None:
            assert topic is not None, f"{name}: created (acknowledged) but missing"
        if topic is not None:
            assert len(topic["partitions"]) == wanted["partitions"], (
                f"{name}: {len(topic['partitions'])} of {wanted['partitions']} partitions")
    with_configs = [n for n in expected.configs if n in present]
    if with_configs:
        described = admin.describe_configs([ConfigResource("TOPIC", n, ["retention.ms"]) for n in with_configs])
        for name in with_configs:
            entry = described["topic"][name].get("retention.ms")  # kafka-python lists dynamic values only
            history = expected.configs[name]
            acked = max((i for i, (_v, status) in enumerate(history) if status == "acked"), default=None)
            allowed = [v for v, _s in history[acked:]] if acked is not None else [None] + [v for v, _s in history]
            value = entry["value"] if entry is not None else None
            assert value in allowed, f"{name}: retention.ms {value}, expected one of {allowed} ({history})"
    for (name, partition), history in expected.targets.items():
        topic = present.get(name)
        if topic is None or expected.topics[name]["deleted"] is not None:
            continue
        state = {p["partition_index"]: p for p in topic["partitions"]}[partition]
        key = TopicPartition(name, partition)
        if key in ongoing:
            replicas = ongoing[key]["replicas"]
            removing = set(ongoing[key]["removing_replicas"])
            target = [b for b in replicas if b not in removing]
        else:
            target = state["replica_nodes"]
        acked = max((i for i, (_t, status) in enumerate(history) if status == "acked"), default=None)
        if acked is None:
            continue
        allowed = [t for t, _s in history[acked:]]
        assert target in allowed, (f"{name}-{partition}: replicas {target}, expected one of {allowed}; "
                                   f"partition {state}, reassignment {ongoing.get(key)}")


def check_server(server: Server, expected: Expected) -> None:
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap, client_id="crash-check")
    try:
        check(admin, expected)
    finally:
        admin.close()


@pytest.fixture
def server(tmp_path):
    server = Server(tmp_path / "data", tmp_path / "server.stderr")
    yield server
    if server.process is not None and server.process.poll() is None:
        server.kill()


@pytest.mark.slow
def test_sigkill_at_random_moments_loses_nothing_acknowledged(server):
    seed = int(os.environ.get("CRASH_SEED", time.time_ns()))
    print(f"CRASH_SEED={seed}")  # shown when the test fails, to replay the same choices
    rng = random.Random(seed)
    data_dir = server.data_dir
    expected = Expected()
    driver = Driver(expected, rng)
    started = time.monotonic()
    kills = operations = cuts = 0
    while kills < KILLS and (time.monotonic() - started < TIME_BUDGET_S or kills < MIN_KILLS):
        server.start()
        if rng.random() < 0.15:  # die during start-up: recovery, quorum-state, the LeaderChange write
            time.sleep(rng.uniform(0.0, 0.6))
        else:
            server.wait_ready()
            check_server(server, expected)
            killing = threading.Event()  # set before the SIGKILL: errors after it may be the kill's
            timer = threading.Timer(rng.uniform(0.2, 1.5), lambda: (killing.set(), server.kill()))
            admin = KafkaAdminClient(bootstrap_servers=server.bootstrap, client_id="crash-test",
                                     request_timeout_ms=4000, reconnect_backoff_max_ms=200)
            timer.start()  # counted from a connected client: a loaded machine's slow connect takes no operation away
            operations += driver.run(admin, killing)
            timer.join()
        if server.process.poll() is None:
            server.kill()
        kills += 1
        if rng.random() < 0.7:
            lose_unsynced_data(data_dir, rng)
            cuts += 1

    server.start()
    server.wait_ready()
    check_server(server, expected)
    assert server.stop() == 0
    verify = subprocess.run([sys.executable, "-m", "kraftwire", "log", "verify", str(data_dir)],
                            capture_output=True, text=True, timeout=60)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    acked = sum(t["created"] == "acked" for t in expected.topics.values())
    assert kills >= MIN_KILLS and cuts and operations > 3 * kills and acked > kills, (kills, cuts, operations, acked)
    assert len(list(partition_dir(data_dir).glob("*.log"))) > 1
    assert list(partition_dir(data_dir).glob("*.checkpoint"))
