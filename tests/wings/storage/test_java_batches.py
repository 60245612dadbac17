"""Batches compressed by Apache Kafka's own Java encoders (kafka-clients 4.3.1's MemoryRecords: gzip,
xerial-framed snappy, LZ4 frames, zstd) pass kraftwire's validator, are kept as produced, and read back
record for record; one of them damaged inside its compressed body is CORRUPT_MESSAGE."""
from __future__ import annotations

import struct
import subprocess

import pytest

from apache_kafka import java_command
from kraftwire.codec import ErrorCode
from kraftwire.server.storage import LogError
from tests.wings.storage.test_partition_log import NOW, open_log, read_back
from tests.wings.storage.test_validation import with_crc

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
# One batch per codec, each of 50 records (key k<i>, value of 300 bytes, timestamp NOW + i), written to
# stdout as: int32 length, then the batch.
SOURCE = """
import java.io.*;
import java.nio.ByteBuffer;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.*;

public class JavaBatches {
    public static void main(String[] args) throws Exception {
        DataOutputStream out = new DataOutputStream(new BufferedOutputStream(System.out));
        long now = Long.parseLong(args[0]);
        for (int c = 1; c < args.length; c++) {
            SimpleRecord[] records = new SimpleRecord[50];
            for (int i = 0; i < records.length; i++) {
                byte[] value = new byte[300];
                java.util.Arrays.fill(value, (byte) ('a' + i % 26));
                records[i] = new SimpleRecord(now + i, ("k" + i).getBytes("UTF-8"), value);
            }
            MemoryRecords built = MemoryRecords.withIdempotentRecords(
                Compression.of(args[c]).build(), 1000L, (short) 0, 50 * (c - 1), records);
            ByteBuffer buffer = built.buffer();
            byte[] bytes = new byte[buffer.remaining()];
            buffer.get(bytes);
            out.writeInt(bytes.length);
            out.write(bytes);
        }
        out.flush();
    }
}
"""


@pytest.fixture(scope="module")
def java_batches(tmp_path_factory) -> dict[str, bytes]:
    source = tmp_path_factory.mktemp("java") / "JavaBatches.java"
    source.write_text(SOURCE)
    made = subprocess.run(java_command(str(source), str(NOW), *CODECS), capture_output=True, timeout=180)
    assert made.returncode == 0, made.stderr.decode()[-2000:]
    batches, pos = {}, 0
    for codec in CODECS:
        (length,) = struct.unpack_from(">i", made.stdout, pos)
        batches[codec] = made.stdout[pos + 4:pos + 4 + length]
        pos += 4 + length
    return batches


def test_javas_compressed_batches_are_validated_and_kept(tmp_path, java_batches):
    log = open_log(tmp_path)
    for i, codec in enumerate(CODECS):
        info = log.append_as_leader(java_batches[codec], 4, NOW)
        assert (info.first_offset, info.last_offset, info.max_timestamp) == (50 * i, 50 * i + 49, NOW + 49)
        stored = log.read(50 * i, 1 << 20).read()
        assert stored[61:] == java_batches[codec][61:]  # the body as produced, compressed or not
        records = read_back(stored)
        assert [(r[0], r[1], r[3]) for r in records] == [(50 * i + j, NOW + j, b"k%d" % j) for j in range(50)]
        assert records[7][4] == bytes([ord("a") + 7]) * 300
    assert log.producers.producers[1000].last_seq == 249


@pytest.mark.parametrize("codec", CODECS[1:])
def test_javas_batch_damaged_inside_its_compression_is_corrupt(tmp_path, java_batches, codec):
    log = open_log(tmp_path)
    damaged = bytearray(java_batches[codec])
    middle = 61 + (len(damaged) - 61) // 2
    damaged[middle:middle + 8] = bytes(b ^ 0xA5 for b in damaged[middle:middle + 8])
    with pytest.raises(LogError) as refused:
        log.append_as_leader(with_crc(damaged), 0, NOW)
    assert refused.value.code in (ErrorCode.CORRUPT_MESSAGE, ErrorCode.INVALID_RECORD)
    assert log.log_end_offset == 0 and log.size_bytes == 0
