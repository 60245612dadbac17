"""The container tests: kraftwire's image run by podman, through podman's Docker-compatible API socket.

``engine`` starts ``podman system service`` on a socket of its own for the whole run and stops it after;
it exports what Testcontainers (every language's) needs to use it: ``DOCKER_HOST``, Ryuk off (its image
cannot be pulled here; each test removes its own containers) and the ``docker_host`` connection mode (the
host in DOCKER_HOST, ``localhost`` for a socket, is where mapped ports are reached). tests/setup.sh
(tests/container_setup.sh) installed podman and built ``localhost/kraftwire:latest`` from this checkout.
"""
from __future__ import annotations

import http.client
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from served import free_ports

REPO = Path(__file__).resolve().parents[2]
IMAGE = "localhost/kraftwire:latest"
CONTROL_TOKEN = "container-test-token"


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str) -> None:
        super().__init__("localhost", timeout=5)
        self.socket_path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(5)
        self.sock.connect(self.socket_path)


def _answers(path: str) -> bool:
    connection = _UnixConnection(path)
    try:
        connection.request("GET", "/_ping")
        return connection.getresponse().status == 200
    except OSError:
        return False
    finally:
        connection.close()


@pytest.fixture(scope="session")
def engine():
    """The environment every Testcontainers runner needs, with podman's API socket serving it."""
    if os.environ.get("KRAFTWIRE_SKIP_CONTAINERS") == "1":
        pytest.skip("KRAFTWIRE_SKIP_CONTAINERS=1")
    podman = shutil.which("podman")
    assert podman, "podman is missing: bash tests/setup.sh installs it"
    assert subprocess.run([podman, "image", "exists", IMAGE]).returncode == 0, \
        f"{IMAGE} is missing: bash tests/setup.sh builds it"
    folder = tempfile.mkdtemp(prefix="kraftwire-podman-")
    path = os.path.join(folder, "podman.sock")
    service = subprocess.Popen([podman, "system", "service", "--time=0", f"unix://{path}"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not (os.path.exists(path) and _answers(path)):
        assert service.poll() is None, service.stderr.read().decode() if service.stderr else "podman stopped"
        assert time.monotonic() < deadline, "podman's API socket did not answer within 60 s"
        time.sleep(0.05)
    settings = {"DOCKER_HOST": f"unix://{path}", "TESTCONTAINERS_RYUK_DISABLED": "true",
                "TESTCONTAINERS_CONNECTION_MODE": "docker_host"}
    saved = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        yield dict(os.environ)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        # what a test left behind (Ryuk, which would remove it, is off): Testcontainers labels its containers
        leftover = subprocess.run([podman, "ps", "-aq", "--filter", "label=org.testcontainers=true"],
                                  capture_output=True, text=True).stdout.split()
        if leftover:
            subprocess.run([podman, "rm", "-f", "-v", *leftover], capture_output=True)
        service.terminate()
        try:
            service.wait(timeout=30)
        except subprocess.TimeoutExpired:
            service.kill()
            service.wait()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def broker_port() -> int:
    """Broker 1's port; brokers 2 and 3 take the next two. The container binds them 1:1 on the host, so
    the address each broker advertises (localhost and its own port) is where a client outside reaches it."""
    return free_ports(3)
