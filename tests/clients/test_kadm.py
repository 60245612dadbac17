"""franz-go's kadm (Go) against kraftwire: ``go test`` of tests/kadm, whose modules tests/setup.sh
downloads and go.sum pins; each Go test asserts what kadm returned (see tests/kadm/kadm_test.go)."""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kraftwire.server.host.cluster import BackgroundCluster

KADM = Path(__file__).resolve().parents[1] / "kadm"
GO_TESTS = ["TestTopicsAndConfigs", "TestReassignment", "TestLogDirMove"]


@pytest.fixture(scope="module")
def kraftwire():
    with BackgroundCluster(brokers=3, log_dirs=2) as bg:
        yield bg


def test_kadm_admin_calls(kraftwire):
    go = shutil.which("go") or "/usr/local/go/bin/go"
    environment = dict(os.environ, KRAFTWIRE_BOOTSTRAP=kraftwire.bootstrap, GOFLAGS="-mod=readonly")
    done = subprocess.run([go, "test", "-count=1", "-v", "./..."], cwd=KADM, env=environment,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.findall(r"^--- PASS: (\w+)", done.stdout, re.M) == GO_TESTS, done.stdout
