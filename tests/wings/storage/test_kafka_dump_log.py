"""Apache Kafka 4.3.1's ``kafka-dump-log`` (DumpLogSegments, run from tests/kafka/lib) reads the segments,
offset indexes and time indexes kraftwire writes, and agrees on every batch (offsets, epoch, position,
size, codec, timestamps, producer fields, CRC valid), every record, and every index entry (it checks
each index entry against the log and reports any mismatch)."""
from __future__ import annotations

import re
import struct

from apache_kafka import DUMP_LOG, run_tool
from kraftwire.server.storage import LogConfig, TimestampType
from tests.wings.storage.test_partition_log import NOW, make_batch, open_log, read_back

CODEC_NAMES = ["none", "gzip", "snappy", "lz4", "zstd"]
BATCH_LINE = re.compile(
    r"^baseOffset: (\d+) lastOffset: (\d+) count: (\d+) baseSequence: (-?\d+) lastSequence: (-?\d+) "
    r"producerId: (-?\d+) producerEpoch: (-?\d+) partitionLeaderEpoch: (-?\d+) isTransactional: false "
    r"isControl: false deleteHorizonMs: \S+ position: (\d+) (CreateTime|LogAppendTime): (-?\d+) size: (\d+) "
    r"magic: 2 compresscodec: (\w+) crc: (\d+) isvalid: (\w+)$")
RECORD_LINE = re.compile(r"^\| offset: (\d+) (CreateTime|LogAppendTime): (-?\d+) keySize: (-?\d+) valueSize: (-?\d+) "
                         r"sequence: (-?\d+) headerKeys: \[(.*?)\]")
INDEX_LINE = re.compile(r"^offset: (\d+) position: (\d+)$")
TIME_INDEX_LINE = re.compile(r"^timestamp: (-?\d+) offset: (\d+)$")


def build_logs(tmp_path):
    """Two partitions: CreateTime with an idempotent producer over every codec and four epochs, rolled into
    several segments; LogAppendTime with plain batches. Returns {directory: log} (still open)."""
    created = open_log(tmp_path / "create", LogConfig(segment_bytes=1500, index_interval_bytes=200))
    for i in range(20):
        created.append_as_leader(make_batch(4, i % 5, timestamp=NOW + 10 * i, producer_id=77, producer_epoch=2,
                                            sequence=4 * i, value_size=120), i // 5, NOW + 300)
    appended = open_log(tmp_path / "append", LogConfig(message_timestamp_type=TimestampType.LOG_APPEND_TIME,
                                                       index_interval_bytes=100))
    for i in range(6):
        appended.append_as_leader(make_batch(3, i % 5), 9, NOW + i)
    assert len(created.segments) >= 3
    return [created, appended]


def dump(paths) -> str:
    shown = run_tool(DUMP_LOG, "--deep-iteration", "--print-data-log", "--files", ",".join(map(str, paths)))
    assert shown.returncode == 0, shown.stderr[-2000:]
    return shown.stdout


def sections(output: str) -> dict[str, list[str]]:
    """The dump's lines per file ("Dumping <path>" starts each)."""
    found: dict[str, list[str]] = {}
    current = None
    for line in output.splitlines():
        if line.startswith("Dumping "):
            current = line.removeprefix("Dumping ").strip()
            found[current] = []
        elif current is not None:
            found[current].append(line)
    return found


def test_kafka_dump_log_reads_what_kraftwire_writes(tmp_path):
    logs = build_logs(tmp_path)
    for log in logs:
        log.flush()
    files = sorted(p for log in logs for p in log.directory.iterdir()
                   if p.suffix in (".log", ".index", ".timeindex"))
    output = dump(files)
    for problem in ("mismatch", "Mismatch", "out of order", "corrupt", "isvalid: false", "Exception"):
        assert problem not in output, output[-3000:]
    dumped = sections(output)
    assert set(dumped) == {str(p) for p in files}
    for log in logs:
        for segment in log.segments:
            check_segment(log, segment, dumped[str(segment.path)])
            check_offset_index(segment, dumped[str(segment.offset_index.path)])
            check_time_index(segment, dumped[str(segment.time_index.path)])


def check_segment(log, segment, lines):
    batches = [BATCH_LINE.match(line) for line in lines if line.startswith("baseOffset")]
    assert all(batches), [line for line in lines if line.startswith("baseOffset")][:3]
    ours = list(segment.headers_from(0))
    assert len(batches) == len(ours) > 0
    log_append = log.config.message_timestamp_type is TimestampType.LOG_APPEND_TIME
    for match, (position, header) in zip(batches, ours):
        (base, last, count, base_seq, last_seq, pid, pepoch, epoch, pos, kind, ts, size, codec, crc,
         valid) = match.groups()
        assert (int(base), int(last), int(count), int(epoch), int(pos), int(size)) == (
            header.base_offset, header.last_offset, header.record_count, header.partition_leader_epoch, position,
            header.size)
        assert (int(base_seq), int(last_seq), int(pid), int(pepoch)) == (
            header.base_sequence, header.last_sequence, header.producer_id, header.producer_epoch)
        assert (kind == "LogAppendTime", int(ts), codec, int(crc), valid) == (
            log_append, header.max_timestamp, CODEC_NAMES[header.codec], header.crc, "true")
    records = [RECORD_LINE.match(line).groups() for line in lines if line.startswith("| offset")]
    expected = read_back(segment.read_bytes(0, segment.size))
    assert [(int(r[0]), int(r[2])) for r in records] == [(offset, ts) for offset, ts, *_ in expected]
    assert {r[1] for r in records} == {"LogAppendTime" if log_append else "CreateTime"}


def check_offset_index(segment, lines):
    data = segment.offset_index.path.read_bytes()
    ours = [(segment.base_offset + rel, pos) for rel, pos in struct.iter_unpack(">ii", data)]
    theirs = [tuple(map(int, m.groups())) for m in map(INDEX_LINE.match, lines) if m]
    assert theirs == ours
    if segment.size > 3 * segment.index_interval_bytes:
        assert ours  # entries are written every index.interval.bytes


def check_time_index(segment, lines):
    data = segment.time_index.path.read_bytes()
    ours = [(ts, segment.base_offset + rel) for ts, rel in struct.iter_unpack(">qi", data)]
    theirs = [tuple(map(int, m.groups())) for m in map(TIME_INDEX_LINE.match, lines) if m]
    assert theirs == ours and ours
