"""JUnit 5 with org.testcontainers and Kafka's Java Admin: ``mvn test`` of tests/containers/java (from
Maven Central; tests/setup.sh resolves it, the surefire provider comes on the first run) against
podman's API socket (conftest.py)."""
import re
import shutil
import subprocess
from pathlib import Path

JAVA_PROJECT = Path(__file__).resolve().parent / "java"


def test_java_testcontainers_and_kafka_admin(engine, broker_port):
    mvn = shutil.which("mvn")
    assert mvn, "mvn is missing"
    done = subprocess.run([mvn, "-B", "-q", "test", "-Dsurefire.printSummary=true", "-DtrimStackTrace=true"],
                          cwd=JAVA_PROJECT, env=dict(engine, KRAFTWIRE_TEST_PORT=str(broker_port)),
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-5000:]
    reports = list((JAVA_PROJECT / "target" / "surefire-reports").glob("TEST-*.xml"))
    assert len(reports) == 1, reports
    report = reports[0].read_text()
    assert re.search(r'<testsuite [^>]*tests="1"[^>]*failures="0"', report) or \
        re.search(r'<testsuite [^>]*failures="0"[^>]*tests="1"', report), report[:2000]
    assert 'name="aThrottledReassignmentFinishesWhenTheClockIsAdvanced"' in report
