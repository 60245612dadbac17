"""Property tests: every message and record, at every version, survives encode/decode unchanged.

The Hypothesis strategies are generated from the schema model (``Cls.SPEC``), so a new schema or
version is covered without touching this file. For each drawn object the test checks:

* encode -> decode gives an equal object, and decode -> encode gives the identical bytes;
* the compiled codec and the stream-based ``construct`` definition (``Cls.construct(v)``), two
  independent implementations of the same schema, agree byte for byte in both directions.

``message_strategy`` is also used by the kafka-python interop tests.
"""
from __future__ import annotations

import functools
import uuid

import pytest
from codec_examples import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kraftwire import codec
from kraftwire.codec import messages, records
from kraftwire.codec.schema import FieldSpec, StructSpec

INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
}
# Any Unicode scalar value UTF-8 can carry (no lone surrogates), so multi-byte characters are common.
# Values are mostly short; the occasional long one needs a multi-byte compact length varint (> 127).
TEXT = st.one_of(st.text(st.characters(codec="utf-8"), max_size=8),
                 st.text(st.characters(codec="utf-8"), min_size=40, max_size=80))
BINARY = st.one_of(st.binary(max_size=12), st.binary(min_size=127, max_size=300))
UUIDS = st.one_of(st.uuids(), st.sampled_from([uuid.UUID(int=0), uuid.UUID(int=1)]))
# Top-level arrays get up to 3 elements, nested ones up to 2: enough to exercise counts without
# letting deep schemas (DescribeQuorumResponse, LeaderAndIsr) explode in size. Top-level arrays of
# numbers and uuids sometimes get more than 127 elements (a two-byte compact count).
ARRAY_SIZES = (3, 2, 2, 1)
LONG_ARRAY = (127, 140)


def _primitive(type_name: str) -> st.SearchStrategy:
    if type_name in INT_RANGES:
        low, high = INT_RANGES[type_name]
        return st.integers(low, high)
    if type_name == "bool":
        return st.booleans()
    if type_name == "float64":
        return st.floats(allow_nan=False)
    if type_name == "string":
        return TEXT
    if type_name in ("bytes", "records"):
        return BINARY
    if type_name == "uuid":
        return UUIDS
    raise AssertionError(f"no strategy for {type_name}")


def struct_class(root: type, spec: StructSpec) -> type:
    """The generated class of a struct of ``root``'s schema (nested ones hang off the root class)."""
    return root if spec is root.SPEC.root else getattr(root, spec.name)


def _unknown_tags(spec: StructSpec) -> st.SearchStrategy:
    """0-2 unknown tagged fields with tags above every tag the struct knows, in ascending order
    (the order a decoder sees them in, since writers sort tags)."""
    base = max((f.tag for f in spec.fields if f.tag is not None), default=-1) + 1
    entries = st.lists(st.tuples(st.integers(base, base + 300), BINARY),
                       max_size=2, unique_by=lambda entry: entry[0])
    return entries.map(lambda items: tuple(sorted(items)))


def _field(root, f: FieldSpec, version, flexible, unknown_tags, depth) -> st.SearchStrategy:
    if f.is_array:
        short = ARRAY_SIZES[min(depth, len(ARRAY_SIZES) - 1)]
        if f.struct is not None:
            element = _struct(root, f.struct, version, flexible, unknown_tags, depth + 1)
            return st.lists(element, max_size=short).map(tuple)
        element = _primitive(f.element_type)
        if depth or (f.element_type not in INT_RANGES and f.element_type != "uuid"):
            return st.lists(element, max_size=short).map(tuple)
        return st.one_of(st.lists(element, max_size=short),
                         st.lists(element, min_size=LONG_ARRAY[0], max_size=LONG_ARRAY[1])).map(tuple)
    if f.struct is not None:
        return _struct(root, f.struct, version, flexible, unknown_tags, depth + 1)
    return _primitive(f.type)


def _struct(root, spec: StructSpec, version: int, flexible: bool, unknown_tags: bool, depth: int):
    cls = struct_class(root, spec)
    defaults = cls()
    values = {}
    for f in spec.fields:
        if version not in f.versions:
            continue  # absent in this version: must keep its default
        strategy = _field(root, f, version, flexible, unknown_tags, depth)
        if version in f.nullable:
            strategy = st.one_of(st.none(), strategy)
        if flexible and version in f.tagged:
            strategy = st.one_of(st.just(getattr(defaults, f.attr)), strategy)
        values[f.attr] = strategy
    if flexible and unknown_tags:
        values["unknown_tagged_fields"] = _unknown_tags(spec)
    return st.fixed_dictionaries(values).map(lambda kwargs: cls(**kwargs))


@functools.cache
def message_strategy(cls: type, version: int, unknown_tags: bool = True) -> st.SearchStrategy:
    """Valid objects of message or record class ``cls`` at ``version``. With ``unknown_tags`` the
    flexible structs sometimes carry unknown tagged fields."""
    return _struct(cls, cls.SPEC.root, version, version in cls.FLEXIBLE_VERSIONS, unknown_tags, 0)


def _cases(classes):
    return [pytest.param(cls, v, id=f"{name}-v{v}") for name, cls in sorted(classes.items())
            for v in cls.VALID_VERSIONS]


MESSAGE_CASES = _cases(messages.ALL)
RECORD_CASES = _cases(records.ALL)
SETTINGS = settings(max_examples=examples(10), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def check_roundtrip(cls, version: int, obj) -> bytes:
    data = obj.encode(version)
    decoded = cls.decode(data, version)
    assert decoded == obj
    assert decoded.encode(version) == data
    reference = cls.construct(version)
    assert reference.build(obj) == data
    assert reference.parse(data) == obj
    return data


@pytest.mark.parametrize("cls,version", MESSAGE_CASES)
@SETTINGS
@given(data=st.data())
def test_message_roundtrip(cls, version, data):
    check_roundtrip(cls, version, data.draw(message_strategy(cls, version)))


@pytest.mark.parametrize("cls,version", RECORD_CASES)
@SETTINGS
@given(data=st.data())
def test_record_roundtrip(cls, version, data):
    obj = data.draw(message_strategy(cls, version))
    check_roundtrip(cls, version, obj)
    if cls.SPEC.type == "metadata":
        assert records.decode_frame(records.encode_frame(obj, version)) == (obj, version)
    elif cls.SPEC.type == "data" and version == records.CONTROL_VALUE_VERSION:  # control records
        batch = records.control_batch(7, 3, 1_700_000_000_000, [obj])
        assert [value for *_, value in records.iter_records(batch)] == [obj]


def test_every_schema_is_covered():
    """Each API has a request/response pair, and the cases span every class and version."""
    assert {cls for cls, _ in (c.values for c in MESSAGE_CASES)} == set(messages.ALL.values())
    assert {cls for cls, _ in (c.values for c in RECORD_CASES)} == set(records.ALL.values())
    for key in codec.api_keys():
        request, response = codec.api(key)
        assert request.API_KEY == response.API_KEY == key
        assert request.VALID_VERSIONS == response.VALID_VERSIONS
