"""A full metadata log directory, on a real small file system (a tmpfs this test mounts): the server
answers the write it could not make with NOT_CONTROLLER instead of dropping the connection, says it is
failing (healthcheck, /metrics), exits 3, and a restart once space is back has every acknowledged write."""
from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import urllib.request
import uuid

import pytest

from kraftwire.codec.messages import CreateTopicsRequest
from tests.raw_client import RawConnection
from tests.served import REPO, Served, create_topics, listed_topics

NOT_CONTROLLER = 41


@pytest.fixture
def small_fs(tmp_path):
    """A 4 MiB tmpfs mounted for this test."""
    mount_point = tmp_path / "fs"
    mount_point.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount_point)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    yield mount_point
    subprocess.run(["umount", "-l", str(mount_point)], check=False)


def fill(file_system) -> None:
    """Take every free byte of the file system."""
    with open(file_system / "filler", "wb", buffering=0) as filler:
        for chunk in (1 << 16, 4096, 1):
            try:
                while True:
                    filler.write(b"\0" * chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc


def create_topic_raw(bootstrap: str, name: str) -> int:
    """CreateTopics v5 for one topic, over a plain socket: the topic's error code in the answer."""
    request = CreateTopicsRequest(topics=[CreateTopicsRequest.CreatableTopic(
        name=name, num_partitions=1, replication_factor=1, assignments=[], configs=[])], timeout_ms=30000,
        validate_only=False)
    with RawConnection(bootstrap.split(",")[0]) as connection:
        response = connection.send(request, 5)
    (topic,) = response.topics
    assert topic.name == name
    return topic.error_code


def first_refused(bootstrap: str, prefix: str, acknowledged: list[str]) -> str:
    """Create topics until one is refused; returns its name. A write may still fit in the slack of the last
    page of the segment (the fsync'd-length record is rewritten in place, so it takes no new space): each
    one that succeeds is acknowledged, and kept in ``acknowledged``."""
    for i in range(64):
        name = f"{prefix}-{i}-{uuid.uuid4().hex[:6]}"
        code = create_topic_raw(bootstrap, name)
        if code != 0:
            assert code == NOT_CONTROLLER
            return name
        acknowledged.append(name)
    raise AssertionError("64 topics fitted on a full file system")


def serve(cwd, data_dir, *extra: str) -> Served:
    return Served(cwd, "--brokers", "1", "--port", "0", "--controller-port", "0", "--data-dir", str(data_dir),
                  "--log-level", "INFO", *extra)


def test_a_full_metadata_log_directory_stops_the_server_and_a_restart_recovers(small_fs, tmp_path):
    data_dir = small_fs / "data"
    served = serve(tmp_path, data_dir, "--metrics-port", "0", "--failure-exit-delay-ms", "600000")
    acknowledged = [f"before-{i}" for i in range(3)]
    create_topics(served.bootstrap, acknowledged)
    metrics_url = served.wait_logged("metrics on ").split("metrics on ")[1].strip()

    fill(small_fs)
    during = first_refused(served.bootstrap, "during", acknowledged)
    # asked again: not told TOPIC_ALREADY_EXISTS of a topic whose record never reached the disk
    assert create_topic_raw(served.bootstrap, during) == NOT_CONTROLLER
    served.wait_logged("the metadata log directory failed")
    probe = subprocess.run([sys.executable, "-m", "kraftwire", "healthcheck", "--port",
                            served.bootstrap.rsplit(":", 1)[1]], capture_output=True, text=True, timeout=60,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
    assert probe.returncode == 1 and "KAFKA_STORAGE_ERROR" in probe.stderr, probe.stderr
    with urllib.request.urlopen(metrics_url.rstrip("/") + "/metrics", timeout=30) as answer:
        assert "kraftwire_metadata_log_failed 1.0" in answer.read().decode()
    served.process.send_signal(signal.SIGTERM)
    assert served.wait() == 3
    assert "Traceback" not in served.logged()

    (small_fs / "filler").unlink()
    served = serve(tmp_path, data_dir, "--failure-exit-delay-ms", "0")
    assert set(acknowledged) <= listed_topics(served.bootstrap)
    create_topics(served.bootstrap, ["after"])
    acknowledged.append("after")
    fill(small_fs)
    first_refused(served.bootstrap, "while-full", acknowledged)
    assert served.wait() == 3  # stops by itself

    (small_fs / "filler").unlink()
    served = serve(tmp_path, data_dir)
    try:
        assert set(acknowledged) <= listed_topics(served.bootstrap)
    finally:
        served.stop()
    verify = subprocess.run([sys.executable, "-m", "kraftwire", "log", "verify", str(data_dir)],
                            capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert verify.returncode == 0, verify.stdout + verify.stderr
