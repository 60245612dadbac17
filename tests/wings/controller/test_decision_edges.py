"""Edges of the pure decisions that the worked examples leave out, found by mutation testing
(bench/README.md, "Mutation testing"): each test fails on a one-token change of the rule it names.

Images are built by applying records, as the controller builds them.
"""
from __future__ import annotations

import uuid

import pytest

from kraftwire.codec import records as rec
from kraftwire.codec.messages import AlterPartitionReassignmentsRequest
from kraftwire.server.controller.replication import reassignment as alter
from kraftwire.server.controller.partition_change import ChangeRules, Election, build_change
from kraftwire.server.controller.throttle_cleanup import throttle_removals
from kraftwire.server.controller.config_validation import apply_incremental, validate_topic_changes
from kraftwire.server.metadata.config_describe import describe
from kraftwire.codec import KafkaError
from kraftwire.codec.constants import LEADER_UNCHANGED, LOST, MIGRATING
from kraftwire.server.metadata.configs import BROKER_CONFIGS, catalogue_of, topic_value
from kraftwire.server.metadata.image import MetadataImage
from topic_records import add_topic, image_with_brokers

Request = AlterPartitionReassignmentsRequest
RULES = ChangeRules()  # Kafka 4.3+ without eligible leader replicas


def decide_alter(image, topic: str, index: int, replicas, allow_rf_change: bool):
    request = Request(allow_replication_factor_change=allow_rf_change, topics=[Request.ReassignableTopic(
        name=topic, partitions=[Request.ReassignablePartition(partition_index=index, replicas=replicas)])])
    records, response = alter.decide(image, request)
    return list(records), [(p.error_code, p.error_message) for t in response.responses for p in t.partitions]


def test_kip860_refuses_growing_the_replication_factor_too():
    image = image_with_brokers(1, 2, 3, 4)
    add_topic(image, "t", {0: {"replicas": [1, 2, 3]}})
    assert decide_alter(image, "t", 0, [1, 2, 3, 4], allow_rf_change=False) == (
        [], [(38, "The replication factor is changed from 3 to 4")])
    records, answers = decide_alter(image, "t", 0, [1, 2, 3, 4], allow_rf_change=True)
    assert answers == [(0, None)] and records[0].adding_replicas == (4,)


def test_a_preferred_election_moves_the_leader_and_keeps_the_isr():
    """Only an unclean election shrinks the ISR to the new leader and marks it recovering."""
    image = image_with_brokers(1, 2, 3)
    add_topic(image, "t", {0: {"replicas": [1, 2, 3], "leader": 2}})
    state = image.topic("t").partitions[0]
    record = build_change(image.brokers, image.topic_ids["t"], 0, state, rules=RULES, election=Election.PREFERRED)
    assert (record.leader, record.isr, record.leader_recovery_state) == (1, None, -1)


def test_a_preferred_leader_already_leading_changes_nothing_whatever_its_id():
    """Broker ids above 256 are not cached small ints: leaders compare by value."""
    image = image_with_brokers(1000, 1001)
    topic_id = add_topic(image, "t", {0: {"replicas": [1000, 1001]}})
    # the leader read back from bytes, as on replay: an int object of its own
    decoded, _ = rec.decode_frame(rec.encode_frame(rec.PartitionChangeRecord(partition_id=0, topic_id=topic_id,
                                                                             leader=1000)))
    image.apply(decoded, image.offset + 1)
    state = image.topic("t").partitions[0]
    assert state.leader == state.replicas[0] == 1000 and state.leader is not state.replicas[0]
    assert build_change(image.brokers, topic_id, 0, state, rules=RULES, election=Election.PREFERRED) is None
    record = build_change(image.brokers, topic_id, 0, state, rules=RULES, isr=(1000,))
    assert (record.leader, record.isr) == (LEADER_UNCHANGED, (1000,))


def test_the_recovery_state_is_written_only_when_it_changes():
    image = image_with_brokers(1, 2, 3)
    topic_id = add_topic(image, "t", {0: {"replicas": [1, 2, 3]}})
    state = image.topic("t").partitions[0]
    assert state.leader_recovery_state == 0
    assert build_change(image.brokers, topic_id, 0, state, rules=RULES, leader_recovery_state=0) is None
    assert build_change(image.brokers, topic_id, 0, state, rules=RULES,
                        leader_recovery_state=1).leader_recovery_state == 1
    image.apply(rec.PartitionChangeRecord(partition_id=0, topic_id=topic_id, leader_recovery_state=1), image.offset + 1)
    recovering = image.topic("t").partitions[0]
    assert build_change(image.brokers, topic_id, 0, recovering, rules=RULES, leader_recovery_state=1) is None
    assert build_change(image.brokers, topic_id, 0, recovering, rules=RULES,
                        leader_recovery_state=0).leader_recovery_state == 0


def test_a_same_size_move_completes_with_a_kept_replica_out_of_sync():
    """[1,2,3] -> [1,2,4] with 2 out of the ISR: complete once 4 joins (every kept replica must be in sync
    only when the factor shrinks); each kept replica keeps its own directory."""
    image = image_with_brokers(1, 2, 3, 4)
    topic_id = add_topic(image, "t", {0: {"replicas": [1, 2, 4, 3], "isr": [1, 3], "adding": [4], "removing": [3]}})
    state = image.topic("t").partitions[0]
    record = build_change(image.brokers, topic_id, 0, state, rules=RULES, isr=(1, 3, 4))
    assert (record.replicas, record.isr, record.adding_replicas, record.removing_replicas) == (
        (1, 2, 4), (1, 4), (), ())
    assert record.directories == tuple(state.directory_of(b) for b in (1, 2, 4))


def test_an_unclean_election_takes_the_first_live_replica_in_replica_order():
    image = image_with_brokers(1, 2, 3, fenced={1})
    topic_id = add_topic(image, "t", {0: {"replicas": [1, 2, 3], "isr": [1], "leader": 1}})
    record = build_change(image.brokers, topic_id, 0, image.topic("t").partitions[0], rules=RULES,
                          election=Election.UNCLEAN)
    assert (record.leader, record.isr, record.leader_recovery_state) == (2, (2,), 1)



def test_an_unclean_election_of_a_partition_already_recovering_leaves_its_state_unwritten():
    """As Kafka's PartitionChangeBuilder, the record carries the recovery state only when it changes."""
    image = image_with_brokers(1, 2, 3, fenced={1, 2})
    topic_id = add_topic(image, "t", {0: {"replicas": [1, 2, 3], "isr": [1], "leader": 1}})
    image.apply(rec.PartitionChangeRecord(partition_id=0, topic_id=topic_id, leader_recovery_state=1), image.offset + 1)
    record = build_change(image.brokers, topic_id, 0, image.topic("t").partitions[0], rules=RULES,
                          election=Election.UNCLEAN)
    assert (record.leader, record.isr, record.leader_recovery_state) == (3, (3,), -1)



def test_a_replica_in_a_lost_directory_read_back_from_the_log_cannot_lead():
    """A directory id compares by value: LOST decoded from a record is not the constant object. Brokers
    registered without directories take any other directory as online."""
    image = MetadataImage()
    for broker_id in (1, 2):
        image.apply(rec.RegisterBrokerRecord(broker_id=broker_id, incarnation_id=uuid.uuid4(), broker_epoch=10,
                                             fenced=False, log_dirs=[]), image.offset + 1)
    topic_id = uuid.uuid4()
    image.apply(rec.TopicRecord(name="t", topic_id=topic_id), image.offset + 1)
    record = rec.PartitionRecord(partition_id=0, topic_id=topic_id, replicas=[1, 2], isr=[1, 2], leader=1,
                                 directories=[LOST, MIGRATING])
    decoded, _ = rec.decode_frame(rec.encode_frame(record))
    image.apply(decoded, image.offset + 1)
    state = image.topic("t").partitions[0]
    assert state.directory_of(1) == LOST and state.directory_of(1) is not LOST
    assert build_change(image.brokers, topic_id, 0, state, rules=RULES).leader == 2


def test_an_unclean_revert_makes_the_first_replica_the_isr_and_elects_it_cleanly():
    """Kafka's revert names the ISR itself (the first remaining replica): the election that follows is
    then a clean one, and the partition is not marked recovering."""
    image = image_with_brokers(1, 2, 3, 4)
    add_topic(image, "t", {0: {"replicas": [4, 1, 2], "isr": [4], "leader": 4, "adding": [4], "removing": [1, 2]}},
              configs={"unclean.leader.election.enable": "true"})
    records, answers = decide_alter(image, "t", 0, None, allow_rf_change=True)
    assert answers == [(0, None)]
    (record,) = records
    assert (record.replicas, record.isr, record.leader, record.leader_recovery_state) == ((1, 2), (1,), 1, -1)



def test_an_isr_equal_to_the_current_one_changes_nothing():
    """ISRs compare by value: one rebuilt from a request, or left as it was by a fence that does not touch
    it, is no change."""
    image = image_with_brokers(1, 2, 3)
    topic_id = add_topic(image, "t", {0: {"replicas": [1, 2, 3], "isr": [1, 2]}})
    state = image.topic("t").partitions[0]
    assert build_change(image.brokers, topic_id, 0, state, rules=RULES, isr=tuple([1, 2])) is None
    assert build_change(image.brokers, topic_id, 0, state, rules=RULES, ineligible=frozenset({3})) is None


def test_kip860_compares_replication_factors_by_value():
    """A factor above 256 is not a cached small int: the same factor given again is no change of it."""
    brokers = list(range(1, 301))
    image = image_with_brokers(*brokers, 301)
    add_topic(image, "t", {0: {"replicas": brokers}})
    records, answers = decide_alter(image, "t", 0, brokers[1:] + [301], allow_rf_change=False)
    assert answers == [(0, None)] and records[0].adding_replicas == (301,)


# --- configs -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, shown, rule", [("1000", "1000.0", "Value must be no more than 1"),
                                               ("Infinity", "Infinity", "Value must be no more than 1"),
                                               ("-Infinity", "-Infinity", "Value must be at least 0"),
                                               ("1234.5", "1234.5", "Value must be no more than 1"),
                                               ("9999999.5", "9999999.5", "Value must be no more than 1")])
def test_a_double_out_of_range_is_shown_as_java_prints_it(text, shown, rule):
    with pytest.raises(KafkaError) as refused:
        validate_topic_changes({}, [("min.cleanable.dirty.ratio", 0, text)], {})
    assert refused.value.args[1] == f"Invalid value {shown} for configuration min.cleanable.dirty.ratio: {rule}"


def test_only_topics_and_brokers_have_dynamic_configs_to_describe():
    for resource_type in (0, 1, 3, 8, 16):
        for name in ("x", ""):
            with pytest.raises(ValueError, match=f"no dynamic configs for resource type {resource_type}"):
                describe(resource_type, name, {}, {})



def test_negative_cluster_defaults_reach_topics_as_kafka_reads_them():
    """KafkaConfig reads any negative log.retention.ms as -1 (unlimited); log.local.retention.ms keeps -2
    ("as retention.ms")."""
    defaults = {"log.retention.ms": "-2", "log.local.retention.ms": "-2"}
    assert topic_value({}, defaults, "retention.ms") == -1
    assert topic_value({}, defaults, "local.retention.ms") == -2


def test_a_broker_lists_each_catalogue_config_once_then_each_custom_key_set_on_it_or_cluster_wide():
    names = [entry.name for entry in describe(4, "1", {"custom.both": "1", "custom.own": "2"},
                                              {"custom.both": "3", "custom.cluster": "4"})]
    assert names == [*BROKER_CONFIGS, "custom.both", "custom.cluster", "custom.own"]


def test_only_topics_and_brokers_have_a_config_catalogue():
    for resource_type in (0, 1, 3, 8, 16):
        with pytest.raises(ValueError, match=f"no dynamic configs for resource type {resource_type}"):
            catalogue_of(resource_type)


def test_configs_of_a_resource_type_given_as_a_plain_number_as_read_from_the_wire():
    assert apply_incremental(2, {}, [("retention.ms", 0, "1")]) == {"retention.ms": "1"}
    assert apply_incremental(4, {}, [("log.retention.ms", 0, "1")]) == {"log.retention.ms": "1"}



def test_a_value_of_half_the_size_limit_and_more_is_accepted():
    """Kafka limits a value's Java String length (UTF-16 code units) to 32767: longer than half passes."""
    replicas = "leader.replication.throttled.replicas"
    value = ",".join(f"{partition}:1" for partition in range(3000))
    assert 16384 < len(value) < 32767
    assert validate_topic_changes({}, [(replicas, 0, value)], {}) == {replicas: value}



def test_only_characters_up_to_space_are_trimmed_from_a_value():
    """As Java's String.trim(): control characters and spaces go, quotes and '!' stay (and make no number)."""
    assert validate_topic_changes({}, [("retention.ms", 0, "\t 1000\x00")], {}) == {"retention.ms": "\t 1000\x00"}
    for text in ('"1000"', "!1000"):
        with pytest.raises(KafkaError) as refused:
            validate_topic_changes({}, [("retention.ms", 0, text)], {})
        assert refused.value.args[1] == f"Invalid value {text} for configuration retention.ms: Not a number of type LONG"


# --- replaying records ---------------------------------------------------------------------------------

def test_a_registration_change_unfences_and_fences_a_broker():
    image = image_with_brokers(1, fenced={1})
    image.apply(rec.BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=101, fenced=0), image.offset + 1)
    assert image.brokers[1].fenced  # 0: unchanged
    image.apply(rec.BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=101, fenced=-1), image.offset + 1)
    assert not image.brokers[1].fenced
    image.apply(rec.BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=101, fenced=1), image.offset + 1)
    assert image.brokers[1].fenced


def test_a_partition_change_without_a_recovery_state_keeps_the_current_one():
    image = image_with_brokers(1, 2)
    topic_id = add_topic(image, "t", {0: {"replicas": [1, 2]}})
    for change in (rec.PartitionChangeRecord(partition_id=0, topic_id=topic_id, leader_recovery_state=1),
                   rec.PartitionChangeRecord(partition_id=0, topic_id=topic_id, isr=[1])):
        image.apply(change, image.offset + 1)
    state = image.topic("t").partitions[0]
    assert (state.isr, state.leader_recovery_state, state.partition_epoch) == ((1,), 1, 2)
    assert (state.leader, state.leader_epoch) == (1, 0)  # no Leader in either record: unchanged


def test_broker_0_can_be_elected_leader():
    image = image_with_brokers(0, 1)
    topic_id = add_topic(image, "t", {0: {"replicas": [1, 0]}})
    image.apply(rec.PartitionChangeRecord(partition_id=0, topic_id=topic_id, leader=0), image.offset + 1)
    state = image.topic("t").partitions[0]
    assert (state.leader, state.leader_epoch) == (0, 1)


def test_operations_given_as_plain_numbers_as_read_from_the_wire():
    """IncrementalAlterConfigs carries the operation as an int8: 2 is APPEND, 3 is SUBTRACT."""
    replicas = "leader.replication.throttled.replicas"
    assert validate_topic_changes({replicas: "0:1"}, [(replicas, 2, "0:2,0:1")], {}) == {replicas: "0:1,0:2"}
    assert validate_topic_changes({replicas: "0:1,0:2"}, [(replicas, 3, "0:1")], {}) == {replicas: "0:2"}


def test_an_int_below_the_java_range_is_not_a_number_of_type_int():
    for text in ("-2147483649", "2147483648"):
        with pytest.raises(KafkaError) as refused:
            validate_topic_changes({}, [("segment.bytes", 0, text)], {})
        assert refused.value.args[1] == (
            f"Invalid value {text} for configuration segment.bytes: Not a number of type INT")


def test_deleting_one_config_keeps_the_others_of_the_resource():
    image = image_with_brokers(1)
    for name, value in (("retention.ms", "1"), ("segment.ms", "2"), ("retention.ms", None)):
        image.apply(rec.ConfigRecord(resource_type=2, resource_name="t", name=name, value=value), image.offset + 1)
    assert image.topic_configs("t") == {"segment.ms": "2"}
    image.apply(rec.ConfigRecord(resource_type=2, resource_name="t", name="segment.ms", value=None), image.offset + 1)
    assert image.topic_configs("t") == {} and (2, "t") not in image.configs



def test_clearing_elr_empties_it_and_bumps_each_cleared_partitions_epoch_by_one():
    """ClearElrRecord names one topic, or every topic when its name is empty; it clears a partition with an
    ELR or a last-known ELR, and partitions with neither keep their epoch."""
    image = image_with_brokers(1, 2, 3)
    three = {index: {"replicas": [1, 2, 3]} for index in range(3)}
    topic_ids = {name: add_topic(image, name, three) for name in ("a", "b")}
    for name, topic_id in topic_ids.items():
        image.apply(rec.PartitionChangeRecord(partition_id=0, topic_id=topic_id, isr=[1], eligible_leader_replicas=[2]),
                    image.offset + 1)
        image.apply(rec.PartitionChangeRecord(partition_id=1, topic_id=topic_id, last_known_elr=[3]), image.offset + 1)

    def partitions(name):
        return [(p.elr, p.last_known_elr, p.partition_epoch) for _, p in sorted(image.topic(name).partitions.items())]

    before = [((2,), (), 1), ((), (3,), 1), ((), (), 0)]
    cleared = [((), (), 2), ((), (), 2), ((), (), 0)]
    assert partitions("a") == partitions("b") == before
    image.apply(rec.ClearElrRecord(topic_name="a"), image.offset + 1)
    assert (partitions("a"), partitions("b")) == (cleared, before)
    image.apply(rec.ClearElrRecord(topic_name=""), image.offset + 1)
    assert partitions("a") == partitions("b") == cleared


def test_a_partition_of_more_than_256_replicas_keeps_its_directories_through_an_isr_change():
    """Replica and directory counts compare by value (above 256 they are not cached small ints)."""
    brokers = list(range(1, 301))
    image = image_with_brokers(*brokers)
    topic_id = add_topic(image, "t", {0: {"replicas": brokers}})
    directories = image.topic("t").partitions[0].directories
    assert MIGRATING not in directories
    image.apply(rec.PartitionChangeRecord(partition_id=0, topic_id=topic_id, isr=brokers[:2]), image.offset + 1)
    assert image.topic("t").partitions[0].directories == directories


def test_a_copy_is_equal_and_independent_and_keeps_a_transaction_in_flight():
    image = image_with_brokers(1, 2)
    add_topic(image, "t", {0: {"replicas": [1, 2]}})
    copy = image.copy()
    assert list(copy.to_records()) == list(image.to_records())
    copy.apply(rec.TopicRecord(name="u", topic_id=uuid.uuid4()), copy.offset + 1)
    assert image.topic("u") is None
    image.apply(rec.BeginTransactionRecord(name="t"), image.offset + 1)
    image.apply(rec.ConfigRecord(resource_type=2, resource_name="t", name="retention.ms", value="1"), image.offset + 1)
    inside = image.copy()
    inside.apply(rec.EndTransactionRecord(), inside.offset + 1)
    assert inside.topic_configs("t") == {"retention.ms": "1"}
    assert image.topic_configs("t") == {} and image.pending_transaction is not None



def test_a_snapshot_keeps_acls_scram_credentials_and_eligible_leader_replicas():
    """What tests/wings/metadata/test_image_snapshot.py's random histories do not draw."""
    image = image_with_brokers(1, 2, 3)
    topic_id = add_topic(image, "t", {0: {"replicas": [1, 2, 3]}})
    image.apply(rec.PartitionChangeRecord(partition_id=0, topic_id=topic_id, isr=[1], eligible_leader_replicas=[2],
                                          last_known_elr=[3]), image.offset + 1)
    image.apply(rec.AccessControlEntryRecord(id=uuid.uuid4(), resource_type=2, resource_name="t", pattern_type=3,
                                             principal="User:alice", host="*", operation=3, permission_type=3),
                image.offset + 1)
    image.apply(rec.UserScramCredentialRecord(name="alice", mechanism=1, salt=b"s", stored_key=b"k", server_key=b"v",
                                              iterations=4096), image.offset + 1)
    rebuilt = MetadataImage()
    for offset, (record, version) in enumerate(image.to_records()):
        rebuilt.apply(rec.decode_frame(rec.encode_frame(record, version))[0], offset)
    assert len(image.acls) == len(image.scram) == 1
    assert (rebuilt.acls, rebuilt.scram) == (image.acls, image.scram)
    assert rebuilt.topic("t").partitions == image.topic("t").partitions
    assert (image.topic("t").partitions[0].elr, image.topic("t").partitions[0].last_known_elr) == ((2,), (3,))


# --- throttle removal ----------------------------------------------------------------------------------

def test_throttle_removal_spares_a_shrink_in_flight_and_brokers_not_asked_about():
    """A partition only removing a replica is still reassigning, and its brokers busy: broker 2 was in a
    reassignment that ended and is still in this one; broker 3's throttle and those of the topic "moving"
    stay though not asked about."""
    image = image_with_brokers(1, 2, 3, 4)
    throttled = {"leader.replication.throttled.replicas": "0:1"}
    add_topic(image, "done", {0: {"replicas": [1, 4]}}, configs=throttled)
    add_topic(image, "shrinking", {0: {"replicas": [1, 2, 3], "isr": [1, 3], "removing": [3]}}, configs=throttled)
    add_topic(image, "moving", {0: {"replicas": [3, 1, 2], "adding": [3], "removing": [2]}}, configs=throttled)
    for broker in ("", "2", "3", "4"):
        name = "kraftwire.throttle.auto.remove.enable" if broker == "" else "leader.replication.throttled.rate"
        image.apply(rec.ConfigRecord(resource_type=4, resource_name=broker, name=name,
                                     value="true" if broker == "" else "1000"), image.offset + 1)
    removed = [(r.resource_type, r.resource_name, r.name)
               for r in throttle_removals(image, {"done", "shrinking"}, {2, 4})]
    assert removed == [(2, "done", "leader.replication.throttled.replicas"),
                       (4, "4", "leader.replication.throttled.rate")]


def test_a_replica_change_without_directories_leaves_every_replica_migrating():
    image = image_with_brokers(1, 2, 3)
    topic_id = add_topic(image, "t", {0: {"replicas": [1, 2]}})
    image.apply(rec.PartitionChangeRecord(partition_id=0, topic_id=topic_id, replicas=[1, 2, 3]), image.offset + 1)
    assert image.topic("t").partitions[0].directories == (MIGRATING,) * 3


def test_a_replica_shrink_without_directories_leaves_every_remaining_replica_migrating():
    image = image_with_brokers(1, 2, 3)
    topic_id = add_topic(image, "t", {0: {"replicas": [1, 2, 3]}})
    image.apply(rec.PartitionChangeRecord(partition_id=0, topic_id=topic_id, replicas=[1, 2]), image.offset + 1)
    assert image.topic("t").partitions[0].directories == (MIGRATING,) * 2


def test_an_empty_image_is_before_offset_0():
    image = MetadataImage()
    assert image.offset == -1
    image.apply(rec.FeatureLevelRecord(name="metadata.version", feature_level=21), 0)
    assert (image.offset, image.features) == (0, {"metadata.version": 21})
