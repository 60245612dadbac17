"""A broker's intake of the requests it relays to the controller as their bytes (AlterPartitionReassignments,
ListPartitionReassignments, DescribeQuorum): its listener checks such a request's structure without
building it (server/wire/transport.py, ``Undecoded``), over raw TCP against a running cluster.

* A body that does not parse closes the client's connection at the broker, as Kafka's broker, which
  parses every request, closes it; nothing reaches the controller, and the broker goes on serving.
* What the broker does need of the request still comes from it: the forward's deadline (TimeoutMs, read
  from the bytes) and, when no controller answers by then, the REQUEST_TIMED_OUT answer listing every
  partition the request named.
* An error injected for one topic (the injector swaps the handler) sees the request decoded.
* With several controllers, a standby's NOT_CONTROLLER answer (read from the answer's bytes) sends the
  request on to the active controller.
"""
from __future__ import annotations

import asyncio

from kraftwire import Cluster
from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import (AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse,
                                      CreateTopicsRequest, CreateTopicsResponse, RequestHeader)
from tests.wings.wire.test_transport import (assert_closed, frame, open_broker, raw_frame, read_response,
                                  send_bad_input_and_check)

AR, ARR = AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse
PARTITIONS = 40  # a body well over the 256 bytes below which a request is decoded (and kept) anyway


def reassignment(topic: str, timeout_ms: int = 30000) -> AR:
    return AR(timeout_ms=timeout_ms, topics=[AR.ReassignableTopic(name=topic, partitions=[
        AR.ReassignablePartition(partition_index=i, replicas=[2]) for i in range(PARTITIONS)])])


def header(correlation_id: int) -> bytes:
    return RequestHeader(request_api_key=AR.API_KEY, request_api_version=0, correlation_id=correlation_id,
                         client_id="test-intake").encode(2)


def reassignments_the_controller_answered(cluster) -> int:
    counts = cluster.controller_node.listener.request_stats()[0]
    return sum(n for (key, _version, _code), n in counts.items() if key == AR.API_KEY)


async def create(cluster, *topics: str) -> None:
    reader, writer = await open_broker(cluster)
    writer.write(frame(CreateTopicsRequest(timeout_ms=30000, topics=[CreateTopicsRequest.CreatableTopic(
        name=topic, num_partitions=PARTITIONS, replication_factor=1) for topic in topics]), 7, 1))
    _, answer = await read_response(reader, CreateTopicsResponse, 7)
    assert [t.error_code for t in answer.topics] == [ErrorCode.NONE] * len(topics)
    writer.close()


async def reassign(cluster, request: AR, correlation_id: int = 9):
    reader, writer = await open_broker(cluster)
    writer.write(frame(request, 0, correlation_id))
    received_id, answer = await read_response(reader, ARR, 0)
    assert received_id == correlation_id
    writer.close()
    return answer


async def test_a_relayed_request_that_does_not_parse_is_refused_at_the_broker_and_never_forwarded(cluster):
    await create(cluster, "orders")
    body = reassignment("orders").encode(0)
    not_utf8 = bytearray(body)
    not_utf8[not_utf8.index(b"orders")] = 0xFF  # the topic name's first byte
    cut = body[:-3]  # inside the last partition's entry; the frame's size still fits what is sent
    count = bytearray(body)
    count[4] = 0x7F  # 126 topics claimed where one follows
    for damaged in (bytes(not_utf8), cut, bytes(count)):
        await send_bad_input_and_check(cluster, raw_frame(header(3) + damaged))
    assert reassignments_the_controller_answered(cluster) == 0

    answer = await reassign(cluster, reassignment("orders"))
    assert [(p.partition_index, p.error_code) for t in answer.responses for p in t.partitions] == [
        (i, ErrorCode.NONE) for i in range(PARTITIONS)]
    assert reassignments_the_controller_answered(cluster) == 1
    await cluster.wait_until(lambda image: all(  # the target first, then any replica being removed
        state.replicas[0] == 2 for state in image.topic("orders").partitions.values()))


async def test_a_relayed_request_no_controller_answers_in_time_is_answered_for_every_partition(cluster):
    """The forward's deadline is the request's TimeoutMs (1.5 s here; the default would be 30 s),
    read from the bytes; the REQUEST_TIMED_OUT answer names each partition, from the request decoded
    then. The connection stays open and serves the same request once the controller is back."""
    await create(cluster, "orders")
    reader, writer = await open_broker(cluster)
    cluster.pause_controller(cluster.controller_ids[0])
    try:
        writer.write(frame(reassignment("orders", timeout_ms=1500), 0, 11))
        correlation_id, answer = await read_response(reader, ARR, 0)
    finally:
        cluster.resume_controller(cluster.controller_ids[0])
    assert correlation_id == 11
    assert answer.error_code == ErrorCode.REQUEST_TIMED_OUT
    assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in answer.responses] == [
        ("orders", [(i, ErrorCode.REQUEST_TIMED_OUT) for i in range(PARTITIONS)])]
    writer.write(frame(reassignment("orders"), 0, 12))
    correlation_id, answer = await read_response(reader, ARR, 0)
    assert correlation_id == 12 and answer.error_code == ErrorCode.NONE
    writer.close()


async def test_an_error_injected_for_one_topic_sees_the_relayed_request_decoded(cluster):
    await create(cluster, "orders", "payments")
    cluster.inject_error(AR.API_KEY, ErrorCode.NOT_CONTROLLER, topic="payments")
    spared = await reassign(cluster, reassignment("orders"))
    assert {p.error_code for t in spared.responses for p in t.partitions} == {ErrorCode.NONE}
    injected = await reassign(cluster, reassignment("payments"))
    assert [(t.name, {p.error_code for p in t.partitions}) for t in injected.responses] == [
        ("payments", {ErrorCode.NOT_CONTROLLER})]
    assert reassignments_the_controller_answered(cluster) == 1  # the injected one never left the broker


async def test_a_refused_relay_leaves_the_requests_before_it_answered(cluster):
    """A good reassignment pipelined ahead of an unparsable one is forwarded and answered, then the
    connection closes (the bad one is refused before anything after it is read)."""
    await create(cluster, "orders")
    reader, writer = await open_broker(cluster)
    writer.write(frame(reassignment("orders"), 0, 21) + raw_frame(header(22) + reassignment("orders").encode(0)[:-3]))
    correlation_id, answer = await asyncio.wait_for(read_response(reader, ARR, 0), 30)
    assert correlation_id == 21 and answer.error_code == ErrorCode.NONE
    await assert_closed(reader)
    writer.close()


async def test_a_relayed_answer_refused_by_a_standby_is_retried_at_the_active_controller():
    """With several controllers the broker reads a relayed answer's top-level error code from its bytes:
    a standby's NOT_CONTROLLER (every error code of its answer) sends the request on to the active one."""
    async with Cluster(brokers=3, controllers=3) as cluster:
        await create(cluster, "orders")
        standby = next(node for node, controller in zip(cluster.controller_nodes, cluster.controllers)
                       if not controller.active)
        assert cluster.broker(1).client.use((standby.host, standby.port))
        answer = await reassign(cluster, reassignment("orders"))
        assert {p.error_code for t in answer.responses for p in t.partitions} == {ErrorCode.NONE}
        refused = standby.listener.request_stats()[0]
        assert refused.get((AR.API_KEY, 0, ErrorCode.NOT_CONTROLLER)) == 1
        await cluster.wait_until(lambda image: all(
            state.replicas[0] == 2 for state in image.topic("orders").partitions.values()))
