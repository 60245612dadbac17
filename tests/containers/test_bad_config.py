"""Bad configuration of the image stops the container at once with a non-zero exit and one line in its log
that names the cause: a bad ``KRAFTWIRE_*`` value, a port another process holds, a data volume the
image's user (uid 10001) cannot write. Run with podman's own command line, as a user would look."""
import socket
import subprocess
import uuid

import pytest

IMAGE = "localhost/kraftwire:latest"  # (tests/container_setup.sh builds it)


def run_until_stopped(tmp_path, *options: str) -> tuple[int, list[str]]:
    """(exit status, the lines of ``podman logs``) of a container that is expected to stop by itself."""
    name = f"kraftwire-bad-{uuid.uuid4().hex[:8]}"
    try:
        subprocess.run(["podman", "run", "-d", "--name", name, *options, IMAGE], check=True,
                       capture_output=True, text=True, timeout=120)
        waited = subprocess.run(["podman", "wait", name], capture_output=True, text=True, timeout=120)
        assert waited.returncode == 0, waited.stderr
        logs = subprocess.run(["podman", "logs", name], capture_output=True, text=True, timeout=60)
        return int(waited.stdout.strip()), (logs.stdout + logs.stderr).splitlines()
    finally:
        subprocess.run(["podman", "rm", "-f", "-v", name], capture_output=True, timeout=60)


@pytest.fixture(autouse=True)
def podman_and_image(engine):
    """(The same checks as the Testcontainers tests: podman installed, the image built.)"""


def test_a_bad_environment_value_is_named_in_one_line(tmp_path):
    status, lines = run_until_stopped(tmp_path, "-e", "KRAFTWIRE_BROKERS=three")
    assert status == 2
    assert lines == ["kraftwire serve: error: KRAFTWIRE_BROKERS: invalid int 'three'"]


def test_a_port_in_use_is_named_in_one_line(tmp_path):
    with socket.socket() as holder:  # the host's network: a port another process holds
        holder.bind(("0.0.0.0", 0))
        holder.listen()
        port = holder.getsockname()[1]
        others = [f"-e=KRAFTWIRE_{name}_PORT=0" for name in ("CONTROLLER", "METRICS", "CONTROL")]
        status, lines = run_until_stopped(tmp_path, "--network", "host", "-e", f"KRAFTWIRE_PORT={port}", *others)
    assert status == 1
    assert len(lines) == 1, lines
    assert lines[0].endswith(f"cannot start: the broker 1 port 0.0.0.0:{port} is not available: Address already in use")


def test_an_unwritable_data_volume_is_named_in_one_line(tmp_path):
    volume = tmp_path / "data"
    volume.mkdir(mode=0o755)  # owned by the test's user; the image runs as uid 10001
    status, lines = run_until_stopped(tmp_path, "-v", f"{volume}:/data")
    assert status == 1
    assert len(lines) == 1, lines
    assert "cannot start:" in lines[0] and "permission denied" in lines[0].lower() and "/data" in lines[0], lines
