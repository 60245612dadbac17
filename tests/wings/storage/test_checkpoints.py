"""The text files of a log directory in Kafka's format, and the topic configs the log obeys."""
from __future__ import annotations

import uuid

import pytest

from kraftwire.codec import ErrorCode
from kraftwire.server.storage import (LOG_START_OFFSET_CHECKPOINT, RECOVERY_POINT_CHECKPOINT,
                                      REPLICATION_OFFSET_CHECKPOINT, CheckpointError, LogConfig, LogDirCheckpoints,
                                      LogError, TimestampType, kafka_uuid, parse_kafka_uuid)


def test_log_dir_checkpoints_in_kafkas_text_format(tmp_path):
    checkpoints = LogDirCheckpoints(tmp_path)
    assert checkpoints.recovery_points() == {}
    checkpoints.write(RECOVERY_POINT_CHECKPOINT, {("orders", 1): 40, ("orders", 0): 12, ("__consumer", 7): 0})
    assert (tmp_path / RECOVERY_POINT_CHECKPOINT).read_text() == (
        "0\n3\n__consumer 7 0\norders 0 12\norders 1 40\n")
    assert checkpoints.recovery_points() == {("orders", 1): 40, ("orders", 0): 12, ("__consumer", 7): 0}
    checkpoints.write(LOG_START_OFFSET_CHECKPOINT, {})
    assert (tmp_path / LOG_START_OFFSET_CHECKPOINT).read_text() == "0\n0\n"
    assert checkpoints.log_start_offsets() == {}
    # a file Kafka wrote reads the same
    (tmp_path / REPLICATION_OFFSET_CHECKPOINT).write_text("0\n2\nt 0 5\nt 1 9\n")
    assert checkpoints.high_watermarks() == {("t", 0): 5, ("t", 1): 9}
    assert not list(tmp_path.glob("*.tmp"))
    (tmp_path / REPLICATION_OFFSET_CHECKPOINT).write_text("")  # as Kafka creates it
    assert checkpoints.high_watermarks() == {}
    for bad in ("1\n0\n", "0\n2\nt 0 5\n", "0\n1\nt zero 5\n", "0\n"):
        (tmp_path / REPLICATION_OFFSET_CHECKPOINT).write_text(bad)
        with pytest.raises(CheckpointError):
            checkpoints.high_watermarks()
    with pytest.raises(ValueError):
        checkpoints.write("cleaner-offset-checkpoint", {})


def test_kafka_uuid_text():
    topic_id = uuid.UUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8")
    assert kafka_uuid(topic_id) == "a6e4EJ2tEdGAtADAT9QwyA"
    assert parse_kafka_uuid("a6e4EJ2tEdGAtADAT9QwyA") == topic_id


def test_log_config_from_topic_configs():
    assert LogConfig.from_configs({}) == LogConfig()
    default = LogConfig()
    assert (default.segment_bytes, default.segment_ms, default.retention_ms, default.retention_bytes) == (
        1 << 30, 604_800_000, 604_800_000, -1)
    assert (default.max_message_bytes, default.index_interval_bytes, default.segment_index_bytes) == (
        1048588, 4096, 10485760)
    assert (default.message_timestamp_before_max_ms, default.message_timestamp_after_max_ms) == (2**63 - 1, 3600000)
    assert (default.flush_messages, default.flush_ms) == (2**63 - 1, 2**63 - 1)
    config = LogConfig.from_configs({"segment.bytes": "1024", "retention.ms": "-1", "cleanup.policy": "compact, delete",
                                     "message.timestamp.type": "LogAppendTime", "flush.messages": "1",
                                     "min.insync.replicas": "2"})
    assert (config.segment_bytes, config.retention_ms, config.flush_messages) == (1024, -1, 1)
    assert config.message_timestamp_type is TimestampType.LOG_APPEND_TIME
    assert config.compact and config.retention_enabled
    for bad in ({"segment.bytes": "big"}, {"message.timestamp.type": "Wallclock"}):
        with pytest.raises(LogError) as refused:
            LogConfig.from_configs(bad)
        assert refused.value.code == ErrorCode.INVALID_CONFIG
