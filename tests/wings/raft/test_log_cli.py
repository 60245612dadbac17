"""``kraftwire log dump`` and ``kraftwire log verify``, run as the command line, on a log written
through the real log."""
from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import uuid

import pytest

from kraftwire.codec import records as rec
from tests.raft_helpers import batches, open_log, partition_dir, segments

TOPIC_ID = uuid.UUID("6e1f3c52-6d8b-4c55-9d7c-0123456789ab")


def kraftwire(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kraftwire", *args], capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """Two starts (two LeaderChange records), a topic, configs, a snapshot and a few segments."""
    directory = tmp_path_factory.mktemp("cli")

    async def write():
        log, _ = await open_log(directory, segment_bytes=600)
        await log.append([(rec.TopicRecord(name="audited", topic_id=TOPIC_ID), None),
                          (rec.PartitionRecord(partition_id=0, topic_id=TOPIC_ID, replicas=[1, 2], isr=[1, 2],
                                               leader=1), 1)])[1]
        await log.snapshot()
        await log.close()
        log, _ = await open_log(directory, segment_bytes=600)
        for i in range(8):
            await log.append([(rec.ConfigRecord(resource_type=2, resource_name="audited", name="retention.ms",
                                                value=str(1000 * i)), None)])[1]
        await log.close()

    asyncio.run(write())
    return directory


def test_dump_json_lists_every_record_with_its_fields(data_dir):
    result = kraftwire("log", "dump", "--json", str(data_dir))
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    log_records = [r for r in lines if r["file"].endswith(".log")]
    assert [r["offset"] for r in log_records] == list(range(len(log_records))) == list(range(12))
    assert [r["type"] for r in log_records] == (
        ["LeaderChangeMessage", "TopicRecord", "PartitionRecord", "LeaderChangeMessage"] + ["ConfigRecord"] * 8)
    assert [r["epoch"] for r in log_records] == [1, 1, 1] + [2] * 9
    assert [r["control"] for r in log_records][:4] == [True, False, False, True]
    assert log_records[0]["fields"] == {"version": 0, "leader_id": 3000, "voters": [{"voter_id": 3000}],
                                        "granting_voters": [{"voter_id": 3000}]}
    assert log_records[1]["fields"] == {"name": "audited", "topic_id": str(TOPIC_ID)}
    assert log_records[2]["version"] == 1 and log_records[2]["fields"]["replicas"] == [1, 2]
    assert [r["fields"]["value"] for r in log_records[4:]] == [str(1000 * i) for i in range(8)]
    assert all(r["timestamp"] > 0 for r in lines)
    snapshot = [r for r in lines if r["file"].endswith(".checkpoint")]
    assert [r["type"] for r in snapshot] == ["SnapshotHeaderRecord", "TopicRecord", "PartitionRecord",
                                             "SnapshotFooterRecord"]
    assert snapshot[0]["file"] == "00000000000000000003-0000000001.checkpoint"


def test_dump_text_names_each_file_and_record(data_dir):
    result = kraftwire("log", "dump", str(data_dir / "__cluster_metadata-0"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "== 00000000000000000003-0000000001.checkpoint"
    assert "== 00000000000000000000.log" in lines
    topic = next(line for line in lines if "TopicRecord" in line and "offset=1 " in line)
    assert topic.startswith("offset=1 epoch=1 time=") and '"name": "audited"' in topic
    assert any(line.startswith("offset=3 epoch=2 ") and "control LeaderChangeMessage v0" in line for line in lines)
    assert sum(1 for line in lines if line.startswith("offset=")) == 12 + 4


def test_verify_accepts_the_log_and_catches_a_flipped_bit(data_dir, tmp_path):
    result = kraftwire("log", "verify", str(data_dir))
    assert result.returncode == 0, result.stdout
    assert result.stdout.startswith("ok: ") and "offsets 0..11" in result.stdout
    assert len(segments(data_dir)) >= 2

    damaged = tmp_path / "damaged"
    shutil.copytree(data_dir, damaged)
    segment = segments(damaged)[1]
    position, size, base, _count = batches(segment)[0]
    data = bytearray(segment.read_bytes())
    data[position + size - 3] ^= 0x04
    segment.write_bytes(bytes(data))
    result = kraftwire("log", "verify", str(damaged))
    assert result.returncode == 1
    assert result.stdout.startswith(f"damaged: damaged record batch in {segment} at byte {position} (offset {base}): "
                                    f"CRC mismatch")


def test_verify_catches_an_index_entry_off_a_batch_boundary(data_dir, tmp_path):
    """An index is no part of the log's data (start-up rebuilds it from the batches): a warning, exit 0."""
    damaged = tmp_path / "index"
    shutil.copytree(data_dir, damaged)
    index = partition_dir(damaged) / "00000000000000000000.index"
    index.write_bytes(b"\x00\x00\x00\x01\x00\x00\x00\x05")
    result = kraftwire("log", "verify", str(damaged))
    assert result.returncode == 0, result.stdout
    warning = next(line for line in result.stdout.splitlines() if "index entry 0 points at byte 5" in line)
    assert warning.startswith(f"warning: {index}: ") and warning.endswith("(start-up rebuilds the index from the batches)")


def test_verify_judges_the_newest_segment_as_start_up_does(data_dir, tmp_path):
    """Damage in the last batch below the fsync'd length fails verify (start-up refuses it too), and so
    does a whole batch with a flipped bit past the recorded length (a stale record cannot vouch for it);
    a batch the file ends inside, past the recorded length, is a torn tail verify reports and start-up cuts."""
    from kraftwire.server.raft.log import SYNCED_LENGTHS

    damaged = tmp_path / "last"
    shutil.copytree(data_dir, damaged)
    segment = segments(damaged)[-1]
    position, size, base, _count = batches(segment)[-1]
    original = segment.read_bytes()
    data = bytearray(original)
    data[position + size - 3] ^= 0x04
    segment.write_bytes(bytes(data))
    result = kraftwire("log", "verify", str(damaged))
    assert result.returncode == 1
    assert f"at byte {position} (offset {base})" in result.stdout and "recorded as fsync'd" in result.stdout

    (partition_dir(damaged) / SYNCED_LENGTHS).write_text(json.dumps({segment.name: position}))
    result = kraftwire("log", "verify", str(damaged))
    assert result.returncode == 1, result.stdout
    assert f"at byte {position} (offset {base}): CRC mismatch" in result.stdout and "cannot vouch" in result.stdout

    segment.write_bytes(original[:-3])
    result = kraftwire("log", "verify", str(damaged))
    assert result.returncode == 0, result.stdout
    assert f"torn tail: {segment} from byte {position}" in result.stdout
