"""The controller's JBOD decisions (KIP-858), checked against Kafka's own worked examples (reference §3).

Images are built by applying records; AssignReplicasToDirs, the heartbeat's OfflineLogDirs, broker
registration and directory choice run as pure decisions, without sockets.
"""
from __future__ import annotations

import uuid

from kraftwire.codec import records as rec
from kraftwire.codec.messages import AssignReplicasToDirsRequest, BrokerHeartbeatRequest, BrokerRegistrationRequest
from kraftwire.codec.constants import LEADER_UNCHANGED, LOST, MIGRATING, UNASSIGNED
from kraftwire.server.metadata.record_versions import version_for
from kraftwire.server.apis import api03_metadata as metadata
from kraftwire.server.controller import cluster_control as registration
from kraftwire.server.controller import cluster_control as heartbeat
from kraftwire.server.controller.replication import directories as assign
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.controller.partition_change import default_directory
from kraftwire.server.raft.storage import kafka_uuid, parse_kafka_uuid
from topic_records import add_topic, apply_all

Request = AssignReplicasToDirsRequest
CLUSTER_ID = "jbod-decisions"
D1B1, D2B1, D1B2 = (parse_kafka_uuid(t) for t in ("hO2YI5bgRUmByNPHiHxjNQ", "R3Gb1HLoTzuKMgAkH5Vtpw",
                                                   "TBGa8UayQi6KguqF5nC0sw"))
OFFLINE_DIR = parse_kafka_uuid("zvAf9BKZRyyrEWz4FX2nLA")
UNKNOWN_TOPIC = parse_kafka_uuid("nLU9hKNXSZuMe5PO2A4dVQ")


def image_with(dirs: dict[int, list[uuid.UUID]]) -> MetadataImage:
    """Brokers registered with the given directories (epoch 100 + id) and unfenced."""
    image = MetadataImage()
    for broker_id, broker_dirs in dirs.items():
        image.apply(rec.RegisterBrokerRecord(broker_id=broker_id, incarnation_id=uuid.UUID(int=broker_id + 1000),
                                             broker_epoch=100 + broker_id, fenced=False, log_dirs=broker_dirs),
                    image.offset + 1)
    return image


def assign_request(broker_id: int, epoch: int, entries) -> Request:
    """entries: [(directory, topic id, [partition indexes])], one directory entry per item, in order."""
    return Request(broker_id=broker_id, broker_epoch=epoch, directories=[
        Request.DirectoryData(id=d, topics=[Request.TopicData(topic_id=t, partitions=[
            Request.PartitionData(partition_index=p) for p in parts])]) for d, t, parts in entries])


def answers(response) -> list[tuple[uuid.UUID, uuid.UUID, int, int]]:
    return [(d.id, t.topic_id, p.partition_index, p.error_code)
            for d in response.directories for t in d.topics for p in t.partitions]


CHANGE_FIELDS = ("topic_id", "partition_id", "leader", "isr", "replicas", "removing_replicas", "adding_replicas",
                 "directories")


def changes(records) -> list[dict]:
    """Each PartitionChangeRecord's fields that are set (not null, not 'unchanged')."""
    return [{name: value for name in CHANGE_FIELDS
             if (value := getattr(record, name)) is not None and not (name == "leader" and value == LEADER_UNCHANGED)}
            for record in records]


def kafka_example():
    """testHandleAssignReplicasToDirs: broker 1 has {d1b1, d2b1}, broker 2 has {d1b2}."""
    image = image_with({1: [D1B1, D2B1], 2: [D1B2]})
    a = add_topic(image, "a", {i: {"replicas": [1, 2]} for i in range(3)})
    b = add_topic(image, "b", {i: {"replicas": [1, 2]} for i in range(2)})
    c = add_topic(image, "c", {0: {"replicas": [2]}})
    return image, a, b, c


# --- reserved ids and directory choice (§3.1, §3.3) -------------------------------------------------

def test_sentinels_have_kafkas_values():
    assert (kafka_uuid(MIGRATING), kafka_uuid(UNASSIGNED), kafka_uuid(LOST)) == (
        "AAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAg")


def test_sentinel_online_rules():
    image = image_with({1: [D1B1], 2: []})
    one_dir, no_dirs = image.brokers[1], image.brokers[2]
    assert one_dir.has_online_dir(UNASSIGNED) and one_dir.has_online_dir(MIGRATING)
    assert not one_dir.has_online_dir(LOST) and not one_dir.has_online_dir(OFFLINE_DIR)
    assert no_dirs.has_online_dir(OFFLINE_DIR) and not no_dirs.has_online_dir(LOST)


def test_default_directory_of_new_replicas():
    image = image_with({1: [D1B1, D2B1], 2: [D1B2], 3: []})
    assert [default_directory(image.brokers, b) for b in (1, 2, 3, 4)] == [UNASSIGNED, D1B2, MIGRATING, UNASSIGNED]
    add_topic(image, "t", {0: {"replicas": [1, 2, 3]}})
    assert image.topic("t").partitions[0].directories == (UNASSIGNED, D1B2, MIGRATING)


# --- AssignReplicasToDirs (§3.4) ---------------------------------------------------------------------

def test_kafka_worked_example():
    image, a, b, c = kafka_example()
    request = assign_request(1, 101, [
        (D1B1, a, [0]), (D2B1, a, [1]), (OFFLINE_DIR, a, [2]), (D1B1, b, [0]), (LOST, b, [1]),
        (D2B1, UNKNOWN_TOPIC, [1]), (D1B1, a, [137]), (D1B1, c, [0])])
    records, response = assign.decide(image, request)
    assert response.error_code == 0
    assert answers(response) == [
        (D1B1, a, 0, 0), (D2B1, a, 1, 0), (OFFLINE_DIR, a, 2, 0), (D1B1, b, 0, 0), (LOST, b, 1, 0),
        (D2B1, UNKNOWN_TOPIC, 1, 100), (D1B1, a, 137, 3), (D1B1, c, 0, 6)]
    assert changes(records) == [
        {"topic_id": a, "partition_id": 0, "directories": (D1B1, D1B2)},
        {"topic_id": a, "partition_id": 1, "directories": (D2B1, D1B2)},
        {"topic_id": a, "partition_id": 2, "directories": (OFFLINE_DIR, D1B2)},
        {"topic_id": b, "partition_id": 0, "directories": (D1B1, D1B2)},
        {"topic_id": b, "partition_id": 1, "directories": (LOST, D1B2)},
        # the partitions assigned to a directory that is not online: a second record, after all the others
        {"topic_id": a, "partition_id": 2, "isr": (2,), "leader": 2},
        {"topic_id": b, "partition_id": 1, "isr": (2,), "leader": 2}]
    apply_all(image, records)
    led_by_1 = {(t.name, i) for t, i, s in image.partitions() if s.leader == 1}
    in_sync_2 = {(t.name, i) for t, i, s in image.partitions() if 2 in s.isr}
    assert led_by_1 == {("a", 0), ("a", 1), ("b", 0)}
    assert in_sync_2 == {("a", 0), ("a", 1), ("a", 2), ("b", 0), ("b", 1), ("c", 0)}


def test_directory_only_change_bumps_the_partition_epoch_not_the_leader_epoch():
    image, a, _b, _c = kafka_example()
    before = image.topic("a").partitions[0]
    records, _ = assign.decide(image, assign_request(1, 101, [(D2B1, a, [0])]))
    apply_all(image, records)
    after = image.topic("a").partitions[0]
    assert (after.leader, after.leader_epoch, after.partition_epoch) == (
        before.leader, before.leader_epoch, before.partition_epoch + 1)
    assert after.directories == (D2B1, D1B2)


def test_assigning_the_current_directory_writes_nothing():
    image, a, _b, _c = kafka_example()
    apply_all(image, assign.decide(image, assign_request(1, 101, [(D1B1, a, [0])]))[0])
    records, response = assign.decide(image, assign_request(1, 101, [(D1B1, a, [0])]))
    assert records == [] and answers(response) == [(D1B1, a, 0, 0)]


def test_stale_or_unregistered_broker_fails_the_whole_request():
    image, a, _b, _c = kafka_example()
    for broker_id, epoch in ((1, 100), (1, -1), (7, 107)):
        records, response = assign.decide(image, assign_request(broker_id, epoch, [(D1B1, a, [0])]))
        assert records == [] and response.error_code == 77 and response.directories == ()
    assert assign.stale_epoch_message(image, 7, 107) == "No broker registration found for broker id 7"
    assert assign.stale_epoch_message(image, 1, 100) == "Expected broker epoch 101, but got broker epoch 100"


def test_the_directory_id_is_not_validated_and_sentinels_that_are_online_move_nothing():
    image, a, _b, _c = kafka_example()
    records, response = assign.decide(image, assign_request(1, 101, [
        (D1B2, a, [0]), (MIGRATING, a, [1]), (UNASSIGNED, a, [2])]))
    assert [code for *_, code in answers(response)] == [0, 0, 0]
    # d1b2 belongs to broker 2, so it is not an online directory of broker 1: leadership moves
    assert changes(records) == [
        {"topic_id": a, "partition_id": 0, "directories": (D1B2, D1B2)},
        {"topic_id": a, "partition_id": 1, "directories": (MIGRATING, D1B2)},
        {"topic_id": a, "partition_id": 0, "isr": (2,), "leader": 2}]


def test_duplicates_are_answered_each_and_computed_from_the_state_before_the_request():
    image, a, _b, _c = kafka_example()
    records, response = assign.decide(image, assign_request(1, 101, [(D1B1, a, [0]), (D2B1, a, [0, 0])]))
    assert answers(response) == [(D1B1, a, 0, 0), (D2B1, a, 0, 0), (D2B1, a, 0, 0)]
    assert [r.directories for r in records] == [(D1B1, D1B2), (D2B1, D1B2), (D2B1, D1B2)]
    apply_all(image, records)
    assert image.topic("a").partitions[0].partition_epoch == 3


def test_an_adding_replica_may_report_its_directory():
    image = image_with({1: [D1B1, D2B1], 2: [D1B2]})
    t = add_topic(image, "t", {0: {"replicas": [1, 2], "isr": [2], "adding": [1], "removing": []}})
    records, response = assign.decide(image, assign_request(1, 101, [(D2B1, t, [0])]))
    assert answers(response) == [(D2B1, t, 0, 0)]
    assert changes(records) == [{"topic_id": t, "partition_id": 0, "directories": (D2B1, D1B2)}]


def test_offline_assignment_of_the_only_in_sync_replica_leaves_the_partition_leaderless():
    image = image_with({1: [D1B1, D2B1], 2: [D1B2]})
    t = add_topic(image, "t", {0: {"replicas": [1, 2], "isr": [1]}})
    records, _ = assign.decide(image, assign_request(1, 101, [(LOST, t, [0])]))
    assert changes(records)[1] == {"topic_id": t, "partition_id": 0, "leader": -1}
    apply_all(image, records)
    assert image.topic("t").partitions[0].isr == (1,)  # without ELR the last ISR member stays


def test_offline_assignment_elects_uncleanly_where_the_topic_allows_it():
    image = image_with({1: [D1B1, D2B1], 2: [D1B2]})
    t = add_topic(image, "t", {0: {"replicas": [1, 2], "isr": [1]}},
                  configs={"unclean.leader.election.enable": "true"})
    records, _ = assign.decide(image, assign_request(1, 101, [(LOST, t, [0])]))
    assert changes(records)[1] == {"topic_id": t, "partition_id": 0, "isr": (2,), "leader": 2}


def test_metadata_lists_replicas_in_offline_directories_as_offline():
    image, a, b, _c = kafka_example()
    apply_all(image, assign.decide(image, assign_request(1, 101, [(D1B1, a, [0]), (LOST, b, [1])]))[0])
    partitions = {(t.name, i): metadata._partition(image, i, s) for t, i, s in image.partitions()}
    assert partitions[("a", 0)].offline_replicas == ()
    assert partitions[("b", 1)].offline_replicas == (1,)
    assert partitions[("b", 1)].leader_id == 2


# --- offline directories in heartbeats (§3.5) ----------------------------------------------------------

def heartbeat_request(broker_id: int, epoch: int, offline) -> BrokerHeartbeatRequest:
    return BrokerHeartbeatRequest(broker_id=broker_id, broker_epoch=epoch, current_metadata_offset=10_000,
                                  offline_log_dirs=list(offline))


def directories_example():
    """testHandleDirectoriesOffline: broker 101 has {d1, d2}, 102 has {d3, d4}; a-0 and b-0 are on d1
    and d3, a-1 and b-1 on d2 and d4."""
    d1, d2, d3, d4 = (uuid.uuid4() for _ in range(4))
    image = image_with({101: [d1, d2], 102: [d3, d4]})
    topics = {name: add_topic(image, name, {0: {"replicas": [101, 102]}, 1: {"replicas": [101, 102]}})
              for name in ("a", "b")}
    for broker_id, first, second in ((101, d1, d2), (102, d3, d4)):
        entries = [(first, topics[n], [0]) for n in ("a", "b")] + [(second, topics[n], [1]) for n in ("a", "b")]
        apply_all(image, assign.decide(image, assign_request(broker_id, 100 + broker_id, entries))[0])
    return image, topics, (d1, d2, d3, d4)


def test_kafka_offline_directories_example():
    image, topics, (d1, d2, d3, _d4) = directories_example()
    records, response = heartbeat.broker_heartbeat(image, heartbeat_request(101, 201, [d1, d3]))
    assert response.error_code == 0 and not response.is_fenced
    assert len(records) == 3
    assert changes(records[:2]) == [{"topic_id": topics[n], "partition_id": 0, "isr": (102,), "leader": 102}
                                    for n in ("a", "b")]
    change = records[2]
    assert version_for(change) == 2 and isinstance(change, rec.BrokerRegistrationChangeRecord)
    assert (change.broker_id, change.broker_epoch, change.log_dirs) == (101, 201, (d2,))
    apply_all(image, records)
    assert image.brokers[101].log_dirs == (d2,) and not image.brokers[101].fenced
    assert image.topic("a").partitions[1].leader == 101  # on d2: untouched


def test_directories_already_offline_or_not_owned_change_nothing():
    image, _topics, (d1, _d2, d3, _d4) = directories_example()
    apply_all(image, heartbeat.broker_heartbeat(image, heartbeat_request(101, 201, [d1]))[0])
    records, _ = heartbeat.broker_heartbeat(image, heartbeat_request(101, 201, [d1, d3, uuid.uuid4()]))
    assert records == []


def test_offline_directories_of_a_stale_heartbeat_are_ignored():
    image, _topics, (d1, *_rest) = directories_example()
    records, response = heartbeat.broker_heartbeat(image, heartbeat_request(101, 5, [d1]))
    assert records == [] and response.error_code == 77


# --- registration (§3.2) ----------------------------------------------------------------------------------

def registration_request(broker_id: int, dirs, incarnation: uuid.UUID | None = None) -> BrokerRegistrationRequest:
    return BrokerRegistrationRequest(broker_id=broker_id, cluster_id=CLUSTER_ID,
                                     incarnation_id=incarnation or uuid.uuid4(), log_dirs=list(dirs))


def register(image, request, version=4, session_alive=False):
    return registration.register_broker(image, request, version, CLUSTER_ID, session_alive)


def test_registration_directory_rules():
    image = image_with({1: [D1B1, D2B1]})
    for dirs in ([], [UNASSIGNED], [uuid.UUID(int=99)], [D1B2, D1B2], [D1B2, D2B1]):
        records, response = register(image, registration_request(2, dirs))
        assert records == [] and response.error_code == 119, dirs
    records, response = register(image, registration_request(2, [D1B2, uuid.UUID(int=100)]))
    assert response.error_code == 0
    # a v0-1 registration carries no directories: nothing to check, replicas are MIGRATING
    records, response = register(image, registration_request(3, []), version=1)
    assert response.error_code == 0
    apply_all(image, records)
    assert default_directory(image.brokers, 3) == MIGRATING


def test_same_incarnation_amends_the_registration_and_replaces_the_online_directories():
    image, _topics, (d1, d2, _d3, _d4) = directories_example()
    apply_all(image, heartbeat.broker_heartbeat(image, heartbeat_request(101, 201, [d1]))[0])
    incarnation = image.brokers[101].incarnation_id
    records, response = register(image, registration_request(101, [d1, d2], incarnation), session_alive=True)
    assert response.error_code == 0 and response.broker_epoch == 201
    (record,) = records
    assert isinstance(record, rec.RegisterBrokerRecord) and not record.fenced
    apply_all(image, records)
    broker = image.brokers[101]
    assert (broker.epoch, broker.fenced, broker.log_dirs) == (201, False, (d1, d2))
    assert image.topic("a").partitions[0].isr == (102,)  # the replica comes back through AlterPartition


def test_new_incarnation_leaves_its_isrs_first_and_takes_a_new_epoch():
    """Kafka's handleBrokerShutdown for a new incarnation (no ELR here): the old one leaves every ISR it
    is in, with no fencing record of its own (the new registration is fenced itself)."""
    image, _topics, (d1, d2, _d3, _d4) = directories_example()
    records, response = register(image, registration_request(101, [d1, d2]))
    *changes, registration = records
    assert changes and all(isinstance(r, rec.PartitionChangeRecord) and 101 not in r.isr for r in changes)
    assert isinstance(registration, rec.RegisterBrokerRecord) and registration.fenced
    assert response.broker_epoch == image.offset + len(records)
    assert register(image, registration_request(101, [d1, d2]), session_alive=True)[1].error_code == 101
