"""Pausing and resuming replication on a broker, and changing the simulation speed, over the control
plane while kafka-python drives throttled reassignments and directory moves."""
import asyncio
import time
import urllib.request

import pytest
from kafka import KafkaAdminClient, TopicPartition, TopicPartitionReplica
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.errors import NoError

from kraftwire.server.host.cluster import BackgroundCluster
from tests.wings.host.test_control_plane import admin, bg, call, until  # noqa: F401 (fixtures: a 3-broker cluster, its client)

MiB = 1 << 20
PARTITION_SIZE = "kraftwire.partition.size.bytes"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
FOLLOWER_RATE = "follower.replication.throttled.rate"
ALTER_DIRS_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"


def throttled_move(admin, topic: str, size: int, rate: int) -> None:
    """Move a partition of ``size`` bytes from broker 1 to broker 2, copied at ``rate`` bytes/s (a
    follower throttle on broker 2)."""
    admin.create_topics([NewTopic(topic, -1, -1, replica_assignments={0: [1]},
                                  topic_configs={PARTITION_SIZE: str(size), FOLLOWER_REPLICAS: "*"})])
    admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, "2", configs={FOLLOWER_RATE: str(rate)})])
    admin.alter_partition_reassignments({TopicPartition(topic, 0): [2]})


def progress(bg) -> dict | None:
    """The one ongoing reassignment as /api/state shows it (None once done)."""
    status, state = call(bg, "GET", "/api/state")
    assert status == 200
    (moving,) = state["reassignments"] or [None]
    return moving


def moved(bg) -> int:
    return (progress(bg) or {"bytes_moved": 0})["bytes_moved"]


def finish(bg, admin, topic: str) -> None:
    assert call(bg, "POST", "/api/reassignments/wait", {"timeout": 30}) == (200, {"ongoing": 0})
    assert admin.describe_topics([topic])[0]["partitions"][0]["replica_nodes"] == [2]


@pytest.mark.parametrize("paused", [2, 1], ids=["follower", "leader"])
def test_paused_replication_stands_still_and_resumes_where_it_stopped(bg, admin, paused):
    size = 20 * MiB
    throttled_move(admin, "held", size, 256 << 10)  # 80 s: still under way when paused, however loaded the machine
    until(lambda: moved(bg) > 0)

    status, broker = call(bg, "POST", f"/api/brokers/{paused}/replication/pause")
    assert status == 200 and broker["id"] == paused and broker["replication_paused"]
    held = progress(bg)
    assert held["rate"] == 0 and held["seconds_left"] is None
    assert 0 < held["bytes_moved"] < size and held["bytes_moved"] + held["bytes_left"] == size
    time.sleep(0.3)
    assert progress(bg) == held
    brokers = call(bg, "GET", "/api/brokers")[1]
    assert {b["id"]: b["replication_paused"] for b in brokers} == {b: b == paused for b in (1, 2, 3)}
    view = call_html(bg, "/view")
    rows = {b: view[view.index(f'data-broker="{b}"'):].split("</tr>")[0] for b in (1, 2, 3)}
    assert ">paused<" in rows[paused] and all(">paused<" not in rows[b] for b in (1, 2, 3) if b != paused)
    again = call(bg, "POST", f"/api/brokers/{paused}/replication/pause")  # pausing twice changes nothing
    assert again[0] == 200 and progress(bg) == held

    status, broker = call(bg, "POST", f"/api/brokers/{paused}/replication/resume")
    assert status == 200 and not broker["replication_paused"]
    after = progress(bg)
    assert after is None or held["bytes_moved"] <= after["bytes_moved"] <= size
    admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, "2", configs={FOLLOWER_RATE: str(100 * MiB)})])
    finish(bg, admin, "held")


def call_html(bg, path: str) -> str:
    with urllib.request.urlopen(bg.cluster.control_server.url + path, timeout=30) as answer:
        return answer.read().decode()


def test_speed_changes_keep_progress_continuous(bg, admin):
    size = 100 * MiB
    throttled_move(admin, "hurried", size, 1 * MiB)  # 100 s at speed 1
    until(lambda: moved(bg) > 0)
    samples = [progress(bg)]

    async def slow_down():
        """Within one turn of the loop: progress just before and just after the speed changes."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        before = bg.cluster.reassignment_progress()
        await bg.cluster.set_speed(0.5)
        after = bg.cluster.reassignment_progress()
        return before, after, loop.time() - started

    before, after, elapsed = bg.run(slow_down())
    ((key, first),), ((_, second),) = before.items(), after.items()
    assert key == ("hurried", 0)
    assert 0 <= second["bytes_moved"] - first["bytes_moved"] <= first["rate"] * elapsed + 1  # no jump either way
    samples.append(progress(bg))

    assert call(bg, "PUT", "/api/speed", {"speed": 50}) == (200, {"speed": 50.0})
    assert call(bg, "GET", "/api/state")[1]["speed"] == 50.0
    while (sample := progress(bg)) is not None:
        samples.append(sample)
    assert all(s["bytes_moved"] + s["bytes_left"] == size and s["bytes_left"] >= 0 for s in samples)
    assert [s["bytes_moved"] for s in samples] == sorted(s["bytes_moved"] for s in samples)
    finish(bg, admin, "hurried")


@pytest.mark.parametrize("method, path, body, raw, status", [
    ("POST", "/api/brokers/9/replication/pause", None, None, 404),
    ("POST", "/api/brokers/one/replication/resume", None, None, 404),
    ("GET", "/api/brokers/1/replication/pause", None, None, 405),
    ("PUT", "/api/speed", {"speed": 0}, None, 400),
    ("PUT", "/api/speed", {"speed": -2}, None, 400),
    ("PUT", "/api/speed", {"speed": "fast"}, None, 400),
    ("PUT", "/api/speed", {"speed": True}, None, 400),
    ("PUT", "/api/speed", {"speed": None}, None, 400),
    ("PUT", "/api/speed", {}, None, 400),
    ("PUT", "/api/speed", None, b'{"speed": NaN}', 400),
    ("PUT", "/api/speed", None, b'{"speed": Infinity}', 400),
    ("PUT", "/api/speed", None, b"[50]", 400),
    ("PUT", "/api/speed", None, b"{fast", 400),
    ("POST", "/api/speed", {"speed": 2}, None, 405),
])
def test_bad_requests_get_4xx_and_change_nothing(bg, method, path, body, raw, status):
    answer_status, answer = call(bg, method, path, body, raw)
    assert answer_status == status
    assert isinstance(answer["error"], str) and answer["error"]
    state = call(bg, "GET", "/api/state")[1]
    assert state["speed"] == 1.0 and not any(b["replication_paused"] for b in state["brokers"])


def test_paused_broker_moves_no_bytes_between_its_log_directories():
    with BackgroundCluster(brokers=2, log_dirs=2, control_port=0) as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="replication-control-test")
        try:
            admin.create_topics([NewTopic("relocated", -1, -1, replica_assignments={0: [1, 2]},
                                          topic_configs={PARTITION_SIZE: str(8 * MiB)})])
            admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, "1",
                                                configs={ALTER_DIRS_RATE: str(8 * MiB)})])
            assert call(bg, "POST", "/api/brokers/1/replication/pause")[0] == 200
            until(lambda: len(future_or_current(admin)) == 1)
            (source,) = future_or_current(admin).values()
            target = next(d["log_dir"] for d in admin.describe_log_dirs(brokers=[1])[0]["log_dirs"]
                          if d["log_dir"] != source[0])
            assert admin.alter_replica_log_dirs({TopicPartitionReplica("relocated", 0, 1): target}) == {
                TopicPartitionReplica("relocated", 0, 1): NoError}
            held = future_or_current(admin)
            assert held[True] == (target, 0, 8 * MiB)  # the future replica: nothing copied yet
            time.sleep(0.3)
            assert future_or_current(admin) == held

            assert call(bg, "POST", "/api/brokers/1/replication/resume")[0] == 200
            until(lambda: future_or_current(admin) == {False: (target, 8 * MiB, 0)})
        finally:
            admin.close()


def future_or_current(admin) -> dict[bool, tuple[str, int, int]]:
    """Broker 1's logs of partition relocated-0, by is-future: (directory, size, offset lag)."""
    (described,) = admin.describe_log_dirs({"relocated": [0]}, brokers=[1])
    return {p["is_future_key"]: (d["log_dir"], p["partition_size"], p["offset_lag"])
            for d in described["log_dirs"] for t in d["topics"] for p in t["partitions"]}
