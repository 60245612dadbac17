"""The transport over raw sockets: Kafka's answers to bad input, pipelining, request header versions.

Every request and response here is built and parsed with kraftwire's codec; the bytes go over real TCP
to a running cluster. After each bad input the server must still serve: a connection opened before it
and a fresh one both get a good Metadata answer.
"""
from __future__ import annotations

import asyncio
import random
import struct

import pytest

from kraftwire import codec
from kraftwire.codec.messages import (ApiVersionsRequest, ApiVersionsResponse, BrokerHeartbeatRequest,
                            BrokerHeartbeatResponse, DescribeClusterRequest, ListPartitionReassignmentsRequest,
                            MetadataRequest, MetadataResponse, RequestHeader, ResponseHeader)
from kraftwire.server.wire.transport import MAX_FRAME_BYTES

METADATA, API_VERSIONS, BROKER_HEARTBEAT = 3, 18, 63
UNSUPPORTED_VERSION, STALE_BROKER_EPOCH = 35, 77
_SIZE = struct.Struct(">i")
READ_TIMEOUT = 10


def frame(request, version: int, correlation_id: int, client_id: str | None = "test-transport",
          api_key: int | None = None) -> bytes:
    """A size-prefixed request; ``api_key`` overrides the header's key (the body stays ``request``'s)."""
    key = request.API_KEY if api_key is None else api_key
    out = bytearray(b"\0\0\0\0")
    RequestHeader(request_api_key=key, request_api_version=version, correlation_id=correlation_id,
                  client_id=client_id).encode_into(out, codec.request_header_version(request.API_KEY, version))
    request.encode_into(out, version)
    _SIZE.pack_into(out, 0, len(out) - 4)
    return bytes(out)


def raw_frame(header_and_body: bytes) -> bytes:
    return _SIZE.pack(len(header_and_body)) + header_and_body


async def read_frame(reader: asyncio.StreamReader) -> bytes:
    size = _SIZE.unpack(await asyncio.wait_for(reader.readexactly(4), READ_TIMEOUT))[0]
    return await asyncio.wait_for(reader.readexactly(size), READ_TIMEOUT)


async def read_response(reader, response_cls, version: int, header_version: int | None = None):
    """(correlation id, decoded response); the body must fill the frame exactly."""
    data = await read_frame(reader)
    if header_version is None:
        header_version = codec.response_header_version(response_cls.API_KEY, version)
    header, pos = ResponseHeader.decode_from(data, 0, header_version)
    return header.correlation_id, response_cls.decode(data[pos:], version)


async def assert_closed(reader: asyncio.StreamReader) -> None:
    """The server closed the connection without answering."""
    try:
        data = await asyncio.wait_for(reader.read(), READ_TIMEOUT)
    except ConnectionResetError:
        return
    assert data == b"", f"expected the connection to be closed, got {len(data)} bytes"


async def open_broker(cluster, broker_id: int = 1):
    broker = cluster.broker(broker_id)
    return await asyncio.open_connection(broker.host, broker.port)


async def assert_serves_metadata(cluster, connection=None) -> None:
    """A good Metadata v12 request is answered with the cluster's id and its three brokers."""
    reader, writer = connection or await open_broker(cluster)
    writer.write(frame(MetadataRequest(topics=None), 12, 4242))
    await writer.drain()
    correlation_id, response = await read_response(reader, MetadataResponse, 12)
    assert correlation_id == 4242
    assert response.cluster_id == cluster.controller.cluster_id
    assert sorted(b.node_id for b in response.brokers) == [1, 2, 3]
    if connection is None:
        writer.close()


async def send_bad_input_and_check(cluster, data: bytes) -> None:
    """``data`` closes its own connection only: an older connection and a new one are still served."""
    bystander = await open_broker(cluster)
    reader, writer = await open_broker(cluster)
    writer.write(data)
    await writer.drain()
    await assert_closed(reader)
    writer.close()
    await assert_serves_metadata(cluster, bystander)
    await assert_serves_metadata(cluster)
    bystander[1].close()


# --- bad input --------------------------------------------------------------------------------


async def test_frame_over_the_size_limit_is_closed(cluster):
    await send_bad_input_and_check(cluster, _SIZE.pack(MAX_FRAME_BYTES + 1))


async def test_negative_frame_size_is_closed(cluster):
    await send_bad_input_and_check(cluster, _SIZE.pack(-1))


async def test_frame_shorter_than_a_header_is_closed(cluster):
    await send_bad_input_and_check(cluster, raw_frame(b"\x00\x03\x00"))


@pytest.mark.parametrize("api_key", [9999, -1, 0, BROKER_HEARTBEAT],
                         ids=["unknown", "negative", "produce-not-served", "controller-only-api"])
async def test_api_key_not_served_on_the_listener_is_closed(cluster, api_key):
    await send_bad_input_and_check(cluster, frame(MetadataRequest(topics=None), 12, 1, api_key=api_key))


@pytest.mark.parametrize("version", [99, 14, -1])
async def test_unserved_version_is_closed(cluster, version):
    header = RequestHeader(request_api_key=METADATA, request_api_version=version, correlation_id=1,
                           client_id="test-transport").encode(2)
    await send_bad_input_and_check(cluster, raw_frame(header + b"\x00\x01\x00\x00"))


def garbage_metadata_body(rng: random.Random) -> bytes:
    """Random bytes that kraftwire's own codec cannot read as a Metadata v12 body."""
    while True:
        body = rng.randbytes(rng.randint(1, 64))
        try:
            MetadataRequest.decode_from(body, 0, 12)
        except codec.MalformedError:
            return body


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_garbage_body_is_closed(cluster, seed):
    header = RequestHeader(request_api_key=METADATA, request_api_version=12, correlation_id=1,
                           client_id="test-transport").encode(2)
    await send_bad_input_and_check(cluster, raw_frame(header + garbage_metadata_body(random.Random(seed))))


async def test_garbage_header_is_closed(cluster):
    # Header v2 whose ClientId claims 1000 bytes where 3 follow.
    await send_bad_input_and_check(cluster, raw_frame(struct.pack(">hhih", METADATA, 12, 1, 1000) + b"abc"))


@pytest.mark.parametrize("version", [1, 12])  # header v1 and v2
async def test_client_id_that_is_not_utf8_is_closed(cluster, version):
    header = struct.pack(">hhih", METADATA, version, 1, 2) + b"\xff\xfe" + (b"\0" if version >= 9 else b"")
    await send_bad_input_and_check(cluster, raw_frame(header + MetadataRequest(topics=None).encode(version)))


async def test_requests_after_a_bad_one_in_the_same_read_are_dropped(cluster):
    """A heartbeat asking to fence broker 1, pipelined behind an unparsable request, is never applied."""
    node = cluster.controller_node
    reader, writer = await asyncio.open_connection(node.host, node.port)
    fence = BrokerHeartbeatRequest(broker_id=1, broker_epoch=cluster.broker(1).epoch,
                                   current_metadata_offset=cluster.controller.committed.offset, want_fence=True)
    writer.write(frame(MetadataRequest(topics=None), 12, 6, api_key=9999) + frame(fence, 1, 7))
    await assert_closed(reader)
    writer.close()
    # A later heartbeat goes through the controller's write queue after anything queued before it.
    reader, writer = await asyncio.open_connection(node.host, node.port)
    writer.write(frame(BrokerHeartbeatRequest(broker_id=1, broker_epoch=-2), 1, 8))
    _, response = await read_response(reader, BrokerHeartbeatResponse, 1)
    assert response.error_code == STALE_BROKER_EPOCH
    assert not cluster.controller.committed.brokers[1].fenced
    writer.close()
    await assert_serves_metadata(cluster)


async def test_requests_before_a_bad_one_are_answered_then_the_connection_closes(cluster):
    """As Kafka, which works through a connection's requests one at a time: a slow and a quick request
    ahead of an unparsable one get their answers, then the connection closes."""
    node = cluster.controller_node
    reader, writer = await asyncio.open_connection(node.host, node.port)
    writer.write(frame(BrokerHeartbeatRequest(broker_id=1, broker_epoch=-2), 1, 21)
                 + frame(ApiVersionsRequest(), 3, 22)
                 + raw_frame(struct.pack(">hhih", METADATA, 12, 23, 1000)))
    assert (await read_response(reader, BrokerHeartbeatResponse, 1))[0] == 21
    assert (await read_response(reader, ApiVersionsResponse, 3))[0] == 22
    await assert_closed(reader)
    writer.close()


# --- ApiVersions newer than served ------------------------------------------------------------


@pytest.mark.parametrize("version", [99, 6, -1])
async def test_too_new_api_versions_gets_unsupported_version_in_a_v0_body(cluster, version):
    """Kafka (KIP-511) answers with a v0 body and response header v0; the body lists ApiVersions' own range."""
    reader, writer = await open_broker(cluster)
    header = RequestHeader(request_api_key=API_VERSIONS, request_api_version=version, correlation_id=99,
                           client_id="test-transport").encode(2 if version >= 3 else 1)
    writer.write(raw_frame(header + b"\x02\x07unknown\x00"))
    correlation_id, response = await read_response(reader, ApiVersionsResponse, 0, header_version=0)
    assert correlation_id == 99
    assert response.error_code == UNSUPPORTED_VERSION
    low, high = ApiVersionsRequest.VALID_VERSIONS.low, ApiVersionsRequest.VALID_VERSIONS.high
    assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [(API_VERSIONS, low, high)]

    # The connection stays open: the client retries at the highest version offered.
    writer.write(frame(ApiVersionsRequest(client_software_name="test", client_software_version="1"), high, 100))
    correlation_id, response = await read_response(reader, ApiVersionsResponse, high)
    assert correlation_id == 100 and response.error_code == 0
    assert {k.api_key for k in response.api_keys} >= {METADATA, API_VERSIONS}
    await assert_serves_metadata(cluster, (reader, writer))
    await assert_serves_metadata(cluster)
    writer.close()


# --- pipelining -------------------------------------------------------------------------------


async def test_pipelined_requests_are_answered_in_order(cluster):
    reader, writer = await open_broker(cluster, 2)
    sent = [
        (ApiVersionsRequest(client_software_name="test", client_software_version="1"), 3, 17),
        (MetadataRequest(topics=None), 12, -5),
        (DescribeClusterRequest(), 1, 2_000_000_000),
        (MetadataRequest(topics=[]), 1, 0),
        (ApiVersionsRequest(), 0, 17),
        (MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name="absent")]), 4, 3),
    ]
    writer.write(b"".join(frame(request, version, cid) for request, version, cid in sent))
    answers = [await read_response(reader, codec.api(request.API_KEY)[1], version) for request, version, _ in sent]
    assert [cid for cid, _ in answers] == [cid for *_, cid in sent]
    assert [type(response) for _, response in answers] == [codec.api(r.API_KEY)[1] for r, *_ in sent]
    assert answers[2][1].cluster_id == cluster.controller.cluster_id
    assert answers[3][1].topics == () and len(answers[1][1].brokers) == 3
    assert [t.error_code for t in answers[5][1].topics] == [3]  # UNKNOWN_TOPIC_OR_PARTITION
    writer.close()


async def test_forwarded_request_followed_by_fast_ones_keeps_the_order(cluster):
    """ListPartitionReassignments is relayed by the broker to the controller and back; the Metadata and
    ApiVersions answers ready before it wait behind it."""
    reader, writer = await open_broker(cluster, 3)
    listing = ListPartitionReassignmentsRequest(topics=None)
    sent = [(listing, 0, 1), (MetadataRequest(topics=None), 12, 2), (ApiVersionsRequest(), 2, 3),
            (listing, 0, 4), (DescribeClusterRequest(), 0, 5), (MetadataRequest(topics=[]), 0, 6)]
    writer.write(b"".join(frame(request, version, cid) for request, version, cid in sent))
    answers = [await read_response(reader, codec.api(request.API_KEY)[1], version) for request, version, _ in sent]
    assert [cid for cid, _ in answers] == [1, 2, 3, 4, 5, 6]
    assert answers[0][1].error_code == 0 and answers[0][1].topics == ()
    assert answers[4][1].cluster_id == cluster.controller.cluster_id
    writer.close()


async def test_slow_request_followed_by_fast_ones_keeps_the_order(cluster):
    """On the controller listener a heartbeat awaits the controller's write; the quick answers queued
    behind it go out after it, in order."""
    node = cluster.controller_node
    reader, writer = await asyncio.open_connection(node.host, node.port)
    heartbeat = BrokerHeartbeatRequest(broker_id=1, broker_epoch=-2, current_metadata_offset=0)
    sent = [(heartbeat, 1, 10), (ApiVersionsRequest(), 2, 11), (DescribeClusterRequest(endpoint_type=2), 1, 12),
            (heartbeat, 0, 13), (ApiVersionsRequest(), 3, 14)]
    writer.write(b"".join(frame(request, version, cid) for request, version, cid in sent))
    answers = []
    for request, version, _ in sent:
        answers.append(await read_response(reader, codec.api(request.API_KEY)[1], version))
    assert [cid for cid, _ in answers] == [cid for *_, cid in sent]
    assert answers[0][1] == BrokerHeartbeatResponse(error_code=STALE_BROKER_EPOCH, is_fenced=True)
    assert answers[2][1].cluster_id == cluster.controller.cluster_id
    writer.close()


# --- request header versions ------------------------------------------------------------------


@pytest.mark.parametrize("client_id", ["admin-1", None, ""], ids=["named", "null", "empty"])
@pytest.mark.parametrize("version", [1, 8, 9, 12])  # Metadata v1 and v8 use header v1, v9+ header v2
async def test_request_header_versions_and_client_ids(cluster, version, client_id):
    reader, writer = await open_broker(cluster)
    writer.write(frame(MetadataRequest(topics=None), version, 31337, client_id=client_id))
    data = await read_frame(reader)
    header_version = codec.response_header_version(METADATA, version)
    assert header_version == (1 if version >= 9 else 0)
    header, pos = ResponseHeader.decode_from(data, 0, header_version)
    assert header.correlation_id == 31337
    response = MetadataResponse.decode(data[pos:], version)
    assert sorted(b.node_id for b in response.brokers) == [1, 2, 3]
    writer.close()


async def test_request_header_v2_tagged_fields_are_skipped(cluster):
    """Unknown tagged fields in a request header v2 are read past, as Kafka does."""
    reader, writer = await open_broker(cluster)
    header = struct.pack(">hhih", METADATA, 12, 555, 5) + b"tests"
    tagged = bytes([2, 7, 3]) + b"abc" + bytes([40, 0])  # two tags: 7 (3 bytes) and 40 (empty)
    writer.write(raw_frame(header + tagged + MetadataRequest(topics=None).encode(12)))
    correlation_id, response = await read_response(reader, MetadataResponse, 12)
    assert correlation_id == 555 and response.cluster_id == cluster.controller.cluster_id
    writer.close()


async def test_client_ids_changing_on_one_connection_are_each_read(cluster):
    """Each request's header is read afresh, whatever client id the connection sent before."""
    reader, writer = await open_broker(cluster)
    for correlation_id, client_id in enumerate(["first", "second", None, "first", "é-ü"]):
        writer.write(frame(MetadataRequest(topics=None), 12, correlation_id, client_id=client_id))
        answered, response = await read_response(reader, MetadataResponse, 12)
        assert answered == correlation_id and response.cluster_id == cluster.controller.cluster_id
    writer.close()


async def test_api_versions_response_uses_header_v0_even_when_flexible(cluster):
    reader, writer = await open_broker(cluster)
    writer.write(frame(ApiVersionsRequest(client_software_name="test", client_software_version="1"), 3, 8))
    data = await read_frame(reader)
    assert _SIZE.unpack_from(data, 0)[0] == 8
    response = ApiVersionsResponse.decode(data[4:], 3)  # no tagged-field byte after the correlation id
    assert response.error_code == 0
    writer.close()
