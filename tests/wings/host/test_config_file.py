"""Settings from kraftwire.toml, KRAFTWIRE_* variables and flags (flags win), and JSON logs.

The end-to-end tests run ``kraftwire serve`` as a process in a directory holding only a
kraftwire.toml, and look at the cluster with kafka-python.
"""
import argparse
import json
from pathlib import Path

import pytest
from kafka import KafkaAdminClient
from served import Served, free_ports

from kraftwire.server.host import config_file
from kraftwire.server.host.cli import main


def broker_ports(bootstrap: str) -> list[int]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        return sorted(b["port"] for b in admin.describe_cluster()["brokers"])
    finally:
        admin.close()


def write_toml(directory: Path, brokers: int, port: int) -> None:
    """Brokers from ``port`` on, the controller on ``port - 1``."""
    (directory / "kraftwire.toml").write_text(
        f'brokers = {brokers}\nport = {port}\ncontroller-port = {port - 1}\ndata_dir = "state"\n'
        f'log-level = "info"\n')


def test_a_kraftwire_toml_alone_starts_the_cluster(tmp_path):
    port = free_ports(3) + 1
    write_toml(tmp_path, 2, port)
    served = Served(tmp_path)
    try:
        assert broker_ports(served.bootstrap) == [port, port + 1]
    finally:
        served.stop()
    assert (tmp_path / "state" / "__cluster_metadata-0").is_dir()  # data-dir came from the file too


def test_environment_overrides_the_file_and_flags_override_both(tmp_path):
    port = free_ports(4) + 1
    for run, flags, brokers in (("flag", ["--brokers", "3"], 3), ("environment", [], 2)):
        (tmp_path / run).mkdir()
        write_toml(tmp_path / run, 1, port)
        served = Served(tmp_path / run, *flags, env={"KRAFTWIRE_BROKERS": "2"})
        try:
            assert broker_ports(served.bootstrap) == list(range(port, port + brokers))
        finally:
            served.stop()


def test_json_logs(tmp_path):
    served = Served(tmp_path, "--brokers", "1", "--port", "0", "--controller-port", "0",
                    "--data-dir", "d", env={"KRAFTWIRE_LOG_FORMAT": "json"})
    logged = served.stop()
    entries = [json.loads(line) for line in logged.splitlines() if line.strip()]
    assert entries and all({"time", "level", "logger", "message"} <= entry.keys() for entry in entries)
    assert any(e["logger"] == "kraftwire" and "ready" in e["message"] for e in entries)


def test_help_documents_every_option_with_its_file_key_and_variable(capsys):
    with pytest.raises(SystemExit) as done:
        main(["serve", "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    for option in ("--brokers", "--port", "--data-dir", "--metrics-port", "--control-port", "--log-format",
                   "--config", "--speed"):
        assert option in text
        if option != "--config":
            assert config_file.env_name(option[2:].replace("-", "_")) in text


# --- the layering itself, on a parser of its own ---------------------------------------------------------


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="t")
    p.add_argument("--brokers", type=int, default=3)
    p.add_argument("--speed", type=float, default=1.0)
    p.add_argument("--data-dir", default="./d")
    p.add_argument("--log-format", default="text", choices=("text", "json"))
    p.add_argument("--verbose", action="store_true")
    config_file.add_config_option(p)
    return p


def parse(argv: list[str], environ: dict, cwd: Path, monkeypatch) -> argparse.Namespace:
    monkeypatch.chdir(cwd)
    p = parser()
    config_file.apply_layers(p, argv, environ)
    return p.parse_args(argv)


def test_precedence_defaults_file_environment_flags(tmp_path, monkeypatch):
    assert parse([], {}, tmp_path, monkeypatch).brokers == 3
    (tmp_path / "kraftwire.toml").write_text('brokers = 4\nspeed = 2\ndata-dir = "/x"\nverbose = true\n')
    args = parse([], {}, tmp_path, monkeypatch)
    assert (args.brokers, args.speed, args.data_dir, args.verbose) == (4, 2.0, "/x", True)
    args = parse([], {"KRAFTWIRE_BROKERS": "5", "KRAFTWIRE_VERBOSE": "no"}, tmp_path, monkeypatch)
    assert (args.brokers, args.verbose, args.data_dir) == (5, False, "/x")
    assert parse(["--brokers", "6"], {"KRAFTWIRE_BROKERS": "5"}, tmp_path, monkeypatch).brokers == 6


def test_config_from_flag_or_variable(tmp_path, monkeypatch):
    (tmp_path / "other.toml").write_text("brokers = 7\n")
    assert parse(["--config", str(tmp_path / "other.toml")], {}, tmp_path, monkeypatch).brokers == 7
    assert parse([], {"KRAFTWIRE_CONFIG": str(tmp_path / "other.toml")}, tmp_path, monkeypatch).brokers == 7


@pytest.mark.parametrize("toml, environ, message", [
    ("brokerz = 3\n", {}, "unknown setting 'brokerz'"),
    ("brokers = \"three\"\n", {}, "invalid int"),
    ("brokers = 2.5\n", {}, "invalid int"),
    ("brokers = true\n", {}, "expected a single value"),
    ("data-dir = 5\n", {}, "expected a string"),
    ("log-format = \"xml\"\n", {}, "not one of text, json"),
    ("verbose = \"maybe\"\n", {}, "expected true or false"),
    ("brokers = [1, 2]\n", {}, "expected a single value"),
    ("brokers = \n", {}, "not valid TOML"),
    ("", {"KRAFTWIRE_SPEED": "fast"}, "KRAFTWIRE_SPEED: invalid float"),
    ("", {"KRAFTWIRE_CONFIG": "/nonexistent/k.toml"}, "cannot read the config file"),
])
def test_bad_settings_end_with_a_usage_error(tmp_path, monkeypatch, capsys, toml, environ, message):
    (tmp_path / "kraftwire.toml").write_text(toml)
    with pytest.raises(SystemExit) as done:
        parse([], environ, tmp_path, monkeypatch)
    assert done.value.code == 2
    assert message in capsys.readouterr().err


def test_throttle_auto_removal_from_the_file_and_through_entity_default(tmp_path):
    """``throttle-auto-remove = true`` in kraftwire.toml writes the cluster-default broker config at
    start; the request ``kafka-configs --entity-default --entity-type brokers --alter`` sends
    (IncrementalAlterConfigs on broker resource "") switches it off again."""
    import asyncio

    from kraftwire.codec.messages import DescribeConfigsRequest, IncrementalAlterConfigsRequest
    from kraftwire.server.wire.client import KafkaClient

    key, broker_resource, dynamic_default, set_op = "kraftwire.throttle.auto.remove.enable", 4, 3, 0
    port = free_ports(3) + 1
    write_toml(tmp_path, 1, port)
    with open(tmp_path / "kraftwire.toml", "a") as toml:
        toml.write("throttle-auto-remove = true\n")
    served = Served(tmp_path)

    async def cluster_default(client) -> tuple:
        answer = await client.send(DescribeConfigsRequest(resources=[DescribeConfigsRequest.DescribeConfigsResource(
            resource_type=broker_resource, resource_name="", configuration_keys=[key])]))
        [entry] = answer.results[0].configs
        return entry.value, entry.config_source

    async def talk():
        client = KafkaClient("127.0.0.1", port, "test")
        try:
            started = await cluster_default(client)
            Resource = IncrementalAlterConfigsRequest.AlterConfigsResource
            altered = await client.send(IncrementalAlterConfigsRequest(resources=[Resource(
                resource_type=broker_resource, resource_name="", configs=[IncrementalAlterConfigsRequest.AlterableConfig(
                    name=key, config_operation=set_op, value="false")])]))
            return started, altered.responses[0].error_code, await cluster_default(client)
        finally:
            await client.close()

    try:
        assert asyncio.run(talk()) == (("true", dynamic_default), 0, ("false", dynamic_default))
    finally:
        served.stop()


def test_throttle_auto_remove_is_a_flag_with_a_negation():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    from kraftwire.server.host.cli import _serve_parser

    serve = _serve_parser(sub)
    config_file.apply_layers(serve, [], environ={"KRAFTWIRE_THROTTLE_AUTO_REMOVE": "true"})
    assert parser.parse_args(["serve"]).throttle_auto_remove is True
    assert parser.parse_args(["serve", "--no-throttle-auto-remove"]).throttle_auto_remove is False


def test_the_toml_file_the_environment_and_flags_build_one_cluster_spec(tmp_path, monkeypatch):
    """``kraftwire serve``'s layers end in the same ``ClusterSpec`` a ``Cluster(**kwargs)`` describes."""
    from kraftwire.server.host.cli import _serve_parser, cluster_spec
    from kraftwire.server.host.spec import (BrokerSpec, ClusterSpec, NetworkSpec, QuorumSpec, ServicesSpec,
                                            SimulationSpec, StorageSpec, TopicDefaults)
    from kraftwire.server.raft import RaftConfig, Timers

    (tmp_path / "kraftwire.toml").write_text('brokers = 4\nnode-ids = "0"\nnum-partitions = 6\nseed = 7\n'
                                             'log-dirs = 2\nsnapshot-every-records = 1000\n')
    monkeypatch.chdir(tmp_path)
    parser = argparse.ArgumentParser()
    serve = _serve_parser(parser.add_subparsers(dest="command"))
    argv = ["--port", "19092", "--controllers", "3", "--data-dir", "d"]
    config_file.apply_layers(serve, argv, environ={"KRAFTWIRE_SPEED": "2.5", "KRAFTWIRE_VIRTUAL_CLOCK": "true"})
    spec = cluster_spec(parser.parse_args(["serve", *argv]))
    assert spec == ClusterSpec(
        brokers=BrokerSpec(count=4, node_ids=(0, 1, 2, 3), port=19092, log_dirs=2),
        topics=TopicDefaults(num_partitions=6),
        quorum=QuorumSpec(count=3, port=9091, log_config=RaftConfig(snapshot_every_records=1000),
                          timers=Timers.kafka_defaults()),
        storage=StorageSpec(data_dir=Path("d")), simulation=SimulationSpec(speed=2.5, virtual_clock=True, seed=7),
        network=NetworkSpec(), services=ServicesSpec())
    spec.validate()
    assert spec.quorum.voter_ids == [3000, 3001, 3002] and spec.brokers.ids == [0, 1, 2, 3]


@pytest.mark.parametrize("settings, refusal", [
    ({"log_dirs": 0}, "a broker needs at least one log directory"),
    ({"node_ids": [1, 1, 2]}, "node ids must differ"),
    ({"num_partitions": 0}, "num.partitions must be at least 1, not 0"),
    ({"controllers": 0}, "a cluster needs at least one controller"),
    ({"kraft_version": 2}, "kraft.version 2 is not 0 or 1"),
])
def test_a_bad_setting_is_refused_before_the_data_directory_is_made(tmp_path, settings, refusal):
    from kraftwire import Cluster

    with pytest.raises(ValueError, match=refusal):
        Cluster(3, data_dir=tmp_path / "data", **settings)
    assert not (tmp_path / "data").exists()
