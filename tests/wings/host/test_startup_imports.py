"""What a process imports to start: ``import kraftwire`` loads none of the server, a cluster that uses no
metrics, SCRAM or record-batch checksum package init leaves those libraries unloaded, and the public API
and the metrics still answer in full once asked for. Each check runs in a fresh interpreter, whose
``sys.modules`` is the evidence."""
import json
import subprocess
import sys
import textwrap

import zlib


def run(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON line, returned."""
    answer = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert answer.returncode == 0, answer.stderr
    return json.loads(answer.stdout.strip().splitlines()[-1])


def test_import_kraftwire_loads_no_server_or_codec():
    found = run("""
        import json, sys
        import kraftwire
        print(json.dumps(sorted(m for m in sys.modules if m.startswith("kraftwire") or m in ("asyncio", "construct"))))
    """)
    assert found == ["kraftwire"]


def test_the_public_api_is_there_on_first_use():
    found = run("""
        import json, sys
        import kraftwire
        from kraftwire import BackgroundCluster, Cluster, Security
        from kraftwire.server.host import cluster
        try:
            kraftwire.NoSuchThing
            missing = "no error"
        except AttributeError as exc:
            missing = str(exc)
        print(json.dumps({"same": [Cluster is cluster.Cluster, BackgroundCluster is cluster.BackgroundCluster,
                                   Security is cluster.Security],
                          "all": sorted(kraftwire.__all__), "missing": missing,
                          "raft": "kraftwire.server.raft" in sys.modules}))
    """)
    assert found == {"same": [True, True, True], "all": ["BackgroundCluster", "Cluster", "Security"],
                     "missing": "module 'kraftwire' has no attribute 'NoSuchThing'", "raft": True}


def test_a_started_cluster_loads_no_metrics_scram_or_package_metadata_until_used():
    found = run("""
        import asyncio, json, sys
        from kraftwire import Cluster

        async def main():
            async with Cluster() as cluster:
                before = {m: m in sys.modules for m in ("prometheus_client", "scramp", "crc32c", "importlib.metadata")}
                text = cluster.metrics.exposition().decode()
                count = next(float(line.split()[-1]) for line in text.splitlines()
                             if line.startswith("kraftwire_metadata_commit_latency_seconds_count"))
                buckets = [line for line in text.splitlines()
                           if line.startswith("kraftwire_metadata_commit_latency_seconds_bucket")]
                return {"before": before, "count": count, "inf": buckets[-1].split()[-1],
                        "after": "prometheus_client" in sys.modules}

        print(json.dumps(asyncio.run(main())))
    """)
    assert found["before"] == {"prometheus_client": False, "scramp": False, "crc32c": False,
                               "importlib.metadata": False}
    # the start's own writes (the brokers' registrations, their unfencing) were counted before any scrape
    assert found["count"] >= 3
    assert float(found["inf"]) == found["count"]
    assert found["after"] is True


def test_the_checksum_is_crc32c():
    from kraftwire.codec.crc import crc32c
    import crc32c as package

    assert crc32c(b"123456789") == 0xE3069283  # the standard check value of CRC-32C
    data = bytes(range(256)) * 40
    assert crc32c(data) == package.crc32c(data) != zlib.crc32(data)
    assert crc32c(data[1000:], crc32c(data[:1000])) == crc32c(data)
