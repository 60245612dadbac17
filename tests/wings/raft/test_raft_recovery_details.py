"""What recovery writes back and says: a torn first batch leaves an empty segment and a warning with the
bytes it drops, a rebuilt offset index equals the one appends wrote, a batch whose record count
disagrees with its last offset delta is damage, and a log ending before its snapshot names its segment."""
from __future__ import annotations

import asyncio
import struct

import crc32c
import pytest

from kraftwire.codec import records as rec
from kraftwire.codec.log_layout import index_entries
from kraftwire.server.raft import LogCorruptError, RaftLog
from kraftwire.server.raft.log import SYNCED_LENGTHS
from tests.raft_helpers import NODE_ID, batches, open_log, partition_dir, segments

CRC_AT, ATTRIBUTES_AT, COUNT_AT = 17, 21, 57  # in a v2 record batch: crc, what it covers from, records count


def config_record(value: str):
    return rec.ConfigRecord(resource_type=4, resource_name="", name="x", value=value), None


async def restart(data_dir) -> list[int]:
    """Open and close the log once; the offsets it replayed."""
    log = RaftLog(data_dir, NODE_ID)
    await log.open()
    offsets = [offset for offset, _ in log.replay()]
    await log.close()
    return offsets


async def test_a_torn_first_batch_leaves_the_segment_empty_and_says_what_it_dropped(tmp_path, caplog):
    log, _ = await open_log(tmp_path)  # writes one leader-change batch at offset 0
    await log.close()
    segment = segments(tmp_path)[0]
    data = segment.read_bytes()[:-1]  # the file ends inside its only batch: a write that never finished
    segment.write_bytes(data)
    (partition_dir(tmp_path) / SYNCED_LENGTHS).unlink()  # no record: only an unfinished write may be cut
    caplog.set_level("WARNING", logger="kraftwire")
    await restart(tmp_path)
    assert (f"{segment}: torn write at the tail: truncating at byte 0 (offset 0), dropping {len(data)} bytes"
            in caplog.text)
    assert [(position, base) for position, _, base, _ in batches(segment)] == [(0, 0)]  # the new start's batch
    await restart(tmp_path)


async def test_a_rebuilt_offset_index_equals_the_one_appends_wrote(tmp_path):
    log, _ = await open_log(tmp_path, index_interval_bytes=0)
    for i in range(10):
        await log.append([config_record(f"{i}.{j}") for j in range(3)])[1]
    await log.close()
    index = segments(tmp_path)[0].with_suffix(".index")
    written = index.read_bytes()
    assert len(written) >= 8 * 9
    index.unlink()
    log, _ = await open_log(tmp_path, index_interval_bytes=0)
    await log.close()
    assert index.read_bytes()[:len(written)] == written


@pytest.mark.parametrize("more", [-1, 1], ids=["fewer", "more"])
async def test_a_batch_whose_count_disagrees_with_its_last_offset_delta_is_damage(tmp_path, more):
    """Whole and well framed, so no unfinished write: refused even past the fsync'd length, file left alone."""
    log, _ = await open_log(tmp_path)
    await log.append([config_record("kept")])[1]
    await log.close()
    segment = segments(tmp_path)[0]
    data = segment.read_bytes()
    position, size, base, count = batches(segment)[-1]
    # the next offsets, but one record fewer or more than the last offset delta says
    odd = rewritten(data[position:position + size], base_offset=base + count, count=count + more)
    segment.write_bytes(data + odd)
    with pytest.raises(LogCorruptError, match=f"at byte {len(data)} \\(offset 2\\): {count + more} records but last "
                                              f"offset delta {count - 1}; the batch is whole"):
        await RaftLog(tmp_path, NODE_ID).open()
    assert segment.read_bytes() == data + odd


async def test_a_log_ending_before_its_snapshot_names_its_last_segment(tmp_path):
    log, _ = await open_log(tmp_path, segment_bytes=400)
    for i in range(12):
        await log.append([config_record(str(i))])[1]
    snapshot = await log.snapshot()
    await log.close()
    assert len(segments(tmp_path)) > 2
    segment = segments(tmp_path)[-1]
    position, *_ = batches(segment)[1]
    segment.write_bytes(segment.read_bytes()[:position])  # cut at a batch boundary, below the snapshot
    (partition_dir(tmp_path) / SYNCED_LENGTHS).unlink()
    with pytest.raises(LogCorruptError) as refused:
        await RaftLog(tmp_path, NODE_ID).open()
    assert str(refused.value).startswith(f"{segment}: the log ends at offset {int(segment.stem) + 1}, before the "
                                         f"end of the newest snapshot ({snapshot.end_offset})")


def rewritten(batch: bytes, *, base_offset=None, count=None, epoch=None, attributes=None) -> bytes:
    """A copy of a v2 batch with header fields changed and its CRC made right again."""
    out = bytearray(batch)
    for value, fmt, at in ((base_offset, ">q", 0), (epoch, ">i", 12), (attributes, ">h", ATTRIBUTES_AT),
                           (count, ">i", COUNT_AT)):
        if value is not None:
            struct.pack_into(fmt, out, at, value)
    struct.pack_into(">I", out, CRC_AT, crc32c.crc32c(bytes(out[ATTRIBUTES_AT:])))
    return bytes(out)


async def write_legacy(data_dir, values, epoch: int = 1) -> tuple[bytes, list]:
    """One-record batches at ``epoch`` (a start each), without the fsync'd lengths (a log from before they
    were kept): damage at the tail is told from damage in the middle by whether a valid batch follows it."""
    for _ in range(epoch - 1):
        log, _ = await open_log(data_dir)
        await log.close()
    log, _ = await open_log(data_dir)
    for value in values:
        await log.append([config_record(value)])[1]
    await log.close()
    (partition_dir(data_dir) / SYNCED_LENGTHS).unlink()
    segment = segments(data_dir)[-1]
    return segment.read_bytes(), batches(segment)


async def test_without_fsynced_lengths_damage_followed_by_a_valid_batch_is_in_the_middle(tmp_path):
    """At epoch 2 the byte before each batch's magic byte is 0x02 too: the search must not skip the magic."""
    data, found = await write_legacy(tmp_path, ["0", "1", "2"], epoch=2)
    middle, last = found[-2], found[-1]
    damaged = bytearray(data)
    damaged[middle[0] + middle[1] - 1] ^= 0x10
    segments(tmp_path)[-1].write_bytes(bytes(damaged))
    with pytest.raises(LogCorruptError, match=f"a valid batch follows at byte {last[0]}, so this is damage in the "
                                              f"middle of the log"):
        await RaftLog(tmp_path, NODE_ID).open()


async def test_without_fsynced_lengths_damage_followed_by_no_valid_batch_is_a_torn_write(tmp_path, caplog):
    """A last batch of zeros (never reached the disk); what follows holds magic bytes (0x02) that start no
    valid batch, nor any batch at all."""
    data, found = await write_legacy(tmp_path, ["0", "1"])
    position, size, _, _ = found[-1]
    damaged = bytearray(data)
    damaged[position:position + size] = bytes(size)
    junk = bytes(20) + b"\x02" * 40  # a "batch" there would start at offset 0, below the damaged one
    segment = segments(tmp_path)[-1]
    segment.write_bytes(bytes(damaged) + junk)
    caplog.set_level("WARNING", logger="kraftwire")
    assert await restart(tmp_path) == [1]
    assert (f"truncating at byte {position} (offset 2), dropping {len(data) + len(junk) - position} bytes"
            in caplog.text)
    assert [p for p, *_ in batches(segment)] == [p for p, *_ in found[:-1]] + [position]


async def test_without_fsynced_lengths_a_flipped_bit_in_the_last_batch_stops_start_up(tmp_path):
    """Without a record of the fsync'd length nothing says the last batch was never acknowledged: a whole
    batch with wrong bytes is refused, not cut."""
    data, found = await write_legacy(tmp_path, ["0", "1"])
    position, size, base, _ = found[-1]
    damaged = bytearray(data)
    damaged[position + size - 1] ^= 0x10
    segment = segments(tmp_path)[-1]
    segment.write_bytes(bytes(damaged))
    with pytest.raises(LogCorruptError, match=f"at byte {position} \\(offset {base}\\): CRC mismatch.*no durable "
                                              f"record of the fsync'd length"):
        await RaftLog(tmp_path, NODE_ID).open()
    assert segment.read_bytes() == bytes(damaged)


@pytest.mark.parametrize("attributes", [0x08, 0x40], ids=["log-append-time", "delete-horizon"])
async def test_an_epoch_change_at_a_data_batch_is_damage_whatever_its_attribute_bits(tmp_path, attributes):
    data, found = await write_legacy(tmp_path, ["0"])
    position, size, base, _ = found[-1]
    epoch = struct.unpack_from(">i", data, position + 12)[0]
    raised = rewritten(data[position:position + size], base_offset=base + 1, epoch=epoch + 1, attributes=attributes)
    segment = segments(tmp_path)[-1]
    segment.write_bytes(data + raised)
    with pytest.raises(LogCorruptError, match=f"epoch {epoch + 1} after epoch {epoch} without a leader change"):
        await RaftLog(tmp_path, NODE_ID).open()


async def test_without_its_quorum_state_a_log_starts_above_the_epoch_of_its_last_batch(tmp_path):
    for _ in range(3):
        log, _ = await open_log(tmp_path)
        await log.close()
    (partition_dir(tmp_path) / "quorum-state").unlink()
    log, _ = await open_log(tmp_path)
    assert log.epoch == 4
    await log.close()


async def test_without_its_quorum_state_an_empty_log_starts_at_epoch_1(tmp_path):
    log, _ = await open_log(tmp_path)
    await log.close()
    segment = segments(tmp_path)[0]
    segment.write_bytes(b"")
    for name in ("quorum-state", SYNCED_LENGTHS):
        (partition_dir(tmp_path) / name).unlink()
    log, _ = await open_log(tmp_path)
    assert log.epoch == 1
    await log.close()


async def test_a_segment_named_below_where_the_one_before_it_ends_stops_start_up(tmp_path):
    log, _ = await open_log(tmp_path, segment_bytes=400)
    for i in range(12):
        await log.append([config_record(str(i))])[1]
    await log.close()
    last = segments(tmp_path)[-1]
    expected = int(last.stem)
    renamed = last.with_name(f"{expected - 1:020d}.log")
    last.rename(renamed)
    last.with_suffix(".index").rename(renamed.with_suffix(".index"))
    with pytest.raises(LogCorruptError, match=f"{renamed}: starts at offset {expected - 1}, but the segment before "
                                              f"it ends at offset {expected}: records are missing"):
        await RaftLog(tmp_path, NODE_ID).open()


async def write_segments(data_dir, count: int) -> list:
    """``count`` one-record batches in 400-byte segments; the segment files."""
    log, _ = await open_log(data_dir, segment_bytes=400)
    for i in range(count):
        await log.append([config_record(str(i))])[1]
    await log.close()
    return segments(data_dir)


async def test_a_missing_middle_segment_stops_start_up(tmp_path):
    _, middle, after, *_ = await write_segments(tmp_path, 12)
    middle.unlink()
    with pytest.raises(LogCorruptError, match=f"{after}: starts at offset {int(after.stem)}, but the segment before "
                                              f"it ends at offset {int(middle.stem)}: records are missing"):
        await RaftLog(tmp_path, NODE_ID).open()


async def test_without_fsynced_lengths_damage_at_the_end_of_an_older_segment_stops_start_up(tmp_path):
    first, *_ = await write_segments(tmp_path, 12)
    (partition_dir(tmp_path) / SYNCED_LENGTHS).unlink()
    data = bytearray(first.read_bytes())
    data[-1] ^= 0x10
    first.write_bytes(bytes(data))
    with pytest.raises(LogCorruptError, match="later segments follow, so this is not a torn write"):
        await RaftLog(tmp_path, NODE_ID).open()
    assert first.read_bytes() == bytes(data)


async def test_the_open_that_rebuilds_an_index_says_so_and_only_that_one(tmp_path, caplog):
    first, *_ = await write_segments(tmp_path, 12)
    first.with_suffix(".index").unlink()
    caplog.set_level("INFO", logger="kraftwire")
    said = []
    for _ in range(2):
        caplog.clear()
        await restart(tmp_path)
        said.append(f"{first.with_suffix('.index').name}: rebuilt the offset index" in caplog.text)
    assert said == [True, False]


async def test_a_torn_tail_of_the_last_of_more_than_256_segments_is_cut_away(tmp_path):
    """Which segment is the last compares by value (above 256 they are not cached small ints)."""
    log, _ = await open_log(tmp_path, segment_bytes=1)  # every batch starts a new segment
    await asyncio.gather(*(log.append([config_record(str(i))])[1] for i in range(260)))  # fsyncs shared
    await log.close()
    last = segments(tmp_path)[-1]
    assert len(segments(tmp_path)) > 257
    data = last.read_bytes()
    last.write_bytes(data + data[:-1])  # a second batch, torn: past the fsync'd length
    assert (await restart(tmp_path))[-1] == 260


async def test_an_interrupted_snapshot_write_is_deleted_at_start(tmp_path, caplog):
    log, _ = await open_log(tmp_path)
    await log.close()
    part = partition_dir(tmp_path) / "00000000000000000000-0000000001-0123456789abcdef.checkpoint.part"
    part.write_bytes(b"half a snapshot")
    caplog.set_level("INFO", logger="kraftwire")
    await restart(tmp_path)
    assert not part.exists() and f"deleted the interrupted snapshot {part.name}" in caplog.text


async def test_a_torn_tail_of_the_last_of_two_segments_is_cut_away(tmp_path):
    first, last = await write_segments(tmp_path, 6)
    data = last.read_bytes()
    position, size, _base, _count = batches(last)[-1]
    last.write_bytes(data + data[position:position + size - 1])  # one more batch, torn: past the fsync'd length
    assert (await restart(tmp_path))[-1] == 6  # the torn batch gone, and no refusal


async def test_a_log_is_created_in_a_data_directory_that_does_not_exist_yet(tmp_path):
    log, _ = await open_log(tmp_path / "new" / "data")
    await log.close()
    assert len(segments(tmp_path / "new" / "data")) == 1


async def test_an_index_missing_its_last_entries_is_rebuilt(tmp_path):
    log, _ = await open_log(tmp_path, index_interval_bytes=0)
    for i in range(5):
        await log.append([config_record(str(i))])[1]
    await log.close()
    index = segments(tmp_path)[0].with_suffix(".index")
    written = index.read_bytes()
    index.write_bytes(written[:-8])  # the last entry never reached the disk
    log, _ = await open_log(tmp_path, index_interval_bytes=0)
    await log.close()
    assert index.read_bytes()[:len(written)] == written


async def test_without_fsynced_lengths_a_valid_batch_after_damage_at_offset_0_is_damage_in_the_middle(tmp_path):
    data, found = await write_legacy(tmp_path, [])
    (position, size, base, _), = found
    assert (position, base) == (0, 0)
    damaged = bytearray(data)
    damaged[size - 1] ^= 0x10
    segments(tmp_path)[-1].write_bytes(bytes(damaged) + data)  # the same batch again, intact
    with pytest.raises(LogCorruptError, match=f"a valid batch follows at byte {size}"):
        await RaftLog(tmp_path, NODE_ID).open()


async def test_without_fsynced_lengths_a_batch_repeating_earlier_offsets_after_tail_damage_is_no_proof(tmp_path):
    """Only a valid batch at or past the damaged batch's offset shows the damage is in the middle."""
    data, found = await write_legacy(tmp_path, ["0", "1", "2"])
    position, size, _, _ = found[-1]
    earlier = found[1]
    damaged = bytearray(data)
    damaged[position:position + size] = bytes(size)  # never reached the disk
    segment = segments(tmp_path)[-1]
    segment.write_bytes(bytes(damaged) + data[earlier[0]:earlier[0] + earlier[1]])
    assert await restart(tmp_path) == [1, 2]


async def test_an_index_with_entries_past_the_recovered_end_is_rewritten(tmp_path):
    log, _ = await open_log(tmp_path, index_interval_bytes=0)
    for i in range(5):
        await log.append([config_record(str(i))])[1]
    await log.close()
    segment = segments(tmp_path)[0]
    position, *_ = batches(segment)[3]
    segment.write_bytes(segment.read_bytes()[:position])  # the last batches gone, their index entries not
    (partition_dir(tmp_path) / SYNCED_LENGTHS).unlink()
    log, _ = await open_log(tmp_path, index_interval_bytes=0)
    await log.close()
    entries = index_entries(segment.with_suffix(".index").read_bytes())
    assert entries and all(at < segment.stat().st_size for _, at in entries)
    assert [relative for relative, _ in entries] == sorted({relative for relative, _ in entries})
