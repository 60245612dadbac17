"""What the leader refuses, with Kafka's codes, writing nothing; and the idempotent producer's sequence
rules (ProducerStateManager's), including the answer to a duplicate of one of the last 5 batches."""
from __future__ import annotations

import struct

import crc32c
import pytest
from hypothesis import given, settings, strategies as st

from kraftwire.codec import ErrorCode
from kraftwire.server.storage import LogConfig, LogError, TimestampType
from tests.wings.storage.test_partition_log import CODECS, NOW, make_batch, open_log, read_back

INT32_MAX = (1 << 31) - 1


def with_crc(batch: bytearray) -> bytes:
    """The batch with its CRC-32C recomputed (so a test reaches the check after the CRC's)."""
    struct.pack_into(">I", batch, 17, crc32c.crc32c(bytes(batch[21:])))
    return bytes(batch)


def refused(log, records: bytes, code: ErrorCode, now: int = NOW) -> LogError:
    """Append ``records`` expecting ``code``; checks nothing was written."""
    end, size = log.log_end_offset, log.size_bytes
    with pytest.raises(LogError) as error:
        log.append_as_leader(records, 0, now)
    assert error.value.code == code, error.value
    assert (log.log_end_offset, log.size_bytes) == (end, size)
    return error.value


def test_bad_batches_get_kafkas_codes(tmp_path):
    log = open_log(tmp_path, LogConfig(max_message_bytes=2000))
    good = make_batch(3)
    log.append_as_leader(good, 0, NOW)
    flipped = bytearray(good)
    flipped[-3] ^= 0xFF
    assert "corrupt" in refused(log, bytes(flipped), ErrorCode.CORRUPT_MESSAGE).message
    refused(log, make_batch(20, value_size=200), ErrorCode.MESSAGE_TOO_LARGE)
    refused(log, b"", ErrorCode.INVALID_RECORD)
    refused(log, good[:40], ErrorCode.INVALID_RECORD)  # not even one whole batch
    refused(log, good + good, ErrorCode.INVALID_RECORD)  # Produce v3+: exactly one batch
    moved = bytearray(good)
    struct.pack_into(">q", moved, 0, 7)
    refused(log, bytes(moved), ErrorCode.INVALID_RECORD)  # a client's base offset must be 0
    old_magic = bytearray(good)
    old_magic[16] = 1
    refused(log, bytes(old_magic), ErrorCode.INVALID_RECORD)
    short = bytearray(good)
    struct.pack_into(">i", short, 8, 20)
    refused(log, bytes(short), ErrorCode.CORRUPT_MESSAGE)  # a length below the header's
    miscounted = bytearray(good)
    struct.pack_into(">i", miscounted, 57, 4)
    refused(log, with_crc(miscounted), ErrorCode.INVALID_RECORD)
    control = bytearray(good)
    struct.pack_into(">h", control, 21, 0x20)
    refused(log, with_crc(control), ErrorCode.INVALID_RECORD)
    assert log.log_end_offset == 3


def test_trailing_partial_batch_is_ignored(tmp_path):
    log = open_log(tmp_path)
    good = make_batch(3)
    assert log.append_as_leader(good + good[:30], 0, NOW).size_bytes == len(good)


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_a_compressed_body_that_does_not_decompress_is_corrupt(tmp_path, codec):
    log = open_log(tmp_path)
    batch = bytearray(make_batch(30, CODECS[codec]))
    for i in range(70, min(len(batch), 90)):
        batch[i] ^= 0x5A
    error = refused(log, with_crc(batch), ErrorCode.CORRUPT_MESSAGE)
    assert codec in error.message or "invalid record" in error.message.lower() or error.code


def test_record_structure_errors_are_invalid_record(tmp_path):
    log = open_log(tmp_path)
    batch = bytearray(make_batch(2))
    batch[61] = 0x7F  # the first record's length: now beyond the batch
    refused(log, with_crc(batch), ErrorCode.INVALID_RECORD)


def test_timestamps_outside_the_topics_bounds(tmp_path):
    log = open_log(tmp_path, LogConfig(message_timestamp_before_max_ms=1000, message_timestamp_after_max_ms=500))
    error = refused(log, make_batch(3, timestamp=NOW - 1002), ErrorCode.INVALID_TIMESTAMP)
    assert [e.batch_index for e in error.record_errors] == [0, 1]  # NOW-1002 and NOW-1001; NOW-1000 passes
    assert "out of range" in error.record_errors[0].message
    refused(log, make_batch(3, timestamp=NOW + 499), ErrorCode.INVALID_TIMESTAMP)
    assert log.append_as_leader(make_batch(3, timestamp=NOW + 497), 0, NOW).last_offset == 2
    # Kafka 4's default: at most one hour ahead, any time behind
    default = open_log(tmp_path / "default")
    refused(default, make_batch(1, timestamp=NOW + 3_600_001), ErrorCode.INVALID_TIMESTAMP)
    assert default.append_as_leader(make_batch(1, timestamp=0), 0, NOW).last_offset == 0
    # a producer's LogAppendTime: under CreateTime Kafka checks the batch's timestamp and stores CreateTime;
    # a LogAppendTime topic refuses it
    claimed = bytearray(make_batch(1))
    struct.pack_into(">h", claimed, 21, 0x08)
    stored = default.append_as_leader(with_crc(claimed), 0, NOW)
    assert read_back(default.read(stored.first_offset, 1000).read())[0][1:3] == (NOW, 0)
    appended = open_log(tmp_path / "append", LogConfig(message_timestamp_type=TimestampType.LOG_APPEND_TIME))
    refused(appended, with_crc(claimed), ErrorCode.INVALID_TIMESTAMP)


def test_transactional_batches_are_refused(tmp_path):
    log = open_log(tmp_path)
    batch = make_batch(2, producer_id=5, producer_epoch=0, sequence=0, transactional=True)
    refused(log, batch, ErrorCode.INVALID_TXN_STATE)


def produce(log, sequence: int, count: int = 2, epoch: int = 0, producer_id: int = 42):
    return log.append_as_leader(make_batch(count, producer_id=producer_id, producer_epoch=epoch, sequence=sequence),
                                0, NOW)


def test_duplicates_of_the_last_five_batches_answer_their_offsets(tmp_path):
    log = open_log(tmp_path)
    originals = [produce(log, seq) for seq in range(0, 14, 2)]  # 7 batches, sequences 0..13
    for original, seq in zip(originals[2:], range(4, 14, 2)):
        again = produce(log, seq)
        assert again.duplicate and (again.first_offset, again.last_offset) == (
            original.first_offset, original.last_offset)
    assert log.log_end_offset == 14
    # the 6th batch back is no longer remembered: its sequence is simply out of order now
    refused(log, make_batch(2, producer_id=42, producer_epoch=0, sequence=2), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    # a batch overlapping but not equal to a remembered one is out of order, not a duplicate
    refused(log, make_batch(3, producer_id=42, producer_epoch=0, sequence=10), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)


def test_sequence_and_epoch_rules(tmp_path):
    log = open_log(tmp_path)
    assert produce(log, 7).first_offset == 0  # no state for the producer: any first sequence
    refused(log, make_batch(2, producer_id=42, producer_epoch=0, sequence=10), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    produce(log, 9)
    refused(log, make_batch(2, producer_id=42, producer_epoch=1, sequence=3), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    produce(log, 0, epoch=1)  # a bumped epoch starts again at 0
    error = refused(log, make_batch(2, producer_id=42, producer_epoch=0, sequence=11), ErrorCode.INVALID_PRODUCER_EPOCH)
    assert "epoch" in error.message
    produce(log, 2, epoch=1)
    produce(log, 0, producer_id=43)  # producers are independent
    assert log.log_end_offset == 10


def test_sequences_wrap_at_int32_max(tmp_path):
    log = open_log(tmp_path)
    produce(log, INT32_MAX - 1)  # covers INT32_MAX - 1 and INT32_MAX
    assert produce(log, 0).first_offset == 2
    refused(log, make_batch(1, producer_id=42, producer_epoch=0, sequence=INT32_MAX),
            ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    wrapping = produce(log, INT32_MAX - 1, producer_id=44, count=4)  # INT32_MAX-1 .. 1
    assert wrapping.last_offset == 7 and produce(log, 2, producer_id=44).first_offset == 8


def test_a_producer_whose_batches_are_deleted_may_start_anywhere(tmp_path):
    log = open_log(tmp_path, LogConfig(segment_bytes=300))
    produce(log, 0)
    produce(log, 2, producer_id=7)
    log.update_high_watermark(log.log_end_offset)
    log.delete_records_before(2)
    assert produce(log, 50).first_offset == 4  # 42's batches are gone: no sequence to follow
    refused(log, make_batch(2, producer_id=7, producer_epoch=0, sequence=9), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(-3, 3), st.integers(1, 3)), min_size=1, max_size=25))
def test_sequences_match_a_model(tmp_path_factory, steps):
    """Random retries, gaps and epoch bumps of three producers against a plain model of Kafka's rules."""
    log = open_log(tmp_path_factory.mktemp("model"))
    state: dict[int, tuple[int, int, list[tuple[int, int, int, int]]]] = {}  # pid -> (epoch, next seq, batches)
    for pid, shift, count in steps:
        epoch, next_seq, recent = state.get(pid, (-1, 0, []))
        use_epoch = epoch + 1 if shift == 3 or epoch < 0 else epoch
        sequence = 0 if use_epoch != epoch else max(next_seq + (shift if shift < 3 else 0), 0)
        duplicate = next((b for b in recent if b[0] == sequence and b[1] == sequence + count - 1), None)
        in_order = use_epoch != epoch or sequence == next_seq
        try:
            info = produce(log, sequence, count=count, epoch=use_epoch, producer_id=pid)
        except LogError as error:
            assert not in_order and duplicate is None and error.code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
            continue
        if duplicate is not None and use_epoch == epoch:
            assert info.duplicate and (info.first_offset, info.last_offset) == duplicate[2:]
            continue
        assert in_order and not info.duplicate
        recent = (recent if use_epoch == epoch else [])[-4:] + [(sequence, sequence + count - 1,
                                                                 info.first_offset, info.last_offset)]
        state[pid] = (use_epoch, sequence + count, recent)


def test_silent_producers_expire(tmp_path):
    log = open_log(tmp_path)
    produce(log, 0)  # timestamps NOW, NOW + 1
    assert log.expire_producers(NOW + 1 + 86_400_000 - 1) == 0
    refused(log, make_batch(2, producer_id=42, producer_epoch=0, sequence=9), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    assert log.expire_producers(NOW + 1 + 86_400_000) == 1
    assert produce(log, 9).first_offset == 2
