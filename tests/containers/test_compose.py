"""docker/compose.yaml and docker/compose-quorum.yaml run for real with podman-compose (PyPI): clients on
the host reach every broker, the audit service writes its report from the cluster's data volume, and the
quorum keeps serving after its leader's container stops.

Only the host's ports move (to free ones, the machine is shared): an override file the test writes,
with ``!override`` where a list would otherwise be merged. podman 4.3 has no health-check timer
without systemd (and podman-compose ignores ``service_healthy`` before podman 4.6), so the test runs
the image's HEALTHCHECK itself with ``podman healthcheck run`` until it reports healthy."""
import json
import shutil
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest
import yaml
from kafka import KafkaAdminClient, TopicPartition
from kafka.admin import NewTopic

from served import free_ports

DOCKER = Path(__file__).resolve().parents[2] / "docker"


class Compose:
    def __init__(self, tmp_path: Path, compose_file: str, override: dict, environment: dict) -> None:
        self.project = f"kw{uuid.uuid4().hex[:8]}"
        self.override = tmp_path / "override.yaml"
        self.override.write_text(override_text(override))
        self.files = ["-f", str(DOCKER / compose_file), "-f", str(self.override)]
        self.environment = environment
        self.podman_compose = shutil.which("podman-compose") or str(Path(sys.executable).parent / "podman-compose")

    def __call__(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run([self.podman_compose, "-p", self.project, *self.files, *args], env=self.environment,
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)

    def container(self, service: str) -> str:
        return f"{self.project}_{service}_1"


def wait_healthy(container: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while True:
        check = subprocess.run(["podman", "healthcheck", "run", container], capture_output=True, text=True)
        if check.returncode == 0:
            return
        assert time.monotonic() < deadline, f"{container} did not become healthy: {check.stdout}{check.stderr}"
        time.sleep(0.5)


def wait_for(predicate, what: str, timeout: float = 120):
    deadline = time.monotonic() + timeout
    while True:
        try:
            answer = predicate()
            if answer:
                return answer
        except Exception as exc:  # a broker not yet up, a leader not yet chosen
            last = exc
        else:
            last = None
        assert time.monotonic() < deadline, f"{what} within {timeout} s (last error: {last!r})"
        time.sleep(0.5)


@pytest.fixture
def compose_environment(engine):
    return {k: v for k, v in engine.items() if k != "DOCKER_HOST"}


def test_compose_cluster_serves_every_broker_and_the_audit_writes_its_report(tmp_path, compose_environment):
    port = free_ports(5)  # brokers 1-3, then metrics and the control plane (one draw: no overlap)
    http = port + 3
    override = {"services": {"kraftwire": {
        "environment": {"KRAFTWIRE_PORT": str(port), "KRAFTWIRE_CONTROL_TOKEN": "secret"},
        "ports": ["!override", f"{port}-{port + 2}:{port}-{port + 2}", f"{http}:9100", f"{http + 1}:8080"]}}}
    compose = Compose(tmp_path, "compose.yaml", override, compose_environment)
    try:
        up = compose("up", "-d", "kraftwire")
        assert up.returncode == 0, up.stdout + up.stderr
        wait_healthy(compose.container("kraftwire"))
        for broker in range(3):  # each broker's advertised address reaches it from the host
            admin = KafkaAdminClient(bootstrap_servers=f"localhost:{port + broker}")
            assert sorted(b["port"] for b in admin.describe_cluster()["brokers"]) == [port, port + 1, port + 2]
            admin.close()
        admin = KafkaAdminClient(bootstrap_servers=f"localhost:{port}")
        admin.create_topics([NewTopic("orders", replica_assignments={0: [1, 2]})])
        admin.alter_partition_reassignments({TopicPartition("orders", 0): [2, 3]})
        wait = urllib.request.Request(f"http://localhost:{http + 1}/api/reassignments/wait", method="POST",
                                      data=b"{}", headers={"Authorization": "Bearer secret"})
        assert urllib.request.urlopen(wait, timeout=120).status == 200
        assert admin.list_partition_reassignments() == {}
        admin.close()
        metrics = urllib.request.urlopen(f"http://localhost:{http}/metrics", timeout=30).read().decode()
        assert "kraftwire" in metrics

        audit = compose("--profile", "audit", "run", "--rm", "audit", timeout=900)
        assert audit.returncode == 0, audit.stdout[-4000:] + audit.stderr[-4000:]
        listed = subprocess.run(["podman", "run", "--rm", "-v", f"{compose.project}_audit-reports:/reports:ro",
                                 "--entrypoint", "ls", "localhost/kraftwire:latest", "/reports/audit"],
                                capture_output=True, text=True, timeout=120)
        assert "report.html" in listed.stdout.split(), listed.stdout + listed.stderr
    finally:
        compose("--profile", "audit", "down", "-v", timeout=300)


def override_text(data: dict) -> str:
    """YAML for podman-compose, a list led by "!override" written with the tag."""
    def tagged(value, indent):
        pad = "  " * indent
        if isinstance(value, dict):
            return "".join(f"\n{pad}{json.dumps(k)}:{tagged(v, indent + 1)}" for k, v in value.items())
        if isinstance(value, list):
            tag = " !override" if value[:1] == ["!override"] else ""
            items = value[1:] if tag else value
            return tag + "".join(f"\n{pad}- {json.dumps(item)}" for item in items)
        return f" {json.dumps(value)}"
    return tagged(data, 0).lstrip("\n") + "\n"


def test_quorum_compose_survives_stopping_the_leaders_container(tmp_path, compose_environment):
    spec = yaml.safe_load((DOCKER / "compose-quorum.yaml").read_text())
    brokers = free_ports(6)  # brokers 1-3, then the three controllers (one draw: no overlap)
    controllers = brokers + 3
    moves = {**{f"127.0.0.1:919{k}": f"127.0.0.1:{controllers + k - 1}" for k in (1, 2, 3)},
             **{f"{host}:909{k + 1}": f"{host}:{brokers + k - 1}"
                for k in (1, 2, 3) for host in ("127.0.0.1", "localhost")}}
    services = {}
    for name, service in spec["services"].items():
        source, target, mode = service["volumes"][0].split(":")
        text = (DOCKER / source).read_text()
        for before, after in moves.items():
            text = text.replace(before, after)
        config = tmp_path / f"{name}.properties"
        config.write_text(text)
        config.chmod(0o644)
        services[name] = {"volumes": ["!override", f"{config}:{target}:{mode}", service["volumes"][1]]}
        if name.startswith("broker-"):
            services[name]["healthcheck"] = {"test": ["!override", "CMD", "kraftwire", "healthcheck", "--port",
                                                      str(brokers + int(name[-1]) - 1)]}
    compose = Compose(tmp_path, "compose-quorum.yaml", {"services": services}, compose_environment)
    bootstrap = ",".join(f"localhost:{brokers + k}" for k in range(3))
    try:
        up = compose("up", "-d")
        assert up.returncode == 0, up.stdout + up.stderr
        for k in (1, 2, 3):
            wait_healthy(compose.container(f"broker-{k}"))

        def cluster_of_three():
            admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
            try:
                return len(admin.describe_cluster()["brokers"]) == 3 and admin
            except Exception:
                admin.close()
                raise
        admin = wait_for(cluster_of_three, "the three brokers registered")
        admin.create_topics([NewTopic("before", 3, 3)])
        leader = admin.describe_metadata_quorum()["topics"][0]["partitions"][0]["leader_id"]
        assert leader in (3000, 3001, 3002)

        stopped = subprocess.run(["podman", "stop", compose.container(f"controller-{leader}")],
                                 capture_output=True, text=True, timeout=120)
        assert stopped.returncode == 0, stopped.stderr

        def new_leader():
            now = admin.describe_metadata_quorum()["topics"][0]["partitions"][0]["leader_id"]
            return now not in (leader, -1) and now
        wait_for(new_leader, "another controller leading the quorum")
        wait_for(lambda: admin.create_topics([NewTopic("after", 3, 3)]) or True, "a topic created after the stop")
        partitions = admin.describe_topics(["after"])[0]["partitions"]
        assert all(sorted(p["replica_nodes"]) == [1, 2, 3] for p in partitions), partitions
        admin.close()
    finally:
        compose("down", "-v", timeout=300)
