"""LeaderAndIsr (4): the controller tells a broker the leader, ISR and replicas of its partitions.

Who: only kraftwire's controller, on broker listeners (KRaft brokers never receive it; kraftwire pushes
it to its simulated brokers on every committed partition change, see ``kraftwire.server.controller.leader_and_isr_publisher``).
v0-1 carry flat partition states named by topic; v2+ group them by topic, v5+ with topic ids; v3+
carry AddingReplicas/RemovingReplicas. The broker's replica manager answers per partition:
STALE_CONTROLLER_EPOCH (11) for a leader epoch older than it has, and the whole request with 11 when the
controller epoch is older than one already seen. A partition that no longer lists the broker as a
replica is deleted from it (what StopReplica with delete did in Kafka). The broker handles it once its
metadata holds what the controller had committed when it sent it (KRaft brokers act on the log itself,
so their image always has the change they act on).
"""
from __future__ import annotations

API_KEY = 4


async def on_broker(broker, context, request):
    await broker.sync_metadata()  # the request follows commits the broker's metadata may not hold yet
    return broker.replica_manager.become_leader_or_follower(request, context.api_version)
