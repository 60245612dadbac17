"""A partition log on a full file system (a small tmpfs the test mounts): the append that cannot be
written raises KAFKA_STORAGE_ERROR (the broker takes the directory offline), no part of the batch is
left to be served, and once space is back the log reopens with every batch written before."""
from __future__ import annotations

import pytest

from kraftwire.codec import ErrorCode
from kraftwire.server.storage import LogConfig, LogError
from tests.wings.raft.test_disk_full import fill, small_fs  # noqa: F401 (small_fs is a fixture)
from tests.wings.storage.test_partition_log import NOW, batch_headers, make_batch, open_log, read_back


def test_a_full_disk_refuses_the_append_and_serves_no_half_batch(small_fs):  # noqa: F811
    log = open_log(small_fs, LogConfig(index_interval_bytes=1))
    for _ in range(3):
        log.append_as_leader(make_batch(5, value_size=500), 0, NOW)
    before = batch_headers(log)
    fill(small_fs)
    with pytest.raises(LogError) as full:
        for _ in range(50):  # the page cache may take a batch or two before the file system says so
            log.append_as_leader(make_batch(20, value_size=4000), 0, NOW)
    assert full.value.code == ErrorCode.KAFKA_STORAGE_ERROR
    written = batch_headers(log)
    assert written[:3] == before and log.log_end_offset == written[-1][1] + 1
    assert log.active_segment.size == log.active_segment.path.stat().st_size
    assert [r[0] for r in read_back(log.read(0, 1 << 24).read())] == list(range(log.log_end_offset))
    (small_fs / "filler").unlink()
    log.close()
    again = open_log(small_fs, LogConfig(index_interval_bytes=1), recovery_point=None)
    assert batch_headers(again) == written
