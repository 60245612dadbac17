"""Every request, response and header schema in ``schemas/messages`` as a message class.

``codec.messages.MetadataRequest`` and so on; see ``codec.message.Message`` for the methods. Each
class lists its fields (across all versions) with their Python types; nested structs are classes
inside it. The fields' accessors, defaults and codecs come from the schema at import.

Generated from ``schemas/`` by ``python -m kraftwire.codec.generate``; do not edit.
"""
from __future__ import annotations

import uuid

from .message import Message, bind_message_classes
from .model import Struct
from .schema import load_package


class AddRaftVoterRequest(Message):
    """AddRaftVoterRequest: the request of API key 80; versions 0-1, flexible 0+."""

    __slots__ = ()
    cluster_id: str | None  # Cluster id of the caller; null skips the check.
    timeout_ms: int  # How long the caller waits for the change.
    voter_id: int  # Node id of the replica to add.
    voter_directory_id: uuid.UUID  # Metadata log directory id of the replica to add.
    listeners: tuple[AddRaftVoterRequest.Listener, ...]  # Where the new voter can be reached.
    # Answer once the new voter set is committed (true) or once it is appended (false).
    ack_when_committed: bool  # versions 1+

    class Listener(Struct):
        """AddRaftVoterRequest.Listener: versions 0+."""

        __slots__ = ()
        name: str  # Listener name.
        host: str  # Host of this listener.
        port: int  # Port of this listener.


class AddRaftVoterResponse(Message):
    """AddRaftVoterResponse: the response of API key 80; versions 0-1, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int  # Quota throttle applied, in ms; 0 if none.
    error_code: int  # 0 on success.
    error_message: str | None  # Why the change failed; null on success.


class AllocateProducerIdsRequest(Message):
    """AllocateProducerIdsRequest: the request of API key 67; versions 0, flexible 0+."""

    __slots__ = ()
    broker_id: int  # Broker asking.
    broker_epoch: int  # Its broker epoch, checked against its registration.


class AllocateProducerIdsResponse(Message):
    """AllocateProducerIdsResponse: the response of API key 67; versions 0, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int  # Milliseconds the request was held back by a quota; 0 when none applied.
    error_code: int  # Why no block was given; 0 when one was.
    producer_id_start: int  # First id of the block.
    producer_id_len: int  # How many ids the block holds.


class AlterConfigsRequest(Message):
    """AlterConfigsRequest: the request of API key 33; versions 0-2, flexible 2+."""

    __slots__ = ()
    resources: tuple[AlterConfigsRequest.AlterConfigsResource, ...]  # Resources whose config set is replaced.
    validate_only: bool  # When set, check the request and report errors but apply nothing.

    class AlterableConfig(Struct):
        """AlterConfigsRequest.AlterableConfig: versions 0+."""

        __slots__ = ()
        name: str  # Config key.
        value: str | None  # Value to store for the key; may be null.

    class AlterConfigsResource(Struct):
        """AlterConfigsRequest.AlterConfigsResource: versions 0+."""

        __slots__ = ()
        resource_type: int  # Kind of resource (2 = topic, 4 = broker, 8 = broker logger, ...).
        resource_name: str  # Identifier of the resource; an empty broker name targets the cluster-wide default.
        # Complete set of entries the resource should hold afterwards.
        configs: tuple[AlterConfigsRequest.AlterableConfig, ...]


class AlterConfigsResponse(Message):
    """AlterConfigsResponse: the response of API key 33; versions 0-2, flexible 2+."""

    __slots__ = ()
    throttle_time_ms: int  # Milliseconds the response was held back by quota enforcement; 0 when no quota was hit.
    responses: tuple[AlterConfigsResponse.AlterConfigsResourceResponse, ...]  # One outcome per resource in the request.

    class AlterConfigsResourceResponse(Struct):
        """AlterConfigsResponse.AlterConfigsResourceResponse: versions 0+."""

        __slots__ = ()
        error_code: int  # Outcome for this resource; 0 on success.
        error_message: str | None  # Explanation of the failure; null on success.
        resource_type: int  # Kind of resource this outcome is about.
        resource_name: str  # Identifier of the resource this outcome is about.


class AlterPartitionReassignmentsRequest(Message):
    """AlterPartitionReassignmentsRequest: the request of API key 45; versions 0-1, flexible 0+."""

    __slots__ = ()
    timeout_ms: int  # Upper bound in ms the caller will wait for the change to be committed.
    # If false, any target list whose length differs from the partition's current replication factor is refused; absent
    # (v0) means allowed.
    allow_replication_factor_change: bool  # versions 1+
    topics: tuple[AlterPartitionReassignmentsRequest.ReassignableTopic, ...]  # Topics with partitions to move.

    class ReassignablePartition(Struct):
        """AlterPartitionReassignmentsRequest.ReassignablePartition: versions 0+."""

        __slots__ = ()
        partition_index: int  # Which partition of the topic to move.
        # Target replica list, preferred leader first; null aborts whatever reassignment is running for the partition.
        replicas: tuple[int, ...] | None

    class ReassignableTopic(Struct):
        """AlterPartitionReassignmentsRequest.ReassignableTopic: versions 0+."""

        __slots__ = ()
        name: str  # Topic whose partitions are listed.
        # Partitions of this topic to move.
        partitions: tuple[AlterPartitionReassignmentsRequest.ReassignablePartition, ...]


class AlterPartitionReassignmentsResponse(Message):
    """AlterPartitionReassignmentsResponse: the response of API key 45; versions 0-1, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int  # Milliseconds the response was held back by quota enforcement; 0 when no quota was hit.
    # Echo of the request's replication-factor guard, so the client can see it was honoured.
    allow_replication_factor_change: bool  # versions 1+
    error_code: int  # Request-wide error; 0 when the request as a whole was accepted.
    error_message: str | None  # Text explaining the request-wide error; null if there is none.
    responses: tuple[AlterPartitionReassignmentsResponse.ReassignableTopicResponse, ...]  # Per-topic outcomes.

    class ReassignablePartitionResponse(Struct):
        """AlterPartitionReassignmentsResponse.ReassignablePartitionResponse: versions 0+."""

        __slots__ = ()
        partition_index: int  # Which partition of the topic this outcome is about.
        error_code: int  # Outcome for this partition; 0 on success.
        error_message: str | None  # Explanation of the partition's failure; null on success.

    class ReassignableTopicResponse(Struct):
        """AlterPartitionReassignmentsResponse.ReassignableTopicResponse: versions 0+."""

        __slots__ = ()
        name: str  # Topic these outcomes belong to.
        # Per-partition outcomes within this topic.
        partitions: tuple[AlterPartitionReassignmentsResponse.ReassignablePartitionResponse, ...]


class AlterPartitionRequest(Message):
    """AlterPartitionRequest: the request of API key 56; versions 0-3, flexible 0+."""

    __slots__ = ()
    broker_id: int  # Id of the leader broker sending the proposal.
    broker_epoch: int  # Broker epoch of the sender, checked against its registration.
    topics: tuple[AlterPartitionRequest.TopicData, ...]  # Topics whose partitions should change.

    class BrokerState(Struct):
        """AlterPartitionRequest.BrokerState: versions 3+."""

        __slots__ = ()
        broker_id: int  # Replica's broker id.
        broker_epoch: int  # Replica's broker epoch as seen by the leader; -1 skips the epoch check.

    class PartitionData(Struct):
        """AlterPartitionRequest.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int  # Partition number within the topic.
        leader_epoch: int  # Current leader epoch as known to the sender.
        new_isr: tuple[int, ...]  # versions 0-2; Proposed in-sync replica ids (replaced by NewIsrWithEpochs in v3).
        # Proposed in-sync replicas, each with its broker epoch (KIP-903).
        new_isr_with_epochs: tuple[AlterPartitionRequest.BrokerState, ...]  # versions 3+
        leader_recovery_state: int  # versions 1+; 0 = recovered; 1 = still recovering after an unclean election.
        partition_epoch: int  # Partition epoch the proposal is based on; a mismatch makes the controller reject it.

    class TopicData(Struct):
        """AlterPartitionRequest.TopicData: versions 0+."""

        __slots__ = ()
        topic_name: str  # versions 0-1; Topic named by string (v0-1 only).
        topic_id: uuid.UUID  # versions 2+; Topic named by UUID (v2+).
        partitions: tuple[AlterPartitionRequest.PartitionData, ...]  # Per-partition proposals for this topic.


class AlterPartitionResponse(Message):
    """AlterPartitionResponse: the response of API key 56; versions 0-3, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int  # Milliseconds the reply was held back by quota enforcement; 0 if none.
    error_code: int  # Request-wide error; 0 when the request as a whole was processed.
    topics: tuple[AlterPartitionResponse.TopicData, ...]  # Results grouped by topic.

    class PartitionData(Struct):
        """AlterPartitionResponse.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int  # Partition number within the topic.
        error_code: int  # Outcome for this partition; 0 on success.
        leader_id: int  # Broker id of the partition's leader after the change.
        leader_epoch: int  # Leader epoch after the change.
        isr: tuple[int, ...]  # Replica ids forming the ISR once the change applied.
        leader_recovery_state: int  # versions 1+; 0 = recovered; 1 = still recovering after an unclean election.
        partition_epoch: int  # Partition epoch after the change (the ZooKeeper zkVersion under a ZK controller).

    class TopicData(Struct):
        """AlterPartitionResponse.TopicData: versions 0+."""

        __slots__ = ()
        topic_name: str  # versions 0-1; Topic named by string (v0-1 only).
        topic_id: uuid.UUID  # versions 2+; Topic named by UUID (v2+).
        partitions: tuple[AlterPartitionResponse.PartitionData, ...]  # Results for the topic's individual partitions.


class AlterReplicaLogDirsRequest(Message):
    """AlterReplicaLogDirsRequest: the request of API key 34; versions 0-2, flexible 2+."""

    __slots__ = ()
    # Destination directories, each with the replicas that should end up there.
    dirs: tuple[AlterReplicaLogDirsRequest.AlterReplicaLogDir, ...]

    class AlterReplicaLogDirTopic(Struct):
        """AlterReplicaLogDirsRequest.AlterReplicaLogDirTopic: versions 0+."""

        __slots__ = ()
        name: str  # Topic whose replicas move.
        partitions: tuple[int, ...]  # Indexes of this topic's partitions to move into the directory.

    class AlterReplicaLogDir(Struct):
        """AlterReplicaLogDirsRequest.AlterReplicaLogDir: versions 0+."""

        __slots__ = ()
        path: str  # Absolute path of the destination directory.
        # Topics whose replicas should be moved here.
        topics: tuple[AlterReplicaLogDirsRequest.AlterReplicaLogDirTopic, ...]


class AlterReplicaLogDirsResponse(Message):
    """AlterReplicaLogDirsResponse: the response of API key 34; versions 0-2, flexible 2+."""

    __slots__ = ()
    throttle_time_ms: int  # Milliseconds the response was held back by quota enforcement; 0 when no quota was hit.
    results: tuple[AlterReplicaLogDirsResponse.AlterReplicaLogDirTopicResult, ...]  # Per-topic outcomes.

    class AlterReplicaLogDirPartitionResult(Struct):
        """AlterReplicaLogDirsResponse.AlterReplicaLogDirPartitionResult: versions 0+."""

        __slots__ = ()
        partition_index: int  # Which partition of the topic this outcome is about.
        error_code: int  # Outcome for this partition; 0 on success.

    class AlterReplicaLogDirTopicResult(Struct):
        """AlterReplicaLogDirsResponse.AlterReplicaLogDirTopicResult: versions 0+."""

        __slots__ = ()
        topic_name: str  # Topic these outcomes belong to.
        # Per-partition outcomes within this topic.
        partitions: tuple[AlterReplicaLogDirsResponse.AlterReplicaLogDirPartitionResult, ...]


class AlterUserScramCredentialsRequest(Message):
    """AlterUserScramCredentialsRequest: the request of API key 51; versions 0, flexible 0+."""

    __slots__ = ()
    deletions: tuple[AlterUserScramCredentialsRequest.ScramCredentialDeletion, ...]  # Credentials to remove.
    upsertions: tuple[AlterUserScramCredentialsRequest.ScramCredentialUpsertion, ...]  # Credentials to add or replace.

    class ScramCredentialDeletion(Struct):
        """AlterUserScramCredentialsRequest.ScramCredentialDeletion: versions 0+."""

        __slots__ = ()
        name: str  # The user name.
        mechanism: int  # SCRAM-SHA-256 (1) or SCRAM-SHA-512 (2).

    class ScramCredentialUpsertion(Struct):
        """AlterUserScramCredentialsRequest.ScramCredentialUpsertion: versions 0+."""

        __slots__ = ()
        name: str  # The user name.
        mechanism: int  # SCRAM-SHA-256 (1) or SCRAM-SHA-512 (2).
        iterations: int  # The iteration count the password was salted with.
        salt: bytes  # The salt the client chose.
        salted_password: bytes  # The password salted with Salt over Iterations (Hi() of RFC 5802).


class AlterUserScramCredentialsResponse(Message):
    """AlterUserScramCredentialsResponse: the response of API key 51; versions 0, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int  # Throttle time in milliseconds; always 0 here.
    results: tuple[AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult, ...]  # One per user.

    class AlterUserScramCredentialsResult(Struct):
        """AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult: versions 0+."""

        __slots__ = ()
        user: str  # The user name.
        error_code: int  # 0, or why none of this user's changes were made.
        error_message: str | None  # Why, or null.


class ApiVersionsRequest(Message):
    """ApiVersionsRequest: the request of API key 18; versions 0-5, flexible 3+."""

    __slots__ = ()
    client_software_name: str  # versions 3+; Name of the client library, e.g. apache-kafka-java; used for metrics.
    client_software_version: str  # versions 3+; Client library release, e.g. 3.9.0.
    # Cluster the client believes it is contacting, or null if unknown; sent together with NodeId.
    cluster_id: str | None  # versions 5+
    # Node the client believes it is contacting, or -1 if unknown; sent together with ClusterId.
    node_id: int  # versions 5+


class ApiVersionsResponse(Message):
    """ApiVersionsResponse: the response of API key 18; versions 0-5, flexible 3+."""

    __slots__ = ()
    # 0, or an error such as UNSUPPORTED_VERSION (35) when the request version is newer than the server knows.
    error_code: int
    api_keys: tuple[ApiVersionsResponse.ApiVersion, ...]  # Every API the server accepts, each with its version range.
    # Milliseconds the response was held back by quota enforcement; 0 when no quota was hit.
    throttle_time_ms: int  # versions 1+
    # Feature flags this node can run, with level ranges; responses below v4 leave out features whose lowest level is 0.
    supported_features: tuple[ApiVersionsResponse.SupportedFeatureKey, ...]  # versions 3+, tag 0
    # Version stamp of the finalized levels below; only grows, and -1 means not known.
    finalized_features_epoch: int  # versions 3+, tag 1
    # Feature levels agreed on by the whole cluster; meaningful only when FinalizedFeaturesEpoch is not negative.
    finalized_features: tuple[ApiVersionsResponse.FinalizedFeatureKey, ...]  # versions 3+, tag 2
    # Set by a KRaft controller whose ZooKeeper-migration settings are in place; false otherwise.
    zk_migration_ready: bool  # versions 3+, tag 3

    class ApiVersion(Struct):
        """ApiVersionsResponse.ApiVersion: versions 0+."""

        __slots__ = ()
        api_key: int  # Numeric key identifying the API.
        min_version: int  # Lowest version accepted for this API.
        max_version: int  # Highest version accepted for this API.

    class SupportedFeatureKey(Struct):
        """ApiVersionsResponse.SupportedFeatureKey: versions 3+."""

        __slots__ = ()
        name: str  # Feature name, e.g. metadata.version.
        min_version: int  # Lowest level of the feature this node can run.
        max_version: int  # Highest level of the feature this node can run.

    class FinalizedFeatureKey(Struct):
        """ApiVersionsResponse.FinalizedFeatureKey: versions 3+."""

        __slots__ = ()
        name: str  # Feature name.
        max_version_level: int  # Upper level in force for the feature across the cluster.
        min_version_level: int  # Lower level in force for the feature across the cluster.


class AssignReplicasToDirsRequest(Message):
    """AssignReplicasToDirsRequest: the request of API key 73; versions 0, flexible 0+."""

    __slots__ = ()
    broker_id: int  # Id of the broker reporting the placements.
    broker_epoch: int  # Current registration epoch of that broker.
    # One entry per target directory, listing the replicas placed in it.
    directories: tuple[AssignReplicasToDirsRequest.DirectoryData, ...]

    class PartitionData(Struct):
        """AssignReplicasToDirsRequest.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int  # Partition number within the topic.

    class TopicData(Struct):
        """AssignReplicasToDirsRequest.TopicData: versions 0+."""

        __slots__ = ()
        topic_id: uuid.UUID  # Topic, by UUID.
        # Which partitions of the topic now live in this directory.
        partitions: tuple[AssignReplicasToDirsRequest.PartitionData, ...]

    class DirectoryData(Struct):
        """AssignReplicasToDirsRequest.DirectoryData: versions 0+."""

        __slots__ = ()
        id: uuid.UUID  # Which log directory, by its UUID.
        # Topics having at least one replica in this directory.
        topics: tuple[AssignReplicasToDirsRequest.TopicData, ...]


class AssignReplicasToDirsResponse(Message):
    """AssignReplicasToDirsResponse: the response of API key 73; versions 0, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int  # Milliseconds the reply was held back by quota enforcement; 0 if none.
    error_code: int  # Set only when the whole request failed; 0 otherwise.
    directories: tuple[AssignReplicasToDirsResponse.DirectoryData, ...]  # Results per directory named in the request.

    class PartitionData(Struct):
        """AssignReplicasToDirsResponse.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int  # Partition number within the topic.
        error_code: int  # Outcome of this placement; 0 on success.

    class TopicData(Struct):
        """AssignReplicasToDirsResponse.TopicData: versions 0+."""

        __slots__ = ()
        topic_id: uuid.UUID  # Topic, by UUID.
        partitions: tuple[AssignReplicasToDirsResponse.PartitionData, ...]  # Results per partition of that topic.

    class DirectoryData(Struct):
        """AssignReplicasToDirsResponse.DirectoryData: versions 0+."""

        __slots__ = ()
        id: uuid.UUID  # Which log directory, by its UUID.
        topics: tuple[AssignReplicasToDirsResponse.TopicData, ...]  # Results per topic within this directory.


class BeginQuorumEpochRequest(Message):
    """BeginQuorumEpochRequest: the request of API key 53; versions 0-1, flexible 1+."""

    __slots__ = ()
    cluster_id: str | None  # Cluster id of the sender; null skips the check.
    voter_id: int  # versions 1+; Node id of the voter this request is addressed to.
    topics: tuple[BeginQuorumEpochRequest.TopicData, ...]  # Raft topics the announcement covers.
    # Listeners on which the new leader can be reached.
    leader_endpoints: tuple[BeginQuorumEpochRequest.LeaderEndpoint, ...]  # versions 1+

    class PartitionData(Struct):
        """BeginQuorumEpochRequest.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int  # Partition number within the topic.
        voter_directory_id: uuid.UUID  # versions 1+; Directory UUID of the addressed voter's metadata log.
        leader_id: int  # Node id of the leader that won the election.
        leader_epoch: int  # Epoch in which it leads.

    class TopicData(Struct):
        """BeginQuorumEpochRequest.TopicData: versions 0+."""

        __slots__ = ()
        topic_name: str  # Name of the Raft topic.
        partitions: tuple[BeginQuorumEpochRequest.PartitionData, ...]  # Per-partition announcements.

    class LeaderEndpoint(Struct):
        """BeginQuorumEpochRequest.LeaderEndpoint: versions 1+."""

        __slots__ = ()
        name: str  # Listener name.
        host: str  # Advertised host of this listener.
        port: int  # Advertised port of this listener.


class BeginQuorumEpochResponse(Message):
    """BeginQuorumEpochResponse: the response of API key 53; versions 0-1, flexible 1+."""

    __slots__ = ()
    error_code: int  # Request-wide error; 0 on success.
    topics: tuple[BeginQuorumEpochResponse.TopicData, ...]  # Acknowledgements grouped by topic.
    # Host and port for every leader mentioned above.
    node_endpoints: tuple[BeginQuorumEpochResponse.NodeEndpoint, ...]  # versions 1+, tag 0

    class PartitionData(Struct):
        """BeginQuorumEpochResponse.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int  # Partition number within the topic.
        error_code: int  # Per-partition error, 0 if none.
        leader_id: int  # Leader known to the responder; -1 if none.
        leader_epoch: int  # Highest epoch known to the responder.

    class TopicData(Struct):
        """BeginQuorumEpochResponse.TopicData: versions 0+."""

        __slots__ = ()
        topic_name: str  # Name of the Raft topic.
        partitions: tuple[BeginQuorumEpochResponse.PartitionData, ...]  # Acknowledgements per partition.

    class NodeEndpoint(Struct):
        """BeginQuorumEpochResponse.NodeEndpoint: versions 1+."""

        __slots__ = ()
        node_id: int  # Which node the address belongs to.
        host: str  # Host to reach that leader on.
        port: int  # Port to reach that leader on.


class BrokerHeartbeatRequest(Message):
    """BrokerHeartbeatRequest: the request of API key 63; versions 0-2, flexible 0+."""

    __slots__ = ()
    broker_id: int  # Node id of the sending broker.
    broker_epoch: int  # Epoch from the broker's current registration.
    current_metadata_offset: int  # Offset of the last metadata record applied by the broker.
    want_fence: bool  # Set when the broker asks to be (or stay) fenced.
    want_shut_down: bool  # Set when the broker asks for a controlled shutdown.
    offline_log_dirs: tuple[uuid.UUID, ...]  # versions 1+, tag 0; Failed log directories, by UUID.
    # Directories excluded from new replica placement; stays null until the broker is in RECOVERY.
    cordoned_log_dirs: tuple[uuid.UUID, ...] | None  # versions 2+, tag 1


class BrokerHeartbeatResponse(Message):
    """BrokerHeartbeatResponse: the response of API key 63; versions 0-2, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int  # Milliseconds the reply was held back by quota enforcement; 0 if none.
    error_code: int  # Outcome of the heartbeat; 0 on success.
    is_caught_up: bool  # Whether the broker's metadata offset is close enough to the log end.
    is_fenced: bool  # Whether the controller currently holds the broker fenced.
    should_shut_down: bool  # Whether the broker may now complete its controlled shutdown.


class BrokerRegistrationRequest(Message):
    """BrokerRegistrationRequest: the request of API key 62; versions 0-4, flexible 0+."""

    __slots__ = ()
    broker_id: int  # Id this broker runs as (node.id).
    cluster_id: str  # Cluster id the broker was formatted with; must match the controller's.
    incarnation_id: uuid.UUID  # Random UUID chosen anew each time the broker process starts.
    listeners: tuple[BrokerRegistrationRequest.Listener, ...]  # Endpoints on which the broker accepts connections.
    # Feature version ranges the broker can run; before v4, entries whose minimum is 0 are left out.
    features: tuple[BrokerRegistrationRequest.Feature, ...]
    rack: str | None  # Rack label of the broker, or null when unset.
    is_migrating_zk_broker: bool  # versions 1+; True when a ZooKeeper-mode broker registers during a KRaft migration.
    log_dirs: tuple[uuid.UUID, ...]  # versions 2+; UUIDs of the broker's log directories that are online.
    # Broker epoch from before the last clean shutdown, or -1; lets the controller skip unclean-shutdown handling.
    previous_broker_epoch: int  # versions 3+

    class Listener(Struct):
        """BrokerRegistrationRequest.Listener: versions 0+."""

        __slots__ = ()
        name: str  # Listener name, e.g. PLAINTEXT.
        host: str  # Advertised host of this listener.
        port: int  # Advertised port of this listener.
        security_protocol: int  # Security protocol id used on this listener.

    class Feature(Struct):
        """BrokerRegistrationRequest.Feature: versions 0+."""

        __slots__ = ()
        name: str  # Feature name, e.g. metadata.version.
        min_supported_version: int  # Lowest level of this feature the broker can run.
        max_supported_version: int  # Highest level of this feature the broker can run.


class BrokerRegistrationResponse(Message):
    """BrokerRegistrationResponse: the response of API key 62; versions 0-4, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int  # Milliseconds the reply was held back by quota enforcement; 0 if none.
    error_code: int  # Outcome of the registration; 0 on success.
    broker_epoch: int  # Epoch granted to this registration; -1 when registration failed.


class ConsumerGroupDescribeRequest(Message):
    """ConsumerGroupDescribeRequest: the request of API key 69; versions 0-1, flexible 0+."""

    __slots__ = ()
    group_ids: tuple[str, ...]  # Group ids.
    include_authorized_operations: bool  # Include authorized operations.


class ConsumerGroupDescribeResponse(Message):
    """ConsumerGroupDescribeResponse: the response of API key 69; versions 0-1, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int  # Throttle time ms.
    groups: tuple[ConsumerGroupDescribeResponse.DescribedGroup, ...]  # Groups.

    class TopicPartitions(Struct):
        """ConsumerGroupDescribeResponse.TopicPartitions: versions 0+."""

        __slots__ = ()
        topic_id: uuid.UUID  # Topic id.
        topic_name: str  # Topic name.
        partitions: tuple[int, ...]  # Partitions.

    class Assignment(Struct):
        """ConsumerGroupDescribeResponse.Assignment: versions 0+."""

        __slots__ = ()
        topic_partitions: tuple[ConsumerGroupDescribeResponse.TopicPartitions, ...]  # Topic partitions.

    class Member(Struct):
        """ConsumerGroupDescribeResponse.Member: versions 0+."""

        __slots__ = ()
        member_id: str  # Member id.
        instance_id: str | None  # Instance id.
        rack_id: str | None  # Rack id.
        member_epoch: int  # Member epoch.
        client_id: str  # Client id.
        client_host: str  # Client host.
        subscribed_topic_names: tuple[str, ...]  # Subscribed topic names.
        subscribed_topic_regex: str | None  # Subscribed topic regex.
        assignment: ConsumerGroupDescribeResponse.Assignment  # Assignment.
        target_assignment: ConsumerGroupDescribeResponse.Assignment  # Target assignment.
        member_type: int  # versions 1+; Member type.

    class DescribedGroup(Struct):
        """ConsumerGroupDescribeResponse.DescribedGroup: versions 0+."""

        __slots__ = ()
        error_code: int  # Error code.
        error_message: str | None  # Error message.
        group_id: str  # Group id.
        group_state: str  # Group state.
        group_epoch: int  # Group epoch.
        assignment_epoch: int  # Assignment epoch.
        assignor_name: str  # Assignor name.
        members: tuple[ConsumerGroupDescribeResponse.Member, ...]  # Members.
        authorized_operations: int  # Authorized operations.


class ConsumerGroupHeartbeatRequest(Message):
    """ConsumerGroupHeartbeatRequest: the request of API key 68; versions 0-1, flexible 0+."""

    __slots__ = ()
    group_id: str  # Group id.
    member_id: str  # Member id.
    member_epoch: int  # Member epoch.
    instance_id: str | None  # Instance id.
    rack_id: str | None  # Rack id.
    rebalance_timeout_ms: int  # Rebalance timeout ms.
    subscribed_topic_names: tuple[str, ...] | None  # Subscribed topic names.
    subscribed_topic_regex: str | None  # versions 1+; Subscribed topic regex.
    server_assignor: str | None  # Server assignor.
    topic_partitions: tuple[ConsumerGroupHeartbeatRequest.TopicPartitions, ...] | None  # Topic partitions.

    class TopicPartitions(Struct):
        """ConsumerGroupHeartbeatRequest.TopicPartitions: versions 0+."""

        __slots__ = ()
        topic_id: uuid.UUID  # Topic id.
        partitions: tuple[int, ...]  # Partitions.


class ConsumerGroupHeartbeatResponse(Message):
    """ConsumerGroupHeartbeatResponse: the response of API key 68; versions 0-1, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int  # Throttle time ms.
    error_code: int  # Error code.
    error_message: str | None  # Error message.
    member_id: str | None  # Member id.
    member_epoch: int  # Member epoch.
    heartbeat_interval_ms: int  # Heartbeat interval ms.
    assignment: ConsumerGroupHeartbeatResponse.Assignment | None  # Assignment.

    class TopicPartitions(Struct):
        """ConsumerGroupHeartbeatResponse.TopicPartitions: versions 0+."""

        __slots__ = ()
        topic_id: uuid.UUID  # Topic id.
        partitions: tuple[int, ...]  # Partitions.

    class Assignment(Struct):
        """ConsumerGroupHeartbeatResponse.Assignment: versions 0+."""

        __slots__ = ()
        topic_partitions: tuple[ConsumerGroupHeartbeatResponse.TopicPartitions, ...]  # Topic partitions.


class CreateAclsRequest(Message):
    """CreateAclsRequest: the request of API key 30; versions 1-3, flexible 2+."""

    __slots__ = ()
    creations: tuple[CreateAclsRequest.AclCreation, ...]  # The entries to add.

    class AclCreation(Struct):
        """CreateAclsRequest.AclCreation: versions 0+."""

        __slots__ = ()
        resource_type: int  # The resource type (TOPIC 2, GROUP 3, CLUSTER 4, ...).
        resource_name: str  # The resource name, or prefix for a PREFIXED pattern.
        resource_pattern_type: int  # versions 1+; LITERAL (3) or PREFIXED (4).
        principal: str  # Who the entry is about, as type:name (User:alice).
        host: str  # The client address the entry applies to; * for any.
        operation: int  # The AclOperation code (READ 3, WRITE 4, ... ALTER 7, DESCRIBE 8).
        permission_type: int  # ALLOW (3) or DENY (2).


class CreateAclsResponse(Message):
    """CreateAclsResponse: the response of API key 30; versions 1-3, flexible 2+."""

    __slots__ = ()
    throttle_time_ms: int  # Throttle time in milliseconds; always 0 here.
    results: tuple[CreateAclsResponse.AclCreationResult, ...]  # One per creation.

    class AclCreationResult(Struct):
        """CreateAclsResponse.AclCreationResult: versions 0+."""

        __slots__ = ()
        error_code: int  # 0, or why the entry was not added.
        error_message: str | None  # Why, or null.


class CreatePartitionsRequest(Message):
    """CreatePartitionsRequest: the request of API key 37; versions 0-3, flexible 2+."""

    __slots__ = ()
    topics: tuple[CreatePartitionsRequest.CreatePartitionsTopic, ...]  # Topics to grow.
    timeout_ms: int  # How long in ms the caller is prepared to wait for the added partitions.
    validate_only: bool  # When set, only check whether the change would succeed; nothing is changed.

    class CreatePartitionsAssignment(Struct):
        """CreatePartitionsRequest.CreatePartitionsAssignment: versions 0+."""

        __slots__ = ()
        broker_ids: tuple[int, ...]  # Brokers to host one added partition, preferred leader first.

    class CreatePartitionsTopic(Struct):
        """CreatePartitionsRequest.CreatePartitionsTopic: versions 0+."""

        __slots__ = ()
        name: str  # Topic to grow.
        # Total number of partitions the topic should have afterwards.
        count: int  # type: ignore[assignment]  # hides tuple.count
        # Replica lists for the added partitions only, in partition order; null lets the controller choose.
        assignments: tuple[CreatePartitionsRequest.CreatePartitionsAssignment, ...] | None


class CreatePartitionsResponse(Message):
    """CreatePartitionsResponse: the response of API key 37; versions 0-3, flexible 2+."""

    __slots__ = ()
    throttle_time_ms: int  # Milliseconds the response was held back by quota enforcement; 0 when no quota was hit.
    results: tuple[CreatePartitionsResponse.CreatePartitionsTopicResult, ...]  # One outcome per topic in the request.

    class CreatePartitionsTopicResult(Struct):
        """CreatePartitionsResponse.CreatePartitionsTopicResult: versions 0+."""

        __slots__ = ()
        name: str  # Topic this outcome is about.
        error_code: int  # Outcome for the topic; 0 on success.
        error_message: str | None  # Explanation of the failure; null on success.


class CreateTopicsRequest(Message):
    """CreateTopicsRequest: the request of API key 19; versions 0-7, flexible 5+."""

    __slots__ = ()
    topics: tuple[CreateTopicsRequest.CreatableTopic, ...]  # One entry per topic the caller wants made.
    timeout_ms: int  # Upper bound in ms the caller will wait for creation to complete.
    validate_only: bool  # versions 1+; When set, only check whether the topics could be created; nothing is changed.

    class CreatableReplicaAssignment(Struct):
        """CreateTopicsRequest.CreatableReplicaAssignment: versions 0+."""

        __slots__ = ()
        partition_index: int  # Partition this replica list applies to.
        broker_ids: tuple[int, ...]  # Brokers that will host the partition, preferred leader first.

    class CreatableTopicConfig(Struct):
        """CreateTopicsRequest.CreatableTopicConfig: versions 0+."""

        __slots__ = ()
        name: str  # Config key.
        value: str | None  # Value for the key; may be null.

    class CreatableTopic(Struct):
        """CreateTopicsRequest.CreatableTopic: versions 0+."""

        __slots__ = ()
        name: str  # Topic name to register; it must not exist yet.
        num_partitions: int  # How many partitions to create; -1 for the broker default or when Assignments is given.
        replication_factor: int  # Copies of each partition; -1 for the broker default or when Assignments is given.
        # Explicit replica list per partition; leave empty to let the controller place replicas.
        assignments: tuple[CreateTopicsRequest.CreatableReplicaAssignment, ...]
        # Topic-level config overrides to store at creation time.
        configs: tuple[CreateTopicsRequest.CreatableTopicConfig, ...]


class CreateTopicsResponse(Message):
    """CreateTopicsResponse: the response of API key 19; versions 0-7, flexible 5+."""

    __slots__ = ()
    # Milliseconds the response was held back by quota enforcement; 0 when no quota was hit.
    throttle_time_ms: int  # versions 2+
    topics: tuple[CreateTopicsResponse.CreatableTopicResult, ...]  # One outcome per requested topic.

    class CreatableTopicConfigs(Struct):
        """CreateTopicsResponse.CreatableTopicConfigs: versions 5+."""

        __slots__ = ()
        name: str  # Config key.
        value: str | None  # Effective value; null when hidden as sensitive or unset.
        read_only: bool  # Whether the key cannot be changed.
        config_source: int  # Where the value comes from (topic override, broker setting, default, ...); -1 if unknown.
        is_sensitive: bool  # Whether the value is secret and therefore withheld.

    class CreatableTopicResult(Struct):
        """CreateTopicsResponse.CreatableTopicResult: versions 0+."""

        __slots__ = ()
        name: str  # Topic this outcome is about.
        topic_id: uuid.UUID  # versions 7+; Id given to the newly created topic.
        error_code: int  # Outcome of creating this topic; 0 on success.
        error_message: str | None  # versions 1+; Explanation of the failure; null on success.
        # Set when the topic was created but its configs could not be described for this reply.
        topic_config_error_code: int  # versions 5+, tag 0
        num_partitions: int  # versions 5+; Partition count the topic was created with; -1 if not reported.
        replication_factor: int  # versions 5+; Replication factor the topic was created with; -1 if not reported.
        # Effective configs of the new topic; null when not reported.
        configs: tuple[CreateTopicsResponse.CreatableTopicConfigs, ...] | None  # versions 5+


class DeleteAclsRequest(Message):
    """DeleteAclsRequest: the request of API key 31; versions 1-3, flexible 2+."""

    __slots__ = ()
    filters: tuple[DeleteAclsRequest.DeleteAclsFilter, ...]  # The filters; each is reported on its own.

    class DeleteAclsFilter(Struct):
        """DeleteAclsRequest.DeleteAclsFilter: versions 0+."""

        __slots__ = ()
        resource_type_filter: int  # Resource type to match; ANY (1) matches every type.
        resource_name_filter: str | None  # Resource name to match; null matches every name.
        # LITERAL (3), PREFIXED (4), ANY (1) or MATCH (2: every pattern that would match the name).
        pattern_type_filter: int  # versions 1+
        principal_filter: str | None  # Principal to match; null matches every principal.
        host_filter: str | None  # Host to match; null matches every host.
        operation: int  # Operation to match; ANY (1) matches every operation.
        permission_type: int  # Permission to match; ANY (1) matches both.


class DeleteAclsResponse(Message):
    """DeleteAclsResponse: the response of API key 31; versions 1-3, flexible 2+."""

    __slots__ = ()
    throttle_time_ms: int  # Throttle time in milliseconds; always 0 here.
    filter_results: tuple[DeleteAclsResponse.DeleteAclsFilterResult, ...]  # One per filter, in request order.

    class DeleteAclsMatchingAcl(Struct):
        """DeleteAclsResponse.DeleteAclsMatchingAcl: versions 0+."""

        __slots__ = ()
        error_code: int  # 0, or why this entry was not removed.
        error_message: str | None  # Why, or null.
        resource_type: int  # The resource type.
        resource_name: str  # The resource name or prefix.
        pattern_type: int  # versions 1+; LITERAL (3) or PREFIXED (4).
        principal: str  # Who the entry is about, as type:name (User:alice).
        host: str  # The client address the entry applies to; * for any.
        operation: int  # The AclOperation code (READ 3, WRITE 4, ... ALTER 7, DESCRIBE 8).
        permission_type: int  # ALLOW (3) or DENY (2).

    class DeleteAclsFilterResult(Struct):
        """DeleteAclsResponse.DeleteAclsFilterResult: versions 0+."""

        __slots__ = ()
        error_code: int  # 0, or why the filter removed nothing.
        error_message: str | None  # Why, or null.
        matching_acls: tuple[DeleteAclsResponse.DeleteAclsMatchingAcl, ...]  # The entries the filter removed.


class DeleteGroupsRequest(Message):
    """DeleteGroupsRequest: the request of API key 42; versions 0-2, flexible 2+."""

    __slots__ = ()
    groups_names: tuple[str, ...]  # Groups names.


class DeleteGroupsResponse(Message):
    """DeleteGroupsResponse: the response of API key 42; versions 0-2, flexible 2+."""

    __slots__ = ()
    throttle_time_ms: int  # Throttle time (ms).
    results: tuple[DeleteGroupsResponse.DeletableGroupResult, ...]  # Results.

    class DeletableGroupResult(Struct):
        """DeleteGroupsResponse.DeletableGroupResult: versions 0+."""

        __slots__ = ()
        group_id: str  # Group id.
        error_code: int  # Error code.


class DeleteRecordsRequest(Message):
    """DeleteRecordsRequest: the request of API key 21; versions 0-2, flexible 2+."""

    __slots__ = ()
    topics: tuple[DeleteRecordsRequest.DeleteRecordsTopic, ...]  # Topics to delete records of.
    timeout_ms: int  # How long to wait for the replicas to delete, in milliseconds.

    class DeleteRecordsPartition(Struct):
        """DeleteRecordsRequest.DeleteRecordsPartition: versions 0+."""

        __slots__ = ()
        partition_index: int  # Partition index.
        offset: int  # Records before this offset go; -1 means up to the high watermark.

    class DeleteRecordsTopic(Struct):
        """DeleteRecordsRequest.DeleteRecordsTopic: versions 0+."""

        __slots__ = ()
        name: str  # Topic name.
        partitions: tuple[DeleteRecordsRequest.DeleteRecordsPartition, ...]  # Partitions of the topic.


class DeleteRecordsResponse(Message):
    """DeleteRecordsResponse: the response of API key 21; versions 0-2, flexible 2+."""

    __slots__ = ()
    throttle_time_ms: int  # Milliseconds the request was held back by a quota; 0 when none applied.
    topics: tuple[DeleteRecordsResponse.DeleteRecordsTopicResult, ...]  # Results per topic.

    class DeleteRecordsPartitionResult(Struct):
        """DeleteRecordsResponse.DeleteRecordsPartitionResult: versions 0+."""

        __slots__ = ()
        partition_index: int  # Partition index.
        low_watermark: int  # The partition's low watermark after the deletion.
        error_code: int  # Why the deletion failed; 0 when it succeeded.

    class DeleteRecordsTopicResult(Struct):
        """DeleteRecordsResponse.DeleteRecordsTopicResult: versions 0+."""

        __slots__ = ()
        name: str  # Topic name.
        partitions: tuple[DeleteRecordsResponse.DeleteRecordsPartitionResult, ...]  # Results per partition.


class DeleteTopicsRequest(Message):
    """DeleteTopicsRequest: the request of API key 20; versions 0-6, flexible 4+."""

    __slots__ = ()
    # Topics to delete, each identified either by name or by id.
    topics: tuple[DeleteTopicsRequest.DeleteTopicState, ...]  # versions 6+
    topic_names: tuple[str, ...]  # versions 0-5; Topics to remove, given by name only (v0-5).
    timeout_ms: int  # Upper bound in ms the caller waits for the topics to be gone.

    class DeleteTopicState(Struct):
        """DeleteTopicsRequest.DeleteTopicState: versions 6+."""

        __slots__ = ()
        name: str | None  # Name of the topic, or null when TopicId identifies it.
        topic_id: uuid.UUID  # Id of the topic; all zeros when Name identifies it.


class DeleteTopicsResponse(Message):
    """DeleteTopicsResponse: the response of API key 20; versions 0-6, flexible 4+."""

    __slots__ = ()
    # Milliseconds the response was held back by quota enforcement; 0 when no quota was hit.
    throttle_time_ms: int  # versions 1+
    responses: tuple[DeleteTopicsResponse.DeletableTopicResult, ...]  # One outcome per requested topic.

    class DeletableTopicResult(Struct):
        """DeleteTopicsResponse.DeletableTopicResult: versions 0+."""

        __slots__ = ()
        name: str | None  # nullable 6+; Topic this outcome is about; may be null from v6 when it was given only by id.
        topic_id: uuid.UUID  # versions 6+; Id of the topic this outcome is about.
        error_code: int  # Outcome of deleting this topic; 0 on success.
        error_message: str | None  # versions 5+; Explanation of the failure; null on success.


class DescribeAclsRequest(Message):
    """DescribeAclsRequest: the request of API key 29; versions 1-3, flexible 2+."""

    __slots__ = ()
    resource_type_filter: int  # Resource type to match; ANY (1) matches every type.
    resource_name_filter: str | None  # Resource name to match; null matches every name.
    # LITERAL (3), PREFIXED (4), ANY (1) or MATCH (2: every pattern that would match the name).
    pattern_type_filter: int
    principal_filter: str | None  # Principal to match; null matches every principal.
    host_filter: str | None  # Host to match; null matches every host.
    operation: int  # Operation to match; ANY (1) matches every operation.
    permission_type: int  # Permission to match; ANY (1) matches both.


class DescribeAclsResponse(Message):
    """DescribeAclsResponse: the response of API key 29; versions 1-3, flexible 2+."""

    __slots__ = ()
    throttle_time_ms: int  # Throttle time in milliseconds; always 0 here.
    error_code: int  # 0, or why nothing is listed.
    error_message: str | None  # Why, or null.
    resources: tuple[DescribeAclsResponse.DescribeAclsResource, ...]  # One per resource pattern with matching entries.

    class AclDescription(Struct):
        """DescribeAclsResponse.AclDescription: versions 0+."""

        __slots__ = ()
        principal: str  # Who the entry is about, as type:name (User:alice).
        host: str  # The client address the entry applies to; * for any.
        operation: int  # The AclOperation code (READ 3, WRITE 4, ... ALTER 7, DESCRIBE 8).
        permission_type: int  # ALLOW (3) or DENY (2).

    class DescribeAclsResource(Struct):
        """DescribeAclsResponse.DescribeAclsResource: versions 0+."""

        __slots__ = ()
        resource_type: int  # The resource type.
        resource_name: str  # The resource name or prefix.
        pattern_type: int  # versions 1+; LITERAL (3) or PREFIXED (4).
        acls: tuple[DescribeAclsResponse.AclDescription, ...]  # The entries on this pattern.


class DescribeClusterRequest(Message):
    """DescribeClusterRequest: the request of API key 60; versions 0-2, flexible 0+."""

    __slots__ = ()
    include_cluster_authorized_operations: bool  # Ask for the bitmask of cluster operations the caller may perform.
    endpoint_type: int  # versions 1+; Kind of node wanted in the answer (1 = brokers, 2 = controllers).
    include_fenced_brokers: bool  # versions 2+; Also list brokers that are fenced at the moment.


class DescribeClusterResponse(Message):
    """DescribeClusterResponse: the response of API key 60; versions 0-2, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int  # Milliseconds the response was held back by quota enforcement; 0 when no quota was hit.
    error_code: int  # Request-wide error; 0 when the request succeeded.
    error_message: str | None  # Text explaining the request-wide error; null if there is none.
    endpoint_type: int  # versions 1+; Which kind of node the Brokers list holds: 1 = brokers, 2 = controllers.
    cluster_id: str  # Identifier of the cluster that answered.
    # A controller answering gives the active controller; a broker answering gives a random live broker; -1 if unknown.
    controller_id: int
    brokers: tuple[DescribeClusterResponse.DescribeClusterBroker, ...]  # Nodes of the requested kind.
    # Bitmask of cluster operations the caller may perform; INT32_MIN when not requested.
    cluster_authorized_operations: int

    class DescribeClusterBroker(Struct):
        """DescribeClusterResponse.DescribeClusterBroker: versions 0+."""

        __slots__ = ()
        broker_id: int  # Id of this node.
        host: str  # Host name clients should connect to.
        port: int  # TCP port clients should connect to.
        rack: str | None  # Rack label of this node, or null when none is configured.
        is_fenced: bool  # versions 2+; True when the controller currently holds this broker fenced.


class DescribeConfigsRequest(Message):
    """DescribeConfigsRequest: the request of API key 32; versions 0-4, flexible 4+."""

    __slots__ = ()
    resources: tuple[DescribeConfigsRequest.DescribeConfigsResource, ...]  # Resources to describe.
    include_synonyms: bool  # versions 1+; Also return, for each key, the other entries that could supply its value.
    include_documentation: bool  # versions 3+; Also return the documentation text of each key.

    class DescribeConfigsResource(Struct):
        """DescribeConfigsRequest.DescribeConfigsResource: versions 0+."""

        __slots__ = ()
        resource_type: int  # Kind of resource (2 = topic, 4 = broker, 8 = broker logger, ...).
        resource_name: str  # Identifier of the resource: a topic name, or a broker id written as text.
        configuration_keys: tuple[str, ...] | None  # Keys to return; null returns every key.


class DescribeConfigsResponse(Message):
    """DescribeConfigsResponse: the response of API key 32; versions 0-4, flexible 4+."""

    __slots__ = ()
    throttle_time_ms: int  # Milliseconds the response was held back by quota enforcement; 0 when no quota was hit.
    results: tuple[DescribeConfigsResponse.DescribeConfigsResult, ...]  # Per-resource answers.

    class DescribeConfigsSynonym(Struct):
        """DescribeConfigsResponse.DescribeConfigsSynonym: versions 1+."""

        __slots__ = ()
        name: str  # Config key this synonym is stored under.
        value: str | None  # Value held by the synonym entry; may be null.
        source: int  # Where the synonym entry's value comes from.

    class DescribeConfigsResourceResult(Struct):
        """DescribeConfigsResponse.DescribeConfigsResourceResult: versions 0+."""

        __slots__ = ()
        name: str  # Config key.
        value: str | None  # Current value; null when hidden as sensitive or unset.
        read_only: bool  # Whether the key cannot be changed at runtime.
        # v0 only: whether the value is the built-in default rather than an explicit setting.
        is_default: bool  # versions 0
        # Where the value comes from (dynamic topic or broker setting, static file, default, ...); -1 if unknown.
        config_source: int  # versions 1+
        is_sensitive: bool  # Whether the value is secret and therefore withheld.
        # Entries that could supply this key's value, highest precedence first.
        synonyms: tuple[DescribeConfigsResponse.DescribeConfigsSynonym, ...]  # versions 1+
        # Value type code from 1 (boolean) to 9 (password), following the ConfigDef type order; 0 when unknown.
        config_type: int  # versions 3+
        documentation: str | None  # versions 3+; Help text for the key; may be null.

    class DescribeConfigsResult(Struct):
        """DescribeConfigsResponse.DescribeConfigsResult: versions 0+."""

        __slots__ = ()
        error_code: int  # Outcome for this resource; 0 on success.
        error_message: str | None  # Explanation of the failure; null on success.
        resource_type: int  # Kind of resource described.
        resource_name: str  # Identifier of the resource described.
        configs: tuple[DescribeConfigsResponse.DescribeConfigsResourceResult, ...]  # Config entries of the resource.


class DescribeGroupsRequest(Message):
    """DescribeGroupsRequest: the request of API key 15; versions 0-6, flexible 5+."""

    __slots__ = ()
    groups: tuple[str, ...]  # Groups.
    include_authorized_operations: bool  # versions 3+; Include authorized operations.


class DescribeGroupsResponse(Message):
    """DescribeGroupsResponse: the response of API key 15; versions 0-6, flexible 5+."""

    __slots__ = ()
    throttle_time_ms: int  # versions 1+; Throttle time (ms).
    groups: tuple[DescribeGroupsResponse.DescribedGroup, ...]  # Groups.

    class DescribedGroupMember(Struct):
        """DescribeGroupsResponse.DescribedGroupMember: versions 0+."""

        __slots__ = ()
        member_id: str  # Member id.
        group_instance_id: str | None  # versions 4+; Group instance id.
        client_id: str  # Client id.
        client_host: str  # Client host.
        member_metadata: bytes  # Member metadata.
        member_assignment: bytes  # Member assignment.

    class DescribedGroup(Struct):
        """DescribeGroupsResponse.DescribedGroup: versions 0+."""

        __slots__ = ()
        error_code: int  # Error code.
        error_message: str | None  # versions 6+; Error message.
        group_id: str  # Group id.
        group_state: str  # Group state.
        protocol_type: str  # Protocol type.
        protocol_data: str  # Protocol data.
        members: tuple[DescribeGroupsResponse.DescribedGroupMember, ...]  # Members.
        authorized_operations: int  # versions 3+; Authorized operations.


class DescribeLogDirsRequest(Message):
    """DescribeLogDirsRequest: the request of API key 35; versions 0-5, flexible 2+."""

    __slots__ = ()
    # Topics to report on; null reports every topic.
    topics: tuple[DescribeLogDirsRequest.DescribableLogDirTopic, ...] | None

    class DescribableLogDirTopic(Struct):
        """DescribeLogDirsRequest.DescribableLogDirTopic: versions 0+."""

        __slots__ = ()
        topic: str  # Topic to report on.
        partitions: tuple[int, ...]  # Partitions of the topic to report on.


class DescribeLogDirsResponse(Message):
    """DescribeLogDirsResponse: the response of API key 35; versions 0-5, flexible 2+."""

    __slots__ = ()
    throttle_time_ms: int  # Milliseconds the response was held back by quota enforcement; 0 when no quota was hit.
    error_code: int  # versions 3+; Request-wide error (v3+); 0 on success.
    results: tuple[DescribeLogDirsResponse.DescribeLogDirsResult, ...]  # One entry per log directory on the broker.

    class DescribeLogDirsPartition(Struct):
        """DescribeLogDirsResponse.DescribeLogDirsPartition: versions 0+."""

        __slots__ = ()
        partition_index: int  # Which partition of the topic this replica belongs to.
        partition_size: int  # Bytes on disk used by this replica's log segments.
        # How far this log trails: the high watermark for a current log, the current replica's end offset for a future
        # log.
        offset_lag: int
        # True for a log being built by AlterReplicaLogDirs in its destination directory; it later replaces the current
        # log.
        is_future_key: bool

    class DescribeLogDirsTopic(Struct):
        """DescribeLogDirsResponse.DescribeLogDirsTopic: versions 0+."""

        __slots__ = ()
        name: str  # Topic these replicas belong to.
        # Replicas of this topic stored in the directory.
        partitions: tuple[DescribeLogDirsResponse.DescribeLogDirsPartition, ...]

    class DescribeLogDirsResult(Struct):
        """DescribeLogDirsResponse.DescribeLogDirsResult: versions 0+."""

        __slots__ = ()
        error_code: int  # Health of the directory: 0 if usable, e.g. KAFKA_STORAGE_ERROR if offline.
        log_dir: str  # Filesystem location of this log directory (absolute).
        topics: tuple[DescribeLogDirsResponse.DescribeLogDirsTopic, ...]  # Topics with replicas in this directory.
        # Capacity in bytes of the volume holding the directory, remote storage excluded; -1 if unknown.
        total_bytes: int  # versions 4+
        usable_bytes: int  # versions 4+; Free bytes on that volume, remote storage excluded; -1 if unknown.
        is_cordoned: bool  # versions 5+; Whether the directory is cordoned, so that no new replicas are placed in it.


class DescribeQuorumRequest(Message):
    """DescribeQuorumRequest: the request of API key 55; versions 0-2, flexible 0+."""

    __slots__ = ()
    topics: tuple[DescribeQuorumRequest.TopicData, ...]  # Raft topics to report on (normally just __cluster_metadata).

    class PartitionData(Struct):
        """DescribeQuorumRequest.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int  # Partition number within the topic.

    class TopicData(Struct):
        """DescribeQuorumRequest.TopicData: versions 0+."""

        __slots__ = ()
        topic_name: str  # Name of the Raft topic.
        partitions: tuple[DescribeQuorumRequest.PartitionData, ...]  # Partitions of that topic to report on.


class DescribeQuorumResponse(Message):
    """DescribeQuorumResponse: the response of API key 55; versions 0-2, flexible 0+."""

    __slots__ = ()
    error_code: int  # Request-wide error; 0 on success.
    error_message: str | None  # versions 2+; Human-readable detail for ErrorCode; null when there is none.
    topics: tuple[DescribeQuorumResponse.TopicData, ...]  # Quorum state per requested topic.
    # Address lists for the quorum members, keyed by node id.
    nodes: tuple[DescribeQuorumResponse.Node, ...]  # versions 2+

    class ReplicaState(Struct):
        """DescribeQuorumResponse.ReplicaState: versions 0+."""

        __slots__ = ()
        replica_id: int  # Which node this progress entry describes.
        replica_directory_id: uuid.UUID  # versions 2+; Directory UUID identifying this voter's log copy.
        log_end_offset: int  # Log end offset last reported by this replica; -1 if not known.
        # Leader-clock time of this replica's latest fetch; -1 for the leader itself or when unknown.
        last_fetch_timestamp: int  # versions 1+
        # When (leader clock) this replica last fetched up to the leader's end offset; now for the leader, -1 if
        # unknown.
        last_caught_up_timestamp: int  # versions 1+

    class PartitionData(Struct):
        """DescribeQuorumResponse.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int  # Partition number within the topic.
        error_code: int  # Outcome for this partition; 0 on success.
        # Human-readable detail for this partition's error; null when there is none.
        error_message: str | None  # versions 2+
        leader_id: int  # Current Raft leader's id, -1 if unknown.
        leader_epoch: int  # Most recent leader epoch this node knows of.
        high_watermark: int  # Offset up to which the log is committed.
        current_voters: tuple[DescribeQuorumResponse.ReplicaState, ...]  # Progress of each voting member.
        # Progress of each non-voting replica that fetches from the leader.
        observers: tuple[DescribeQuorumResponse.ReplicaState, ...]

    class TopicData(Struct):
        """DescribeQuorumResponse.TopicData: versions 0+."""

        __slots__ = ()
        topic_name: str  # Raft topic the entry refers to.
        partitions: tuple[DescribeQuorumResponse.PartitionData, ...]  # Quorum state per requested partition.

    class Listener(Struct):
        """DescribeQuorumResponse.Listener: versions 2+."""

        __slots__ = ()
        name: str  # Listener name.
        host: str  # Advertised host of this listener.
        port: int  # Advertised port of this listener.

    class Node(Struct):
        """DescribeQuorumResponse.Node: versions 2+."""

        __slots__ = ()
        node_id: int  # Node id these endpoints belong to.
        listeners: tuple[DescribeQuorumResponse.Listener, ...]  # Listeners the node advertises.


class DescribeTopicPartitionsRequest(Message):
    """DescribeTopicPartitionsRequest: the request of API key 75; versions 0, flexible 0+."""

    __slots__ = ()
    topics: tuple[DescribeTopicPartitionsRequest.TopicRequest, ...]  # Topics to describe.
    response_partition_limit: int  # Most partitions to return in one response; the rest are fetched with the cursor.
    cursor: DescribeTopicPartitionsRequest.Cursor | None  # Where to resume the listing; null starts at the beginning.

    class TopicRequest(Struct):
        """DescribeTopicPartitionsRequest.TopicRequest: versions 0+."""

        __slots__ = ()
        name: str  # Topic to describe.

    class Cursor(Struct):
        """DescribeTopicPartitionsRequest.Cursor: versions 0+."""

        __slots__ = ()
        topic_name: str  # Topic at which to resume.
        partition_index: int  # Partition of that topic at which to resume.


class DescribeTopicPartitionsResponse(Message):
    """DescribeTopicPartitionsResponse: the response of API key 75; versions 0, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int  # Milliseconds the response was held back by quota enforcement; 0 when no quota was hit.
    # One entry per described topic.
    topics: tuple[DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponseTopic, ...]
    next_cursor: DescribeTopicPartitionsResponse.Cursor | None  # Where the next page starts; null when nothing is left.

    class DescribeTopicPartitionsResponsePartition(Struct):
        """DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponsePartition: versions 0+."""

        __slots__ = ()
        error_code: int  # Outcome for this partition; 0 on success.
        partition_index: int  # Which partition of the topic this entry describes.
        leader_id: int  # Broker currently leading the partition, or -1 if it has no leader.
        leader_epoch: int  # Epoch of the current leadership; -1 if unknown.
        replica_nodes: tuple[int, ...]  # Every broker assigned a replica of the partition.
        isr_nodes: tuple[int, ...]  # Replicas currently caught up with the leader.
        # Replicas outside the ISR that can still safely become leader (ELR); null when not tracked.
        eligible_leader_replicas: tuple[int, ...] | None
        # ELR members that last held a clean copy when the ELR became empty; null when not tracked.
        last_known_elr: tuple[int, ...] | None
        offline_replicas: tuple[int, ...]  # Assigned replicas whose log directory is unavailable.

    class DescribeTopicPartitionsResponseTopic(Struct):
        """DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponseTopic: versions 0+."""

        __slots__ = ()
        error_code: int  # Outcome for this topic; 0 on success.
        name: str | None  # Topic name; may be null.
        topic_id: uuid.UUID  # Unique identifier (UUID) of the topic.
        is_internal: bool  # Whether this is an internal topic such as __consumer_offsets.
        # Partitions of this topic included in this page.
        partitions: tuple[DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponsePartition, ...]
        # Bitmask of topic operations the caller may perform; INT32_MIN when not computed.
        topic_authorized_operations: int

    class Cursor(Struct):
        """DescribeTopicPartitionsResponse.Cursor: versions 0+."""

        __slots__ = ()
        topic_name: str  # Topic at which the next page starts.
        partition_index: int  # Partition of that topic at which the next page starts.


class DescribeUserScramCredentialsRequest(Message):
    """DescribeUserScramCredentialsRequest: the request of API key 50; versions 0, flexible 0+."""

    __slots__ = ()
    # The users to describe; null or empty for every user with a credential.
    users: tuple[DescribeUserScramCredentialsRequest.UserName, ...] | None

    class UserName(Struct):
        """DescribeUserScramCredentialsRequest.UserName: versions 0+."""

        __slots__ = ()
        name: str  # The user name.


class DescribeUserScramCredentialsResponse(Message):
    """DescribeUserScramCredentialsResponse: the response of API key 50; versions 0, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int  # Throttle time in milliseconds; always 0 here.
    error_code: int  # 0, or why nothing is described (such as CLUSTER_AUTHORIZATION_FAILED).
    error_message: str | None  # Why, or null.
    results: tuple[DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult, ...]  # One per user.

    class CredentialInfo(Struct):
        """DescribeUserScramCredentialsResponse.CredentialInfo: versions 0+."""

        __slots__ = ()
        mechanism: int  # SCRAM-SHA-256 (1) or SCRAM-SHA-512 (2).
        iterations: int  # The iteration count of the credential.

    class DescribeUserScramCredentialsResult(Struct):
        """DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult: versions 0+."""

        __slots__ = ()
        user: str  # The user name.
        error_code: int  # 0, or why this user is not described.
        error_message: str | None  # Why, or null.
        # The user's credentials, one per mechanism.
        credential_infos: tuple[DescribeUserScramCredentialsResponse.CredentialInfo, ...]


class ElectLeadersRequest(Message):
    """ElectLeadersRequest: the request of API key 43; versions 0-2, flexible 2+."""

    __slots__ = ()
    # 0 = hand leadership to the preferred replica; 1 = unclean election choosing any live replica when no ISR member is
    # alive.
    election_type: int  # versions 1+
    # Partitions to run elections for; null means every partition that qualifies.
    topic_partitions: tuple[ElectLeadersRequest.TopicPartitions, ...] | None
    timeout_ms: int  # How long in ms the caller is prepared to wait for the elections.

    class TopicPartitions(Struct):
        """ElectLeadersRequest.TopicPartitions: versions 0+."""

        __slots__ = ()
        topic: str  # Topic holding the partitions.
        partitions: tuple[int, ...]  # Indexes of the partitions that need an election.


class ElectLeadersResponse(Message):
    """ElectLeadersResponse: the response of API key 43; versions 0-2, flexible 2+."""

    __slots__ = ()
    throttle_time_ms: int  # Milliseconds the response was held back by quota enforcement; 0 when no quota was hit.
    error_code: int  # versions 1+; Request-wide error (v1+); 0 when the request as a whole was accepted.
    # Per-topic results; empty if all partitions were asked for and the caller lacks permission.
    replica_election_results: tuple[ElectLeadersResponse.ReplicaElectionResult, ...]

    class PartitionResult(Struct):
        """ElectLeadersResponse.PartitionResult: versions 0+."""

        __slots__ = ()
        partition_id: int  # Which partition of the topic this result is about.
        error_code: int  # Outcome of the election; 0 on success.
        error_message: str | None  # Explanation of the failure; null on success.

    class ReplicaElectionResult(Struct):
        """ElectLeadersResponse.ReplicaElectionResult: versions 0+."""

        __slots__ = ()
        topic: str  # Topic these results belong to.
        partition_result: tuple[ElectLeadersResponse.PartitionResult, ...]  # Per-partition results within this topic.


class EndQuorumEpochRequest(Message):
    """EndQuorumEpochRequest: the request of API key 54; versions 0-1, flexible 1+."""

    __slots__ = ()
    cluster_id: str | None  # Cluster id of the sender; null skips the check.
    topics: tuple[EndQuorumEpochRequest.TopicData, ...]  # Raft topics whose leadership is being given up.
    # Listeners of the resigning leader.
    leader_endpoints: tuple[EndQuorumEpochRequest.LeaderEndpoint, ...]  # versions 1+

    class ReplicaInfo(Struct):
        """EndQuorumEpochRequest.ReplicaInfo: versions 1+."""

        __slots__ = ()
        candidate_id: int  # Suggested candidate's node id.
        candidate_directory_id: uuid.UUID  # Suggested candidate's directory UUID.

    class PartitionData(Struct):
        """EndQuorumEpochRequest.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int  # Partition number within the topic.
        leader_id: int  # Node id of the leader stepping down.
        leader_epoch: int  # Epoch being ended.
        preferred_successors: tuple[int, ...]  # versions 0; Node ids that should campaign first, best first (v0 only).
        # Replicas that should campaign first, best first (v1+).
        preferred_candidates: tuple[EndQuorumEpochRequest.ReplicaInfo, ...]  # versions 1+

    class TopicData(Struct):
        """EndQuorumEpochRequest.TopicData: versions 0+."""

        __slots__ = ()
        topic_name: str  # Name of the Raft topic.
        partitions: tuple[EndQuorumEpochRequest.PartitionData, ...]  # Per-partition resignations.

    class LeaderEndpoint(Struct):
        """EndQuorumEpochRequest.LeaderEndpoint: versions 1+."""

        __slots__ = ()
        name: str  # Listener name.
        host: str  # Advertised host of this listener.
        port: int  # Advertised port of this listener.


class EndQuorumEpochResponse(Message):
    """EndQuorumEpochResponse: the response of API key 54; versions 0-1, flexible 1+."""

    __slots__ = ()
    error_code: int  # Request-wide error; 0 on success.
    topics: tuple[EndQuorumEpochResponse.TopicData, ...]  # Acknowledgements grouped by topic.
    # Host and port for every leader mentioned above.
    node_endpoints: tuple[EndQuorumEpochResponse.NodeEndpoint, ...]  # versions 1+, tag 0

    class PartitionData(Struct):
        """EndQuorumEpochResponse.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int  # Partition number within the topic.
        error_code: int  # Error for this partition, or 0.
        leader_id: int  # Leader known to the responder; -1 if none.
        leader_epoch: int  # Highest epoch known to the responder.

    class TopicData(Struct):
        """EndQuorumEpochResponse.TopicData: versions 0+."""

        __slots__ = ()
        topic_name: str  # Name of the Raft topic.
        partitions: tuple[EndQuorumEpochResponse.PartitionData, ...]  # Acknowledgements per partition.

    class NodeEndpoint(Struct):
        """EndQuorumEpochResponse.NodeEndpoint: versions 1+."""

        __slots__ = ()
        node_id: int  # Which node the address belongs to.
        host: str  # Host to reach that leader on.
        port: int  # Port to reach that leader on.


class FetchRequest(Message):
    """FetchRequest: the request of API key 1; versions 4-18, flexible 12+."""

    __slots__ = ()
    cluster_id: str | None  # versions 12+, tag 0; Cluster id the fetcher expects; null skips the check.
    replica_id: int  # versions 0-14; Node id of a fetching replica; -1 for a consumer.
    replica_state: FetchRequest.ReplicaState  # versions 15+, tag 1; Who fetches, from v15 on.
    max_wait_ms: int  # How long the leader may hold the request when there is nothing new.
    min_bytes: int  # Bytes to gather before answering early.
    max_bytes: int  # Cap on the bytes of the whole answer.
    isolation_level: int  # 0 reads uncommitted data, 1 only committed transactions.
    session_id: int  # versions 7+; Incremental fetch session id; 0 for none.
    session_epoch: int  # versions 7+; Position in the fetch session; -1 for a full fetch.
    topics: tuple[FetchRequest.FetchTopic, ...]  # Topics to read from.
    # Partitions an incremental session drops.
    forgotten_topics_data: tuple[FetchRequest.ForgottenTopic, ...]  # versions 7+
    rack_id: str  # versions 11+; Rack of the fetcher, for reading from the closest replica.

    class ReplicaState(Struct):
        """FetchRequest.ReplicaState: versions 15+."""

        __slots__ = ()
        replica_id: int  # Node id of the fetching replica; -1 for a consumer.
        replica_epoch: int  # Broker epoch of the fetcher; -1 when it has none.

    class FetchPartition(Struct):
        """FetchRequest.FetchPartition: versions 0+."""

        __slots__ = ()
        partition: int  # Partition index.
        current_leader_epoch: int  # versions 9+; Leader epoch the fetcher knows, to fence stale leaders and fetchers.
        fetch_offset: int  # Offset to read from.
        last_fetched_epoch: int  # versions 12+; Epoch of the fetcher's last record, checked against the leader's log.
        log_start_offset: int  # versions 5+; First offset of the fetcher's log (followers only).
        partition_max_bytes: int  # Cap on the bytes returned for this partition.
        replica_directory_id: uuid.UUID  # versions 17+, tag 0; Directory id of the fetcher's log copy.
        # High watermark the fetching replica knows; -1 unknown, int64 max when it does not say (KIP-1166).
        high_watermark: int  # versions 18+, tag 1

    class FetchTopic(Struct):
        """FetchRequest.FetchTopic: versions 0+."""

        __slots__ = ()
        topic: str  # versions 0-12; Topic name, up to v12.
        topic_id: uuid.UUID  # versions 13+; Topic id, from v13 on.
        partitions: tuple[FetchRequest.FetchPartition, ...]  # Partitions to read from.

    class ForgottenTopic(Struct):
        """FetchRequest.ForgottenTopic: versions 7+."""

        __slots__ = ()
        topic: str  # versions 7-12; Topic name, up to v12.
        topic_id: uuid.UUID  # versions 13+; Topic id, from v13 on.
        partitions: tuple[int, ...]  # Partition indexes to drop.


class FetchResponse(Message):
    """FetchResponse: the response of API key 1; versions 4-18, flexible 12+."""

    __slots__ = ()
    throttle_time_ms: int  # Milliseconds the answer was held back by a quota; 0 if none.
    error_code: int  # versions 7+; Request-wide error; 0 on success.
    session_id: int  # versions 7+; Fetch session id; 0 when there is no session.
    responses: tuple[FetchResponse.FetchableTopicResponse, ...]  # Answers per topic.
    # Addresses of the leaders named in the answers.
    node_endpoints: tuple[FetchResponse.NodeEndpoint, ...]  # versions 16+, tag 0

    class EpochEndOffset(Struct):
        """FetchResponse.EpochEndOffset: versions 12+."""

        __slots__ = ()
        epoch: int  # Largest epoch of the leader's log not above the fetcher's last fetched epoch.
        end_offset: int  # Where that epoch ends in the leader's log.

    class LeaderIdAndEpoch(Struct):
        """FetchResponse.LeaderIdAndEpoch: versions 12+."""

        __slots__ = ()
        leader_id: int  # Leader's node id; -1 if unknown.
        leader_epoch: int  # Latest epoch known.

    class SnapshotId(Struct):
        """FetchResponse.SnapshotId: versions 12+."""

        __slots__ = ()
        end_offset: int  # Offset the snapshot ends at.
        epoch: int  # Epoch of the snapshot's last record.

    class AbortedTransaction(Struct):
        """FetchResponse.AbortedTransaction: versions 4+."""

        __slots__ = ()
        producer_id: int  # Producer of the aborted transaction.
        first_offset: int  # First offset of the aborted transaction.

    class PartitionData(Struct):
        """FetchResponse.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int  # Partition index.
        error_code: int  # Outcome for this partition; 0 on success.
        high_watermark: int  # Leader's high watermark.
        last_stable_offset: int  # versions 4+; Offset below which every transaction is decided.
        log_start_offset: int  # versions 5+; First offset of the leader's log.
        # Set when the fetcher's log diverges: truncate to this epoch's end.
        diverging_epoch: FetchResponse.EpochEndOffset  # versions 12+, tag 0
        current_leader: FetchResponse.LeaderIdAndEpoch  # versions 12+, tag 1; The leader as this replica knows it.
        # Set when the fetch offset is below the log start: fetch this snapshot.
        snapshot_id: FetchResponse.SnapshotId  # versions 12+, tag 2
        # Aborted transactions in the records returned.
        aborted_transactions: tuple[FetchResponse.AbortedTransaction, ...] | None  # versions 4+
        preferred_read_replica: int  # versions 11+; Replica a consumer should read from next; -1 for the leader.
        records: bytes | None  # Record batches from the fetch offset on.

    class FetchableTopicResponse(Struct):
        """FetchResponse.FetchableTopicResponse: versions 0+."""

        __slots__ = ()
        topic: str  # versions 0-12; Topic name, up to v12.
        topic_id: uuid.UUID  # versions 13+; Topic id, from v13 on.
        partitions: tuple[FetchResponse.PartitionData, ...]  # Answers per partition.

    class NodeEndpoint(Struct):
        """FetchResponse.NodeEndpoint: versions 16+."""

        __slots__ = ()
        node_id: int  # Which node the address belongs to.
        host: str  # Host of that node.
        port: int  # Port of that node.
        rack: str | None  # Rack of that node, or null.


class FetchSnapshotRequest(Message):
    """FetchSnapshotRequest: the request of API key 59; versions 0-1, flexible 0+."""

    __slots__ = ()
    cluster_id: str | None  # tag 0; Cluster id the fetcher expects; null skips the check.
    replica_id: int  # Node id of the fetcher.
    max_bytes: int  # Cap on the bytes of the chunk returned.
    topics: tuple[FetchSnapshotRequest.TopicSnapshot, ...]  # Topics to read snapshots of.

    class SnapshotId(Struct):
        """FetchSnapshotRequest.SnapshotId: versions 0+."""

        __slots__ = ()
        end_offset: int  # Offset the snapshot ends at.
        epoch: int  # Epoch of the snapshot's last record.

    class PartitionSnapshot(Struct):
        """FetchSnapshotRequest.PartitionSnapshot: versions 0+."""

        __slots__ = ()
        partition: int  # Partition index.
        current_leader_epoch: int  # Leader epoch the fetcher knows.
        snapshot_id: FetchSnapshotRequest.SnapshotId  # Which snapshot.
        position: int  # Byte position to read from.
        replica_directory_id: uuid.UUID  # versions 1+, tag 0; Directory id of the fetcher's log copy.

    class TopicSnapshot(Struct):
        """FetchSnapshotRequest.TopicSnapshot: versions 0+."""

        __slots__ = ()
        name: str  # Topic name.
        partitions: tuple[FetchSnapshotRequest.PartitionSnapshot, ...]  # Partitions to read snapshots of.


class FetchSnapshotResponse(Message):
    """FetchSnapshotResponse: the response of API key 59; versions 0-1, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int  # Milliseconds the answer was held back by a quota; 0 if none.
    error_code: int  # Request-wide error; 0 on success.
    topics: tuple[FetchSnapshotResponse.TopicSnapshot, ...]  # Answers per topic.
    # Addresses of the leaders named in the answers.
    node_endpoints: tuple[FetchSnapshotResponse.NodeEndpoint, ...]  # versions 1+, tag 0

    class SnapshotId(Struct):
        """FetchSnapshotResponse.SnapshotId: versions 0+."""

        __slots__ = ()
        end_offset: int  # Offset the snapshot ends at.
        epoch: int  # Epoch of the snapshot's last record.

    class LeaderIdAndEpoch(Struct):
        """FetchSnapshotResponse.LeaderIdAndEpoch: versions 0+."""

        __slots__ = ()
        leader_id: int  # Leader's node id; -1 if unknown (Kafka's schema gives no default: absent reads as 0).
        leader_epoch: int  # Latest epoch known; -1 if unknown.

    class PartitionSnapshot(Struct):
        """FetchSnapshotResponse.PartitionSnapshot: versions 0+."""

        __slots__ = ()
        # Partition index.
        index: int  # type: ignore[assignment]  # hides tuple.index
        error_code: int  # Outcome for this partition; 0 on success.
        snapshot_id: FetchSnapshotResponse.SnapshotId  # Which snapshot the chunk is of.
        current_leader: FetchSnapshotResponse.LeaderIdAndEpoch  # tag 0; The leader as this replica knows it.
        size: int  # Total size of the snapshot in bytes.
        position: int  # Byte position the chunk starts at.
        unaligned_records: bytes  # The chunk's bytes.

    class TopicSnapshot(Struct):
        """FetchSnapshotResponse.TopicSnapshot: versions 0+."""

        __slots__ = ()
        name: str  # Topic name.
        partitions: tuple[FetchSnapshotResponse.PartitionSnapshot, ...]  # Answers per partition.

    class NodeEndpoint(Struct):
        """FetchSnapshotResponse.NodeEndpoint: versions 1+."""

        __slots__ = ()
        node_id: int  # Which node the address belongs to.
        host: str  # Host of that node.
        port: int  # Port of that node.


class FindCoordinatorRequest(Message):
    """FindCoordinatorRequest: the request of API key 10; versions 0-6, flexible 3+."""

    __slots__ = ()
    key: str  # versions 0-3; Key.
    key_type: int  # versions 1+; Key type.
    coordinator_keys: tuple[str, ...]  # versions 4+; Coordinator keys.


class FindCoordinatorResponse(Message):
    """FindCoordinatorResponse: the response of API key 10; versions 0-6, flexible 3+."""

    __slots__ = ()
    throttle_time_ms: int  # versions 1+; Throttle time (ms).
    error_code: int  # versions 0-3; Error code.
    error_message: str | None  # versions 1-3; Error message.
    node_id: int  # versions 0-3; Node id.
    host: str  # versions 0-3; Host.
    port: int  # versions 0-3; Port.
    coordinators: tuple[FindCoordinatorResponse.Coordinator, ...]  # versions 4+; Coordinators.

    class Coordinator(Struct):
        """FindCoordinatorResponse.Coordinator: versions 4+."""

        __slots__ = ()
        key: str  # Key.
        node_id: int  # Node id.
        host: str  # Host.
        port: int  # Port.
        error_code: int  # Error code.
        error_message: str | None  # Error message.


class HeartbeatRequest(Message):
    """HeartbeatRequest: the request of API key 12; versions 0-4, flexible 4+."""

    __slots__ = ()
    group_id: str  # Group id.
    generation_id: int  # Generation id.
    member_id: str  # Member id.
    group_instance_id: str | None  # versions 3+; Group instance id.


class HeartbeatResponse(Message):
    """HeartbeatResponse: the response of API key 12; versions 0-4, flexible 4+."""

    __slots__ = ()
    throttle_time_ms: int  # versions 1+; Throttle time (ms).
    error_code: int  # Error code.


class IncrementalAlterConfigsRequest(Message):
    """IncrementalAlterConfigsRequest: the request of API key 44; versions 0-1, flexible 1+."""

    __slots__ = ()
    resources: tuple[IncrementalAlterConfigsRequest.AlterConfigsResource, ...]  # Resources whose configs change.
    validate_only: bool  # When set, check the changes and report errors but apply nothing.

    class AlterableConfig(Struct):
        """IncrementalAlterConfigsRequest.AlterableConfig: versions 0+."""

        __slots__ = ()
        name: str  # Config key to change.
        config_operation: int  # Operation to apply: 0 SET, 1 DELETE, 2 APPEND, 3 SUBTRACT.
        value: str | None  # Operand of the operation; null for DELETE.

    class AlterConfigsResource(Struct):
        """IncrementalAlterConfigsRequest.AlterConfigsResource: versions 0+."""

        __slots__ = ()
        # Kind of resource (2 = topic, 4 = broker, 8 = broker logger, 16 = client metrics, 32 = group).
        resource_type: int
        resource_name: str  # Identifier of the resource; an empty broker name targets the cluster-wide default.
        configs: tuple[IncrementalAlterConfigsRequest.AlterableConfig, ...]  # Changes to make to this resource.


class IncrementalAlterConfigsResponse(Message):
    """IncrementalAlterConfigsResponse: the response of API key 44; versions 0-1, flexible 1+."""

    __slots__ = ()
    throttle_time_ms: int  # Milliseconds the response was held back by quota enforcement; 0 when no quota was hit.
    # One outcome per resource in the request.
    responses: tuple[IncrementalAlterConfigsResponse.AlterConfigsResourceResponse, ...]

    class AlterConfigsResourceResponse(Struct):
        """IncrementalAlterConfigsResponse.AlterConfigsResourceResponse: versions 0+."""

        __slots__ = ()
        error_code: int  # Outcome for this resource; 0 on success.
        error_message: str | None  # Explanation of the failure; null on success.
        resource_type: int  # Kind of resource this outcome is about.
        resource_name: str  # Identifier of the resource this outcome is about.


class InitProducerIdRequest(Message):
    """InitProducerIdRequest: the request of API key 22; versions 0-5, flexible 2+."""

    __slots__ = ()
    transactional_id: str | None  # Transactional id; null for an idempotent producer outside transactions.
    # How long an idle transaction of this producer may stay open before it is aborted (transactional producers only).
    transaction_timeout_ms: int
    producer_id: int  # versions 3+; The producer id held so far, to bump its epoch; -1 for a new producer.
    producer_epoch: int  # versions 3+; The epoch held so far with that id; -1 for a new producer.


class InitProducerIdResponse(Message):
    """InitProducerIdResponse: the response of API key 22; versions 0-5, flexible 2+."""

    __slots__ = ()
    throttle_time_ms: int  # Milliseconds the request was held back by a quota; 0 when none applied.
    error_code: int  # Why no id was handed out; 0 when one was.
    producer_id: int  # The producer id.
    producer_epoch: int  # The epoch to write with that id.


class JoinGroupRequest(Message):
    """JoinGroupRequest: the request of API key 11; versions 0-9, flexible 6+."""

    __slots__ = ()
    group_id: str  # Group id.
    session_timeout_ms: int  # Session timeout (ms).
    rebalance_timeout_ms: int  # versions 1+; Rebalance timeout (ms).
    member_id: str  # Member id.
    group_instance_id: str | None  # versions 5+; Group instance id.
    protocol_type: str  # Protocol type.
    protocols: tuple[JoinGroupRequest.JoinGroupRequestProtocol, ...]  # Protocols.
    reason: str | None  # versions 8+; Reason.

    class JoinGroupRequestProtocol(Struct):
        """JoinGroupRequest.JoinGroupRequestProtocol: versions 0+."""

        __slots__ = ()
        name: str  # Name.
        metadata: bytes  # Metadata.


class JoinGroupResponse(Message):
    """JoinGroupResponse: the response of API key 11; versions 0-9, flexible 6+."""

    __slots__ = ()
    throttle_time_ms: int  # versions 2+; Throttle time (ms).
    error_code: int  # Error code.
    generation_id: int  # Generation id.
    protocol_type: str | None  # versions 7+; Protocol type.
    protocol_name: str | None  # nullable 7+; Protocol name.
    leader: str  # Leader.
    skip_assignment: bool  # versions 9+; Skip assignment.
    member_id: str  # Member id.
    members: tuple[JoinGroupResponse.JoinGroupResponseMember, ...]  # Members.

    class JoinGroupResponseMember(Struct):
        """JoinGroupResponse.JoinGroupResponseMember: versions 0+."""

        __slots__ = ()
        member_id: str  # Member id.
        group_instance_id: str | None  # versions 5+; Group instance id.
        metadata: bytes  # Metadata.


class LeaderAndIsrRequest(Message):
    """LeaderAndIsrRequest: the request of API key 4; versions 0-7, flexible 4+."""

    __slots__ = ()
    controller_id: int  # Id of the controller sending this request.
    # True when ControllerId names a KRaft controller (ZooKeeper-to-KRaft migration, KIP-866).
    is_k_raft_controller: bool  # versions 7+
    controller_epoch: int  # Epoch of the sending controller, used to reject stale controllers.
    broker_epoch: int  # versions 2+; Epoch of the target broker as known to the controller; -1 if not known.
    # Request kind: 0 unknown, 1 incremental (some topics), 2 full (every topic the broker hosts).
    type: int  # versions 5+
    # Flat list of partition states, each carrying its own topic name (v0-1 only).
    ungrouped_partition_states: tuple[LeaderAndIsrRequest.LeaderAndIsrPartitionState, ...]  # versions 0-1
    # Partition states grouped under their topic (v2+).
    topic_states: tuple[LeaderAndIsrRequest.LeaderAndIsrTopicState, ...]  # versions 2+
    # Brokers that lead at least one of the listed partitions, with their addresses.
    live_leaders: tuple[LeaderAndIsrRequest.LeaderAndIsrLiveLeader, ...]

    class LeaderAndIsrPartitionState(Struct):
        """LeaderAndIsrRequest.LeaderAndIsrPartitionState: versions 0+."""

        __slots__ = ()
        topic_name: str  # versions 0-1; Topic this partition belongs to; carried here only in v0-1.
        partition_index: int  # Partition number within the topic.
        controller_epoch: int  # Controller epoch in which this state was last written.
        leader: int  # Broker id that should lead the partition.
        leader_epoch: int  # Leader epoch the broker must adopt for this partition.
        isr: tuple[int, ...]  # Replicas judged caught up with the leader (in-sync set).
        # Version counter of the partition state, bumped on every change (the ZooKeeper zkVersion).
        partition_epoch: int
        replicas: tuple[int, ...]  # Full assigned replica list, in preference order.
        # Replicas a running reassignment is adding; empty when there is none.
        adding_replicas: tuple[int, ...]  # versions 3+
        # Replicas a running reassignment will drop; empty when there is none.
        removing_replicas: tuple[int, ...]  # versions 3+
        is_new: bool  # versions 1+; True when the replica is newly created, so a missing log on the broker is expected.
        leader_recovery_state: int  # versions 6+; 0 = recovered; 1 = still recovering after an unclean election.

    class LeaderAndIsrTopicState(Struct):
        """LeaderAndIsrRequest.LeaderAndIsrTopicState: versions 2+."""

        __slots__ = ()
        topic_name: str  # Topic that the grouped states belong to.
        topic_id: uuid.UUID  # versions 5+; Topic UUID (KIP-516).
        # Leader/ISR assignment for every listed partition of the topic.
        partition_states: tuple[LeaderAndIsrRequest.LeaderAndIsrPartitionState, ...]

    class LeaderAndIsrLiveLeader(Struct):
        """LeaderAndIsrRequest.LeaderAndIsrLiveLeader: versions 0+."""

        __slots__ = ()
        broker_id: int  # Which broker this address entry describes.
        host_name: str  # Host on which that broker listens.
        port: int  # Port on which that broker listens.


class LeaderAndIsrResponse(Message):
    """LeaderAndIsrResponse: the response of API key 4; versions 0-7, flexible 4+."""

    __slots__ = ()
    error_code: int  # Request-wide error; 0 when the request as a whole succeeded.
    # Flat per-partition results (v0-4).
    partition_errors: tuple[LeaderAndIsrResponse.LeaderAndIsrPartitionError, ...]  # versions 0-4
    # Per-partition results grouped by topic id (v5+).
    topics: tuple[LeaderAndIsrResponse.LeaderAndIsrTopicError, ...]  # versions 5+

    class LeaderAndIsrPartitionError(Struct):
        """LeaderAndIsrResponse.LeaderAndIsrPartitionError: versions 0+."""

        __slots__ = ()
        topic_name: str  # versions 0-4; Topic of this partition (v0-4 only).
        partition_index: int  # Partition number within the topic.
        error_code: int  # Outcome for this partition; 0 on success.

    class LeaderAndIsrTopicError(Struct):
        """LeaderAndIsrResponse.LeaderAndIsrTopicError: versions 5+."""

        __slots__ = ()
        topic_id: uuid.UUID  # UUID of the topic these results are for.
        # Results for this topic's partitions.
        partition_errors: tuple[LeaderAndIsrResponse.LeaderAndIsrPartitionError, ...]


class LeaveGroupRequest(Message):
    """LeaveGroupRequest: the request of API key 13; versions 0-5, flexible 4+."""

    __slots__ = ()
    group_id: str  # Group id.
    member_id: str  # versions 0-2; Member id.
    members: tuple[LeaveGroupRequest.MemberIdentity, ...]  # versions 3+; Members.

    class MemberIdentity(Struct):
        """LeaveGroupRequest.MemberIdentity: versions 3+."""

        __slots__ = ()
        member_id: str  # Member id.
        group_instance_id: str | None  # Group instance id.
        reason: str | None  # versions 5+; Reason.


class LeaveGroupResponse(Message):
    """LeaveGroupResponse: the response of API key 13; versions 0-5, flexible 4+."""

    __slots__ = ()
    throttle_time_ms: int  # versions 1+; Throttle time (ms).
    error_code: int  # Error code.
    members: tuple[LeaveGroupResponse.MemberResponse, ...]  # versions 3+; Members.

    class MemberResponse(Struct):
        """LeaveGroupResponse.MemberResponse: versions 3+."""

        __slots__ = ()
        member_id: str  # Member id.
        group_instance_id: str | None  # Group instance id.
        error_code: int  # Error code.


class ListConfigResourcesRequest(Message):
    """ListConfigResourcesRequest: the request of API key 74; versions 0-1, flexible 0+."""

    __slots__ = ()
    # Config resource type ids to list; empty lists every type the broker supports.
    resource_types: tuple[int, ...]  # versions 1+


class ListConfigResourcesResponse(Message):
    """ListConfigResourcesResponse: the response of API key 74; versions 0-1, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int  # Milliseconds the response was held back by quota enforcement; 0 when no quota was hit.
    error_code: int  # Outcome of the request; 0 on success.
    config_resources: tuple[ListConfigResourcesResponse.ConfigResource, ...]  # One entry per resource found.

    class ConfigResource(Struct):
        """ListConfigResourcesResponse.ConfigResource: versions 0+."""

        __slots__ = ()
        resource_name: str  # Name of the resource (a topic name, a broker id, ...).
        resource_type: int  # versions 1+; Config resource type id of the resource.


class ListGroupsRequest(Message):
    """ListGroupsRequest: the request of API key 16; versions 0-5, flexible 3+."""

    __slots__ = ()
    states_filter: tuple[str, ...]  # versions 4+; States filter.
    types_filter: tuple[str, ...]  # versions 5+; Types filter.


class ListGroupsResponse(Message):
    """ListGroupsResponse: the response of API key 16; versions 0-5, flexible 3+."""

    __slots__ = ()
    throttle_time_ms: int  # versions 1+; Throttle time (ms).
    error_code: int  # Error code.
    groups: tuple[ListGroupsResponse.ListedGroup, ...]  # Groups.

    class ListedGroup(Struct):
        """ListGroupsResponse.ListedGroup: versions 0+."""

        __slots__ = ()
        group_id: str  # Group id.
        protocol_type: str  # Protocol type.
        group_state: str  # versions 4+; Group state.
        group_type: str  # versions 5+; Group type.


class ListOffsetsRequest(Message):
    """ListOffsetsRequest: the request of API key 2; versions 1-11, flexible 6+."""

    __slots__ = ()
    replica_id: int  # Broker id of a replica asking; -1 for a client.
    # 0 (read uncommitted): offsets up to the high watermark; 1 (read committed): up to the last stable offset.
    isolation_level: int  # versions 2+
    topics: tuple[ListOffsetsRequest.ListOffsetsTopic, ...]  # Topics to look up.
    timeout_ms: int  # versions 10+; How long a lookup in remote (tiered) storage may take, in milliseconds.

    class ListOffsetsPartition(Struct):
        """ListOffsetsRequest.ListOffsetsPartition: versions 0+."""

        __slots__ = ()
        partition_index: int  # Partition index.
        # The leader epoch the client knows, checked against the leader's; -1 skips the check.
        current_leader_epoch: int  # versions 4+
        # What to look up: a timestamp in ms, or -1 latest, -2 earliest, -3 max timestamp, -4 earliest local, -5 latest
        # tiered.
        timestamp: int

    class ListOffsetsTopic(Struct):
        """ListOffsetsRequest.ListOffsetsTopic: versions 0+."""

        __slots__ = ()
        name: str  # Topic name.
        partitions: tuple[ListOffsetsRequest.ListOffsetsPartition, ...]  # Partitions of the topic to look up.


class ListOffsetsResponse(Message):
    """ListOffsetsResponse: the response of API key 2; versions 1-11, flexible 6+."""

    __slots__ = ()
    throttle_time_ms: int  # versions 2+; Milliseconds the request was held back by a quota; 0 when none applied.
    topics: tuple[ListOffsetsResponse.ListOffsetsTopicResponse, ...]  # Results per topic.

    class ListOffsetsPartitionResponse(Struct):
        """ListOffsetsResponse.ListOffsetsPartitionResponse: versions 0+."""

        __slots__ = ()
        partition_index: int  # Partition index.
        error_code: int  # Why the lookup failed; 0 when it succeeded.
        timestamp: int  # versions 1+; Timestamp of the record at the offset found; -1 when none applies.
        offset: int  # versions 1+; The offset found; -1 when there is none.
        leader_epoch: int  # versions 4+; Leader epoch of the record at that offset; -1 when unknown.

    class ListOffsetsTopicResponse(Struct):
        """ListOffsetsResponse.ListOffsetsTopicResponse: versions 0+."""

        __slots__ = ()
        name: str  # Topic name.
        partitions: tuple[ListOffsetsResponse.ListOffsetsPartitionResponse, ...]  # Results per partition.


class ListPartitionReassignmentsRequest(Message):
    """ListPartitionReassignmentsRequest: the request of API key 46; versions 0, flexible 0+."""

    __slots__ = ()
    timeout_ms: int  # Upper bound in ms the caller will wait for the answer.
    # Topics and partitions to look at; null lists every ongoing reassignment in the cluster.
    topics: tuple[ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics, ...] | None

    class ListPartitionReassignmentsTopics(Struct):
        """ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics: versions 0+."""

        __slots__ = ()
        name: str  # Topic to look at.
        partition_indexes: tuple[int, ...]  # Partitions of that topic to look at.


class ListPartitionReassignmentsResponse(Message):
    """ListPartitionReassignmentsResponse: the response of API key 46; versions 0, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int  # Milliseconds the response was held back by quota enforcement; 0 when no quota was hit.
    error_code: int  # Request-wide error; 0 when the listing succeeded.
    error_message: str | None  # Text explaining the request-wide error; null if there is none.
    # Topics with at least one partition being reassigned.
    topics: tuple[ListPartitionReassignmentsResponse.OngoingTopicReassignment, ...]

    class OngoingPartitionReassignment(Struct):
        """ListPartitionReassignmentsResponse.OngoingPartitionReassignment: versions 0+."""

        __slots__ = ()
        partition_index: int  # Which partition of the topic this entry describes.
        replicas: tuple[int, ...]  # Full replica list right now, including replicas still being added or removed.
        adding_replicas: tuple[int, ...]  # Replicas the reassignment is bringing in.
        removing_replicas: tuple[int, ...]  # Replicas that will be dropped once the reassignment finishes.

    class OngoingTopicReassignment(Struct):
        """ListPartitionReassignmentsResponse.OngoingTopicReassignment: versions 0+."""

        __slots__ = ()
        name: str  # Topic these entries belong to.
        # Partitions of this topic that are being reassigned.
        partitions: tuple[ListPartitionReassignmentsResponse.OngoingPartitionReassignment, ...]


class MetadataRequest(Message):
    """MetadataRequest: the request of API key 3; versions 0-13, flexible 9+."""

    __slots__ = ()
    # Topics wanted. In v0 an empty array means every topic; from v1 null means every topic and empty means none.
    topics: tuple[MetadataRequest.MetadataRequestTopic, ...] | None  # nullable 1+
    # Lets the broker create missing topics, provided its own auto-create setting allows it.
    allow_auto_topic_creation: bool  # versions 4+
    # Ask for the caller's cluster-level permission bitmask (v8-10 only).
    include_cluster_authorized_operations: bool  # versions 8-10
    # Ask for the caller's permission bitmask on each returned topic.
    include_topic_authorized_operations: bool  # versions 8+

    class MetadataRequestTopic(Struct):
        """MetadataRequest.MetadataRequestTopic: versions 0+."""

        __slots__ = ()
        topic_id: uuid.UUID  # versions 10+; Id of a wanted topic (v10+); all zeros when asking by name.
        name: str | None  # nullable 10+; Name of a wanted topic; null from v10 when asking by id.


class MetadataResponse(Message):
    """MetadataResponse: the response of API key 3; versions 0-13, flexible 9+."""

    __slots__ = ()
    # Milliseconds the response was held back by quota enforcement; 0 when no quota was hit.
    throttle_time_ms: int  # versions 3+
    brokers: tuple[MetadataResponse.MetadataResponseBroker, ...]  # Brokers clients may connect to.
    cluster_id: str | None  # versions 2+; Identifier of the cluster that answered; may be null.
    # Controller id as the responder reports it (a KRaft broker gives a random live broker id); -1 if unknown.
    controller_id: int  # versions 1+
    topics: tuple[MetadataResponse.MetadataResponseTopic, ...]  # One entry per reported topic.
    # Bitmask of cluster operations the caller may perform (v8-10); INT32_MIN when not requested.
    cluster_authorized_operations: int  # versions 8-10
    error_code: int  # versions 13+; Request-wide error (v13+), for a request refused as a whole; 0 otherwise.

    class MetadataResponseBroker(Struct):
        """MetadataResponse.MetadataResponseBroker: versions 0+."""

        __slots__ = ()
        node_id: int  # Numeric identifier clients use to refer to this broker.
        host: str  # Host name clients should connect to.
        port: int  # TCP port clients should connect to.
        rack: str | None  # versions 1+; Rack label of this broker, or null when none is configured.

    class MetadataResponsePartition(Struct):
        """MetadataResponse.MetadataResponsePartition: versions 0+."""

        __slots__ = ()
        error_code: int  # Outcome for this partition, e.g. LEADER_NOT_AVAILABLE; 0 on success.
        partition_index: int  # Which partition of the topic this entry describes.
        leader_id: int  # Broker currently leading the partition, or -1 if it has no leader.
        leader_epoch: int  # versions 7+; Epoch of the current leadership; -1 if unknown.
        # Every broker assigned a replica of the partition (the merged list during a reassignment).
        replica_nodes: tuple[int, ...]
        isr_nodes: tuple[int, ...]  # Replicas currently caught up with the leader.
        offline_replicas: tuple[int, ...]  # versions 5+; Assigned replicas whose log directory is unavailable.

    class MetadataResponseTopic(Struct):
        """MetadataResponse.MetadataResponseTopic: versions 0+."""

        __slots__ = ()
        error_code: int  # Outcome for this topic; 0 on success.
        # Topic name; null (v12+) only for an unknown topic requested by id, never null on success.
        name: str | None  # nullable 12+
        # Topic id; all zeros for an unknown topic requested by name, never zero on success.
        topic_id: uuid.UUID  # versions 10+
        is_internal: bool  # versions 1+; Whether this is an internal topic such as __consumer_offsets.
        # Leadership and replica state of each partition of the topic.
        partitions: tuple[MetadataResponse.MetadataResponsePartition, ...]
        # Bitmask of topic operations the caller may perform; INT32_MIN when not requested.
        topic_authorized_operations: int  # versions 8+


class OffsetCommitRequest(Message):
    """OffsetCommitRequest: the request of API key 8; versions 2-10, flexible 8+."""

    __slots__ = ()
    group_id: str  # Group id.
    generation_id_or_member_epoch: int  # Generation id or member epoch.
    member_id: str  # Member id.
    group_instance_id: str | None  # versions 7+; Group instance id.
    retention_time_ms: int  # versions 2-4; Retention time (ms).
    topics: tuple[OffsetCommitRequest.OffsetCommitRequestTopic, ...]  # Topics.

    class OffsetCommitRequestPartition(Struct):
        """OffsetCommitRequest.OffsetCommitRequestPartition: versions 0+."""

        __slots__ = ()
        partition_index: int  # Partition index.
        committed_offset: int  # Committed offset.
        committed_leader_epoch: int  # versions 6+; Committed leader epoch.
        committed_metadata: str | None  # Committed metadata.

    class OffsetCommitRequestTopic(Struct):
        """OffsetCommitRequest.OffsetCommitRequestTopic: versions 0+."""

        __slots__ = ()
        name: str  # versions 0-9; Name.
        topic_id: uuid.UUID  # versions 10+; Topic id.
        partitions: tuple[OffsetCommitRequest.OffsetCommitRequestPartition, ...]  # Partitions.


class OffsetCommitResponse(Message):
    """OffsetCommitResponse: the response of API key 8; versions 2-10, flexible 8+."""

    __slots__ = ()
    throttle_time_ms: int  # versions 3+; Throttle time (ms).
    topics: tuple[OffsetCommitResponse.OffsetCommitResponseTopic, ...]  # Topics.

    class OffsetCommitResponsePartition(Struct):
        """OffsetCommitResponse.OffsetCommitResponsePartition: versions 0+."""

        __slots__ = ()
        partition_index: int  # Partition index.
        error_code: int  # Error code.

    class OffsetCommitResponseTopic(Struct):
        """OffsetCommitResponse.OffsetCommitResponseTopic: versions 0+."""

        __slots__ = ()
        name: str  # versions 0-9; Name.
        topic_id: uuid.UUID  # versions 10+; Topic id.
        partitions: tuple[OffsetCommitResponse.OffsetCommitResponsePartition, ...]  # Partitions.


class OffsetDeleteRequest(Message):
    """OffsetDeleteRequest: the request of API key 47; versions 0."""

    __slots__ = ()
    group_id: str  # Group id.
    topics: tuple[OffsetDeleteRequest.OffsetDeleteRequestTopic, ...]  # Topics.

    class OffsetDeleteRequestPartition(Struct):
        """OffsetDeleteRequest.OffsetDeleteRequestPartition: versions 0+."""

        __slots__ = ()
        partition_index: int  # Partition index.

    class OffsetDeleteRequestTopic(Struct):
        """OffsetDeleteRequest.OffsetDeleteRequestTopic: versions 0+."""

        __slots__ = ()
        name: str  # Name.
        partitions: tuple[OffsetDeleteRequest.OffsetDeleteRequestPartition, ...]  # Partitions.


class OffsetDeleteResponse(Message):
    """OffsetDeleteResponse: the response of API key 47; versions 0."""

    __slots__ = ()
    error_code: int  # Error code.
    throttle_time_ms: int  # Throttle time (ms).
    topics: tuple[OffsetDeleteResponse.OffsetDeleteResponseTopic, ...]  # Topics.

    class OffsetDeleteResponsePartition(Struct):
        """OffsetDeleteResponse.OffsetDeleteResponsePartition: versions 0+."""

        __slots__ = ()
        partition_index: int  # Partition index.
        error_code: int  # Error code.

    class OffsetDeleteResponseTopic(Struct):
        """OffsetDeleteResponse.OffsetDeleteResponseTopic: versions 0+."""

        __slots__ = ()
        name: str  # Name.
        partitions: tuple[OffsetDeleteResponse.OffsetDeleteResponsePartition, ...]  # Partitions.


class OffsetFetchRequest(Message):
    """OffsetFetchRequest: the request of API key 9; versions 1-10, flexible 6+."""

    __slots__ = ()
    group_id: str  # versions 0-7; Group id.
    topics: tuple[OffsetFetchRequest.OffsetFetchRequestTopic, ...] | None  # versions 0-7, nullable 2-7; Topics.
    groups: tuple[OffsetFetchRequest.OffsetFetchRequestGroup, ...]  # versions 8+; Groups.
    require_stable: bool  # versions 7+; Require stable.

    class OffsetFetchRequestTopic(Struct):
        """OffsetFetchRequest.OffsetFetchRequestTopic: versions 0-7."""

        __slots__ = ()
        name: str  # Name.
        partition_indexes: tuple[int, ...]  # Partition indexes.

    class OffsetFetchRequestTopics(Struct):
        """OffsetFetchRequest.OffsetFetchRequestTopics: versions 8+."""

        __slots__ = ()
        name: str  # versions 8-9; Name.
        topic_id: uuid.UUID  # versions 10+; Topic id.
        partition_indexes: tuple[int, ...]  # Partition indexes.

    class OffsetFetchRequestGroup(Struct):
        """OffsetFetchRequest.OffsetFetchRequestGroup: versions 8+."""

        __slots__ = ()
        group_id: str  # Group id.
        member_id: str | None  # versions 9+; Member id.
        member_epoch: int  # versions 9+; Member epoch.
        topics: tuple[OffsetFetchRequest.OffsetFetchRequestTopics, ...] | None  # Topics.


class OffsetFetchResponse(Message):
    """OffsetFetchResponse: the response of API key 9; versions 1-10, flexible 6+."""

    __slots__ = ()
    throttle_time_ms: int  # versions 3+; Throttle time (ms).
    topics: tuple[OffsetFetchResponse.OffsetFetchResponseTopic, ...]  # versions 0-7; Topics.
    error_code: int  # versions 2-7; Error code.
    groups: tuple[OffsetFetchResponse.OffsetFetchResponseGroup, ...]  # versions 8+; Groups.

    class OffsetFetchResponsePartition(Struct):
        """OffsetFetchResponse.OffsetFetchResponsePartition: versions 0-7."""

        __slots__ = ()
        partition_index: int  # Partition index.
        committed_offset: int  # Committed offset.
        committed_leader_epoch: int  # versions 5-7; Committed leader epoch.
        metadata: str | None  # Metadata.
        error_code: int  # Error code.

    class OffsetFetchResponseTopic(Struct):
        """OffsetFetchResponse.OffsetFetchResponseTopic: versions 0-7."""

        __slots__ = ()
        name: str  # Name.
        partitions: tuple[OffsetFetchResponse.OffsetFetchResponsePartition, ...]  # Partitions.

    class OffsetFetchResponsePartitions(Struct):
        """OffsetFetchResponse.OffsetFetchResponsePartitions: versions 8+."""

        __slots__ = ()
        partition_index: int  # Partition index.
        committed_offset: int  # Committed offset.
        committed_leader_epoch: int  # Committed leader epoch.
        metadata: str | None  # Metadata.
        error_code: int  # Error code.

    class OffsetFetchResponseTopics(Struct):
        """OffsetFetchResponse.OffsetFetchResponseTopics: versions 8+."""

        __slots__ = ()
        name: str  # versions 8-9; Name.
        topic_id: uuid.UUID  # versions 10+; Topic id.
        partitions: tuple[OffsetFetchResponse.OffsetFetchResponsePartitions, ...]  # Partitions.

    class OffsetFetchResponseGroup(Struct):
        """OffsetFetchResponse.OffsetFetchResponseGroup: versions 8+."""

        __slots__ = ()
        group_id: str  # Group id.
        topics: tuple[OffsetFetchResponse.OffsetFetchResponseTopics, ...]  # Topics.
        error_code: int  # Error code.


class OffsetForLeaderEpochRequest(Message):
    """OffsetForLeaderEpochRequest: the request of API key 23; versions 2-4, flexible 4+."""

    __slots__ = ()
    # Broker id of a following replica; -1 for a consumer, -2 (the default) for a debugging client.
    replica_id: int  # versions 3+
    topics: tuple[OffsetForLeaderEpochRequest.OffsetForLeaderTopic, ...]  # Topics asked about.

    class OffsetForLeaderPartition(Struct):
        """OffsetForLeaderEpochRequest.OffsetForLeaderPartition: versions 0+."""

        __slots__ = ()
        partition: int  # Partition index.
        # Leader epoch the asker knows, for fencing: newer than the broker's gets UNKNOWN_LEADER_EPOCH, older
        # FENCED_LEADER_EPOCH; -1 skips the check.
        current_leader_epoch: int  # versions 2+
        leader_epoch: int  # Epoch whose end offset is wanted.

    class OffsetForLeaderTopic(Struct):
        """OffsetForLeaderEpochRequest.OffsetForLeaderTopic: versions 0+."""

        __slots__ = ()
        topic: str  # Topic name.
        partitions: tuple[OffsetForLeaderEpochRequest.OffsetForLeaderPartition, ...]  # Partitions asked about.


class OffsetForLeaderEpochResponse(Message):
    """OffsetForLeaderEpochResponse: the response of API key 23; versions 2-4, flexible 4+."""

    __slots__ = ()
    throttle_time_ms: int  # Milliseconds the answer was held back by a quota; 0 when none applied.
    topics: tuple[OffsetForLeaderEpochResponse.OffsetForLeaderTopicResult, ...]  # Answers per topic.

    class EpochEndOffset(Struct):
        """OffsetForLeaderEpochResponse.EpochEndOffset: versions 0+."""

        __slots__ = ()
        error_code: int  # 0, or why this partition has no answer.
        partition: int  # Partition index.
        leader_epoch: int  # versions 1+; Largest epoch of the leader's log not above the one asked for; -1 if none.
        end_offset: int  # Offset where that epoch ended (its next epoch's first offset, or the log end); -1 if none.

    class OffsetForLeaderTopicResult(Struct):
        """OffsetForLeaderEpochResponse.OffsetForLeaderTopicResult: versions 0+."""

        __slots__ = ()
        topic: str  # Topic name.
        partitions: tuple[OffsetForLeaderEpochResponse.EpochEndOffset, ...]  # Answers per partition.


class ProduceRequest(Message):
    """ProduceRequest: the request of API key 0; versions 3-13, flexible 9+."""

    __slots__ = ()
    transactional_id: str | None  # Transactional id of the producer; null for a producer outside transactions.
    # Replicas that must have the records before the answer: 0 none (no answer at all), 1 the leader, -1 every ISR
    # member.
    acks: int
    timeout_ms: int  # How long the leader may wait for the acknowledgements, in milliseconds.
    topic_data: tuple[ProduceRequest.TopicProduceData, ...]  # Records per topic.

    class PartitionProduceData(Struct):
        """ProduceRequest.PartitionProduceData: versions 0+."""

        __slots__ = ()
        # Partition written to.
        index: int  # type: ignore[assignment]  # hides tuple.index
        records: bytes | None  # Record batches to append.

    class TopicProduceData(Struct):
        """ProduceRequest.TopicProduceData: versions 0+."""

        __slots__ = ()
        name: str  # versions 0-12; Topic written to.
        topic_id: uuid.UUID  # versions 13+; Id of the topic written to.
        partition_data: tuple[ProduceRequest.PartitionProduceData, ...]  # Records per partition of the topic.


class ProduceResponse(Message):
    """ProduceResponse: the response of API key 0; versions 3-13, flexible 9+."""

    __slots__ = ()
    responses: tuple[ProduceResponse.TopicProduceResponse, ...]  # Results per topic.
    throttle_time_ms: int  # Milliseconds the request was held back by a quota; 0 when none applied.
    # Addresses of the leaders named in CurrentLeader.
    node_endpoints: tuple[ProduceResponse.NodeEndpoint, ...]  # versions 10+, tag 0

    class BatchIndexAndErrorMessage(Struct):
        """ProduceResponse.BatchIndexAndErrorMessage: versions 8+."""

        __slots__ = ()
        batch_index: int  # Position of the record within its batch.
        batch_index_error_message: str | None  # What is wrong with that record.

    class LeaderIdAndEpoch(Struct):
        """ProduceResponse.LeaderIdAndEpoch: versions 10+."""

        __slots__ = ()
        leader_id: int  # Leader's broker id; -1 when there is none.
        leader_epoch: int  # That leader's epoch.

    class PartitionProduceResponse(Struct):
        """ProduceResponse.PartitionProduceResponse: versions 0+."""

        __slots__ = ()
        # Partition written to.
        index: int  # type: ignore[assignment]  # hides tuple.index
        error_code: int  # Why the batches were refused; 0 when they were appended.
        base_offset: int  # Offset given to the first record appended.
        # The leader's clock at the append when the topic uses LogAppendTime; -1 under CreateTime.
        log_append_time_ms: int  # versions 2+
        log_start_offset: int  # versions 5+; First offset the partition still holds.
        # Records that made their batch be refused.
        record_errors: tuple[ProduceResponse.BatchIndexAndErrorMessage, ...]  # versions 8+
        error_message: str | None  # versions 8+; A summary of why the batches were refused.
        # The partition's leader as the answering broker knows it, to write to next.
        current_leader: ProduceResponse.LeaderIdAndEpoch  # versions 10+, tag 0

    class TopicProduceResponse(Struct):
        """ProduceResponse.TopicProduceResponse: versions 0+."""

        __slots__ = ()
        name: str  # versions 0-12; Topic written to.
        topic_id: uuid.UUID  # versions 13+; Id of the topic written to.
        partition_responses: tuple[ProduceResponse.PartitionProduceResponse, ...]  # Results per partition of the topic.

    class NodeEndpoint(Struct):
        """ProduceResponse.NodeEndpoint: versions 10+."""

        __slots__ = ()
        node_id: int  # Broker id.
        host: str  # Its host.
        port: int  # Its port.
        rack: str | None  # Its rack; null when it has none.


class RemoveRaftVoterRequest(Message):
    """RemoveRaftVoterRequest: the request of API key 81; versions 0, flexible 0+."""

    __slots__ = ()
    cluster_id: str | None  # Cluster id of the caller; null skips the check.
    voter_id: int  # Node id of the voter to remove.
    voter_directory_id: uuid.UUID  # Metadata log directory id of the voter to remove.


class RemoveRaftVoterResponse(Message):
    """RemoveRaftVoterResponse: the response of API key 81; versions 0, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int  # Quota throttle applied, in ms; 0 if none.
    error_code: int  # 0 on success.
    error_message: str | None  # Why the change failed; null on success.


class RequestHeader(Message):
    """RequestHeader: a header schema; versions 0-2, flexible 2+."""

    __slots__ = ()
    request_api_key: int  # Which API the request body belongs to.
    request_api_version: int  # Version of that API used to encode the body.
    correlation_id: int  # Number picked by the client and echoed in the response so the two can be matched.
    client_id: str | None  # versions 1+; Free-form client identifier used in logs and quotas; may be null.


class ResponseHeader(Message):
    """ResponseHeader: a header schema; versions 0-1, flexible 1+."""

    __slots__ = ()
    correlation_id: int  # Echo of the number the client put in its request header, used to pair reply with request.


class SaslAuthenticateRequest(Message):
    """SaslAuthenticateRequest: the request of API key 36; versions 0-2, flexible 2+."""

    __slots__ = ()
    auth_bytes: bytes  # Opaque token the client's SASL mechanism produced for this step.


class SaslAuthenticateResponse(Message):
    """SaslAuthenticateResponse: the response of API key 36; versions 0-2, flexible 2+."""

    __slots__ = ()
    error_code: int  # Outcome of this authentication step; 0 if it succeeded.
    error_message: str | None  # Reason for the failure; null on success.
    auth_bytes: bytes  # Opaque token for the client side of the SASL mechanism to consume.
    # Ms until the session expires and must be re-authenticated on this connection; 0 means no limit.
    session_lifetime_ms: int  # versions 1+


class SaslHandshakeRequest(Message):
    """SaslHandshakeRequest: the request of API key 17; versions 0-1."""

    __slots__ = ()
    mechanism: str  # SASL mechanism the client wants to use, e.g. PLAIN or SCRAM-SHA-512.


class SaslHandshakeResponse(Message):
    """SaslHandshakeResponse: the response of API key 17; versions 0-1."""

    __slots__ = ()
    error_code: int  # 0, or UNSUPPORTED_SASL_MECHANISM when the requested mechanism is not enabled.
    mechanisms: tuple[str, ...]  # Every SASL mechanism the listener accepts.


class SyncGroupRequest(Message):
    """SyncGroupRequest: the request of API key 14; versions 0-5, flexible 4+."""

    __slots__ = ()
    group_id: str  # Group id.
    generation_id: int  # Generation id.
    member_id: str  # Member id.
    group_instance_id: str | None  # versions 3+; Group instance id.
    protocol_type: str | None  # versions 5+; Protocol type.
    protocol_name: str | None  # versions 5+; Protocol name.
    assignments: tuple[SyncGroupRequest.SyncGroupRequestAssignment, ...]  # Assignments.

    class SyncGroupRequestAssignment(Struct):
        """SyncGroupRequest.SyncGroupRequestAssignment: versions 0+."""

        __slots__ = ()
        member_id: str  # Member id.
        assignment: bytes  # Assignment.


class SyncGroupResponse(Message):
    """SyncGroupResponse: the response of API key 14; versions 0-5, flexible 4+."""

    __slots__ = ()
    throttle_time_ms: int  # versions 1+; Throttle time (ms).
    error_code: int  # Error code.
    protocol_type: str | None  # versions 5+; Protocol type.
    protocol_name: str | None  # versions 5+; Protocol name.
    assignment: bytes  # Assignment.


class UpdateFeaturesRequest(Message):
    """UpdateFeaturesRequest: the request of API key 57; versions 0-2, flexible 0+."""

    __slots__ = ()
    timeout_ms: int  # Milliseconds the client is willing to wait for the change.
    feature_updates: tuple[UpdateFeaturesRequest.FeatureUpdateKey, ...]  # The features to change, each named once.
    validate_only: bool  # versions 1+; Check the change without making it (a dry run).

    class FeatureUpdateKey(Struct):
        """UpdateFeaturesRequest.FeatureUpdateKey: versions 0+."""

        __slots__ = ()
        feature: str  # Name of the feature whose finalized level changes.
        max_version_level: int  # The level wanted; below 1 asks to remove the feature (a downgrade to 0).
        allow_downgrade: bool  # versions 0; v0 only: whether the level may go down (v1 replaced it with UpgradeType).
        upgrade_type: int  # versions 1+; 1 upgrade only, 2 safe (lossless) downgrade, 3 unsafe (lossy) downgrade.


class UpdateFeaturesResponse(Message):
    """UpdateFeaturesResponse: the response of API key 57; versions 0-2, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int  # Milliseconds the response was held back by quota enforcement; 0 when no quota was hit.
    error_code: int  # Request-wide error; 0 when every change was accepted.
    error_message: str | None  # Text explaining the request-wide error; null if there is none.
    # v0-1: the outcome for each feature named.
    results: tuple[UpdateFeaturesResponse.UpdatableFeatureResult, ...]  # versions 0-1

    class UpdatableFeatureResult(Struct):
        """UpdateFeaturesResponse.UpdatableFeatureResult: versions 0-1."""

        __slots__ = ()
        feature: str  # Name of the feature.
        error_code: int  # Outcome for this feature; 0 on success.
        error_message: str | None  # Explanation of this feature's failure; null on success.


class UpdateRaftVoterRequest(Message):
    """UpdateRaftVoterRequest: the request of API key 82; versions 0, flexible 0+."""

    __slots__ = ()
    cluster_id: str | None  # Cluster id of the caller; null skips the check.
    current_leader_epoch: int  # The epoch the caller believes is current; -1 if it knows none.
    voter_id: int  # Node id of the voter being updated.
    voter_directory_id: uuid.UUID  # Metadata log directory id of the voter being updated.
    listeners: tuple[UpdateRaftVoterRequest.Listener, ...]  # The voter's listeners.
    k_raft_version_feature: UpdateRaftVoterRequest.KRaftVersionFeature  # The kraft.version levels the voter can run.

    class Listener(Struct):
        """UpdateRaftVoterRequest.Listener: versions 0+."""

        __slots__ = ()
        name: str  # Listener name.
        host: str  # Host of this listener.
        port: int  # Port of this listener.

    class KRaftVersionFeature(Struct):
        """UpdateRaftVoterRequest.KRaftVersionFeature: versions 0+."""

        __slots__ = ()
        min_supported_version: int  # Lowest supported kraft.version.
        max_supported_version: int  # Highest supported kraft.version.


class UpdateRaftVoterResponse(Message):
    """UpdateRaftVoterResponse: the response of API key 82; versions 0, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int  # Quota throttle applied, in ms; 0 if none.
    error_code: int  # 0 on success.
    current_leader: UpdateRaftVoterResponse.CurrentLeader  # tag 0; The leader known to the responder.

    class CurrentLeader(Struct):
        """UpdateRaftVoterResponse.CurrentLeader: versions 0+."""

        __slots__ = ()
        leader_id: int  # Node id of the leader; -1 if unknown.
        leader_epoch: int  # Latest known leader epoch; -1 if unknown.
        host: str  # Host of the leader's listener.
        port: int  # Port of the leader's listener.


class VoteRequest(Message):
    """VoteRequest: the request of API key 52; versions 0-2, flexible 0+."""

    __slots__ = ()
    cluster_id: str | None  # Cluster id of the sender; null skips the check.
    voter_id: int  # versions 1+; Recipient voter's node id.
    topics: tuple[VoteRequest.TopicData, ...]  # Raft topics the vote is requested for.

    class PartitionData(Struct):
        """VoteRequest.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int  # Partition number within the topic.
        replica_epoch: int  # Epoch the sender is campaigning in (named CandidateEpoch before v2).
        replica_id: int  # Node id of the sender (named CandidateId before v2).
        replica_directory_id: uuid.UUID  # versions 1+; Directory UUID of the sender's log copy.
        voter_directory_id: uuid.UUID  # versions 1+; Directory UUID of the addressed voter's metadata log.
        last_offset_epoch: int  # Epoch of the sender's last log entry.
        last_offset: int  # Sender's log end offset.
        pre_vote: bool  # versions 2+; True for a pre-vote probe that no voter records.

    class TopicData(Struct):
        """VoteRequest.TopicData: versions 0+."""

        __slots__ = ()
        topic_name: str  # Name of the Raft topic.
        partitions: tuple[VoteRequest.PartitionData, ...]  # Per-partition vote requests.


class VoteResponse(Message):
    """VoteResponse: the response of API key 52; versions 0-2, flexible 0+."""

    __slots__ = ()
    error_code: int  # Request-wide error; 0 on success.
    topics: tuple[VoteResponse.TopicData, ...]  # Answers grouped by topic.
    # Addresses of the leaders named in the partition answers.
    node_endpoints: tuple[VoteResponse.NodeEndpoint, ...]  # versions 1+, tag 0

    class PartitionData(Struct):
        """VoteResponse.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int  # Partition number within the topic.
        error_code: int  # Outcome for this partition; 0 on success.
        leader_id: int  # Leader known to the voter; -1 if none.
        leader_epoch: int  # Highest epoch known to the voter.
        vote_granted: bool  # Whether the voter gave its vote.

    class TopicData(Struct):
        """VoteResponse.TopicData: versions 0+."""

        __slots__ = ()
        topic_name: str  # Name of the Raft topic.
        partitions: tuple[VoteResponse.PartitionData, ...]  # Answers per partition.

    class NodeEndpoint(Struct):
        """VoteResponse.NodeEndpoint: versions 1+."""

        __slots__ = ()
        node_id: int  # Which node the address belongs to.
        host: str  # Host to reach that leader on.
        port: int  # Port to reach that leader on.


ALL = bind_message_classes(globals(), load_package('kraftwire.schemas.messages'))
__all__ = [
    "AddRaftVoterRequest",
    "AddRaftVoterResponse",
    "AllocateProducerIdsRequest",
    "AllocateProducerIdsResponse",
    "AlterConfigsRequest",
    "AlterConfigsResponse",
    "AlterPartitionReassignmentsRequest",
    "AlterPartitionReassignmentsResponse",
    "AlterPartitionRequest",
    "AlterPartitionResponse",
    "AlterReplicaLogDirsRequest",
    "AlterReplicaLogDirsResponse",
    "AlterUserScramCredentialsRequest",
    "AlterUserScramCredentialsResponse",
    "ApiVersionsRequest",
    "ApiVersionsResponse",
    "AssignReplicasToDirsRequest",
    "AssignReplicasToDirsResponse",
    "BeginQuorumEpochRequest",
    "BeginQuorumEpochResponse",
    "BrokerHeartbeatRequest",
    "BrokerHeartbeatResponse",
    "BrokerRegistrationRequest",
    "BrokerRegistrationResponse",
    "ConsumerGroupDescribeRequest",
    "ConsumerGroupDescribeResponse",
    "ConsumerGroupHeartbeatRequest",
    "ConsumerGroupHeartbeatResponse",
    "CreateAclsRequest",
    "CreateAclsResponse",
    "CreatePartitionsRequest",
    "CreatePartitionsResponse",
    "CreateTopicsRequest",
    "CreateTopicsResponse",
    "DeleteAclsRequest",
    "DeleteAclsResponse",
    "DeleteGroupsRequest",
    "DeleteGroupsResponse",
    "DeleteRecordsRequest",
    "DeleteRecordsResponse",
    "DeleteTopicsRequest",
    "DeleteTopicsResponse",
    "DescribeAclsRequest",
    "DescribeAclsResponse",
    "DescribeClusterRequest",
    "DescribeClusterResponse",
    "DescribeConfigsRequest",
    "DescribeConfigsResponse",
    "DescribeGroupsRequest",
    "DescribeGroupsResponse",
    "DescribeLogDirsRequest",
    "DescribeLogDirsResponse",
    "DescribeQuorumRequest",
    "DescribeQuorumResponse",
    "DescribeTopicPartitionsRequest",
    "DescribeTopicPartitionsResponse",
    "DescribeUserScramCredentialsRequest",
    "DescribeUserScramCredentialsResponse",
    "ElectLeadersRequest",
    "ElectLeadersResponse",
    "EndQuorumEpochRequest",
    "EndQuorumEpochResponse",
    "FetchRequest",
    "FetchResponse",
    "FetchSnapshotRequest",
    "FetchSnapshotResponse",
    "FindCoordinatorRequest",
    "FindCoordinatorResponse",
    "HeartbeatRequest",
    "HeartbeatResponse",
    "IncrementalAlterConfigsRequest",
    "IncrementalAlterConfigsResponse",
    "InitProducerIdRequest",
    "InitProducerIdResponse",
    "JoinGroupRequest",
    "JoinGroupResponse",
    "LeaderAndIsrRequest",
    "LeaderAndIsrResponse",
    "LeaveGroupRequest",
    "LeaveGroupResponse",
    "ListConfigResourcesRequest",
    "ListConfigResourcesResponse",
    "ListGroupsRequest",
    "ListGroupsResponse",
    "ListOffsetsRequest",
    "ListOffsetsResponse",
    "ListPartitionReassignmentsRequest",
    "ListPartitionReassignmentsResponse",
    "MetadataRequest",
    "MetadataResponse",
    "OffsetCommitRequest",
    "OffsetCommitResponse",
    "OffsetDeleteRequest",
    "OffsetDeleteResponse",
    "OffsetFetchRequest",
    "OffsetFetchResponse",
    "OffsetForLeaderEpochRequest",
    "OffsetForLeaderEpochResponse",
    "ProduceRequest",
    "ProduceResponse",
    "RemoveRaftVoterRequest",
    "RemoveRaftVoterResponse",
    "RequestHeader",
    "ResponseHeader",
    "SaslAuthenticateRequest",
    "SaslAuthenticateResponse",
    "SaslHandshakeRequest",
    "SaslHandshakeResponse",
    "SyncGroupRequest",
    "SyncGroupResponse",
    "UpdateFeaturesRequest",
    "UpdateFeaturesResponse",
    "UpdateRaftVoterRequest",
    "UpdateRaftVoterResponse",
    "VoteRequest",
    "VoteResponse",
]
