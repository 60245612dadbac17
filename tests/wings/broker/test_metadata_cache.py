"""A broker answers an all-topics Metadata request from an encoding cached per image version
(server/apis/api03_metadata.py): the answer must still follow every commit."""
from __future__ import annotations

import time

from kraftwire.codec.messages import MetadataRequest
from tests.raw_client import RawConnection
from tests.served import create_topics


def all_topic_names(connection: RawConnection) -> set[str]:
    return {topic.name for topic in connection.send(MetadataRequest(topics=None), 12).topics}


def test_the_all_topics_answer_of_one_broker_follows_each_commit(bg_cluster):
    with RawConnection(bg_cluster.bootstrap.split(",")[0]) as connection:
        assert all_topic_names(connection) == set()  # now cached
        create_topics(bg_cluster.bootstrap, ["fresh"])
        deadline = time.monotonic() + 30
        while (names := all_topic_names(connection)) != {"fresh"}:
            assert time.monotonic() < deadline, f"the broker still answers {names}"
            time.sleep(0.05)


def test_the_all_topics_answer_equals_the_answer_naming_every_topic_in_every_version(bg_cluster):
    """The all-topics answer is assembled from per-topic encodings kept across commits; it must decode,
    in every version, to what a request naming each topic gets (built afresh), also after a commit
    changed one topic and left the others' encodings to be reused."""
    from kafka.admin import KafkaAdminClient, NewPartitions

    create_topics(bg_cluster.bootstrap, ["alpha", "beta", "gamma"])

    def compare(connection: RawConnection, versions) -> None:
        for version in versions:
            every = connection.send(MetadataRequest(topics=None), version)
            names = sorted(topic.name for topic in every.topics)
            named = connection.send(MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=name)
                                                            for name in names]), version)
            assert (every.brokers, every.cluster_id, every.topics) == (named.brokers, named.cluster_id,
                                                                       named.topics), version

    with RawConnection(bg_cluster.bootstrap.split(",")[0]) as connection:
        compare(connection, range(1, 14))
        compare(connection, [12])  # v12's topic entries are now kept
        admin = KafkaAdminClient(bootstrap_servers=bg_cluster.bootstrap, request_timeout_ms=30000)
        try:
            admin.create_partitions({"beta": NewPartitions(total_count=3)})
        finally:
            admin.close()
        beta = [MetadataRequest.MetadataRequestTopic(name="beta")]
        deadline = time.monotonic() + 30
        while len(connection.send(MetadataRequest(topics=beta), 12).topics[0].partitions) != 3:
            assert time.monotonic() < deadline, "beta's new partitions never listed"
            time.sleep(0.05)
        compare(connection, [12])  # alpha's and gamma's kept entries, beta's encoded again
        compare(connection, range(1, 14))
