"""PartitionLog on real files: appends (every codec, as kafka-python's producer encodes them), reads,
rolls, retention, DeleteRecords, truncation, leader epochs, ListOffsets, reopening, followers.

The helpers here (``make_batch``, ``open_log``, ``read_back``) are shared by the other storage tests."""
from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from kraftwire.codec import ErrorCode
from kraftwire.server.storage import (EARLIEST_LOCAL_TIMESTAMP, EARLIEST_TIMESTAMP, LATEST_TIERED_TIMESTAMP,
                                      LATEST_TIMESTAMP, MAX_TIMESTAMP, LogConfig, LogError, PartitionLog,
                                      TimestampAndOffset, TimestampType, UnexpectedAppendOffset)

TOPIC_ID = uuid.UUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8")
NOW = 1_700_000_000_000
CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def make_batch(count: int = 3, codec: int = 0, timestamp: int = NOW, producer_id: int = -1, producer_epoch: int = -1,
               sequence: int = -1, value_size: int = 50, keys: bool = True, transactional: bool = False) -> bytes:
    """A v2 batch as kafka-python's producer builds it (base offset 0, CRC-32C, compressed with ``codec``)."""
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=transactional,
                                        producer_id=producer_id, producer_epoch=producer_epoch,
                                        base_sequence=sequence, batch_size=1 << 24)
    for i in range(count):
        value = (b"%d-" % i) * (value_size // 2 + 1)
        builder.append(i, timestamp=timestamp + i, key=(b"key-%d" % i) if keys else None,
                       value=value[:value_size], headers=[("h", b"x")] if i % 2 else [])
    return bytes(builder.build())


def open_log(path: Path, config: LogConfig | None = None, now: int = NOW, recovery_point: int | None = None,
             log_start_offset: int | None = None) -> PartitionLog:
    return PartitionLog.open(path / "topic-0", TOPIC_ID, config or LogConfig(), now, recovery_point,
                             log_start_offset)


def read_back(data: bytes) -> list[tuple[int, int, int, bytes | None, bytes | None]]:
    """(offset, timestamp, timestamp type, key, value) of every record, decoded by kafka-python, which also
    checks each batch's CRC."""
    records = MemoryRecords(data)
    out = []
    while records.has_next():
        batch = records.next_batch()
        assert batch.validate_crc()
        for record in batch:
            out.append((record.offset, record.timestamp, record.timestamp_type, record.key, record.value))
    return out


def batch_headers(log: PartitionLog) -> list[tuple[int, int, int]]:
    """(base offset, last offset, partition leader epoch) of every batch in the log, from the files."""
    return [(h.base_offset, h.last_offset, h.partition_leader_epoch) for _, _, h in log.batches()]


def test_append_and_read_every_codec(tmp_path):
    log = open_log(tmp_path)
    for name, codec in CODECS.items():
        info = log.append_as_leader(make_batch(4, codec), leader_epoch=5, now_ms=NOW)
        assert info.record_count == 4 and not info.duplicate, name
    assert log.log_end_offset == 20
    records = read_back(log.read(0, 1 << 20).read())
    assert [r[0] for r in records] == list(range(20))
    assert [r[3] for r in records[:4]] == [b"key-0", b"key-1", b"key-2", b"key-3"]
    assert batch_headers(log) == [(i * 4, i * 4 + 3, 5) for i in range(5)]
    # kept compressed as produced: the stored batch is the produced one, but for the offsets, epoch, CRC
    stored = log.read(8, 1 << 20, min_one_batch=True)
    assert stored.first_offset == 8
    assert MemoryRecords(stored.read()).next_batch().compression_type == CODECS["snappy"]


def test_read_returns_whole_batches_within_limits(tmp_path):
    log = open_log(tmp_path)
    for _ in range(5):
        log.append_as_leader(make_batch(10, value_size=100), 0, NOW)
    one = log.read(0, 1, min_one_batch=True)
    assert (one.first_offset, one.next_offset) == (0, 10)
    assert log.read(0, 1, min_one_batch=False).length == 0
    middle = log.read(15, 1 << 20)
    assert (middle.first_offset, middle.next_offset) == (10, 50)  # from the batch holding offset 15
    bounded = log.read(0, 1 << 20, max_offset=30)
    assert bounded.next_offset == 30 and read_back(bounded.read())[-1][0] == 29
    assert log.read(30, 1 << 20, max_offset=30).length == 0
    two = log.read(0, one.length * 2)
    assert (two.next_offset, two.length) == (20, one.length * 2)
    at_end = log.read(50, 100)
    assert at_end.length == 0 and at_end.read() == b""
    with pytest.raises(LogError) as beyond:
        log.read(51, 100)
    assert beyond.value.code == ErrorCode.OFFSET_OUT_OF_RANGE
    # the slice names the file so a fetch can sendfile it
    fd = os.open(middle.path, os.O_RDONLY)
    try:
        assert os.pread(fd, middle.length, middle.position) == middle.read()
    finally:
        os.close(fd)
    assert os.pread(middle.fileno(), middle.length, middle.position) == middle.read()


def test_log_append_time_is_stamped_by_the_leader(tmp_path):
    log = open_log(tmp_path, LogConfig(message_timestamp_type=TimestampType.LOG_APPEND_TIME))
    info = log.append_as_leader(make_batch(3, CODECS["lz4"], timestamp=5), 2, NOW + 7)
    assert info.log_append_time == NOW + 7 and info.max_timestamp == NOW + 7
    records = read_back(log.read(0, 1 << 20).read())
    assert {(r[1], r[2]) for r in records} == {(NOW + 7, 1)}  # kafka-python: type 1 is LogAppendTime


def test_create_time_batch_max_timestamp_is_the_records_max(tmp_path):
    log = open_log(tmp_path)
    info = log.append_as_leader(make_batch(3, timestamp=NOW - 100), 0, NOW)
    assert (info.max_timestamp, info.log_append_time) == (NOW - 98, -1)


def test_roll_on_segment_bytes_ms_and_full_index(tmp_path):
    batch = make_batch(5, value_size=200)
    log = open_log(tmp_path / "bytes", LogConfig(segment_bytes=len(batch) * 3))
    for _ in range(7):
        log.append_as_leader(batch, 0, NOW)
    assert [s.base_offset for s in log.segments] == [0, 15, 30]
    assert sorted(p.name for p in (tmp_path / "bytes" / "topic-0").glob("*.log")) == [
        "00000000000000000000.log", "00000000000000000015.log", "00000000000000000030.log"]

    log = open_log(tmp_path / "ms", LogConfig(segment_ms=1000))
    log.append_as_leader(make_batch(2, timestamp=NOW), 0, NOW)
    log.append_as_leader(make_batch(2, timestamp=NOW + 1000), 0, NOW + 1000)
    assert len(log.segments) == 1
    log.append_as_leader(make_batch(2, timestamp=NOW + 1001), 0, NOW + 1001)
    assert [s.base_offset for s in log.segments] == [0, 4]

    log = open_log(tmp_path / "index", LogConfig(segment_index_bytes=16, index_interval_bytes=1))
    for _ in range(5):
        log.append_as_leader(make_batch(1), 0, NOW)
    assert all(s.offset_index.entries <= 2 for s in log.segments) and len(log.segments) >= 2
    assert log.read(3, 1 << 20).first_offset == 3


def test_a_batch_larger_than_a_segment_is_refused(tmp_path):
    batch = make_batch(5, value_size=300)
    log = open_log(tmp_path, LogConfig(segment_bytes=len(batch) - 1))
    with pytest.raises(LogError) as refused:
        log.append_as_leader(batch, 0, NOW)
    assert refused.value.code == ErrorCode.RECORD_LIST_TOO_LARGE and log.log_end_offset == 0


def test_leader_epochs_and_end_offset_for_epoch(tmp_path):
    log = open_log(tmp_path)
    for epoch, count in ((1, 3), (1, 2), (3, 4), (6, 1)):
        log.append_as_leader(make_batch(count), epoch, NOW)
    assert [tuple(e) for e in log.leader_epoch_cache] == [(1, 0), (3, 5), (6, 9)]
    assert (tmp_path / "topic-0" / "leader-epoch-checkpoint").read_text() == "0\n3\n1 0\n3 5\n6 9\n"
    assert log.latest_epoch == 6
    assert log.end_offset_for_epoch(-1) == (-1, -1)
    assert log.end_offset_for_epoch(0) == (0, 0)  # below the first epoch: the first epoch's start
    assert log.end_offset_for_epoch(1) == (1, 5)
    assert log.end_offset_for_epoch(2) == (1, 5)  # an epoch no leader wrote: the one before it ends there
    assert log.end_offset_for_epoch(3) == (3, 9)
    assert log.end_offset_for_epoch(6) == (6, 10)  # the latest epoch ends at the log end
    assert log.end_offset_for_epoch(7) == (-1, -1)
    # a new leader's epoch starts at its log end before it writes anything
    log.assign_epoch_start_offset(8, log.log_end_offset)
    assert log.end_offset_for_epoch(6) == (6, 10) and log.end_offset_for_epoch(8) == (8, 10)
    assert log.latest_epoch == 8 and log.offset_for_timestamp(LATEST_TIMESTAMP).leader_epoch == 8
    log.append_as_leader(make_batch(1), 8, NOW)
    assert [tuple(e) for e in log.leader_epoch_cache][-1] == (8, 10)


def test_offset_for_timestamp(tmp_path):
    log = open_log(tmp_path, LogConfig(segment_bytes=400, index_interval_bytes=1))
    for i, codec in enumerate([0, 1, 2, 3, 4, 0]):
        log.append_as_leader(make_batch(3, codec, timestamp=NOW + i * 100), i, NOW + 500)
    assert len(log.segments) > 1
    assert log.offset_for_timestamp(EARLIEST_TIMESTAMP) == TimestampAndOffset(-1, 0, 0)
    assert log.offset_for_timestamp(EARLIEST_LOCAL_TIMESTAMP) == TimestampAndOffset(-1, 0, 0)
    assert log.offset_for_timestamp(LATEST_TIMESTAMP) == TimestampAndOffset(-1, 18, 5)
    assert log.offset_for_timestamp(LATEST_TIERED_TIMESTAMP) == TimestampAndOffset(-1, -1, -1)
    assert log.offset_for_timestamp(MAX_TIMESTAMP) == TimestampAndOffset(NOW + 502, 17, 5)
    assert log.offset_for_timestamp(NOW + 201) == TimestampAndOffset(NOW + 201, 7, 2)
    assert log.offset_for_timestamp(NOW + 203) == TimestampAndOffset(NOW + 300, 9, 3)
    assert log.offset_for_timestamp(0) == TimestampAndOffset(NOW, 0, 0)
    assert log.offset_for_timestamp(NOW + 503) is None
    log.update_high_watermark(18)
    log.delete_records_before(8)
    assert log.offset_for_timestamp(NOW) == TimestampAndOffset(NOW + 202, 8, 2)
    assert log.offset_for_timestamp(EARLIEST_TIMESTAMP) == TimestampAndOffset(-1, 8, 2)


def test_delete_records_before_raises_the_log_start(tmp_path):
    log = open_log(tmp_path, LogConfig(segment_bytes=600))
    for _ in range(8):
        log.append_as_leader(make_batch(3), 0, NOW)
    segments = len(log.segments)
    assert segments > 2
    with pytest.raises(LogError) as above_hw:
        log.delete_records_before(5)
    assert above_hw.value.code == ErrorCode.OFFSET_OUT_OF_RANGE
    log.update_high_watermark(24)
    second_base = log.segments[1].base_offset
    assert log.delete_records_before(second_base + 1) == second_base + 1
    assert log.log_start_offset == second_base + 1 and log.segments[0].base_offset == second_base
    assert not (tmp_path / "topic-0" / "00000000000000000000.log").exists()
    with pytest.raises(LogError) as below:
        log.read(second_base, 100)
    assert below.value.code == ErrorCode.OFFSET_OUT_OF_RANGE
    assert log.read(second_base + 1, 1 << 20).first_offset == second_base  # the batch holding it
    assert log.delete_records_before(3) == second_base + 1  # never goes down


def test_retention_by_bytes_and_time_deletes_whole_segments_below_the_hw(tmp_path):
    batch = make_batch(2, value_size=200)
    config = LogConfig(segment_bytes=len(batch) * 2, retention_bytes=len(batch) * 3)
    log = open_log(tmp_path / "bytes", config)
    for _ in range(6):
        log.append_as_leader(batch, 0, NOW)
    assert log.enforce_retention(NOW) == 0  # nothing is below the HW yet
    log.update_high_watermark(log.log_end_offset)
    assert log.enforce_retention(NOW) == 1  # 3 batches too many: one segment of 2 goes, not a second
    assert log.log_start_offset == 4 and log.size_bytes == len(batch) * 4
    # the deleted files linger as .deleted for file.delete.delay.ms
    directory = tmp_path / "bytes" / "topic-0"
    assert (directory / "00000000000000000000.log.deleted").exists()
    log.enforce_retention(NOW + config.file_delete_delay_ms)
    assert not list(directory.glob("*.deleted"))

    log = open_log(tmp_path / "time", LogConfig(segment_bytes=len(batch) * 2, retention_ms=1000))
    for i in range(4):
        log.append_as_leader(make_batch(2, value_size=200, timestamp=NOW + i * 1000), 0, NOW + i * 1000)
    log.update_high_watermark(log.log_end_offset)
    assert log.enforce_retention(NOW + 3000) == 1  # the first segment's newest record is 2000 ms old
    assert log.log_start_offset == 4
    # every segment expired: the active one goes too, after an empty one is rolled
    assert log.enforce_retention(NOW + 10_000) == 1
    assert (log.log_start_offset, log.log_end_offset, log.size_bytes) == (8, 8, 0)
    log.append_as_leader(make_batch(1, timestamp=NOW + 10_000), 0, NOW + 10_000)
    assert log.read(8, 1000).first_offset == 8


def test_compact_policy_keeps_everything_and_needs_keys(tmp_path):
    log = open_log(tmp_path, LogConfig(cleanup_policy="compact", retention_ms=1, segment_bytes=300))
    for _ in range(4):
        log.append_as_leader(make_batch(2), 0, NOW)
    log.update_high_watermark(log.log_end_offset)
    assert log.enforce_retention(NOW + 10**9) == 0
    with pytest.raises(LogError) as keyless:
        log.append_as_leader(make_batch(2, keys=False), 0, NOW)
    assert keyless.value.code == ErrorCode.INVALID_RECORD and len(keyless.value.record_errors) == 2


def test_truncate_to_and_truncate_fully(tmp_path):
    log = open_log(tmp_path, LogConfig(segment_bytes=500))
    for epoch in (1, 1, 2, 2, 3, 3):
        log.append_as_leader(make_batch(3), epoch, NOW)
    log.update_high_watermark(18)
    assert log.truncate_to(18) is False
    assert log.truncate_to(7)  # inside the batch 6..8: it goes whole
    assert log.log_end_offset == 6 and log.high_watermark == 6
    assert [tuple(e) for e in log.leader_epoch_cache] == [(1, 0), (2, 6)][:1]
    assert batch_headers(log)[-1] == (3, 5, 1)
    assert all(s.base_offset <= 6 for s in log.segments)
    log.append_as_leader(make_batch(2), 4, NOW)
    assert batch_headers(log)[-1] == (6, 7, 4)
    log.truncate_fully_and_start_at(100)
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (100, 100, 100)
    assert log.leader_epoch_cache == () and [s.base_offset for s in log.segments] == [100]
    assert sorted(p.name for p in (tmp_path / "topic-0").glob("*.log")) == ["00000000000000000100.log"]
    log.append_as_leader(make_batch(1), 5, NOW)
    assert log.read(100, 100).first_offset == 100


def test_reopen_keeps_offsets_epochs_indexes_and_producers(tmp_path):
    config = LogConfig(segment_bytes=800, index_interval_bytes=100)
    log = open_log(tmp_path, config)
    for seq in range(0, 30, 3):
        log.append_as_leader(make_batch(3, seq % 5, producer_id=9, producer_epoch=0, sequence=seq), seq // 10, NOW)
    log.update_high_watermark(30)
    log.delete_records_before(4)
    before = (batch_headers(log), log.leader_epoch_cache, [s.offset_index.entries for s in log.segments])
    log.close()
    again = open_log(tmp_path, config, recovery_point=30, log_start_offset=4)
    assert (batch_headers(again), again.leader_epoch_cache,
            [s.offset_index.entries for s in again.segments]) == before
    assert (again.log_start_offset, again.log_end_offset, again.recovery_point) == (4, 30, 30)
    duplicate = again.append_as_leader(make_batch(3, producer_id=9, producer_epoch=0, sequence=27), 3, NOW)
    assert duplicate.duplicate and (duplicate.first_offset, duplicate.last_offset) == (27, 29)
    assert again.offset_for_timestamp(NOW + 1) == TimestampAndOffset(NOW + 1, 4, 0)


def test_partition_metadata_names_the_topic_id(tmp_path):
    open_log(tmp_path).close()
    assert (tmp_path / "topic-0" / "partition.metadata").read_text() == (
        "version: 0\ntopic_id: a6e4EJ2tEdGAtADAT9QwyA\n")
    with pytest.raises(LogError) as other:
        PartitionLog.open(tmp_path / "topic-0", uuid.uuid4(), LogConfig(), NOW, None, None)
    assert other.value.code == ErrorCode.INCONSISTENT_TOPIC_ID


def test_follower_copies_the_leaders_bytes(tmp_path):
    leader = open_log(tmp_path / "leader", LogConfig(segment_bytes=700))
    for epoch, codec in zip((1, 1, 2, 2, 2), (0, 1, 2, 3, 4)):
        leader.append_as_leader(make_batch(4, codec, producer_id=3, producer_epoch=0, sequence=4 * codec), epoch, NOW)
    follower = open_log(tmp_path / "follower", LogConfig(segment_bytes=700))
    offset = 0
    while offset < leader.log_end_offset:
        chunk = leader.read(offset, 300)
        info = follower.append_as_follower(chunk.read(), NOW)
        assert info.first_offset == offset
        offset = chunk.next_offset
    assert batch_headers(follower) == batch_headers(leader)
    assert follower.read(0, 1 << 20).read() == b"".join(
        s.read_bytes(0, s.size) for s in leader.segments)[:follower.read(0, 1 << 20).length]
    assert follower.leader_epoch_cache == leader.leader_epoch_cache
    assert follower.producers.producers[3].last_seq == leader.producers.producers[3].last_seq
    with pytest.raises(UnexpectedAppendOffset):
        follower.append_as_follower(leader.read(0, 1 << 20).read(), NOW)
    # batches of an epoch above the fetcher's are not appended (KAFKA-18723)
    fresh = open_log(tmp_path / "fresh")
    assert fresh.append_as_follower(leader.read(0, 1 << 20).read(), NOW, leader_epoch=1).last_offset == 7


def test_flush_policy_moves_the_recovery_point(tmp_path):
    log = open_log(tmp_path / "default")  # Kafka's default: no fsync per write
    log.append_as_leader(make_batch(3), 0, NOW)
    assert log.recovery_point == 0
    assert log.maybe_flush(NOW + 10**9) is False  # flush.ms defaults to never
    log.flush()
    assert log.recovery_point == 3
    every = open_log(tmp_path / "every", LogConfig(flush_messages=5))
    every.append_as_leader(make_batch(3), 0, NOW)
    assert every.recovery_point == 0
    every.append_as_leader(make_batch(3), 0, NOW)
    assert every.recovery_point == 6
    timed = open_log(tmp_path / "timed", LogConfig(flush_ms=1000), now=NOW)
    timed.append_as_leader(make_batch(3), 0, NOW)
    assert timed.maybe_flush(NOW + 999) is False and timed.recovery_point == 0
    assert timed.maybe_flush(NOW + 1000) is True and timed.recovery_point == 3
    assert timed.maybe_flush(NOW + 5000) is False  # nothing new to flush
    rolled = open_log(tmp_path / "rolled", LogConfig(segment_bytes=400))
    for _ in range(3):
        rolled.append_as_leader(make_batch(3), 0, NOW)
    assert rolled.recovery_point == rolled.segments[-1].base_offset > 0  # a roll flushes the old segment


def test_a_slice_outlives_the_deletion_of_its_segment(tmp_path):
    log = open_log(tmp_path, LogConfig(segment_bytes=500, file_delete_delay_ms=1000, retention_ms=-1))
    for _ in range(6):
        log.append_as_leader(make_batch(3), 0, NOW)
    first = log.read(0, 1 << 20)
    later = log.read(log.segments[-1].base_offset, 1 << 20)
    expected_first, expected_later = first.read(), later.read()
    log.update_high_watermark(log.log_end_offset)
    log.delete_records_before(log.segments[1].base_offset)  # the first segment goes
    assert len(log.segments) >= 4
    log.truncate_to(log.segments[-2].base_offset - 1)  # the last two go, whole
    assert os.pread(first.fileno(), first.length, first.position) == expected_first
    assert os.pread(later.fileno(), later.length, later.position) == expected_later
    assert len(list((tmp_path / "topic-0").glob("*.log.deleted"))) == 3
    log.enforce_retention(NOW + 10**12)  # file.delete.delay.ms later
    assert not list((tmp_path / "topic-0").glob("*.deleted"))
