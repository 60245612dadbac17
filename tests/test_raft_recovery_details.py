"""What recovery writes back and says: a torn first batch leaves an empty segment and a warning with the
bytes it drops, a rebuilt offset index equals the one appends wrote, a batch whose record count
disagrees with its last offset delta is damage, and a log ending before its snapshot names its segment."""
from __future__ import annotations

import struct

import crc32c
import pytest

from kraftwire.codec import records as rec
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
    data = bytearray(segment.read_bytes())
    data[-1] ^= 0x10
    segment.write_bytes(bytes(data))
    (partition_dir(tmp_path) / SYNCED_LENGTHS).unlink()  # a log from before fsync'd lengths were kept
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


async def test_a_batch_whose_count_disagrees_with_its_last_offset_delta_is_damage(tmp_path, caplog):
    log, _ = await open_log(tmp_path)
    await log.append([config_record("kept")])[1]
    await log.close()
    segment = segments(tmp_path)[0]
    data = segment.read_bytes()
    position, size, base, count = batches(segment)[-1]
    odd = bytearray(data[position:position + size])
    struct.pack_into(">q", odd, 0, base + count)  # the next offsets...
    struct.pack_into(">i", odd, COUNT_AT, count - 1)  # ...but one record fewer than the offset delta says
    struct.pack_into(">I", odd, CRC_AT, crc32c.crc32c(bytes(odd[ATTRIBUTES_AT:])))
    segment.write_bytes(data + bytes(odd))  # past the fsync'd length: a torn write, cut away
    caplog.set_level("WARNING", logger="kraftwire")
    offsets = await restart(tmp_path)
    assert (f"{segment}: torn write at the tail: truncating at byte {len(data)} (offset 2), dropping {size} bytes"
            in caplog.text)
    assert [(b, c) for _, _, b, c in batches(segment)] == [(0, 1), (1, 1), (2, 1)]  # the restart's batch at 2
    assert offsets == [1]


async def test_a_log_ending_before_its_snapshot_names_its_last_segment(tmp_path):
    log, _ = await open_log(tmp_path)
    for i in range(3):
        await log.append([config_record(str(i))])[1]
    snapshot = await log.snapshot()
    await log.close()
    segment = segments(tmp_path)[-1]
    position, *_ = batches(segment)[2]
    segment.write_bytes(segment.read_bytes()[:position])  # cut at a batch boundary, below the snapshot
    (partition_dir(tmp_path) / SYNCED_LENGTHS).unlink()
    with pytest.raises(LogCorruptError) as refused:
        await RaftLog(tmp_path, NODE_ID).open()
    assert str(refused.value).startswith(f"{segment}: the log ends at offset 2, before the end of the newest "
                                         f"snapshot ({snapshot.end_offset})")
