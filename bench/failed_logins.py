"""Do failed SASL logins slow other clients? A brute-force run against a SASL_PLAINTEXT cluster.

``kraftwire serve`` (one broker, PLAIN users) runs as its own process. One authenticated client sends
Metadata requests in a closed loop and times each answer: first alone (the baseline), then while
``--attackers`` connections keep logging in with a wrong password until ``--failures`` logins have
failed (each gets SASL_AUTHENTICATION_FAILED and is closed after the failed-authentication delay, 100 ms).
Printed: the good client's p50 and p99 latency in both phases, their ratio, and the failed-login rate.
The goal is a p99 under attack within 2x of the baseline.

Run: python bench/failed_logins.py [--failures 1000] [--attackers 20] [--seconds 3]
"""
from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import uvloop

from kraftwire import codec
from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import (MetadataRequest, RequestHeader, ResponseHeader, SaslAuthenticateRequest,
                                      SaslAuthenticateResponse, SaslHandshakeRequest)
from kraftwire.server.wire.client import KafkaClient
from kraftwire.server.wire.security import ClientSecurity

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from provenance import commit, load_average  # noqa: E402
_SIZE = struct.Struct(">i")


def frame(request, version: int) -> bytes:
    out = bytearray(b"\0\0\0\0")
    RequestHeader(request_api_key=request.API_KEY, request_api_version=version, correlation_id=1,
                  client_id="attacker").encode_into(out, codec.request_header_version(request.API_KEY, version))
    request.encode_into(out, version)
    _SIZE.pack_into(out, 0, len(out) - 4)
    return bytes(out)


HANDSHAKE = frame(SaslHandshakeRequest(mechanism="PLAIN"), 1)
WRONG = frame(SaslAuthenticateRequest(auth_bytes=b"\0victim\0guess"), 2)


async def read_frame(reader) -> bytes:
    return await reader.readexactly(_SIZE.unpack(await reader.readexactly(4))[0])


async def one_failed_login(host: str, port: int) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(HANDSHAKE)
        await read_frame(reader)
        writer.write(WRONG)
        data = await read_frame(reader)
        _, pos = ResponseHeader.decode_from(data, 0, codec.response_header_version(36, 2))
        assert SaslAuthenticateResponse.decode(data[pos:], 2).error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert await reader.read() == b""  # then the server closes
    finally:
        writer.close()


async def attack(host: str, port: int, failures: int, attackers: int) -> float:
    """Run ``failures`` failed logins over ``attackers`` concurrent connections; returns the seconds taken."""
    remaining = failures
    start = time.perf_counter()

    async def attacker():
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await one_failed_login(host, port)

    await asyncio.gather(*(attacker() for _ in range(attackers)))
    return time.perf_counter() - start


async def measure(client: KafkaClient, until) -> list[float]:
    latencies = []
    request = MetadataRequest(topics=None)
    while not until():
        sent = time.perf_counter()
        await client.send(request, 12)
        latencies.append(time.perf_counter() - sent)
    return latencies


def p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[q - 1] * 1000


async def main(args) -> None:
    data = tempfile.mkdtemp(prefix="kraftwire-bench-")
    server = subprocess.Popen(
        [sys.executable, "-m", "kraftwire", "serve", "--brokers", "1", "--port", "0", "--controller-port", "0",
         "--data-dir", data, "--listener-name", "SASL_PLAINTEXT", "--log-level", "WARNING",
         "--sasl-plain-users", "good:good-secret,victim:victim-secret"],
        stdout=subprocess.PIPE, text=True, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        line = server.stdout.readline()
        host, port = line.strip().rsplit(" ", 1)[1].split(",")[0].rsplit(":", 1)
        port = int(port)
        client = KafkaClient(host, port, "good", ClientSecurity("SASL_PLAINTEXT", None, "PLAIN", "good", "good-secret"))
        await client.connect()
        deadline = time.perf_counter() + args.seconds
        baseline = await measure(client, lambda: time.perf_counter() > deadline)
        attack_task = asyncio.ensure_future(attack(host, port, args.failures, args.attackers))
        under_attack = await measure(client, attack_task.done)
        took = attack_task.result()
        await client.close()
    finally:
        server.terminate()
        server.wait(10)
        shutil.rmtree(data, ignore_errors=True)
    print(f"command: python bench/failed_logins.py --failures {args.failures} --attackers {args.attackers} "
          f"--seconds {args.seconds:g}")
    print(f"commit: {commit()}; load average at the end: {load_average()}")
    print(f"baseline:     {len(baseline):6d} Metadata requests, p50 {p(baseline, 50):.2f} ms, "
          f"p99 {p(baseline, 99):.2f} ms")
    print(f"under attack: {len(under_attack):6d} Metadata requests, p50 {p(under_attack, 50):.2f} ms, "
          f"p99 {p(under_attack, 99):.2f} ms")
    print(f"failed logins: {args.failures} in {took:.2f} s ({args.failures / took:.0f}/s, each closed after the "
          f"100 ms delay)")
    ratio = p(under_attack, 99) / p(baseline, 99)
    print(f"p99 ratio: {ratio:.2f} ({'within' if ratio <= 2 else 'OVER'} the 2x goal)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--failures", type=int, default=1000)
    parser.add_argument("--attackers", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=3.0)
    uvloop.run(main(parser.parse_args()))
