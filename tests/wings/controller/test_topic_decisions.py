"""The topic APIs' pure decisions (CreateTopics, DeleteTopics, CreatePartitions, ElectLeaders) on
images built from records: the records they write, and Kafka's codes and messages for every refusal."""
import base64
import random
import uuid

import pytest

from kraftwire.codec import records as rec
from kraftwire.codec.messages import CreatePartitionsRequest, CreateTopicsRequest, DeleteTopicsRequest, ElectLeadersRequest
from kraftwire.codec.constants import ConfigResourceType, NO_LEADER
from kraftwire.server.metadata.record_versions import METADATA_VERSIONS, version_for
from kraftwire.server.controller.replication import topic_creation as create_topics
from kraftwire.server.controller.replication import topic_deletion as delete_topics
from kraftwire.server.controller.replication import partition_creation as create_partitions
from kraftwire.server.controller.replication import elections as elect_leaders
from kraftwire.server.controller.broker_lifecycle import fence_broker
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.controller.topics import invalid_name_reason, new_topic_id

Topic = CreateTopicsRequest.CreatableTopic
Assignment = CreateTopicsRequest.CreatableReplicaAssignment
Config = CreateTopicsRequest.CreatableTopicConfig
NewPartitions = CreatePartitionsRequest.CreatePartitionsTopic
NewAssignment = CreatePartitionsRequest.CreatePartitionsAssignment
Doomed = DeleteTopicsRequest.DeleteTopicState
Elect = ElectLeadersRequest.TopicPartitions
ZERO = uuid.UUID(int=0)


def apply(image: MetadataImage, records) -> None:
    for record in records:
        image.apply(record, image.offset + 1)


AT_3_9 = METADATA_VERSIONS["3.9-IV0"]  # the record versions asserted below are those of 3.9-IV0


def cluster(brokers=3, racks=None, fenced=()) -> MetadataImage:
    """An image with brokers 1..n registered (one directory each), unfenced unless listed."""
    image = MetadataImage()
    for broker_id in range(1, brokers + 1):
        apply(image, [rec.RegisterBrokerRecord(
            broker_id=broker_id, incarnation_id=uuid.uuid4(), broker_epoch=broker_id, rack=(racks or {}).get(broker_id),
            fenced=broker_id in fenced, log_dirs=[uuid.uuid4()])])
    return image


def create(image, *topics, validate_only=False):
    return create_topics.decide(image, CreateTopicsRequest(topics=list(topics), validate_only=validate_only),
                                random.Random())


def created(image, name, partitions=-1, replication=-1, assignments=(), configs=()):
    """Create a topic (it must succeed) and apply its records."""
    records, response = create(image, Topic(name=name, num_partitions=partitions, replication_factor=replication,
                                            assignments=list(assignments), configs=list(configs)))
    assert response.topics[0].error_code == 0, response
    apply(image, records)
    return image.topic(name)


def assigned(*lists):
    return [Assignment(partition_index=i, broker_ids=list(b)) for i, b in enumerate(lists)]


def outcome(result):
    return result.error_code, result.error_message


# --- CreateTopics ------------------------------------------------------------------------------------

def test_create_writes_topic_configs_then_partitions_in_one_batch():
    image = cluster()
    records, response = create(image, Topic(name="orders", num_partitions=3, replication_factor=2,
                                            configs=[Config(name="retention.ms", value="1000")]))
    kinds = [type(r).__name__ for r in records]
    assert kinds == ["TopicRecord", "ConfigRecord"] + ["PartitionRecord"] * 3
    assert [version_for(r, AT_3_9) for r in records] == [0, 0, 1, 1, 1]
    topic_record, config_record = records[0], records[1]
    result = response.topics[0]
    assert (result.name, result.error_code, result.error_message) == ("orders", 0, None)
    assert result.topic_id == topic_record.topic_id
    assert (result.num_partitions, result.replication_factor, result.topic_config_error_code) == (3, 2, 0)
    assert (config_record.resource_type, config_record.resource_name, config_record.name, config_record.value) == (
        ConfigResourceType.TOPIC, "orders", "retention.ms", "1000")
    for index, partition in enumerate(records[2:]):
        assert partition.partition_id == index and partition.topic_id == topic_record.topic_id
        assert len(set(partition.replicas)) == 2
        assert partition.leader == partition.replicas[0] and list(partition.isr) == list(partition.replicas)
        assert (partition.leader_epoch, partition.partition_epoch, partition.leader_recovery_state) == (0, 0, 0)
        assert list(partition.directories) == [image.brokers[b].log_dirs[0] for b in partition.replicas]
    apply(image, records)
    assert image.topic_configs("orders") == {"retention.ms": "1000"}
    assert sorted(image.topic("orders").partitions) == [0, 1, 2]


def test_create_reports_every_effective_config_sorted_with_its_source():
    image = cluster()
    _, response = create(image, Topic(name="t", num_partitions=1, replication_factor=1,
                                      configs=[Config(name="cleanup.policy", value="compact")]))
    configs = response.topics[0].configs
    names = [c.name for c in configs]
    assert names == sorted(names) and "segment.bytes" in names and "min.insync.replicas" in names
    by_name = {c.name: c for c in configs}
    assert (by_name["cleanup.policy"].value, by_name["cleanup.policy"].config_source) == ("compact", 1)
    assert (by_name["segment.bytes"].value, by_name["segment.bytes"].config_source) == ("1073741824", 5)
    assert not any(c.read_only or c.is_sensitive for c in configs)


def test_minus_one_takes_the_cluster_defaults():
    image = cluster()
    topic = created(image, "plain")
    assert len(topic.partitions) == 1 and len(topic.partitions[0].replicas) == 1
    apply(image, [rec.ConfigRecord(resource_type=ConfigResourceType.BROKER, resource_name="", name=name, value=value)
                  for name, value in (("num.partitions", "4"), ("default.replication.factor", "3"))])
    topic = created(image, "wide")
    assert len(topic.partitions) == 4 and all(len(p.replicas) == 3 for p in topic.partitions.values())


def test_placement_spreads_over_racks_and_leads_only_on_unfenced_brokers():
    image = cluster(6, racks={1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"})
    topic = created(image, "racked", partitions=6, replication=3)
    for state in topic.partitions.values():
        assert len({image.brokers[b].rack for b in state.replicas}) == 3
    assert sorted(p.leader for p in topic.partitions.values()) == [1, 2, 3, 4, 5, 6]

    image = cluster(3, fenced={3})
    topic = created(image, "with-fenced", partitions=3, replication=3)
    for state in topic.partitions.values():
        assert sorted(state.replicas) == [1, 2, 3]
        assert state.leader != 3 and 3 not in state.isr and sorted(state.isr) == [1, 2]


def test_explicit_assignments_set_replicas_leader_and_isr():
    image = cluster(4, fenced={4})
    topic = created(image, "manual", assignments=assigned([3, 1], [4, 2], [2, 3]))
    states = [topic.partitions[i] for i in range(3)]
    assert [s.replicas for s in states] == [(3, 1), (4, 2), (2, 3)]
    assert [s.leader for s in states] == [3, 2, 2]
    assert [s.isr for s in states] == [(3, 1), (2,), (2, 3)]


@pytest.mark.parametrize("topic, code, message", [
    (Topic(name="t", num_partitions=-1, replication_factor=2, assignments=assigned([1])), 42,
     "A manual partition assignment was specified, but replication factor was not set to -1."),
    (Topic(name="t", num_partitions=1, replication_factor=-1, assignments=assigned([1])), 42,
     "A manual partition assignment was specified, but numPartitions was not set to -1."),
    (Topic(name="t", num_partitions=-1, replication_factor=-1,
           assignments=[Assignment(partition_index=0, broker_ids=[1]), Assignment(partition_index=0, broker_ids=[2])]),
     39, "Found multiple manual partition assignments for partition 0"),
    (Topic(name="t", num_partitions=-1, replication_factor=-1,
           assignments=[Assignment(partition_index=0, broker_ids=[1]), Assignment(partition_index=2, broker_ids=[2])]),
     39, "partitions should be a consecutive 0-based integer sequence"),
    (Topic(name="t", num_partitions=-1, replication_factor=-1, assignments=assigned([1, 2], [3])), 39,
     "The manual partition assignment includes a partition with 1 replica(s), but this is not consistent with "
     "previous partitions, which have 2 replica(s)."),
    (Topic(name="t", num_partitions=-1, replication_factor=-1, assignments=assigned([1, 9])), 39,
     "The manual partition assignment includes broker 9, but no such broker is registered."),
    (Topic(name="t", num_partitions=-1, replication_factor=-1, assignments=assigned([2, 1, 2])), 39,
     "The manual partition assignment includes the broker 2 more than once."),
    (Topic(name="t", num_partitions=-1, replication_factor=-1, assignments=assigned([])), 39,
     "The manual partition assignment includes an empty replica list."),
    (Topic(name="t", num_partitions=-1, replication_factor=-1, assignments=assigned([1], [4])), 39,
     "All brokers specified in the manual partition assignment for partition 1 are fenced or in controlled "
     "shutdown."),
    (Topic(name="t", num_partitions=1, replication_factor=0), 38,
     "Replication factor must be larger than 0, or -1 to use the default value."),
    (Topic(name="t", num_partitions=1, replication_factor=-2), 38,
     "Replication factor must be larger than 0, or -1 to use the default value."),
    (Topic(name="t", num_partitions=0, replication_factor=1), 37,
     "Number of partitions was set to an invalid non-positive value."),
    (Topic(name="t", num_partitions=-3, replication_factor=1), 37,
     "Number of partitions was set to an invalid non-positive value."),
    (Topic(name="t", num_partitions=1, replication_factor=5), 38,
     "Unable to replicate the partition 5 time(s): The target replication factor of 5 cannot be reached because "
     "only 4 broker(s) are registered or some brokers have all their log directories cordoned."),
    (Topic(name="t", num_partitions=1, replication_factor=1, configs=[Config(name="retention.ms", value=None),
                                                                       Config(name="segment.ms", value=None)]),
     40, "Null value not supported for topic configs: retention.ms,segment.ms"),
    (Topic(name="t", num_partitions=1, replication_factor=1, configs=[Config(name="no.such.config", value="1")]),
     40, "Unknown topic config name: no.such.config"),
    (Topic(name="t", num_partitions=1, replication_factor=1, configs=[Config(name="retention.ms", value="soon")]),
     40, "Invalid value soon for configuration retention.ms: Not a number of type LONG"),
])
def test_create_refusals(topic, code, message):
    image = cluster(4, fenced={4})
    records, response = create(image, topic)
    assert records == []
    result = response.topics[0]
    assert outcome(result) == (code, message)
    assert (result.topic_id, result.num_partitions, result.replication_factor) == (ZERO, -1, -1)
    assert list(result.configs) == []


@pytest.mark.parametrize("name, reason", [
    ("", "the empty string is not allowed"),
    (".", "'.' is not allowed"),
    ("..", "'..' is not allowed"),
    ("x" * 250, f"the length of '{'x' * 250}' is longer than the max allowed length 249"),
    ("a b", "'a b' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"),
    ("é", "'é' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"),
])
def test_illegal_topic_names(name, reason):
    _, response = create(cluster(), Topic(name=name, num_partitions=1, replication_factor=1))
    assert outcome(response.topics[0]) == (17, "Topic name is invalid: " + reason)
    assert invalid_name_reason("x" * 249) is None and invalid_name_reason("a-b.c_D9") is None


def test_existing_and_colliding_names():
    image = cluster()
    created(image, "a_b", 1, 1)
    records, response = create(image, *(Topic(name=n, num_partitions=1, replication_factor=1)
                                        for n in ("a_b", "a.b", "a-b")))
    assert [outcome(t) for t in response.topics] == [
        (36, "Topic 'a_b' already exists."),
        (17, "Topic 'a.b' collides with existing topic: a_b"),
        (0, None)]
    assert [r.name for r in records if isinstance(r, rec.TopicRecord)] == ["a-b"]


def test_duplicates_and_the_metadata_topic_are_answered_after_the_others():
    image = cluster()
    records, response = create(image, *(Topic(name=n, num_partitions=1, replication_factor=1)
                                        for n in ("twice", "__cluster_metadata", "once", "twice")))
    assert [(t.name, *outcome(t)) for t in response.topics] == [
        ("once", 0, None),
        ("twice", 42, "Duplicate topic name."),
        ("__cluster_metadata", 42, "Creation of internal topic __cluster_metadata is prohibited.")]
    assert [r.name for r in records if isinstance(r, rec.TopicRecord)] == ["once"]


def test_validate_only_answers_in_full_and_writes_nothing():
    image = cluster()
    records, response = create(image, Topic(name="dry", num_partitions=2, replication_factor=3), validate_only=True)
    result = response.topics[0]
    assert records == [] and result.error_code == 0 and result.topic_id != ZERO
    assert (result.num_partitions, result.replication_factor) == (2, 3) and result.configs


def test_more_than_ten_thousand_partitions_fail_the_whole_request():
    records, response = create(cluster(), Topic(name="a", num_partitions=6000, replication_factor=1),
                               Topic(name="b", num_partitions=5000, replication_factor=1))
    assert records == []
    assert [outcome(t) for t in response.topics] == [(44, "Excessively large number of partitions per request.")] * 2


def test_topic_ids_never_print_with_a_dash():
    rng = random.Random(1)
    assert all(b"-" not in base64.urlsafe_b64encode(new_topic_id(rng).bytes) for _ in range(2000))


def test_created_unclean_config_lets_fencing_elect_uncleanly():
    image = cluster()
    created(image, "risky", assignments=assigned([1, 2]),
            configs=[Config(name="unclean.leader.election.enable", value="true")])
    created(image, "careful", assignments=assigned([1, 2]))
    apply(image, fence_broker(image, 2))
    apply(image, fence_broker(image, 1))  # 1 was the last in sync: both go leaderless
    assert image.topic("risky").partitions[0].leader == NO_LEADER
    apply(image, [rec.UnfenceBrokerRecord(id=2, epoch=2)])
    records, response = elect_leaders.decide(image, ElectLeadersRequest(election_type=1, topic_partitions=None))
    apply(image, records)
    risky, careful = image.topic("risky").partitions[0], image.topic("careful").partitions[0]
    assert (risky.leader, risky.isr, risky.leader_recovery_state) == (2, (2,), 1)
    assert careful.leader == 2  # an explicit UNCLEAN election does not need the config


# --- DeleteTopics ------------------------------------------------------------------------------------

def delete(image, names=(), topics=()):
    return delete_topics.decide(image, DeleteTopicsRequest(topic_names=list(names), topics=list(topics)),
                                random.Random())


def test_delete_by_name_and_id_removes_topics_and_their_configs():
    image = cluster()
    first = created(image, "first", 2, 2, configs=[Config(name="retention.ms", value="5")])
    second = created(image, "second", 1, 1)
    records, response = delete(image, topics=[Doomed(name="first", topic_id=ZERO),
                                              Doomed(name=None, topic_id=second.topic_id)])
    assert sorted((r.name, r.topic_id, *outcome(r)) for r in response.responses) == [
        ("first", first.topic_id, 0, None), ("second", second.topic_id, 0, None)]
    assert {r.topic_id for r in records} == {first.topic_id, second.topic_id}
    assert all(isinstance(r, rec.RemoveTopicRecord) for r in records)
    apply(image, records)
    assert image.topics == {} and image.topic_configs("first") == {}


def test_delete_refusals():
    image = cluster()
    kept = created(image, "kept", 1, 1)
    twice = created(image, "twice", 1, 1)
    missing_id = uuid.uuid4()
    records, response = delete(image, topics=[
        Doomed(name="absent", topic_id=ZERO), Doomed(name=None, topic_id=missing_id),
        Doomed(name=None, topic_id=ZERO), Doomed(name="kept", topic_id=kept.topic_id),
        Doomed(name="dup", topic_id=ZERO), Doomed(name="dup", topic_id=ZERO),
        Doomed(name="twice", topic_id=ZERO), Doomed(name=None, topic_id=twice.topic_id)])
    assert records == []
    assert sorted((r.name or "", str(r.topic_id), *outcome(r)) for r in response.responses) == sorted([
        ("absent", str(ZERO), 3, "This server does not host this topic-partition."),
        ("", str(missing_id), 100, "This server does not host this topic ID."),
        ("", str(ZERO), 42, "Neither topic name nor id were specified."),
        ("kept", str(kept.topic_id), 42, "You may not specify both topic name and topic id."),
        ("dup", str(ZERO), 42, "Duplicate topic name."),
        ("twice", str(twice.topic_id), 42, "The provided topic name maps to an ID that was already supplied.")])


def test_delete_by_name_before_v6():
    image = cluster()
    created(image, "old", 1, 1)
    records, response = delete(image, names=["old", "old", "gone"])
    assert records == []
    assert sorted((r.name, r.error_code) for r in response.responses) == [("gone", 3), ("old", 42)]


# --- CreatePartitions --------------------------------------------------------------------------------

def grow(image, *topics, validate_only=False):
    return create_partitions.decide(image, CreatePartitionsRequest(topics=list(topics), validate_only=validate_only),
                                    random.Random())


def test_grow_adds_partitions_with_the_topics_replication_factor():
    image = cluster(4)
    topic = created(image, "growing", 2, 3)
    records, response = grow(image, NewPartitions(name="growing", count=5, assignments=None))
    assert [(r.name, *outcome(r)) for r in response.results] == [("growing", 0, None)]
    assert [(r.partition_id, version_for(r, AT_3_9)) for r in records] == [(2, 1), (3, 1), (4, 1)]
    assert all(len(set(r.replicas)) == 3 and r.leader == r.replicas[0] and r.topic_id == topic.topic_id
               for r in records)
    assert grow(image, NewPartitions(name="growing", count=5, assignments=None), validate_only=True)[0] == []


def test_grow_with_assignments():
    image = cluster(3, fenced={3})
    created(image, "manual", assignments=assigned([1, 2]))
    records, response = grow(image, NewPartitions(name="manual", count=3, assignments=[
        NewAssignment(broker_ids=[2, 3]), NewAssignment(broker_ids=[3, 1])]))
    assert response.results[0].error_code == 0
    assert [(r.partition_id, tuple(r.replicas), r.leader, tuple(r.isr)) for r in records] == [
        (1, (2, 3), 2, (2,)), (2, (3, 1), 1, (1,))]


@pytest.mark.parametrize("topic, code, message", [
    (NewPartitions(name="t", count=2, assignments=None), 37, "Topic already has 2 partition(s)."),
    (NewPartitions(name="t", count=1, assignments=None), 37,
     "The topic t currently has 2 partition(s); 1 would not be an increase."),
    (NewPartitions(name="nope", count=3, assignments=None), 3, None),
    (NewPartitions(name="t", count=4, assignments=[NewAssignment(broker_ids=[1, 2])]), 39,
     "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified."),
    (NewPartitions(name="t", count=3, assignments=[NewAssignment(broker_ids=[1])]), 39,
     "The manual partition assignment includes a partition with 1 replica(s), but this is not consistent with "
     "previous partitions, which have 2 replica(s)."),
    (NewPartitions(name="t", count=3, assignments=[NewAssignment(broker_ids=[1, 7])]), 39,
     "The manual partition assignment includes broker 7, but no such broker is registered."),
    (NewPartitions(name="t", count=3, assignments=[NewAssignment(broker_ids=[3, 4])]), 39,
     "All brokers specified in the manual partition assignment for partition 2 are fenced or in controlled "
     "shutdown."),
    (NewPartitions(name="t", count=20_003, assignments=None), -1, None),
])
def test_grow_refusals(topic, code, message):
    image = cluster(4)
    created(image, "t", 2, 2)
    apply(image, fence_broker(image, 3) + fence_broker(image, 4))
    records, response = grow(image, topic)
    assert records == [] and [outcome(r) for r in response.results] == [(code, message)]


def test_grow_when_every_broker_is_fenced():
    image = cluster(2)
    created(image, "t", 1, 1)
    apply(image, fence_broker(image, 1) + fence_broker(image, 2))
    _, response = grow(image, NewPartitions(name="t", count=2, assignments=None))
    assert outcome(response.results[0]) == (
        38, "All brokers are currently fenced, or have all their log directories cordoned.")


def test_grow_duplicates_are_answered_first():
    image = cluster()
    created(image, "a", 1, 1)
    records, response = grow(image, NewPartitions(name="a", count=2, assignments=None),
                             NewPartitions(name="b", count=2, assignments=None),
                             NewPartitions(name="b", count=3, assignments=None))
    assert [(r.name, *outcome(r)) for r in response.results] == [("b", 42, "Duplicate topic name."), ("a", 0, None)]
    assert len(records) == 1


# --- ElectLeaders ------------------------------------------------------------------------------------

def elect(image, election_type, partitions):
    topics = None if partitions is None else [Elect(topic=t, partitions=list(p)) for t, p in partitions.items()]
    return elect_leaders.decide(image, ElectLeadersRequest(election_type=election_type, topic_partitions=topics))


def results(response):
    return {(t.topic, p.partition_id): outcome(p)
            for t in response.replica_election_results for p in t.partition_result}


def moved_leader(image, topic, partition, leader):
    apply(image, [rec.PartitionChangeRecord(topic_id=topic.topic_id, partition_id=partition, leader=leader)])


def test_preferred_election_moves_leadership_back():
    image = cluster()
    topic = created(image, "p", assignments=assigned([1, 2, 3], [2, 3, 1]))
    moved_leader(image, topic, 0, 3)
    records, response = elect(image, 0, {"p": [0, 1, 5], "nope": [0]})
    assert results(response) == {
        ("p", 0): (0, None),
        ("p", 1): (84, "Leader election not needed for topic partition."),
        ("p", 5): (3, "No such partition as p-5"),
        ("nope", 0): (3, "No such topic as nope")}
    assert [(r.partition_id, r.leader, version_for(r, AT_3_9)) for r in records] == [(0, 1, 1)]
    apply(image, records)
    assert image.topic("p").partitions[0].leader == 1 and image.topic("p").partitions[0].leader_epoch == 2


def test_preferred_leader_not_available_when_the_first_replica_is_fenced():
    image = cluster()
    topic = created(image, "p", assignments=assigned([1, 2]))
    apply(image, fence_broker(image, 1))
    assert topic.partitions[0].leader == 2
    records, response = elect(image, 0, {"p": [0]})
    assert records == [] and results(response) == {("p", 0): (80, "The preferred leader was not available.")}


def test_unclean_election_picks_a_live_replica_outside_the_isr():
    image = cluster()
    created(image, "u", assignments=assigned([1, 2], [3, 2]))
    apply(image, fence_broker(image, 2))
    apply(image, fence_broker(image, 1))  # partition 0 is now leaderless with ISR [1]
    apply(image, [rec.UnfenceBrokerRecord(id=2, epoch=2)])
    records, response = elect(image, 1, {"u": [0, 1]})
    assert results(response) == {("u", 0): (0, None), ("u", 1): (84, "Leader election not needed for topic partition.")}
    apply(image, records)
    state = image.topic("u").partitions[0]
    assert (state.leader, state.isr, state.leader_recovery_state) == (2, (2,), 1)


def test_unclean_election_without_any_live_replica():
    image = cluster()
    created(image, "u", assignments=assigned([1, 2]))
    apply(image, fence_broker(image, 2))
    apply(image, fence_broker(image, 1))
    records, response = elect(image, 1, {"u": [0]})
    assert records == []
    assert results(response) == {("u", 0): (83, "Eligible topic partition leaders are not available.")}


def test_all_partitions_leave_out_those_needing_no_election():
    image = cluster()
    topic = created(image, "a", assignments=assigned([1, 2], [2, 1]))
    created(image, "b", assignments=assigned([3]))
    moved_leader(image, topic, 1, 1)
    records, response = elect(image, 0, None)
    assert [(t.topic, [(p.partition_id, p.error_code) for p in t.partition_result])
            for t in response.replica_election_results] == [("a", [(1, 0)]), ("b", [])]
    assert len(records) == 1 and response.error_code == 0


def test_a_partition_listed_twice_is_elected_once():
    image = cluster()
    topic = created(image, "a", assignments=assigned([1, 2]))
    moved_leader(image, topic, 0, 2)
    records, response = elect(image, 0, {"a": [0, 0]})
    assert len(records) == 1 and [p.error_code for p in response.replica_election_results[0].partition_result] == [0, 0]


def test_unknown_election_type_fails_the_request():
    image = cluster()
    created(image, "a", 1, 1)
    records, response = elect(image, 2, {"a": [0]})
    assert records == [] and response.error_code == 42
    assert results(response) == {("a", 0): (42, "Unknown election type 2")}
