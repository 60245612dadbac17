"""Acknowledged writes survive, through a real ``kraftwire serve`` process and a real client: damage
below the fsync'd length stops start-up instead of being cut away, and two servers never share a data
directory."""
from __future__ import annotations

import json


from tests.raft_helpers import batches, partition_dir, segments
from tests.served import Served, create_topics, listed_topics, serve_once

SERVE = ("--brokers", "1", "--port", "0", "--controller-port", "0", "--data-dir", "data", "--log-level", "WARNING")


def test_damage_in_the_last_fsynced_batch_after_kill_9_stops_start_up(tmp_path):
    """kill -9, then one flipped bit in the newest segment's last batch (fsync'd, so acknowledged):
    the restart refuses, naming the file, offset and fsync'd length, and leaves the file alone; with the
    bit put back, a restart serves every acknowledged topic."""
    served = Served(tmp_path, *SERVE)
    acknowledged = [f"kept-{i}" for i in range(5)]
    create_topics(served.bootstrap, acknowledged)
    served.kill()

    data = tmp_path / "data"
    segment = segments(data)[-1]
    synced = json.loads((partition_dir(data) / "synced-lengths.json").read_text())[segment.name]
    position, size, base, _count = batches(segment)[-1]
    assert position + size <= synced  # the last batch was fsync'd
    original = segment.read_bytes()
    damaged = bytearray(original)
    damaged[position + size - 2] ^= 0x20
    segment.write_bytes(bytes(damaged))

    refused = serve_once(tmp_path, *SERVE)
    assert refused.returncode == 1, refused.stderr
    assert f"cannot start: damaged record batch in {segment.relative_to(tmp_path)} at byte {position} (offset {base})" in refused.stderr
    assert f"{synced} bytes recorded as fsync'd" in refused.stderr
    assert segment.read_bytes() == bytes(damaged)

    segment.write_bytes(original)
    served = Served(tmp_path, *SERVE)
    try:
        assert set(acknowledged) <= listed_topics(served.bootstrap)
    finally:
        served.stop()


def test_a_second_server_on_the_same_data_directory_exits_1(tmp_path):
    """The first server holds the lock; the second exits 1 with a clear line and writes nothing; once the
    first is killed (kill -9), the kernel has dropped its lock and a new server starts with every topic."""
    first = Served(tmp_path, *SERVE)
    create_topics(first.bootstrap, ["first"])
    segment = segments(tmp_path / "data")[-1]
    before = segment.read_bytes()
    second = serve_once(tmp_path, *SERVE)
    assert second.returncode == 1, second.stderr
    assert "cannot start: data is in use by another kraftwire server (its .lock file is locked)" in second.stderr
    assert "Traceback" not in second.stderr
    assert segment.read_bytes() == before
    assert "first" in listed_topics(first.bootstrap)
    first.kill()
    again = Served(tmp_path, *SERVE)
    try:
        assert "first" in listed_topics(again.bootstrap)
    finally:
        again.stop()


def test_a_locked_broker_log_directory_stops_start_up(tmp_path):
    """Every broker log directory is locked too: one held by another process stops start-up, naming it."""
    import fcntl

    first = Served(tmp_path, *SERVE)
    first.stop()
    log_dir = tmp_path / "data" / "broker-1" / "logs-0"
    with open(log_dir / ".lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        refused = serve_once(tmp_path, *SERVE)
    assert refused.returncode == 1, refused.stderr
    assert f"{log_dir} is in use by another kraftwire server" in refused.stderr
