"""Interop with kafka-python 3.0.12, an independent implementation of the same wire format.

For every message that kafka-python also ships a schema for, at every version both sides accept
(kafka-python treats every min version as 0, so the range is kraftwire's validVersions capped at
kafka-python's max), generated objects must

* encoded by kraftwire, decode in kafka-python to the same values and re-encode there to the
  identical bytes;
* rebuilt as kafka-python objects and encoded by kafka-python, give the identical bytes, which
  kraftwire decodes to the same values and re-encodes identically.

Fields are matched by position among the fields present in the version (both schemas list them in
JSON order), and their JSON names must agree. kafka-python's own JSON files are only read at test
time as the oracle. Also: v2 record batches against kafka.record.default_records, both ways.
"""
from __future__ import annotations

import importlib
import io
import pkgutil
import struct
import uuid
import warnings

import pytest
from codec_examples import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kraftwire.codec import messages, records
from tests.wings.codec.test_codec_roundtrip import message_strategy, struct_class

# kafka-python loads its schema resources at import time with importlib.resources.read_text,
# deprecated since Python 3.11.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import kafka.protocol
    from kafka.protocol.api_header import ApiHeader
    from kafka.protocol.api_message import ApiMessage
    from kafka.protocol.schemas.fields.codecs.types import BitField
    from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
    from kafka.record.memory_records import MemoryRecords

ZERO_UUID = uuid.UUID(int=0)


def _kafka_python_classes() -> dict[str, type]:
    """kafka-python's message and header classes by schema name (each class is named after its JSON)."""
    found = {}
    for info in pkgutil.walk_packages(kafka.protocol.__path__, "kafka.protocol."):
        if info.name.endswith(".generate_stubs"):
            continue  # a development tool (needs libcst), no messages
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if (isinstance(obj, type) and issubclass(obj, (ApiMessage, ApiHeader))
                    and obj.__dict__.get("_json") is not None and obj.__name__ == obj._json["name"]):
                found[obj.__name__] = obj
    return found


KP = _kafka_python_classes()


def _shared_versions(cls, kp_cls) -> list[int]:
    if issubclass(kp_cls, ApiHeader):
        # kafka-python's header classes only write their lowest and their first flexible version.
        candidates = {kp_cls._valid_versions[0], kp_cls._flexible_versions[0]}
    else:
        candidates = range(0, kp_cls.max_version + 1)
    return [v for v in sorted(candidates) if v in cls.VALID_VERSIONS]


CASES = [pytest.param(cls, KP[name], v, id=f"{name}-v{v}")
         for name, cls in sorted(messages.ALL.items()) if name in KP
         for v in _shared_versions(cls, KP[name])]


# --- kafka-python's side ----------------------------------------------------------------------------

def kp_encode(kp_obj, version: int, flexible: bool) -> bytes:
    if isinstance(kp_obj, ApiHeader):
        return bytes(kp_obj.encode(flexible=flexible))
    if not hasattr(kp_obj, "_header"):
        # kafka-python's decoder skips __init__, leaving the ``_header`` slot unset, and
        # ``encode(version=...)`` reads it.
        kp_obj._header = None
    return bytes(kp_obj.encode(version=version))


def kp_decode(kp_cls, data: bytes, version: int, flexible: bool):
    if issubclass(kp_cls, ApiHeader):
        stream = io.BytesIO(data)
        obj = kp_cls.decode(stream, flexible=flexible)
        assert stream.tell() == len(data), "kafka-python left bytes unread"
        return obj
    # ApiVersionsResponse.decode switches to the v0 body when ErrorCode != 0 (a protocol rule for
    # UNSUPPORTED_VERSION answers, not a codec one); decode the body at the version given instead.
    return ApiMessage.decode.__func__(kp_cls, data, version=version)


def _present(spec, kp_struct, version):
    """The fields of a struct present at ``version``, paired by position, with their names checked."""
    ours = [f for f in spec.fields if version in f.versions]
    theirs = [g for g in kp_struct._fields if g.for_version_q(version)]
    names = [g._name for g in theirs]
    assert len(ours) == len(theirs), (spec.name, [f.name for f in ours], names)
    for f, g in zip(ours, theirs):
        # kafka-python renames its AuthorizedOperations int32 fields into bitfield sets.
        assert f.name == g._name or g.type_str == "bitfield", (spec.name, f.name, g._name)
    return list(zip(ours, theirs))


def _from_kp_scalar(g, value):
    """A kafka-python value in kraftwire's representation."""
    if g.type_str == "bitfield":
        bits = BitField.to_32_bit_field({31} if value is None else value)
        return struct.unpack(">i", struct.pack(">I", bits))[0]
    if g.type_str == "uuid" or g.type_str == "[]uuid":
        return ZERO_UUID if value is None else value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    return value


def _to_kp_scalar(g, value):
    if g.type_str == "bitfield":
        bits = BitField.from_32_bit_field(value & 0xFFFFFFFF)
        return None if bits == {31} else bits
    return value


def assert_same(ours, theirs, spec, kp_struct, version, path="") -> None:
    """kraftwire object ``ours`` holds the same values as kafka-python object ``theirs``."""
    for f, g in _present(spec, kp_struct, version):
        where = f"{path}{f.name}"
        a, b = getattr(ours, f.attr), getattr(theirs, g.name)
        if f.struct is None and not f.is_array:
            assert a == _from_kp_scalar(g, b), (where, a, b)
        elif b is None and a is not None and f.struct is not None and not f.is_array and version in f.tagged:
            # an absent tagged struct: kafka-python says None, kraftwire (as Kafka) the all-default struct
            assert a == type(a)(), (where, a, b)
        elif a is None or b is None:
            assert a is None and b is None, (where, a, b)
        elif f.struct is not None and f.is_array:
            assert len(a) == len(b), where
            for i, (x, y) in enumerate(zip(a, b)):
                assert_same(x, y, f.struct, g.array_of, version, f"{where}[{i}].")
        elif f.struct is not None:
            assert_same(a, b, f.struct, g, version, f"{where}.")
        else:
            assert a == tuple(_from_kp_scalar(g, y) for y in b), (where, a, b)


def to_kp(ours, spec, kp_struct, data_class, version):
    """The kafka-python object holding the values of kraftwire object ``ours``."""
    values = {}
    for f, g in _present(spec, kp_struct, version):
        a = getattr(ours, f.attr)
        # kafka-python's absent tagged struct or uuid is Kafka's default-valued one (it writes any other)
        default = type(a)() if f.struct is not None else ZERO_UUID if f.type == "uuid" else None
        if a is None or (version in f.tagged and not f.is_array and default is not None and a == default):
            values[g.name] = None
        elif f.struct is not None and f.is_array:
            values[g.name] = [to_kp(x, f.struct, g.array_of, g.data_class, version) for x in a]
        elif f.struct is not None:
            values[g.name] = to_kp(a, f.struct, g, g.data_class, version)
        elif f.is_array:
            values[g.name] = [_to_kp_scalar(g, x) for x in a]
        else:
            values[g.name] = _to_kp_scalar(g, a)
    return data_class(version=version, **values)


# --- the tests ------------------------------------------------------------------------------------

SETTINGS = settings(max_examples=examples(8), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("cls,kp_cls,version", CASES)
@SETTINGS
@given(data=st.data())
def test_kraftwire_bytes_decode_in_kafka_python(cls, kp_cls, version, data):
    # kafka-python drops unknown tagged fields when it encodes, so none are generated here.
    obj = data.draw(message_strategy(cls, version, unknown_tags=False))
    flexible = version in cls.FLEXIBLE_VERSIONS
    encoded = obj.encode(version)
    theirs = kp_decode(kp_cls, encoded, version, flexible)
    assert_same(obj, theirs, cls.SPEC.root, kp_cls._struct, version)
    assert kp_encode(theirs, version, flexible) == encoded


@pytest.mark.parametrize("cls,kp_cls,version", CASES)
@SETTINGS
@given(data=st.data())
def test_kafka_python_bytes_decode_in_kraftwire(cls, kp_cls, version, data):
    obj = data.draw(message_strategy(cls, version, unknown_tags=False))
    flexible = version in cls.FLEXIBLE_VERSIONS
    theirs = to_kp(obj, cls.SPEC.root, kp_cls._struct, kp_cls, version)
    encoded = kp_encode(theirs, version, flexible)
    decoded = cls.decode(encoded, version)
    assert_same(decoded, theirs, cls.SPEC.root, kp_cls._struct, version)
    assert decoded == obj
    assert decoded.encode(version) == encoded


def test_interop_covers_the_shared_messages():
    """Every kraftwire message with a kafka-python twin is tested, at a sensible number of versions."""
    shared = {name for name in messages.ALL if name in KP}
    assert {p.values[0].__name__ for p in CASES} == shared
    assert {"MetadataRequest", "MetadataResponse", "AlterPartitionReassignmentsRequest",
            "ApiVersionsResponse", "DescribeQuorumResponse", "RequestHeader"} <= shared
    assert len(CASES) >= 80


def test_struct_class_lookup_matches_kafka_python_nesting():
    """Nested struct classes hang off the root class (what the generator relies on)."""
    topic = messages.MetadataResponse.SPEC.root.fields[4].struct
    assert struct_class(messages.MetadataResponse, topic) is messages.MetadataResponse.MetadataResponseTopic


# --- v2 record batches ----------------------------------------------------------------------------

ENTRIES = st.lists(st.tuples(st.none() | st.binary(max_size=40), st.none() | st.binary(max_size=200)),
                   min_size=1, max_size=6)
BATCH_ARGS = dict(base_offset=st.integers(0, 2**62), epoch=st.integers(0, 2**31 - 1),
                  timestamp=st.integers(0, 2**50), entries=ENTRIES)


def kp_batch(base_offset, epoch, timestamp, entries) -> bytes:
    """kafka-python's producer-side builder; it leaves base offset and leader epoch at 0 for the
    broker to fill in (neither is covered by the CRC), so set them as a broker would."""
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for delta, (key, value) in enumerate(entries):
        assert builder.append(delta, timestamp, key, value, []) is not None
    buf = builder.build()
    struct.pack_into(">q", buf, 0, base_offset)
    struct.pack_into(">i", buf, 12, epoch)
    return bytes(buf)


@settings(max_examples=40, deadline=None)
@given(**BATCH_ARGS)
def test_record_batch_kraftwire_to_kafka_python(base_offset, epoch, timestamp, entries):
    ours = records.encode_batch(base_offset, epoch, timestamp, entries)
    batch = DefaultRecordBatch(ours)
    assert batch.validate_crc()
    assert (batch.base_offset, batch.leader_epoch, batch.magic) == (base_offset, epoch, 2)
    assert (batch.first_timestamp, batch.max_timestamp) == (timestamp, timestamp)
    assert batch.compression_type == 0 and not batch.is_control_batch and not batch.is_transactional
    assert batch.producer_id == -1 and batch.last_offset_delta == len(entries) - 1
    got = [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in batch]
    assert got == [(base_offset + i, timestamp, k, v, []) for i, (k, v) in enumerate(entries)]
    assert kp_batch(base_offset, epoch, timestamp, entries) == ours


@settings(max_examples=40, deadline=None)
@given(**BATCH_ARGS)
def test_record_batch_kafka_python_to_kraftwire(base_offset, epoch, timestamp, entries):
    theirs = kp_batch(base_offset, epoch, timestamp, entries)
    batch = records.read_batch(theirs, 0)
    assert (batch.base_offset, batch.partition_leader_epoch, batch.size) == (base_offset, epoch, len(theirs))
    assert (batch.base_timestamp, batch.max_timestamp, batch.attributes) == (timestamp, timestamp, 0)
    assert batch.next_offset == base_offset + len(entries)
    assert batch.records == tuple(records.Record(base_offset + i, timestamp, k, v) for i, (k, v) in enumerate(entries))
    assert records.encode_batch(base_offset, epoch, timestamp, entries) == theirs


def test_metadata_log_reads_in_kafka_python_and_back():
    """A small log (metadata batch, control batch, metadata batch) walked by kafka-python's MemoryRecords."""
    topic = uuid.UUID("7b6c5c7e-25a4-4f1c-9b5e-1f0c2b3a4d5e")
    first = [(records.TopicRecord(name="orders", topic_id=topic), None),
             (records.PartitionRecord(partition_id=0, topic_id=topic, replicas=(1, 2), isr=(1, 2), leader=1,
                                      leader_epoch=0, partition_epoch=0), 1)]
    leader = records.LeaderChangeMessage(leader_id=3, voters=(records.LeaderChangeMessage.Voter(voter_id=3),))
    change = records.PartitionChangeRecord(partition_id=0, topic_id=topic, isr=(1,), leader=1)
    log = (records.metadata_batch(0, 1, 1_000, first) + records.control_batch(2, 2, 2_000, [leader])
           + records.metadata_batch(3, 2, 3_000, [(change, 0)]))

    seen = []
    for batch in MemoryRecords(log):
        assert batch.validate_crc()
        for r in batch:
            if batch.is_control_batch:
                assert (r.version, r.type) == (0, 2) and r.key == struct.pack(">hh", 0, 2)
                seen.append((r.offset, batch.leader_epoch, r.timestamp, records.LeaderChangeMessage.decode(r.value, 0)))
            else:
                assert r.key is None
                seen.append((r.offset, batch.leader_epoch, r.timestamp, records.decode_frame(r.value)[0]))
    assert seen == list(records.iter_records(log))
    assert [obj for *_, obj in seen] == [first[0][0], first[1][0], leader, change]
