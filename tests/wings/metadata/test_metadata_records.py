"""Every metadata record type and version Kafka writes, in a real log written by kraftwire's own log:
``kraftwire log dump`` shows each, ``log verify`` accepts the log and warns of a record type it does
not know (with its bytes), start-up refuses such a log naming the record, the audit finds no violation, and the image honours metadata transactions."""
from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import uuid

import pytest

from kraftwire.audit import local
from kraftwire.codec import records as rec
from kraftwire.codec.primitives import write_uvarint
from kraftwire.server.metadata.image import MetadataImage
from served import serve_once
from tests.raft_helpers import open_log, segments, state

# Kafka trunk's metadata/src/main/resources/common/metadata: record type -> (name, highest version).
KAFKA_RECORD_TYPES = {
    0: ("RegisterBrokerRecord", 4), 1: ("UnregisterBrokerRecord", 0), 2: ("TopicRecord", 0),
    3: ("PartitionRecord", 2), 4: ("ConfigRecord", 0), 5: ("PartitionChangeRecord", 2),
    7: ("FenceBrokerRecord", 0), 8: ("UnfenceBrokerRecord", 0), 9: ("RemoveTopicRecord", 0),
    10: ("DelegationTokenRecord", 0), 11: ("UserScramCredentialRecord", 0), 12: ("FeatureLevelRecord", 0),
    14: ("ClientQuotaRecord", 0), 15: ("ProducerIdsRecord", 0), 17: ("BrokerRegistrationChangeRecord", 3),
    18: ("AccessControlEntryRecord", 0), 19: ("RemoveAccessControlEntryRecord", 0), 20: ("NoOpRecord", 0),
    21: ("ZkMigrationStateRecord", 0), 22: ("RemoveUserScramCredentialRecord", 0), 23: ("BeginTransactionRecord", 0),
    24: ("EndTransactionRecord", 0), 25: ("AbortTransactionRecord", 0), 26: ("RemoveDelegationTokenRecord", 0),
    27: ("RegisterControllerRecord", 0), 28: ("ClearElrRecord", 0), 29: ("UnregisterControllerRecord", 0),
}
TOPIC = uuid.UUID("0b7c2a35-0f3e-4c1e-9a51-6d7b0c9e1a21")
GONE = uuid.UUID("5d0f7a3e-2b8c-4e61-8f0a-3c2b1a9d8e7f")
KEPT, ABORTED = "kept-by-transaction", "aborted-by-transaction"
UNKNOWN_TYPE = 99  # a record type a later Kafka might add


def dir_of(broker: int) -> uuid.UUID:
    return uuid.UUID(int=(broker << 64) | 7)


def broker(version: int, broker_id: int, **extra):
    """A RegisterBrokerRecord with only the fields ``version`` has."""
    fields = dict(broker_id=broker_id, incarnation_id=uuid.UUID(int=broker_id), broker_epoch=10 + broker_id,
                  end_points=[rec.RegisterBrokerRecord.BrokerEndpoint(name="PLAINTEXT", host="localhost",
                                                                      port=9090 + broker_id, security_protocol=0)],
                  features=[rec.RegisterBrokerRecord.BrokerFeature(name="metadata.version", min_supported_version=7,
                                                                   max_supported_version=21)],
                  rack="r1", fenced=False, **extra)
    if version >= 3:
        fields["log_dirs"] = [dir_of(broker_id)]
    return rec.RegisterBrokerRecord(**fields), version


def sample(cls, version: int):
    """An instance with every field ``version`` has set to a value other than its default."""
    values = {}
    for spec in cls._spec.fields:
        if version not in spec.versions:
            continue
        element = spec.element_type
        if spec.struct is not None:
            item = sample(getattr(cls, spec.struct.name), version)
        else:
            item = {"bool": True, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "uint16": 9092, "float64": 1.5,
                    "string": f"{spec.attr}-value", "bytes": b"\x01\x02\xff", "uuid": uuid.UUID(int=0xAB)}[element]
        values[spec.attr] = [item, item] if spec.is_array else item
    return cls(**values)


def every_record() -> list[tuple]:
    """(record, version) writes covering every type and version: the state-bearing ones consistent with
    each other (brokers, topics, partitions), the rest with every field set."""
    partition = dict(topic_id=TOPIC, leader=4, leader_epoch=1, partition_epoch=1)
    stateless = [type_ for type_, (name, _) in KAFKA_RECORD_TYPES.items()
                 if name not in {"RegisterBrokerRecord", "UnregisterBrokerRecord", "TopicRecord", "PartitionRecord",
                                 "ConfigRecord", "PartitionChangeRecord", "FenceBrokerRecord", "UnfenceBrokerRecord",
                                 "RemoveTopicRecord", "FeatureLevelRecord", "BrokerRegistrationChangeRecord",
                                 "BeginTransactionRecord", "EndTransactionRecord", "AbortTransactionRecord",
                                 "ClearElrRecord"}]
    return [
        [(rec.FeatureLevelRecord(name="metadata.version", feature_level=21), 0)],
        [broker(version, version + 1) for version in range(5)],
        [(rec.FenceBrokerRecord(id=1, epoch=11), 0), (rec.UnfenceBrokerRecord(id=1, epoch=11), 0)],
        [(rec.BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=11, fenced=1), 0),
         (rec.BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=11, fenced=-1), 0),
         (rec.BrokerRegistrationChangeRecord(broker_id=2, broker_epoch=12, in_controlled_shutdown=1), 1),
         (rec.BrokerRegistrationChangeRecord(broker_id=4, broker_epoch=14, log_dirs=[dir_of(4)]), 2),
         (rec.BrokerRegistrationChangeRecord(broker_id=5, broker_epoch=15, cordoned_log_dirs=[dir_of(5)]), 3)],
        [(rec.TopicRecord(name="every-version", topic_id=TOPIC), 0),
         (rec.PartitionRecord(partition_id=0, replicas=[4, 5], isr=[4, 5], **partition), 0),
         (rec.PartitionRecord(partition_id=1, replicas=[4, 5], isr=[4, 5], directories=[dir_of(4), dir_of(5)],
                              **partition), 1),
         (rec.PartitionRecord(partition_id=2, replicas=[4, 5], isr=[4], directories=[dir_of(4), dir_of(5)],
                              eligible_leader_replicas=[5], last_known_elr=[], **partition), 2),
         (rec.ConfigRecord(resource_type=2, resource_name="every-version", name="retention.ms", value="1000"), 0)],
        [(rec.PartitionChangeRecord(partition_id=0, topic_id=TOPIC, isr=[4]), 0),
         (rec.PartitionChangeRecord(partition_id=1, topic_id=TOPIC, directories=[dir_of(4), dir_of(5)]), 1),
         (rec.PartitionChangeRecord(partition_id=2, topic_id=TOPIC, eligible_leader_replicas=[5],
                                    last_known_elr=[5]), 2),
         (rec.ClearElrRecord(topic_name="every-version"), 0),
         (rec.PartitionChangeRecord(partition_id=1, topic_id=TOPIC, isr=[4], eligible_leader_replicas=[5]), 2)],
        [(rec.TopicRecord(name="deleted", topic_id=GONE), 0), (rec.RemoveTopicRecord(topic_id=GONE), 0)],
        [(rec.BeginTransactionRecord(name="kept"), 0),
         (rec.ConfigRecord(resource_type=4, resource_name="", name=KEPT, value="1"), 0),
         (rec.EndTransactionRecord(), 0)],
        [(rec.BeginTransactionRecord(), 0),
         (rec.ConfigRecord(resource_type=4, resource_name="", name=ABORTED, value="1"), 0),
         (rec.AbortTransactionRecord(reason="rehearsal"), 0)],
        [(sample(rec.METADATA_TYPES[type_], 0), 0) for type_ in stateless],
        [(rec.UnregisterBrokerRecord(broker_id=3, broker_epoch=13), 0)],
    ]


def unknown_frame(record_type: int = UNKNOWN_TYPE, version: int = 0) -> bytes:
    frame = bytearray()
    for number in (1, record_type, version):  # frame version, record type, record version
        write_uvarint(frame, number)
    return bytes(frame + b"\x00\x2a\x00")


NEWER_TOPIC_RECORD = unknown_frame(2, 9)  # a TopicRecord version this kraftwire does not know


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The log's directory and the image its replay built, before a record of unknown type was added
    at the end (the server's own replay refuses such a log)."""
    directory = tmp_path_factory.mktemp("every-record")

    async def write():
        log, image = await open_log(directory)
        for writes in every_record():
            await log.append(writes)[1]
        await log.close()
        log, image = await open_log(directory)
        await log.close()
        return image

    image = asyncio.run(write())
    segment = segments(directory)[-1]
    data = segment.read_bytes()
    last = list(rec.iter_batches(data))[-1]
    batch = rec.encode_batch(last.next_offset, last.partition_leader_epoch, last.max_timestamp,
                             [(None, unknown_frame()), (None, NEWER_TOPIC_RECORD)])
    segment.write_bytes(data + batch)
    return directory, image, last.next_offset


def kraftwire(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kraftwire", *args], capture_output=True, text=True, timeout=120)


def test_schemas_hold_every_kafka_record_type_and_version():
    assert {type_: (cls.__name__, cls.VALID_VERSIONS.high) for type_, cls in rec.METADATA_TYPES.items()} == (
        KAFKA_RECORD_TYPES)
    assert all(cls.VALID_VERSIONS.low == 0 for cls in rec.METADATA_TYPES.values())


def test_hand_checked_frames():
    assert rec.encode_frame(rec.ProducerIdsRecord(broker_id=1, broker_epoch=5, next_producer_id=1000), 0) == bytes.fromhex(
        "010f00" "00000001" "0000000000000005" "00000000000003e8" "00")
    assert rec.encode_frame(rec.ClearElrRecord(topic_name="t"), 0) == bytes.fromhex("011c00" "0274" "00")
    # BeginTransactionRecord's Name is tagged (tag 0): absent when null, else one tagged field.
    assert rec.encode_frame(rec.BeginTransactionRecord(), 0) == bytes.fromhex("011700" "00")
    assert rec.encode_frame(rec.BeginTransactionRecord(name="ab"), 0) == bytes.fromhex("011700" "01" "00" "03" "036162")
    assert rec.encode_frame(rec.EndTransactionRecord(), 0) == bytes.fromhex("011800" "00")
    quota = rec.ClientQuotaRecord(entity=[rec.ClientQuotaRecord.EntityData(entity_type="user", entity_name=None)],
                                  key="k", value=2.0, remove=True)
    assert rec.encode_frame(quota, 0) == bytes.fromhex(
        "010e00" "02" "0575736572" "00" "00" "026b" "4000000000000000" "01" "00")
    assert rec.decode_frame(rec.encode_frame(quota, 0)) == (quota, 0)


def test_a_bulk_batch_holds_each_record_as_framed_alone():
    """metadata_batch encodes a shared rest once and splices each partition id in: the bytes must be
    those of every record framed on its own, at each version, and read back as the records given."""
    topic_a, topic_b = uuid.uuid4(), uuid.uuid4()
    move = dict(isr=[1, 2], leader=2, replicas=[2, 1], adding_replicas=[2], removing_replicas=[1])
    records = ([(rec.PartitionChangeRecord(partition_id=p, topic_id=topic_a, **move), 1) for p in (0, 1, 2 ** 31 - 1)]
               + [(rec.PartitionChangeRecord(partition_id=7, topic_id=topic_b, **move), 1),
                  (rec.PartitionChangeRecord(partition_id=8, topic_id=topic_a, **move), 0),
                  (rec.PartitionChangeRecord(partition_id=9, topic_id=topic_a, **move), None),
                  (rec.TopicRecord(name="t", topic_id=topic_b), 0)]
               + [(rec.PartitionRecord(partition_id=p, topic_id=topic_b, replicas=[1], isr=[1], leader=1), 2)
                  for p in (3, 4)])
    batch = rec.metadata_batch(10, 2, 1000, records)
    assert batch == rec.encode_batch(10, 2, 1000, [(None, rec.encode_frame(r, v)) for r, v in records])
    assert [record for _, _, _, record in rec.iter_records(batch)] == [r for r, _ in records]


def test_a_batch_of_over_a_million_records_has_offset_deltas_of_four_bytes():
    """A controlled shutdown at millions of partitions writes one batch of over 2^20 records, whose last
    offset deltas take four varint bytes: each such record reads back at its own offset."""
    topic = uuid.uuid4()
    count = 2 ** 20 + 3
    shrink = dict(isr=[2], leader=2)
    batch = rec.metadata_batch(0, 1, 1000, [(rec.PartitionChangeRecord(partition_id=p, topic_id=topic, **shrink), 1)
                                            for p in range(count)])
    records = rec.read_batch(batch, 0).records
    assert len(records) == count
    for offset, _timestamp, key, value in records[-5:]:
        assert key is None and rec.decode_frame(value)[0] == rec.PartitionChangeRecord(
            partition_id=offset, topic_id=topic, **shrink)


def test_records_alike_decode_as_each_framed_alone():
    """decode_frame decodes each distinct rest of a partition record once: a frame alike but for its
    partition id (negative included) reads as its own record, and one cut short of a remembered frame,
    or longer, is still refused."""
    topic = uuid.uuid4()
    move = dict(isr=[1, 2], leader=2, replicas=[2, 1], adding_replicas=[2], removing_replicas=[1])
    for version in (0, 1, 2):
        for make in (lambda p: rec.PartitionChangeRecord(partition_id=p, topic_id=topic, **move),
                     lambda p: rec.PartitionRecord(partition_id=p, topic_id=topic, replicas=[1], isr=[1], leader=1)):
            for partition in (5, 6, -1, 2 ** 31 - 1, 5):
                frame = rec.encode_frame(make(partition), version)
                assert rec.decode_frame(frame) == (make(partition), version)
                for damaged in (frame[:-1], frame + b"\x00"):
                    with pytest.raises(rec.MalformedError):
                        rec.decode_frame(damaged)


def test_dump_shows_every_record_type_and_version(written):
    directory, _, unknown_offset = written
    result = kraftwire("log", "dump", "--json", "--show-secrets", str(directory))  # every field as written
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    redacted = [json.loads(line) for line in kraftwire("log", "dump", "--json", str(directory)).stdout.splitlines()]
    assert [line["fields"]["salt"] for line in redacted if line["type"] == "UserScramCredentialRecord"] == [
        "(redacted)"] * len([line for line in lines if line["type"] == "UserScramCredentialRecord"])
    shown = {(line["type"], line["version"]) for line in lines if not line["control"]}
    expected = {(name, version) for name, high in KAFKA_RECORD_TYPES.values() for version in range(high + 1)}
    assert expected <= shown
    by_type = {line["type"]: line for line in lines}
    assert by_type["ZkMigrationStateRecord"]["fields"] == {"zk_migration_state": 1}
    assert by_type["RegisterControllerRecord"]["fields"]["end_points"][0] == {
        "name": "name-value", "host": "host-value", "port": 9092, "security_protocol": 2}
    assert by_type["UserScramCredentialRecord"]["fields"]["salt"] == "0102ff"
    assert by_type["AbortTransactionRecord"]["fields"] == {"reason": "rehearsal"}
    unknown = [(line["offset"], line["version"], line["fields"]) for line in lines if line["type"] == "UnknownRecord"]
    assert unknown == [(unknown_offset, 0, {"record_type": UNKNOWN_TYPE, "frame": unknown_frame().hex()}),
                       (unknown_offset + 1, 9, {"record_type": 2, "frame": NEWER_TOPIC_RECORD.hex()})]


def test_verify_warns_of_an_unknown_record_type_and_accepts_the_log(written):
    directory, _, unknown_offset = written
    result = kraftwire("log", "verify", str(directory))
    assert result.returncode == 0, result.stdout
    unknown_type, unknown_version, summary = result.stdout.splitlines()
    assert unknown_type.startswith("warning: ") and unknown_type.endswith(
        f": offset {unknown_offset}: unknown metadata record type {UNKNOWN_TYPE} v0: {unknown_frame().hex()}")
    assert unknown_version.endswith(
        f": offset {unknown_offset + 1}: unknown version 9 of TopicRecord (type 2): {NEWER_TOPIC_RECORD.hex()}")
    assert summary.startswith("ok: ") and f"offsets 0..{unknown_offset + 1}" in summary
    assert summary.endswith(", 2 record(s) of unknown type (kraftwire serve refuses to start on them)")


def test_start_up_refuses_a_record_of_unknown_type_naming_it(written, tmp_path):
    """As Kafka's metadata loader fails on a record it cannot read: one line naming file, offset, type and
    version, exit 1."""
    directory, _, unknown_offset = written
    copy = tmp_path / "data"
    shutil.copytree(directory, copy)
    done = serve_once(tmp_path, "--data-dir", str(copy), "--port", "0", "--controller-port", "0")
    assert done.returncode == 1, done.stderr
    refused = [line for line in done.stderr.splitlines() if "cannot start: " in line]
    assert len(refused) == 1 and "Traceback" not in done.stderr, done.stderr
    assert refused[0].endswith(f".log: offset {unknown_offset}: unknown metadata record type {UNKNOWN_TYPE} v0: "
                               f"kraftwire cannot replay it and refuses to start, as Kafka's metadata loader does")


def test_audit_finds_no_violation_in_a_log_of_every_record_type(written, tmp_path):
    directory, _, _ = written
    result = local.run([str(directory)], str(tmp_path / "out"))
    assert result.rows("violations") == []
    counted = result.log["record_types"]
    assert {name for name, _ in KAFKA_RECORD_TYPES.values()} <= set(counted)
    assert counted[f"UnknownRecordType{UNKNOWN_TYPE}v0"] == counted["UnknownRecordType2v9"] == 1


def test_image_applies_a_committed_metadata_transaction_and_drops_an_aborted_one(written):
    _, image, _ = written
    cluster_defaults = image.broker_configs("")
    assert cluster_defaults.get(KEPT) == "1" and ABORTED not in cluster_defaults
    assert image.pending_transaction is None
    assert sorted(image.brokers) == [1, 2, 4, 5]
    assert image.topic("every-version").partitions[0].isr == (4,) and image.topic("deleted") is None


def test_a_snapshot_of_the_image_keeps_everything(written):
    _, image, _ = written
    rebuilt = MetadataImage()
    for offset, (record, version) in enumerate(image.to_records()):
        decoded, decoded_version = rec.decode_frame(rec.encode_frame(record, version))
        assert decoded_version == version
        rebuilt.apply(decoded, offset)
    assert state(rebuilt) == state(image)


def test_image_keeps_cordoned_directories(written):
    _, image, _ = written
    assert image.brokers[5].cordoned_log_dirs == (dir_of(5),)
    assert image.brokers[4].cordoned_log_dirs is None  # registered at v3, never reported
    assert image.brokers[4].log_dirs == (dir_of(4),)


def test_image_keeps_eligible_leader_replicas_and_clears_them(written):
    _, image, _ = written
    partitions = image.topic("every-version").partitions
    cleared = partitions[2]
    # PartitionRecord (epoch 1), the change that set ELR, then ClearElrRecord: each bumps the epoch.
    assert (cleared.isr, cleared.elr, cleared.last_known_elr, cleared.partition_epoch) == ((4,), (), (), 3)
    assert (partitions[1].isr, partitions[1].elr, partitions[1].last_known_elr) == ((4,), (5,), ())
    assert partitions[0].partition_epoch == 2  # no ELR: ClearElrRecord leaves it alone
