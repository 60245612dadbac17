"""AlterReplicaLogDirs (34): move replicas between the log directories of the broker receiving it.

Who: any client, on a broker listener; it must be sent to the broker that hosts the replicas (the Java
admin client sends each broker the replicas named with its id). Each partition is answered, grouped by
topic, with Kafka's checks in ReplicaManager.alterReplicaLogDirs's order: a topic name too long for a
future log's directory INVALID_TOPIC_EXCEPTION (17); a path that is not one of the broker's directories
LOG_DIR_NOT_FOUND (57); an offline target directory, or a replica in an offline directory,
KAFKA_STORAGE_ERROR (56); a partition this broker does not host REPLICA_NOT_AVAILABLE (9) if it exists
(the directory is remembered for when the replica arrives) and UNKNOWN_TOPIC_OR_PARTITION (3)
otherwise; a move while any directory of the broker is offline KAFKA_STORAGE_ERROR. Otherwise NONE: the
replica is already there, or a future replica starts copying into the target (server/broker/log_dirs.py). A
partition named twice takes the last path, as Kafka's map of partition to directory does.
"""
from __future__ import annotations

from kraftwire.codec.messages import AlterReplicaLogDirsRequest, AlterReplicaLogDirsResponse
from kraftwire.server.wire.transport import RequestContext

from .nodes import BrokerNodeApi

API_KEY = 34

TopicResult = AlterReplicaLogDirsResponse.AlterReplicaLogDirTopicResult
PartitionResult = AlterReplicaLogDirsResponse.AlterReplicaLogDirPartitionResult


def on_broker(broker: BrokerNodeApi, context: RequestContext,
              request: AlterReplicaLogDirsRequest) -> AlterReplicaLogDirsResponse:
    destinations: dict[tuple[str, int], str] = {}
    for directory in request.dirs:
        for topic in directory.topics:
            for partition in topic.partitions:
                destinations[(topic.name, partition)] = directory.path
    results: dict[str, list[PartitionResult]] = {}
    for (topic_name, partition), path in destinations.items():
        code = broker.alter_replica_log_dir(topic_name, partition, path)
        results.setdefault(topic_name, []).append(PartitionResult(partition_index=partition, error_code=code))
    return AlterReplicaLogDirsResponse(results=[TopicResult(topic_name=t, partitions=p) for t, p in results.items()])
