"""Node's testcontainers with kafkajs: ``node --test`` of tests/containers/node (npm packages pinned by its
package-lock.json; tests/setup.sh installs them) against podman's API socket (conftest.py)."""
import re
import shutil
import subprocess
from pathlib import Path

NODE_PROJECT = Path(__file__).resolve().parent / "node"


def test_node_testcontainers_and_kafkajs(engine, broker_port):
    node = shutil.which("node")
    assert node, "node is missing: bash tests/setup.sh installs it"
    done = subprocess.run([node, "--test", "--test-reporter=tap", "reassign.test.js"], cwd=NODE_PROJECT,
                          env=dict(engine, KRAFTWIRE_TEST_PORT=str(broker_port)),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    passed = re.findall(r"^ok \d+ - (.+)$", done.stdout, re.M)
    assert passed == ["a throttled reassignment finishes when the clock is advanced"], done.stdout
