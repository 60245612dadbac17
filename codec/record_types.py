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
    reason: str | None  # tag 0


class AccessControlEntryRecord(Message):
    """AccessControlEntryRecord: metadata record type 18; versions 0, flexible 0+."""

    __slots__ = ()
    id: uuid.UUID
    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int


class BeginTransactionRecord(Message):
    """BeginTransactionRecord: metadata record type 23; versions 0, flexible 0+."""

    __slots__ = ()
    name: str | None  # tag 0


class BrokerRegistrationChangeRecord(Message):
    """BrokerRegistrationChangeRecord: metadata record type 17; versions 0-3, flexible 0+."""

    __slots__ = ()
    broker_id: int
    broker_epoch: int
    fenced: int  # tag 0
    in_controlled_shutdown: int  # versions 1+, tag 1
    log_dirs: tuple[uuid.UUID, ...]  # versions 2+, tag 2
    cordoned_log_dirs: tuple[uuid.UUID, ...] | None  # versions 3+, tag 3


class ClearElrRecord(Message):
    """ClearElrRecord: metadata record type 28; versions 0, flexible 0+."""

    __slots__ = ()
    topic_name: str


class ClientQuotaRecord(Message):
    """ClientQuotaRecord: metadata record type 14; versions 0, flexible 0+."""

    __slots__ = ()
    entity: tuple[ClientQuotaRecord.EntityData, ...]
    key: str
    value: float
    remove: bool

    class EntityData(Struct):
        """ClientQuotaRecord.EntityData: versions 0+."""

        __slots__ = ()
        entity_type: str
        entity_name: str | None


class ConfigRecord(Message):
    """ConfigRecord: metadata record type 4; versions 0, flexible 0+."""

    __slots__ = ()
    resource_type: int
    resource_name: str
    name: str
    value: str | None


class DelegationTokenRecord(Message):
    """DelegationTokenRecord: metadata record type 10; versions 0, flexible 0+."""

    __slots__ = ()
    owner: str
    requester: str
    renewers: tuple[str, ...]
    issue_timestamp: int
    max_timestamp: int
    expiration_timestamp: int
    token_id: str


class EndTransactionRecord(Message):
    """EndTransactionRecord: metadata record type 24; versions 0, flexible 0+."""

    __slots__ = ()


class FeatureLevelRecord(Message):
    """FeatureLevelRecord: metadata record type 12; versions 0, flexible 0+."""

    __slots__ = ()
    name: str
    feature_level: int


class FenceBrokerRecord(Message):
    """FenceBrokerRecord: metadata record type 7; versions 0, flexible 0+."""

    __slots__ = ()
    id: int
    epoch: int


class KRaftVersionRecord(Message):
    """KRaftVersionRecord: control record type 5; versions 0, flexible 0+."""

    __slots__ = ()
    version: int
    k_raft_version: int


class LeaderChangeMessage(Message):
    """LeaderChangeMessage: control record type 2; versions 0-1, flexible 0+."""

    __slots__ = ()
    version: int
    leader_id: int
    voters: tuple[LeaderChangeMessage.Voter, ...]
    granting_voters: tuple[LeaderChangeMessage.Voter, ...]

    class Voter(Struct):
        """LeaderChangeMessage.Voter: versions 0+."""

        __slots__ = ()
        voter_id: int
        voter_directory_id: uuid.UUID  # versions 1+


class NoOpRecord(Message):
    """NoOpRecord: metadata record type 20; versions 0, flexible 0+."""

    __slots__ = ()


class PartitionChangeRecord(Message):
    """PartitionChangeRecord: metadata record type 5; versions 0-2, flexible 0+."""

    __slots__ = ()
    partition_id: int
    topic_id: uuid.UUID
    isr: tuple[int, ...] | None  # tag 0
    leader: int  # tag 1
    replicas: tuple[int, ...] | None  # tag 2
    removing_replicas: tuple[int, ...] | None  # tag 3
    adding_replicas: tuple[int, ...] | None  # tag 4
    leader_recovery_state: int  # tag 5
    directories: tuple[uuid.UUID, ...] | None  # versions 1+, tag 8
    eligible_leader_replicas: tuple[int, ...] | None  # versions 2+, tag 6
    last_known_elr: tuple[int, ...] | None  # versions 2+, tag 7


class PartitionRecord(Message):
    """PartitionRecord: metadata record type 3; versions 0-2, flexible 0+."""

    __slots__ = ()
    partition_id: int
    topic_id: uuid.UUID
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    removing_replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    leader: int
    leader_recovery_state: int  # tag 0
    leader_epoch: int
    partition_epoch: int
    directories: tuple[uuid.UUID, ...]  # versions 1+
    eligible_leader_replicas: tuple[int, ...] | None  # versions 2+, tag 1
    last_known_elr: tuple[int, ...] | None  # versions 2+, tag 2


class ProducerIdsRecord(Message):
    """ProducerIdsRecord: metadata record type 15; versions 0, flexible 0+."""

    __slots__ = ()
    broker_id: int
    broker_epoch: int
    next_producer_id: int


class RegisterBrokerRecord(Message):
    """RegisterBrokerRecord: metadata record type 0; versions 0-4, flexible 0+."""

    __slots__ = ()
    broker_id: int
    is_migrating_zk_broker: bool  # versions 2+
    incarnation_id: uuid.UUID
    broker_epoch: int
    end_points: tuple[RegisterBrokerRecord.BrokerEndpoint, ...]
    features: tuple[RegisterBrokerRecord.BrokerFeature, ...]
    rack: str | None
    fenced: bool
    in_controlled_shutdown: bool  # versions 1+
    log_dirs: tuple[uuid.UUID, ...]  # versions 3+, tag 0
    cordoned_log_dirs: tuple[uuid.UUID, ...] | None  # versions 4+, tag 1

    class BrokerEndpoint(Struct):
        """RegisterBrokerRecord.BrokerEndpoint: versions 0+."""

        __slots__ = ()
        name: str
        host: str
        port: int
        security_protocol: int

    class BrokerFeature(Struct):
        """RegisterBrokerRecord.BrokerFeature: versions 0+."""

        __slots__ = ()
        name: str
        min_supported_version: int
        max_supported_version: int


class RegisterControllerRecord(Message):
    """RegisterControllerRecord: metadata record type 27; versions 0, flexible 0+."""

    __slots__ = ()
    controller_id: int
    incarnation_id: uuid.UUID
    zk_migration_ready: bool
    end_points: tuple[RegisterControllerRecord.ControllerEndpoint, ...]
    features: tuple[RegisterControllerRecord.ControllerFeature, ...]

    class ControllerEndpoint(Struct):
        """RegisterControllerRecord.ControllerEndpoint: versions 0+."""

        __slots__ = ()
        name: str
        host: str
        port: int
        security_protocol: int

    class ControllerFeature(Struct):
        """RegisterControllerRecord.ControllerFeature: versions 0+."""

        __slots__ = ()
        name: str
        min_supported_version: int
        max_supported_version: int


class RemoveAccessControlEntryRecord(Message):
    """RemoveAccessControlEntryRecord: metadata record type 19; versions 0, flexible 0+."""

    __slots__ = ()
    id: uuid.UUID


class RemoveDelegationTokenRecord(Message):
    """RemoveDelegationTokenRecord: metadata record type 26; versions 0, flexible 0+."""

    __slots__ = ()
    token_id: str


class RemoveTopicRecord(Message):
    """RemoveTopicRecord: metadata record type 9; versions 0, flexible 0+."""

    __slots__ = ()
    topic_id: uuid.UUID


class RemoveUserScramCredentialRecord(Message):
    """RemoveUserScramCredentialRecord: metadata record type 22; versions 0, flexible 0+."""

    __slots__ = ()
    name: str
    mechanism: int


class SnapshotFooterRecord(Message):
    """SnapshotFooterRecord: control record type 4; versions 0, flexible 0+."""

    __slots__ = ()
    version: int


class SnapshotHeaderRecord(Message):
    """SnapshotHeaderRecord: control record type 3; versions 0, flexible 0+."""

    __slots__ = ()
    version: int
    last_contained_log_timestamp: int


class TopicRecord(Message):
    """TopicRecord: metadata record type 2; versions 0, flexible 0+."""

    __slots__ = ()
    name: str
    topic_id: uuid.UUID


class UnfenceBrokerRecord(Message):
    """UnfenceBrokerRecord: metadata record type 8; versions 0, flexible 0+."""

    __slots__ = ()
    id: int
    epoch: int


class UnregisterBrokerRecord(Message):
    """UnregisterBrokerRecord: metadata record type 1; versions 0, flexible 0+."""

    __slots__ = ()
    broker_id: int
    broker_epoch: int


class UnregisterControllerRecord(Message):
    """UnregisterControllerRecord: metadata record type 29; versions 0, flexible 0+."""

    __slots__ = ()
    controller_id: int


class UserScramCredentialRecord(Message):
    """UserScramCredentialRecord: metadata record type 11; versions 0, flexible 0+."""

    __slots__ = ()
    name: str
    mechanism: int
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


class VotersRecord(Message):
    """VotersRecord: control record type 6; versions 0, flexible 0+."""

    __slots__ = ()
    version: int
    voters: tuple[VotersRecord.Voter, ...]

    class Endpoint(Struct):
        """VotersRecord.Endpoint: versions 0+."""

        __slots__ = ()
        name: str
        host: str
        port: int

    class KRaftVersionFeature(Struct):
        """VotersRecord.KRaftVersionFeature: versions 0+."""

        __slots__ = ()
        min_supported_version: int
        max_supported_version: int

    class Voter(Struct):
        """VotersRecord.Voter: versions 0+."""

        __slots__ = ()
        voter_id: int
        voter_directory_id: uuid.UUID
        endpoints: tuple[VotersRecord.Endpoint, ...]
        k_raft_version_feature: VotersRecord.KRaftVersionFeature


class ZkMigrationStateRecord(Message):
    """ZkMigrationStateRecord: metadata record type 21; versions 0, flexible 0+."""

    __slots__ = ()
    zk_migration_state: int


ALL = bind_message_classes(globals(), load_package('kraftwire.schemas.records'))
__all__ = [
    "AbortTransactionRecord",
    "AccessControlEntryRecord",
    "BeginTransactionRecord",
    "BrokerRegistrationChangeRecord",
    "ClearElrRecord",
    "ClientQuotaRecord",
    "ConfigRecord",
    "DelegationTokenRecord",
    "EndTransactionRecord",
    "FeatureLevelRecord",
    "FenceBrokerRecord",
    "KRaftVersionRecord",
    "LeaderChangeMessage",
    "NoOpRecord",
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
