"""Shared fixtures: a real cluster on loopback with ephemeral ports.

``bg_cluster`` hosts the cluster on its own event loop in a thread, so synchronous clients
(kafka-python, confluent-kafka, kcat) can be used from plain test functions; ``cluster`` is the
in-loop ``Cluster`` for async tests (aiokafka, direct protocol tests); ``operable_cluster`` is a
``bg_cluster`` serving metrics and the control plane over HTTP. ``spark`` is one local
SparkSession for the whole run (tests marked ``spark``): starting one costs ~10 s and ~400 MB.
``apache_kafka`` (tests/apache_kafka.py) is one real Apache Kafka cluster for the whole run, shared by
the tests that take Kafka as the oracle: its four JVMs start once; ``apache_kafka_acls`` is a second,
secured one (SASL_PLAINTEXT and the StandardAuthorizer, one JVM) for the ACL and SASL differentials.
"""
import os

import pytest

from apache_kafka import apache_kafka  # noqa: F401 (one real Apache Kafka cluster for the whole session)
from apache_kafka import apache_kafka_acls  # noqa: F401 (and one secured, for the ACL differential)
from kraftwire.server.host.cluster import BackgroundCluster, Cluster


def pytest_addoption(parser):
    parser.addoption("--fuzz-frames", type=int, default=6000, help="frames tests/wings/wire/test_fuzz.py sends (default 6000)")
    parser.addoption("--fuzz-seed", type=int, default=12, help="seed of tests/wings/wire/test_fuzz.py's frames (default 12)")


@pytest.fixture
def bg_cluster():
    with BackgroundCluster(brokers=3) as bg:
        yield bg


@pytest.fixture
def operable_cluster():
    """A ``bg_cluster`` with its metrics and control-plane HTTP ports open (ephemeral)."""
    with BackgroundCluster(brokers=3, metrics_port=0, control_port=0) as bg:
        yield bg


@pytest.fixture
async def cluster():
    async with Cluster(brokers=3) as c:
        yield c


@pytest.fixture(scope="session")
def spark():
    """local[2] on loopback, no UI, few shuffle partitions; serial GC and C1-only JIT start faster.
    Started the way ``kraftwire audit`` starts it (workers run this interpreter)."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from kraftwire.audit.job import session as audit_session

    session = audit_session("local[2]", {"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2",
                                         "spark.driver.memory": "1g",
                                         "spark.driver.extraJavaOptions": "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"},
                            progress=False)
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
