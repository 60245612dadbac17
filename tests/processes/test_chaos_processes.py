"""Three ``kraftwire controller`` and two ``kraftwire broker`` processes under a kafka-python write
workload (topics, configs, reassignments between broker processes), with kill -9 (and restart),
SIGSTOP/SIGCONT and link cuts through TCP proxies: afterwards every acknowledged write is in every
controller's log exactly once and the committed logs agree byte for byte (server/host/chaos.py).
The configuration and start-up of a controller process are checked here too: what a node refuses."""
from __future__ import annotations

import random
import subprocess
import sys

import pytest

from kraftwire.server.host.chaos import (FAULTS, AdminWorkload, run_fault, settle_and_check, wait_for,
                                        wait_for_moves)
from kraftwire.server.host.node_process import node_config
from kraftwire.server.host.process_harness import ProcessCluster

WRITES_PER_FAULT = 6


def test_acknowledged_writes_survive_kills_pauses_and_cuts_of_controller_processes(tmp_path):
    rng = random.Random(15)
    with ProcessCluster(tmp_path, brokers=2) as harness:
        harness.start_all()
        wait_for(harness.active, 60, "a first active controller")
        workload = AdminWorkload(harness).start()
        try:
            for fault in FAULTS:
                run_fault(fault, harness, workload, WRITES_PER_FAULT, rng)
        finally:
            writes = workload.stop()
        assert wait_for_moves(harness, writes) > 0
        verdict = settle_and_check(harness, writes)
    assert harness.kills == 1 and harness.pauses == 1 and harness.cuts == 3
    assert len(writes.acknowledged) >= WRITES_PER_FAULT * len(FAULTS)
    assert {kind for kind, _key in writes.acknowledged} == {"topic", "config", "move"}
    assert verdict.lost == [] and verdict.duplicated == [] and verdict.diverged == []
    assert verdict.high_watermark > len(writes.acknowledged)


def _kraftwire(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kraftwire", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60)


def test_a_controller_process_refuses_an_unformatted_directory_and_format_twice(tmp_path):
    config = tmp_path / "server.properties"
    config.write_text(f"process.roles=controller\nnode.id=1\nlisteners=CONTROLLER://127.0.0.1:0\n"
                      f"controller.listener.names=CONTROLLER\ncontroller.quorum.voters=1@127.0.0.1:0\n"
                      f"metadata.log.dir={tmp_path / 'meta'}\n")
    started = _kraftwire("controller", "-c", str(config), cwd=tmp_path)
    assert started.returncode == 1 and "kraftwire format" in started.stderr
    cluster_id = _kraftwire("random-uuid", cwd=tmp_path).stdout.strip()
    assert _kraftwire("format", "-t", cluster_id, "-c", str(config), cwd=tmp_path).returncode == 0
    again = _kraftwire("format", "-t", cluster_id, "-c", str(config), cwd=tmp_path)
    assert again.returncode == 1 and "already formatted" in again.stdout
    assert _kraftwire("format", "-t", cluster_id, "-c", str(config), "-g", cwd=tmp_path).returncode == 0
    other = _kraftwire("format", "-t", "x" * 22, "-c", str(config), "-g", cwd=tmp_path)
    assert other.returncode == 1 and "belongs to cluster" in other.stdout


BASE = {"node.id": "3000", "process.roles": "controller", "listeners": "CONTROLLER://:9093",
        "controller.listener.names": "CONTROLLER", "controller.quorum.voters": "3000@c0:9093,3001@c1:9093",
        "log.dirs": "/data"}


@pytest.mark.parametrize("change, refusal", [
    ({"node.id": "x"}, "node.id must be a whole number"),
    ({"process.roles": "broker,controller"}, "one role"),
    ({"process.roles": "broker"}, "run `kraftwire broker`"),
    ({"listeners": "PLAINTEXT://:9092"}, "controller.listener.names"),
    ({"controller.quorum.voters": "3001@c1:9093"}, "not among controller.quorum.voters"),
    ({"controller.quorum.voters": "3000@c0"}, "not host:port"),
    ({"controller.quorum.voters": ""}, "needs controller.quorum.voters"),
    ({"listener.security.protocol.map": "CONTROLLER:SSL"}, "PLAINTEXT only"),
    ({"advertised.listeners": "CONTROLLER://c0:19093"}, "advertises port"),
    ({"log.dirs": ""}, "metadata.log.dir"),
])
def test_controller_configuration_is_judged_as_kafka_names_it(change, refusal):
    with pytest.raises(ValueError, match=refusal):
        node_config({**BASE, **change}, "controller")


def test_controller_configuration_reads_kafka_keys():
    config = node_config({**BASE, "metadata.log.dir": "/meta", "num.io.threads": "8"}, "controller")
    assert (config.node_id, config.listen, config.voters) == (3000, ("0.0.0.0", 9093),
                                                              {3000: ("c0", 9093), 3001: ("c1", 9093)})
    assert str(config.metadata_log_dir) == "/meta" and config.unused == ["num.io.threads"]


BROKER = {"node.id": "1", "process.roles": "broker", "listeners": "PLAINTEXT://:9092,CONTROLLER://:9093",
          "controller.listener.names": "CONTROLLER", "controller.quorum.voters": "3000@c0:9093",
          "log.dirs": "/a,/b"}


@pytest.mark.parametrize("change, refusal", [
    ({"controller.quorum.voters": ""}, "needs controller.quorum.voters .* or controller.quorum.bootstrap.servers"),
    ({"node.id": "3000"}, "is a voter"),
    ({"listeners": "CONTROLLER://:9093"}, "a listener for clients"),
    ({"log.dirs": ""}, "needs log.dirs"),
])
def test_broker_configuration_is_judged_as_kafka_names_it(change, refusal):
    with pytest.raises(ValueError, match=refusal):
        node_config({**BROKER, **change}, "broker")


def test_a_node_of_a_dynamic_quorum_names_the_bootstrap_servers_alone():
    for base, role in ((BASE, "controller"), (BROKER, "broker")):
        config = node_config({**base, "controller.quorum.voters": "",
                              "controller.quorum.bootstrap.servers": "c0:9093, c1:9093"}, role)
        assert config.voters is None and config.bootstrap == [("c0", 9093), ("c1", 9093)]


def test_broker_configuration_reads_its_client_listener_and_log_dirs():
    config = node_config({**BROKER, "advertised.listeners": "PLAINTEXT://b1:9092", "broker.rack": "r1"}, "broker")
    assert (config.listen, config.advertised, config.rack) == (("0.0.0.0", 9092), ("b1", 9092), "r1")
    assert [str(d) for d in config.log_dirs] == ["/a", "/b"] and config.directories == config.log_dirs
