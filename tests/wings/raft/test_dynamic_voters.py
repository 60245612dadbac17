"""Dynamic voters (KIP-853) over the wire: a controller replaced with Kafka's own ``kafka-metadata-quorum``
while an admin client's writes keep being acknowledged, Kafka's error codes for bad voter changes, the
voter set and kraft.version as they survive restarts, and the log as Kafka's tools read it."""
from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
import uuid

import pytest
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import TopicAlreadyExistsError

from apache_kafka import DUMP_LOG, METADATA_QUORUM, run_tool
from kraftwire import BackgroundCluster
from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.constants import ZERO_UUID
from kraftwire.codec.messages import (AddRaftVoterRequest, ApiVersionsRequest, DescribeQuorumRequest,
                                      RemoveRaftVoterRequest)
from kraftwire.server.raft import Timers
from kraftwire.server.raft.storage import kafka_uuid
from raw_client import RawConnection
from tests.wings.raft.test_controller_quorum import wait_for


def quorum_tool(bg, *args, expect: int = 0) -> str:
    done = run_tool(METADATA_QUORUM, "--bootstrap-server", bg.bootstrap, *args)
    assert done.returncode == expect, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout + (done.stderr if expect else "")


def described(bg) -> dict:
    """DescribeQuorum v2 through a broker (forwarded to the active controller), as kafka-python asks it."""
    admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="voters-test")
    try:
        return admin.describe_metadata_quorum()["topics"][0]["partitions"][0]
    finally:
        admin.close()


def caught_up_observer(bg, node_id: int) -> bool:
    quorum = described(bg)
    return any(o["replica_id"] == node_id and o["log_end_offset"] >= quorum["high_watermark"]
               for o in quorum["observers"])


def create_topic(bg, name: str) -> set[str]:
    """Create a topic through kafka-python and return the topics listed then. TopicAlreadyExists is the
    answer, as from Kafka, when the first attempt committed although its controller lost the leadership
    before answering (the broker then forwards the retry to the next one)."""
    admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="voters-test", request_timeout_ms=30000)
    try:
        try:
            admin.create_topics([NewTopic(name, 1, 1)])
        except TopicAlreadyExistsError:
            pass
        return set(admin.list_topics())
    finally:
        admin.close()


def voter_ids(bg) -> list[int]:
    return sorted(v["replica_id"] for v in described(bg)["current_voters"])


def controller_address(bg, node_id: int) -> str:
    return bg.call(lambda: "{0.host}:{0.port}".format(
        bg.cluster.controller_nodes[bg.cluster.controller_ids.index(node_id)]))


class Writer:
    """Creates topics one after another through kafka-python until stopped, noting each acknowledged
    one with the phase it was acknowledged in, and every failure."""

    def __init__(self, bg):
        self.admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="voters-writer",
                                      request_timeout_ms=30000)
        self.phase = "start"
        self.acknowledged: list[tuple[str, str]] = []
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        n = 0
        while not self._stop.is_set():
            name, phase = f"w-{n}", self.phase
            try:
                self.admin.create_topics([NewTopic(name, 1, 2)])
                self.acknowledged.append((name, phase))
            except TopicAlreadyExistsError:
                # As with Kafka: a write in flight when its controller resigned is answered NOT_CONTROLLER,
                # commits under the next leader all the same, and the client's retry finds it done.
                self.acknowledged.append((name, phase))
            except Exception as exc:  # noted, and the test fails on it
                self.failures.append(f"{name}: {exc!r}")
            n += 1

    def acknowledged_in(self, phase: str) -> int:
        return sum(1 for _, p in self.acknowledged if p == phase)

    def next_phase(self, phase: str) -> None:
        """Start a phase once the current one has had writes acknowledged."""
        wait_for(lambda: self.acknowledged_in(self.phase) >= 3, what=f"writes acknowledged in {self.phase}")
        self.phase = phase

    def stop(self):
        wait_for(lambda: self.acknowledged_in(self.phase) >= 3, what=f"writes acknowledged in {self.phase}")
        self._stop.set()
        self._thread.join(60)
        self.admin.close()


def test_kafka_metadata_quorum_replaces_the_active_controller_while_writes_are_acknowledged(tmp_path):
    # Kafka's own timers: Kafka's tool does not retry a change refused by a leader that just lost an
    # election, and the short test timers let a loaded machine start needless ones.
    with BackgroundCluster(brokers=3, controllers=3, kraft_version=1, quorum_timers=Timers.kafka_defaults()) as bg:
        writer = Writer(bg)
        writer.next_phase("observer")
        new = bg.run(bg.cluster.add_controller())
        wait_for(lambda: caught_up_observer(bg, new), what=f"controller {new} to catch up as an observer")

        writer.next_phase("add")
        config = tmp_path / "controller.properties"
        config.write_text(bg.call(lambda: bg.cluster.controller_properties(new)))
        new_directory = kafka_uuid(bg.call(lambda: bg.cluster.controller_directory_id(new)))
        added = quorum_tool(bg, "--command-config", str(config), "add-controller")
        assert added.strip() == (f"Added controller {new} with directory id {new_directory} and endpoints: "
                                 f"CONTROLLER://{controller_address(bg, new)}")
        status = dict(line.split(":", 1) for line in quorum_tool(bg, "describe", "--status").splitlines())
        voters = json.loads(status["CurrentVoters"])
        assert sorted(v["id"] for v in voters) == [3000, 3001, 3002, new]
        assert {v["id"]: v["directoryId"] for v in voters}[new] == new_directory
        assert {v["id"]: v["endpoints"] for v in voters}[new] == [f"CONTROLLER://{controller_address(bg, new)}"]

        writer.next_phase("remove")
        leaving = wait_for(lambda: bg.call(lambda: bg.cluster.active_controller_id), what="an active controller")
        leaving_directory = kafka_uuid(bg.call(lambda: bg.cluster.controller_directory_id(leaving)))
        done = run_tool(METADATA_QUORUM, "--bootstrap-controller", controller_address(bg, leaving), "remove-controller",
                        "--controller-id", str(leaving),
                        f"--controller-directory-id={leaving_directory}")  # an id may start with "-"
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["Removed", "KRaft", "controller", str(leaving), "with", "directory", "id",
                                       leaving_directory]
        staying = sorted({3000, 3001, 3002, new} - {leaving})
        wait_for(lambda: voter_ids(bg) == staying, what="the new voter set")
        bg.run(bg.cluster.stop_controller(leaving))

        writer.next_phase("after")
        rows = [line.split() for line in quorum_tool(bg, "describe", "--replication").splitlines()[1:]]
        by_node = {int(row[0]): row for row in rows}
        assert sorted(n for n, row in by_node.items() if row[-1] in ("Leader", "Follower")) == staying
        assert by_node[new][1] == new_directory
        writer.stop()

        assert writer.failures == []
        acknowledged = {name for name, _ in writer.acknowledged}
        for node_id in staying:  # every acknowledged write is on every voter of the new set
            try:
                wait_for(lambda: acknowledged <= topic_names(bg, node_id))
            except AssertionError:
                missing = sorted(acknowledged - topic_names(bg, node_id))
                raise AssertionError(f"controller {node_id} lacks {len(missing)} acknowledged topics ({missing[:5]}); "
                                     f"the controllers: {controller_states(bg)}") from None


def controller_states(bg) -> list[tuple]:
    """(id, voters, role, leader, epoch, high watermark, log end) of every controller, to tell a failure apart."""
    return bg.call(lambda: [(log.node_id, log.voters, log.role.value if log.role else None, log.leader_id, log.epoch,
                             log.high_watermark, log.end_offset) for log in bg.cluster.logs])


def topic_names(bg, node_id: int) -> set[str]:
    """The topics of one controller's committed image."""
    return bg.call(lambda: {t.name for t in bg.cluster.controllers[
        bg.cluster.controller_ids.index(node_id)].committed.topics.values()})


def voter_request(address: str, request, version: int):
    with RawConnection(address) as connection:
        return connection.send(request, version)


def test_bad_voter_changes_get_kafkas_error_codes():
    with BackgroundCluster(brokers=1, controllers=3, kraft_version=1) as bg:
        cluster_id = bg.call(lambda: bg.cluster.controller.cluster_id)
        active = wait_for(lambda: bg.call(lambda: bg.cluster.active_controller_id))
        leader, follower = controller_address(bg, active), controller_address(bg, next(
            n for n in (3000, 3001, 3002) if n != active))
        broker = bg.bootstrap.split(",")[0]
        directory = bg.call(lambda: bg.cluster.controller_directory_id(3001))

        def add(voter_id, voter_directory, listeners=(("CONTROLLER", "127.0.0.1", 9093),), to=leader,
                cluster=cluster_id):
            return voter_request(to, AddRaftVoterRequest(
                cluster_id=cluster, timeout_ms=500, voter_id=voter_id, voter_directory_id=voter_directory,
                listeners=[AddRaftVoterRequest.Listener(name=n, host=h, port=p) for n, h, p in listeners]), 1)

        def remove(voter_id, voter_directory, to=leader):
            return voter_request(to, RemoveRaftVoterRequest(cluster_id=cluster_id, voter_id=voter_id,
                                                            voter_directory_id=voter_directory), 0)

        assert add(3001, directory).error_code == ErrorCode.DUPLICATE_VOTER
        assert add(3001, directory, to=broker).error_code == ErrorCode.DUPLICATE_VOTER  # forwarded by the broker
        assert add(3005, ZERO_UUID).error_code == ErrorCode.INVALID_REQUEST
        no_controller_listener = add(3005, uuid.uuid4(), listeners=[("PLAINTEXT", "127.0.0.1", 9092)])
        assert no_controller_listener.error_code == ErrorCode.INVALID_REQUEST
        never_fetched = add(3005, uuid.uuid4())
        assert never_fetched.error_code == ErrorCode.REQUEST_TIMED_OUT and "caught-up" in never_fetched.error_message
        assert add(3001, directory, to=follower).error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert add(3005, uuid.uuid4(), cluster="another-cluster").error_code == ErrorCode.INCONSISTENT_CLUSTER_ID
        assert remove(3001, uuid.uuid4()).error_code == ErrorCode.VOTER_NOT_FOUND  # the id votes, not that directory
        assert remove(4242, uuid.uuid4(), to=broker).error_code == ErrorCode.VOTER_NOT_FOUND
        assert voter_ids(bg) == [3000, 3001, 3002]  # nothing changed

        done = run_tool(METADATA_QUORUM, "--bootstrap-server", bg.bootstrap, "remove-controller",
                        "--controller-id", "4242",
                        f"--controller-directory-id={kafka_uuid(uuid.uuid4())}")
        assert done.returncode == 1 and "VoterNotFoundException" in done.stderr, done.stderr


def test_a_static_quorum_refuses_voter_changes_with_unsupported_version():
    with BackgroundCluster(brokers=1, kraft_version=0) as bg:  # as controller.quorum.voters
        new = bg.run(bg.cluster.add_controller())
        wait_for(lambda: caught_up_observer(bg, new), what=f"controller {new} to catch up as an observer")
        with pytest.raises(KafkaError) as refused:
            bg.run(bg.cluster.add_voter(new))
        assert refused.value.code == ErrorCode.UNSUPPORTED_VERSION
        with pytest.raises(KafkaError) as refused:
            bg.run(bg.cluster.remove_controller(3000))
        assert refused.value.code == ErrorCode.UNSUPPORTED_VERSION
        quorum = described(bg)
        assert [(v["replica_id"], v["replica_directory_id"]) for v in quorum["current_voters"]] == [(3000, None)]
        assert not finalized_features(bg.bootstrap.split(",")[0]).get("kraft.version")


def finalized_features(address: str) -> dict[str, int]:
    answer = voter_request(address, ApiVersionsRequest(client_software_name="voters-test",
                                                       client_software_version="1"), 3)
    supported = {f.name: (f.min_version, f.max_version) for f in answer.supported_features}
    assert supported["kraft.version"] == (0, 1)
    return {f.name: f.max_version_level for f in answer.finalized_features}


def test_voter_set_and_kraft_version_survive_restarts_and_a_moved_voter_updates_its_listener():
    with BackgroundCluster(brokers=1, controllers=3, kraft_version=1) as bg:
        cluster = bg.cluster
        assert finalized_features(bg.bootstrap.split(",")[0])["kraft.version"] == 1
        new = bg.run(cluster.add_controller())
        wait_for(lambda: caught_up_observer(bg, new), what=f"controller {new} to catch up as an observer")
        bg.run(cluster.add_voter(new))
        bg.run(cluster.remove_controller(3000))
        wait_for(lambda: voter_ids(bg) == [3001, 3002, new], what="the changed voter set")

        for node_id in (3001, 3002, new):  # each comes back on another port, with the set from its log
            old_address = controller_address(bg, node_id)
            bg.run(cluster.stop_controller(node_id))
            bg.run(cluster.start_controller(node_id))
            index = cluster.controller_ids.index(node_id)
            assert bg.call(lambda: cluster.logs[index].voters) == (3001, 3002, new)
            address = controller_address(bg, node_id)
            assert address != old_address
            wait_for(lambda: [f"{node['listeners'][0]['host']}:{node['listeners'][0]['port']}"
                              for node in described_nodes(bg) if node["node_id"] == node_id] == [address],
                     what=f"controller {node_id}'s new listener in the voter set (UpdateRaftVoter)")
            assert finalized_features(address)["kraft.version"] == 1
        assert voter_ids(bg) == [3001, 3002, new]
        assert "after-restarts" in create_topic(bg, "after-restarts")


def described_nodes(bg) -> list[dict]:
    with RawConnection(bg.bootstrap.split(",")[0]) as connection:
        answer = connection.send(DescribeQuorumRequest(topics=[DescribeQuorumRequest.TopicData(
            topic_name="__cluster_metadata", partitions=[DescribeQuorumRequest.PartitionData(partition_index=0)])]), 2)
    return [{"node_id": n.node_id, "listeners": [{"host": li.host, "port": li.port} for li in n.listeners]}
            for n in answer.nodes]


def test_kafka_dump_log_reads_the_bootstrap_voters_a_dynamic_quorum_writes():
    with BackgroundCluster(brokers=1, controllers=3, kraft_version=1) as bg:
        directory = bg.call(lambda: bg.cluster.logs[1].directory)
        bg.run(bg.cluster.stop_controller(3001))
        files = sorted(str(p) for p in directory.glob("*.log"))
        dumped = run_tool(DUMP_LOG, "--cluster-metadata-decoder", "--print-data-log", "--files", ",".join(files))
        assert dumped.returncode == 0, dumped.stderr
        first_batch = dumped.stdout.split("baseOffset: ")[1]
        assert "isControl: true" in first_batch and "lastOffset: 2 count: 3" in first_batch, first_batch
        assert "LeaderChange" in first_batch and "KRaftVersion" in first_batch and "KRaftVoters" in first_batch
        for node_id in (3000, 3001, 3002):
            assert kafka_uuid(bg.call(lambda n=node_id: bg.cluster.controller_directory_id(n))) in first_batch


def control_plane(bg, method: str, path: str) -> tuple[int, dict | list]:
    request = urllib.request.Request(bg.cluster.control_server.url + path, data=b"{}", method=method,
                                     headers={"Content-Type": "application/json",
                                              "Authorization": f"Bearer {bg.cluster.control_token}"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def test_the_control_plane_adds_a_voter_and_removes_one():
    with BackgroundCluster(brokers=1, controllers=3, kraft_version=1, control_port=0) as bg:
        status, answer = control_plane(bg, "POST", "/api/controllers/add")
        new = answer["added"]
        assert status == 200 and {c["id"]: c["voter"] for c in answer["controllers"]} == {
            3000: True, 3001: True, 3002: True, new: False}
        wait_for(lambda: caught_up_observer(bg, new), what=f"controller {new} to catch up as an observer")
        status, answer = control_plane(bg, "POST", f"/api/controllers/{new}/vote")
        assert status == 200 and voter_ids(bg) == [3000, 3001, 3002, new]
        status, refused = control_plane(bg, "POST", f"/api/controllers/{new}/vote")
        assert status == 400 and refused["error"].startswith("DUPLICATE_VOTER: "), refused
        status, answer = control_plane(bg, "POST", "/api/controllers/3001/remove")
        assert status == 200 and not {c["id"]: c["running"] for c in answer}[3001]
        assert voter_ids(bg) == [3000, 3002, new]


def test_a_standalone_controller_is_replaced_by_a_new_one(tmp_path):
    """``--kraft-version 1`` with one controller, as ``kafka-storage format --standalone``: a second
    controller joins, the first leaves, and the cluster goes on with the new one alone, after a restart
    of the whole cluster from its data directory too."""
    with BackgroundCluster(brokers=1, kraft_version=1, data_dir=tmp_path) as bg:
        assert voter_ids(bg) == [3000]
        new = bg.run(bg.cluster.add_controller())
        wait_for(lambda: caught_up_observer(bg, new), what=f"controller {new} to catch up as an observer")
        bg.run(bg.cluster.add_voter(new))
        assert voter_ids(bg) == [3000, new]
        bg.run(bg.cluster.remove_controller(3000))
        assert wait_for(lambda: bg.call(lambda: bg.cluster.active_controller_id), what="a new active controller") == new
        assert "after-replacement" in create_topic(bg, "after-replacement")
        assert voter_ids(bg) == [new]

    with BackgroundCluster(brokers=1, kraft_version=1, data_dir=tmp_path) as bg:  # both come back
        assert bg.call(lambda: bg.cluster.controller_ids) == [3000, new]
        assert bg.call(lambda: bg.cluster.active_controller_id) == new
        assert voter_ids(bg) == [new]
        assert {"after-replacement", "after-restart"} <= create_topic(bg, "after-restart")
