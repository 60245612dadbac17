"""Opening a log after a crash, as Kafka's LogLoader: segments from the recovery point on are re-read,
batch by batch, and cut at the first invalid one (a torn write, a flipped byte), the segments after it
deleted, the indexes rebuilt, the epochs and producers following what is left."""
from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings, strategies as st

from kraftwire.server.storage import LogConfig
from tests.wings.storage.test_partition_log import NOW, batch_headers, make_batch, open_log, read_back

CONFIG = LogConfig(segment_bytes=600, index_interval_bytes=150)


def filled(tmp_path: Path, batches: int = 12):
    """A log of ``batches`` batches of 3 records over several segments, epochs 0..3, one producer; closed.
    Returns its batches' (base offset, last offset, epoch)."""
    log = open_log(tmp_path, CONFIG)
    for i in range(batches):
        log.append_as_leader(make_batch(3, i % 5, producer_id=1, producer_epoch=0, sequence=3 * i), i // 4, NOW)
    headers = batch_headers(log)
    log.close()
    return headers


def segment_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "topic-0").glob("*.log"))


def test_a_torn_write_at_the_end_is_cut(tmp_path):
    headers = filled(tmp_path)
    last = segment_files(tmp_path)[-1]
    whole = last.stat().st_size
    with open(last, "r+b") as f:
        f.truncate(whole - 10)  # the last batch lost its last bytes
    log = open_log(tmp_path, CONFIG, recovery_point=None)
    assert batch_headers(log) == headers[:-1]
    assert log.log_end_offset == headers[-1][0] and log.recovered_bytes_truncated > 0
    assert last.stat().st_size < whole - 10
    # the producer's state is what is left: its next sequence follows the last batch kept
    assert log.append_as_leader(make_batch(3, producer_id=1, producer_epoch=0, sequence=3 * 11), 3, NOW).first_offset \
        == headers[-1][0]


def test_a_flipped_byte_past_the_recovery_point_cuts_there(tmp_path):
    headers = filled(tmp_path)
    files = segment_files(tmp_path)
    assert len(files) >= 3
    middle = files[1]
    middle_base = int(middle.name[:20])
    flip_at = 61 + 5  # inside the first batch's records: its CRC no longer matches
    data = bytearray(middle.read_bytes())
    data[flip_at] ^= 0x01
    middle.write_bytes(bytes(data))
    log = open_log(tmp_path, CONFIG, recovery_point=middle_base)
    assert log.log_end_offset == middle_base
    assert batch_headers(log) == [h for h in headers if h[1] < middle_base]
    assert [p.name for p in segment_files(tmp_path)] == [f.name for f in files[:2]]
    assert middle.stat().st_size == 0
    assert all(entry.start_offset < middle_base for entry in log.leader_epoch_cache)
    assert read_back(log.read(0, 1 << 20).read())[0][0] == 0


def test_segments_below_the_recovery_point_are_trusted(tmp_path):
    filled(tmp_path)
    first = segment_files(tmp_path)[0]
    data = bytearray(first.read_bytes())
    data[70] ^= 0x01
    first.write_bytes(bytes(data))
    log = open_log(tmp_path, CONFIG, recovery_point=36)
    assert log.log_end_offset == 36 and log.recovered_bytes_truncated == 0
    # with no recovery point (no clean checkpoint) every segment is checked
    log.close()
    checked = open_log(tmp_path, CONFIG, recovery_point=None)
    assert checked.log_end_offset == 0 and len(segment_files(tmp_path)) == 1


def test_missing_or_damaged_indexes_are_rebuilt(tmp_path):
    filled(tmp_path)
    directory = tmp_path / "topic-0"
    original = {p.name: p.read_bytes() for p in directory.iterdir() if p.suffix in (".index", ".timeindex")}
    assert any(original.values())
    for name in original:
        if name.endswith(".timeindex"):
            (directory / name).unlink()
        else:
            (directory / name).write_bytes(b"\x00\x00\x00\x07\x7f\x00\x00\x00" * 3)
    open_log(tmp_path, CONFIG, recovery_point=10**6).close()
    assert {name: (directory / name).read_bytes() for name in original} == original


def test_leftovers_of_a_crash_are_removed(tmp_path):
    filled(tmp_path)
    directory = tmp_path / "topic-0"
    (directory / "00000000000000000000.log.deleted").write_bytes(b"old")
    (directory / "leader-epoch-checkpoint.tmp").write_text("half")
    (directory / "00000000000000099999.index").write_bytes(b"")
    log = open_log(tmp_path, CONFIG, recovery_point=None)
    assert not any(p.name.endswith((".deleted", ".tmp")) for p in directory.iterdir())
    assert not (directory / "00000000000000099999.index").exists()
    assert log.log_end_offset == 36


def test_zeros_after_the_last_batch_are_cut(tmp_path):
    filled(tmp_path)
    last = segment_files(tmp_path)[-1]
    with open(last, "ab") as f:
        f.write(bytes(4096))
    log = open_log(tmp_path, CONFIG, recovery_point=None)
    assert log.log_end_offset == 36
    assert log.append_as_leader(make_batch(1), 3, NOW).first_offset == 36


@settings(max_examples=25, deadline=None)
@given(cut=st.integers(0, 10_000))
def test_any_cut_leaves_the_batches_wholly_before_it(tmp_path_factory, cut):
    root = tmp_path_factory.mktemp("cut")
    log = open_log(root, LogConfig())
    ends = []
    for i in range(8):
        log.append_as_leader(make_batch(2, i % 5, value_size=300), 0, NOW)
        ends.append(log.active_segment.size)
    log.close()
    path = segment_files(root)[0]
    size = cut % (ends[-1] + 1)
    os.truncate(path, size)
    whole = sum(1 for end in ends if end <= size)
    recovered = open_log(root, LogConfig(), recovery_point=None)
    assert recovered.log_end_offset == 2 * whole
    assert path.stat().st_size == (ends[whole - 1] if whole else 0)
    assert [r[0] for r in read_back(recovered.read(0, 1 << 20).read())] == list(range(2 * whole))


def test_a_broken_length_below_the_recovery_point_cuts_there_too(tmp_path):
    """A batch whose length runs past its segment's end cannot be skipped: the segment is re-read and
    cut there, and the segments after it go (no gap in the offsets)."""
    headers = filled(tmp_path)
    files = segment_files(tmp_path)
    first = files[0]
    data = bytearray(first.read_bytes())
    second_batch = int.from_bytes(data[8:12], "big") + 12
    data[second_batch + 8:second_batch + 12] = (10**6).to_bytes(4, "big")
    first.write_bytes(bytes(data))
    log = open_log(tmp_path, CONFIG, recovery_point=36)
    assert batch_headers(log) == headers[:1] and log.log_end_offset == headers[0][1] + 1
    assert len(segment_files(tmp_path)) == 1
