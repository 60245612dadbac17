"""A power loss, as it can leave the files: the newest segment cut anywhere at or past what was fsync'd
(an unfinished batch partly there, or its sectors zeros), and the fsync'd-length record current, deleted,
torn or a stale copy. Start-up keeps every acknowledged batch or refuses to start, never cuts one, and
``kraftwire log verify`` says the same of every directory. The record is fsync'd before a write is
acknowledged, and lowered before a truncation cuts below it, so a crash leaves it neither short of an
acknowledged batch nor ahead of the file."""
from __future__ import annotations

import io
import json
import os
import random
import shutil
import tempfile
from pathlib import Path

import pytest

from kraftwire.codec import records as rec
from kraftwire.server.raft import LogCorruptError, RaftLog
from kraftwire.server.raft.files import RaftConfig
from kraftwire.server.raft.log import SYNCED_LENGTHS
from kraftwire.server.raft.recovery import recover
from kraftwire.server.raft.tools import verify
from tests.raft_helpers import NODE_ID, batches, open_log, partition_dir, segments

ACKNOWLEDGED = [str(i) for i in range(6)]


def config_record(value: str):
    return rec.ConfigRecord(resource_type=4, resource_name="", name="x", value=value), None


async def write_acknowledged(data_dir: Path) -> bytes:
    """Six acknowledged one-record batches, the process then killed (nothing unsynced is left); returns a
    copy of the fsync'd-length record as it stood after the third, a stale copy."""
    log, _ = await open_log(data_dir)
    stale = b""
    for i, value in enumerate(ACKNOWLEDGED):
        await log.append([config_record(value)])[1]
        if i == 2:
            stale = (partition_dir(data_dir) / SYNCED_LENGTHS).read_bytes()
    await log.kill()
    return stale


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    import asyncio

    data_dir = tmp_path_factory.mktemp("acknowledged")
    stale = asyncio.run(write_acknowledged(data_dir))
    segment = segments(data_dir)[-1]
    position, size, base, _count = batches(segment)[-1]
    epoch = int.from_bytes(segment.read_bytes()[position + 12:position + 16], "big")
    in_flight = rec.metadata_batch(base + 1, epoch, 1_700_000_000_000, [config_record("in flight")])
    return data_dir, stale, in_flight


@pytest.fixture
def scratch(tmp_path):
    shm = Path("/dev/shm")
    if not shm.is_dir():
        yield tmp_path
        return
    directory = Path(tempfile.mkdtemp(dir=shm, prefix="kraftwire-power-"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


RECORDS = ["current", "deleted", "torn", "stale"]


def damaged_copy(written, scratch: Path, record: str, data: bytes | None = None) -> Path:
    """A copy of the log with the newest segment's bytes ``data`` and the record as ``record`` says."""
    source, stale, _ = written
    target = scratch / "copy"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target)
    if data is not None:
        segments(target)[-1].write_bytes(data)
    path = partition_dir(target) / SYNCED_LENGTHS
    if record == "deleted":
        path.unlink()
    elif record == "torn":  # an update the power loss tore: not a record at all
        path.write_bytes(path.read_bytes()[:9])
    elif record == "stale":
        path.write_bytes(stale)
    return target


async def start_up(data_dir: Path) -> list[str] | str:
    """The config values a restart replays, or the refusal it stopped with."""
    log = RaftLog(data_dir, NODE_ID)
    try:
        await log.open()
    except LogCorruptError as refused:
        return str(refused)
    values = [r.value for _, r in log.replay() if isinstance(r, rec.ConfigRecord)]
    await log.close()
    return values


def verified(data_dir: Path) -> int:
    return verify(data_dir, io.StringIO())


async def judged(written, scratch, record: str, data: bytes) -> list[str] | str:
    """Start-up's outcome on the damaged copy; verify, run first on the same copy, must agree with it."""
    directory = damaged_copy(written, scratch, record, data)
    verdict = verified(directory)
    outcome = await start_up(directory)
    assert verdict == (1 if isinstance(outcome, str) else 0), (record, outcome)
    return outcome


def original(written) -> bytes:
    return segments(written[0])[-1].read_bytes()


@pytest.mark.parametrize("record", RECORDS)
async def test_an_unfinished_batch_cut_anywhere_is_cut_away_and_every_acknowledged_batch_kept(written, scratch,
                                                                                              record):
    data, in_flight = original(written), written[2]
    for cut in [*range(0, len(in_flight), 7), len(in_flight) - 1]:
        outcome = await judged(written, scratch, record, data + in_flight[:cut])
        assert outcome == ACKNOWLEDGED, f"{record} record, {cut} bytes of the unfinished batch: {outcome}"


@pytest.mark.parametrize("record", RECORDS)
async def test_an_unfinished_batch_of_zeros_is_cut_away(written, scratch, record):
    """Sectors that never reached the disk read back as zeros; the file's length may already cover them."""
    data, in_flight = original(written), written[2]
    for zeros in (len(in_flight), 12, 40):
        outcome = await judged(written, scratch, record, data + bytes(zeros))
        assert outcome == ACKNOWLEDGED, f"{record} record, {zeros} zeros: {outcome}"


@pytest.mark.parametrize("record", RECORDS)
async def test_a_flipped_bit_in_the_last_acknowledged_batch_stops_start_up(written, scratch, record):
    """Whatever the record says, or if there is none: never cut as a torn tail."""
    data = original(written)
    position, size, base, _count = batches(segments(written[0])[-1])[-1]
    rng = random.Random(record)
    for spot in sorted({0, 10, 14, 16, 19, 25, 57, size - 1, *(rng.randrange(size) for _ in range(8))}):
        damaged = bytearray(data)
        damaged[position + spot] ^= 1 << rng.randrange(8)
        outcome = await judged(written, scratch, record, bytes(damaged))
        assert isinstance(outcome, str), f"{record} record, byte {spot}: replayed {outcome}"
        assert f"at byte {position} (offset {base})" in outcome and "refusing to start" in outcome


@pytest.mark.parametrize("record", RECORDS)
async def test_a_flipped_bit_in_an_unfinished_whole_batch_stops_start_up(written, scratch, record):
    """A whole batch with wrong bytes is no interrupted write: nothing can tell it from an acknowledged one."""
    data, in_flight = original(written), bytearray(written[2])
    in_flight[len(in_flight) // 2] ^= 0x08
    outcome = await judged(written, scratch, record, data + bytes(in_flight))
    assert isinstance(outcome, str) and f"at byte {len(data)}" in outcome


async def test_the_whole_unfinished_batch_on_disk_is_kept(written, scratch):
    outcome = await judged(written, scratch, "stale", original(written) + written[2])
    assert outcome == [*ACKNOWLEDGED, "in flight"]


async def test_a_segment_cut_short_of_the_current_record_stops_start_up(written, scratch):
    data = original(written)
    position, size, _base, _count = batches(segments(written[0])[-1])[-1]
    for cut in (position, position + 1, position + size - 1):
        outcome = await judged(written, scratch, "current", data[:cut])
        assert isinstance(outcome, str) and f"{len(data)} bytes recorded as fsync'd" in outcome, outcome


async def test_the_record_is_fsynced_after_the_segment_and_before_each_acknowledgement(tmp_path, monkeypatch):
    synced: list[str] = []

    def traced(real):
        def sync(fd: int) -> None:
            real(fd)
            synced.append(Path(os.readlink(f"/proc/self/fd/{fd}")).name)
        return sync

    log, _ = await open_log(tmp_path)
    monkeypatch.setattr(os, "fsync", traced(os.fsync))
    monkeypatch.setattr(os, "fdatasync", traced(os.fdatasync))
    segment = segments(tmp_path)[-1]
    for value in ACKNOWLEDGED:
        synced.clear()
        await log.append([config_record(value)])[1]
        assert segment.name in synced and SYNCED_LENGTHS in synced[synced.index(segment.name):], synced
        recorded = json.loads((partition_dir(tmp_path) / SYNCED_LENGTHS).read_text())[segment.name]
        assert recorded == segment.stat().st_size  # the acknowledged batch lies below the durable record
    await log.close()


async def test_a_crash_right_after_a_truncation_restarts_with_the_kept_batches(tmp_path):
    """A follower cutting a diverging tail lowers the record first: killed before the group's fsync (the
    page cache keeps the cut) it is not refused as "short of the fsync'd length"; after a power loss that
    kept the cut from the disk, the bytes past the lowered record are whole batches, kept."""
    log, _ = await open_log(tmp_path)
    for value in ACKNOWLEDGED:
        await log.append([config_record(value)])[1]
    await log.close()
    segment = segments(tmp_path)[-1]
    before = segment.read_bytes()
    recovered = recover(partition_dir(tmp_path), RaftConfig(), 0)
    cut_at = batches(segment)[3][2]  # the offset of the fourth batch ("2")
    recovered.files.truncate(cut_at)  # the crash comes before the group's fsync
    recovered.files.close(failed=True)
    assert json.loads((partition_dir(tmp_path) / SYNCED_LENGTHS).read_text())[segment.name] <= segment.stat().st_size
    power_lost = tmp_path / "power-lost"
    shutil.copytree(tmp_path, power_lost, ignore=shutil.ignore_patterns("power-lost"))
    segments(power_lost)[-1].write_bytes(before)
    assert await start_up(tmp_path) == ACKNOWLEDGED[:2]
    assert await start_up(power_lost) == ACKNOWLEDGED
