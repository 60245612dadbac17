"""The durable metadata log on real files: commits, epochs, group commit, segments and indexes,
quorum-state, snapshots and retention."""
from __future__ import annotations

import asyncio
import json
import uuid

import pytest

from kraftwire.codec import records as rec
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.raft import LogFailedError, RaftConfig, RaftLog, StorageError
from kraftwire.server.raft.snapshots import read_snapshot, snapshot_control, write_snapshot
from kraftwire.server.raft.voters import ReplicaKey, SnapshotVoters, VoterNode, VoterSet
from kraftwire.server.raft.storage import kafka_uuid
from kraftwire.codec.log_layout import index_entries
from tests.raft_helpers import NODE_ID, RandomHistory, batches, open_log, partition_dir, segments, state


def topic_write(name: str, partitions: int = 3) -> list[tuple]:
    topic_id = uuid.uuid4()
    return [(rec.TopicRecord(name=name, topic_id=topic_id), None)] + [
        (rec.PartitionRecord(partition_id=i, topic_id=topic_id, replicas=[1], isr=[1], leader=1), 1)
        for i in range(partitions)]


async def test_appends_commit_and_survive_a_restart(tmp_path):
    log, image = await open_log(tmp_path)
    assert (log.epoch, log.high_watermark, log.end_offset) == (1, 1, 1)  # the LeaderChange of epoch 1
    base, committed = log.append(topic_write("a"))
    assert base == 1
    assert await committed == 4
    assert log.high_watermark == 5 and image.topic("a") is not None
    await log.close()

    log, image = await open_log(tmp_path)
    assert log.epoch == 2
    assert len(image.topic("a").partitions) == 3
    assert log.high_watermark == log.end_offset == 6  # a second LeaderChange at offset 5
    await log.close()


async def test_appends_after_close_fail(tmp_path):
    log, _ = await open_log(tmp_path)
    committed = log.append(topic_write("before"))[1]
    await log.close()
    assert await committed == 4  # what was appended before close still commits
    with pytest.raises(LogFailedError, match="closed"):
        await log.append(topic_write("after"))[1]


async def test_epoch_rises_on_every_start_and_leader_change_opens_it(tmp_path):
    for expected in (1, 2, 3):
        log, _ = await open_log(tmp_path)
        assert log.epoch == expected
        await log.close()
    quorum_state = json.loads((partition_dir(tmp_path) / "quorum-state").read_text())
    assert quorum_state == {"clusterId": "", "leaderId": NODE_ID, "leaderEpoch": 3, "votedId": NODE_ID,
                            "appliedOffset": 0, "currentVoters": [{"voterId": NODE_ID}], "data_version": 0}
    data = segments(tmp_path)[0].read_bytes()
    leader_changes = [rec.read_batch(data, position) for position, *_ in batches(segments(tmp_path)[0])]
    assert [(b.base_offset, b.partition_leader_epoch, b.is_control) for b in leader_changes] == [
        (0, 1, True), (1, 2, True), (2, 3, True)]
    message = rec.decode_value(leader_changes[2], leader_changes[2].records[0])
    assert message == rec.LeaderChangeMessage(version=0, leader_id=NODE_ID,
                                              voters=[rec.LeaderChangeMessage.Voter(voter_id=NODE_ID)],
                                              granting_voters=[rec.LeaderChangeMessage.Voter(voter_id=NODE_ID)])


async def test_commits_reach_listeners_and_futures_only_once_fsynced(tmp_path):
    log, _ = await open_log(tmp_path)
    seen = []  # (last offset delivered, fsync'd bytes of the active segment then)
    log.add_commit_listener(lambda committed: seen.append((committed[-1][0], log.synced_lengths()[segments(tmp_path)[-1].name])))
    futures = [log.append(topic_write(f"t{i}", 1))[1] for i in range(20)]
    for future in futures:
        last = await future
        assert last < log.high_watermark
    await log.close()
    ends = {base + count - 1: position + size for position, size, base, count in batches(segments(tmp_path)[0])}
    assert seen and all(ends[offset] <= synced for offset, synced in seen)


async def test_group_commit_shares_fsyncs_among_concurrent_writers(tmp_path):
    log, _ = await open_log(tmp_path)

    async def writer(n: int) -> None:
        for i in range(10):
            await log.append(topic_write(f"w{n}-{i}", 1))[1]

    fsyncs_before = log.fsync_count
    await asyncio.gather(*(writer(n) for n in range(64)))
    grouped = log.fsync_count - fsyncs_before
    await log.close()
    assert log.commit_count >= 640
    assert grouped * 8 <= 640, f"{grouped} fsyncs for 640 commits"

    log, _ = await open_log(tmp_path / "solo", group_commit=False)
    fsyncs_before = log.fsync_count
    await asyncio.gather(*(log.append(topic_write(f"s{i}", 1))[1] for i in range(64)))
    assert log.fsync_count - fsyncs_before == 64
    await log.close()


async def test_segments_roll_by_size_with_kafka_offset_indexes(tmp_path):
    log, _ = await open_log(tmp_path, segment_bytes=20_000)
    for i in range(150):
        await log.append(topic_write(f"topic-{i:04d}", 4))[1]
    await log.close()
    files = segments(tmp_path)
    assert len(files) >= 3
    expected_base = 0
    for path in files:
        found = batches(path)
        assert int(path.stem) == expected_base == found[0][2]
        assert path.stat().st_size <= 20_000
        expected_base = found[-1][2] + found[-1][3]
        # Kafka's rule: an entry for a batch once more than 4096 bytes went in since the last entry,
        # holding that batch's last offset and its start position.
        expected_index, since = [], 0
        for position, size, base, count in found:
            if since > 4096:
                expected_index.append((base + count - 1 - int(path.stem), position))
                since = 0
            since += size
        assert index_entries(path.with_suffix(".index").read_bytes()) == expected_index
        assert expected_index


async def test_damaged_quorum_state_stops_start_up_and_a_leftover_tmp_is_ignored(tmp_path):
    log, _ = await open_log(tmp_path)
    await log.close()
    directory = partition_dir(tmp_path)
    (directory / "quorum-state.tmp").write_text('{"garbage')
    log, _ = await open_log(tmp_path)
    assert log.epoch == 2
    await log.close()
    for damaged in ['{"clusterId":"","leaderId":3000,"leaderEp', "not json at all", "",
                    '{"clusterId":"","leaderId":3000,"leaderEpoch":"seven","data_version":0}', "[1, 2]"]:
        (directory / "quorum-state").write_text(damaged)
        with pytest.raises(StorageError, match="quorum-state"):
            await RaftLog(tmp_path, NODE_ID).open()


async def test_snapshots_are_taken_by_record_count_and_restart_replays_only_the_tail(tmp_path):
    history = RandomHistory(seed=7)
    log, image = await open_log(tmp_path, snapshot_every_records=300)
    for _ in range(400):
        await log.append(history.next_write())[1]
    await asyncio.sleep(0)
    await log.close()
    snapshots = sorted(partition_dir(tmp_path).glob("*.checkpoint"))
    assert snapshots and not list(partition_dir(tmp_path).glob("*.part"))
    end_offset, epoch = (int(part) for part in snapshots[-1].stem.split("-"))
    assert epoch == 1

    log, reopened = await open_log(tmp_path)
    replayed = list(log.replay())
    assert replayed[0][0] == end_offset - 1  # snapshot records sit at the snapshot's position
    assert all(offset >= end_offset for offset, _ in replayed if offset != end_offset - 1)
    assert state(reopened) == state(image) == state(history.image)
    await log.close()


async def test_retention_archives_segments_wholly_below_the_newest_snapshot(tmp_path):
    archive = tmp_path / "archive"
    log, image = await open_log(tmp_path / "data", segment_bytes=8_000, retention_bytes=1, archive_dir=archive)
    for i in range(120):
        await log.append(topic_write(f"r{i:03d}", 2))[1]
    snapshot = await log.snapshot()
    before = state(image)
    await log.close()
    kept = segments(tmp_path / "data")
    archived = sorted(archive.glob("*.log"))
    assert archived and int(kept[0].stem) <= snapshot.end_offset
    assert int(archived[-1].stem) < int(kept[0].stem)
    assert all(p.with_suffix(".index").exists() for p in archived)

    log, image = await open_log(tmp_path / "data")
    assert state(image) == before
    await log.close()


async def test_retention_by_time_deletes_old_segments_below_the_snapshot_and_older_snapshots(tmp_path):
    log, image = await open_log(tmp_path, segment_bytes=8_000, retention_ms=0)
    for i in range(60):
        await log.append(topic_write(f"old{i:03d}", 2))[1]
    first = await log.snapshot()
    for i in range(60):
        await log.append(topic_write(f"new{i:03d}", 2))[1]
    second = await log.snapshot()
    before = state(image)
    await log.close()
    bases = [int(p.stem) for p in segments(tmp_path)]
    assert bases[0] > first.end_offset  # every segment wholly below the newest snapshot is gone
    assert bases[0] <= second.end_offset and all(base > second.end_offset for base in bases[1:])
    assert [p.name for p in partition_dir(tmp_path).glob("*.checkpoint")] == [second.file_name]
    log, image = await open_log(tmp_path)
    assert state(image) == before
    await log.close()


def dynamic_log(data_dir, *voter_ids: int, **config) -> RaftLog:
    """Node 3000's log of a dynamic quorum (kraft.version 1) whose bootstrap voters are ``voter_ids``."""
    voters = VoterSet(tuple(VoterNode(ReplicaKey(i, uuid.UUID(int=i)), (("CONTROLLER", "localhost", 9000 + i),))
                            for i in voter_ids))
    return RaftLog(data_dir, NODE_ID, RaftConfig(**config), voters=voters, kraft_version=1,
                   directory_id=uuid.UUID(int=NODE_ID))


async def test_a_dynamic_quorums_snapshot_holds_its_voter_set_and_a_restart_needs_no_log_below_it(tmp_path):
    log = dynamic_log(tmp_path, NODE_ID, segment_bytes=2_000, retention_bytes=1)  # retention with kraft.version 1
    await log.open()
    image = MetadataImage()
    log.add_commit_listener(lambda committed: [image.apply(r, o) for o, r in committed])
    log.snapshot_source = image.snapshot_batches
    for i in range(60):
        await log.append(topic_write(f"d{i:02d}", 2))[1]
    snapshot = await log.snapshot()
    await log.close()
    snapshot_file = partition_dir(tmp_path) / snapshot.file_name
    held = SnapshotVoters.of_records(snapshot_control(snapshot_file))
    assert held == SnapshotVoters(1, log.core.voter_set) and held.voters.ids == (NODE_ID,)
    assert int(segments(tmp_path)[0].stem) > 2  # the first batch, with the bootstrap VotersRecord, is deleted

    # Started with other bootstrap voters, the log knows its own set from the snapshot.
    log = dynamic_log(tmp_path, NODE_ID, 3001)
    await log.open()
    assert (log.voters, log.kraft_version, log.core.log_start) == ((NODE_ID,), 1, snapshot.end_offset)
    await log.close()


async def test_a_snapshot_without_voter_records_from_an_older_kraftwire_takes_them_from_the_log_below(tmp_path):
    log = dynamic_log(tmp_path, NODE_ID)
    await log.open()
    image = MetadataImage()
    log.add_commit_listener(lambda committed: [image.apply(r, o) for o, r in committed])
    log.snapshot_source = image.snapshot_batches
    for i in range(5):
        await log.append(topic_write(f"old{i}"))[1]
    snapshot = await log.snapshot()
    await log.close()
    directory = partition_dir(tmp_path)
    path = directory / snapshot.file_name  # written again as kraftwire wrote it before: no voter records
    records = [(record, None) for record in read_snapshot(path)]
    path.unlink()
    write_snapshot(directory, snapshot, 0, 0, records)
    assert SnapshotVoters.of_records(snapshot_control(path)) == SnapshotVoters()

    log = dynamic_log(tmp_path, NODE_ID, 3001)
    await log.open()
    assert log.voters == (NODE_ID,) and log.core.log_start == snapshot.end_offset
    await log.close()


async def test_a_log_started_with_static_voters_stays_static_when_opened_at_kraft_version_1(tmp_path):
    """As ``kafka-storage format`` fixes kraft.version once, the first start does: a data directory from
    a static quorum (records, no KRaftVersionRecord) keeps it when kraft.version 1 becomes the default."""
    log, _image = await open_log(tmp_path)
    await log.append(topic_write("static"))[1]
    await log.close()
    log = dynamic_log(tmp_path, NODE_ID)
    await log.open()
    assert (log.kraft_version, log.core.voter_set) == (0, VoterSet.static([NODE_ID]))
    await log.append(topic_write("still-static"))[1]
    await log.close()

    fresh = dynamic_log(tmp_path / "new", NODE_ID)  # an empty directory takes the kraft.version asked for
    await fresh.open()
    assert fresh.kraft_version == 1
    await fresh.close()


async def test_a_dynamic_quorums_quorum_state_is_kafkas_version_1(tmp_path):
    """With kraft.version 1 quorum-state is written in Kafka's version 1 shape: no currentVoters (they are
    in the log), the vote's directory id beside its node id."""
    for expected in (1, 2):
        log = dynamic_log(tmp_path, NODE_ID)
        await log.open()
        assert log.epoch == expected
        await log.close()
    quorum_state = json.loads((partition_dir(tmp_path) / "quorum-state").read_text())
    assert quorum_state == {"leaderId": NODE_ID, "leaderEpoch": 2, "votedId": NODE_ID,
                            "votedDirectoryId": kafka_uuid(uuid.UUID(int=NODE_ID)), "data_version": 1}
