"""Recovery at start-up: torn tails are cut back to the last complete batch, damage in the middle of
the log stops start-up, and snapshot + tail rebuild exactly the image a full replay builds."""
from __future__ import annotations

import asyncio
import random
import shutil
import tempfile
import uuid
from pathlib import Path

import pytest

from kraftwire.codec import records as rec
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.raft import LogCorruptError, RaftLog
from kraftwire.server.raft.log import SYNCED_LENGTHS
from kraftwire.server.raft.tools import read_log
from tests.raft_helpers import NODE_ID, RandomHistory, batches, open_log, partition_dir, segments, state
from tests.served import serve_once


async def build_log(data_dir, writes: int, **config) -> None:
    """A random history, ending with three one-record batches (the tail the byte-by-byte cuts sweep)."""
    history = RandomHistory(seed=3)
    log, _ = await open_log(data_dir, **config)
    for _ in range(writes):
        await log.append(history.next_write())[1]
    for i in range(3):
        await log.append([(rec.ConfigRecord(resource_type=4, resource_name="", name="x", value=str(i)), None)])[1]
    await log.close()


async def records_after_restart(data_dir) -> tuple[list, RaftLog]:
    log = RaftLog(data_dir, NODE_ID)
    await log.open()
    replayed = list(log.replay())
    await log.close()
    return replayed, log


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A log of a few segments, closed cleanly."""
    data_dir = tmp_path_factory.mktemp("pristine")
    asyncio.run(build_log(data_dir, writes=80, segment_bytes=6_000))
    return data_dir


@pytest.fixture
def scratch(tmp_path):
    """Where the many damaged copies go: tmpfs when there is one, as these tests restart hundreds of
    times and each restart fsyncs a few files (what they check is the recovery logic, not the disk)."""
    shm = Path("/dev/shm")
    if not shm.is_dir():
        return tmp_path
    directory = Path(tempfile.mkdtemp(dir=shm, prefix="kraftwire-test-"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def copy_of(pristine, scratch):
    target = scratch / "copy"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(pristine, target)
    return target


def mark_synced(data_dir, segment, length: int) -> None:
    """Record ``length`` bytes of ``segment`` as fsync'd, as a server killed before its last fsync left it."""
    (partition_dir(data_dir) / SYNCED_LENGTHS).write_text(f'{{"{segment.name}": {length}}}')


async def test_a_torn_tail_is_cut_back_to_the_last_complete_batch(pristine, scratch):
    """Cuts past the fsync'd length (the last three batches were never fsync'd) lose only those."""
    last = segments(pristine)[-1]
    found = batches(last)
    assert len(found) >= 4
    complete, _ = await records_after_restart(copy_of(pristine, scratch))
    size = last.stat().st_size
    tail_start = found[-3][0]
    for cut in range(tail_start, size):
        data_dir = copy_of(pristine, scratch)
        segment = segments(data_dir)[-1]
        mark_synced(data_dir, segment, tail_start)
        with open(segment, "r+b") as f:
            f.truncate(cut)
        kept = [b for b in found if b[0] + b[1] <= cut]
        end = kept[-1][2] + kept[-1][3]
        replayed, log = await records_after_restart(data_dir)
        assert replayed == [r for r in complete if r[0] < end], f"cut at byte {cut}"
        assert log.end_offset == end + 1  # the restart's LeaderChange follows the last complete batch
        assert batches(segment)[:len(kept)] == kept


async def test_a_cut_below_the_fsynced_length_stops_start_up(pristine, scratch):
    """Whole batches or not, bytes below the fsync'd length were acknowledged: a file cut short of it is
    refused, never truncated further."""
    last = segments(pristine)[-1]
    size = last.stat().st_size
    rng = random.Random(11)
    for cut in sorted({*(rng.randrange(0, size) for _ in range(60)), size - 1, *(b[0] for b in batches(last))}):
        data_dir = copy_of(pristine, scratch)
        segment = segments(data_dir)[-1]
        with open(segment, "r+b") as f:
            f.truncate(cut)
        with pytest.raises(LogCorruptError) as raised:
            await RaftLog(data_dir, NODE_ID).open()
        assert segment.name in str(raised.value) and str(size) in str(raised.value), f"cut at byte {cut}"
        assert segment.stat().st_size == cut


async def test_a_zeroed_last_batch_past_the_fsynced_length_is_cut_away(pristine, scratch, caplog):
    """Sectors a power loss kept from the disk read back as zeros: past the fsync'd length, a torn write."""
    data_dir = copy_of(pristine, scratch)
    segment = segments(data_dir)[-1]
    position, size, base, _count = batches(segment)[-1]
    mark_synced(data_dir, segment, position)
    data = bytearray(segment.read_bytes())
    data[position:position + size] = bytes(size)
    segment.write_bytes(bytes(data))
    replayed, log = await records_after_restart(data_dir)
    assert log.end_offset == base + 1
    assert all(offset < base for offset, _ in replayed)
    assert f"truncating at byte {position}" in caplog.text and segment.name in caplog.text


async def test_a_flipped_bit_past_a_stale_fsynced_length_stops_start_up(pristine, scratch):
    """A whole batch with wrong bytes is not what an interrupted write leaves: refused even past the
    recorded fsync'd length, since a record restored from an older copy would leave acknowledged batches
    past it (here the last one) and cutting them would lose them silently."""
    rng = random.Random(17)
    last = segments(pristine)[-1]
    found = batches(last)
    position, size, base, _count = found[-1]
    for stale_at in (found[-2][0], found[-3][0], position):
        for spot in sorted({0, 9, 13, 17, 30, 57, size - 1, *(rng.randrange(size) for _ in range(6))}):
            data_dir = copy_of(pristine, scratch)
            segment = segments(data_dir)[-1]
            mark_synced(data_dir, segment, stale_at)
            flip(segment, position + spot, rng.randrange(8))
            damaged = segment.read_bytes()
            with pytest.raises(LogCorruptError) as raised:
                await RaftLog(data_dir, NODE_ID).open()
            message = str(raised.value)
            assert f"{segment.name} at byte {position} (offset {base})" in message, f"byte {spot}: {message}"
            assert "refusing to start" in message
            assert segment.read_bytes() == damaged


async def test_a_flipped_bit_in_the_last_fsynced_batch_stops_start_up(pristine, scratch):
    """The last batch of the newest segment, below the fsync'd length, was acknowledged: damage there is
    refused (naming the file, the byte and the fsync'd length) and the file is left as it was."""
    rng = random.Random(5)
    last = segments(pristine)[-1]
    position, size, base, _count = batches(last)[-1]
    for spot in sorted({*range(61), *(rng.randrange(size) for _ in range(30))}):
        data_dir = copy_of(pristine, scratch)
        segment = segments(data_dir)[-1]
        flip(segment, position + spot, rng.randrange(8))
        damaged = segment.read_bytes()
        with pytest.raises(LogCorruptError) as raised:
            await RaftLog(data_dir, NODE_ID).open()
        message = str(raised.value)
        assert segment.name in message and "refusing to start" in message, f"byte {spot}: {message}"
        assert f"{last.stat().st_size} bytes recorded as fsync'd" in message or "short of" in message
        assert segment.read_bytes() == damaged


def flip(path, position: int, bit: int) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= 1 << bit
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("which", ["active segment", "older segment"])
async def test_a_flipped_bit_in_a_middle_batch_stops_start_up(pristine, scratch, which):
    rng = random.Random(which)
    files = segments(pristine)
    target = files[-1] if which == "active segment" else files[0]
    found = batches(target)
    position, size, base, _count = found[len(found) // 2]
    spots = sorted({*range(61), *(rng.randrange(size) for _ in range(40))})  # every header byte, and the body
    for spot in spots:
        data_dir = copy_of(pristine, scratch)
        damaged = partition_dir(data_dir) / target.name
        flip(damaged, position + spot, rng.randrange(8))
        with pytest.raises(LogCorruptError) as raised:
            await RaftLog(data_dir, NODE_ID).open()
        message = str(raised.value)
        assert damaged.name in message and "refusing to start" in message, f"byte {spot}: {message}"
        assert damaged.read_bytes() != target.read_bytes()  # nothing was truncated or "repaired"


async def test_damage_past_the_fsynced_length_is_an_unsynced_tail(pristine, scratch):
    """Pages of an unsynced write can reach the disk out of order: a batch of zeros at or past what was
    fsync'd is cut away even when complete batches follow it."""
    data_dir = copy_of(pristine, scratch)
    segment = segments(data_dir)[-1]
    found = batches(segment)
    position, size, base, _count = found[-3]
    mark_synced(data_dir, segment, position)
    data = bytearray(segment.read_bytes())
    data[position:position + size] = bytes(size)
    segment.write_bytes(bytes(data))
    _, log = await records_after_restart(data_dir)
    assert log.end_offset == base + 1


async def test_snapshot_and_tail_rebuild_the_image_of_a_full_replay(tmp_path):
    history = RandomHistory(seed=2024)
    log, live = await open_log(tmp_path, snapshot_every_records=700, segment_bytes=64_000)
    for _ in range(60):  # 60 group commits of 50 writes: snapshots fall between them
        await asyncio.gather(*(log.append(history.next_write())[1] for _ in range(50)))
    await log.close()
    assert len(list(partition_dir(tmp_path).glob("*.checkpoint"))) >= 3

    full = MetadataImage()
    for _path, (offset, _epoch, _ts, control, record, _version) in read_log(partition_dir(tmp_path)):
        if not control and _path.suffix == ".log":
            full.apply(record, offset)
    log, restarted = await open_log(tmp_path)
    await log.close()
    assert state(restarted) == state(full) == state(live) == state(history.image)
    assert len(full.topics) > 10 and len(full.brokers) > 1 and full.configs


async def test_an_unusable_newest_snapshot_falls_back_to_an_older_one(tmp_path):
    log, image = await open_log(tmp_path)
    for i in range(5):
        topic_id = uuid.uuid4()
        await log.append([(rec.TopicRecord(name=f"s{i}", topic_id=topic_id), None)])[1]
        await log.snapshot()
    expected = state(image)
    await log.close()
    newest = sorted(partition_dir(tmp_path).glob("*.checkpoint"))[-1]
    newest.write_bytes(newest.read_bytes()[:-5])  # not a complete snapshot
    log, image = await open_log(tmp_path)
    assert state(image) == expected
    await log.close()


def test_serve_refuses_to_start_on_a_damaged_log_and_says_where(pristine, scratch):
    data_dir = copy_of(pristine, scratch)
    target = segments(data_dir)[0]
    position, size, base, _count = batches(target)[1]
    flip(target, position + size - 2, 3)
    result = serve_once(data_dir, "--data-dir", str(data_dir), "--port", "0", "--controller-port", "0",
                        "--log-level", "WARNING")
    assert result.returncode == 1
    assert f"cannot start: damaged record batch in {target} at byte {position} (offset {base})" in result.stderr
    assert "refusing to start" in result.stderr
