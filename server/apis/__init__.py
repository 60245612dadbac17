"""The API handlers: one module per Kafka API, named ``api<key>_<name>.py``
(``api45_alter_partition_reassignments``), and the two tables below saying which are served where.

Each module opens with its contract (what it does, who may call it, what null means, version notes)
and defines ``API_KEY`` and its handlers: ``on_broker(broker, context, request)`` answers on a simulated
broker's listener, ``on_controller(node, context, request)`` on the controller listener. A handler
decodes nothing itself (the listener did), authorizes (``authorization``), calls one function of a
controller manager (server/controller/: ``await node.write(lambda image: manager.decision(image, request,
...))`` for a change, the function on ``node.image`` for a read; a broker's AlterConfigs and
IncrementalAlterConfigs: the manager's preprocess, the forward of the rest, the manager's merge), and
returns its response; it defines no decision of its own. Every API is served over the schema's whole
version range (``kraftwire.server.wire.transport.Listener``).

Handlers are typed against the two Protocols of ``nodes`` (``ControllerNodeApi``, ``BrokerNodeApi``) and
reach nothing deeper. They may import the codec, the metadata wing, the controller's managers and, of
the wire, only the types they return or take (``Encoded``, ``RequestContext``, ``Undecoded``,
``Unanswered``); nothing here imports the broker wing or the host, which pass their node objects in.
The host hands ``BROKER_APIS`` to every ``BrokerNode`` and ``CONTROLLER_APIS`` to the ``ControllerNode``.
"""
from __future__ import annotations

import struct
from typing import Any, TypeVar

from kraftwire import codec
from kraftwire.codec import ErrorCode
from kraftwire.codec.message import Message
from kraftwire.server.metadata.acls import Operation
from kraftwire.server.wire.transport import Encoded, RequestContext

from . import (api00_produce, api01_fetch, api02_list_offsets, api03_metadata, api08_offset_commit,
               api09_offset_fetch, api10_find_coordinator, api11_join_group, api12_heartbeat, api13_leave_group,
               api14_sync_group, api15_describe_groups, api16_list_groups, api17_sasl_handshake,
               api18_api_versions, api19_create_topics, api20_delete_topics, api21_delete_records,
               api22_init_producer_id, api23_offset_for_leader_epoch, api29_describe_acls, api30_create_acls,
               api31_delete_acls, api32_describe_configs, api33_alter_configs, api34_alter_replica_log_dirs,
               api35_describe_log_dirs, api36_sasl_authenticate, api37_create_partitions, api42_delete_groups,
               api43_elect_leaders,
               api44_incremental_alter_configs, api45_alter_partition_reassignments,
               api46_list_partition_reassignments, api47_offset_delete, api50_describe_user_scram_credentials,
               api51_alter_user_scram_credentials, api52_vote, api53_begin_quorum_epoch,
               api54_end_quorum_epoch, api55_describe_quorum, api56_alter_partition, api57_update_features,
               api59_fetch_snapshot, api60_describe_cluster, api62_broker_registration, api63_broker_heartbeat,
               api67_allocate_producer_ids, api68_consumer_group_heartbeat, api69_consumer_group_describe,
               api73_assign_replicas_to_dirs, api74_list_config_resources, api75_describe_topic_partitions,
               api80_add_raft_voter, api81_remove_raft_voter, api82_update_raft_voter)
from .authorization import (ALTER_CONFIGS, CREATE_PARTITIONS, CREATE_TOPICS, DESCRIBE_CONFIGS,
                            INCREMENTAL_ALTER_CONFIGS, alter_replica_log_dirs, delete_topics, on_cluster, per_resource)
from .nodes import BrokerHandler, BrokerNodeApi, ControllerHandler, ControllerNodeApi, Handler, NodeApi

__all__ = ["BROKER_APIS", "CONTROLLER_APIS", "BrokerHandler", "BrokerNodeApi", "ControllerHandler", "ControllerNodeApi",
           "Handler", "NodeApi", "forward_to_controller", "relay_answered_at_once", "relay_to_controller", "relaying"]


async def forward_to_controller(broker: BrokerNodeApi, context: RequestContext, request: Any) -> Any:
    """Relay a controller-bound request at the client's version, as KRaft brokers forward them, and hand
    back the controller's answer (once the broker's metadata holds it: ``BrokerNode.forward``)."""
    return await broker.forward(request, context.api_version)


async def relay_to_controller(broker: BrokerNodeApi, context: RequestContext, request: Any, *,
                              synced: bool = True) -> Encoded:
    """Forward a request the broker has parsed (and authorized) but need not change, as the bytes it
    came in, and hand back the controller's answer undecoded: a 10,000-partition reassignment's request
    and its listing are neither encoded nor decoded again on the broker. The answer waits until the
    broker's metadata holds what the controller had committed (``BrokerNode.relay``) unless ``synced``
    is False."""
    key, version = context.api_key, context.api_version
    body = await broker.relay(key, version, context.body, getattr(request, "timeout_ms", None), synced=synced)
    response_cls = codec.api(key)[1]
    assert issubclass(response_cls, Message)
    at = response_cls.fixed_offset("error_code", version)
    return Encoded(body, _INT16.unpack_from(body, at)[0] if at is not None else ErrorCode.NONE)


async def relay_answered_at_once(broker: BrokerNodeApi, context: RequestContext, request: Any) -> Encoded:
    """``relay_to_controller`` for a request that is read back from the controller, not from the
    broker's metadata (reassignments are listed by ListPartitionReassignments, the quorum described by
    DescribeQuorum, both forwarded): the controller's answer, once it has committed, is handed back at
    once, as Kafka's broker does, without waiting for the broker's metadata to hold the commit (for a
    10,000-partition reassignment that wait was the brokers' applying of 10,000 records)."""
    return await relay_to_controller(broker, context, request, synced=False)


HandlerT = TypeVar("HandlerT")


def relaying(handler: HandlerT) -> HandlerT:
    """Mark a broker handler that relays the request's bytes and reads nothing of the request but
    top-level numbers (``timeout_ms``): the broker's listener then checks such a request's structure
    without building it (server/wire/transport.py, ``Undecoded``). Kafka's broker parses a request it
    forwards; so does this check, which refuses what the decoder refuses (the connection is closed)."""
    handler.relays_request = True  # type: ignore[attr-defined]  # read by BrokerNode with getattr
    return handler


_INT16 = struct.Struct(">h")
ALTER, DESCRIBE, CLUSTER_ACTION = Operation.ALTER, Operation.DESCRIBE, Operation.CLUSTER_ACTION

# Each handler is wrapped in the authorization Kafka applies to its API (authorization.py); with no
# authorizer configured the wrappers let everything through.
BROKER_APIS: dict[int, BrokerHandler] = {
    api00_produce.API_KEY: api00_produce.on_broker,
    api01_fetch.API_KEY: api01_fetch.on_broker,
    api02_list_offsets.API_KEY: api02_list_offsets.on_broker,
    api03_metadata.API_KEY: api03_metadata.on_broker,
    api08_offset_commit.API_KEY: api08_offset_commit.on_broker,
    api09_offset_fetch.API_KEY: api09_offset_fetch.on_broker,
    api10_find_coordinator.API_KEY: api10_find_coordinator.on_broker,
    api11_join_group.API_KEY: api11_join_group.on_broker,
    api12_heartbeat.API_KEY: api12_heartbeat.on_broker,
    api13_leave_group.API_KEY: api13_leave_group.on_broker,
    api14_sync_group.API_KEY: api14_sync_group.on_broker,
    api15_describe_groups.API_KEY: api15_describe_groups.on_broker,
    api16_list_groups.API_KEY: api16_list_groups.on_broker,
    api17_sasl_handshake.API_KEY: api17_sasl_handshake.on_any,
    api18_api_versions.API_KEY: api18_api_versions.on_broker,
    api19_create_topics.API_KEY: per_resource(forward_to_controller, CREATE_TOPICS),
    api20_delete_topics.API_KEY: delete_topics(forward_to_controller),
    api21_delete_records.API_KEY: api21_delete_records.on_broker,
    api22_init_producer_id.API_KEY: api22_init_producer_id.on_broker,
    api23_offset_for_leader_epoch.API_KEY: api23_offset_for_leader_epoch.on_broker,
    api29_describe_acls.API_KEY: api29_describe_acls.on_broker,
    api30_create_acls.API_KEY: api30_create_acls.on_broker,
    api31_delete_acls.API_KEY: api31_delete_acls.on_broker,
    api32_describe_configs.API_KEY: per_resource(api32_describe_configs.on_broker, DESCRIBE_CONFIGS),
    api33_alter_configs.API_KEY: per_resource(api33_alter_configs.on_broker, ALTER_CONFIGS),
    api34_alter_replica_log_dirs.API_KEY: alter_replica_log_dirs(api34_alter_replica_log_dirs.on_broker),
    api35_describe_log_dirs.API_KEY: on_cluster(DESCRIBE, api35_describe_log_dirs.on_broker),
    api36_sasl_authenticate.API_KEY: api36_sasl_authenticate.on_any,
    api37_create_partitions.API_KEY: per_resource(forward_to_controller, CREATE_PARTITIONS),
    api42_delete_groups.API_KEY: api42_delete_groups.on_broker,
    api43_elect_leaders.API_KEY: on_cluster(ALTER, relay_to_controller),
    api44_incremental_alter_configs.API_KEY: per_resource(api44_incremental_alter_configs.on_broker,
                                                          INCREMENTAL_ALTER_CONFIGS),
    api45_alter_partition_reassignments.API_KEY: relaying(on_cluster(ALTER, relay_answered_at_once)),
    api46_list_partition_reassignments.API_KEY: relaying(on_cluster(DESCRIBE, relay_answered_at_once)),
    api47_offset_delete.API_KEY: api47_offset_delete.on_broker,
    api50_describe_user_scram_credentials.API_KEY: api50_describe_user_scram_credentials.on_broker,
    api51_alter_user_scram_credentials.API_KEY: api51_alter_user_scram_credentials.on_broker,
    api55_describe_quorum.API_KEY: relaying(on_cluster(DESCRIBE, relay_answered_at_once)),
    api57_update_features.API_KEY: on_cluster(ALTER, relay_to_controller),
    api60_describe_cluster.API_KEY: api60_describe_cluster.on_broker,
    api68_consumer_group_heartbeat.API_KEY: api68_consumer_group_heartbeat.on_broker,
    api69_consumer_group_describe.API_KEY: api69_consumer_group_describe.on_broker,
    api74_list_config_resources.API_KEY: on_cluster(Operation.DESCRIBE_CONFIGS, api74_list_config_resources.on_broker),
    api75_describe_topic_partitions.API_KEY: api75_describe_topic_partitions.on_broker,
    api80_add_raft_voter.API_KEY: on_cluster(ALTER, relay_to_controller),
    api81_remove_raft_voter.API_KEY: on_cluster(ALTER, relay_to_controller),
}

CONTROLLER_APIS: dict[int, ControllerHandler] = {
    api01_fetch.API_KEY: on_cluster(CLUSTER_ACTION, api01_fetch.on_controller),
    api17_sasl_handshake.API_KEY: api17_sasl_handshake.on_any,
    api18_api_versions.API_KEY: api18_api_versions.on_controller,
    api19_create_topics.API_KEY: per_resource(api19_create_topics.on_controller, CREATE_TOPICS),
    api20_delete_topics.API_KEY: delete_topics(api20_delete_topics.on_controller),
    api29_describe_acls.API_KEY: api29_describe_acls.on_controller,
    api30_create_acls.API_KEY: api30_create_acls.on_controller,
    api31_delete_acls.API_KEY: api31_delete_acls.on_controller,
    api32_describe_configs.API_KEY: per_resource(api32_describe_configs.on_controller, DESCRIBE_CONFIGS),
    api33_alter_configs.API_KEY: per_resource(api33_alter_configs.on_controller, ALTER_CONFIGS),
    api36_sasl_authenticate.API_KEY: api36_sasl_authenticate.on_any,
    api37_create_partitions.API_KEY: per_resource(api37_create_partitions.on_controller, CREATE_PARTITIONS),
    api43_elect_leaders.API_KEY: on_cluster(ALTER, api43_elect_leaders.on_controller),
    api44_incremental_alter_configs.API_KEY: per_resource(api44_incremental_alter_configs.on_controller,
                                                          INCREMENTAL_ALTER_CONFIGS),
    api45_alter_partition_reassignments.API_KEY: on_cluster(ALTER, api45_alter_partition_reassignments.on_controller),
    api46_list_partition_reassignments.API_KEY: on_cluster(DESCRIBE, api46_list_partition_reassignments.on_controller),
    api50_describe_user_scram_credentials.API_KEY: api50_describe_user_scram_credentials.on_controller,
    api51_alter_user_scram_credentials.API_KEY: api51_alter_user_scram_credentials.on_controller,
    api52_vote.API_KEY: on_cluster(CLUSTER_ACTION, api52_vote.on_controller),
    api53_begin_quorum_epoch.API_KEY: on_cluster(CLUSTER_ACTION, api53_begin_quorum_epoch.on_controller),
    api54_end_quorum_epoch.API_KEY: on_cluster(CLUSTER_ACTION, api54_end_quorum_epoch.on_controller),
    api55_describe_quorum.API_KEY: on_cluster(DESCRIBE, api55_describe_quorum.on_controller),
    api56_alter_partition.API_KEY: on_cluster(CLUSTER_ACTION, api56_alter_partition.on_controller),
    api57_update_features.API_KEY: on_cluster(ALTER, api57_update_features.on_controller),
    api59_fetch_snapshot.API_KEY: on_cluster(CLUSTER_ACTION, api59_fetch_snapshot.on_controller),
    api60_describe_cluster.API_KEY: on_cluster(ALTER, api60_describe_cluster.on_controller),  # as Kafka's controller
    api62_broker_registration.API_KEY: on_cluster(CLUSTER_ACTION, api62_broker_registration.on_controller),
    api63_broker_heartbeat.API_KEY: on_cluster(CLUSTER_ACTION, api63_broker_heartbeat.on_controller),
    api67_allocate_producer_ids.API_KEY: on_cluster(CLUSTER_ACTION, api67_allocate_producer_ids.on_controller),
    api73_assign_replicas_to_dirs.API_KEY: on_cluster(CLUSTER_ACTION, api73_assign_replicas_to_dirs.on_controller),
    api80_add_raft_voter.API_KEY: on_cluster(ALTER, api80_add_raft_voter.on_controller),
    api81_remove_raft_voter.API_KEY: on_cluster(ALTER, api81_remove_raft_voter.on_controller),
    api82_update_raft_voter.API_KEY: on_cluster(CLUSTER_ACTION, api82_update_raft_voter.on_controller),
}
