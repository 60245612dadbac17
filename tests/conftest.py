"""Shared fixtures: a real cluster on loopback with ephemeral ports.

``bg_cluster`` hosts the cluster on its own event loop in a thread, so synchronous clients
(kafka-python, confluent-kafka, kcat) can be used from plain test functions; ``cluster`` is the
in-loop ``Cluster`` for async tests (aiokafka, direct protocol tests); ``operable_cluster`` is a
``bg_cluster`` serving metrics and the control plane over HTTP. ``spark`` is one local
SparkSession for the whole run (tests marked ``spark``): starting one costs ~10 s and ~400 MB.
``apache_kafka`` (tests/apache_kafka.py) is one real Apache Kafka cluster for the whole run, shared by
the tests that take Kafka as the oracle: its four JVMs start once.
"""
import os

import pytest

from apache_kafka import apache_kafka  # noqa: F401 (one real Apache Kafka cluster for the whole session)
from kraftwire.server.host.cluster import BackgroundCluster, Cluster


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
    """local[2] on loopback, no UI, few shuffle partitions; serial GC and C1-only JIT start faster."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("kraftwire-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.driver.memory", "1g")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.extraJavaOptions", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
