"""Every field of kraftwire's schemas (schemas/messages, schemas/records) has the type, versions,
nullable, tagged versions, tag and default of the same field in Apache Kafka's own JSON at the pinned
release, as shipped inside its jars (kafka-clients: common/message, kafka-metadata: common/metadata,
kafka-group-coordinator: the __consumer_offsets records).
A default that differs changes what a reader assumes for an absent field (a tagged struct, a field of
another version), so a Kafka peer and kraftwire would read the same bytes differently.

The fields only one side has are the versions kraftwire serves beyond Kafka 4.3.1's range, each named
below with its reason (README's differences section, "ApiVersions").
"""
from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
LIB = ROOT / "tests" / "kafka" / "lib"
JARS = (("kafka-clients-{v}.jar", "common/message/"), ("kafka-metadata-{v}.jar", "common/metadata/"),
        ("kafka-group-coordinator-{v}.jar", "common/message/"))
COMPARED = ("type", "versions", "nullableVersions", "taggedVersions", "tag", "flexibleVersions")
INTEGERS = ("int8", "int16", "int32", "int64", "uint16", "uint32")

# Fields kraftwire's schemas have and Kafka 4.3.1's have not, or the reverse, and why.
ONE_SIDED = {
    # versions Kafka 4.0 removed (KIP-896) that kraftwire still serves to older clients
    "AlterPartitionRequest.Topics.TopicName": "AlterPartition v0-1 (KIP-896)",
    "AlterPartitionResponse.Topics.TopicName": "AlterPartition v0-1 (KIP-896)",
    "DescribeConfigsResponse.Results.Configs.IsDefault": "DescribeConfigs v0 (KIP-896)",
    # ApiVersions v5 (KIP-1242) as Kafka trunk defines it
    "ApiVersionsRequest.NodeId": "ApiVersions v5", "ApiVersionsRequest.ClusterId": "ApiVersions v5",
    # InitProducerId v6 (KIP-939 two-phase commit), unstable in Kafka 4.3 and not served: transactions are not
    "InitProducerIdRequest.KeepPreparedTxn": "InitProducerId v6", "InitProducerIdRequest.Enable2Pc": "InitProducerId v6",
    "InitProducerIdResponse.OngoingTxnProducerId": "InitProducerId v6",
    "InitProducerIdResponse.OngoingTxnProducerEpoch": "InitProducerId v6",
}
# Kafka trunk's record, after 4.3 (KAFKA-20395): kraftwire reads it in logs of newer Kafka.
KRAFTWIRE_ONLY = {"UnregisterControllerRecord"}
# Kafka 4 emptied LeaderAndIsr (validVersions "none": KRaft brokers learn it from the log); kraftwire keeps
# the 3.x schema for its codec tests and golden bytes, and serves it nowhere.
REMOVED_BY_KAFKA = {"LeaderAndIsrRequest", "LeaderAndIsrResponse"}


def _json(text: str) -> dict:
    return json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.M))


def kafka_schemas() -> dict[str, dict]:
    version = next(LIB.glob("kafka-clients-*.jar")).stem.removeprefix("kafka-clients-")
    found = {}
    for jar, prefix in JARS:
        with zipfile.ZipFile(LIB / jar.format(v=version)) as archive:
            for name in archive.namelist():
                if name.startswith(prefix) and name.endswith(".json"):
                    schema = _json(archive.read(name).decode())
                    found[schema["name"]] = schema
    return found


def our_schemas() -> dict[str, dict]:
    return {schema["name"]: schema for folder in ("messages", "records")
            for schema in (_json(p.read_text()) for p in sorted((ROOT / "schemas" / folder).glob("*.json")))}


def default_value(field: dict) -> object:
    """The value a reader assumes for the field when it is absent (Kafka's generator rules)."""
    kind, text = field["type"], field.get("default")
    text = None if text is None else str(text).lower() if isinstance(text, bool) else str(text)
    if kind.startswith("[]"):
        return None if text == "null" else ()
    if kind == "bool":
        return text == "true"
    if kind in INTEGERS:
        return int(text, 0) if text else 0
    if kind == "float64":
        return float(text) if text else 0.0
    if kind in ("string", "bytes", "records"):
        return None if text == "null" else (text or "")
    return text  # uuid (zero unless given) and structs


def differences(path: str, ours: dict, theirs: dict) -> list[tuple[str, object, object]]:
    mine = {f["name"]: f for f in ours.get("fields", [])}
    kafka = {f["name"]: f for f in theirs.get("fields", [])}
    found = [(f"{path}.{name}", "only kraftwire", None) for name in mine.keys() - kafka.keys()]
    found += [(f"{path}.{name}", None, "only Kafka") for name in kafka.keys() - mine.keys()]
    for name in sorted(mine.keys() & kafka.keys()):
        a, b = mine[name], kafka[name]
        found += [(f"{path}.{name}:{key}", b.get(key), a.get(key)) for key in COMPARED
                  if str(a.get(key)) != str(b.get(key))]
        if default_value(a) != default_value(b):
            found.append((f"{path}.{name}:default", b.get("default"), a.get("default")))
        found += differences(f"{path}.{name}", a, b)
    return found


@pytest.fixture(scope="module")
def schemas():
    if not (LIB / ".resolved").exists():
        pytest.fail(f"Apache Kafka's jars are not in {LIB}: run tests/setup.sh")
    return our_schemas(), kafka_schemas()


def test_every_schema_is_kafkas(schemas):
    ours, kafka = schemas
    assert sorted(set(ours) - set(kafka)) == sorted(KRAFTWIRE_ONLY)
    assert sorted(name for name in set(ours) & set(kafka) if kafka[name].get("validVersions") == "none") == \
        sorted(REMOVED_BY_KAFKA)


def test_every_field_has_kafkas_type_versions_and_default(schemas):
    ours, kafka = schemas
    found = []
    for name in sorted(set(ours) & set(kafka) - REMOVED_BY_KAFKA):
        assert kafka[name].get("validVersions") != "none", name
        found += differences(name, ours[name], kafka[name])
        mine = {s["name"]: s for s in ours[name].get("commonStructs", [])}
        theirs = {s["name"]: s for s in kafka[name].get("commonStructs", [])}
        assert mine.keys() == theirs.keys(), name
        for struct in mine:
            found += differences(f"{name}/{struct}", mine[struct], theirs[struct])
    assert [d for d in found if d[0] not in ONE_SIDED] == []
    assert sorted({d[0] for d in found}) == sorted(ONE_SIDED), "listed as one-sided but the same now"
