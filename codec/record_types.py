"""Every metadata and control record schema in ``schemas/records`` as a message class.

Use them as ``codec.records.TopicRecord`` and so on (``codec.records`` adds their framing and
batches). Each class lists its fields (across all versions) with their Python types.

Generated from ``schemas/`` by ``python -m kraftwire.codec.generate``; do not edit.
"""
from __future__ import annotations

import uuid

from .message import Message, bind_message_classes
from .model import Struct
from .schema import load_package


class AbortTransactionRecord(Message):
    """AbortTransactionRecord: metadata record type 25; versions 0, flexible 0+."""

    __slots__ = ()
    reason: str | None  # tag 0; Optional reason the transaction was aborted.


class AccessControlEntryRecord(Message):
    """AccessControlEntryRecord: metadata record type 18; versions 0, flexible 0+."""

    __slots__ = ()
    id: uuid.UUID  # Identifier of the binding, used to remove it.
    resource_type: int  # Resource type id (topic, group, cluster, ...).
    resource_name: str  # Resource name or pattern.
    pattern_type: int  # Pattern type id: literal or prefixed.
    principal: str  # Principal the entry applies to.
    host: str  # Host the entry applies to, * for any.
    operation: int  # Operation id the entry allows or denies.
    permission_type: int  # Permission type id: allow or deny.


class BeginTransactionRecord(Message):
    """BeginTransactionRecord: metadata record type 23; versions 0, flexible 0+."""

    __slots__ = ()
    name: str | None  # tag 0; Optional label of the transaction.


class BrokerRegistrationChangeRecord(Message):
    """BrokerRegistrationChangeRecord: metadata record type 17; versions 0-3, flexible 0+."""

    __slots__ = ()
    broker_id: int  # Node id of the broker whose registration changes.
    broker_epoch: int  # Epoch of the registration being changed.
    fenced: int  # tag 0; 1 = now fenced, -1 = now unfenced, 0 = unchanged.
    in_controlled_shutdown: int  # versions 1+, tag 1; 1 = entered controlled shutdown, 0 = unchanged.
    log_dirs: tuple[uuid.UUID, ...]  # versions 2+, tag 2; New set of online log directory UUIDs.
    # New set of cordoned log directory UUIDs; null leaves it as it was.
    cordoned_log_dirs: tuple[uuid.UUID, ...] | None  # versions 3+, tag 3


class ClearElrRecord(Message):
    """ClearElrRecord: metadata record type 28; versions 0, flexible 0+."""

    __slots__ = ()
    topic_name: str  # Topic whose partitions lose their ELR and last-known ELR.


class ClientQuotaRecord(Message):
    """ClientQuotaRecord: metadata record type 14; versions 0, flexible 0+."""

    __slots__ = ()
    entity: tuple[ClientQuotaRecord.EntityData, ...]  # The entity the quota applies to, one item per entity type.
    key: str  # Quota name, e.g. producer_byte_rate.
    value: float  # Quota value; ignored when Remove is true.
    remove: bool  # Whether the quota is removed rather than set.

    class EntityData(Struct):
        """ClientQuotaRecord.EntityData: versions 0+."""

        __slots__ = ()
        entity_type: str  # Entity type: user, client-id or ip.
        entity_name: str | None  # Entity name; null is the default entity of the type.


class ConfigRecord(Message):
    """ConfigRecord: metadata record type 4; versions 0, flexible 0+."""

    __slots__ = ()
    resource_type: int  # Kind of resource (ConfigResource.Type id, e.g. 2 = topic, 4 = broker).
    resource_name: str  # Resource the key belongs to; empty for the cluster-wide default.
    name: str  # Config key.
    value: str | None  # New value of the key; null removes it.


class ConsumerGroupCurrentMemberAssignmentKey(Message):
    """ConsumerGroupCurrentMemberAssignmentKey: a coordinator-key schema; versions 0."""

    __slots__ = ()
    group_id: str  # Group id.
    member_id: str  # Member id.


class ConsumerGroupCurrentMemberAssignmentValue(Message):
    """ConsumerGroupCurrentMemberAssignmentValue: a coordinator-value schema; versions 0, flexible 0+."""

    __slots__ = ()
    member_epoch: int  # Member epoch.
    previous_member_epoch: int  # Previous member epoch.
    state: int  # State.
    assigned_partitions: tuple[ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions, ...]  # Assigned partitions.
    # Partitions pending revocation.
    partitions_pending_revocation: tuple[ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions, ...]

    class TopicPartitions(Struct):
        """ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions: versions 0+."""

        __slots__ = ()
        topic_id: uuid.UUID  # Topic id.
        partitions: tuple[int, ...]  # Partitions.
        assignment_epochs: tuple[int, ...] | None  # tag 0; Assignment epochs.


class ConsumerGroupMemberMetadataKey(Message):
    """ConsumerGroupMemberMetadataKey: a coordinator-key schema; versions 0."""

    __slots__ = ()
    group_id: str  # Group id.
    member_id: str  # Member id.


class ConsumerGroupMemberMetadataValue(Message):
    """ConsumerGroupMemberMetadataValue: a coordinator-value schema; versions 0, flexible 0+."""

    __slots__ = ()
    instance_id: str | None  # Instance id.
    rack_id: str | None  # Rack id.
    client_id: str  # Client id.
    client_host: str  # Client host.
    subscribed_topic_names: tuple[str, ...]  # Subscribed topic names.
    subscribed_topic_regex: str | None  # Subscribed topic regex.
    rebalance_timeout_ms: int  # Rebalance timeout ms.
    server_assignor: str | None  # Server assignor.
    # Classic member metadata.
    classic_member_metadata: ConsumerGroupMemberMetadataValue.ClassicMemberMetadata | None  # tag 0

    class ClassicProtocol(Struct):
        """ConsumerGroupMemberMetadataValue.ClassicProtocol: versions 0+."""

        __slots__ = ()
        name: str  # Name.
        metadata: bytes  # Metadata.

    class ClassicMemberMetadata(Struct):
        """ConsumerGroupMemberMetadataValue.ClassicMemberMetadata: versions 0+."""

        __slots__ = ()
        session_timeout_ms: int  # Session timeout ms.
        supported_protocols: tuple[ConsumerGroupMemberMetadataValue.ClassicProtocol, ...]  # Supported protocols.


class ConsumerGroupMetadataKey(Message):
    """ConsumerGroupMetadataKey: a coordinator-key schema; versions 0."""

    __slots__ = ()
    group_id: str  # Group id.


class ConsumerGroupMetadataValue(Message):
    """ConsumerGroupMetadataValue: a coordinator-value schema; versions 0, flexible 0+."""

    __slots__ = ()
    epoch: int  # Epoch.
    metadata_hash: int  # tag 0; Metadata hash.


class ConsumerGroupPartitionMetadataKey(Message):
    """ConsumerGroupPartitionMetadataKey: a coordinator-key schema; versions 0."""

    __slots__ = ()
    group_id: str  # Group id.


class ConsumerGroupPartitionMetadataValue(Message):
    """ConsumerGroupPartitionMetadataValue: a coordinator-value schema; versions 0, flexible 0+."""

    __slots__ = ()
    topics: tuple[ConsumerGroupPartitionMetadataValue.TopicMetadata, ...]  # Topics.

    class PartitionMetadata(Struct):
        """ConsumerGroupPartitionMetadataValue.PartitionMetadata: versions 0+."""

        __slots__ = ()
        partition: int  # Partition.
        racks: tuple[str, ...]  # Racks.

    class TopicMetadata(Struct):
        """ConsumerGroupPartitionMetadataValue.TopicMetadata: versions 0+."""

        __slots__ = ()
        topic_id: uuid.UUID  # Topic id.
        topic_name: str  # Topic name.
        num_partitions: int  # Num partitions.
        partition_metadata: tuple[ConsumerGroupPartitionMetadataValue.PartitionMetadata, ...]  # Partition metadata.


class ConsumerGroupRegularExpressionKey(Message):
    """ConsumerGroupRegularExpressionKey: a coordinator-key schema; versions 0."""

    __slots__ = ()
    group_id: str  # Group id.
    regular_expression: str  # Regular expression.


class ConsumerGroupRegularExpressionValue(Message):
    """ConsumerGroupRegularExpressionValue: a coordinator-value schema; versions 0, flexible 0+."""

    __slots__ = ()
    topics: tuple[str, ...]  # Topics.
    version: int  # Version.
    timestamp: int  # Timestamp.


class ConsumerGroupTargetAssignmentMemberKey(Message):
    """ConsumerGroupTargetAssignmentMemberKey: a coordinator-key schema; versions 0."""

    __slots__ = ()
    group_id: str  # Group id.
    member_id: str  # Member id.


class ConsumerGroupTargetAssignmentMemberValue(Message):
    """ConsumerGroupTargetAssignmentMemberValue: a coordinator-value schema; versions 0, flexible 0+."""

    __slots__ = ()
    topic_partitions: tuple[ConsumerGroupTargetAssignmentMemberValue.TopicPartition, ...]  # Topic partitions.

    class TopicPartition(Struct):
        """ConsumerGroupTargetAssignmentMemberValue.TopicPartition: versions 0+."""

        __slots__ = ()
        topic_id: uuid.UUID  # Topic id.
        partitions: tuple[int, ...]  # Partitions.


class ConsumerGroupTargetAssignmentMetadataKey(Message):
    """ConsumerGroupTargetAssignmentMetadataKey: a coordinator-key schema; versions 0."""

    __slots__ = ()
    group_id: str  # Group id.


class ConsumerGroupTargetAssignmentMetadataValue(Message):
    """ConsumerGroupTargetAssignmentMetadataValue: a coordinator-value schema; versions 0, flexible 0+."""

    __slots__ = ()
    assignment_epoch: int  # Assignment epoch.
    assignment_timestamp: int  # tag 0; Assignment timestamp.


class DelegationTokenRecord(Message):
    """DelegationTokenRecord: metadata record type 10; versions 0, flexible 0+."""

    __slots__ = ()
    owner: str  # Principal the token authenticates as.
    requester: str  # Principal that asked for the token.
    renewers: tuple[str, ...]  # Principals allowed to renew the token.
    issue_timestamp: int  # Milliseconds since the epoch when the token was issued.
    max_timestamp: int  # Milliseconds since the epoch after which the token can no longer be renewed.
    expiration_timestamp: int  # Milliseconds since the epoch when the token expires unless renewed.
    token_id: str  # Identifier of the token.


class EndTransactionRecord(Message):
    """EndTransactionRecord: metadata record type 24; versions 0, flexible 0+."""

    __slots__ = ()


class FeatureLevelRecord(Message):
    """FeatureLevelRecord: metadata record type 12; versions 0, flexible 0+."""

    __slots__ = ()
    name: str  # Which feature the level is for.
    feature_level: int  # Level finalized for the whole cluster; 0 turns the feature off.


class FenceBrokerRecord(Message):
    """FenceBrokerRecord: metadata record type 7; versions 0, flexible 0+."""

    __slots__ = ()
    id: int  # Node id of the broker to fence; it also leaves every ISR.
    epoch: int  # Broker epoch the fence applies to.


class GroupMetadataKey(Message):
    """GroupMetadataKey: a coordinator-key schema; versions 0."""

    __slots__ = ()
    group: str  # Group.


class GroupMetadataValue(Message):
    """GroupMetadataValue: a coordinator-value schema; versions 0-4, flexible 4+."""

    __slots__ = ()
    protocol_type: str  # Protocol type.
    generation: int  # Generation.
    protocol: str | None  # Protocol.
    leader: str | None  # Leader.
    current_state_timestamp: int  # versions 2+; Current state timestamp.
    members: tuple[GroupMetadataValue.MemberMetadata, ...]  # Members.

    class MemberMetadata(Struct):
        """GroupMetadataValue.MemberMetadata: versions 0+."""

        __slots__ = ()
        member_id: str  # Member id.
        group_instance_id: str | None  # versions 3+; Group instance id.
        client_id: str  # Client id.
        client_host: str  # Client host.
        rebalance_timeout: int  # versions 1+; Rebalance timeout.
        session_timeout: int  # Session timeout.
        subscription: bytes  # Subscription.
        assignment: bytes  # Assignment.


class KRaftVersionRecord(Message):
    """KRaftVersionRecord: control record type 5; versions 0, flexible 0+."""

    __slots__ = ()
    version: int  # Schema revision the writer used for this body.
    k_raft_version: int  # kraft.version level now finalized.


class LeaderChangeMessage(Message):
    """LeaderChangeMessage: control record type 2; versions 0-1, flexible 0+."""

    __slots__ = ()
    version: int  # Schema revision the writer used for this body.
    leader_id: int  # Node id of the leader that won this epoch.
    voters: tuple[LeaderChangeMessage.Voter, ...]  # Everyone allowed to vote during this epoch.
    granting_voters: tuple[LeaderChangeMessage.Voter, ...]  # Voters that granted their vote to the new leader.

    class Voter(Struct):
        """LeaderChangeMessage.Voter: versions 0+."""

        __slots__ = ()
        voter_id: int  # Voter's node id.
        voter_directory_id: uuid.UUID  # versions 1+; Directory UUID of the voter's metadata log (v1+, KIP-853).


class NoOpRecord(Message):
    """NoOpRecord: metadata record type 20; versions 0, flexible 0+."""

    __slots__ = ()


class OffsetCommitKey(Message):
    """OffsetCommitKey: a coordinator-key schema; versions 0."""

    __slots__ = ()
    group: str  # Group.
    topic: str  # Topic.
    partition: int  # Partition.


class OffsetCommitValue(Message):
    """OffsetCommitValue: a coordinator-value schema; versions 0-4, flexible 4+."""

    __slots__ = ()
    offset: int  # Offset.
    leader_epoch: int  # versions 3+; Leader epoch.
    metadata: str  # Metadata.
    commit_timestamp: int  # Commit timestamp.
    expire_timestamp: int  # versions 1; Expire timestamp.
    topic_id: uuid.UUID  # versions 4+, tag 0; Topic id.


class PartitionChangeRecord(Message):
    """PartitionChangeRecord: metadata record type 5; versions 0-2, flexible 0+."""

    __slots__ = ()
    partition_id: int  # Partition number within the topic.
    topic_id: uuid.UUID  # Topic this partition belongs to, by UUID.
    isr: tuple[int, ...] | None  # tag 0; Replacement ISR; null leaves it as it was.
    leader: int  # tag 1; New leader id; -1 = now leaderless, -2 = unchanged.
    replicas: tuple[int, ...] | None  # tag 2; Replacement replica list; null leaves it as it was.
    # Replacement list of replicas being removed; null leaves it as it was.
    removing_replicas: tuple[int, ...] | None  # tag 3
    # Replacement list of replicas being added; null leaves it as it was.
    adding_replicas: tuple[int, ...] | None  # tag 4
    # -1 = unchanged; 0 = recovered (or clean election); 1 = recovering after an unclean election.
    leader_recovery_state: int  # tag 5
    # Replacement per-replica log directory UUIDs; null leaves them as they were.
    directories: tuple[uuid.UUID, ...] | None  # versions 1+, tag 8
    eligible_leader_replicas: tuple[int, ...] | None  # versions 2+, tag 6; Replacement ELR; null leaves it as it was.
    last_known_elr: tuple[int, ...] | None  # versions 2+, tag 7; Replacement last-known ELR; null leaves it as it was.


class PartitionRecord(Message):
    """PartitionRecord: metadata record type 3; versions 0-2, flexible 0+."""

    __slots__ = ()
    partition_id: int  # Partition number within the topic.
    topic_id: uuid.UUID  # Topic this partition belongs to, by UUID.
    replicas: tuple[int, ...]  # Assigned replica broker ids, most preferred first.
    isr: tuple[int, ...]  # Broker ids currently in sync with the leader.
    removing_replicas: tuple[int, ...]  # Replicas an ongoing reassignment will drop.
    adding_replicas: tuple[int, ...]  # Replicas an ongoing reassignment is bringing in.
    leader: int  # Broker id of the leader; -1 when leaderless.
    leader_recovery_state: int  # tag 0; 0 = recovered; 1 = still recovering after an unclean election.
    leader_epoch: int  # Current leadership epoch.
    partition_epoch: int  # Counter bumped on every change to this partition's state.
    # Log directory UUID per replica, aligned index by index with Replicas.
    directories: tuple[uuid.UUID, ...]  # versions 1+
    # Replicas outside the ISR that may still be elected cleanly (ELR).
    eligible_leader_replicas: tuple[int, ...] | None  # versions 2+, tag 1
    # ELR members remembered from before the ELR last emptied.
    last_known_elr: tuple[int, ...] | None  # versions 2+, tag 2


class ProducerIdsRecord(Message):
    """ProducerIdsRecord: metadata record type 15; versions 0, flexible 0+."""

    __slots__ = ()
    broker_id: int  # Broker that was given the block.
    broker_epoch: int  # Epoch of the broker when it asked for the block.
    next_producer_id: int  # First producer id not yet handed out.


class RegisterBrokerRecord(Message):
    """RegisterBrokerRecord: metadata record type 0; versions 0-4, flexible 0+."""

    __slots__ = ()
    broker_id: int  # Node id of the registered broker.
    # Whether this is a ZooKeeper-mode broker taking part in a KRaft migration.
    is_migrating_zk_broker: bool  # versions 2+
    incarnation_id: uuid.UUID  # Per-process-start UUID the broker sent when registering.
    broker_epoch: int  # Epoch the controller granted to this registration.
    end_points: tuple[RegisterBrokerRecord.BrokerEndpoint, ...]  # Listeners clients and peers use to reach the broker.
    features: tuple[RegisterBrokerRecord.BrokerFeature, ...]  # Feature level ranges the broker declared it can run.
    rack: str | None  # Rack label of the broker, or null.
    fenced: bool  # Registration begins fenced unless this is false.
    in_controlled_shutdown: bool  # versions 1+; Whether a controlled shutdown of the broker is under way.
    log_dirs: tuple[uuid.UUID, ...]  # versions 3+, tag 0; UUIDs of the broker's online log directories.
    # UUIDs of cordoned log directories; null until the broker first reports them in a heartbeat.
    cordoned_log_dirs: tuple[uuid.UUID, ...] | None  # versions 4+, tag 1

    class BrokerEndpoint(Struct):
        """RegisterBrokerRecord.BrokerEndpoint: versions 0+."""

        __slots__ = ()
        name: str  # Listener name, e.g. PLAINTEXT.
        host: str  # Advertised host of this listener.
        port: int  # Advertised port of this listener.
        security_protocol: int  # Security protocol id used on this listener.

    class BrokerFeature(Struct):
        """RegisterBrokerRecord.BrokerFeature: versions 0+."""

        __slots__ = ()
        name: str  # Which feature the range is for.
        min_supported_version: int  # Lowest level of this feature the broker can run.
        max_supported_version: int  # Highest level of this feature the broker can run.


class RegisterControllerRecord(Message):
    """RegisterControllerRecord: metadata record type 27; versions 0, flexible 0+."""

    __slots__ = ()
    controller_id: int  # Node id of the controller.
    incarnation_id: uuid.UUID  # Per-process-start UUID of the controller.
    zk_migration_ready: bool  # Whether the controller can take part in a ZooKeeper migration.
    end_points: tuple[RegisterControllerRecord.ControllerEndpoint, ...]  # Listeners the controller serves.
    features: tuple[RegisterControllerRecord.ControllerFeature, ...]  # Feature level ranges the controller supports.

    class ControllerEndpoint(Struct):
        """RegisterControllerRecord.ControllerEndpoint: versions 0+."""

        __slots__ = ()
        name: str  # Listener name.
        host: str  # Advertised host of the listener.
        port: int  # Advertised port of the listener.
        security_protocol: int  # Security protocol id of the listener.

    class ControllerFeature(Struct):
        """RegisterControllerRecord.ControllerFeature: versions 0+."""

        __slots__ = ()
        name: str  # Feature name.
        min_supported_version: int  # Lowest level supported.
        max_supported_version: int  # Highest level supported.


class RemoveAccessControlEntryRecord(Message):
    """RemoveAccessControlEntryRecord: metadata record type 19; versions 0, flexible 0+."""

    __slots__ = ()
    id: uuid.UUID  # Identifier of the binding removed.


class RemoveDelegationTokenRecord(Message):
    """RemoveDelegationTokenRecord: metadata record type 26; versions 0, flexible 0+."""

    __slots__ = ()
    token_id: str  # Identifier of the removed token.


class RemoveTopicRecord(Message):
    """RemoveTopicRecord: metadata record type 9; versions 0, flexible 0+."""

    __slots__ = ()
    topic_id: uuid.UUID  # UUID of the topic to delete; its partitions go with it.


class RemoveUserScramCredentialRecord(Message):
    """RemoveUserScramCredentialRecord: metadata record type 22; versions 0, flexible 0+."""

    __slots__ = ()
    name: str  # User whose credential is deleted.
    mechanism: int  # SCRAM mechanism id of the deleted credential.


class SnapshotFooterRecord(Message):
    """SnapshotFooterRecord: control record type 4; versions 0, flexible 0+."""

    __slots__ = ()
    version: int  # Schema revision the writer used for this body.


class SnapshotHeaderRecord(Message):
    """SnapshotHeaderRecord: control record type 3; versions 0, flexible 0+."""

    __slots__ = ()
    version: int  # Schema revision the writer used for this body.
    last_contained_log_timestamp: int  # When the newest folded-in log record was appended.


class TopicRecord(Message):
    """TopicRecord: metadata record type 2; versions 0, flexible 0+."""

    __slots__ = ()
    name: str  # Name given to the new topic.
    topic_id: uuid.UUID  # UUID that identifies the topic from now on.


class UnfenceBrokerRecord(Message):
    """UnfenceBrokerRecord: metadata record type 8; versions 0, flexible 0+."""

    __slots__ = ()
    id: int  # Which broker leaves the fenced state.
    epoch: int  # Broker epoch the unfence applies to.


class UnregisterBrokerRecord(Message):
    """UnregisterBrokerRecord: metadata record type 1; versions 0, flexible 0+."""

    __slots__ = ()
    broker_id: int  # Node id of the broker being unregistered.
    broker_epoch: int  # Epoch of the registration being removed.


class UnregisterControllerRecord(Message):
    """UnregisterControllerRecord: metadata record type 29; versions 0, flexible 0+."""

    __slots__ = ()
    controller_id: int  # Node id of the controller.


class UserScramCredentialRecord(Message):
    """UserScramCredentialRecord: metadata record type 11; versions 0, flexible 0+."""

    __slots__ = ()
    name: str  # User the credential belongs to.
    mechanism: int  # SCRAM mechanism id: 1 = SCRAM-SHA-256, 2 = SCRAM-SHA-512.
    salt: bytes  # Random salt of the credential.
    stored_key: bytes  # Key the server checks client proofs against.
    server_key: bytes  # Key the server signs its own proof with.
    iterations: int  # Iteration count of the key derivation.


class VotersRecord(Message):
    """VotersRecord: control record type 6; versions 0, flexible 0+."""

    __slots__ = ()
    version: int  # Schema revision the writer used for this body.
    voters: tuple[VotersRecord.Voter, ...]  # All voters of the quorum, effective from this record's offset.

    class Endpoint(Struct):
        """VotersRecord.Endpoint: versions 0+."""

        __slots__ = ()
        name: str  # Listener name.
        host: str  # Advertised host of this listener.
        port: int  # Advertised port of this listener.

    class KRaftVersionFeature(Struct):
        """VotersRecord.KRaftVersionFeature: versions 0+."""

        __slots__ = ()
        min_supported_version: int  # Lower bound of the kraft.version levels this voter supports.
        max_supported_version: int  # Upper bound of the kraft.version levels this voter supports.

    class Voter(Struct):
        """VotersRecord.Voter: versions 0+."""

        __slots__ = ()
        voter_id: int  # Voter's node id.
        voter_directory_id: uuid.UUID  # Voter's directory UUID.
        endpoints: tuple[VotersRecord.Endpoint, ...]  # Addresses the voter listens on.
        k_raft_version_feature: VotersRecord.KRaftVersionFeature  # kraft.version range this voter can run.


class ZkMigrationStateRecord(Message):
    """ZkMigrationStateRecord: metadata record type 21; versions 0, flexible 0+."""

    __slots__ = ()
    zk_migration_state: int  # Migration state id: 0 none, 1 migration, 2 post-migration, 3 pre-migration.


ALL = bind_message_classes(globals(), load_package('kraftwire.schemas.records'))
__all__ = [
    "AbortTransactionRecord",
    "AccessControlEntryRecord",
    "BeginTransactionRecord",
    "BrokerRegistrationChangeRecord",
    "ClearElrRecord",
    "ClientQuotaRecord",
    "ConfigRecord",
    "ConsumerGroupCurrentMemberAssignmentKey",
    "ConsumerGroupCurrentMemberAssignmentValue",
    "ConsumerGroupMemberMetadataKey",
    "ConsumerGroupMemberMetadataValue",
    "ConsumerGroupMetadataKey",
    "ConsumerGroupMetadataValue",
    "ConsumerGroupPartitionMetadataKey",
    "ConsumerGroupPartitionMetadataValue",
    "ConsumerGroupRegularExpressionKey",
    "ConsumerGroupRegularExpressionValue",
    "ConsumerGroupTargetAssignmentMemberKey",
    "ConsumerGroupTargetAssignmentMemberValue",
    "ConsumerGroupTargetAssignmentMetadataKey",
    "ConsumerGroupTargetAssignmentMetadataValue",
    "DelegationTokenRecord",
    "EndTransactionRecord",
    "FeatureLevelRecord",
    "FenceBrokerRecord",
    "GroupMetadataKey",
    "GroupMetadataValue",
    "KRaftVersionRecord",
    "LeaderChangeMessage",
    "NoOpRecord",
    "OffsetCommitKey",
    "OffsetCommitValue",
    "PartitionChangeRecord",
    "PartitionRecord",
    "ProducerIdsRecord",
    "RegisterBrokerRecord",
    "RegisterControllerRecord",
    "RemoveAccessControlEntryRecord",
    "RemoveDelegationTokenRecord",
    "RemoveTopicRecord",
    "RemoveUserScramCredentialRecord",
    "SnapshotFooterRecord",
    "SnapshotHeaderRecord",
    "TopicRecord",
    "UnfenceBrokerRecord",
    "UnregisterBrokerRecord",
    "UnregisterControllerRecord",
    "UserScramCredentialRecord",
    "VotersRecord",
    "ZkMigrationStateRecord",
]
