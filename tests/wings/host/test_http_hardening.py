"""The HTTP ports and start-up of a real ``kraftwire serve`` process against hostile or unlucky
conditions: an oversized request line, SIGTERM with an HTTP connection open, a port already taken."""
from __future__ import annotations

import socket

from tests.served import Served, serve_once

SERVE = ("--brokers", "1", "--port", "0", "--controller-port", "0", "--data-dir", "data")


def http_port(served: Served, name: str) -> int:
    return int(served.wait_logged(f"{name} on http://").rsplit(":", 1)[1])


def get_metrics(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := sock.recv(1 << 16):
            data += chunk
    return data


def test_an_oversized_request_line_gets_414_and_no_traceback(tmp_path):
    served = Served(tmp_path, *SERVE, "--metrics-port", "0")
    try:
        port = http_port(served, "metrics")
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            try:
                sock.sendall(b"GET /" + b"a" * 200_000 + b" HTTP/1.1\r\n\r\n")
                answer = sock.recv(1 << 16)
            except ConnectionResetError:  # closed while the line was still being sent: also Kafka-like
                answer = b""
        assert answer == b"" or answer.startswith(b"HTTP/1.1 414 "), answer[:100]
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 100_000 + b"\r\n\r\n")
            try:
                answer = sock.recv(1 << 16)
            except ConnectionResetError:
                answer = b""
        assert answer == b"" or answer.startswith(b"HTTP/1.1 431 "), answer[:100]
        assert get_metrics(port).startswith(b"HTTP/1.1 200 ")
    finally:
        logged = served.stop()
    assert "Traceback" not in logged and "ValueError" not in logged, logged


def test_sigterm_with_an_open_http_connection_logs_no_error(tmp_path):
    served = Served(tmp_path, *SERVE, "--metrics-port", "0", "--control-port", "0")
    idle = [socket.create_connection(("127.0.0.1", http_port(served, name)), timeout=30)
            for name in ("metrics", "control plane and live view")]
    half = socket.create_connection(("127.0.0.1", http_port(served, "metrics")), timeout=30)
    half.sendall(b"GET /metr")  # a request line still arriving
    logged = served.stop()
    for sock in [*idle, half]:
        sock.close()
    assert "CancelledError" not in logged and "Traceback" not in logged and "ERROR" not in logged, logged


def test_a_port_in_use_is_one_line_and_nothing_is_written(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = serve_once(tmp_path, "--brokers", "1", "--port", "0", "--controller-port", str(port),
                            "--data-dir", "data")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"cannot start: the controller port 127.0.0.1:{port} is not available" in lines[0]
    assert not (tmp_path / "data").exists()
