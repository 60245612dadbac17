"""DescribeQuorum's answer from the quorum's own description: the leader, its epoch and high watermark,
each voter's and observer's progress, and (v2) every voter's controller listeners.

Pure: the quorum is described by the Raft log (``kraftwire.server.raft.QuorumDescription``), which
reaches this module through the Protocols below, so it imports no Raft code. The API contract is in
server/apis/api55_describe_quorum.py.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from kraftwire.codec import ErrorCode
from kraftwire.codec.constants import ZERO_UUID
from kraftwire.codec.log_layout import METADATA_PARTITION, METADATA_TOPIC
from kraftwire.codec.messages import DescribeQuorumRequest, DescribeQuorumResponse

CONTROLLER_LISTENER = "CONTROLLER"
UNKNOWN_TOPIC_OR_PARTITION_MESSAGE = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.message
# Kafka answers a successful DescribeQuorum (v2+) with empty error messages, not null ones.
NO_ERROR_MESSAGE = ""
FIRST_VERSION_WITH_NODES = 2

Topic = DescribeQuorumResponse.TopicData
Partition = DescribeQuorumResponse.PartitionData
Replica = DescribeQuorumResponse.ReplicaState
Node = DescribeQuorumResponse.Node
Listener = DescribeQuorumResponse.Listener


class ReplicaProgress(Protocol):
    """A replica as the leader sees it (times in wall-clock ms, -1: never)."""

    @property
    def replica_id(self) -> int: ...

    @property
    def end_offset(self) -> int: ...

    @property
    def last_fetch_ms(self) -> int: ...

    @property
    def last_caught_up_ms(self) -> int: ...

    @property
    def directory_id(self) -> object: ...  # a uuid.UUID, or None when unknown


class QuorumDescription(Protocol):
    """The quorum as its leader sees it."""

    @property
    def leader_id(self) -> int: ...

    @property
    def epoch(self) -> int: ...

    @property
    def high_watermark(self) -> int: ...

    @property
    def voters(self) -> Sequence[ReplicaProgress]: ...

    @property
    def observers(self) -> Sequence[ReplicaProgress]: ...

    @property
    def listeners(self) -> Mapping[int, Sequence[tuple[str, str, int]]]: ...  # a voter's, when logged


def _names_metadata_partition(request: DescribeQuorumRequest) -> bool:
    return (len(request.topics) == 1 and request.topics[0].topic_name == METADATA_TOPIC
            and len(request.topics[0].partitions) == 1
            and request.topics[0].partitions[0].partition_index == METADATA_PARTITION)


def _replica(progress: ReplicaProgress, version: int) -> Replica:
    unknown = progress.directory_id is None or version < FIRST_VERSION_WITH_NODES
    directory = ZERO_UUID if unknown else progress.directory_id
    return Replica(replica_id=progress.replica_id, replica_directory_id=directory,
                   log_end_offset=progress.end_offset, last_fetch_timestamp=progress.last_fetch_ms,
                   last_caught_up_timestamp=progress.last_caught_up_ms)


def _listeners(voter_id: int, quorum: QuorumDescription, endpoints: Mapping[int, tuple[str, int]]) -> list[Listener]:
    logged = quorum.listeners.get(voter_id)
    if logged:
        return [Listener(name=name, host=host, port=port) for name, host, port in logged]
    host, port = endpoints[voter_id]
    return [Listener(name=CONTROLLER_LISTENER, host=host, port=port)]


def describe_quorum(quorum: QuorumDescription, request: DescribeQuorumRequest, version: int,
                    endpoints: Mapping[int, tuple[str, int]]) -> DescribeQuorumResponse:
    """``quorum``: the log's description; ``endpoints``: every voter's controller listener, {id: (host, port)}.
    A request that does not name exactly ``__cluster_metadata`` partition 0 gets UNKNOWN_TOPIC_OR_PARTITION
    on every partition it names."""
    if not _names_metadata_partition(request):
        return DescribeQuorumResponse(error_message=NO_ERROR_MESSAGE, topics=[
            Topic(topic_name=t.topic_name, partitions=[
                Partition(partition_index=p.partition_index, error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                          error_message=UNKNOWN_TOPIC_OR_PARTITION_MESSAGE) for p in t.partitions])
            for t in request.topics])
    partition = Partition(partition_index=METADATA_PARTITION, error_message=NO_ERROR_MESSAGE,
                          leader_id=quorum.leader_id, leader_epoch=quorum.epoch, high_watermark=quorum.high_watermark,
                          current_voters=[_replica(v, version) for v in quorum.voters],
                          observers=[_replica(o, version) for o in quorum.observers])
    nodes = [Node(node_id=v.replica_id, listeners=_listeners(v.replica_id, quorum, endpoints))
             for v in quorum.voters if version >= FIRST_VERSION_WITH_NODES
             and (v.replica_id in quorum.listeners or v.replica_id in endpoints)]
    return DescribeQuorumResponse(error_message=NO_ERROR_MESSAGE, nodes=nodes,
                                  topics=[Topic(topic_name=METADATA_TOPIC, partitions=[partition])])
