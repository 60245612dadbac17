"""Encode/decode speed of kraftwire's codec against kafka-python 3.0.12's (and kio's, if installed).

Two messages: (a) AlterPartitionReassignmentsRequest v0, 1 topic x 1000 partitions x 3 replicas;
(b) MetadataResponse at the highest version all codecs share, 100 topics x 50 partitions x 3 replicas.
Before timing, every codec's bytes are checked to be identical, and what each decoder returns is
checked to hold the message: kraftwire's object equals the one encoded, kafka-python's and kio's
encode back to the same bytes. Each timing starts with an untimed warm-up call (codecs compiled, caches
filled). Prints medians (ms) and the speed-up of kraftwire over each peer (peer time / kraftwire time;
above 1.0 means kraftwire is faster). For the Alter, also timed in the same rounds: building the objects
kraftwire's decoder returns from values already read (one ``tuple.__new__`` per struct, no bytes
parsed), the part of its decode that a faster reader cannot remove.

With ``--against REV`` the same measurement then runs on an exported copy of commit REV (``git
archive``, imported through PYTHONPATH), for a before/after comparison in one command.

Run: python bench/codec.py [--runs N] [--against REV]
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
from provenance import header, rerun_at  # noqa: E402

try:
    import kio.serial
    from kio.schema.alter_partition_reassignments.v0.request import AlterPartitionReassignmentsRequest as KioAlter
except ImportError:
    kio = None


def medians_ms(calls: dict, runs: int) -> tuple[dict, dict]:
    """Median and fastest ms of each of ``calls`` (name -> (function, check of its result or None)), timed in turn
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
    return ({name: statistics.median(t) * 1000 for name, t in times.items()},
            {name: min(t) * 1000 for name, t in times.items()})


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
    topic, = ours.topics
    values = [(p.partition_index, p.replicas) for p in topic.partitions]
    new, no_tags = tuple.__new__, ()

    def objects():  # what the generated decoder builds, in the same way, from values already read
        partitions = tuple([new(Alter.ReassignablePartition, (index, replicas, no_tags)) for index, replicas in values])
        topics = (new(Alter.ReassignableTopic, (topic.name, partitions, no_tags)),)
        return new(Alter, (ours.timeout_ms, ours.allow_replication_factor_change, topics, no_tags))
    return "AlterPartitionReassignmentsRequest v0 (1 x 1000 x 3)", ours, 0, Alter, data, peers, objects


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
    return f"MetadataResponse v{version} (100 x 50 x 3)", ours, version, M, data, peers, None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--against", metavar="REV", help="then measure the codec of this commit the same way")
    parser.add_argument("--label", help=argparse.SUPPRESS)  # the commit an --against run measures
    args = parser.parse_args()
    if args.label is None:
        header()
    print(f"\n=== kraftwire {args.label or 'of this tree'}; peers: kafka-python (its JSON-driven codec)"
          f"{', kio' if kio else ''}")
    for name, ours, version, cls, data, peers, objects in (alter_case(), metadata_case()):
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
        if objects is not None:
            calls[("objects", "build")] = (objects, lambda obj: obj == ours)
        ms, fastest = medians_ms(calls, args.runs)
        ours_enc, ours_dec = ms[("kraftwire", "encode")], ms[("kraftwire", "decode")]
        print(f"\n{name}: {len(data)} bytes, identical across codecs; every decoder's result checked")
        print(f"  {'codec':<14}{'encode ms':>11}{'decode ms':>11}{'enc speed-up':>14}{'dec speed-up':>14}")
        print(f"  {'kraftwire':<14}{ours_enc:>11.3f}{ours_dec:>11.3f}")
        for peer in peers:
            enc, dec = ms[(peer, "encode")], ms[(peer, "decode")]
            print(f"  {peer:<14}{enc:>11.3f}{dec:>11.3f}{enc / ours_enc:>13.2f}x{dec / ours_dec:>13.2f}x")
        if objects is not None:
            build = ms[("objects", "build")]
            print(f"  kraftwire's objects alone (tuple.__new__ per struct, nothing read): {build:.3f} ms, "
                  f"{build / ours_dec:.0%} of its decode" +
                  (f", {build / ms[('kio', 'decode')]:.2f}x kio's whole decode" if ("kio", "decode") in ms else ""))
        decoders = ", ".join(f"{codec} {fastest[(codec, 'decode')]:.3f} ms" for codec in ["kraftwire", *peers])
        if objects is not None:
            decoders += f" (kraftwire's objects alone {fastest[('objects', 'build')]:.3f} ms)"
        print(f"  fastest of the {args.runs} decodes (least disturbed by load from elsewhere): {decoders}" +
              (f"; kraftwire/kio {fastest[('kraftwire', 'decode')] / fastest[('kio', 'decode')]:.2f}x"
               if "kio" in peers else ""))
    if args.against:
        return rerun_at(args.against, __file__, ["--runs", str(args.runs)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
