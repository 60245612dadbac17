"""The control plane over HTTP, driven while real admin clients use the cluster."""
import json
import time
import urllib.error
import urllib.request

import pytest
from kafka import KafkaAdminClient, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import TopicAlreadyExistsError

from kraftwire import codec
from kraftwire.server.host.fault_injection import error_response


NOT_CONTROLLER = 41
TOPIC_ALREADY_EXISTS = 36


def call(bg, method: str, path: str, body=None, raw: bytes | None = None) -> tuple[int, object]:
    data = raw if raw is not None else None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(bg.cluster.control_server.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json",
                                              "Authorization": f"Bearer {bg.cluster.control_token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def until(condition, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)


@pytest.fixture
def bg(operable_cluster):
    return operable_cluster


@pytest.fixture
def admin(bg):
    client = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="control-test")
    yield client
    client.close()


def listed_brokers(admin) -> set[int]:
    """Unfenced brokers, as DescribeCluster shows them (kafka-python asks for fenced ones too, flagged)."""
    return {b["broker_id"] for b in admin.describe_cluster()["brokers"] if not b["is_fenced"]}


def test_lists_brokers(bg):
    status, brokers = call(bg, "GET", "/api/brokers")
    assert status == 200
    assert [b["id"] for b in brokers] == [1, 2, 3]
    assert all(b["running"] and b["registered"] and not b["fenced"] for b in brokers)
    assert all(len(b["directories"]) == 1 and b["directories"][0]["online"] for b in brokers)
    status, one = call(bg, "GET", "/api/brokers/2")
    assert status == 200 and one == brokers[1]


@pytest.mark.parametrize("method, path, body, raw, status", [
    ("GET", "/api/brokers/7", None, None, 404),
    ("GET", "/api/brokers/two", None, None, 404),
    ("POST", "/api/brokers/0/stop", None, None, 404),
    ("GET", "/api/nothing", None, None, 404),
    ("DELETE", "/api/brokers/1", None, None, 405),
    ("GET", "/api/brokers/1/fence", None, None, 405),
    ("POST", "/api/errors", None, b"{not json", 400),
    ("POST", "/api/errors", None, b"[1, 2]", 400),
    ("POST", "/api/errors", {"api_key": "NoSuchApi", "error_code": 41}, None, 400),
    ("POST", "/api/errors", {"api_key": 19, "error_code": "41"}, None, 400),
    ("POST", "/api/errors", {"api_key": 19, "error_code": 41, "count": 0}, None, 400),
    ("POST", "/api/errors", {"api_key": 19, "error_code": 70000}, None, 400),
    ("POST", "/api/errors", {"api_key": 19, "error_code": 41, "partition": 0}, None, 400),
    ("POST", "/api/errors", {"api_key": 62, "error_code": 41}, None, 400),  # not served by brokers
    ("PUT", "/api/brokers/1/bandwidth", {"bytes_per_second": 0}, None, 400),
    ("PUT", "/api/brokers/1/bandwidth", {"bytes_per_second": "fast"}, None, 400),
    ("PUT", "/api/brokers/1/bandwidth", {"bytes_per_second": True}, None, 400),
    ("POST", "/api/reassignments/wait", {"timeout": -1}, None, 400),
    ("POST", "/api/brokers/1/log-dirs/7/fail", None, None, 404),
    ("POST", "/api/brokers/1/log-dirs/no-such-dir/restore", None, None, 404),
    ("POST", "/api/brokers/9/log-dirs/0/fail", None, None, 404),
    ("GET", "/api/brokers/1/log-dirs/0/fail", None, None, 405),
])
def test_bad_requests_get_4xx_with_a_json_error(bg, method, path, body, raw, status):
    answer_status, answer = call(bg, method, path, body, raw)
    assert answer_status == status
    assert isinstance(answer["error"], str) and answer["error"]


def test_fence_and_unfence_as_seen_by_describe_cluster(bg, admin):
    assert listed_brokers(admin) == {1, 2, 3}
    status, broker = call(bg, "POST", "/api/brokers/3/fence")
    assert status == 200 and broker["fenced"] and broker["want_fence"] and broker["running"]
    assert listed_brokers(admin) == {1, 2}
    for _ in range(2):  # heartbeats go on, and each asks to stay fenced
        bg.run(bg.cluster.broker(3).heartbeat())
    assert listed_brokers(admin) == {1, 2}
    status, broker = call(bg, "POST", "/api/brokers/3/unfence")
    assert status == 200 and not broker["fenced"]
    assert listed_brokers(admin) == {1, 2, 3}


def test_stop_and_start_a_broker(bg, admin):
    admin.create_topics([NewTopic("on-two", -1, -1, replica_assignments={0: [2, 1]})])
    status, broker = call(bg, "POST", "/api/brokers/2/stop")
    assert status == 200 and not broker["running"]
    until(lambda: call(bg, "GET", "/api/brokers/2")[1]["fenced"])  # after the session timeout
    assert listed_brokers(admin) == {1, 3}
    until(lambda: admin.describe_topics(["on-two"])[0]["partitions"][0]["leader_id"] == 1)
    status, broker = call(bg, "POST", "/api/brokers/2/start")
    assert status == 200 and broker["running"]
    until(lambda: not call(bg, "GET", "/api/brokers/2")[1]["fenced"])
    until(lambda: listed_brokers(admin) == {1, 2, 3})


def test_injected_not_controller_is_retried_by_kafka_python(bg, admin):
    status, rule = call(bg, "POST", "/api/errors", {"api_key": "CreateTopics", "error_code": NOT_CONTROLLER})
    assert status == 201 and rule == {"api_key": 19, "error_code": NOT_CONTROLLER, "remaining": 1,
                                      "topic": None, "partition": None}
    admin.create_topics([NewTopic("after-retry", 2, 1)])  # first answer NOT_CONTROLLER, the retry succeeds
    assert call(bg, "GET", "/api/errors") == (200, [])
    assert "after-retry" in admin.list_topics()

    # kafka-python retries only once: two injected answers reach the caller
    call(bg, "POST", "/api/errors", {"api_key": 19, "error_code": NOT_CONTROLLER, "count": 2})
    with pytest.raises(RuntimeError, match="controller"):
        admin.create_topics([NewTopic("never", 1, 1)])
    assert "never" not in admin.list_topics()


def test_injected_error_for_one_topic_leaves_others_alone(bg, admin):
    call(bg, "POST", "/api/errors", {"api_key": 19, "error_code": TOPIC_ALREADY_EXISTS, "topic": "cursed"})
    admin.create_topics([NewTopic("blessed", 1, 1)])
    with pytest.raises(TopicAlreadyExistsError):
        admin.create_topics([NewTopic("cursed", 1, 1)])
    assert "cursed" not in admin.list_topics()
    admin.create_topics([NewTopic("cursed", 1, 1)])  # the rule is used up
    assert {"blessed", "cursed"} <= set(admin.list_topics())


def test_injected_errors_can_be_cleared(bg, admin):
    call(bg, "POST", "/api/errors", {"api_key": 60, "error_code": NOT_CONTROLLER, "count": 5})
    assert len(call(bg, "GET", "/api/errors")[1]) == 1
    assert call(bg, "DELETE", "/api/errors") == (200, [])
    assert listed_brokers(admin) == {1, 2, 3}


def test_bandwidth_and_waiting_for_reassignments(bg, admin):
    admin.create_topics([NewTopic("slow", -1, -1, replica_assignments={0: [1]},
                                  topic_configs={"kraftwire.partition.size.bytes": "100000000"})])
    status, _ = call(bg, "PUT", "/api/brokers/2/bandwidth", {"bytes_per_second": 1000})
    assert status == 200
    throttles = call(bg, "GET", "/api/state")[1]["throttles"]
    assert {"resource": "broker", "name": "2", "config": "kraftwire.replication.bandwidth.bytes.per.second",
            "value": "1000"} in throttles
    admin.alter_partition_reassignments({TopicPartition("slow", 0): [2]})
    status, answer = call(bg, "POST", "/api/reassignments/wait", {"timeout": 0.3})
    assert status == 504 and "ongoing" in answer["error"]
    assert call(bg, "GET", "/api/state")[1]["reassignments"][0]["adding"] == [2]

    assert call(bg, "PUT", "/api/brokers/2/bandwidth", {"bytes_per_second": None})[0] == 200
    assert call(bg, "POST", "/api/reassignments/wait", {"timeout": 30}) == (200, {"ongoing": 0})
    assert admin.describe_topics(["slow"])[0]["partitions"][0]["replica_nodes"] == [2]


# --- the error response maker, on every API the codec knows --------------------------------------------

def test_error_responses_encode_for_every_api_and_version():
    """Each reads back as written, and carries the error wherever it has a top-level code at that version
    (an empty request has no items for per-item codes)."""
    for api_key in codec.api_keys():
        request_class, response_class = codec.api(api_key)
        versions = request_class.VALID_VERSIONS
        for version in range(versions.low, versions.high + 1):
            response = error_response(api_key, version, request_class(), NOT_CONTROLLER)
            assert response_class.decode(response.encode(version), version) == response, (api_key, version)
            top_level = [f for f in response_class.SPEC.root.fields if f.attr == "error_code" and version in f.versions]
            if top_level:
                assert response.error_code == NOT_CONTROLLER, (api_key, version)
            assert set(error_codes(response)) <= {NOT_CONTROLLER, 0}, (api_key, version)


def error_codes(value) -> list[int]:
    """Every error code in a response, depth first."""
    if not isinstance(value, tuple):
        return []
    named = zip(value._fields, value) if hasattr(value, "_fields") else ((None, item) for item in value)
    return [code for attr, item in named
            for code in ([item] if attr == "error_code" else error_codes(item))]


@pytest.mark.parametrize("api_key, version, request_fields, listed", [
    (19, 7, {"topics": [{"name": "a"}, {"name": "b"}]}, ("topics", "name", ["a", "b"])),
    (20, 3, {"topic_names": ["a", "b"]}, ("responses", "name", ["a", "b"])),
    (20, 6, {"topics": [{"name": "a"}]}, ("responses", "name", ["a"])),
    (32, 4, {"resources": [{"resource_type": 2, "resource_name": "t"}]}, ("results", "resource_name", ["t"])),
    (37, 3, {"topics": [{"name": "t", "count": 4}]}, ("results", "name", ["t"])),
    (44, 1, {"resources": [{"resource_type": 4, "resource_name": "1"}]}, ("responses", "resource_name", ["1"])),
    (3, 13, {"topics": [{"name": "m"}]}, ("topics", "name", ["m"])),
])
def test_error_responses_list_the_requested_items(api_key, version, request_fields, listed):
    request = build(codec.api(api_key)[0], request_fields)
    response = error_response(api_key, version, request, NOT_CONTROLLER)
    array, key, names = listed
    assert [getattr(item, key) for item in getattr(response, array)] == names
    assert error_codes(response) and set(error_codes(response)) == {NOT_CONTROLLER}
    assert codec.api(api_key)[1].decode(response.encode(version), version) == response


def test_error_responses_reach_partitions_given_as_numbers_or_structs():
    elect = codec.api(43)[0]
    response = error_response(43, 2, build(elect, {"topic_partitions": [{"topic": "t", "partitions": [0, 2]}]}), 7)
    assert response.error_code == 7
    assert [(r.topic, [(p.partition_id, p.error_code) for p in r.partition_result])
            for r in response.replica_election_results] == [("t", [(0, 7), (2, 7)])]
    reassign = codec.api(45)[0]
    response = error_response(45, 0, build(reassign, {"topics": [{"name": "t", "partitions": [
        {"partition_index": 3, "replicas": [1]}]}]}), 41)
    assert response.error_code == 41
    assert [(r.name, [(p.partition_index, p.error_code) for p in r.partitions])
            for r in response.responses] == [("t", [(3, 41)])]


def build(cls, fields: dict):
    """A request object from plain dicts, nested struct classes found through the root class."""
    def make(struct_class, values):
        converted = {}
        for spec in struct_class._spec.fields:
            if spec.attr not in values:
                continue
            value = values[spec.attr]
            if spec.struct is not None and spec.is_array:
                value = [make(cls._classes[spec.struct.name], item) for item in value]
            converted[spec.attr] = value
        return struct_class(**converted)
    return make(cls, fields)
