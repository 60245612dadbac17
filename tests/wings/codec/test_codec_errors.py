"""Malformed input and strict encoding.

Decoding must turn every kind of damage (flipped bits, truncation at any byte, bad varints, lengths
and counts beyond the buffer, null where not allowed, leftover bytes, unknown record types) into a
``MalformedError`` with a byte offset, never an IndexError or struct.error, and never hang. Encoding
must refuse what the version cannot carry instead of writing something else. Message objects are
immutable, keyword-only and hashable.
"""
from __future__ import annotations

import struct
import tracemalloc
import uuid

import pytest

from kraftwire.codec import EncodeError, MalformedError, UnsupportedVersionError
from kraftwire.codec import messages as m
from kraftwire.codec import records as r

TOPIC = uuid.UUID("00112233445566778899aabbccddeeff")
DIR = uuid.UUID("aa" * 16)
MR, AR, ARR = m.MetadataRequest, m.AlterPartitionReassignmentsRequest, m.AlterPartitionReassignmentsResponse
BH = m.BrokerHeartbeatRequest


# --- record batches with one flipped bit ----------------------------------------------------------

SAMPLE_BATCH = r.metadata_batch(100, 4, 1_700_000_000_000, [
    (r.TopicRecord(name="orders", topic_id=TOPIC), None),
    (r.PartitionChangeRecord(partition_id=0, topic_id=TOPIC, isr=(1, 2), leader=1), None),
])
GOOD = r.read_batch(SAMPLE_BATCH, 0)
# (field, first byte, end byte) of the 61-byte v2 header (kraft-log-and-spark.md §2.2), then the records.
REGIONS = [("baseOffset", 0, 8), ("batchLength", 8, 12), ("partitionLeaderEpoch", 12, 16), ("magic", 16, 17),
           ("crc", 17, 21), ("attributes", 21, 23), ("lastOffsetDelta", 23, 27), ("baseTimestamp", 27, 35),
           ("maxTimestamp", 35, 43), ("producerId", 43, 51), ("producerEpoch", 51, 53),
           ("baseSequence", 53, 57), ("recordsCount", 57, 61), ("records", 61, len(SAMPLE_BATCH))]


def _flips(start, end):
    for byte in range(start, end):
        for bit in range(8):
            damaged = bytearray(SAMPLE_BATCH)
            damaged[byte] ^= 1 << bit
            yield byte, bit, bytes(damaged)


@pytest.mark.parametrize("field,start,end", [pytest.param(*region, id=region[0]) for region in REGIONS])
def test_flipped_bit_in_record_batch(field, start, end):
    for byte, bit, damaged in _flips(start, end):
        if field in ("baseOffset", "partitionLeaderEpoch"):
            # Not covered by the CRC (it starts at the attributes, byte 21), as in Kafka, where the
            # broker rewrites both; the batch reads with the flipped value and the same records.
            batch = r.read_batch(damaged, 0)
            assert [(x.key, x.value) for x in batch.records] == [(x.key, x.value) for x in GOOD.records]
            if field == "baseOffset":
                assert batch.base_offset == struct.unpack_from(">q", damaged)[0] != GOOD.base_offset
                assert batch.partition_leader_epoch == GOOD.partition_leader_epoch
            else:
                assert batch.partition_leader_epoch == struct.unpack_from(">i", damaged, 12)[0] != 4
                assert batch.base_offset == GOOD.base_offset
            continue
        with pytest.raises(MalformedError) as caught:
            r.read_batch(damaged, 0)
        what = caught.value.what
        assert caught.value.offset == 0, (byte, bit, what)
        if field == "magic":
            assert "magic" in what
        elif field == "batchLength":
            # Longer: runs past the buffer. Shorter: the CRC is computed over the wrong span.
            assert "truncated" in what or "CRC" in what or "length" in what, (byte, bit, what)
        elif field == "recordsCount" and byte == 57 and bit == 7:
            assert "count" in what  # the sign bit makes the count negative, refused before the CRC
        else:
            assert "CRC" in what, (field, byte, bit, what)
        with pytest.raises(MalformedError):
            list(r.iter_records(damaged))


def test_batch_damage_is_reported_at_the_batch_position():
    second = r.metadata_batch(102, 4, 1_700_000_000_001, [(r.NoOpRecord(), None)])
    damaged = bytearray(SAMPLE_BATCH + second)
    damaged[len(SAMPLE_BATCH) + 70] ^= 0x10
    batches = r.iter_batches(bytes(damaged))
    assert next(batches).records == GOOD.records
    with pytest.raises(MalformedError, match="CRC") as caught:
        next(batches)
    assert caught.value.offset == len(SAMPLE_BATCH)


# --- truncation at every byte ---------------------------------------------------------------------

TRUNCATION_SAMPLES = {
    "MetadataRequest-v12": (MR, 12, MR(
        topics=[MR.MetadataRequestTopic(topic_id=TOPIC, name="orders"), MR.MetadataRequestTopic(name=None),
                MR.MetadataRequestTopic(name="zürich-€")],
        allow_auto_topic_creation=False, include_topic_authorized_operations=True)),
    "AlterPartitionReassignmentsRequest-v1": (AR, 1, AR(timeout_ms=30000, allow_replication_factor_change=False, topics=[
        AR.ReassignableTopic(name="a", partitions=[AR.ReassignablePartition(partition_index=0, replicas=[1, 2, 3]),
                                                   AR.ReassignablePartition(partition_index=1, replicas=None)]),
        AR.ReassignableTopic(name="bb", partitions=[AR.ReassignablePartition(partition_index=7, replicas=[4])]),
        AR.ReassignableTopic(name="c", partitions=[])])),
    "MetadataRequest-v1-classic": (MR, 1, MR(topics=[MR.MetadataRequestTopic(name="orders"),
                                                     MR.MetadataRequestTopic(name="x")])),
    "BrokerHeartbeatRequest-v1-tagged": (BH, 1, BH(broker_id=1, broker_epoch=5, offline_log_dirs=[DIR],
                                                   unknown_tagged_fields=((9, b"\x01\x02"),))),
    "DescribeTopicPartitionsRequest-v0-nullable-struct": (m.DescribeTopicPartitionsRequest, 0,
                                                          m.DescribeTopicPartitionsRequest(
        topics=[m.DescribeTopicPartitionsRequest.TopicRequest(name="t")], response_partition_limit=10,
        cursor=m.DescribeTopicPartitionsRequest.Cursor(topic_name="t", partition_index=3))),
}


@pytest.mark.parametrize("cls,version,obj", [pytest.param(*v, id=k) for k, v in TRUNCATION_SAMPLES.items()])
def test_truncated_at_every_byte(cls, version, obj):
    data = obj.encode(version)
    assert cls.decode(data, version) == obj
    for cut in range(len(data)):
        with pytest.raises(MalformedError) as caught:
            cls.decode(data[:cut], version)
        assert 0 <= caught.value.offset <= cut, (cut, caught.value)


def test_truncation_offsets_point_at_the_field_being_read():
    data = TRUNCATION_SAMPLES["AlterPartitionReassignmentsRequest-v1"][2].encode(1)
    # 00007530 00 | 04 | 02 61 | 03 | 00000000 | 04 00000001... : the first PartitionIndex is at byte 9
    assert data[:9].hex() == "0000753000" + "04" + "0261" + "03"
    with pytest.raises(MalformedError) as caught:
        AR.decode(data[:11], 1)  # two of the four bytes of PartitionIndex
    assert caught.value.offset == 9
    with pytest.raises(MalformedError, match="TimeoutMs|AlterPartitionReassignmentsRequest") as caught:
        AR.decode(data[:3], 1)
    assert caught.value.offset == 0


def test_truncated_frames_and_batches():
    frame = r.encode_frame(r.PartitionRecord(partition_id=1, topic_id=TOPIC, replicas=[1, 2], isr=[1], leader=1,
                                             directories=[DIR, DIR]), 1)
    for cut in range(len(frame)):
        with pytest.raises(MalformedError) as caught:
            r.decode_frame(frame[:cut])
        assert 0 <= caught.value.offset <= cut
    for cut in range(len(SAMPLE_BATCH)):
        with pytest.raises(MalformedError) as caught:
            r.read_batch(SAMPLE_BATCH[:cut], 0)
        assert caught.value.offset == 0
        assert "truncated" in caught.value.what
        if cut:
            with pytest.raises(MalformedError) as caught:
                list(r.iter_batches(SAMPLE_BATCH + SAMPLE_BATCH[:cut]))
            assert caught.value.offset == len(SAMPLE_BATCH)


# --- specific malformed inputs --------------------------------------------------------------------

MALFORMED = {
    # name: (class, version, hex, text expected in the error, offset expected)
    "varint-6-continuation-bytes": (AR, 1, "00007530 00 8080808080 01", "varint longer than 5 bytes", 5),
    "compact-string-beyond-buffer": (AR, 1, "00007530 00 02 10 616263", "Name length beyond the buffer", 7),
    "classic-string-beyond-buffer": (MR, 1, "00000001 0010 6162", "Name length beyond the buffer", 6),
    "bytes-beyond-buffer": (m.SaslAuthenticateRequest, 0, "7fffffff 00", "length beyond the buffer", 4),
    "compact-null-not-nullable": (AR, 1, "00007530 00 02 00 01 00 00", "Name is null but not nullable", 7),
    "classic-null-array-not-nullable": (MR, 0, "ffffffff", "Topics is null but not nullable", 4),
    "classic-null-string-not-nullable": (MR, 1, "00000001 ffff", "Name is null but not nullable", 6),
    "huge-classic-count": (MR, 1, "7fffffff 0000", "count beyond the buffer", 4),
    "huge-compact-count": (MR, 12, "ffffffff0f 0000", "count beyond the buffer", 5),
    "huge-int-array-count": (m.LeaderAndIsrRequest, 0, "00000001 00000001 00000001 0000 00000000 00000000"
                                                         "00000000 00000000 7fffffff 00", "Isr count beyond", 34),
    "leftover-bytes": (MR, 1, "00000000 00", "1 bytes left over", 4),
    "tagged-field-beyond-buffer": (BH, 1, "00000001 0000000000000000 0000000000000000 00 00 01 00 05 01",
                                   "tagged field beyond the buffer", 25),
    "known-tagged-field-short-of-its-size": (BH, 1, "00000001 0000000000000000 0000000000000000 00 00 01 00 02 01 ff",
                                             "does not fill its size", 26),
    "invalid-utf8": (r.TopicRecord, 0, "02 ff" + "00" * 16 + "00", "utf-8", 1),
}


@pytest.mark.parametrize("cls,version,hexdata,what,offset", [pytest.param(*v, id=k) for k, v in MALFORMED.items()])
def test_malformed_input(cls, version, hexdata, what, offset):
    data = bytes.fromhex(hexdata.replace(" ", ""))
    with pytest.raises(MalformedError):
        cls.decode(data, version)  # once first, so that the measured decode finds its decoders built
    tracemalloc.start()
    try:
        with pytest.raises(MalformedError) as caught:
            cls.decode(data, version)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20  # a huge count must not make the decoder allocate for it
    assert what in caught.value.what
    assert caught.value.offset == offset
    assert f"(at byte {offset})" in str(caught.value)


def test_negative_classic_length_means_null_where_nullable():
    """Kafka reads any negative classic length as null; where the field is nullable that is no error."""
    assert MR.decode(bytes.fromhex("fffffffe"), 1).topics is None
    assert m.RequestHeader.decode(bytes.fromhex("0003 0008 0000002a fffe"), 1).client_id is None


@pytest.mark.parametrize("data,what", [
    ("01 63 00 00", "unknown metadata record type 99"),
    ("00 02 00 02" + "00" * 16 + "00", "unsupported metadata frame version 0"),
    ("02 02 00 02" + "00" * 16 + "00", "unsupported metadata frame version 2"),
    ("01 02 05 00", "TopicRecord has no version 5"),
    ("", "truncated varint"),
    ("01 02 00 01" + "00" * 16 + "00 00", "1 bytes left over after TopicRecord"),
], ids=["unknown-type", "frame-v0", "frame-v2", "record-version", "empty", "leftover"])
def test_bad_metadata_frames(data, what):
    with pytest.raises(MalformedError, match=what):
        r.decode_frame(bytes.fromhex(data.replace(" ", "")))


def test_bad_control_records():
    with pytest.raises(MalformedError, match="unknown control record type 42"):
        r.decode_control(struct.pack(">hh", 0, 42), b"\x00")
    with pytest.raises(MalformedError, match="4-byte key"):
        r.decode_control(b"\x00\x00\x02", r.LeaderChangeMessage().encode(0))
    with pytest.raises(MalformedError, match="4-byte key"):
        r.decode_control(struct.pack(">hh", 0, 2), None)


def test_bad_frame_inside_a_batch_names_the_record():
    batch = r.encode_batch(50, 1, 0, [(None, r.encode_frame(r.NoOpRecord())), (None, bytes.fromhex("01 63 00 00"))])
    with pytest.raises(MalformedError, match="record at offset 51: unknown metadata record type 99") as caught:
        list(r.iter_records(batch))
    assert caught.value.offset == 0


# --- strict encoding ------------------------------------------------------------------------------

def test_version_outside_valid_versions():
    for version in (-1, 14, 99):
        with pytest.raises(UnsupportedVersionError):
            MR().encode(version)
        with pytest.raises(UnsupportedVersionError):
            MR.decode(b"\x00\x00\x00\x00", version)
    with pytest.raises(UnsupportedVersionError):
        MR.construct(14)
    with pytest.raises(UnsupportedVersionError):
        r.encode_frame(r.PartitionRecord(), 3)
    with pytest.raises(UnsupportedVersionError):
        m.RequestHeader(request_api_key=3).encode(3)


@pytest.mark.parametrize("obj,version", [
    (AR(allow_replication_factor_change=False), 0),  # KIP-860: v0 cannot say "no RF change"
    (m.LeaderAndIsrRequest(is_k_raft_controller=True), 6),
    (m.LeaderAndIsrRequest(type=2), 4),
    (BH(offline_log_dirs=[DIR]), 0),  # a tagged field in versions that lack it
    (r.PartitionRecord(directories=[DIR]), 0),
    (m.VoteRequest(topics=[m.VoteRequest.TopicData(partitions=[m.VoteRequest.PartitionData(pre_vote=True)])]), 1),
], ids=["AlterPartitionReassignments-v0", "LeaderAndIsr-v6", "LeaderAndIsr-v4-type", "BrokerHeartbeat-v0",
        "PartitionRecord-v0", "Vote-v1-nested"])
def test_non_default_in_field_the_version_lacks(obj, version):
    with pytest.raises(EncodeError, match="not supported in this version"):
        obj.encode(version)
    with pytest.raises(EncodeError, match="not supported in this version"):
        type(obj).construct(version).build(obj)


def test_ignorable_field_is_dropped_quietly():
    dropped = ARR(allow_replication_factor_change=False, error_message=None)
    assert dropped.encode(0) == ARR(error_message=None).encode(0)
    assert ARR.decode(dropped.encode(0), 0).allow_replication_factor_change is True
    assert dropped.encode(1) != ARR(error_message=None).encode(1)
    topic = m.MetadataResponse.MetadataResponseTopic(name="t", topic_id=TOPIC, is_internal=True)
    assert m.MetadataResponse(topics=[topic], cluster_id="c").encode(0) == \
        m.MetadataResponse(topics=[topic.replace(topic_id=uuid.UUID(int=0), is_internal=False)]).encode(0)
    assert m.MetadataResponse.construct(0).build(m.MetadataResponse(topics=[topic])) == \
        m.MetadataResponse(topics=[topic]).encode(0)


@pytest.mark.parametrize("obj,version", [
    (AR(topics=[AR.ReassignableTopic(name=None)]), 1),  # string
    (MR(topics=None), 0),  # array nullable only from v1
    (AR(topics=[None]), 1),  # struct element
    (r.TopicRecord(name="t", topic_id=None), 0),  # uuid
    (m.ResponseHeader(correlation_id=None), 0),  # int32
    (BH(want_fence=None), 0),  # bool, untagged
    (m.ApiVersionsResponse(zk_migration_ready=None), 3),  # bool, tagged
    (m.LeaderAndIsrRequest(live_leaders=[], ungrouped_partition_states=[
        m.LeaderAndIsrRequest.LeaderAndIsrPartitionState(isr=[1, None])]), 0),  # int array element
], ids=["string", "array", "struct", "uuid", "int32", "bool", "tagged-bool", "array-element"])
def test_none_in_non_nullable_field(obj, version):
    with pytest.raises(EncodeError):
        obj.encode(version)


def test_null_bool_is_refused_by_the_stream_codec_too():
    """The compiled and the stream-based codec agree: neither writes a null bool as false."""
    for obj, version in ((BH(want_fence=None), 0), (m.ApiVersionsResponse(zk_migration_ready=None), 3)):
        with pytest.raises((EncodeError, struct.error)):
            type(obj).construct(version).build(obj)


@pytest.mark.parametrize("obj,version", [
    (r.ConfigRecord(resource_type=128), 0),  # int8
    (r.FeatureLevelRecord(name="x", feature_level=-32769), 0),  # int16
    (m.ResponseHeader(correlation_id=2**31), 0),  # int32
    (BH(broker_epoch=2**63), 0),  # int64
    (m.BrokerRegistrationRequest(listeners=[m.BrokerRegistrationRequest.Listener(port=65536)]), 0),  # uint16
    (m.BrokerRegistrationRequest(listeners=[m.BrokerRegistrationRequest.Listener(port=-1)]), 0),
    (r.PartitionRecord(replicas=[1, 2**31]), 0),  # int32 array element
    (r.PartitionChangeRecord(leader=2**31), 0),  # tagged int32
], ids=["int8", "int16", "int32", "int64", "uint16-high", "uint16-negative", "int32-array", "tagged-int32"])
def test_out_of_range_ints(obj, version):
    with pytest.raises(EncodeError):
        obj.encode(version)


def test_wrong_types():
    with pytest.raises(EncodeError):
        r.TopicRecord(name=5).encode(0)
    with pytest.raises(EncodeError):
        r.PartitionRecord(replicas=7).encode(0)
    with pytest.raises(EncodeError):
        r.TopicRecord(name="\ud800").encode(0)  # a lone surrogate has no UTF-8 form
    with pytest.raises(EncodeError):
        m.ResponseHeader(correlation_id=1.5).encode(0)


def test_classic_string_too_long_for_int16_length():
    with pytest.raises(EncodeError):
        MR(topics=[MR.MetadataRequestTopic(name="x" * 32768)]).encode(1)
    assert MR.decode(MR(topics=[MR.MetadataRequestTopic(name="x" * 32767)]).encode(1), 1).topics[0].name == "x" * 32767


def test_unknown_tagged_fields_need_a_flexible_version():
    topic = MR.MetadataRequestTopic(name="a", unknown_tagged_fields=((5, b"x"),))
    assert MR.decode(MR(topics=[topic]).encode(9), 9).topics[0] == topic
    for encode in (lambda: MR(topics=[topic]).encode(8), lambda: MR.construct(8).build(MR(topics=[topic]))):
        with pytest.raises(EncodeError, match="has no tagged fields"):
            encode()


# --- tagged fields --------------------------------------------------------------------------------

HEARTBEAT_WITH_TAGS = """
    00000001 0000000000000005 0000000000000007 00 00  # BrokerId, BrokerEpoch, CurrentMetadataOffset, flags
    03                          # three tagged fields
      00 11 02 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa      # tag 0 OfflineLogDirs [DIR]
      01 01 01                  # tag 1: CordonedLogDirs (v2+; unknown in v1), an empty array
      c801 02 beef              # tag 200 (two-byte varint), size 2
"""


def _unhex(text):
    return bytes.fromhex("".join("".join(line.split("#", 1)[0].split()) for line in text.splitlines()))


def test_unknown_tagged_fields_survive_decode_and_encode():
    data = _unhex(HEARTBEAT_WITH_TAGS)
    obj = BH.decode(data, 1)
    assert obj.offline_log_dirs == (DIR,)
    assert obj.cordoned_log_dirs is None
    assert obj.unknown_tagged_fields == ((1, b"\x01"), (200, b"\xbe\xef"))
    assert obj.encode(1) == data
    assert BH.construct(1).parse(data) == obj and BH.construct(1).build(obj) == data
    # In v2 tag 1 is known: the same bytes carry an empty CordonedLogDirs.
    assert BH.decode(data, 2).cordoned_log_dirs == ()


def test_unknown_tagged_fields_in_nested_structs_survive():
    topic = AR.ReassignableTopic(name="a", unknown_tagged_fields=((3, b"\x01"), (70, b"")))
    data = AR(topics=[topic]).encode(1)
    assert data.endswith(bytes.fromhex("02 0261 01 02 03 01 01 46 00 00"))
    assert AR.decode(data, 1).topics[0] == topic
    assert AR.decode(data, 1).encode(1) == data


def test_known_tagged_fields_at_default_are_not_written():
    bare = r.PartitionChangeRecord(partition_id=1, topic_id=TOPIC)
    explicit = bare.replace(leader=-2, leader_recovery_state=-1, isr=None, directories=None)
    assert explicit == bare
    assert bare.encode(2) == bytes.fromhex("00000001") + TOPIC.bytes + b"\x00"
    assert BH(broker_id=1, offline_log_dirs=()).encode(1).endswith(b"\x00\x00\x00")  # flags, then no tags
    assert BH(broker_id=1, offline_log_dirs=[DIR]).encode(1).endswith(b"\x00\x00\x01\x00\x11\x02" + DIR.bytes)
    # PartitionChangeRecord's "unchanged" and "cleared" differ: null is not written, [] is.
    assert r.PartitionChangeRecord(partition_id=1, topic_id=TOPIC, isr=()).encode(0).endswith(b"\x01\x00\x01\x01")
    epoch_default = m.ApiVersionsResponse(finalized_features_epoch=-1).encode(3)
    epoch_zero = m.ApiVersionsResponse(finalized_features_epoch=0).encode(3)
    assert epoch_default.endswith(b"\x00") and epoch_zero.endswith(b"\x01\x01\x08" + bytes(8))


# --- the objects themselves -----------------------------------------------------------------------

def test_objects_are_immutable():
    obj = MR(topics=[MR.MetadataRequestTopic(name="a")])
    with pytest.raises(AttributeError):
        obj.topics = ()
    with pytest.raises(AttributeError):
        obj.new_attribute = 1
    with pytest.raises(TypeError):
        obj[0] = ()
    assert isinstance(obj.topics, tuple)  # lists given to the constructor are stored as tuples
    with pytest.raises(AttributeError):
        obj.topics.append(MR.MetadataRequestTopic(name="b"))


def test_construction_is_keyword_only_and_checks_names():
    with pytest.raises(TypeError):
        MR([])
    with pytest.raises(TypeError, match="no field 'topic'"):
        MR(topic=[])
    obj = AR()
    assert (obj.timeout_ms, obj.allow_replication_factor_change, obj.topics) == (60000, True, ())
    assert r.PartitionChangeRecord().leader == -2 and r.PartitionRecord().partition_id == -1


def test_objects_are_hashable_and_compare_by_type_and_value():
    a = MR(topics=[MR.MetadataRequestTopic(name="a")], allow_auto_topic_creation=False)
    b = MR(topics=(MR.MetadataRequestTopic(name="a"),), allow_auto_topic_creation=False)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1 and {a: 1}[b] == 1
    assert a != MR(topics=[MR.MetadataRequestTopic(name="b")], allow_auto_topic_creation=False)
    assert r.FenceBrokerRecord(id=1, epoch=2) != r.UnfenceBrokerRecord(id=1, epoch=2)  # same values, other type
    assert r.FenceBrokerRecord(id=1, epoch=2) != (1, 2, ())


def test_replace():
    a = AR(timeout_ms=5, topics=[AR.ReassignableTopic(name="t")])
    b = a.replace(timeout_ms=6, topics=[AR.ReassignableTopic(name="u")])
    assert (a.timeout_ms, a.topics[0].name) == (5, "t")  # the original is untouched
    assert (b.timeout_ms, b.topics[0].name, type(b)) == (6, "u", AR)
    assert isinstance(b.topics, tuple)
    assert a.replace() == a
    with pytest.raises(TypeError):
        a.replace(no_such_field=1)
    assert AR.decode(b.encode(1), 1) == b
