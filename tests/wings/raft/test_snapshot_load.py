"""A controller loading its snapshot: restarted while its brokers keep running, over real TCP and real
files, it rebuilds the image from the snapshot's frames (``MetadataImage.apply_frames``), gives the
registered brokers their sessions back as Kafka's newly active controller does, and writes nothing but
its LeaderChange: no fencing, no registration, no partition record; every partition stays served. A
snapshot holding a record it cannot read is refused, naming the file and offset, whichever way it is
read."""
from __future__ import annotations

import asyncio
import uuid

import pytest

from kraftwire.codec import records as rec
from kraftwire.codec.messages import CreateTopicsRequest, MetadataRequest
from kraftwire.codec.records import SnapshotFooterRecord, SnapshotHeaderRecord, control_batch, encode_batch
from kraftwire.server.host.cluster import Cluster
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.raft import RaftConfig
from kraftwire.server.raft.segments import UnknownRecordError
from kraftwire.server.raft.snapshots import SnapshotError, check_snapshot, load_snapshot_frames, read_snapshot
from kraftwire.server.wire.client import KafkaClient

TOPICS, PARTITIONS = 6, 30


async def eventually(predicate, what: str, timeout: float = 30.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while not (value := predicate()):
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)
    return value


def served(metadata) -> dict:
    """(topic, partition) -> (leader, replicas, isr) of a Metadata answer."""
    return {(t.name, p.partition_index): (p.leader_id, tuple(p.replica_nodes), tuple(p.isr_nodes))
            for t in metadata.topics for p in t.partitions}


async def test_a_controller_restarted_from_its_snapshot_keeps_its_brokers_and_writes_no_partition_record(tmp_path):
    async with Cluster(brokers=3, data_dir=tmp_path, log_config=RaftConfig(snapshot_every_records=50)) as cluster:
        host, port = cluster.bootstrap.split(",")[0].split(":")
        client = KafkaClient(host, int(port), "snapshot-load-test")
        try:
            async def create(name: str, partitions: int) -> None:
                answer = await client.send(CreateTopicsRequest(timeout_ms=30000, topics=[
                    CreateTopicsRequest.CreatableTopic(name=name, num_partitions=partitions, replication_factor=2)]))
                assert answer.topics[0].error_code == 0, answer

            for t in range(TOPICS):
                await create(f"t{t}", PARTITIONS)
            log, created = cluster.log, TOPICS * PARTITIONS
            held = log.high_watermark
            while not (log.latest_snapshot and log.latest_snapshot[0].end_offset >= held):
                await create(f"more{created}", 1)  # until a snapshot holds the topics above
                created += 1
            before = served(await client.send(MetadataRequest(topics=None)))
            assert len(before) == created and all(leader >= 0 for leader, _, _ in before.values())
            image, high_watermark = cluster.controller.committed, log.high_watermark
            registered = {b.broker_id: (b.epoch, b.incarnation_id) for b in image.brokers.values() if not b.fenced}
            assert sorted(registered) == [1, 2, 3]

            await cluster.stop_controller(3000)
            await cluster.start_controller(3000)
            controller = await cluster.wait_for_active_controller()
            assert cluster.log is not log and cluster.log.latest_snapshot == log.latest_snapshot  # loaded from it
            rebuilt = controller.committed
            assert rebuilt is not image and rebuilt.brokers == image.brokers
            assert {tid: (t.name, t.partitions) for tid, t in rebuilt.topics.items()} == \
                   {tid: (t.name, t.partitions) for tid, t in image.topics.items()}
            # every broker heartbeats the restarted controller with the epoch it registered with
            await eventually(lambda: not controller._inherited, "every broker renewing its session")
            rebuilt = controller.committed
            assert {b.broker_id: (b.epoch, b.incarnation_id) for b in rebuilt.brokers.values() if not b.fenced} \
                == registered
            assert cluster.log.high_watermark > high_watermark  # its LeaderChange, a control record
            assert [type(r).__name__ for offset, r in cluster.log.replay() if offset >= high_watermark] == []
            assert served(await client.send(MetadataRequest(topics=None))) == before
        finally:
            await client.close()


# --- a snapshot with a record the controller cannot read ------------------------------------------


def snapshot_of(path, frames: list[bytes]):
    """A snapshot file of these framed records, sound in every batch (``check_snapshot`` passes)."""
    path.write_bytes(control_batch(0, 1, 0, [SnapshotHeaderRecord(version=0, last_contained_log_timestamp=0)])
                     + encode_batch(1, 1, 0, [(None, frame) for frame in frames])
                     + control_batch(1 + len(frames), 1, 0, [SnapshotFooterRecord(version=0)]))
    check_snapshot(path)
    return path


TOPIC = rec.TopicRecord(name="a", topic_id=uuid.UUID(int=5))
PARTITION = rec.encode_frame(rec.PartitionRecord(partition_id=0, topic_id=TOPIC.topic_id, replicas=[1], isr=[1],
                                                 leader=1))


@pytest.mark.parametrize("bad, error, what", [
    (b"\x01\x03\x07" + PARTITION[3:], UnknownRecordError, "unknown version 7 of PartitionRecord (type 3)"),
    (b"\x01\x7f\x00\x00", UnknownRecordError, "unknown metadata record type 127 v0"),
    (PARTITION[:-2], SnapshotError, "record 4: "),
    (PARTITION[:6], SnapshotError, "record 4: "),
])
def test_a_snapshot_record_that_cannot_be_read_is_refused_as_its_records_are(tmp_path, bad, error, what):
    """The frames path (a controller's load) refuses what the decoded path refuses, with the same message
    naming the file and the record's offset, even after frames alike that it did not decode."""
    path = snapshot_of(tmp_path / "00000000000000000009-0000000001.checkpoint",
                       [rec.encode_frame(TOPIC), PARTITION, PARTITION[:3] + b"\x00\x00\x00\x01" + PARTITION[7:], bad])
    with pytest.raises(error) as decoded:
        list(read_snapshot(path))
    image = MetadataImage()
    with pytest.raises(error) as framed:
        load_snapshot_frames(path, lambda frames: image.apply_frames(frames, 8))
    assert str(framed.value) == str(decoded.value) and what in str(framed.value) and path.name in str(framed.value)


def test_a_snapshot_record_without_a_value_is_refused(tmp_path):
    path = tmp_path / "00000000000000000003-0000000001.checkpoint"
    path.write_bytes(control_batch(0, 1, 0, [SnapshotHeaderRecord(version=0, last_contained_log_timestamp=0)])
                     + encode_batch(1, 1, 0, [(None, rec.encode_frame(TOPIC)), (None, None)])
                     + control_batch(3, 1, 0, [SnapshotFooterRecord(version=0)]))
    for load in (lambda: list(read_snapshot(path)),
                 lambda: load_snapshot_frames(path, lambda frames: MetadataImage().apply_frames(frames, 2))):
        with pytest.raises(SnapshotError, match="record 2: "):
            load()
