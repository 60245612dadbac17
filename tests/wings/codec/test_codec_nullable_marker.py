"""A nullable struct's marker is an int8 read as Kafka reads it: any negative value is null, any other
value is a struct, in the compiled codec and in the stream-based construct alike."""
import pytest

from kraftwire.codec.messages import DescribeTopicPartitionsRequest as Request

MARKER = 5  # after the empty compact Topics array (one byte) and ResponsePartitionLimit (int32)
ABSENT = Request(topics=[], response_partition_limit=5, cursor=None)
PRESENT = Request(topics=[], response_partition_limit=5, cursor=Request.Cursor(topic_name="a", partition_index=3))


@pytest.mark.parametrize("marker, expected", [(0xFF, ABSENT), (0x80, ABSENT), (0x01, PRESENT), (0x7F, PRESENT)])
def test_the_marker_of_a_nullable_struct(marker, expected):
    data = bytearray(expected.encode(0))
    assert data[MARKER] == (0xFF if expected.cursor is None else 0x01)
    data[MARKER] = marker
    assert Request.decode(bytes(data), 0) == expected
    assert Request.construct(0).parse(bytes(data)) == expected
