"""Deterministic mode: a seed for every random choice and a virtual clock the test moves.

Two runs with the same seed and the same kafka-python calls write the same metadata records (each
record's bytes, read back from the segments; only the batches' timestamps differ), and a reassignment
is seen in progress, then done, without sleeping. The same through the control plane over HTTP."""
import pytest
from kafka import TopicPartition
from kafka.admin import AlterConfigOp, ConfigResource, KafkaAdminClient, NewTopic
from served import free_ports

from kraftwire.codec.records import encode_frame
from kraftwire.server.host.cluster import BackgroundCluster, Cluster
from kraftwire.server.raft.tools import partition_directory, read_log
from tests.wings.host.test_control_plane import call

MiB = 1 << 20


def records_of(data_dir) -> list[tuple]:
    """(offset, is control, record bytes) of every record in the log: everything but timestamps."""
    return [(offset, control, encode_frame(record, version) if not control else repr(record))
            for _path, (offset, _epoch, _timestamp, control, record, version)
            in read_log(partition_directory(data_dir))]


def one_run(data_dir, port: int) -> tuple[list, dict, float]:
    """Four brokers, seed 7, virtual clock: a placed topic, a throttled reassignment run to its end."""
    with BackgroundCluster(brokers=4, seed=7, virtual_clock=True, data_dir=data_dir, port=port,
                           controller_port=port - 1) as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap)
        try:
            admin.create_topics([NewTopic("orders", 3, 2, topic_configs={
                "kraftwire.partition.size.bytes": str(500 * MiB), "leader.replication.throttled.replicas": "*"})])
            for broker in range(1, 5):
                admin.alter_configs([ConfigResource("BROKER", str(broker), {
                    "leader.replication.throttled.rate": (AlterConfigOp.SET, str(100 * MiB))})])
            placed = {p["partition_index"]: p["replica_nodes"] for t in admin.describe_topics(["orders"])
                      for p in t["partitions"]}
            moved_to = [b for b in range(1, 5) if b not in placed[0]]
            admin.alter_partition_reassignments({TopicPartition("orders", 0): moved_to})
            bg.run(bg.cluster.advance(2))
            assert list(admin.list_partition_reassignments()) == [TopicPartition("orders", 0)]  # 2 s in: moving
            [progress] = bg.cluster.reassignment_progress().values()
            # two copies share the leader's 100 MiB/s throttle: 2 s moved 200 MiB, exactly
            assert (progress["rate"], progress["bytes_moved"]) == (100 * MiB, pytest.approx(200 * MiB, abs=2))
            took = bg.run(bg.cluster.run_until_reassignments_done())
            assert admin.list_partition_reassignments() == {}
        finally:
            admin.close()
        return records_of(data_dir), placed, took


def test_two_runs_with_one_seed_write_the_same_records(tmp_path):
    port = free_ports(5) + 1
    first, placed, took = one_run(tmp_path / "first", port)
    second, placed_again, took_again = one_run(tmp_path / "second", port)
    assert placed == placed_again and took == took_again
    assert took == pytest.approx(500 / 50 - 2, abs=0.01)  # each copy at 50 MiB/s, 2 s of them gone
    assert len(first) > 20 and first == second


def test_a_seed_decides_the_placement():
    """The same seed places the same way, another seed (here, over 6 partitions) differently."""
    def placement(seed: int) -> list:
        with BackgroundCluster(brokers=5, seed=seed) as bg:
            admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap)
            try:
                admin.create_topics([NewTopic("t", 6, 3)])
                return sorted((p["partition_index"], p["replica_nodes"]) for p in admin.describe_topics(["t"])[0]["partitions"])
            finally:
                admin.close()

    first, again, other = placement(1), placement(1), placement(2)
    assert first == again != other


async def test_advance_needs_the_virtual_clock_and_sane_time():
    async with Cluster(brokers=1) as cluster:
        with pytest.raises(ValueError, match="virtual_clock"):
            await cluster.advance(1)
    async with Cluster(brokers=1, virtual_clock=True) as cluster:
        for bad in (-1, float("nan"), float("inf"), "1", True):
            with pytest.raises(ValueError):
                await cluster.advance(bad)


def test_the_virtual_clock_over_http(tmp_path):
    """An out-of-process suite's view: kraftwire serve --seed --virtual-clock, driven by kafka-python and
    POST /api/clock/advance."""
    import json
    import urllib.error
    import urllib.request

    from served import Served

    port = free_ports(3) + 1
    served = Served(tmp_path, "--brokers", "2", "--port", str(port), "--controller-port", str(port - 1),
                    "--seed", "3", "--virtual-clock", "--control-port", "0", "--control-token", TOKEN,
                    "--data-dir", "state")
    control = None
    try:
        admin = KafkaAdminClient(bootstrap_servers=served.bootstrap)
        try:
            admin.create_topics([NewTopic("orders", replica_assignments={0: [1]})])  # 100 MiB
            admin.alter_configs([ConfigResource("BROKER", "2", {
                "kraftwire.replication.bandwidth.bytes.per.second": (AlterConfigOp.SET, str(10 * MiB))})])
            admin.alter_partition_reassignments({TopicPartition("orders", 0): [2]})
            control = _control_url(served)

            def post(body) -> tuple[int, dict]:
                request = urllib.request.Request(control + "/api/clock/advance", data=json.dumps(body).encode(),
                                                 method="POST", headers={"Authorization": f"Bearer {TOKEN}"})
                try:
                    with urllib.request.urlopen(request, timeout=60) as answer:
                        return answer.status, json.loads(answer.read())
                except urllib.error.HTTPError as refused:
                    return refused.code, json.loads(refused.read())

            assert post({"seconds": 4}) == (200, {"clock": {"virtual": True, "seconds": 4.0}})
            with urllib.request.urlopen(control + "/api/state", timeout=30) as answer:
                [moving] = json.loads(answer.read())["reassignments"]
            assert moving["bytes_moved"] == pytest.approx(40 * MiB, abs=2)  # 4 s at 10 MiB/s, no more
            assert post({"seconds": -1})[0] == 400 and post({"until": "later"})[0] == 400
            assert post({"until": "reassignments-done"}) == (200, {"clock": {"virtual": True, "seconds": 10.0}})
            assert admin.list_partition_reassignments() == {}
        finally:
            admin.close()
    finally:
        served.stop()


TOKEN = "virtual-clock-test"  # the control plane's writes need it


def _control_url(served) -> str:
    """The control plane's address, from the line ``kraftwire serve`` logged for it before it was ready."""
    line = served.wait_logged("control plane and live view on ")
    return line.split("control plane and live view on ", 1)[1].strip().rstrip("/")
