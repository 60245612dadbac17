"""The bare echo server the benchmarks measure kraftwire against: a uvloop server with Kafka's framing
(4-byte size, then the request) that answers every request with one fixed small frame carrying its
correlation id; the ceiling for a Python asyncio server on one core. It imports nothing of kraftwire.

Run on its own (bench/peers.py does): ``python bench/echo_server.py`` prints ``ready PORT`` once it
listens, and serves until SIGTERM or its standard input closes.
"""
from __future__ import annotations

import asyncio
import signal
import struct
import sys

_SIZE = struct.Struct(">i")
ECHO_BODY = bytes(12)  # a fixed small response body (an ApiVersions v3 error answer is about that size)


class Echo(asyncio.Protocol):
    """Same framing as Kafka: 4-byte size, then the request; answers size + correlation id + ECHO_BODY."""

    def connection_made(self, transport):
        self.transport = transport
        self.buffer = bytearray()

    def data_received(self, data):
        buffer = self.buffer
        buffer += data
        start, out = 0, bytearray()
        while len(buffer) - start >= 4:
            end = start + 4 + _SIZE.unpack_from(buffer, start)[0]
            if len(buffer) < end:
                break
            out += _SIZE.pack(4 + len(ECHO_BODY)) + buffer[start + 8:start + 12] + ECHO_BODY
            start = end
        del buffer[:start]
        if out:
            self.transport.write(bytes(out))


async def main() -> None:
    import uvloop  # noqa: F401  (the loop policy is set by the caller below)

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_reader(sys.stdin.fileno(), lambda: stop.set() if not sys.stdin.buffer.read1(4096) else None)
    server = await loop.create_server(Echo, "127.0.0.1", 0)
    print("ready", server.sockets[0].getsockname()[1], flush=True)
    await stop.wait()
    server.close()


if __name__ == "__main__":
    import uvloop

    uvloop.run(main())
