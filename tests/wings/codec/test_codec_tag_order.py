"""Tagged fields are written in ascending tag order, known and unknown alike, however the unknown ones
were given: Kafka's readers refuse a tag that is not above the one before it ("out-of-order tag").

The round-trip properties only draw unknown tags already sorted; here they come in any order, after
known ones (ApiVersionsResponse knows tags 0-3), and the section is read back field by field.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kraftwire.codec.errors import EncodeError
from kraftwire.codec.messages import ApiVersionsResponse

VERSION = 3
PLAIN_BYTES = 7  # ErrorCode int16, empty compact ApiKeys (one byte), ThrottleTimeMs int32
KNOWN_TAGS = {"finalized_features_epoch": 1, "zk_migration_ready": 3}  # SupportedFeatures (0) stays empty


def read_uvarint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def tagged_section(data: bytes) -> list[tuple[int, bytes]]:
    """The (tag, bytes) of the response's top-level tagged-field section, in written order."""
    count, pos = read_uvarint(data, PLAIN_BYTES)
    fields = []
    for _ in range(count):
        tag, pos = read_uvarint(data, pos)
        size, pos = read_uvarint(data, pos)
        fields.append((tag, data[pos:pos + size]))
        pos += size
    assert pos == len(data)
    return fields


def encodings(response) -> list[bytes]:
    """The compiled codec's bytes and the stream-based construct's: both must sort."""
    return [response.encode(VERSION), ApiVersionsResponse.construct(VERSION).build(response)]


def test_unknown_tags_given_out_of_order_are_written_sorted_among_the_known():
    response = ApiVersionsResponse(error_code=0, api_keys=[], finalized_features_epoch=1,
                                   zk_migration_ready=True, unknown_tagged_fields=((9, b"x"), (4, b"yz"), (5, b"")))
    for data in encodings(response):
        assert tagged_section(data) == [(1, (1).to_bytes(8, "big")), (3, b"\x01"), (4, b"yz"), (5, b""), (9, b"x")]
        decoded = ApiVersionsResponse.decode(data, VERSION)
        assert (decoded.finalized_features_epoch, decoded.zk_migration_ready) == (1, True)
        assert decoded.unknown_tagged_fields == ((4, b"yz"), (5, b""), (9, b"x"))


@settings(max_examples=200, deadline=None)
@given(epoch=st.sampled_from([-1, 0, 7]), ready=st.booleans(),
       unknown=st.lists(st.tuples(st.integers(4, 300), st.binary(max_size=3)),
                        max_size=5, unique_by=lambda field: field[0]))
def test_any_order_of_unknown_tags_is_written_ascending(epoch, ready, unknown):
    response = ApiVersionsResponse(error_code=0, api_keys=[], finalized_features_epoch=epoch,
                                   zk_migration_ready=ready, unknown_tagged_fields=tuple(unknown))
    known = {KNOWN_TAGS["finalized_features_epoch"]} if epoch != -1 else set()
    known |= {KNOWN_TAGS["zk_migration_ready"]} if ready else set()
    for data in encodings(response):
        tags = [tag for tag, _ in tagged_section(data)]
        assert tags == sorted(known | {tag for tag, _ in unknown})
        decoded = ApiVersionsResponse.decode(data, VERSION)
        assert decoded.unknown_tagged_fields == tuple(sorted(unknown))
        assert (decoded.finalized_features_epoch, decoded.zk_migration_ready) == (epoch, ready)


def test_a_version_without_tagged_fields_refuses_unknown_ones_in_both_codecs():
    refused = ApiVersionsResponse(error_code=35, api_keys=[], unknown_tagged_fields=((9, b"x"),))
    plain = ApiVersionsResponse(error_code=35, api_keys=[])
    for build in (lambda r: r.encode(2), ApiVersionsResponse.construct(2).build):
        with pytest.raises(EncodeError, match="unknown tagged fields are set, but this version has no tagged fields"):
            build(refused)
        assert build(plain) == plain.encode(2)
