"""The pure reassignment decisions, checked against Kafka's own worked examples (reference §2).

Images are built by applying records; the decisions (AlterPartitionReassignments, AlterPartition,
ListPartitionReassignments, build_change, throttle removal, rate sharing) run without sockets.
"""
from __future__ import annotations

import pytest

from kraftwire.codec import records as rec
from kraftwire.codec.messages import (AlterPartitionReassignmentsRequest, AlterPartitionRequest,
                            ListPartitionReassignmentsRequest)
from kraftwire.codec.constants import LEADER_UNCHANGED
from kraftwire.server.controller.replication import reassignment as alter
from kraftwire.server.controller.replication import reassignment_listing as listing
from kraftwire.server.controller.replication import alter_partition
from kraftwire.server.controller.partition_change import ChangeRules, build_change
from kraftwire.server.broker.replication_network import allocate_rates
from kraftwire.server.controller.throttle_cleanup import throttle_removals
from kraftwire.server.metadata.record_versions import METADATA_VERSIONS
from topic_records import BROKER, TOPIC, add_topic, apply_all, image_with_brokers

Request = AlterPartitionReassignmentsRequest
UNCLEAN = {"unclean.leader.election.enable": "true"}
RULES = ChangeRules()  # Kafka 4.3+ without eligible leader replicas


def alter_request(entries, allow_rf_change=True) -> Request:
    """entries: [(topic, partition, replicas or None)], one topic entry per item, in order."""
    return Request(allow_replication_factor_change=allow_rf_change, topics=[
        Request.ReassignableTopic(name=t, partitions=[Request.ReassignablePartition(partition_index=p, replicas=r)])
        for t, p, r in entries])


def run_alter(image, entries, allow_rf_change=True):
    """Decide, apply the records, and return (records, [(code, message)] in request order)."""
    records, response = alter.decide(image, alter_request(entries, allow_rf_change))
    apply_all(image, records)
    assert response.error_code == 0 and response.error_message is None
    return records, [(p.error_code, p.error_message) for t in response.responses for p in t.partitions]


def part(image, topic="t", index=0):
    return image.topic(topic).partitions[index]


def alter_isr(image, sender, isr, topic="t", index=0):
    """An AlterPartition v3 from ``sender`` proposing ``isr``; returns (records, partition result)."""
    state = part(image, topic, index)
    request = AlterPartitionRequest(broker_id=sender, broker_epoch=image.brokers[sender].epoch, topics=[
        AlterPartitionRequest.TopicData(topic_id=image.topic_ids[topic], partitions=[
            AlterPartitionRequest.PartitionData(
                partition_index=index, leader_epoch=state.leader_epoch, partition_epoch=state.partition_epoch,
                new_isr_with_epochs=[AlterPartitionRequest.BrokerState(broker_id=b, broker_epoch=-1) for b in isr])])])
    records, response = alter_partition.decide(image, request, 3)
    apply_all(image, records)
    return records, response.topics[0].partitions[0]


# --- merged lists (PartitionReassignmentReplicasTest) ---------------------------------------------

def test_merged_order_is_target_then_removed_ascending():
    assert alter.reassignment_lists((3, 2, 1, 0), (7, 3, 1, 9)) == ((7, 3, 1, 9, 0, 2), (7, 9), (0, 2))


def test_adding_is_sorted_not_request_order():
    assert alter.reassignment_lists((3, 2, 1), (3, 6, 2, 1, 5))[1] == (5, 6)


# --- starting ------------------------------------------------------------------------------------

def test_start_writes_merged_lists_without_leader_epoch_bump():
    image = image_with_brokers(0, 1, 2, 3)
    add_topic(image, "t", {0: {"replicas": [3, 2, 1]}})
    directories = dict(zip((3, 2, 1), part(image).directories))
    records, errors = run_alter(image, [("t", 0, [0, 2, 1])])
    assert errors == [(0, None)]
    (record,) = records
    assert record.replicas == (0, 2, 1, 3) and record.removing_replicas == (3,) and record.adding_replicas == (0,)
    assert record.leader == LEADER_UNCHANGED and record.isr is None
    assert record.directories[1:] == (directories[2], directories[1], directories[3])
    state = part(image)
    assert (state.leader, state.leader_epoch, state.partition_epoch) == (3, 0, 1)


def test_same_target_writes_nothing_and_reorder_completes_at_once():
    image = image_with_brokers(1, 2, 3)
    add_topic(image, "t", {0: {"replicas": [1, 2, 3]}})
    assert run_alter(image, [("t", 0, [1, 2, 3])]) == ([], [(0, None)])
    records, errors = run_alter(image, [("t", 0, [3, 1, 2])])
    assert errors == [(0, None)] and records[0].leader == LEADER_UNCHANGED
    assert part(image).replicas == (3, 1, 2) and not part(image).reassigning and part(image).leader == 1


def test_removal_only_completes_at_once_and_bumps_leader_epoch():
    image = image_with_brokers(1, 2, 3)
    add_topic(image, "t", {0: {"replicas": [1, 2, 3]}})
    run_alter(image, [("t", 0, [1, 2])])
    state = part(image)
    assert (state.replicas, state.isr, state.adding, state.removing) == ((1, 2), (1, 2), (), ())
    assert (state.leader, state.leader_epoch) == (1, 1)


def test_fenced_and_shutting_down_brokers_are_valid_targets():
    image = image_with_brokers(1, 2, 3, 4, 5, fenced={4}, shutting_down={5})
    add_topic(image, "t", {0: {"replicas": [1, 2, 3]}})
    assert run_alter(image, [("t", 0, [4, 5, 1])])[1] == [(0, None)]


# --- validation order and messages -----------------------------------------------------------------

def test_validation_codes_and_messages():
    image = image_with_brokers(1, 2, 3)
    add_topic(image, "t", {0: {"replicas": [1, 2, 3]}})
    _, errors = run_alter(image, [
        ("nope", 0, [1]), ("t", 7, [1]), ("t", -1, None), ("t", 0, None), ("t", 0, []), ("t", 0, [5, 6, 7]),
        ("t", 0, [-3, -2, -1]), ("t", 0, [1, 9, 9]), ("t", 0, [2, 1, 2]), ("t", 0, [1, 2])])
    assert errors == [
        (3, "Unable to find a topic named nope."),
        (3, "Unable to find partition t:7."),
        (3, "Unable to find partition t:-1."),
        (85, None),
        (39, "The manual partition assignment includes an empty replica list."),
        (39, "The manual partition assignment includes broker 5, but no such broker is registered."),
        (39, "The manual partition assignment includes broker -3, but no such broker is registered."),
        (39, "The manual partition assignment includes broker 9, but no such broker is registered."),
        (39, "The manual partition assignment includes the broker 2 more than once."),
        (0, None)]


def test_entries_are_judged_against_the_state_before_the_request():
    image = image_with_brokers(1, 2, 3, 4)
    add_topic(image, "t", {0: {"replicas": [1, 2, 3]}})
    records, errors = run_alter(image, [("t", 0, [4, 2, 3]), ("t", 0, None)])
    assert errors == [(0, None), (85, None)] and len(records) == 1
    assert part(image).adding == (4,)


def test_batch_limit_fails_partitions_past_ten_thousand_records():
    image = image_with_brokers(1, 2)
    add_topic(image, "t", {i: {"replicas": [1]} for i in range(10002)})
    entries = [("t", i, [2]) for i in range(10001)] + [("t", 10001, [1])]
    records, errors = run_alter(image, entries)
    assert len(records) == 10000
    assert errors[:10000] == [(0, None)] * 10000
    assert errors[10000:] == [(-1, None), (0, None)]  # the no-op past the limit still succeeds


# --- KIP-860 -----------------------------------------------------------------------------------

def test_kip860_compares_against_the_in_flight_target():
    image = image_with_brokers(0, 1, 2, 3)
    add_topic(image, "t", {0: {"replicas": [0, 1, 2]}, 1: {"replicas": [0, 1, 2]}})
    assert run_alter(image, [("t", 0, [1, 2, 3]), ("t", 1, [0, 1])], allow_rf_change=False)[1] == [
        (0, None), (38, "The replication factor is changed from 3 to 2")]
    assert part(image).replicas == (1, 2, 3, 0)
    assert run_alter(image, [("t", 0, [0, 1])], allow_rf_change=False)[1] == [
        (38, "The replication factor is changed from 3 to 2")]
    assert run_alter(image, [("t", 0, [0, 2, 3])], allow_rf_change=False)[1] == [(0, None)]
    assert run_alter(image, [("t", 0, [7])], allow_rf_change=False)[1][0][0] == 39  # assignment checks first


def test_kip860_ignores_cancels_and_allows_when_true():
    image = image_with_brokers(1, 2, 3, 4)
    add_topic(image, "t", {0: {"replicas": [1, 2, 3]}})
    run_alter(image, [("t", 0, [1, 2, 3, 4])])
    assert run_alter(image, [("t", 0, None)], allow_rf_change=False)[1] == [(0, None)]
    assert part(image).replicas == (1, 2, 3)
    _, response = alter.decide(image, alter_request([("t", 0, [1])], allow_rf_change=False))
    assert response.allow_replication_factor_change is False


# --- cancellation (testCancelReassignPartitions) -----------------------------------------------------

def test_cancel_subtracts_adding_replicas_and_keeps_merged_order():
    image = image_with_brokers(0, 1, 2, 3, 4)
    add_topic(image, "t", {0: {"replicas": [1, 2, 3, 4, 0], "isr": [4, 2], "leader": 4, "adding": [0, 1]}})
    records, errors = run_alter(image, [("t", 0, None)])
    assert errors == [(0, None)]
    (record,) = records
    assert (record.leader, record.replicas, record.adding_replicas, record.removing_replicas) == (
        4, (2, 3, 4), (), None)
    state = part(image)
    assert (state.replicas, state.isr, state.leader, state.leader_epoch) == ((2, 3, 4), (4, 2), 4, 1)


def test_cancel_does_not_restore_the_original_order():
    image = image_with_brokers(0, 1, 2, 3)
    add_topic(image, "t", {0: {"replicas": [3, 2, 1]}})
    run_alter(image, [("t", 0, [0, 2, 1])])
    run_alter(image, [("t", 0, None)])
    assert part(image).replicas == (2, 1, 3) and not part(image).reassigning


def test_cancel_of_removal_only_reassignment_clears_removing_only():
    image = image_with_brokers(1, 2, 3)
    add_topic(image, "t", {0: {"replicas": [1, 2, 3], "isr": [1], "removing": [3]}})
    (record,), _ = run_alter(image, [("t", 0, None)])
    assert record.removing_replicas == () and record.replicas is None and record.leader == LEADER_UNCHANGED


def test_unclean_revert_refused_unless_the_topic_allows_it():
    image = image_with_brokers(1, 2, 3, 4)
    spec = {"replicas": [4, 1, 2], "isr": [4], "leader": 4, "adding": [4], "removing": [1, 2]}
    add_topic(image, "t", {0: spec})
    add_topic(image, "u", {0: spec}, configs=UNCLEAN)
    _, errors = run_alter(image, [("t", 0, None), ("u", 0, None)])
    assert errors == [(39, "Unable to revert partition assignment for t:0 because it would require an unclean "
                           "leader election."), (0, None)]
    state = part(image, "u")
    assert (state.replicas, state.isr, state.leader, state.reassigning) == ((1, 2), (1,), 1, False)


def test_a_bulk_cancel_decides_partitions_alike_once_and_names_each_refused_one():
    image = image_with_brokers(1, 2, 3, 4)
    spec = {"replicas": [4, 1, 2], "isr": [4], "leader": 4, "adding": [4], "removing": [1, 2]}
    add_topic(image, "t", {i: spec for i in range(3)})
    add_topic(image, "u", {i: spec for i in range(3)}, configs=UNCLEAN)
    records, errors = run_alter(image, [(t, i, None) for t in ("t", "u") for i in range(3)])
    assert errors == [(39, f"Unable to revert partition assignment for t:{i} because it would require an unclean "
                           "leader election.") for i in range(3)] + [(0, None)] * 3
    assert [(r.topic_id, r.partition_id) for r in records] == [(image.topic_ids["u"], i) for i in range(3)]
    assert len({r[2:] for r in records}) == 1  # the same change, stamped with each partition's ids
    assert all((part(image, "u", i).replicas, part(image, "u", i).isr) == ((1, 2), (1,)) for i in range(3))


# --- completion (testIsrEnlargementCompletesReassignment) -----------------------------------------------

def test_isr_expansion_completes_and_elects_a_new_leader():
    image = image_with_brokers(1, 2, 3, 4, fenced={3})
    add_topic(image, "t", {0: {"replicas": [1, 2, 3, 4], "isr": [1, 2, 3], "leader": 1,
                               "removing": [1], "adding": [4]}})
    # broker 3 being fenced does not matter to completion, only to who may lead
    state = part(image)
    record = build_change(image.brokers, image.topic_ids["t"], 0, state, rules=RULES, isr=(1, 2, 3, 4))
    assert (record.replicas, record.isr, record.leader, record.removing_replicas, record.adding_replicas) == (
        (2, 3, 4), (2, 3, 4), 2, (), ())


def test_alter_partition_completion_answers_new_leader_elected():
    image = image_with_brokers(0, 1, 2, 3)
    add_topic(image, "t", {0: {"replicas": [0, 1]}})
    run_alter(image, [("t", 0, [2, 3])])
    assert (part(image).replicas, part(image).adding, part(image).removing) == ((2, 3, 0, 1), (2, 3), (0, 1))
    records, result = alter_isr(image, 0, [0, 1, 2, 3])
    assert result.error_code == 108 and len(records) == 1
    state = part(image)
    assert (state.replicas, state.isr, state.leader, state.leader_epoch) == ((2, 3), (2, 3), 2, 1)


def test_alter_partition_completion_keeping_the_leader_answers_the_new_state():
    image = image_with_brokers(1, 2, 3, 4)
    add_topic(image, "t", {0: {"replicas": [1, 2, 3]}})
    run_alter(image, [("t", 0, [1, 2, 4])])
    _, result = alter_isr(image, 1, [1, 2, 3, 4])
    assert result.error_code == 0
    assert (result.leader_id, tuple(result.isr), result.leader_epoch, result.partition_epoch) == (1, (1, 2, 4), 1, 2)
    assert part(image).replicas == (1, 2, 4)


@pytest.mark.parametrize("level, completes", [("4.3-IV0", True), ("4.4-IV2", True), ("4.2-IV1", False),
                                               ("3.9-IV0", False)])
def test_growing_reassignment_with_an_existing_replica_out_of_sync(level, completes):
    """Kafka 4.3's rule (KAFKA-19975), from 4.3-IV0: only the adding replicas must be in sync; below it
    every remaining replica must be."""
    image = image_with_brokers(1, 2, 3, 4)
    apply_all(image, [rec.FeatureLevelRecord(name="metadata.version", feature_level=METADATA_VERSIONS[level])])
    add_topic(image, "t", {0: {"replicas": [1, 2, 3], "isr": [1, 2]}})
    run_alter(image, [("t", 0, [1, 2, 3, 4])])
    _, result = alter_isr(image, 1, [1, 2, 4])
    assert result.error_code == 0 and part(image).reassigning is not completes
    assert part(image).replicas == (1, 2, 3, 4) and part(image).isr == (1, 2, 4)
    if not completes:
        alter_isr(image, 1, [1, 2, 3, 4])
        assert not part(image).reassigning and part(image).isr == (1, 2, 3, 4)


def test_shrinking_reassignment_waits_for_every_kept_replica():
    image = image_with_brokers(0, 1, 2, 3, 4, 5)
    add_topic(image, "t", {0: {"replicas": [0, 1, 2, 3, 4], "isr": [0, 1]}})
    run_alter(image, [("t", 0, [2, 3, 4, 5])])
    alter_isr(image, 0, [0, 1, 5])
    assert part(image).reassigning and part(image).isr == (0, 1, 5)


# --- a second reassignment on an in-flight partition (§2.5) ------------------------------------------

def test_new_target_turns_previously_adding_replicas_into_removing():
    image = image_with_brokers(0, 1, 2, 3, 4, 5)
    add_topic(image, "t", {0: {"replicas": [0, 1]}})
    run_alter(image, [("t", 0, [2, 3])])
    alter_isr(image, 0, [0, 1, 2])
    run_alter(image, [("t", 0, [4, 5])])
    state = part(image)
    assert (state.replicas, state.adding, state.removing) == ((4, 5, 0, 1, 2, 3), (4, 5), (0, 1, 2, 3))
    _, result = alter_isr(image, state.leader, [0, 1, 2, 3, 4, 5])
    assert part(image).replicas == (4, 5) and part(image).leader == 4


def test_second_reassignment_back_to_the_original_never_wedges():
    """Kafka would keep AR [4,5,6] next to RR [4,5,6]: a partition that can never complete."""
    image = image_with_brokers(1, 2, 3, 4, 5, 6)
    add_topic(image, "t", {0: {"replicas": [1, 2, 3]}})
    run_alter(image, [("t", 0, [4, 5, 6])])
    assert (part(image).adding, part(image).removing) == ((4, 5, 6), (1, 2, 3))
    run_alter(image, [("t", 0, [1, 2, 3])])
    state = part(image)
    assert not set(state.adding) & set(state.removing)
    assert (state.replicas, state.isr, state.reassigning) == ((1, 2, 3), (1, 2, 3), False)


def test_second_reassignment_keeps_every_replica_of_the_new_target():
    """Kafka would leave RR [3] in place and later drop replica 3, which the new target keeps."""
    image = image_with_brokers(1, 2, 3, 4)
    add_topic(image, "t", {0: {"replicas": [1, 2, 3]}})
    run_alter(image, [("t", 0, [1, 2, 4])])
    run_alter(image, [("t", 0, [1, 2, 3, 4])])
    state = part(image)
    assert (state.replicas, state.adding, state.removing) == ((1, 2, 3, 4), (4,), ())  # 4 still catching up
    alter_isr(image, 1, [1, 2, 3, 4])
    state = part(image)
    assert (state.replicas, state.isr, state.reassigning) == ((1, 2, 3, 4), (1, 2, 3, 4), False)


def test_identical_target_mid_flight_writes_nothing():
    image = image_with_brokers(1, 2, 3, 4)
    add_topic(image, "t", {0: {"replicas": [1, 2, 3]}})
    run_alter(image, [("t", 0, [1, 2, 4])])
    assert run_alter(image, [("t", 0, [1, 2, 4])]) == ([], [(0, None)])


# --- AlterPartition checks ---------------------------------------------------------------------------

def test_alter_partition_checks():
    image = image_with_brokers(1, 2, 3, 4, fenced={4})
    topic_id = add_topic(image, "t", {0: {"replicas": [1, 2, 3, 4], "isr": [1, 2], "leader_epoch": 5,
                                          "partition_epoch": 7}})

    def code(sender=1, epoch=None, le=5, pe=7, isr=(1, 2, 3), topic=topic_id, index=0, recovery=0, member_epoch=-1):
        request = AlterPartitionRequest(
            broker_id=sender, broker_epoch=image.brokers[sender].epoch if epoch is None else epoch,
            topics=[AlterPartitionRequest.TopicData(topic_id=topic, partitions=[AlterPartitionRequest.PartitionData(
                partition_index=index, leader_epoch=le, partition_epoch=pe, leader_recovery_state=recovery,
                new_isr_with_epochs=[AlterPartitionRequest.BrokerState(broker_id=b, broker_epoch=member_epoch)
                                     for b in isr])])])
        records, response = alter_partition.decide(image, request, 3)
        return response.error_code or response.topics[0].partitions[0].error_code

    import uuid
    assert code(epoch=1) == 77
    assert code(topic=uuid.uuid4()) == 100
    assert code(index=3) == 3
    assert code(le=6) == 41 and code(pe=8) == 41
    assert code(le=4) == 74
    assert code(sender=2) == 42
    assert code(pe=6) == 95
    assert code(isr=(1, 2, 2)) == 42 and code(isr=(1, 5)) == 42 and code(isr=(2, 3)) == 42
    assert code(isr=(1, 2), recovery=1) == 42
    assert code(isr=(1, 4)) == 107
    assert code(isr=(1, 2), member_epoch=1) == 107
    assert code() == 0


# --- build_change epochs ------------------------------------------------------------------------------

def test_dropping_a_replica_bumps_the_leader_epoch_even_without_a_leader():
    image = image_with_brokers(1, 2, 3, fenced={1, 2, 3})
    add_topic(image, "t", {0: {"replicas": [1, 2, 3], "isr": [1], "leader": -1}})
    record = build_change(image.brokers, image.topic_ids["t"], 0, part(image), rules=RULES, replicas=(1, 2))
    assert record.leader == -1  # written, so the leader epoch goes up on replay


# --- ListPartitionReassignments ----------------------------------------------------------------------

def test_list_all_and_filtered():
    image = image_with_brokers(1, 2, 3, 4)
    add_topic(image, "a", {0: {"replicas": [1, 2, 3]}, 1: {"replicas": [1, 2, 3]}})
    add_topic(image, "b", {0: {"replicas": [1, 2, 3]}})
    run_alter(image, [("a", 1, [4, 2, 3]), ("b", 0, [1, 2, 4])])
    everything = listing.decide(image, ListPartitionReassignmentsRequest())
    assert [(t.name, [(p.partition_index, p.replicas, p.adding_replicas, p.removing_replicas) for p in t.partitions])
            for t in everything.topics] == [("a", [(1, (4, 2, 3, 1), (4,), (1,))]), ("b", [(0, (1, 2, 4, 3), (4,), (3,))])]
    Topics = ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics
    some = listing.decide(image, ListPartitionReassignmentsRequest(topics=[
        Topics(name="nope", partition_indexes=[0]), Topics(name="a", partition_indexes=[0, 1, 1, 9]),
        Topics(name="b", partition_indexes=[5])]))
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in some.topics] == [("a", [1, 1])]


# --- throttle removal and rate sharing --------------------------------------------------------------------

def test_throttle_removals_only_when_enabled_and_unneeded():
    image = image_with_brokers(1, 2, 3, 4)
    throttles = {"leader.replication.throttled.replicas": "0:1", "follower.replication.throttled.replicas": "0:4"}
    add_topic(image, "done", {0: {"replicas": [1, 2, 3]}}, configs=throttles)
    add_topic(image, "busy", {0: {"replicas": [2, 3, 4], "adding": [4], "removing": [1]}}, configs=throttles)
    from kraftwire.codec import records as rec
    for broker in ("1", "4"):
        image.apply(rec.ConfigRecord(resource_type=BROKER, resource_name=broker,
                                     name="leader.replication.throttled.rate", value="1000"), image.offset + 1)
    assert throttle_removals(image, {"done", "busy"}, {1, 4}) == []
    image.apply(rec.ConfigRecord(resource_type=BROKER, resource_name="", name="kraftwire.throttle.auto.remove.enable",
                                 value="true"), image.offset + 1)
    removed = [(r.resource_type, r.resource_name, r.name, r.value) for r in
               throttle_removals(image, {"done", "busy"}, {1, 4})]
    assert removed == [(TOPIC, "done", "leader.replication.throttled.replicas", None),
                       (TOPIC, "done", "follower.replication.throttled.replicas", None),
                       (BROKER, "1", "leader.replication.throttled.rate", None)]


def test_allocate_rates_is_max_min_fair():
    rates = allocate_rates({"a": ["t", "out1"], "b": ["t", "out1"], "c": ["out1"], "d": ["out2"]},
                           {"t": 10.0, "out1": 100.0, "out2": 50.0})
    assert rates == {"a": 5.0, "b": 5.0, "c": 90.0, "d": 50.0}
