"""DescribeQuorum (55): the state of the metadata log's Raft quorum.

Who: admin clients (``describe_metadata_quorum``, ``kafka-metadata-quorum describe``), on any broker
listener (forwarded to the active controller, as KRaft brokers do) or on the controller listener.
Answered from the leader's state, with no write: leader id, epoch, high watermark, each voter with the
offset it last fetched from (its fsync'd log end) and the times of its last fetch and of the last one
that had reached the high watermark, and the observers (the brokers, which follow the log by Fetch:
server/broker/metadata_follower.py) with the offset of their last fetch, their log directory and
the same two times. The leader's own times are
"now", as in Kafka. A standby controller answers NOT_CONTROLLER (the brokers then ask the active one).

The request must name exactly ``__cluster_metadata`` partition 0 (one topic, one partition);
anything else gets UNKNOWN_TOPIC_OR_PARTITION (3) on every partition it names, with Kafka's message.
v1 adds the timestamps; v2 adds each replica's directory id (a voter's as the voter set records it:
zero in a static quorum, kraft.version 0; an observer's as its Fetch names it) and ``Nodes`` with every
voter's controller listeners (as the log's VotersRecord lists them, else where the host runs it).
"""
from __future__ import annotations

from kraftwire.codec.messages import DescribeQuorumRequest, DescribeQuorumResponse
from kraftwire.server.controller import quorum_control
from kraftwire.server.controller.quorum_control import CONTROLLER_LISTENER
from kraftwire.server.wire.transport import RequestContext

from .nodes import ControllerNodeApi

API_KEY = 55
__all__ = ["API_KEY", "CONTROLLER_LISTENER", "on_controller"]


def on_controller(node: ControllerNodeApi, context: RequestContext,
                  request: DescribeQuorumRequest) -> DescribeQuorumResponse:
    return quorum_control.describe_quorum(node.quorum.describe(), request, context.api_version, node.quorum_endpoints())
