"""The controller's LeaderAndIsr pushes when a connection to a broker is lost: what was queued behind the
lost request is dropped only where a FULL request queued later covers it, never that FULL request."""
from __future__ import annotations

import asyncio

from kafka.admin import KafkaAdminClient, NewTopic

from kraftwire import BackgroundCluster
from kraftwire.codec.constants import LEADER_AND_ISR_FULL, LEADER_AND_ISR_INCREMENTAL

from answers import watch_answers
from test_controller_quorum import wait_for

LEADER_AND_ISR = 4


def test_a_lost_request_keeps_the_full_request_queued_behind_it():
    with BackgroundCluster(brokers=3) as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, client_id="delivery-test")
        admin.create_topics([NewTopic("hosted", 4, 3)])
        admin.close()
        cluster = bg.cluster
        publisher = cluster.controller_node.leader_and_isr
        wait_for(lambda: bg.call(lambda: publisher.idle and 2 in publisher._clients
                                 and publisher._clients[2].connected), what="the publisher's connection to broker 2")
        partition_counts: list[int] = []  # of each LeaderAndIsr broker 2 answers from now on

        def count(response):
            partition_counts.append(sum(len(t.partition_errors) for t in response.topics))

        def queue_two_then_lose_the_connection():
            """An INCREMENTAL request, then a FULL one (as when the broker is unfenced meanwhile); the
            connection breaks once the first is written."""
            watch_answers(cluster.broker(2).listener, LEADER_AND_ISR, count)
            image = cluster.controller.committed
            hosted = [(topic, index, state, False) for topic, index, state in image.partitions()
                      if 2 in state.replicas]
            publisher._send(image, 2, hosted[:1], LEADER_AND_ISR_INCREMENTAL)
            publisher._send(image, 2, hosted, LEADER_AND_ISR_FULL)
            asyncio.get_running_loop().call_soon(publisher._clients[2]._writer.transport.abort)
            return len(hosted)

        hosted = bg.call(queue_two_then_lose_the_connection)
        assert hosted == 4
        wait_for(lambda: bg.call(lambda: publisher.idle), what="the publisher to send what it kept")
        wait_for(lambda: hosted in partition_counts, what=f"broker 2 to answer the FULL request: {partition_counts}")
