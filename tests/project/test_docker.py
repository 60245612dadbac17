"""docker/: what can be checked without a Docker engine.

The compose file parses and wires the cluster and the audit to one data volume with settings
``kraftwire serve`` knows; the Dockerfile runs as a non-root user from the slim Python 3.11 base, copies
only what exists and .dockerignore lets through; and the image's own commands (its ENTRYPOINT + CMD
and its HEALTHCHECK, with its ENV and the compose environment) work when run directly.
"""
import json
import os
import shlex
import subprocess
import sys
import time
from fnmatch import fnmatch
from pathlib import Path

import pytest
import yaml
from kafka import KafkaAdminClient
from kafka.admin import NewTopic
from served import Served, free_ports

from kraftwire.server.host import config_file
from kraftwire.server.host.cli import main

REPO = Path(__file__).resolve().parents[2]
DOCKER = REPO / "docker"


def compose() -> dict:
    return yaml.safe_load((DOCKER / "compose.yaml").read_text())


def dockerfile_stages() -> dict[str, list[tuple[str, str]]]:
    """Stage name -> [(instruction, arguments)], continuation lines joined, comments dropped."""
    text = (DOCKER / "Dockerfile").read_text().replace("\\\n", " ")
    stages: dict[str, list[tuple[str, str]]] = {}
    current = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        instruction, _, arguments = line.partition(" ")
        instruction = instruction.upper()
        if instruction == "FROM":
            current = arguments.split()[-1]
            stages[current] = []
        stages[current].append((instruction, arguments.strip()))
    return stages


def exec_form(arguments: str) -> list[str]:
    return json.loads(arguments)


def last(stage: list[tuple[str, str]], instruction: str) -> str:
    return [args for name, args in stage if name == instruction][-1]


def image_env(stage: list[tuple[str, str]]) -> dict[str, str]:
    env = {}
    for name, args in stage:
        if name == "ENV":
            env.update(item.split("=", 1) for item in shlex.split(args))
    return env


def test_compose_runs_the_cluster_and_the_audit_over_one_data_volume():
    spec = compose()
    assert set(spec["services"]) == {"kraftwire", "audit"}
    assert set(spec["volumes"]) >= {"kraftwire-data"}
    cluster, audit = spec["services"]["kraftwire"], spec["services"]["audit"]
    for service, target in ((cluster, "kraftwire"), (audit, "audit")):
        assert service["build"]["target"] == target
        assert (DOCKER / service["build"]["context"] / service["build"]["dockerfile"]).resolve() == DOCKER / "Dockerfile"
    data_dir = cluster["environment"]["KRAFTWIRE_DATA_DIR"]
    assert f"kraftwire-data:{data_dir}" in cluster["volumes"]
    assert f"kraftwire-data:{data_dir}:ro" in audit["volumes"]
    assert audit["command"][:2] == ["audit", f"{data_dir}/__cluster_metadata-0"]
    assert "--out" in audit["command"]
    assert audit["depends_on"]["kraftwire"]["condition"] == "service_healthy"
    assert any(port.startswith(f'{cluster["environment"]["KRAFTWIRE_PORT"]}') for port in cluster["ports"])


def test_compose_and_image_settings_are_ones_serve_knows(capsys):
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    documented = {word for word in capsys.readouterr().out.split() if word.startswith(config_file.ENV_PREFIX)}
    used = set(compose()["services"]["kraftwire"]["environment"]) | set(image_env(dockerfile_stages()["kraftwire"]))
    ours = {name for name in used if name.startswith(config_file.ENV_PREFIX)}
    assert ours and ours <= documented, ours - documented


def test_dockerfile_is_slim_non_root_with_an_api_versions_healthcheck():
    stages = dockerfile_stages()
    assert set(stages) == {"kraftwire", "audit"}
    assert stages["kraftwire"][0] == ("FROM", "python:3.11-slim AS kraftwire")
    for stage in stages.values():
        assert last(stage, "USER") not in ("root", "0")
    assert exec_form(last(stages["kraftwire"], "ENTRYPOINT")) == ["kraftwire"]
    assert exec_form(last(stages["kraftwire"], "CMD")) == ["serve"]
    healthcheck = last(stages["kraftwire"], "HEALTHCHECK")
    assert exec_form(healthcheck[healthcheck.index("CMD") + 3:]) == ["kraftwire", "healthcheck"]


def test_dockerfile_copies_only_what_exists_and_is_not_ignored():
    ignored = [line.strip() for line in (REPO / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")]
    for pattern in (".git", "tests", "kraftwire-data", "**/__pycache__"):
        assert pattern in ignored
    copied = [args.split()[:-1] for stage in dockerfile_stages().values() for name, args in stage if name == "COPY"]
    sources = [source for sources in copied for source in sources]
    assert {"pyproject.toml", "schemas", "codec", "server", "audit"} <= set(sources)
    for source in sources:
        assert (REPO / source).exists(), source
        assert not any(fnmatch(source, pattern) for pattern in ignored), source
    folders = {folder.split("/")[0] for folder in __import__("tomllib").loads((REPO / "pyproject.toml").read_text())
               ["tool"]["setuptools"]["package-dir"].values()}
    assert folders <= set(sources)  # every folder pip install . maps onto a package is copied


def test_the_image_commands_work_when_run_directly(tmp_path):
    """ENTRYPOINT + CMD with the image's ENV and the compose environment (ports and the data directory
    moved to free ones here), then the HEALTHCHECK command with the same environment."""
    stage = dockerfile_stages()["kraftwire"]
    controller_port = free_ports(4)
    port = controller_port + 1
    environment = {**image_env(stage), **compose()["services"]["kraftwire"]["environment"],
                   "KRAFTWIRE_PORT": str(port), "KRAFTWIRE_CONTROLLER_PORT": str(controller_port),
                   "KRAFTWIRE_METRICS_PORT": "0", "KRAFTWIRE_CONTROL_PORT": "0",
                   "KRAFTWIRE_DATA_DIR": str(tmp_path / "data")}
    entrypoint = exec_form(last(stage, "ENTRYPOINT")) + exec_form(last(stage, "CMD"))
    assert entrypoint == ["kraftwire", "serve"]
    healthcheck = last(stage, "HEALTHCHECK")
    probe = exec_form(healthcheck[healthcheck.index("CMD") + 3:])

    def run_probe() -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if not k.startswith(config_file.ENV_PREFIX)}
        env.update(environment, PYTHONPATH=str(REPO))
        return subprocess.run([sys.executable, "-m", "kraftwire", *probe[1:]], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=30)

    served = Served(tmp_path, *entrypoint[2:], env=environment)
    try:
        answer = run_probe()
        assert answer.returncode == 0, answer.stderr
        assert answer.stdout.startswith("healthy")
        admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{port}")
        try:
            brokers = admin.describe_cluster()["brokers"]
        finally:
            admin.close()
        assert sorted((b["host"], b["port"]) for b in brokers) == [("localhost", port + i) for i in range(3)]
    finally:
        logged = served.stop()
    assert json.loads(logged.splitlines()[0])["level"]  # KRAFTWIRE_LOG_FORMAT=json from compose
    assert (tmp_path / "data" / "__cluster_metadata-0").is_dir()
    answer = run_probe()
    assert answer.returncode == 1 and "unhealthy" in answer.stderr

    # the audit service's command over the data the cluster left (--local: the same replay without Spark)
    audit = [argument.replace("/data", str(tmp_path / "data")).replace("/reports", str(tmp_path / "reports"))
             for argument in compose()["services"]["audit"]["command"]]
    done = subprocess.run([sys.executable, "-m", "kraftwire", *audit, "--local"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "reports" / "audit" / "report.html").is_file()


def quorum_compose() -> dict:
    return yaml.safe_load((DOCKER / "compose-quorum.yaml").read_text())


def test_quorum_compose_runs_three_controllers_and_the_brokers_as_containers_of_their_own():
    services = quorum_compose()["services"]
    assert sorted(services) == ["broker-1", "broker-2", "broker-3",
                                "controller-3000", "controller-3001", "controller-3002"]
    for name, service in services.items():
        role = name.split("-")[0]
        config = DOCKER / service["volumes"][0].split(":")[0]
        assert config.exists() and f"process.roles={role}" in config.read_text()
        assert service["command"][0].endswith(f"exec kraftwire {role} -c /etc/kraftwire/server.properties")
        assert service["network_mode"] == "host"


def test_the_quorum_compose_commands_run_as_local_processes(tmp_path):
    """Each service's command and server.properties, run here as processes: the controllers' and
    brokers' ports moved to free ones and /data to a directory of each node. kafka-python then sees
    the three brokers and creates a topic with three replicas."""
    services = quorum_compose()["services"]
    controllers, brokers = free_ports(3), free_ports(3)
    moves = {**{f"127.0.0.1:919{k}": f"127.0.0.1:{controllers + k - 1}" for k in (1, 2, 3)},
             **{f"{host}:909{k + 1}": f"{host}:{brokers + k - 1}" for k in (1, 2, 3) for host in ("127.0.0.1", "localhost")}}
    processes = []
    env = {k: v for k, v in os.environ.items() if not k.startswith(config_file.ENV_PREFIX)}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    try:
        for name, service in sorted(services.items(), key=lambda item: not item[0].startswith("controller")):
            text = (DOCKER / service["volumes"][0].split(":")[0]).read_text().replace("/data", str(tmp_path / name))
            for before, after in moves.items():
                text = text.replace(before, after)
            config = tmp_path / f"{name}.properties"
            config.write_text(text)
            command = service["command"][0].replace("$$", "$").replace("/etc/kraftwire/server.properties", str(config))
            processes.append(subprocess.Popen(service["entrypoint"] + [command], cwd=tmp_path,
                                              env={**env, **service["environment"]},
                                              stdout=subprocess.DEVNULL, stderr=open(tmp_path / f"{name}.log", "wb")))
        bootstrap = ",".join(f"localhost:{brokers + k}" for k in range(3))
        deadline = time.monotonic() + 90
        while True:
            try:
                admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
                if len(admin.describe_cluster()["brokers"]) == 3:
                    break
                admin.close()
            except Exception:
                pass
            logs = "".join(f"\n{log.name}: {log.read_text()[-600:]}" for log in sorted(tmp_path.glob("*.log")))
            assert time.monotonic() < deadline, f"the compose nodes did not form a cluster in time:{logs}"
            assert all(p.poll() is None for p in processes), f"a node stopped:{logs}"
            time.sleep(0.5)
        try:
            admin.create_topics([NewTopic("orders", 3, 3)])
            partitions = admin.describe_topics(["orders"])[0]["partitions"]
        finally:
            admin.close()
        assert all(sorted(p["replica_nodes"]) == [1, 2, 3] for p in partitions)
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
