"""Metadata answers that depend on the version, as Kafka gives them, over a plain socket: v10/v11
requests that use topic ids, and v0's filtering of unavailable replicas."""
from __future__ import annotations

import uuid

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from kraftwire.codec.messages import MetadataRequest
from tests.raw_client import RawConnection

INVALID_REQUEST, REPLICA_NOT_AVAILABLE = 42, 9
Wanted = MetadataRequest.MetadataRequestTopic


@pytest.mark.parametrize("version", [10, 11])
def test_v10_and_v11_with_a_topic_id_and_no_name_are_answered_per_topic(bg_cluster, version):
    """Kafka refuses topic ids before v12 with INVALID_REQUEST on every topic asked for (a null name
    answered as ""); the connection stays open."""
    topic_id = uuid.uuid4()
    request = MetadataRequest(topics=[Wanted(topic_id=topic_id, name=None), Wanted(topic_id=uuid.UUID(int=0),
                                                                               name="named")],
                              allow_auto_topic_creation=False, include_topic_authorized_operations=False)
    with RawConnection(bg_cluster.bootstrap.split(",")[0]) as connection:
        response = connection.send(request, version)
        assert [(t.error_code, t.name, t.topic_id, t.partitions) for t in response.topics] == [
            (INVALID_REQUEST, "", topic_id, ()), (INVALID_REQUEST, "named", uuid.UUID(int=0), ())]
        again = connection.send(MetadataRequest(topics=None, allow_auto_topic_creation=False,
                                                include_topic_authorized_operations=False), version)
        assert sorted(b.node_id for b in again.brokers) == [1, 2, 3]


def test_v0_leaves_out_unavailable_replicas_and_says_replica_not_available(bg_cluster):
    admin = KafkaAdminClient(bootstrap_servers=bg_cluster.bootstrap)
    try:
        admin.create_topics([NewTopic("spread", 1, 3)])
    finally:
        admin.close()
    bg_cluster.run(bg_cluster.cluster.fence_broker(3))
    with RawConnection(bg_cluster.bootstrap.split(",")[0]) as connection:
        (v0,) = connection.send(MetadataRequest(topics=[Wanted(name="spread")]), 0).topics
        (v1,) = connection.send(MetadataRequest(topics=[Wanted(name="spread")]), 1).topics
    (partition,) = v0.partitions
    assert partition.error_code == REPLICA_NOT_AVAILABLE
    assert sorted(partition.replica_nodes) == [1, 2] and 3 not in partition.isr_nodes
    (partition,) = v1.partitions
    assert partition.error_code == 0 and sorted(partition.replica_nodes) == [1, 2, 3]
