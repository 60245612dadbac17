"""``kraftwire healthcheck``: is a broker answering the Kafka protocol?

Sends one ApiVersions request (v3, what current clients open with) over a plain blocking socket with
our codec and reports healthy when the answer decodes with error code 0; a server whose metadata log
directory failed answers KAFKA_STORAGE_ERROR (56) until it has stopped, and is reported unhealthy. Blocking and
dependency-free
on purpose: it runs as a container's HEALTHCHECK, a fresh process every few seconds.
"""
from __future__ import annotations

import socket
import struct
import sys

from kraftwire import codec
from kraftwire.codec.messages import ApiVersionsRequest, ApiVersionsResponse, RequestHeader, ResponseHeader

API_VERSIONS_KEY = 18  # ApiVersionsRequest.API_KEY
API_VERSIONS_VERSION = 3
_SIZE = struct.Struct(">i")
CORRELATION_ID = 1
# What an error code in the answer means for the server's health.
ERROR_MEANINGS: dict[int, str] = {codec.ErrorCode.KAFKA_STORAGE_ERROR:
                  "KAFKA_STORAGE_ERROR: the server's metadata log directory failed; it is stopping"}


class Unhealthy(Exception):
    pass


def _read_exactly(connection: socket.socket, count: int) -> bytes:
    data = bytearray()
    while len(data) < count:
        chunk = connection.recv(count - len(data))
        if not chunk:
            raise Unhealthy("the connection closed before the answer was complete")
        data += chunk
    return bytes(data)


def probe(host: str, port: int, timeout: float = 5.0) -> ApiVersionsResponse:
    """The broker's ApiVersions answer; ``Unhealthy`` when there is none or it is an error."""
    frame = bytearray(b"\0\0\0\0")
    RequestHeader(request_api_key=API_VERSIONS_KEY, request_api_version=API_VERSIONS_VERSION,
                  correlation_id=CORRELATION_ID, client_id="kraftwire-healthcheck").encode_into(
        frame, codec.request_header_version(API_VERSIONS_KEY, API_VERSIONS_VERSION))
    ApiVersionsRequest(client_software_name="kraftwire-healthcheck",
                       client_software_version="1").encode_into(frame, API_VERSIONS_VERSION)
    _SIZE.pack_into(frame, 0, len(frame) - 4)
    try:
        with socket.create_connection((host, port), timeout=timeout) as connection:
            connection.sendall(frame)
            size = _SIZE.unpack(_read_exactly(connection, 4))[0]
            answer = _read_exactly(connection, size)
    except OSError as exc:
        raise Unhealthy(f"cannot talk to {host}:{port}: {exc}") from None
    try:
        header, pos = ResponseHeader.decode_from(answer, 0, 0)  # ApiVersions answers use header v0
        response = ApiVersionsResponse.decode(answer[pos:], API_VERSIONS_VERSION)
    except codec.CodecError as exc:
        raise Unhealthy(f"{host}:{port} sent an answer that does not decode: {exc}") from None
    if header.correlation_id != CORRELATION_ID:
        raise Unhealthy(f"{host}:{port} answered another request ({header.correlation_id})")
    if response.error_code != codec.ErrorCode.NONE:
        why = ERROR_MEANINGS.get(response.error_code)
        raise Unhealthy(f"{host}:{port} answered ApiVersions with error code {response.error_code}"
                        + (f" ({why})" if why else ""))
    return response


def run(host: str, port: int, timeout: float) -> int:
    """The subcommand: 0 and one line on stdout when healthy, 1 and the reason on stderr otherwise."""
    try:
        response = probe(host, port, timeout)
    except Unhealthy as exc:
        print(f"unhealthy: {exc}", file=sys.stderr)
        return 1
    print(f"healthy: {host}:{port} serves {len(response.api_keys)} APIs")
    return 0
