"""The audit's pure-Python replay (no Spark): logs written with the codec into real files, read back
through the splitter and reader, replayed, and the tables checked row by row."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid

import pyarrow.parquet as pq
import pytest

from kraftwire.audit import local, splits, tables
from kraftwire.audit.options import parse_bound
from kraftwire.audit.rows import COLUMNS, Window
from kraftwire.audit.logwriter import LogWriter, write_snapshot
from audit_logs import T0, Log, dir_of, dirs, partition, planted_log
from kraftwire.codec import log_layout
from kraftwire.codec import records as r

TOPIC = uuid.UUID("11111111-2222-4333-8444-555555555555")
CLUSTER_DEFAULT = ""


def audit(tmp_path, build, window=Window(), **writer_options):
    directory = tmp_path / "log"
    log = Log(directory, **writer_options)
    log.leader_change()
    for broker in range(0, 7):
        log.broker(broker)
    build(log)
    log.close()
    return local.run([str(directory)], str(tmp_path / "out"), window)


def only(rows, **match):
    found = [row for row in rows if all(row[k] == v for k, v in match.items())]
    assert len(found) == 1, found
    return found[0]


# --- invariants and damage -------------------------------------------------------------------------


def test_each_planted_violation_is_reported_once_at_its_offset(tmp_path):
    planted = planted_log(tmp_path / "log")
    result = local.run([str(tmp_path / "log")], str(tmp_path / "out"))
    violations = result.rows("violations")
    assert sorted((v["kind"], v["offset"]) for v in violations) == sorted(planted.found.items())
    for kind, index in planted.partition.items():
        assert only(violations, kind=kind)["partition"] == index
    corrupt = only(violations, kind="corrupt_batch")
    assert (corrupt["file"], corrupt["position"]) == (planted.corrupt_file, planted.corrupt_position)
    assert "CRC mismatch" in corrupt["detail"]
    torn = only(violations, kind="torn_batch")
    assert (torn["file"], torn["position"]) == (planted.torn_file, planted.torn_position)
    assert only(violations, kind="offset_gap")["detail"] == (
        f"offsets {planted.found['offset_gap']}..{planted.found['offset_gap'] + 3} are missing")
    # the records around the damage were still read and replayed
    assert result.log["end_offset"] == planted.last_offset + 1


def test_index_aligned_splits_and_rolled_segments_give_the_same_tables(tmp_path):
    planted_log(tmp_path / "one")
    planted_log(tmp_path / "many", segment_bytes=1500, index_interval_bytes=200)
    assert len(list((tmp_path / "many").glob("*.log"))) >= 3
    cut = splits.plan([str(tmp_path / "many")], split_bytes=400)
    assert len(cut.splits) > len(list((tmp_path / "many").glob("*.log")))
    assert all(s.start == 0 or s.start in _index_positions(tmp_path / "many" / s.name) for s in cut.splits)
    whole = local.run([str(tmp_path / "one")], str(tmp_path / "out1"))
    pieces = local.run([str(tmp_path / "many")], str(tmp_path / "out2"), split_bytes=400)
    for table in COLUMNS:
        assert _without_files(table, whole.rows(table)) == _without_files(table, pieces.rows(table)), table
    assert whole.counts == pieces.counts


def _index_positions(segment_path):
    return {position for _, position in log_layout.index_entries(segment_path.with_suffix(".index").read_bytes())}


def _without_files(table, rows):
    """The rows, without the file and byte position of findings (which differ when segments roll)."""
    if table == "violations":
        rows = [dict(row, file=None, position=None) for row in rows]
    return sorted(rows, key=repr)


def test_bad_index_entries_are_reported_and_not_used(tmp_path):
    planted = planted_log(tmp_path / "log", index_interval_bytes=200)
    index = next((tmp_path / "log").glob("*.index"))
    shifted = [(offset, position + 3) for offset, position in log_layout.index_entries(index.read_bytes())]
    index.write_bytes(b"".join(log_layout.INDEX_ENTRY.pack(*entry) for entry in shifted))  # each points mid-batch
    result = local.run([str(tmp_path / "log")], str(tmp_path / "out"), split_bytes=300)
    bad = [v for v in result.rows("violations") if v["kind"] == "bad_index_entry"]
    assert bad and all(v["file"] == index.name for v in bad)
    assert result.log["splits"] == 1
    assert sorted((v["kind"], v["offset"]) for v in result.rows("violations") if v["kind"] != "bad_index_entry") == (
        sorted(planted.found.items()))


# --- reassignments ---------------------------------------------------------------------------------


def test_reassignment_completes_with_kafka_epochs(tmp_path):
    """Kafka's testReassignPartitions shape: [3,2,1] led by 3 moves to [0,2,1]."""
    marks = {}

    def build(log):
        log.put(r.TopicRecord(name="t", topic_id=TOPIC), partition(TOPIC, 0, [3, 2, 1]))
        marks["start"], marks["end"] = log.reassign(TOPIC, 0, (1000, 4000, 4500), [0, 2, 1, 3], adding=[0],
                                                    removing=[3], caught_up=[3, 2, 1, 0], leader=0)

    result = audit(tmp_path, build)
    ra = only(result.rows("reassignments"))
    assert ra == {"topic": "t", "topic_id": str(TOPIC), "partition": 0, "start_offset": marks["start"],
                  "start_time": T0 + 1000, "end_offset": marks["end"], "end_time": T0 + 4500, "outcome": "completed",
                  "original_replicas": (3, 2, 1), "target_replicas": (0, 2, 1), "final_replicas": (0, 2, 1),
                  "adding": (0,), "removing": (3,), "rf_before": 3, "rf_after": 3, "duration_ms": 3500}
    states = pq.read_table(tmp_path / "out" / "parquet" / "partition_states").to_pylist()
    assert [(s["leader"], s["leader_epoch"], s["partition_epoch"]) for s in states] == [
        (3, 0, 0), (3, 0, 1), (3, 0, 2), (0, 1, 3)]
    assert states[1]["adding"] == [0] and states[1]["removing"] == [3]
    assert states[-1]["directories"] == [str(d) for d in dirs([0, 2, 1])]
    assert result.rows("rf_changes") == [] and result.rows("violations") == []


def test_cancel_reverts_to_replicas_minus_adding(tmp_path):
    """Kafka's testCancelReassignPartitions: R [1,2,3,4,0], AR [0,1], ISR [4,2], leader 4."""
    def build(log):
        log.put(r.TopicRecord(name="t", topic_id=TOPIC), partition(TOPIC, 0, [2, 3, 4], isr=[4, 2], leader=4))
        log.at(1000)
        log.move(TOPIC, 0, [1, 2, 3, 4, 0], adding=[0, 1])
        log.at(3000)
        log.move(TOPIC, 0, [2, 3, 4], leader=4, adding=[])

    result = audit(tmp_path, build)
    ra = only(result.rows("reassignments"))
    assert (ra["outcome"], ra["original_replicas"], ra["target_replicas"], ra["final_replicas"], ra["duration_ms"]) == (
        "cancelled", (2, 3, 4), (1, 2, 3, 4, 0), (2, 3, 4), 2000)
    assert (ra["adding"], ra["removing"], ra["rf_before"], ra["rf_after"]) == ((0, 1), (), 3, 3)
    assert result.rows("rf_changes") == []


def test_a_new_target_mid_flight_supersedes_and_the_new_one_completes(tmp_path):
    """Kafka's testReassignPartitionsHandlesNewReassignmentThatRemovesPreviouslyAddingReplicas."""
    marks = {}

    def build(log):
        log.put(r.TopicRecord(name="t", topic_id=TOPIC), partition(TOPIC, 0, [0, 1]))
        log.at(1000)
        marks["first"] = log.move(TOPIC, 0, [2, 3, 0, 1], adding=[2, 3], removing=[0, 1])
        log.change(TOPIC, 0, isr=[0, 1, 2], leader=2)
        log.at(2000)
        marks["second"] = log.move(TOPIC, 0, [4, 5, 0, 1, 2, 3], adding=[4, 5], removing=[0, 1, 2, 3])
        log.at(5000)
        marks["end"] = log.move(TOPIC, 0, [4, 5], isr=[4, 5], leader=4, adding=[], removing=[])

    rows = audit(tmp_path, build).rows("reassignments")
    assert [(r["outcome"], r["start_offset"], r["end_offset"], r["original_replicas"], r["target_replicas"],
             r["final_replicas"]) for r in rows] == [
        ("superseded", marks["first"], marks["second"], (0, 1), (2, 3), None),
        ("completed", marks["second"], marks["end"], (0, 1), (4, 5), (4, 5))]
    assert rows[1]["duration_ms"] == 3000 and rows[0]["rf_after"] is None


def test_a_removal_that_completes_at_once_changes_the_rf(tmp_path):
    marks = {}

    def build(log):
        log.put(r.TopicRecord(name="t", topic_id=TOPIC), partition(TOPIC, 0, [1, 2, 3]))
        log.at(1000)
        marks["shrink"] = log.move(TOPIC, 0, [1, 2], isr=[1, 2], leader=1)
        log.at(2000)
        marks["grow"] = log.move(TOPIC, 0, [1, 2, 5], adding=[5])
        log.at(9000)
        marks["done"] = log.change(TOPIC, 0, isr=[1, 2, 5], adding_replicas=[])

    result = audit(tmp_path, build)
    shrink, grow = result.rows("reassignments")
    assert (shrink["start_offset"], shrink["end_offset"], shrink["outcome"], shrink["duration_ms"]) == (
        marks["shrink"], marks["shrink"], "completed", 0)
    assert (grow["outcome"], grow["final_replicas"], grow["rf_before"], grow["rf_after"]) == (
        "completed", (1, 2, 5), 2, 3)
    assert [(c["offset"], c["rf_before"], c["rf_after"], c["replicas_before"], c["replicas_after"],
             c["reassignment_start_offset"], c["reassignment_outcome"]) for c in result.rows("rf_changes")] == [
        (marks["shrink"], 3, 2, (1, 2, 3), (1, 2), marks["shrink"], "completed"),
        (marks["done"], 2, 3, (1, 2), (1, 2, 5), marks["grow"], "completed")]


def test_running_and_deleted_reassignments(tmp_path):
    other = uuid.UUID(int=99)
    marks = {}

    def build(log):
        log.put(r.TopicRecord(name="t", topic_id=TOPIC), partition(TOPIC, 0, [1, 2]))
        log.put(r.TopicRecord(name="gone", topic_id=other), partition(other, 0, [1, 2]))
        log.at(1000)
        log.move(TOPIC, 0, [3, 1, 2], adding=[3])
        log.move(other, 0, [3, 1, 2], adding=[3])
        log.at(3000)
        marks["delete"] = log.put(r.RemoveTopicRecord(topic_id=other))
        marks["late"] = log.change(other, 0, isr=[1])

    result = audit(tmp_path, build)
    running = only(result.rows("reassignments"), topic="t")
    assert (running["outcome"], running["end_offset"], running["duration_ms"]) == ("running", None, None)
    deleted = only(result.rows("reassignments"), topic="gone")
    assert (deleted["outcome"], deleted["end_offset"], deleted["end_time"]) == ("deleted", marks["delete"], T0 + 3000)
    late = only(result.rows("violations"))
    assert (late["kind"], late["offset"], late["topic"]) == ("unknown_topic", marks["late"], "gone")  # its last name


def test_kafka_quirk_target_back_to_original_gets_stuck_until_cancelled(tmp_path):
    """Reference §2.5: a new target equal to the original leaves AR = RR, which never completes."""
    marks = {}

    def build(log):
        log.put(r.TopicRecord(name="t", topic_id=TOPIC), partition(TOPIC, 0, [1, 2, 3]))
        log.move(TOPIC, 0, [4, 5, 6, 1, 2, 3], adding=[4, 5, 6], removing=[1, 2, 3])
        marks["quirk"] = log.move(TOPIC, 0, [1, 2, 3, 4, 5, 6], removing=[4, 5, 6])
        marks["cancel"] = log.move(TOPIC, 0, [1, 2, 3], leader=1, adding=[], removing=[])

    result = audit(tmp_path, build)
    assert [r["outcome"] for r in result.rows("reassignments")] == ["superseded", "cancelled"]
    overlap = only(result.rows("violations"))
    assert (overlap["kind"], overlap["offset"]) == ("adding_removing_overlap", marks["quirk"])


def test_cancel_after_a_new_target_reverts_the_kafka_way_and_grows_the_rf(tmp_path):
    """Reference §2.5: the first reassignment's adding replica becomes a removing one; a cancel then
    reverts to replicas minus adding of the latest state, which keeps it: RF 3 -> 4."""
    marks = {}

    def build(log):
        log.put(r.TopicRecord(name="t", topic_id=TOPIC), partition(TOPIC, 0, [1, 2, 3]))
        log.move(TOPIC, 0, [1, 2, 4, 3], adding=[4], removing=[3])
        log.move(TOPIC, 0, [1, 2, 5, 3, 4], adding=[5], removing=[3, 4])
        marks["cancel"] = log.move(TOPIC, 0, [1, 2, 3, 4], leader=1, adding=[], removing=[])

    result = audit(tmp_path, build)
    assert [(ra["outcome"], ra["original_replicas"], ra["final_replicas"]) for ra in result.rows("reassignments")] == [
        ("superseded", (1, 2, 3), None), ("cancelled", (1, 2, 3), (1, 2, 3, 4))]
    change = only(result.rows("rf_changes"))
    assert (change["offset"], change["rf_before"], change["rf_after"], change["reassignment_outcome"]) == (
        marks["cancel"], 3, 4, "cancelled")


# --- throttles, brokers, directories, counts -------------------------------------------------------


def test_throttles_removed_left_behind_and_unused(tmp_path):
    """Broker 5's rate is still needed at the end of the log (a reassignment to it is running), so it is
    not left behind; broker 4's is, though another reassignment is running elsewhere."""
    other = uuid.UUID(int=77)
    running = uuid.UUID(int=78)
    marks = {}

    def build(log):
        log.put(r.TopicRecord(name="t", topic_id=TOPIC), partition(TOPIC, 0, [1, 2, 3]))
        log.put(r.TopicRecord(name="doomed", topic_id=other), partition(other, 0, [1, 2]))
        marks["topic"] = log.config(2, "t", "leader.replication.throttled.replicas", "0:1,0:2,0:3")
        marks["rate"] = log.config(4, "4", "follower.replication.throttled.rate", "1000")
        log.config(4, "9", "leader.replication.throttled.rate", "1000")
        log.config(4, CLUSTER_DEFAULT, "leader.replication.throttled.rate", "5000")
        log.config(2, "doomed", "follower.replication.throttled.replicas", "*")
        log.config(2, "t", "retention.ms", "1000")  # not a throttle
        log.at(1000)
        log.move(TOPIC, 0, [4, 2, 3, 1], adding=[4], removing=[1])
        log.at(6000)
        log.move(TOPIC, 0, [4, 2, 3], isr=[2, 3, 4], leader=2, adding=[], removing=[])
        log.at(11000)
        marks["removed"] = log.config(2, "t", "leader.replication.throttled.replicas", None)
        log.config(4, CLUSTER_DEFAULT, "leader.replication.throttled.rate", None)
        log.at(20000)
        marks["deleted"] = log.put(r.RemoveTopicRecord(topic_id=other))
        log.at(25000)
        log.put(r.TopicRecord(name="u", topic_id=running), partition(running, 0, [1, 2, 3]))
        marks["rate5"] = log.config(4, "5", "follower.replication.throttled.rate", "1000")
        log.move(running, 0, [5, 2, 3, 1], adding=[5], removing=[1])
        log.at(30000)
        log.put(r.NoOpRecord())

    rows = {(t["resource_type"], t["resource_name"]): t for t in audit(tmp_path, build).rows("throttles")}
    assert len(rows) == 6
    topic = rows["topic", "t"]
    assert (topic["set_offset"], topic["removed_offset"], topic["removed_by"], topic["reassignments"],
            topic["last_reassignment_end_time"], topic["lingered_ms"], topic["left_behind"]) == (
        marks["topic"], marks["removed"], "deleted", 1, T0 + 6000, 5000, False)
    rate = rows["broker", "4"]
    assert (rate["config"], rate["value"], rate["reassignments"], rate["lingered_ms"], rate["left_behind"]) == (
        "follower.replication.throttled.rate", "1000", 1, 24000, True)
    needed = rows["broker", "5"]
    assert (needed["set_offset"], needed["removed_offset"], needed["reassignments"], needed["lingered_ms"],
            needed["left_behind"]) == (marks["rate5"], None, 1, None, False)
    unused = rows["broker", "9"]
    assert (unused["reassignments"], unused["lingered_ms"], unused["left_behind"]) == (0, 30000, True)
    default = rows["broker", CLUSTER_DEFAULT]
    assert (default["reassignments"], default["lingered_ms"], default["left_behind"]) == (1, 5000, False)
    doomed = rows["topic", "doomed"]
    assert (doomed["removed_offset"], doomed["removed_by"], doomed["left_behind"]) == (
        marks["deleted"], "topic_deleted", False)


def test_brokers_fencing_and_offline_directories(tmp_path):
    marks = {}

    def build(log):
        log.at(1000)
        marks["fence"] = log.put(r.BrokerRegistrationChangeRecord(broker_id=2, broker_epoch=102, fenced=1))
        marks["offline"] = log.put(r.BrokerRegistrationChangeRecord(broker_id=3, broker_epoch=103,
                                                                     log_dirs=[dirs([3])[0]]))
        log.at(2000)
        marks["unfence"] = log.put(r.BrokerRegistrationChangeRecord(broker_id=2, broker_epoch=102, fenced=-1))
        marks["shutdown"] = log.put(r.BrokerRegistrationChangeRecord(broker_id=5, broker_epoch=105,
                                                                      in_controlled_shutdown=1))
        marks["old"] = log.put(r.FenceBrokerRecord(id=6, epoch=106))
        marks["gone"] = log.put(r.UnregisterBrokerRecord(broker_id=6, broker_epoch=106))

    result = audit(tmp_path, build)
    events = [(b["offset"], b["broker_id"], b["event"], b["fenced"]) for b in result.rows("brokers")
              if b["offset"] >= marks["fence"]]
    assert events == [(marks["fence"], 2, "fenced", True), (marks["offline"], 3, "log_dirs_changed", False),
                      (marks["unfence"], 2, "unfenced", False), (marks["shutdown"], 5, "controlled_shutdown", False),
                      (marks["old"], 6, "fenced", True), (marks["gone"], 6, "unregistered", True)]
    offline = [(d["offset"], d["broker_id"], d["event"], d["cause"]) for d in result.rows("directories")
               if d["event"] == "offline"]
    assert offline == [(marks["offline"], 3, "offline", "broker_change"), (marks["gone"], 6, "offline", "unregistered"),
                       (marks["gone"], 6, "offline", "unregistered")]
    assert only(result.rows("directories"), broker_id=3, event="offline")["directory"] == str(dir_of(3, 1))


def test_under_replicated_and_leaderless_counts(tmp_path):
    marks = {}

    def build(log):
        log.put(r.TopicRecord(name="t", topic_id=TOPIC), partition(TOPIC, 0, [1, 2]), partition(TOPIC, 1, [2, 3]))
        log.at(1000)
        marks["shrink"] = log.change(TOPIC, 0, isr=[1])
        marks["offline"] = log.change(TOPIC, 1, isr=[3], leader=-1)
        log.at(2000)
        marks["back"] = log.change(TOPIC, 0, isr=[1, 2])

    rows = audit(tmp_path, build).rows("under_replicated")  # one row per time: both changes at 1 s
    assert [(u["offset"], u["timestamp"], u["under_replicated"], u["offline"]) for u in rows] == [
        (marks["offline"], T0 + 1000, 2, 1), (marks["back"], T0 + 2000, 1, 1)]


def test_directories_default_to_migrating_when_absent(tmp_path):
    def build(log):
        log.put(r.TopicRecord(name="t", topic_id=TOPIC), partition(TOPIC, 0, [1, 2], directories=[]))
        log.change(TOPIC, 0, replicas=[1, 2, 3], adding_replicas=[3])

    result = audit(tmp_path, build)
    states = pq.read_table(tmp_path / "out" / "parquet" / "partition_states").to_pylist()
    assert [s["directories"] for s in states] == [[str(uuid.UUID(int=0))] * 2, [str(uuid.UUID(int=0))] * 3]
    assert result.rows("violations") == []


# --- reading: windows, snapshots, several directories, output files ---------------------------------


def _build_moves(log, marks):
    log.put(r.TopicRecord(name="t", topic_id=TOPIC), partition(TOPIC, 0, [1, 2]), partition(TOPIC, 1, [2, 3]))
    for step in range(6):
        log.at(1000 * (step + 1))
        moved = [1, 2] if step % 2 else [3, 4]
        before = [3, 4] if step % 2 else [1, 2]
        marks.append(log.move(TOPIC, 0, moved + before, adding=moved, removing=before))
        log.change(TOPIC, 0, isr=before + moved)
        log.move(TOPIC, 0, moved, isr=moved, leader=moved[0], adding=[], removing=[])
        log.change(TOPIC, 1, isr=[2])
        log.change(TOPIC, 1, isr=[2, 3])


def test_window_by_offset_and_by_time(tmp_path):
    marks = []
    full = audit(tmp_path / "a", lambda log: _build_moves(log, marks))
    lo, hi = marks[2], marks[3] + 4
    by_offset = audit(tmp_path / "b", lambda log: _build_moves(log, []), Window(lo, hi))
    records = pq.read_table(tmp_path / "b" / "out" / "parquet" / "records").column("offset").to_pylist()
    assert sorted(records) == list(range(lo, hi + 1))
    assert [r["start_offset"] for r in by_offset.rows("reassignments")] == [marks[2], marks[3]]
    assert len(full.rows("reassignments")) == 6
    start, _ = parse_bound("2026-01-01T00:00:03Z")
    end, by_time = parse_bound("2026-01-01T00:00:04.000+00:00")
    assert by_time and end - start == 1000
    timed = audit(tmp_path / "c", lambda log: _build_moves(log, []), Window(start, end, True))
    assert [r["start_time"] for r in timed.rows("reassignments")] == [T0 + 3000, T0 + 4000]
    assert {u["timestamp"] for u in timed.rows("under_replicated")} <= {T0 + 3000, T0 + 4000}


def test_a_log_that_starts_at_a_snapshot(tmp_path):
    """The log from offset K on, with the snapshot at K, gives the same rows from K on as the whole log;
    a reassignment in flight at K starts at the snapshot."""
    marks = []
    whole = tmp_path / "whole"
    log = Log(whole)
    for broker in range(1, 5):
        log.broker(broker)
    _build_moves(log, marks)
    log.close()
    k = marks[3] + 1  # in the middle of the fourth move
    reference = local.run([str(whole)], str(tmp_path / "out1"))
    states = pq.read_table(tmp_path / "out1" / "parquet" / "partition_states").to_pylist()
    image = {s["partition"]: s for s in states if s["offset"] < k}  # the last state of each partition before k
    tail = tmp_path / "tail"
    tail.mkdir()
    snapshot_records = [log_record for log_record in _broker_records()] + [r.TopicRecord(name="t", topic_id=TOPIC)]
    for index, s in sorted(image.items()):
        snapshot_records.append(r.PartitionRecord(
            partition_id=index, topic_id=TOPIC, replicas=s["replicas"], isr=s["isr"], leader=s["leader"],
            removing_replicas=s["removing"], adding_replicas=s["adding"], leader_epoch=s["leader_epoch"],
            partition_epoch=s["partition_epoch"], directories=[uuid.UUID(d) for d in s["directories"]]))
    write_snapshot(tail, k, 1, T0 + 4000, snapshot_records)
    write_snapshot(tail, marks[1], 1, T0 + 2000, [])  # an older one, not reaching the log start
    with LogWriter(tail, base_offset=k) as w:
        for batch in _batches_from(whole, k):
            w.append(batch)
    result = local.run([str(tail)], str(tmp_path / "out2"))
    assert result.log["snapshot"] == f"{k:020d}-0000000001.checkpoint" and result.log["start_offset"] == k
    after = pq.read_table(tmp_path / "out2" / "parquet" / "partition_states").to_pylist()
    assert [s for s in after if s["offset"] >= k] == [s for s in states if s["offset"] >= k]
    assert {s["offset"] for s in after if s["offset"] < k} == {k - 1}
    in_flight = [ra for ra in result.rows("reassignments") if ra["end_offset"] >= k]
    expected = [ra for ra in reference.rows("reassignments") if ra["end_offset"] >= k]
    assert [ra["start_offset"] for ra in in_flight] == [k - 1] + [ra["start_offset"] for ra in expected[1:]]
    assert [ra[key] for ra in in_flight for key in ("end_offset", "outcome", "target_replicas")] == [
        ra[key] for ra in expected for key in ("end_offset", "outcome", "target_replicas")]
    assert result.rows("violations") == []


def _broker_records():
    return [r.RegisterBrokerRecord(broker_id=b, broker_epoch=100 + b, incarnation_id=uuid.UUID(int=b), fenced=False,
                                   log_dirs=dirs([b])) for b in range(1, 5)]


def _batches_from(directory, first_offset):
    data = b"".join(p.read_bytes() for p in sorted(directory.glob("*.log")))
    return [data[b.position:b.position + b.size] for b in r.iter_batches(data) if b.base_offset >= first_offset]


def test_archived_copies_and_overlapping_segments_are_read_once(tmp_path):
    marks = []
    source = tmp_path / "source"
    log = Log(source, segment_bytes=700)
    log.leader_change()
    _build_moves(log, marks)
    log.close()
    segments = sorted(source.glob("*.log"))
    assert len(segments) >= 4
    archive, live = tmp_path / "archive", tmp_path / "live"
    archive.mkdir()
    live.mkdir()
    for i, segment in enumerate(segments):
        for target in ([archive] if i < len(segments) // 2 else []) + ([live] if i >= len(segments) // 2 - 1 else []):
            shutil.copy(segment, target / segment.name)
    expected = local.run([str(source)], str(tmp_path / "out1"))
    result = local.run([str(archive), str(live)], str(tmp_path / "out2"))
    assert result.counts == expected.counts
    for table in COLUMNS:
        assert sorted(map(repr, result.rows(table))) == sorted(map(repr, expected.rows(table))), table
    assert result.log["records"] == expected.log["records"]


def test_json_lines_mirror_parquet_and_a_data_dir_is_accepted(tmp_path):
    planted_log(tmp_path / "data" / "__cluster_metadata-0")
    result = local.run([str(tmp_path / "data")], str(tmp_path / "out"))
    for table in COLUMNS:
        parquet = pq.read_table(tmp_path / "out" / "parquet" / table).to_pylist()
        lines = (tmp_path / "out" / "json" / table / "part-00000.jsonl").read_text().splitlines()
        assert len(parquet) == len(lines) == result.counts[table], table
        if lines:
            assert list(json.loads(lines[0])) == list(COLUMNS[table])
    first = json.loads((tmp_path / "out" / "json" / "records" / "part-00000.jsonl").read_text().splitlines()[5])
    assert first["record_type"] == "TopicRecord" and first["fields"] == {"name": "planted", "topic_id": str(
        uuid.UUID("00000000-0000-4000-8000-00000000beef"))}
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["violations"]["corrupt_batch"] == 1


def test_cli_local_audit_and_serve_does_not_load_spark(tmp_path):
    planted_log(tmp_path / "log")
    done = subprocess.run([sys.executable, "-m", "kraftwire", "audit", str(tmp_path / "log"), "--out",
                           str(tmp_path / "out"), "--local", "--from", "20", "--to", "30"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "violations: 9" in done.stdout and "reporting offset 20 .. 30" in done.stdout
    for wrong, message in (([str(tmp_path / "nowhere")], "no such directory"),
                           ([str(tmp_path / "log"), "--from", "12", "--to", "2026-01-01"], "both be offsets"),
                           ([str(tmp_path / "log"), "--from", "yesterday"], "neither an offset nor")):
        refused = subprocess.run([sys.executable, "-m", "kraftwire", "audit", *wrong, "--out", str(tmp_path / "x"),
                                  "--local"], capture_output=True, text=True, timeout=120)
        assert refused.returncode == 2 and message in refused.stderr and "Traceback" not in refused.stderr
    probe = ("import contextlib, io, sys, kraftwire.server.host.cli as cli\n"
             "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
             "    cli.main(['audit', '--help'])\n"
             "heavy = ('pyspark', 'pyarrow', 'pandas', 'matplotlib')\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert loaded.stdout.strip() == "[]", loaded.stderr


def test_an_empty_directory_gives_empty_tables(tmp_path):
    (tmp_path / "log").mkdir()
    result = local.run([str(tmp_path / "log")], str(tmp_path / "out"))
    assert set(result.counts.values()) == {0} and result.log["records"] == 0
    for table in COLUMNS:
        assert pq.read_table(tmp_path / "out" / "parquet" / table).num_rows == 0, table


def test_the_readers_load_no_replay_logic():
    probe = ("import sys, kraftwire.audit.reader, kraftwire.audit.splits\n"
             "print(sorted(m for m in sys.modules if m.startswith('kraftwire.audit.')))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert loaded.returncode == 0, loaded.stderr
    modules = eval(loaded.stdout)
    assert "kraftwire.audit.rows" in modules
    assert not {"kraftwire.audit.partition_replay", "kraftwire.audit.global_replay",
                "kraftwire.audit.joins"} & set(modules), modules


def test_a_throttle_row_holds_the_value_set_at_its_offset(tmp_path):
    marks = {}

    def build(log):
        log.put(r.TopicRecord(name="t", topic_id=TOPIC), partition(TOPIC, 0, [1, 2, 3]))
        marks["first"] = log.config(4, "4", "follower.replication.throttled.rate", "1000")
        log.at(1000)
        marks["raised"] = log.config(4, "4", "follower.replication.throttled.rate", "2000")
        log.config(4, "4", "follower.replication.throttled.rate", "2000")  # the same value again
        log.at(2000)
        marks["removed"] = log.config(4, "4", "follower.replication.throttled.rate", None)

    rows = audit(tmp_path, build).rows("throttles")
    assert [(t["value"], t["set_offset"], t["set_time"], t["removed_offset"], t["removed_by"]) for t in rows] == [
        ("1000", marks["first"], T0, marks["raised"], "replaced"),
        ("2000", marks["raised"], T0 + 1000, marks["removed"], "deleted")]


def test_under_replicated_is_kafka_s_rule_replicas_minus_adding_against_the_isr(tmp_path):
    marks = {}

    def build(log):
        log.put(r.TopicRecord(name="t", topic_id=TOPIC), partition(TOPIC, 0, [1, 2]), partition(TOPIC, 1, [1, 2, 3]))
        log.at(1000)  # an RF increase in flight: broker 3 still copying is not a missing replica
        marks["grow"] = log.move(TOPIC, 0, [1, 2, 3], adding=[3])
        # a move from 1 to 4 while 1 has dropped out of the ISR: one of the replication factor's 3 is missing
        marks["move"] = log.move(TOPIC, 1, [4, 2, 3, 1], adding=[4], removing=[1], isr=[2, 3], leader=2)
        log.at(2000)
        marks["caught_up"] = log.change(TOPIC, 1, isr=[2, 3, 4])

    rows = audit(tmp_path, build).rows("under_replicated")
    assert [(u["offset"], u["under_replicated"]) for u in rows] == [(marks["move"], 1), (marks["caught_up"], 0)]


def test_a_missing_audit_extra_is_one_line_naming_the_install(tmp_path):
    planted_log(tmp_path / "log")
    probe = ("import sys\n"
             "sys.modules['pyarrow'] = None  # as if the audit extra were not installed\n"
             "from kraftwire.server.host.cli import main\n"
             "sys.exit(main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-c", probe, "audit", str(tmp_path / "log"), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr == "kraftwire audit needs pyarrow: pip install 'kraftwire[audit]'\n"
    assert not (tmp_path / "out").exists()


def test_tables_not_all_visible_under_out_are_named(tmp_path):
    planted_log(tmp_path / "log")
    result = local.run([str(tmp_path / "log")], str(tmp_path / "out"))
    parts = {table: (0,) for table in COLUMNS}
    assert tables.unseen(str(tmp_path / "out"), parts, result.counts) == []
    (tmp_path / "out" / "json" / "brokers" / "part-00000.jsonl").unlink()
    (tmp_path / "out" / "parquet" / "records" / "part-00000.parquet").unlink()
    counts = dict(result.counts, violations=result.counts["violations"] + 1)
    assert tables.unseen(str(tmp_path / "out"), parts, counts) == [
        f"{tmp_path / 'out' / 'parquet' / 'records' / 'part-00000.parquet'} is missing",
        f"records has 0 rows there, {result.counts['records']} were written",
        f"violations has {result.counts['violations']} rows there, {counts['violations']} were written",
        f"{tmp_path / 'out' / 'json' / 'brokers' / 'part-00000.jsonl'} is missing"]


def test_scram_secrets_never_reach_the_records_table(tmp_path):
    salt, stored, server = b"\x01salt-bytes-01", b"\x02stored-key-0002", b"\x03server-key-0003"

    def build(log):
        log.put(r.UserScramCredentialRecord(name="alice", mechanism=1, salt=salt, stored_key=stored,
                                            server_key=server, iterations=8192))
    audit(tmp_path, build)
    table = pq.read_table(tmp_path / "out" / "parquet" / "records").to_pylist()
    row = only(table, record_type="UserScramCredentialRecord")
    fields = json.loads(row["fields"])
    assert fields == {"name": "alice", "mechanism": 1, "salt": "(redacted)", "stored_key": "(redacted)",
                      "server_key": "(redacted)", "iterations": 8192}
    everything = b"".join(path.read_bytes() for path in (tmp_path / "out").rglob("*") if path.is_file())
    for secret in (salt, stored, server):
        assert secret not in everything and str(secret) .encode() not in everything
