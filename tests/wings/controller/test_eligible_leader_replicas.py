"""Eligible leader replicas (KIP-966) and the other behaviours metadata.version turns on, as pure
decisions on images built from records: which records the broker lifecycle, AlterPartition,
IncrementalAlterConfigs, BrokerRegistration and BrokerHeartbeat write at each level (Kafka's
PartitionChangeBuilder, ReplicationControlManager and ConfigurationControlManager)."""
from __future__ import annotations

import uuid

import pytest
from kafka import KafkaAdminClient
from kafka.admin import AlterConfigOp, ConfigResource, NewTopic
from kafka.errors import KafkaConnectionError

from kraftwire.codec import records as rec
from kraftwire.codec.constants import LEADER_RECOVERING, NO_LEADER
from kraftwire.codec.messages import (AlterPartitionRequest, BrokerHeartbeatRequest, BrokerRegistrationRequest,
                                      IncrementalAlterConfigsRequest)
from kraftwire.server.controller import configuration_control as alter_configs
from kraftwire.server.controller.replication import alter_partition
from kraftwire.server.controller import cluster_control as registration
from kraftwire.server.controller import cluster_control as heartbeat
from kraftwire.server.controller.broker_lifecycle import fence_broker, unfence_broker
from kraftwire.server.controller.partition_change import rules_for
from kraftwire.server.host.cluster import BackgroundCluster
from kraftwire.server.metadata.record_versions import METADATA_VERSIONS, bootstrap_records, version_for
from tests.wings.host.test_control_plane import until
from topic_records import TOPIC, add_topic, apply_all, image_with_brokers

ELR_LEVEL, NO_ELR_LEVEL = METADATA_VERSIONS["4.1-IV0"], METADATA_VERSIONS["4.0-IV3"]


def cluster_image(level: int, min_isr: str | None = "2"):
    """Brokers 1-3 and topic t (replicas [1, 2, 3], all in sync, 1 leads) at ``level``, with
    min.insync.replicas on the topic."""
    image = image_with_brokers(1, 2, 3)
    apply_all(image, bootstrap_records(level))
    add_topic(image, "t", {0: {"replicas": [1, 2, 3]}}, {"min.insync.replicas": min_isr} if min_isr else None)
    return image


def part(image):
    return image.topic("t").partitions[0]


def fence(image, *broker_ids):
    for broker_id in broker_ids:
        apply_all(image, fence_broker(image, broker_id))


def unfence(image, broker_id):
    records = unfence_broker(image, broker_id)
    apply_all(image, records)
    return records


def restart(image, broker_id, previous_epoch=-1):
    """A new incarnation of ``broker_id`` registers (v3, with PreviousBrokerEpoch)."""
    request = BrokerRegistrationRequest(broker_id=broker_id, cluster_id="c", incarnation_id=uuid.uuid4(),
                                        log_dirs=list(image.brokers[broker_id].log_dirs),
                                        previous_broker_epoch=previous_epoch)
    records, response = registration.register_broker(image, request, 3, "c", session_alive=False)
    assert response.error_code == 0
    apply_all(image, records)
    return records


def test_bootstrap_turns_elr_on_from_4_1():
    assert [(type(r).__name__, getattr(r, "name", None)) for r in bootstrap_records(ELR_LEVEL)] == [
        ("FeatureLevelRecord", "metadata.version"), ("FeatureLevelRecord", "eligible.leader.replicas.version"),
        ("FeatureLevelRecord", "group.version"), ("ConfigRecord", "min.insync.replicas")]
    assert [r.name for r in bootstrap_records(NO_ELR_LEVEL)] == ["metadata.version", "group.version"]
    assert rules_for(cluster_image(ELR_LEVEL), "t").elr and not rules_for(cluster_image(NO_ELR_LEVEL), "t").elr


def test_min_isr_is_capped_at_the_replication_factor_and_falls_back_to_the_cluster_default():
    assert rules_for(cluster_image(ELR_LEVEL, "5"), "t").min_isr == 3
    assert rules_for(cluster_image(ELR_LEVEL, None), "t").min_isr == 1  # the bootstrap's cluster default


def test_fencing_below_min_isr_moves_replicas_to_the_elr_and_the_isr_may_empty():
    image = cluster_image(ELR_LEVEL)
    fence(image, 3)
    assert (part(image).isr, part(image).elr) == ((1, 2), ())  # at min ISR: no ELR
    fence(image, 2)
    assert (part(image).isr, part(image).elr, part(image).leader) == ((1,), (2,), 1)
    fence(image, 1)
    state = part(image)
    assert (state.isr, state.elr, state.leader, state.last_known_elr) == ((), (1, 2), NO_LEADER, (1,))


def test_an_elr_member_is_elected_when_the_isr_is_empty():
    image = cluster_image(ELR_LEVEL)
    fence(image, 3, 2, 1)
    (change,) = unfence(image, 2)[1:]
    assert (change.leader, change.isr, change.eligible_leader_replicas, change.last_known_elr) == (2, (2,), (1,), ())
    assert version_for(change, ELR_LEVEL) == 2
    state = part(image)
    assert (state.leader, state.isr, state.elr, state.last_known_elr) == (2, (2,), (1,), ())


def test_isr_back_at_min_isr_empties_the_elr():
    image = cluster_image(ELR_LEVEL)
    fence(image, 3, 2)
    assert unfence(image, 2)[1:] == []  # 1 still leads: broker 2 rejoins through AlterPartition
    state = part(image)
    request = AlterPartitionRequest(broker_id=1, broker_epoch=image.brokers[1].epoch, topics=[
        AlterPartitionRequest.TopicData(topic_id=image.topic_ids["t"], partitions=[AlterPartitionRequest.PartitionData(
            partition_index=0, leader_epoch=state.leader_epoch, partition_epoch=state.partition_epoch,
            new_isr_with_epochs=[AlterPartitionRequest.BrokerState(broker_id=b, broker_epoch=-1) for b in (1, 2)])])])
    (change,), response = alter_partition.decide(image, request, 3)
    assert response.topics[0].partitions[0].error_code == 0
    assert (change.isr, change.eligible_leader_replicas, change.last_known_elr) == ((1, 2), (), None)


def test_without_elr_the_last_isr_member_stays():
    image = cluster_image(NO_ELR_LEVEL)
    fence(image, 3, 2, 1)
    state = part(image)
    assert (state.isr, state.elr, state.leader, state.last_known_elr) == ((1,), (), NO_LEADER, ())


def test_an_unclean_restart_leaves_the_elr_and_a_clean_one_does_not():
    image = cluster_image(ELR_LEVEL)
    fence(image, 3, 2, 1)
    clean_epoch = image.brokers[1].epoch
    restart(image, 1, previous_epoch=clean_epoch)
    assert part(image).elr == (1, 2)
    records = restart(image, 2)
    (change,) = [r for r in records if type(r) is rec.PartitionChangeRecord]
    assert change.eligible_leader_replicas == (1,) and part(image).elr == (1,)


def test_the_last_known_leader_is_elected_uncleanly_when_isr_and_elr_are_empty():
    image = cluster_image(ELR_LEVEL)
    fence(image, 3, 2, 1)
    restart(image, 1)
    restart(image, 2)
    assert (part(image).isr, part(image).elr, part(image).last_known_elr) == ((), (), (1,))
    apply_all(image, unfence_broker(image, 1))
    state = part(image)
    assert (state.leader, state.isr, state.leader_recovery_state, state.last_known_elr) == (
        1, (1,), LEADER_RECOVERING, ())


def test_min_isr_changes_clear_the_elr_where_it_is_on():
    Resource = IncrementalAlterConfigsRequest.AlterConfigsResource
    Config = IncrementalAlterConfigsRequest.AlterableConfig
    request = IncrementalAlterConfigsRequest(resources=[
        Resource(resource_type=TOPIC, resource_name="t", configs=[Config(name="min.insync.replicas", value="1")]),
        Resource(resource_type=4, resource_name="", configs=[Config(name="min.insync.replicas", value="2")])])
    for level, cleared in ((ELR_LEVEL, ["t", ""]), (NO_ELR_LEVEL, [])):
        image = cluster_image(level)
        fence(image, 3, 2)
        records, response = alter_configs.incremental_alter_configs(image, request, 3000)
        assert [r.error_code for r in response.responses] == [0, 0]
        assert [r.topic_name for r in records if type(r) is rec.ClearElrRecord] == cleared
        apply_all(image, records)
        assert part(image).elr == ()


@pytest.mark.parametrize("level, recorded", [("4.3-IV0", True), ("4.2-IV1", False)])
def test_heartbeats_record_cordoned_directories_from_4_3(level, recorded):
    image = cluster_image(METADATA_VERSIONS[level])
    broker = image.brokers[2]

    def beat(cordoned):
        records, response = heartbeat.broker_heartbeat(image, BrokerHeartbeatRequest(
            broker_id=2, broker_epoch=broker.epoch, current_metadata_offset=image.offset,
            cordoned_log_dirs=cordoned))
        assert response.error_code == 0
        apply_all(image, records)
        return [r for r in records if type(r) is rec.BrokerRegistrationChangeRecord]

    assert beat(None) == []  # not caught up yet
    changes = beat(list(broker.log_dirs))
    assert [c.cordoned_log_dirs for c in changes] == ([broker.log_dirs] if recorded else [])
    if recorded:
        assert version_for(changes[0], image.metadata_version_level) == 3
        assert beat(list(broker.log_dirs)) == []  # unchanged: nothing written
        assert not image.brokers[2].has_uncordoned_dirs
        assert [c.cordoned_log_dirs for c in beat([])] == [()]
        assert image.brokers[2].has_uncordoned_dirs


def test_elr_through_describe_topic_partitions():
    """A cluster at 4.1-IV0 through kafka-python: brokers that die and are fenced when their sessions
    lapse, below the topic's min.insync.replicas, move to the ELR; one restarting (without a clean
    shutdown) leaves it; lowering min.insync.replicas clears it (DescribeTopicPartitions'
    EligibleLeaderReplicas)."""
    with BackgroundCluster(brokers=3, metadata_version="4.1-IV0", session_timeout_ms=3000) as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="elr-test")
        try:
            admin.create_topics([NewTopic("guarded", -1, -1, replica_assignments={0: [1, 2, 3]},
                                          topic_configs={"min.insync.replicas": "3"})])

            def described():
                """(leader, ISR, ELR); None while the client's connection is to a broker that just died."""
                try:
                    [topic] = admin.describe_topic_partitions(["guarded"])["topics"]
                except KafkaConnectionError:
                    return None
                [partition] = topic["partitions"]
                return (partition["leader_id"], sorted(partition["isr_nodes"]),
                        sorted(partition["eligible_leader_replicas"] or []))

            until(lambda: described() == (1, [1, 2, 3], []))
            bg.run(bg.cluster.stop_broker(3))
            until(lambda: described() == (1, [1, 2], [3]))
            bg.run(bg.cluster.stop_broker(2))
            until(lambda: described() == (1, [1], [2, 3]))
            bg.run(bg.cluster.start_broker(3))
            until(lambda: described() == (1, [1, 3], [2]))  # out of the ELR, back in the ISR once caught up
            assert admin.alter_configs([ConfigResource("TOPIC", "guarded", {
                "min.insync.replicas": (AlterConfigOp.SET, "2")})]) == {"topic": {"guarded": "OK"}}
            until(lambda: described() == (1, [1, 3], []))
        finally:
            admin.close()
