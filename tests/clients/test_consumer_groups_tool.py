"""Kafka's own ``kafka-consumer-groups`` (ConsumerGroupCommand, from tests/kafka/lib) against kraftwire:
``--list`` (with ``--state``), ``--describe`` (offsets and lag per partition from the log end offsets,
``--members``, ``--state``), ``--reset-offsets --to-earliest`` dry run and ``--execute``, ``--delete-offsets``
and ``--delete``, refused while the group has a member and done once it is empty; the tables it prints
are read back column by column. Through ListGroups, DescribeGroups, OffsetFetch, ListOffsets,
OffsetCommit, OffsetDelete and DeleteGroups on real TCP."""
from __future__ import annotations

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata

from apache_kafka import run_tool
from kraftwire.server.host.cluster import BackgroundCluster

CONSUMER_GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
GROUP, TOPIC = "tooled", "tooled-topic"


@pytest.fixture(scope="module")
def bg():
    configs = {"group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "3"}
    with BackgroundCluster(brokers=3, group_configs=configs) as cluster:
        yield cluster


def tool(bg, *args: str) -> str:
    """What the tool printed, its standard output then its standard error (where it says that a group
    has no active members)."""
    done = run_tool(CONSUMER_GROUPS, "--bootstrap-server", bg.bootstrap, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def table(text: str) -> list[dict[str, str]]:
    """The rows of the first table printed (a header line of upper-case column names), by column. Kafka's
    COORDINATOR (ID) column holds a space: it is read as two cells."""
    lines = [line for line in text.splitlines() if line.strip()]
    start = next(i for i, line in enumerate(lines) if line.split()[0] in ("GROUP", "TOPIC"))
    header = lines[start].replace("COORDINATOR (ID)", "COORDINATOR ID").split()
    rows = []
    for line in lines[start + 1:]:
        cells = line.split()
        if len(cells) < len(header) - 1 or line.startswith(("Consumer group", "Error")):
            break
        rows.append(dict(zip(header, cells)))
    return rows


def committed(bg) -> dict[int, int]:
    admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap)
    try:
        return {tp.partition: meta.offset for tp, meta in admin.list_group_offsets(GROUP)[GROUP].items()}
    finally:
        admin.close()


def test_kafka_consumer_groups_tool(bg):
    admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap)
    try:
        admin.create_topics([NewTopic(TOPIC, 2, 3)])
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=bg.bootstrap, acks="all")
    for partition, count in ((0, 6), (1, 4)):
        for _ in range(count):
            producer.send(TOPIC, b"v", partition=partition)
    producer.flush(30)
    producer.close(10)
    consumer = KafkaConsumer(TOPIC, bootstrap_servers=bg.bootstrap, group_id=GROUP, client_id="toolclient",
                             auto_offset_reset="earliest", enable_auto_commit=False)
    try:
        while len(consumer.assignment()) < 2:
            consumer.poll(200)
        consumer.commit({TopicPartition(TOPIC, p): OffsetAndMetadata(4, "", -1) for p in (0, 1)})
        live_steps(bg)
    finally:
        consumer.close()
    empty_steps(bg)


def live_steps(bg) -> None:
    """While the group's one member is in it."""
    assert GROUP in tool(bg, "--list").split()
    assert [(r["GROUP"], r["STATE"]) for r in table(tool(bg, "--list", "--state", "Stable"))] == [(GROUP, "Stable")]
    assert GROUP not in tool(bg, "--list", "--state", "Empty").split()  # the state filter
    rows = sorted(table(tool(bg, "--describe", "--group", GROUP)), key=lambda r: r["PARTITION"])
    assert [(r["TOPIC"], r["PARTITION"], r["CURRENT-OFFSET"], r["LOG-END-OFFSET"], r["LAG"], r["CLIENT-ID"])
            for r in rows] == [(TOPIC, "0", "4", "6", "2", "toolclient"), (TOPIC, "1", "4", "4", "0", "toolclient")]
    member = rows[0]["CONSUMER-ID"]
    assert member.startswith("toolclient-") and rows[0]["HOST"] == "/127.0.0.1"
    members = table(tool(bg, "--describe", "--group", GROUP, "--members"))
    assert [(r["CONSUMER-ID"], r["CLIENT-ID"], r["#PARTITIONS"]) for r in members] == [(member, "toolclient", "2")]
    state = table(tool(bg, "--describe", "--group", GROUP, "--state"))
    assert [(r["ASSIGNMENT-STRATEGY"], r["STATE"], r["#MEMBERS"]) for r in state] == [("range", "Stable", "1")]
    leaders = {b.broker_id for b in bg.cluster.brokers}
    assert int(state[0]["ID"].strip("()")) in leaders
    refused = tool(bg, "--delete", "--group", GROUP)
    assert "Group 'tooled' could not be deleted due to" in refused and "GroupNotEmptyException" in refused
    subscribed = table(tool(bg, "--delete-offsets", "--group", GROUP, "--topic", TOPIC))
    assert [r["PARTITION"] for r in subscribed] == ["0", "1"]
    assert committed(bg) == {0: 4, 1: 4}


def empty_steps(bg) -> None:
    """Once the member left (the group is Empty)."""
    described = tool(bg, "--describe", "--group", GROUP)
    assert "Consumer group 'tooled' has no active members." in described
    assert [(r["PARTITION"], r["CURRENT-OFFSET"], r["LAG"], r["CONSUMER-ID"]) for r in sorted(
        table(described), key=lambda r: r["PARTITION"])] == [("0", "4", "2", "-"), ("1", "4", "0", "-")]
    dry = table(tool(bg, "--reset-offsets", "--group", GROUP, "--topic", TOPIC, "--to-earliest", "--dry-run"))
    assert sorted((r["PARTITION"], r["NEW-OFFSET"]) for r in dry) == [("0", "0"), ("1", "0")]
    assert committed(bg) == {0: 4, 1: 4}  # a dry run commits nothing
    tool(bg, "--reset-offsets", "--group", GROUP, "--topic", TOPIC, "--to-earliest", "--execute")
    assert committed(bg) == {0: 0, 1: 0}
    deleted = tool(bg, "--delete-offsets", "--group", GROUP, "--topic", f"{TOPIC}:1")
    assert "Request succeeded for deleting offsets from group tooled." in deleted
    assert [(r["PARTITION"], r["STATUS"]) for r in table(deleted)] == [("1", "Successful")]
    assert committed(bg) == {0: 0}
    lag = table(tool(bg, "--describe", "--group", GROUP, "--offsets"))
    assert [(r["PARTITION"], r["CURRENT-OFFSET"], r["LOG-END-OFFSET"], r["LAG"]) for r in lag] == [("0", "0", "6", "6")]
    assert [(r["GROUP"], r["STATE"]) for r in table(tool(bg, "--list", "--state", "empty"))] == [(GROUP, "Empty")]
    assert "Deletion of requested consumer groups ('tooled') was successful." in tool(bg, "--delete", "--group", GROUP)
    assert GROUP not in tool(bg, "--list").split()
    assert committed(bg) == {}
