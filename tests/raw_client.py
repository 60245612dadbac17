"""A blocking Kafka connection built on kraftwire's codec, for tests that need the exact bytes and
error codes a server answers with (no client library in between, no retries)."""
from __future__ import annotations

import socket
import struct

from kraftwire import codec
from kraftwire.codec.messages import RequestHeader, ResponseHeader

_SIZE = struct.Struct(">i")


def encode_request(request, version: int, correlation_id: int, client_id: str | None = "kraftwire-test") -> bytes:
    """A size-prefixed request frame."""
    out = bytearray(b"\0\0\0\0")
    RequestHeader(request_api_key=request.API_KEY, request_api_version=version, correlation_id=correlation_id,
                  client_id=client_id).encode_into(out, codec.request_header_version(request.API_KEY, version))
    request.encode_into(out, version)
    _SIZE.pack_into(out, 0, len(out) - 4)
    return bytes(out)


class RawConnection:
    def __init__(self, address: str, timeout: float = 30.0):
        host, port = address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self._correlation = 0

    def __enter__(self) -> "RawConnection":
        return self

    def __exit__(self, *exc) -> None:
        self.sock.close()

    def read_frame(self) -> bytes:
        """One response frame (without its size); ConnectionError when the server closed instead."""
        return self._read_exactly(_SIZE.unpack(self._read_exactly(4))[0])

    def _read_exactly(self, count: int) -> bytes:
        data = bytearray()
        while len(data) < count:
            chunk = self.sock.recv(min(count - len(data), 1 << 20))
            if not chunk:
                raise ConnectionError("the server closed the connection")
            data += chunk
        return bytes(data)

    def send(self, request, version: int):
        """Send one request and return its decoded response."""
        self._correlation += 1
        self.sock.sendall(encode_request(request, version, self._correlation))
        return self.read_response(request.API_KEY, version, self._correlation)

    def read_response(self, api_key: int, version: int, correlation_id: int):
        data = self.read_frame()
        header, pos = ResponseHeader.decode_from(data, 0, codec.response_header_version(api_key, version))
        assert header.correlation_id == correlation_id, (header.correlation_id, correlation_id)
        return codec.api(api_key)[1].decode(data[pos:], version)


def broker_addresses(bootstrap: str) -> list[str]:
    return bootstrap.split(",")
