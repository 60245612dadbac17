"""The stream-based construct of a message (``Cls.construct(v)``, the reference the compiled codec is
checked against) agrees with the compiled codec on shapes the randomized round trips seldom draw: a
null and a present nullable struct, a struct without fields, a known tagged field longer than 256
bytes, and a known tagged field whose bytes are not all used.
"""
from __future__ import annotations

import uuid

import pytest

from kraftwire.codec import MalformedError
from kraftwire.codec import messages as m

BH = m.BrokerHeartbeatRequest
DTP = m.DescribeTopicPartitionsRequest


def both_ways(obj, version: int) -> bytes:
    """The bytes of ``obj`` at ``version``, after checking the reference and the compiled codec agree."""
    data = obj.encode(version)
    reference = type(obj).construct(version)
    assert reference.build(obj) == data
    assert reference.parse(data) == obj == type(obj).decode(data, version)
    return data


def test_a_nullable_struct_is_marked_minus_one_when_null_and_one_when_present():
    topics = [DTP.TopicRequest(name="t")]
    null = both_ways(DTP(topics=topics, response_partition_limit=5), 0)
    present = both_ways(DTP(topics=topics, response_partition_limit=5,
                            cursor=DTP.Cursor(topic_name="t", partition_index=3)), 0)
    marker = len(null) - 2  # before the struct (or nothing): the empty tagged-field section ends both
    assert null[marker:] == bytes.fromhex("ff 00")
    assert present[marker:] == bytes.fromhex("01 02 74 00000003 00 00")


@pytest.mark.parametrize("version", [0, 1, 2])
def test_a_request_without_fields_is_empty(version):
    assert both_ways(m.ApiVersionsRequest(), version) == b""


def test_a_known_tagged_field_longer_than_256_bytes():
    dirs = tuple(uuid.UUID(int=i) for i in range(1, 21))
    data = both_ways(BH(broker_id=1, broker_epoch=5, current_metadata_offset=7, offline_log_dirs=dirs), 1)
    assert len(data) > 20 * 16


def test_a_known_tagged_field_with_bytes_left_over_is_refused_by_both():
    # BrokerId, BrokerEpoch, CurrentMetadataOffset, flags; one tagged field: tag 0 (OfflineLogDirs), size 3,
    # holding an empty compact array (one byte) and two bytes more
    data = bytes.fromhex("00000001 0000000000000000 0000000000000000 00 00 01 00 03 01 ffff".replace(" ", ""))
    with pytest.raises(MalformedError, match="left over|does not fill its size"):
        BH.decode(data, 1)
    with pytest.raises(MalformedError, match="tagged field 0 of .* has bytes left over"):
        BH.construct(1).parse(data)



def test_a_field_the_version_lacks_may_hold_a_value_equal_to_its_default():
    """MetadataResponse's ClusterAuthorizedOperations exists from v8: at v0 a value equal to its default
    (INT32_MIN, read here from text, so not the same object) is written as nothing, as the default is."""
    unset = int("-2147483648")
    written = both_ways(m.MetadataResponse(cluster_authorized_operations=unset), 0)
    assert written == m.MetadataResponse().encode(0)


@pytest.mark.parametrize("version, data", [(3, "00000001 ffff 00000005"), (4, "02 00 00000005 00")])
def test_a_null_string_in_an_array_of_strings_is_refused(version, data):
    """DeleteTopicsRequest's TopicNames are []string: the elements are never nullable."""
    data = bytes.fromhex(data.replace(" ", ""))
    with pytest.raises(MalformedError, match="TopicNames is null but not nullable"):
        m.DeleteTopicsRequest.decode(data, version)
    with pytest.raises(MalformedError, match="TopicNames is null but not nullable"):
        m.DeleteTopicsRequest.construct(version).parse(data)
