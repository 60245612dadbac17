"""testcontainers-go with franz-go's kadm: ``go test`` of tests/containers/go (its modules come from the Go
proxy, pinned by go.sum; tests/setup.sh downloads them) against podman's API socket (conftest.py)."""
import re
import shutil
import subprocess
from pathlib import Path

GO_MODULE = Path(__file__).resolve().parent / "go"


def test_go_testcontainers_and_kadm(engine, broker_port):
    go = shutil.which("go") or "/usr/local/go/bin/go"
    environment = dict(engine, KRAFTWIRE_TEST_PORT=str(broker_port), GOFLAGS="-mod=readonly")
    done = subprocess.run([go, "test", "-count=1", "-v", "./..."], cwd=GO_MODULE, env=environment,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.findall(r"^--- PASS: (\w+)", done.stdout, re.M) == ["TestThrottledReassignmentOnTheVirtualClock"], \
        done.stdout
