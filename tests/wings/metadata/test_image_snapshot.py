"""Image -> snapshot records -> replay -> the same image, for every record type the image applies.

A snapshot is the image written as records (``MetadataImage.to_records``); a controller or broker that
starts from it must rebuild exactly the image that wrote it, or a restart silently changes the cluster
(a broker in controlled shutdown becoming eligible to lead, a lost config). Histories are drawn at random
from every record type; each snapshot record goes through its on-disk frame, at the version the
snapshot writes it at.
"""
from __future__ import annotations

import gc
import uuid
import weakref

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kraftwire.codec import MalformedError
from kraftwire.codec import records as rec
from kraftwire.codec.constants import MIGRATING
from kraftwire.server.metadata.image import MetadataImage, PartitionState, UnknownPartitionError

BROKER_IDS = st.integers(1, 3)
DIRECTORIES = [uuid.UUID(int=(1 << 64) + i) for i in range(3)]
TOPICS = {"a": uuid.UUID(int=(2 << 64) + 1), "b": uuid.UUID(int=(2 << 64) + 2)}
IMAGE_RECORD_TYPES = {rec.RegisterBrokerRecord, rec.UnregisterBrokerRecord, rec.FenceBrokerRecord,
                      rec.UnfenceBrokerRecord, rec.BrokerRegistrationChangeRecord, rec.TopicRecord,
                      rec.RemoveTopicRecord, rec.PartitionRecord, rec.PartitionChangeRecord, rec.ConfigRecord,
                      rec.FeatureLevelRecord}


def _subset(values, *, min_size=0):
    return st.lists(st.sampled_from(values), min_size=min_size, max_size=len(values), unique=True)


register = st.builds(
    lambda broker_id, epoch, fenced, shutting_down, rack, dirs, features: rec.RegisterBrokerRecord(
        broker_id=broker_id, incarnation_id=uuid.UUID(int=broker_id * 1000 + epoch), broker_epoch=epoch,
        fenced=fenced, in_controlled_shutdown=shutting_down, rack=rack, log_dirs=dirs,
        end_points=[rec.RegisterBrokerRecord.BrokerEndpoint(name="PLAINTEXT", host="127.0.0.1",
                                                            port=9090 + broker_id, security_protocol=0)],
        features=[rec.RegisterBrokerRecord.BrokerFeature(name=n, min_supported_version=0, max_supported_version=m)
                  for n, m in features]),
    BROKER_IDS, st.integers(0, 50), st.booleans(), st.booleans(), st.sampled_from([None, "r1"]),
    _subset(DIRECTORIES), st.lists(st.tuples(st.sampled_from(["metadata.version", "kraft.version"]),
                                             st.integers(1, 30)), max_size=2, unique_by=lambda f: f[0]))
broker_change = st.builds(
    lambda broker_id, fenced, shutting_down, dirs: rec.BrokerRegistrationChangeRecord(
        broker_id=broker_id, broker_epoch=1, fenced=fenced, in_controlled_shutdown=shutting_down, log_dirs=dirs),
    BROKER_IDS, st.sampled_from([-1, 0, 1]), st.sampled_from([0, 1]), _subset(DIRECTORIES))


@st.composite
def partition_record(draw):
    replicas = draw(_subset([1, 2, 3], min_size=1))
    return rec.PartitionRecord(
        partition_id=draw(st.integers(0, 1)), topic_id=TOPICS[draw(st.sampled_from(sorted(TOPICS)))],
        replicas=replicas, isr=draw(_subset(replicas, min_size=1)), removing_replicas=draw(_subset(replicas)),
        adding_replicas=draw(_subset(replicas)), leader=draw(st.sampled_from([-1, *replicas])),
        leader_recovery_state=draw(st.sampled_from([0, 1])), leader_epoch=draw(st.integers(0, 9)),
        partition_epoch=draw(st.integers(0, 9)),
        directories=[draw(st.sampled_from([MIGRATING, *DIRECTORIES])) for _ in replicas])


@st.composite
def partition_change(draw):
    replicas = draw(st.none() | _subset([1, 2, 3], min_size=1))
    directories = None if replicas is None or draw(st.booleans()) else [
        draw(st.sampled_from(DIRECTORIES)) for _ in replicas]
    some = st.none() | _subset([1, 2, 3])
    return rec.PartitionChangeRecord(
        partition_id=draw(st.integers(0, 1)), topic_id=TOPICS[draw(st.sampled_from(sorted(TOPICS)))],
        replicas=replicas, directories=directories, isr=draw(st.none() | _subset([1, 2, 3], min_size=1)),
        removing_replicas=draw(some), adding_replicas=draw(some), leader=draw(st.sampled_from([-2, -1, 1, 2, 3])),
        leader_recovery_state=draw(st.sampled_from([-1, 0, 1])))


one_record = st.one_of(
    register, broker_change,
    st.builds(lambda b: rec.UnregisterBrokerRecord(broker_id=b, broker_epoch=1), BROKER_IDS),
    st.builds(lambda b: rec.FenceBrokerRecord(id=b, epoch=1), BROKER_IDS),
    st.builds(lambda b: rec.UnfenceBrokerRecord(id=b, epoch=1), BROKER_IDS),
    st.builds(lambda name: rec.TopicRecord(name=name, topic_id=TOPICS[name]), st.sampled_from(sorted(TOPICS))),
    st.builds(lambda name: rec.RemoveTopicRecord(topic_id=TOPICS[name]), st.sampled_from(sorted(TOPICS))),
    partition_record(), partition_change(),
    st.builds(lambda kind, name, key, value: rec.ConfigRecord(resource_type=kind, resource_name=name, name=key,
                                                              value=value),
              st.sampled_from([2, 4]), st.sampled_from(["a", "b", "", "1"]),
              st.sampled_from(["retention.ms", "leader.replication.throttled.rate"]),
              st.none() | st.sampled_from(["1", "2"])),
    st.builds(lambda name, level: rec.FeatureLevelRecord(name=name, feature_level=level),
              st.sampled_from(["metadata.version", "kraft.version"]), st.integers(0, 30)))


def contents(image: MetadataImage):
    """Everything an image holds, as comparable values."""
    return (image.brokers, {tid: (t.name, t.partitions) for tid, t in image.topics.items()}, image.topic_ids,
            image.configs, image.features)


def replayed(image: MetadataImage) -> MetadataImage:
    """A fresh image built from ``image``'s snapshot records, each through its on-disk frame."""
    rebuilt = MetadataImage()
    for offset, (record, version) in enumerate(image.to_records()):
        decoded, decoded_version = rec.decode_frame(rec.encode_frame(record, version))
        assert decoded_version == version
        rebuilt.apply(decoded, offset)
    return rebuilt


def build(history) -> MetadataImage:
    """The image of ``history``, less the changes to partitions it has not registered (or has removed):
    no log holds those, and applying one refuses, leaving the image as it was."""
    image = MetadataImage()
    for offset, record in enumerate(history):
        if type(record) is rec.PartitionChangeRecord and image.partition_state(record.topic_id,
                                                                               record.partition_id) is None:
            before = contents(image)
            with pytest.raises(UnknownPartitionError, match=f"at offset {offset} "):
                image.apply(record, offset)
            assert contents(image) == before
            continue
        image.apply(record, offset)
    return image


# both topics exist from the start, so that partition records find their topic
TOPICS_FIRST = [rec.TopicRecord(name=name, topic_id=topic_id) for name, topic_id in sorted(TOPICS.items())]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(one_record, max_size=40))
def test_a_snapshot_replays_to_the_image_that_wrote_it(history):
    image = build(TOPICS_FIRST + history)
    rebuilt = replayed(image)
    assert contents(rebuilt) == contents(image)
    for kept in (image, rebuilt, image.copy()):
        assert reassigning_index(kept) == reassigning_scan(kept)


def reassigning_index(image: MetadataImage) -> set:
    return {(topic.topic_id, index) for topic, index, _ in image.reassigning_partitions()}


def reassigning_scan(image: MetadataImage) -> set:
    """What the index must hold: every partition with adding or removing replicas."""
    return {(topic.topic_id, index) for topic, index, state in image.partitions() if state.adding or state.removing}


def test_the_reassigning_index_follows_changes_cancels_and_removed_topics():
    a, b = TOPICS["a"], TOPICS["b"]
    image = build(TOPICS_FIRST + [
        rec.PartitionRecord(partition_id=p, topic_id=t, replicas=[1, 2], isr=[1, 2], leader=1)
        for t in (a, b) for p in (0, 1)])
    assert reassigning_index(image) == set()
    moves = [rec.PartitionChangeRecord(partition_id=p, topic_id=t, replicas=[1, 2, 3], adding_replicas=[3],
                                       removing_replicas=[2]) for t in (a, b) for p in (0, 1)]
    for offset, record in enumerate(moves, start=image.offset + 1):
        image.apply(record, offset)
    before = image.copy()
    image.apply(rec.PartitionChangeRecord(partition_id=0, topic_id=a, replicas=[1, 2], adding_replicas=[],
                                          removing_replicas=[]), image.offset + 1)
    image.apply(rec.PartitionChangeRecord(partition_id=1, topic_id=a, isr=[1]), image.offset + 1)  # lists unchanged
    image.apply(rec.RemoveTopicRecord(topic_id=b), image.offset + 1)
    assert reassigning_index(image) == reassigning_scan(image) == {(a, 1)}
    assert reassigning_index(before) == {(a, 0), (a, 1), (b, 0), (b, 1)}  # a copy keeps its own index


def test_equal_replica_lists_are_one_shared_tuple():
    """Memory per partition: equal lists (replicas, ISR, directories) are held once, from records of
    both kinds and from a snapshot's replay."""
    a = TOPICS["a"]
    image = build(TOPICS_FIRST + [
        rec.PartitionRecord(partition_id=0, topic_id=a, replicas=[1, 2], isr=[1, 2], leader=1),
        rec.PartitionRecord(partition_id=1, topic_id=a, replicas=[1, 3], isr=[1, 3], leader=1),
        rec.PartitionChangeRecord(partition_id=1, topic_id=a, replicas=[1, 2], isr=[1, 2])])
    for kept in (image, replayed(image)):
        first, second = kept.topic("a").partitions[0], kept.topic("a").partitions[1]
        assert first.replicas == (1, 2) and first.replicas is second.replicas is second.isr
        assert first.directories == (MIGRATING, MIGRATING) and first.directories is second.directories


def test_a_dropped_image_is_freed_at_once_not_by_the_cyclic_collector():
    """An image let go (a restarted controller's, a snapshot's copy) is freed by reference counting: with
    millions of partitions, waiting for a full pass of the cyclic collector held the interpreter for
    seconds and kept the old image's memory meanwhile."""
    a = TOPICS["a"]
    image = build(TOPICS_FIRST + [
        rec.PartitionRecord(partition_id=p, topic_id=a, replicas=[1, 2], isr=[1, 2], leader=1) for p in (0, 1)])
    image.apply(rec.PartitionChangeRecord(partition_id=0, topic_id=a, replicas=[1, 2, 3], adding_replicas=[3]),
                image.offset + 1)
    copy = image.copy()
    copy.apply(rec.PartitionChangeRecord(partition_id=1, topic_id=a, isr=[1]), copy.offset + 1)
    list(copy.snapshot_batches())
    gc.disable()
    try:
        dropped = [weakref.ref(image), weakref.ref(copy)]
        del image, copy
        assert [ref() for ref in dropped] == [None, None]
    finally:
        gc.enable()


def test_one_history_of_every_record_type_round_trips():
    """A fixed history using each type the image applies, ending in states a snapshot must carry: a broker
    in controlled shutdown, one fenced, a partition mid-reassignment, configs of both kinds, features."""
    a = TOPICS["a"]
    history = [
        rec.FeatureLevelRecord(name="metadata.version", feature_level=21),
        *[rec.RegisterBrokerRecord(broker_id=b, incarnation_id=uuid.UUID(int=b), broker_epoch=b, fenced=True,
                                   rack="r1", log_dirs=[DIRECTORIES[b - 1]]) for b in (1, 2, 3)],
        rec.UnfenceBrokerRecord(id=1, epoch=1), rec.UnfenceBrokerRecord(id=2, epoch=2),
        rec.BrokerRegistrationChangeRecord(broker_id=3, broker_epoch=3, fenced=-1),
        rec.BrokerRegistrationChangeRecord(broker_id=2, broker_epoch=2, in_controlled_shutdown=1),
        rec.FenceBrokerRecord(id=3, epoch=3),
        rec.TopicRecord(name="a", topic_id=a), rec.TopicRecord(name="b", topic_id=TOPICS["b"]),
        rec.PartitionRecord(partition_id=0, topic_id=a, replicas=[1, 2], isr=[1, 2], leader=1,
                            directories=[DIRECTORIES[0], DIRECTORIES[1]]),
        rec.PartitionChangeRecord(partition_id=0, topic_id=a, replicas=[1, 2, 3], adding_replicas=[3],
                                  removing_replicas=[2], directories=[DIRECTORIES[0], DIRECTORIES[1], MIGRATING]),
        rec.ConfigRecord(resource_type=2, resource_name="a", name="retention.ms", value="1000"),
        rec.ConfigRecord(resource_type=4, resource_name="", name="leader.replication.throttled.rate", value="5"),
        rec.ConfigRecord(resource_type=2, resource_name="b", name="retention.ms", value="7"),
        rec.RemoveTopicRecord(topic_id=TOPICS["b"]),
        rec.RegisterBrokerRecord(broker_id=4, incarnation_id=uuid.UUID(int=4), broker_epoch=4),
        rec.UnregisterBrokerRecord(broker_id=4, broker_epoch=4),
    ]
    assert {type(r) for r in history} == IMAGE_RECORD_TYPES
    image = build(history)
    assert image.brokers[2].in_controlled_shutdown and image.brokers[3].fenced and 4 not in image.brokers
    assert image.topic("a").partitions[0].adding == (3,) and "b" not in image.topic_ids
    rebuilt = replayed(image)
    assert contents(rebuilt) == contents(image)
    assert not rebuilt.brokers[2].active


# --- a snapshot's load from its frames (MetadataImage.apply_frames) ----------------------------------


@st.composite
def framed_partition_record(draw):
    """A PartitionRecord's frame at a version that can carry it, with tagged fields (the recovery state,
    ELR, last known ELR and tags no schema knows) and edge values (ids and epochs at the int32 ends)."""
    edges = st.sampled_from([0, 1, 2**31 - 1, -(2**31)])
    replicas = draw(_subset([1, 2, 3], min_size=1))
    elr, last_known = draw(st.none() | _subset([1, 2, 3])), draw(st.none() | _subset([1, 2, 3]))
    directories = [draw(st.sampled_from([MIGRATING, *DIRECTORIES])) for _ in replicas]
    if elr is not None or last_known is not None:
        version = 2
    elif all(d == MIGRATING for d in directories):
        version = draw(st.sampled_from([0, 1, 2]))
        directories = [] if version == 0 else directories
    else:
        version = draw(st.sampled_from([1, 2]))
    record = rec.PartitionRecord(
        partition_id=draw(st.integers(0, 1) | edges), topic_id=TOPICS[draw(st.sampled_from(sorted(TOPICS)))],
        replicas=replicas, isr=draw(_subset(replicas, min_size=1)), removing_replicas=draw(_subset(replicas)),
        adding_replicas=draw(_subset(replicas)), leader=draw(st.sampled_from([-1, *replicas])),
        leader_recovery_state=draw(st.sampled_from([0, 1])), leader_epoch=draw(st.integers(0, 9) | edges),
        partition_epoch=draw(edges), directories=directories, eligible_leader_replicas=elr, last_known_elr=last_known,
        unknown_tagged_fields=tuple(sorted(draw(st.lists(st.tuples(st.integers(3, 200), st.binary(max_size=3)),
                                                         max_size=2, unique_by=lambda tag: tag[0])))))
    frame = rec.encode_frame(record, version)
    assert rec.decode_frame(frame) == (record, version)  # the generated codec's reading of it
    return frame


alike_partitions = st.builds(  # records alike but for their partition id: what the frames path shares
    lambda frame, ids: [frame[:3] + index.to_bytes(4, "big", signed=True) + frame[7:] for index in ids],
    framed_partition_record(), st.lists(st.integers(0, 5), min_size=1, max_size=4))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(one_record | framed_partition_record() | alike_partitions, max_size=40), st.integers(1, 8))
def test_the_frames_path_builds_the_image_the_decoded_records_build(history, batch):
    """``apply_frames`` (how a controller loads a snapshot) against ``apply`` of the decoded records, for
    any history of framed records applied a batch at a time: the same image, the index of reassigning
    partitions included, and each frame decodes to what the generated codec decodes it to."""
    frames = TOPICS_FIRST_FRAMES + [f for item in history
                                    for f in (item if isinstance(item, list) else [item if isinstance(item, bytes)
                                                                                   else rec.encode_frame(item)])]
    frames = without_refused(frames)
    decoded = build(rec.decode_frame(frame)[0] for frame in frames)
    loaded = MetadataImage()
    for start in range(0, len(frames), batch):
        loaded.apply_frames(frames[start:start + batch], 7)
    assert contents(loaded) == contents(decoded)
    assert reassigning_index(loaded) == reassigning_scan(loaded) == reassigning_index(decoded)
    assert loaded.offset == 7
    again = MetadataImage()  # a second image takes the states the first one's frames left behind
    again.apply_frames(frames, 7)
    assert contents(again) == contents(decoded)


TOPICS_FIRST_FRAMES = [rec.encode_frame(record) for record in TOPICS_FIRST]


def without_refused(frames: list[bytes]) -> list[bytes]:
    """The frames a log can hold: less the changes to partitions not registered where they come."""
    image, kept = MetadataImage(), []
    for offset, frame in enumerate(frames):
        try:
            image.apply(rec.decode_frame(frame)[0], offset)
        except UnknownPartitionError:
            continue
        kept.append(frame)
    return kept


def test_the_frames_path_refuses_what_the_codec_refuses():
    """A frame of no known type or version, or a PartitionRecord cut short, raises the codec's errors
    (the snapshot's reader names the file and offset; tests/wings/raft/test_raft_recovery_edges.py)."""
    a = TOPICS["a"]
    good = rec.encode_frame(rec.PartitionRecord(partition_id=0, topic_id=a, replicas=[1], isr=[1], leader=1))
    image = MetadataImage()
    image.apply_frames(TOPICS_FIRST_FRAMES + [good], 3)
    for bad, error in ((b"\x01\x03\x09" + good[3:], rec.UnknownRecordType), (good[:-1], MalformedError),
                       (good[:5], MalformedError), (good + b"\x00", MalformedError)):
        with pytest.raises(error):
            image.apply_frames([bad], 4)
    assert image.topic("a").partitions[0].replicas == (1,)


@settings(max_examples=200, deadline=None)
@given(partition_record())
def test_the_fast_state_builder_builds_what_the_plain_rules_build(record):
    """``fast_paths.PartitionStates.from_record`` (positional) against ``build_partition_state``."""
    from kraftwire.server.metadata.fast_paths import PartitionStates
    from kraftwire.server.metadata.partition_state import build_partition_state
    built = PartitionStates().from_record(record)
    assert type(built) is PartitionState and built == build_partition_state(record)
