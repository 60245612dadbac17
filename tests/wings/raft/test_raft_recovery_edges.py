"""Recovery edges. Damage in the last batches of the log is a torn write (cut away) only at or above the
newest snapshot's end, since a snapshot covers only committed batches; a batch repeating earlier offsets
is damage too. Segments wholly below the recovery point are taken as they are on disk."""
from __future__ import annotations

import pytest

from kraftwire.codec import records as rec
from kraftwire.server.raft import LogCorruptError, RaftLog
from kraftwire.server.raft.log import SYNCED_LENGTHS
from tests.raft_helpers import NODE_ID, batches, open_log, partition_dir, segments


async def write(data_dir, values, snapshot_after: int | None = None) -> int | None:
    """One-record batches, one per value; a snapshot after the first ``snapshot_after`` of them, whose end
    offset is returned."""
    log, _ = await open_log(data_dir)
    snapshot = None
    for i, value in enumerate(values):
        await log.append([(rec.ConfigRecord(resource_type=4, resource_name="", name="x", value=value), None)])[1]
        if i + 1 == snapshot_after:
            snapshot = await log.snapshot()
    await log.close()
    return None if snapshot is None else snapshot.end_offset


async def values_after_restart(data_dir) -> tuple[list[str], list[int]]:
    """The config values and all offsets replayed by a restarted log."""
    log = RaftLog(data_dir, NODE_ID)
    await log.open()
    replayed = list(log.replay())
    await log.close()
    return [r.value for _, r in replayed if isinstance(r, rec.ConfigRecord)], [offset for offset, _ in replayed]


def damage_last_batch(data_dir) -> tuple[bytes, int, int]:
    """Flip a bit in the last batch's CRC; returns the damaged segment's bytes, the batch's position and
    its base offset."""
    segment = segments(data_dir)[-1]
    position, size, base, _count = batches(segment)[-1]
    data = bytearray(segment.read_bytes())
    data[position + size - 1] ^= 0x10
    segment.write_bytes(bytes(data))
    return bytes(data), position, base


async def test_damage_at_the_tail_below_the_newest_snapshot_stops_start_up(tmp_path):
    await write(tmp_path, ["0", "1", "2"], snapshot_after=3)
    data, _, _ = damage_last_batch(tmp_path)
    segment = segments(tmp_path)[-1]
    with pytest.raises(LogCorruptError, match="lies below the newest snapshot"):
        await RaftLog(tmp_path, NODE_ID).open()
    assert segment.read_bytes() == bytes(data)  # nothing was cut away


async def test_damage_in_the_first_batch_after_the_snapshot_is_a_torn_write(tmp_path):
    snapshot_end = await write(tmp_path, ["0", "1", "2", "3"], snapshot_after=3)
    segment = segments(tmp_path)[-1]
    position, size, base, _count = batches(segment)[-1]
    assert base == snapshot_end  # the first batch the snapshot does not cover
    segment.write_bytes(segment.read_bytes()[:position + size - 5])  # as if x=3 had never been fsync'd
    (partition_dir(tmp_path) / SYNCED_LENGTHS).write_text(f'{{"{segment.name}": {position}}}')
    values, _ = await values_after_restart(tmp_path)
    assert values == ["2"]  # the snapshot's x=2, then nothing: the torn x=3 is gone


async def test_a_batch_repeating_earlier_offsets_at_the_tail_stops_start_up(tmp_path):
    """A whole, well-framed batch that does not continue the log is no unfinished write: refused, never
    replayed nor cut."""
    await write(tmp_path, ["0", "1", "2"])
    segment = segments(tmp_path)[-1]
    position, size, base, _count = batches(segment)[-2]
    original = segment.read_bytes()
    segment.write_bytes(original + original[position:position + size])  # "1" again, after "2"
    with pytest.raises(LogCorruptError, match=f"at byte {len(original)} .*batch starts at offset {base}, expected "):
        await RaftLog(tmp_path, NODE_ID).open()
    assert segment.read_bytes() == original + original[position:position + size]


async def test_damage_well_past_the_fsynced_length_is_cut_away_though_batches_follow(tmp_path):
    """Everything past the fsync'd length was never acknowledged, however far past it the damage is."""
    await write(tmp_path, [str(i) for i in range(6)])
    segment = segments(tmp_path)[-1]
    found = batches(segment)
    synced_at, damaged_at = found[-4][0], found[-3][0]
    (partition_dir(tmp_path) / SYNCED_LENGTHS).write_text(f'{{"{segment.name}": {synced_at}}}')
    data = bytearray(segment.read_bytes())
    size = found[-3][1]
    data[damaged_at:damaged_at + size] = bytes(size)  # never reached the disk; two complete batches after it
    segment.write_bytes(bytes(data))
    values, _ = await values_after_restart(tmp_path)
    assert values == ["0", "1", "2"]


async def test_segments_below_the_snapshot_are_taken_at_their_size_on_disk(tmp_path):
    """Their bytes count as fsync'd (synced-lengths.json, retention's total) without being rescanned."""
    log, _ = await open_log(tmp_path, segment_bytes=400)
    for i in range(12):
        await log.append([(rec.ConfigRecord(resource_type=4, resource_name="", name="x", value=str(i)), None)])[1]
    await log.snapshot()
    await log.close()
    files = segments(tmp_path)
    assert len(files) > 2
    log = RaftLog(tmp_path, NODE_ID)
    await log.open()
    lengths = log.synced_lengths()
    await log.close()
    assert {name: lengths[name] for name in (f.name for f in files[:-1])} == {f.name: f.stat().st_size
                                                                              for f in files[:-1]}


async def test_a_log_missing_its_first_segment_names_the_one_it_starts_with(tmp_path):
    log, _ = await open_log(tmp_path, segment_bytes=400)
    for i in range(12):
        await log.append([(rec.ConfigRecord(resource_type=4, resource_name="", name="x", value=str(i)), None)])[1]
    await log.close()
    first, second, *_ = segments(tmp_path)
    first.unlink()
    with pytest.raises(LogCorruptError) as refused:
        await RaftLog(tmp_path, NODE_ID).open()
    assert str(refused.value).startswith(f"{second}: the log starts at offset {int(second.stem)}, but no valid "
                                         "snapshot covers the offsets before it")


async def test_a_matching_offset_index_is_left_as_it_is(tmp_path, caplog):
    """Recovery rebuilds an index only when the batches say otherwise (here: once, after it is deleted)."""
    await write(tmp_path, [str(i) for i in range(20)])
    index = segments(tmp_path)[-1].with_suffix(".index")
    index.unlink()
    caplog.set_level("INFO", logger="kraftwire")
    for _ in range(2):
        log = RaftLog(tmp_path, NODE_ID)
        await log.open()
        await log.close()
    assert caplog.text.count(f"{index.name}: rebuilt the offset index") == 1


async def two_snapshots(data_dir, **config) -> tuple[int, int]:
    """Three one-record batches, a snapshot, two more, a snapshot at the log's end; the snapshots' ends."""
    log, _ = await open_log(data_dir, **config)
    ends = []
    for values in (["0", "1", "2"], ["3", "4"]):
        for value in values:
            await log.append([(rec.ConfigRecord(resource_type=4, resource_name="", name="x", value=value), None)])[1]
        ends.append((await log.snapshot()).end_offset)
    await log.close()
    return ends[0], ends[1]


def flip_middle(path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x08
    path.write_bytes(bytes(data))


async def test_a_damaged_newest_snapshot_is_passed_over_and_its_offsets_still_count_as_committed(tmp_path):
    """Start-up falls back to the older snapshot and the log after it; but the damaged one's name says
    every offset below its end was committed, so a last batch below it, even one that looks like an
    unfinished write (zeros, no fsync'd-length record), is refused, not cut. Verify says the same."""
    from io import StringIO

    from kraftwire.server.raft.tools import verify

    _older, newest = await two_snapshots(tmp_path)
    directory = partition_dir(tmp_path)
    flip_middle(sorted(directory.glob("*.checkpoint"))[-1])
    assert verify(directory, StringIO()) == 0
    values, _ = await values_after_restart(tmp_path)
    assert values == ["2", "3", "4"]  # the older snapshot's x=2, then the log after it

    segment = segments(tmp_path)[-1]
    position, size, base, _count = [b for b in batches(segment) if b[2] < newest][-1]
    segment.write_bytes(segment.read_bytes()[:position] + bytes(size))
    (directory / SYNCED_LENGTHS).unlink()
    out = StringIO()
    assert verify(directory, out) == 1
    with pytest.raises(LogCorruptError, match=f"lies below the newest snapshot \\(offset {newest}\\)") as refused:
        await RaftLog(tmp_path, NODE_ID).open()
    assert str(refused.value) in out.getvalue()


async def test_a_damaged_snapshot_whose_offsets_no_log_holds_stops_start_up(tmp_path):
    """The segments below the only snapshot retired, the snapshot damaged: refused, and verify agrees."""
    from io import StringIO

    from kraftwire.server.raft.tools import verify

    log, _ = await open_log(tmp_path, segment_bytes=200)
    for i in range(8):
        await log.append([(rec.ConfigRecord(resource_type=4, resource_name="", name="x", value=str(i)), None)])[1]
    end = (await log.snapshot()).end_offset
    await log.close()
    files = segments(tmp_path)
    for segment, following in zip(files, files[1:]):
        if int(following.stem) <= end:  # wholly below the snapshot, as retention would retire it
            segment.unlink()
            segment.with_suffix(".index").unlink(missing_ok=True)
    directory = partition_dir(tmp_path)
    assert verify(directory, StringIO()) == 0
    flip_middle(sorted(directory.glob("*.checkpoint"))[-1])
    out = StringIO()
    assert verify(directory, out) == 1
    with pytest.raises(LogCorruptError, match="but no valid snapshot covers the offsets before it") as refused:
        await RaftLog(tmp_path, NODE_ID).open()
    assert str(refused.value) in out.getvalue()
