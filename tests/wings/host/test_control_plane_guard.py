"""The control plane refuses what a hostile web page or a stranger would send: a state-changing call
without the bearer token (401), and any request whose Host or Origin is not the bound address (403:
no cross-site requests, no DNS rebinding). Each refused call leaves the cluster as it was."""
import http.client
import json

import pytest


@pytest.fixture
def bg(operable_cluster):
    return operable_cluster


def send(bg, method: str, path: str, headers: dict) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", bg.cluster.control_server.port, timeout=30)
    try:
        connection.putrequest(method, path, skip_host=True)
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.putheader("Content-Length", "0")
        connection.endheaders()
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read() or b"{}")
    finally:
        connection.close()


def own_host(bg) -> str:
    return f"127.0.0.1:{bg.cluster.control_server.port}"


def running(bg, broker_id: int) -> bool:
    return bg.call(lambda: bg.cluster.broker(broker_id).running)


@pytest.mark.parametrize("authorization", [None, "Bearer wrong-token", "Basic dXNlcjpwYXNz"])
def test_a_state_changing_call_needs_the_token(bg, authorization):
    headers = {"Host": own_host(bg)}
    if authorization:
        headers["Authorization"] = authorization
    status, body = send(bg, "POST", "/api/brokers/3/stop", headers)
    assert status == 401 and "token" in body["error"]
    assert running(bg, 3)


@pytest.mark.parametrize("host,origin", [
    ("evil.example", None),
    (None, "http://evil.example"),
    (None, "https://127.0.0.1"),
    ("evil.example:80", "http://evil.example:80"),
], ids=["foreign-host", "foreign-origin", "other-scheme-and-port", "rebound-name"])
def test_foreign_host_or_origin_is_refused_even_with_the_token(bg, host, origin):
    headers = {"Host": host or own_host(bg), "Authorization": f"Bearer {bg.cluster.control_token}"}
    if origin:
        headers["Origin"] = origin
    status, _ = send(bg, "POST", "/api/brokers/3/stop", headers)
    assert status == 403
    assert running(bg, 3)
    assert send(bg, "GET", "/api/state", {k: v for k, v in headers.items() if k != "Authorization"})[0] == 403


def test_the_bound_address_with_the_token_is_served(bg):
    for host in (own_host(bg), f"localhost:{bg.cluster.control_server.port}"):
        headers = {"Host": host, "Origin": f"http://{host}", "Authorization": f"Bearer {bg.cluster.control_token}"}
        assert send(bg, "GET", "/api/brokers", {"Host": host})[0] == 200
        assert send(bg, "POST", "/api/reassignments/wait", headers)[0] == 200
