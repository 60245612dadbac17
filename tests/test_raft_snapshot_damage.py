"""Damage at the tail of the log is a torn write only above the newest snapshot: below it, the batch was
committed (a snapshot covers it), so start-up refuses instead of cutting it away."""
from __future__ import annotations

import pytest

from kraftwire.codec import records as rec
from kraftwire.server.raft import LogCorruptError, RaftLog
from tests.raft_helpers import NODE_ID, batches, open_log, segments


async def test_damage_at_the_tail_below_the_newest_snapshot_stops_start_up(tmp_path):
    log, _ = await open_log(tmp_path)
    for i in range(3):
        await log.append([(rec.ConfigRecord(resource_type=4, resource_name="", name="x", value=str(i)), None)])[1]
    await log.snapshot()
    await log.close()
    segment = segments(tmp_path)[-1]
    position, size, _base, _count = batches(segment)[-1]
    data = bytearray(segment.read_bytes())
    data[position + size - 1] ^= 0x10  # the last batch's CRC no longer matches
    segment.write_bytes(bytes(data))
    with pytest.raises(LogCorruptError, match="lies below the newest snapshot"):
        await RaftLog(tmp_path, NODE_ID).open()
    assert segment.read_bytes() == bytes(data)  # nothing was cut away
