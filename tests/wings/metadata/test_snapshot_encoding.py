"""Snapshots written from kept batches (server/metadata/snapshot_encoding.py) are the snapshots a fresh
encoding writes, byte for byte, whatever changed in between; and what did not change is not encoded again.

An image keeps the batches of each group of topics it encoded for its last snapshot, by the topics'
states and change counts; a stale one kept past a change would silently write an old state into the
snapshot, which every restart and every follower behind the log start would then load. So random
histories change topics (partitions added and changed, ELR cleared, topics deleted and created again,
metadata.version moved across the level that changes the record versions) between snapshots, and each
snapshot file is compared with the one an image without kept batches writes, and read back.
"""
from __future__ import annotations

import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kraftwire.codec import records as rec
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.metadata.snapshot_encoding import ALONE, GROUP_RECORDS, groups
from kraftwire.server.raft.snapshots import SnapshotId, check_snapshot, read_snapshot, write_snapshot_batches
from raft_helpers import open_log, state

DIRS = {b: uuid.UUID(int=(7 << 64) + b) for b in (1, 2, 3, 4)}
# topic ids whose low bits cut a run of small topics after them (id % GROUP_RECORDS below the topic's
# records) or not (GROUP_RECORDS - 1: never)
TOPIC_IDS = [uuid.UUID(int=(3 << 64) + (i << 16) + (0 if i % 3 == 0 else GROUP_RECORDS - 1)) for i in range(8)]
SIZES = [0, 1, 2, 5, ALONE - 1, ALONE + 3]  # partitions: a topic of ALONE - 1 partitions has ALONE records


def partition(topic_id: uuid.UUID, index: int, shift: int = 0) -> rec.PartitionRecord:
    replicas = [(index + shift + k) % 4 + 1 for k in range(3)]
    return rec.PartitionRecord(partition_id=index, topic_id=topic_id, replicas=replicas, isr=replicas,
                               leader=replicas[0], directories=[DIRS[b] for b in replicas])


def create(image: MetadataImage, number: int, partitions: int) -> None:
    topic_id = TOPIC_IDS[number]
    image.apply(rec.TopicRecord(name=f"t{number}", topic_id=topic_id), image.offset + 1)
    for index in range(partitions):
        image.apply(partition(topic_id, index, number), image.offset + 1)


def start(sizes: list[int]) -> MetadataImage:
    image = MetadataImage()
    image.apply(rec.FeatureLevelRecord(name="metadata.version", feature_level=21), 0)
    for broker in DIRS:
        image.apply(rec.RegisterBrokerRecord(broker_id=broker, incarnation_id=uuid.UUID(int=broker), broker_epoch=1,
                                             log_dirs=[DIRS[broker]]), image.offset + 1)
    for number, size in enumerate(sizes):
        create(image, number, size)
    return image


change = st.one_of(
    st.tuples(st.just("isr"), st.integers(0, 7), st.integers(0, ALONE + 3)),
    st.tuples(st.just("elr"), st.integers(0, 7), st.integers(0, ALONE + 3)),
    st.tuples(st.just("clear elr"), st.integers(0, 7), st.just(0)),
    st.tuples(st.just("grow"), st.integers(0, 7), st.sampled_from([1, 3, ALONE])),
    st.tuples(st.just("delete"), st.integers(0, 7), st.just(0)),
    st.tuples(st.just("create"), st.integers(0, 7), st.sampled_from(SIZES)),
    st.tuples(st.just("config"), st.integers(0, 7), st.integers(0, 9)),
    st.tuples(st.just("metadata.version"), st.just(0), st.sampled_from([22, 23, 30])),
    st.tuples(st.just("snapshot"), st.just(0), st.just(0)),
)


def apply_change(image: MetadataImage, kind: str, number: int, value: int) -> None:
    topic_id = TOPIC_IDS[number]
    topic = image.topics.get(topic_id)
    at = image.offset + 1
    if kind == "isr" and topic is not None and value in topic.partitions:
        image.apply(rec.PartitionChangeRecord(partition_id=value, topic_id=topic_id,
                                              isr=topic.partitions[value].replicas[:1]), at)
    elif kind == "elr" and topic is not None and value in topic.partitions:
        replicas = topic.partitions[value].replicas
        image.apply(rec.PartitionChangeRecord(partition_id=value, topic_id=topic_id, isr=replicas[:1],
                                              eligible_leader_replicas=replicas[1:]), at)
    elif kind == "clear elr" and topic is not None:
        image.apply(rec.ClearElrRecord(topic_name=topic.name), at)
    elif kind == "grow" and topic is not None:
        first = len(topic.partitions)
        for index in range(first, first + value):
            image.apply(partition(topic_id, index), image.offset + 1)
    elif kind == "delete" and topic is not None:
        image.apply(rec.RemoveTopicRecord(topic_id=topic_id), at)
    elif kind == "create":  # again, if it exists: the same topic, without partitions, then these
        create(image, number, value)
    elif kind == "config":
        image.apply(rec.ConfigRecord(resource_type=2, resource_name=f"t{number}", name="retention.ms",
                                     value=str(value)), at)
    elif kind == "metadata.version":
        image.apply(rec.FeatureLevelRecord(name="metadata.version", feature_level=value), at)


def fresh_copy(image: MetadataImage) -> MetadataImage:
    """The same image, rebuilt from its records: nothing encoded yet."""
    rebuilt = MetadataImage()
    for offset, (record, _version) in enumerate(image.to_records()):
        rebuilt.apply(record, offset)
    return rebuilt


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(SIZES), min_size=1, max_size=8), st.lists(change, max_size=25))
def test_a_snapshot_from_kept_batches_is_the_fresh_snapshot_byte_for_byte(tmp_path, sizes, changes):
    image = start(sizes)
    image.snapshot_batches()  # the first snapshot encodes everything, and keeps it
    taken = 0
    for kind, number, value in [*changes, ("snapshot", 0, 0)]:
        if kind != "snapshot":
            apply_change(image, kind, number, value)
            continue
        taken += 1
        snapshot = SnapshotId(1000 + taken, 3)
        kept = write_snapshot_batches(tmp_path, snapshot, 7, 1_700_000_000_000, image.snapshot_batches())
        data = kept.read_bytes()
        kept.unlink()
        fresh = write_snapshot_batches(tmp_path, snapshot, 7, 1_700_000_000_000,
                                       fresh_copy(image).snapshot_batches())
        assert data == fresh.read_bytes()
        check_snapshot(fresh)
        assert list(read_snapshot(fresh)) == [record for record, _version in image.to_records()]
        fresh.unlink()


def test_a_snapshot_encodes_again_only_the_group_of_the_topic_that_changed():
    """Topics of ALONE records or more are groups of their own; after one changes, every batch of the
    others is the very bytes object kept from the last snapshot, and only that topic's are new."""
    image = start([ALONE + 3] * 5 + [1, 2, 1])
    first = list(image.snapshot_batches())
    cut = [[topic.name for topic in group] for group in groups(image.topics.values())]
    assert cut[:5] == [["t0"], ["t1"], ["t2"], ["t3"], ["t4"]] and cut[5:] == [["t5", "t6"], ["t7"]]
    image.apply(rec.PartitionChangeRecord(partition_id=3, topic_id=TOPIC_IDS[2], isr=[3]), image.offset + 1)
    second = list(image.snapshot_batches())
    assert len(first) == len(second) == 1 + 5 + 2  # features and brokers, one batch a group
    assert [new is old for (_, new), (_, old) in zip(second, first)] == [False, True, True, False, True, True,
                                                                          True, True]
    assert second[3][0] == first[3][0] == ALONE + 4 and second[3][1] != first[3][1]
    assert list(image.snapshot_batches())[1:] == second[1:]


def test_a_topic_deleted_and_created_again_is_encoded_again_though_its_change_count_is_the_same():
    image = start([3, ALONE])
    list(image.snapshot_batches())
    image.apply(rec.RemoveTopicRecord(topic_id=TOPIC_IDS[1]), image.offset + 1)
    create(image, 1, ALONE - 1)
    image.apply(partition(TOPIC_IDS[1], ALONE - 1, shift=2), image.offset + 1)  # ALONE changes again, another state
    assert image.topics[TOPIC_IDS[1]].changes == ALONE
    records = [record for count, body in image.snapshot_batches()
               for record in rec.read_batch(rec.batch_header(0, 0, 0, body, count) + body, 0).records]
    assert [rec.decode_frame(r.value)[0] for r in records] == [r for r, _ in image.to_records()]


def test_batches_keep_to_the_record_and_byte_limits():
    """1,024 records a batch at most, and (header included) at most the byte limit, split in halves over it."""
    records = [(partition(TOPIC_IDS[0], index), 2) for index in range(2500)]
    sizes = [(count, len(body)) for count, body in rec.metadata_bodies(records, 1024, 8 << 20)]
    assert [count for count, _ in sizes] == [1024, 1024, 452]
    split = list(rec.metadata_bodies(records, 1024, 30_000))
    assert sum(count for count, _ in split) == 2500
    assert all(rec.HEADER_SIZE + len(body) <= 30_000 for _, body in split) and len(split) > 3
    decoded = [rec.decode_frame(r.value)[0] for count, body in split
               for r in rec.read_batch(rec.batch_header(0, 0, 0, body, count) + body, 0).records]
    assert decoded == [record for record, _ in records]


async def test_a_log_snapshots_after_changes_and_restarts_from_the_latest(tmp_path):
    """Through the log and its files: a second snapshot after topics changed holds the changed states,
    and a restart from it rebuilds the image."""
    log, image = await open_log(tmp_path)
    records = [(rec.FeatureLevelRecord(name="metadata.version", feature_level=30), 0)]
    for number in range(4):
        records.append((rec.TopicRecord(name=f"t{number}", topic_id=TOPIC_IDS[number]), 0))
        records += [(partition(TOPIC_IDS[number], index), 2) for index in range(ALONE)]
    await log.append(records)[1]
    first = await log.snapshot()
    await log.append([(rec.PartitionChangeRecord(partition_id=index, topic_id=TOPIC_IDS[1], isr=[2]), 2)
                      for index in range(10)] + [(rec.RemoveTopicRecord(topic_id=TOPIC_IDS[3]), 0)])[1]
    second = await log.snapshot()
    assert second.end_offset > first.end_offset
    assert log.latest_snapshot[0] == second
    path = log.latest_snapshot[1]
    assert list(read_snapshot(path)) == [record for record, _ in image.to_records()]
    assert image.topics[TOPIC_IDS[1]].partitions[0].isr == (2,)
    expected = state(image)
    await log.close()
    log, reopened = await open_log(tmp_path)
    assert log.core.log_start == second.end_offset and state(reopened) == expected
    await log.close()


def test_kept_batches_are_encoded_again_when_metadata_version_changes_the_record_versions():
    """PartitionRecord is v1 below 4.0-IV1 (level 23) and v2 from it: a snapshot after the upgrade
    writes every partition at v2, though no topic changed."""
    image = start([ALONE, 2, 2])
    before = list(image.snapshot_batches())
    image.apply(rec.FeatureLevelRecord(name="metadata.version", feature_level=23), image.offset + 1)
    after = list(image.snapshot_batches())

    def versions(batches) -> set:
        return {rec.decode_frame(r.value) for count, body in batches
                for r in rec.read_batch(rec.batch_header(0, 0, 0, body, count) + body, 0).records}

    assert {version for record, version in versions(before) if type(record) is rec.PartitionRecord} == {1}
    assert {version for record, version in versions(after) if type(record) is rec.PartitionRecord} == {2}
