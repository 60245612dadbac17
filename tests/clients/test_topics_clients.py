"""The topic APIs through confluent-kafka 2.16 (librdkafka: CreateTopics v4, DeleteTopics and
CreatePartitions v1, ElectLeaders) and aiokafka 0.14 (CreateTopics v3, DeleteTopics v3, CreatePartitions
v1): what they get back and what the cluster then holds. Also unclean elections, automatic where a topic
sets ``unclean.leader.election.enable`` and on request otherwise."""
from __future__ import annotations

import time

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin import NewPartitions as AioNewPartitions
from aiokafka.admin import NewTopic as AioNewTopic
from aiokafka.errors import InvalidPartitionsError
from confluent_kafka import ElectionType, KafkaError, KafkaException, TopicCollection, TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

from kraftwire.server.host.cluster import BackgroundCluster

TIMEOUT = 15  # seconds a confluent-kafka call may take before the test gives up on it


def confluent(bg) -> AdminClient:
    """A confluent-kafka admin client bootstrapped from the brokers running now."""
    return AdminClient({"bootstrap.servers": bg.bootstrap, "log_level": 3})


def outcomes(futures: dict) -> dict:
    """name -> None for success, else (code, message) of the KafkaError."""
    result = {}
    for key, future in futures.items():
        error = future.exception(TIMEOUT)
        result[key] = None if error is None else (error.args[0].code(), error.args[0].str())
    return result


def confluent_layout(admin: AdminClient, topic: str) -> dict[int, tuple[list[int], int, list[int]]]:
    """partition -> (replicas, leader, ISR) from a Metadata request (``list_topics``)."""
    metadata = admin.list_topics(topic, timeout=TIMEOUT).topics[topic]
    assert metadata.error is None, metadata.error
    return {p.id: (list(p.replicas), p.leader, list(p.isrs)) for p in metadata.partitions.values()}


# --- confluent-kafka ---------------------------------------------------------------------------------

def test_confluent_create_describe_grow_delete(bg_cluster):
    admin = confluent(bg_cluster)
    created = outcomes(admin.create_topics([
        NewTopic("c-placed", 3, 2),
        NewTopic("c-manual", 2, replica_assignment=[[1, 2], [2, 3]]),
        NewTopic("c-default", config={"retention.ms": "1000"}),
    ], operation_timeout=TIMEOUT))
    assert created == {"c-placed": None, "c-manual": None, "c-default": None}

    placed = confluent_layout(admin, "c-placed")
    assert sorted(placed) == [0, 1, 2]
    assert all(len(set(r)) == 2 and leader == r[0] and isr == r for r, leader, isr in placed.values())
    assert sorted(leader for _, leader, _ in placed.values()) == [1, 2, 3]
    assert confluent_layout(admin, "c-manual") == {0: ([1, 2], 1, [1, 2]), 1: ([2, 3], 2, [2, 3])}
    assert len(confluent_layout(admin, "c-default")) == 1

    [described] = admin.describe_topics(TopicCollection(["c-manual"])).values()
    description = described.result(TIMEOUT)
    assert [(p.id, p.leader.id, [n.id for n in p.replicas], [n.id for n in p.isr]) for p in description.partitions] == [
        (0, 1, [1, 2], [1, 2]), (1, 2, [2, 3], [2, 3])]

    grown = outcomes(admin.create_partitions([NewPartitions("c-placed", 5),
                                              NewPartitions("c-manual", 3, replica_assignment=[[3, 1]])]))
    assert grown == {"c-placed": None, "c-manual": None}
    assert len(confluent_layout(admin, "c-placed")) == 5
    assert confluent_layout(admin, "c-manual")[2] == ([3, 1], 3, [3, 1])

    assert outcomes(admin.delete_topics(["c-default", "c-nowhere"], operation_timeout=TIMEOUT)) == {
        "c-default": None, "c-nowhere": (KafkaError.UNKNOWN_TOPIC_OR_PART, "Broker: Unknown topic or partition")}
    assert set(admin.list_topics(timeout=TIMEOUT).topics) == {"c-placed", "c-manual"}


def test_confluent_refusals(bg_cluster):
    admin = confluent(bg_cluster)
    outcomes(admin.create_topics([NewTopic("c-taken", 2, 1)]))
    refused = outcomes(admin.create_topics([
        NewTopic("c-taken", 1, 1),
        NewTopic("..", 1, 1),
        NewTopic("c-wide", 1, 7),
        NewTopic("c-ghost", 1, replica_assignment=[[4]]),
        NewTopic("c-bad-config", 1, 1, config={"cleanup.policy": "shred"}),
    ]))
    assert refused == {
        "c-taken": (KafkaError.TOPIC_ALREADY_EXISTS, "Topic 'c-taken' already exists."),
        "..": (KafkaError.TOPIC_EXCEPTION, "Topic name is invalid: '..' is not allowed"),
        "c-wide": (KafkaError.INVALID_REPLICATION_FACTOR,
                   "Unable to replicate the partition 7 time(s): The target replication factor of 7 cannot be "
                   "reached because only 3 broker(s) are registered or some brokers have all their log directories "
                   "cordoned."),
        "c-ghost": (KafkaError.INVALID_REPLICA_ASSIGNMENT,
                    "The manual partition assignment includes broker 4, but no such broker is registered."),
        "c-bad-config": (KafkaError.INVALID_CONFIG,
                         "Invalid value shred for configuration cleanup.policy: String must be one of: compact, "
                         "delete"),
    }
    assert outcomes(admin.create_topics([NewTopic("c-huge", 10_001, 1)])) == {
        "c-huge": (KafkaError.POLICY_VIOLATION, "Excessively large number of partitions per request.")}
    assert outcomes(admin.create_topics([NewTopic("c-dry", 4, 2)], validate_only=True)) == {"c-dry": None}
    assert outcomes(admin.create_partitions([NewPartitions("c-taken", 1)])) == {
        "c-taken": (KafkaError.INVALID_PARTITIONS,
                    "The topic c-taken currently has 2 partition(s); 1 would not be an increase.")}
    assert outcomes(admin.create_partitions([NewPartitions("c-taken", 3)], validate_only=True)) == {"c-taken": None}
    assert set(admin.list_topics(timeout=TIMEOUT).topics) == {"c-taken"}
    assert len(confluent_layout(admin, "c-taken")) == 2


def test_confluent_elect_leaders(bg_cluster):
    admin = confluent(bg_cluster)
    outcomes(admin.create_topics([NewTopic("c-elect", 2, replica_assignment=[[1, 2], [2, 1]])]))
    results = admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition("c-elect", 0),
                                                           TopicPartition("c-elect", 9)]).result(TIMEOUT)
    assert {tp.partition: (e.code(), e.str()) for tp, e in results.items()} == {
        0: (KafkaError.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition."),
        9: (KafkaError.UNKNOWN_TOPIC_OR_PART, "No such partition as c-elect-9")}
    # All partitions: those already led by their preferred replica are left out of the answer.
    assert admin.elect_leaders(ElectionType.PREFERRED, None).result(TIMEOUT) == {}
    results = admin.elect_leaders(ElectionType.UNCLEAN, [TopicPartition("c-elect", 1)]).result(TIMEOUT)
    assert [e.code() for e in results.values()] == [KafkaError.ELECTION_NOT_NEEDED]


@pytest.fixture
def quick_bg():
    """A cluster whose brokers are fenced about 1.5 s after they stop heartbeating."""
    with BackgroundCluster(brokers=3, heartbeat_interval_ms=250, session_timeout_ms=1500) as bg:
        yield bg


def wait_for_image(bg, condition, what: str, timeout: float = 20.0) -> None:
    """Wait until ``condition(committed image)`` holds (read on the cluster's own loop)."""
    deadline = time.monotonic() + timeout
    while not bg.call(condition, bg.cluster.controller.committed):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.05)


def fenced(*broker_ids):
    return lambda image: all(image.brokers[b].fenced for b in broker_ids)


def test_unclean_elections_automatic_with_the_topic_config_and_on_request(quick_bg):
    admin = confluent(quick_bg)
    assert outcomes(admin.create_topics([
        NewTopic("careful", 1, replica_assignment=[[1, 2]]),
        NewTopic("risky", 1, replica_assignment=[[1, 2]], config={"unclean.leader.election.enable": "true"}),
    ])) == {"careful": None, "risky": None}
    quick_bg.run(quick_bg.cluster.broker(2).stop())
    wait_for_image(quick_bg, fenced(2), "broker 2 is fenced")
    quick_bg.run(quick_bg.cluster.broker(1).stop())
    wait_for_image(quick_bg, fenced(1, 2), "brokers 1 and 2 are fenced")
    admin = confluent(quick_bg)
    # with eligible leader replicas (on at the default metadata.version) the ISR empties: the last in-sync
    # replica waits in the ELR (Kafka without them keeps it in the ISR; tests/wings/controller/test_eligible_leader_replicas.py)
    assert confluent_layout(admin, "careful") == {0: ([1, 2], -1, [])}
    assert confluent_layout(admin, "risky") == {0: ([1, 2], -1, [])}

    quick_bg.run(quick_bg.cluster.broker(2).start())
    wait_for_image(quick_bg, lambda image: not image.brokers[2].fenced, "broker 2 is back")
    admin = confluent(quick_bg)
    assert confluent_layout(admin, "risky") == {0: ([1, 2], 2, [2])}  # elected uncleanly as soon as it could
    assert confluent_layout(admin, "careful") == {0: ([1, 2], -1, [])}

    results = admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition("careful", 0)]).result(TIMEOUT)
    assert [(e.code(), e.str()) for e in results.values()] == [
        (KafkaError.PREFERRED_LEADER_NOT_AVAILABLE, "The preferred leader was not available.")]
    results = admin.elect_leaders(ElectionType.UNCLEAN, [TopicPartition("careful", 0),
                                                         TopicPartition("risky", 0)]).result(TIMEOUT)
    assert {tp.topic: e and e.code() for tp, e in results.items()} == {
        "careful": None, "risky": KafkaError.ELECTION_NOT_NEEDED}
    assert confluent_layout(admin, "careful") == {0: ([1, 2], 2, [2])}


# --- aiokafka ----------------------------------------------------------------------------------------

@pytest.fixture
async def aio_admin(cluster):
    admin = AIOKafkaAdminClient(bootstrap_servers=cluster.bootstrap, client_id="topics-test")
    await admin.start()
    yield admin
    await admin.close()


async def aio_layout(admin, topic: str) -> dict[int, tuple[list[int], int, list[int]]]:
    [described] = await admin.describe_topics([topic])
    assert described["error_code"] == 0, described
    return {p["partition"]: (p["replicas"], p["leader"], p["isr"]) for p in described["partitions"]}


async def test_aiokafka_create_describe_grow_delete(aio_admin):
    response = await aio_admin.create_topics([
        AioNewTopic("a-placed", 4, 3),
        AioNewTopic("a-manual", -1, -1, replica_assignments={0: [3, 2], 1: [1, 3]}),
        AioNewTopic("a-configured", 1, 1, topic_configs={"segment.bytes": "1048576"}),
    ])
    assert sorted(response.topic_errors) == [("a-configured", 0, None), ("a-manual", 0, None), ("a-placed", 0, None)]
    placed = await aio_layout(aio_admin, "a-placed")
    assert sorted(placed) == [0, 1, 2, 3]
    assert all(sorted(r) == [1, 2, 3] and leader == r[0] and isr == r for r, leader, isr in placed.values())
    assert await aio_layout(aio_admin, "a-manual") == {0: ([3, 2], 3, [3, 2]), 1: ([1, 3], 1, [1, 3])}

    await aio_admin.create_partitions({"a-manual": AioNewPartitions(total_count=3, new_assignments=[[2, 1]])})
    assert (await aio_layout(aio_admin, "a-manual"))[2] == ([2, 1], 2, [2, 1])
    with pytest.raises(InvalidPartitionsError, match=r"Topic already has 3 partition\(s\)\."):
        await aio_admin.create_partitions({"a-manual": AioNewPartitions(total_count=3)})

    response = await aio_admin.delete_topics(["a-placed", "a-gone"])
    assert sorted(response.topic_error_codes) == [("a-gone", 3), ("a-placed", 0)]
    assert sorted(await aio_admin.list_topics()) == ["a-configured", "a-manual"]


async def test_aiokafka_refusals_and_validate_only(aio_admin):
    response = await aio_admin.create_topics([
        AioNewTopic("a-twice", 1, 1), AioNewTopic("a-twice", 2, 1),
        AioNewTopic("a" * 250, 1, 1),
        AioNewTopic("a-zero", 1, 0),
        AioNewTopic("a-lopsided", -1, -1, replica_assignments={0: [1, 2], 1: [3]}),
    ])
    assert sorted(response.topic_errors) == sorted([
        ("a-twice", 42, "Duplicate topic name."),
        ("a" * 250, 17, f"Topic name is invalid: the length of '{'a' * 250}' is longer than the max allowed "
                        "length 249"),
        ("a-zero", 38, "Replication factor must be larger than 0, or -1 to use the default value."),
        ("a-lopsided", 39, "The manual partition assignment includes a partition with 1 replica(s), but this is "
                           "not consistent with previous partitions, which have 2 replica(s)."),
    ])
    response = await aio_admin.create_topics([AioNewTopic("a-dry", 3, 2)], validate_only=True)
    assert response.topic_errors == [("a-dry", 0, None)]
    assert await aio_admin.list_topics() == []
