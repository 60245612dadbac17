"""The port helper of the tests that must name ports: runs come from below the kernel's ephemeral range,
where outgoing connections of a loaded machine never take them, so it does not run out."""
import socket

from tests.served import _ephemeral_low, free_ports


def test_free_port_runs_are_below_the_ephemeral_range_and_bindable():
    low = _ephemeral_low()
    for _ in range(20):
        base = free_ports(4)
        assert 1024 <= base and base + 4 <= low
        sockets = [socket.socket() for _ in range(4)]
        try:
            for offset, sock in enumerate(sockets):
                sock.bind(("127.0.0.1", base + offset))
        finally:
            for sock in sockets:
                sock.close()
