"""Encode/decode speed of kraftwire's codec against kafka-python 3.0.12's (and kio's, if installed).

Two messages: (a) AlterPartitionReassignmentsRequest v0, 1 topic x 1000 partitions x 3 replicas;
(b) MetadataResponse at the highest version all codecs share, 100 topics x 50 partitions x 3 replicas.
Before timing, every codec's bytes are checked to be identical, and what each decoder returns is
checked to hold the message: kraftwire's object equals the one encoded, kafka-python's and kio's
encode back to the same bytes. Each timing starts with an untimed warm-up call (codecs compiled, caches
filled). Prints medians (ms) and the speed-up of kraftwire over each peer (peer time / kraftwire time;
above 1.0 means kraftwire is faster).

Run: python bench/codec.py [--runs N]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from kafka.protocol.admin import AlterPartitionReassignmentsRequest as KpAlter  # noqa: E402
from kafka.protocol.metadata import MetadataResponse as KpMetadata  # noqa: E402

import kraftwire.codec.messages as m  # noqa: E402
from provenance import header  # noqa: E402

try:
    import kio.serial
    from kio.schema.alter_partition_reassignments.v0.request import AlterPartitionReassignmentsRequest as KioAlter
except ImportError:
    kio = None


def medians_ms(calls: dict, runs: int) -> dict:
    """Median ms of each of ``calls`` (name -> (function, check of its result or None)), timed in turn
    within each round so that load from elsewhere falls on all alike; an untimed warm-up call first."""
    times = {name: [] for name in calls}
    for fn, _ in calls.values():
        fn()  # warm-up (compiles codecs, fills caches)
    for _ in range(runs):
        for name, (fn, check) in calls.items():
            start = time.perf_counter()
            result = fn()
            times[name].append(time.perf_counter() - start)
            if check is not None and not check(result):
                raise SystemExit(f"{name}: a timed call returned a wrong result")
    return {name: statistics.median(t) * 1000 for name, t in times.items()}


def alter_case():
    Alter = m.AlterPartitionReassignmentsRequest
    ours = Alter(timeout_ms=30000, topics=[Alter.ReassignableTopic(name="bench-topic", partitions=[
        Alter.ReassignablePartition(partition_index=i, replicas=[(i + k) % 6 for k in range(3)]) for i in range(1000)])])
    data = ours.encode(0)
    theirs = KpAlter.decode(data, version=0)
    theirs._header = None  # decoded kafka-python objects lack it; encode() reads it
    peers = {"kafka-python": (lambda: theirs.encode(version=0), lambda: KpAlter.decode(data, version=0),
                              lambda decoded: _kp_encode(decoded, 0))}
    if kio is not None:
        reader, writer = kio.serial.entity_reader(KioAlter), kio.serial.entity_writer(KioAlter)
        kio_obj = reader(data, 0)[0]
        peers["kio"] = (lambda: _kio_encode(writer, kio_obj), lambda: reader(data, 0),
                        lambda decoded: _kio_encode(writer, decoded[0]))
    return "AlterPartitionReassignmentsRequest v0 (1 x 1000 x 3)", ours, 0, Alter, data, peers


def _kp_encode(decoded, version: int) -> bytes:
    decoded._header = None
    return bytes(decoded.encode(version=version))


def _kio_encode(writer, obj) -> bytes:
    import io
    out = io.BytesIO()
    writer(out, obj)
    return out.getvalue()


def metadata_case():
    M = m.MetadataResponse
    peers_max = [KpMetadata.max_version]
    kio_module = None
    if kio is not None:
        import importlib
        for v in range(M.VALID_VERSIONS.high, -1, -1):
            try:
                kio_module = importlib.import_module(f"kio.schema.metadata.v{v}.response")
                peers_max.append(v)
                break
            except ImportError:
                continue
    version = min(M.VALID_VERSIONS.high, *peers_max)
    brokers = [M.MetadataResponseBroker(node_id=i, host="localhost", port=9092 + i, rack=None) for i in range(1, 4)]
    topics = [M.MetadataResponseTopic(name=f"topic-{t:03d}", topic_id=uuid.UUID(int=t + 1), partitions=[
        M.MetadataResponsePartition(partition_index=p, leader_id=1 + p % 3, leader_epoch=p, replica_nodes=[1, 2, 3],
                                    isr_nodes=[1, 2, 3]) for p in range(50)]) for t in range(100)]
    ours = M(brokers=brokers, cluster_id="bench-cluster", controller_id=1, topics=topics)
    data = ours.encode(version)
    theirs = KpMetadata.decode(data, version=version)
    theirs._header = None
    peers = {"kafka-python": (lambda: theirs.encode(version=version), lambda: KpMetadata.decode(data, version=version),
                              lambda decoded: _kp_encode(decoded, version))}
    if kio_module is not None:
        kio_cls = kio_module.MetadataResponse
        reader, writer = kio.serial.entity_reader(kio_cls), kio.serial.entity_writer(kio_cls)
        kio_obj = reader(data, 0)[0]
        peers["kio"] = (lambda: _kio_encode(writer, kio_obj), lambda: reader(data, 0),
                        lambda decoded: _kio_encode(writer, decoded[0]))
    return f"MetadataResponse v{version} (100 x 50 x 3)", ours, version, M, data, peers


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    header()
    print(f"peers: kafka-python (its JSON-driven codec){', kio' if kio else ''}")
    for name, ours, version, cls, data, peers in (alter_case(), metadata_case()):
        for peer, (encode, decode, reencode) in peers.items():
            if bytes(encode()) != data:
                print(f"{name}: {peer} bytes differ from kraftwire's", file=sys.stderr)
                return 1
            if reencode(decode()) != data:
                print(f"{name}: what {peer} decodes does not encode back to the same bytes", file=sys.stderr)
                return 1
        if cls.decode(data, version) != ours:
            print(f"{name}: kraftwire decodes another message than it encoded", file=sys.stderr)
            return 1
        calls = {("kraftwire", "encode"): (lambda: ours.encode(version), lambda out: out == data),
                 ("kraftwire", "decode"): (lambda: cls.decode(data, version), lambda obj: obj == ours)}
        for peer, (encode, decode, _) in peers.items():
            calls[(peer, "encode")] = (encode, lambda out: bytes(out) == data)
            calls[(peer, "decode")] = (decode, None)  # checked above: it encodes back to the same bytes
        ms = medians_ms(calls, args.runs)
        ours_enc, ours_dec = ms[("kraftwire", "encode")], ms[("kraftwire", "decode")]
        print(f"\n{name}: {len(data)} bytes, identical across codecs; every decoder's result checked")
        print(f"  {'codec':<14}{'encode ms':>11}{'decode ms':>11}{'enc speed-up':>14}{'dec speed-up':>14}")
        print(f"  {'kraftwire':<14}{ours_enc:>11.3f}{ours_dec:>11.3f}")
        for peer in peers:
            enc, dec = ms[(peer, "encode")], ms[(peer, "decode")]
            print(f"  {peer:<14}{enc:>11.3f}{dec:>11.3f}{enc / ours_enc:>13.2f}x{dec / ours_dec:>13.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
