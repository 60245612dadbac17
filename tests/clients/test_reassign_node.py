"""kafkajs 2.2 starts and lists a reassignment (tests/node/reassign.js, run with node).

tests/setup.sh installs node and npm (Debian) and kafkajs (npm, in tests/node); where one is missing the
test is skipped, except on CI (CI=true), where that is a failure.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from kafka import KafkaAdminClient

from kraftwire.server.host.cluster import BackgroundCluster

NODE_DIR = Path(__file__).resolve().parents[1] / "node"


@pytest.fixture
def kafkajs():
    """node with kafkajs installed in tests/node: a skip when missing, a failure on CI."""
    missing = [what for what, present in (("node", shutil.which("node") is not None),
                                          ("kafkajs", (NODE_DIR / "node_modules" / "kafkajs").is_dir())) if not present]
    if missing:
        message = f"{' and '.join(missing)} not installed (tests/setup.sh installs them)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def test_kafkajs_starts_and_lists_a_reassignment(kafkajs):
    with BackgroundCluster(brokers=4) as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap)
        admin.create_topics({"moving": {"assignments": {0: [1, 2, 3]},
                                        "configs": {"kraftwire.partition.size.bytes": str(10 ** 15)}}})
        admin.close()
        done = subprocess.run(["node", str(NODE_DIR / "reassign.js"), bg.bootstrap, "moving"],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout.strip().splitlines()[-1])
        assert answer["listed"] == {"topics": [{"name": "moving", "partitions": [
            {"partition": 0, "replicas": [4, 2, 3, 1], "addingReplicas": [4], "removingReplicas": [1]}]}]}
        assert "INVALID_REPLICA_ASSIGNMENT" in answer["refused"]["types"], answer["refused"]
        state = bg.call(lambda: bg.cluster.controller.committed.topic("moving").partitions[0])
        assert (state.replicas, state.adding, state.removing) == ((4, 2, 3, 1), (4,), (1,))
