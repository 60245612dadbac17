"""DescribeLogDirs (35): a broker's own log directories, with the replicas in them.

Who: any client, on a broker listener (the Java admin client asks each broker it wants to know about);
each broker answers for itself only. ``Topics`` null means every replica; otherwise only the listed
partitions are reported, and a topic with none of them is left out. Per directory: its absolute path,
the current and future (AlterReplicaLogDirs, ``IsFutureKey``) replicas with their size and offset lag
(kraftwire's offsets count bytes), from v4 the simulated capacity and free bytes, and from v5
``IsCordoned``: the directory is in the broker's ``cordoned.log.dirs`` and the metadata.version is
4.3-IV0 or later (false below, as Kafka's ReplicaManager answers). An offline directory is
KAFKA_STORAGE_ERROR (56) with nothing else, as in Kafka. The top-level ErrorCode (v3+) is
0: kraftwire has no authorizer.
"""
from __future__ import annotations

from kraftwire.codec.messages import DescribeLogDirsRequest, DescribeLogDirsResponse
from kraftwire.server.wire.transport import RequestContext

from .nodes import BrokerNodeApi

API_KEY = 35


def on_broker(broker: BrokerNodeApi, context: RequestContext,
              request: DescribeLogDirsRequest) -> DescribeLogDirsResponse:
    wanted = None if request.topics is None else {(t.topic, p) for t in request.topics for p in t.partitions}
    return DescribeLogDirsResponse(results=broker.describe_log_dirs(wanted))
