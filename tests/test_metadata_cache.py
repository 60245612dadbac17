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
