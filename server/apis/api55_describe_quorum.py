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
v1 adds the timestamps; v2 adds each replica's directory id (an observer's is the one its Fetch names;
a voter's is zero: this is a static quorum, kraft.version 0, so voters have no directory id) and
``Nodes`` with every voter's controller listener.
"""
from __future__ import annotations

from kraftwire.codec.messages import DescribeQuorumResponse
from kraftwire.codec import ErrorCode
from kraftwire.codec.constants import ZERO_UUID
from kraftwire.codec.log_layout import METADATA_PARTITION, METADATA_TOPIC

API_KEY = 55
CONTROLLER_LISTENER = "CONTROLLER"
UNKNOWN_TOPIC_OR_PARTITION_MESSAGE = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.message

Topic = DescribeQuorumResponse.TopicData
Partition = DescribeQuorumResponse.PartitionData
Replica = DescribeQuorumResponse.ReplicaState
Node = DescribeQuorumResponse.Node
Listener = DescribeQuorumResponse.Listener


def _names_metadata_partition(request) -> bool:
    return (len(request.topics) == 1 and request.topics[0].topic_name == METADATA_TOPIC
            and len(request.topics[0].partitions) == 1
            and request.topics[0].partitions[0].partition_index == METADATA_PARTITION)


# Kafka answers a successful DescribeQuorum (v2+) with empty error messages, not null ones.
NO_ERROR_MESSAGE = ""


def _replica(progress, version: int) -> Replica:
    return Replica(replica_id=progress.replica_id,
                   replica_directory_id=progress.directory_id if version >= 2 else ZERO_UUID,
                   log_end_offset=progress.end_offset, last_fetch_timestamp=progress.last_fetch_ms,
                   last_caught_up_timestamp=progress.last_caught_up_ms)


def decide(quorum, request, version: int, endpoints: dict[int, tuple[str, int]]) -> DescribeQuorumResponse:
    """``quorum``: the log's QuorumDescription; ``endpoints``: every voter's controller listener."""
    if not _names_metadata_partition(request):
        return DescribeQuorumResponse(error_message=NO_ERROR_MESSAGE, topics=[
            Topic(topic_name=t.topic_name, partitions=[
                Partition(partition_index=p.partition_index, error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                          error_message=UNKNOWN_TOPIC_OR_PARTITION_MESSAGE) for p in t.partitions])
            for t in request.topics])
    partition = Partition(partition_index=METADATA_PARTITION, error_message=NO_ERROR_MESSAGE, leader_id=quorum.leader_id,
                          leader_epoch=quorum.epoch, high_watermark=quorum.high_watermark,
                          current_voters=[_replica(v, version) for v in quorum.voters],
                          observers=[_replica(o, version) for o in quorum.observers])
    nodes = [Node(node_id=v.replica_id, listeners=[Listener(name=CONTROLLER_LISTENER, host=endpoints[v.replica_id][0],
                                                            port=endpoints[v.replica_id][1])])
             for v in quorum.voters if v.replica_id in endpoints and version >= 2]
    return DescribeQuorumResponse(error_message=NO_ERROR_MESSAGE, topics=[Topic(topic_name=METADATA_TOPIC, partitions=[partition])],
                                  nodes=nodes)


def on_controller(node, context, request):
    return decide(node.controller.log.describe(), request, context.api_version, node.quorum_endpoints())
