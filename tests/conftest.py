"""Shared fixtures: a real cluster on loopback with ephemeral ports.

``bg_cluster`` hosts the cluster on its own event loop in a thread, so synchronous clients
(kafka-python, confluent-kafka, kcat) can be used from plain test functions; ``cluster`` is the
in-loop ``Cluster`` for async tests (aiokafka, direct protocol tests).
"""
import pytest

from server.cluster import BackgroundCluster, Cluster


@pytest.fixture
def bg_cluster():
    with BackgroundCluster(brokers=3) as bg:
        yield bg


@pytest.fixture
async def cluster():
    async with Cluster(brokers=3) as c:
        yield c
