"""``Message.validator(version)``: the generated check a broker runs on a request it relays without
reading it (server/wire/transport.py, ``Undecoded``). It must refuse exactly the bodies the decoder
refuses and end where the decoder ends, or a relay would pass the controller bytes the broker's
listener should have refused (Kafka's broker parses every request and closes the connection on one
that does not parse), or refuse good ones.

Every message at every version, with values drawn from the schema (test_codec_roundtrip's
strategies): the validator ends where the decoder does on the whole body, on every truncation of it,
and on seeded bit flips and byte overwrites, and refuses where the decoder refuses.
"""
from __future__ import annotations

import random

import pytest
from codec_examples import examples
from hypothesis import given, settings, strategies as st

from kraftwire.codec import MalformedError
from kraftwire.codec import messages as m
from tests.wings.codec.test_codec_roundtrip import MESSAGE_CASES, SETTINGS, message_strategy

AR = m.AlterPartitionReassignmentsRequest


def outcome(function, data: bytes):
    """Where ``function`` (a decoder's position, or a validator's) ends on ``data``, or "refused"."""
    try:
        result = function(data, 0)
    except MalformedError:
        return "refused"
    return result[1] if isinstance(result, tuple) else result


def damaged(data: bytes, rng: random.Random):
    """Every truncation of ``data``, then bit flips and overwrites with bytes that mean something in
    Kafka's encodings (0: null or empty, 0xff: -1 and varint continuation, 0x80, 0x7f)."""
    for end in range(len(data)):
        yield data[:end]
    for _ in range(min(40, 4 * len(data))):
        copy = bytearray(data)
        at = rng.randrange(len(data))
        if rng.random() < 0.5:
            copy[at] ^= 1 << rng.randrange(8)
        else:
            copy[at] = rng.choice((0, 0xFF, 0x80, 0x7F, 0x01))
        yield bytes(copy)


@pytest.mark.parametrize("cls,version", MESSAGE_CASES)
@settings(SETTINGS, max_examples=examples(5))
@given(data=st.data())
def test_the_validator_refuses_what_the_decoder_refuses_and_ends_where_it_ends(cls, version, data):
    body = data.draw(message_strategy(cls, version)).encode(version)
    decode, validate = cls.decoder(version), cls.validator(version)
    assert validate(body, 0) == len(body)
    rng = random.Random(body)
    for variant in damaged(body, rng):
        assert outcome(validate, variant) == outcome(decode, variant), (cls.__name__, version, variant.hex())


def reassignment(name: str = "orders", partitions: int = 40) -> bytes:
    return AR(timeout_ms=1234, topics=[AR.ReassignableTopic(name=name, partitions=[
        AR.ReassignablePartition(partition_index=i, replicas=[2, 3]) for i in range(partitions)])]).encode(0)


def test_a_topic_name_that_is_not_utf8_is_refused_as_the_decoder_refuses_it():
    body = bytearray(reassignment("ab"))
    at = body.index(b"ab")
    body[at] = 0xFF
    with pytest.raises(MalformedError):
        AR.decoder(0)(bytes(body), 0)
    with pytest.raises(MalformedError):
        AR.validator(0)(bytes(body), 0)


def test_a_fixed_width_value_past_the_end_is_refused():
    """The validator counts fixed-width values without reading them; a body cut inside the last one
    (nothing read after it) is still refused."""
    body = m.BrokerHeartbeatRequest(broker_id=1, broker_epoch=2, current_metadata_offset=3).encode(0)
    assert m.BrokerHeartbeatRequest.validator(0)(body, 0) == len(body)
    with pytest.raises(MalformedError):
        m.BrokerHeartbeatRequest.validator(0)(body[:-1], 0)


def test_a_top_level_number_is_read_at_its_fixed_offset():
    body = reassignment()
    assert AR.fixed_value("timeout_ms", 0, b"xx" + body, 2) == 1234
    with pytest.raises(LookupError):
        AR.fixed_value("topics", 0, body)
    with pytest.raises(LookupError):  # after an array: no fixed place
        m.ElectLeadersRequest.fixed_value("timeout_ms", 2, b"")
