"""The controller's write path: the committed image takes the partition states the working image built
(server/controller/active_controller.py, MetadataImage.adopt_or_apply) and must end up exactly as a replay
of the log would build it, also when writes touching the same partitions overlap."""
from __future__ import annotations

import asyncio
import uuid

import pytest

from kraftwire.codec import records as rec
from kraftwire.server.controller.active_controller import Controller
from kraftwire.server.controller.result import ControllerResult
from kraftwire.server.metadata.image import MetadataImage, UnknownPartitionError
from kraftwire.server.raft import RaftLog
from tests.raft_helpers import NODE_ID, state

PARTITIONS = 50


def seeded(topic_id: uuid.UUID) -> ControllerResult:
    return ControllerResult([rec.TopicRecord(name="t", topic_id=topic_id)]
                            + [rec.PartitionRecord(partition_id=p, topic_id=topic_id, replicas=[1, 2], isr=[1, 2], leader_epoch=0,
                                                   partition_epoch=0, leader=1) for p in range(PARTITIONS)])


def changes(topic_id: uuid.UUID, **fields) -> ControllerResult:
    return ControllerResult([rec.PartitionChangeRecord(partition_id=p, topic_id=topic_id, **fields)
                             for p in range(PARTITIONS)])


def replayed(log: RaftLog) -> MetadataImage:
    image = MetadataImage()
    for offset, record in log.replay():
        image.apply(record, offset)
    return image


async def test_overlapping_bulk_changes_commit_as_a_replay_builds_them(tmp_path):
    topic_id = uuid.uuid4()
    controller = Controller(RaftLog(tmp_path, NODE_ID), node_id=NODE_ID)
    await controller.start()
    try:
        await controller.write(lambda image: seeded(topic_id))
        # three writes in flight at once: each decided against the working image holding the others
        await asyncio.gather(controller.write(lambda image: changes(topic_id, leader=2, isr=[2])),
                             controller.write(lambda image: changes(topic_id, isr=[2, 1])),
                             controller.write(lambda image: changes(topic_id, leader=1, replicas=[1, 2, 3],
                                                                    adding_replicas=[3])))
        committed, working = controller.committed, controller.working
        assert committed.offset == working.offset == controller.log.high_watermark - 1
        assert state(committed) == state(working)
        partition = committed.topic("t").partitions[PARTITIONS - 1]
        assert (partition.leader, partition.isr, partition.replicas, partition.adding) == (1, (2, 1), (1, 2, 3), (3,))
        assert (partition.leader_epoch, partition.partition_epoch) == (2, 3)
        # taken from the working image, not merged a second time
        assert partition is working.topic("t").partitions[PARTITIONS - 1]
    finally:
        await controller.stop()
    reopened = RaftLog(tmp_path, NODE_ID)
    await reopened.open()
    try:
        assert state(replayed(reopened)) == state(committed)
    finally:
        await reopened.close()


def test_a_change_is_adopted_only_onto_the_state_it_was_built_from():
    topic_id = uuid.uuid4()
    image = MetadataImage()
    for offset, record in enumerate(seeded(topic_id).records):
        image.apply(record, offset)
    other = image.copy()
    change = rec.PartitionChangeRecord(partition_id=0, topic_id=topic_id, isr=[2])
    before = image.partition_state(topic_id, 0)
    image.apply(change, 100)
    after = image.partition_state(topic_id, 0)
    known = {100: (change, before, after)}
    other.adopt_or_apply([(100, change)], known)
    assert other.partition_state(topic_id, 0) is after and (other.offset, other.version) == (100, image.version)
    assert not known  # read once

    elsewhere = other.copy()
    elsewhere.apply(rec.PartitionChangeRecord(partition_id=1, topic_id=topic_id, leader=2), 101)
    # partition 0 no longer holds ``before`` but ``after``: the record is applied, not the outcome taken
    fake = before._replace(leader=7)
    elsewhere.adopt_or_apply([(102, change)], {102: (change, before, fake)})
    applied = elsewhere.partition_state(topic_id, 0)
    assert (applied.isr, applied.partition_epoch, elsewhere.offset) == ((2,), after.partition_epoch + 1, 102)
    # an outcome of another record at that offset is not taken either
    equal = rec.PartitionChangeRecord(partition_id=0, topic_id=topic_id, isr=[2])
    elsewhere.adopt_or_apply([(103, equal)], {103: (change, applied, fake)})
    assert elsewhere.partition_state(topic_id, 0).partition_epoch == applied.partition_epoch + 1
    missing = rec.PartitionChangeRecord(partition_id=PARTITIONS, topic_id=topic_id, isr=[2])
    with pytest.raises(UnknownPartitionError, match=f"offset 104 changes partition {PARTITIONS} of topic {topic_id}"):
        elsewhere.adopt_or_apply([(104, missing)], {104: (missing, before, fake)})  # no log holds it
    assert PARTITIONS not in elsewhere.topic("t").partitions
    elsewhere.apply(rec.BeginTransactionRecord(), 105)
    new = rec.PartitionRecord(partition_id=PARTITIONS, topic_id=topic_id, replicas=[1], isr=[1], leader=1)
    elsewhere.adopt_or_apply([(106, new)], {106: (new, None, fake)})  # inside a transaction records wait
    assert PARTITIONS not in elsewhere.topic("t").partitions
    elsewhere.apply(rec.EndTransactionRecord(), 107)
    assert elsewhere.partition_state(topic_id, PARTITIONS).replicas == (1,)


def test_a_batch_applied_at_once_equals_its_records_applied_one_by_one():
    """apply_appended (the working image) merges partitions alike once; the result must be what
    ``apply`` gives record by record, and each outcome what the record made of the state before."""
    topic_id, other_id = uuid.uuid4(), uuid.uuid4()
    image = MetadataImage()
    for offset, record in enumerate(seeded(topic_id).records):
        image.apply(record, offset)
    image.apply(rec.PartitionChangeRecord(partition_id=1, topic_id=topic_id, leader=2), 99)  # unlike the others
    one_by_one = image.copy()
    batch = (changes(topic_id, leader=2, isr=[2]).records  # alike: one merge
             + [rec.PartitionChangeRecord(partition_id=3, topic_id=topic_id, isr=[2, 1])]  # partition 3 again
             + [rec.TopicRecord(name="u", topic_id=other_id),
                rec.PartitionRecord(partition_id=0, topic_id=other_id, replicas=[3], isr=[3], leader=3),
                rec.PartitionChangeRecord(partition_id=0, topic_id=other_id, leader=-1)])
    outcomes = image.apply_appended(batch, 100)
    for offset, record in enumerate(batch, 100):
        one_by_one.apply(record, offset)
    assert state(image) == state(one_by_one)
    assert (image.offset, image.version) == (one_by_one.offset, one_by_one.version)
    assert sorted(outcomes) == [100 + i for i in range(PARTITIONS + 1)] + [100 + PARTITIONS + 2, 100 + PARTITIONS + 3]
    for offset, (record, before, after) in outcomes.items():
        assert record is batch[offset - 100]
        replayed_alone = MetadataImage()
        replayed_alone.apply(rec.TopicRecord(name="x", topic_id=record.topic_id), 0)
        if before is not None:
            replayed_alone.topics[record.topic_id].partitions[record.partition_id] = before
        replayed_alone.apply(record, 1)
        assert replayed_alone.partition_state(record.topic_id, record.partition_id) == after
    first, unlike, last = (image.partition_state(topic_id, p) for p in (0, 1, PARTITIONS - 1))
    assert first is last  # one merge for the alike partitions, one state shared
    assert unlike.leader_epoch == first.leader_epoch + 1
    # a change to no such partition is refused, as ``apply`` refuses it, and leaves the image as it was
    missing = rec.PartitionChangeRecord(partition_id=9, topic_id=other_id, leader=-1)
    kept = state(image)
    for refusing in (lambda: image.apply_appended([missing], 200), lambda: one_by_one.apply(missing, 200)):
        with pytest.raises(UnknownPartitionError, match=f"offset 200 changes partition 9 of topic {other_id}"):
            refusing()
    assert state(image) == kept == state(one_by_one)


def reassigning_recomputed(image: MetadataImage) -> dict:
    found = {}
    for topic, index, partition in image.partitions():
        if partition.adding or partition.removing:
            found.setdefault(topic.topic_id, set()).add(index)
    return found


def test_partition_changes_follow_topics_recreated_between_them():
    """Partition changes applied one after another reuse their topic's look-up: a topic removed and
    created again (the same id), a partition record, a transaction in between must each be seen, by
    ``apply``, ``apply_appended`` and ``adopt_or_apply`` alike, with the index of reassigning partitions
    always what the partitions say."""
    topic_id = uuid.uuid4()
    start = rec.PartitionChangeRecord(partition_id=0, topic_id=topic_id, replicas=[3, 1, 2], adding_replicas=[3],
                                      removing_replicas=[])
    done = rec.PartitionChangeRecord(partition_id=0, topic_id=topic_id, replicas=[3, 1, 2], adding_replicas=[],
                                     removing_replicas=[])
    history = (seeded(topic_id).records
               + [start, rec.RemoveTopicRecord(topic_id=topic_id)]
               + seeded(topic_id).records[:2]  # created again, partition 0 not reassigning
               + [done, rec.PartitionRecord(partition_id=5, topic_id=topic_id, replicas=[3, 1], isr=[1], leader=1,
                                            adding_replicas=[3]),  # reassigning from the start
                  rec.PartitionChangeRecord(partition_id=5, topic_id=topic_id, adding_replicas=[]),
                  start, rec.BeginTransactionRecord(), rec.RemoveTopicRecord(topic_id=topic_id)]
               + seeded(topic_id).records[:3] + [start, rec.EndTransactionRecord(), done,
                                                 rec.PartitionChangeRecord(partition_id=1, topic_id=topic_id,
                                                                           adding_replicas=[3])])
    one_by_one, fresh = MetadataImage(), MetadataImage()
    for offset, record in enumerate(history):
        one_by_one.apply(record, offset)
        fresh = fresh.copy()  # nothing remembered from the record before
        fresh.apply(record, offset)
        assert state(one_by_one) == state(fresh), offset
        assert one_by_one.reassigning == reassigning_recomputed(one_by_one), offset
    assert one_by_one.reassigning == {topic_id: {1}}
    first = one_by_one.partition_state(topic_id, 0)
    assert (first.replicas, first.adding, first.partition_epoch) == ((3, 1, 2), (), 2)
    appended = MetadataImage()
    known = appended.apply_appended(history, 0)
    adopted = MetadataImage()
    adopted.adopt_or_apply(list(enumerate(history)), known)
    standby = MetadataImage()  # no outcomes known: a standby controller's commit
    standby.adopt_or_apply(list(enumerate(history)), {})
    for image in (appended, adopted, standby):
        assert state(image) == state(one_by_one)
        assert (image.offset, image.version) == (one_by_one.offset, one_by_one.version)
    # a change to the removed topic's partition finds no topic: each face refuses it, naming its offset
    removed = history[:PARTITIONS + 3]
    assert type(removed[-1]) is rec.RemoveTopicRecord
    for refusing in (lambda image: image.apply(start, 500), lambda image: image.apply_appended([start], 500),
                     lambda image: image.adopt_or_apply([(500, start)], {})):
        image = MetadataImage()
        image.apply_appended(removed, 0)
        with pytest.raises(UnknownPartitionError, match=f"offset 500 changes partition 0 of topic {topic_id}"):
            refusing(image)


async def test_a_log_changing_a_partition_it_never_registered_is_refused_at_replay(tmp_path):
    """Kafka's replay throws on a PartitionChangeRecord whose partition the image lacks; so does the
    controller's, naming the record's offset, topic id and partition, rather than skipping it."""
    topic_id = uuid.uuid4()
    log = RaftLog(tmp_path, NODE_ID)
    await log.open()
    try:
        await log.append([(record, None) for record in seeded(topic_id).records])[1]
        base, committed = log.append([(rec.PartitionChangeRecord(partition_id=PARTITIONS, topic_id=topic_id, isr=[2]),
                                       None)])
        await committed
    finally:
        await log.close()
    controller = Controller(RaftLog(tmp_path, NODE_ID), node_id=NODE_ID)
    with pytest.raises(UnknownPartitionError) as refused:
        await controller.start()
    await controller.log.close()
    assert f"offset {base} changes partition {PARTITIONS} of topic {topic_id}" in str(refused.value)
    assert (refused.value.offset, refused.value.topic_id, refused.value.partition) == (base, topic_id, PARTITIONS)
