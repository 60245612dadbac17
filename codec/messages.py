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
    cluster_id: str | None
    timeout_ms: int
    voter_id: int
    voter_directory_id: uuid.UUID
    listeners: tuple[AddRaftVoterRequest.Listener, ...]
    ack_when_committed: bool  # versions 1+

    class Listener(Struct):
        """AddRaftVoterRequest.Listener: versions 0+."""

        __slots__ = ()
        name: str
        host: str
        port: int


class AddRaftVoterResponse(Message):
    """AddRaftVoterResponse: the response of API key 80; versions 0-1, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int
    error_code: int
    error_message: str | None


class AlterConfigsRequest(Message):
    """AlterConfigsRequest: the request of API key 33; versions 0-2, flexible 2+."""

    __slots__ = ()
    resources: tuple[AlterConfigsRequest.AlterConfigsResource, ...]
    validate_only: bool

    class AlterableConfig(Struct):
        """AlterConfigsRequest.AlterableConfig: versions 0+."""

        __slots__ = ()
        name: str
        value: str | None

    class AlterConfigsResource(Struct):
        """AlterConfigsRequest.AlterConfigsResource: versions 0+."""

        __slots__ = ()
        resource_type: int
        resource_name: str
        configs: tuple[AlterConfigsRequest.AlterableConfig, ...]


class AlterConfigsResponse(Message):
    """AlterConfigsResponse: the response of API key 33; versions 0-2, flexible 2+."""

    __slots__ = ()
    throttle_time_ms: int
    responses: tuple[AlterConfigsResponse.AlterConfigsResourceResponse, ...]

    class AlterConfigsResourceResponse(Struct):
        """AlterConfigsResponse.AlterConfigsResourceResponse: versions 0+."""

        __slots__ = ()
        error_code: int
        error_message: str | None
        resource_type: int
        resource_name: str


class AlterPartitionReassignmentsRequest(Message):
    """AlterPartitionReassignmentsRequest: the request of API key 45; versions 0-1, flexible 0+."""

    __slots__ = ()
    timeout_ms: int
    allow_replication_factor_change: bool  # versions 1+
    topics: tuple[AlterPartitionReassignmentsRequest.ReassignableTopic, ...]

    class ReassignablePartition(Struct):
        """AlterPartitionReassignmentsRequest.ReassignablePartition: versions 0+."""

        __slots__ = ()
        partition_index: int
        replicas: tuple[int, ...] | None

    class ReassignableTopic(Struct):
        """AlterPartitionReassignmentsRequest.ReassignableTopic: versions 0+."""

        __slots__ = ()
        name: str
        partitions: tuple[AlterPartitionReassignmentsRequest.ReassignablePartition, ...]


class AlterPartitionReassignmentsResponse(Message):
    """AlterPartitionReassignmentsResponse: the response of API key 45; versions 0-1, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int
    allow_replication_factor_change: bool  # versions 1+
    error_code: int
    error_message: str | None
    responses: tuple[AlterPartitionReassignmentsResponse.ReassignableTopicResponse, ...]

    class ReassignablePartitionResponse(Struct):
        """AlterPartitionReassignmentsResponse.ReassignablePartitionResponse: versions 0+."""

        __slots__ = ()
        partition_index: int
        error_code: int
        error_message: str | None

    class ReassignableTopicResponse(Struct):
        """AlterPartitionReassignmentsResponse.ReassignableTopicResponse: versions 0+."""

        __slots__ = ()
        name: str
        partitions: tuple[AlterPartitionReassignmentsResponse.ReassignablePartitionResponse, ...]


class AlterPartitionRequest(Message):
    """AlterPartitionRequest: the request of API key 56; versions 0-3, flexible 0+."""

    __slots__ = ()
    broker_id: int
    broker_epoch: int
    topics: tuple[AlterPartitionRequest.TopicData, ...]

    class BrokerState(Struct):
        """AlterPartitionRequest.BrokerState: versions 3+."""

        __slots__ = ()
        broker_id: int
        broker_epoch: int

    class PartitionData(Struct):
        """AlterPartitionRequest.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int
        leader_epoch: int
        new_isr: tuple[int, ...]  # versions 0-2
        new_isr_with_epochs: tuple[AlterPartitionRequest.BrokerState, ...]  # versions 3+
        leader_recovery_state: int  # versions 1+
        partition_epoch: int

    class TopicData(Struct):
        """AlterPartitionRequest.TopicData: versions 0+."""

        __slots__ = ()
        topic_name: str  # versions 0-1
        topic_id: uuid.UUID  # versions 2+
        partitions: tuple[AlterPartitionRequest.PartitionData, ...]


class AlterPartitionResponse(Message):
    """AlterPartitionResponse: the response of API key 56; versions 0-3, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int
    error_code: int
    topics: tuple[AlterPartitionResponse.TopicData, ...]

    class PartitionData(Struct):
        """AlterPartitionResponse.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int
        error_code: int
        leader_id: int
        leader_epoch: int
        isr: tuple[int, ...]
        leader_recovery_state: int  # versions 1+
        partition_epoch: int

    class TopicData(Struct):
        """AlterPartitionResponse.TopicData: versions 0+."""

        __slots__ = ()
        topic_name: str  # versions 0-1
        topic_id: uuid.UUID  # versions 2+
        partitions: tuple[AlterPartitionResponse.PartitionData, ...]


class AlterReplicaLogDirsRequest(Message):
    """AlterReplicaLogDirsRequest: the request of API key 34; versions 0-2, flexible 2+."""

    __slots__ = ()
    dirs: tuple[AlterReplicaLogDirsRequest.AlterReplicaLogDir, ...]

    class AlterReplicaLogDirTopic(Struct):
        """AlterReplicaLogDirsRequest.AlterReplicaLogDirTopic: versions 0+."""

        __slots__ = ()
        name: str
        partitions: tuple[int, ...]

    class AlterReplicaLogDir(Struct):
        """AlterReplicaLogDirsRequest.AlterReplicaLogDir: versions 0+."""

        __slots__ = ()
        path: str
        topics: tuple[AlterReplicaLogDirsRequest.AlterReplicaLogDirTopic, ...]


class AlterReplicaLogDirsResponse(Message):
    """AlterReplicaLogDirsResponse: the response of API key 34; versions 0-2, flexible 2+."""

    __slots__ = ()
    throttle_time_ms: int
    results: tuple[AlterReplicaLogDirsResponse.AlterReplicaLogDirTopicResult, ...]

    class AlterReplicaLogDirPartitionResult(Struct):
        """AlterReplicaLogDirsResponse.AlterReplicaLogDirPartitionResult: versions 0+."""

        __slots__ = ()
        partition_index: int
        error_code: int

    class AlterReplicaLogDirTopicResult(Struct):
        """AlterReplicaLogDirsResponse.AlterReplicaLogDirTopicResult: versions 0+."""

        __slots__ = ()
        topic_name: str
        partitions: tuple[AlterReplicaLogDirsResponse.AlterReplicaLogDirPartitionResult, ...]


class AlterUserScramCredentialsRequest(Message):
    """AlterUserScramCredentialsRequest: the request of API key 51; versions 0, flexible 0+."""

    __slots__ = ()
    deletions: tuple[AlterUserScramCredentialsRequest.ScramCredentialDeletion, ...]
    upsertions: tuple[AlterUserScramCredentialsRequest.ScramCredentialUpsertion, ...]

    class ScramCredentialDeletion(Struct):
        """AlterUserScramCredentialsRequest.ScramCredentialDeletion: versions 0+."""

        __slots__ = ()
        name: str
        mechanism: int

    class ScramCredentialUpsertion(Struct):
        """AlterUserScramCredentialsRequest.ScramCredentialUpsertion: versions 0+."""

        __slots__ = ()
        name: str
        mechanism: int
        iterations: int
        salt: bytes
        salted_password: bytes


class AlterUserScramCredentialsResponse(Message):
    """AlterUserScramCredentialsResponse: the response of API key 51; versions 0, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int
    results: tuple[AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult, ...]

    class AlterUserScramCredentialsResult(Struct):
        """AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult: versions 0+."""

        __slots__ = ()
        user: str
        error_code: int
        error_message: str | None


class ApiVersionsRequest(Message):
    """ApiVersionsRequest: the request of API key 18; versions 0-5, flexible 3+."""

    __slots__ = ()
    client_software_name: str  # versions 3+
    client_software_version: str  # versions 3+
    cluster_id: str | None  # versions 5+
    node_id: int  # versions 5+


class ApiVersionsResponse(Message):
    """ApiVersionsResponse: the response of API key 18; versions 0-5, flexible 3+."""

    __slots__ = ()
    error_code: int
    api_keys: tuple[ApiVersionsResponse.ApiVersion, ...]
    throttle_time_ms: int  # versions 1+
    supported_features: tuple[ApiVersionsResponse.SupportedFeatureKey, ...]  # versions 3+, tag 0
    finalized_features_epoch: int  # versions 3+, tag 1
    finalized_features: tuple[ApiVersionsResponse.FinalizedFeatureKey, ...]  # versions 3+, tag 2
    zk_migration_ready: bool  # versions 3+, tag 3

    class ApiVersion(Struct):
        """ApiVersionsResponse.ApiVersion: versions 0+."""

        __slots__ = ()
        api_key: int
        min_version: int
        max_version: int

    class SupportedFeatureKey(Struct):
        """ApiVersionsResponse.SupportedFeatureKey: versions 3+."""

        __slots__ = ()
        name: str
        min_version: int
        max_version: int

    class FinalizedFeatureKey(Struct):
        """ApiVersionsResponse.FinalizedFeatureKey: versions 3+."""

        __slots__ = ()
        name: str
        max_version_level: int
        min_version_level: int


class AssignReplicasToDirsRequest(Message):
    """AssignReplicasToDirsRequest: the request of API key 73; versions 0, flexible 0+."""

    __slots__ = ()
    broker_id: int
    broker_epoch: int
    directories: tuple[AssignReplicasToDirsRequest.DirectoryData, ...]

    class PartitionData(Struct):
        """AssignReplicasToDirsRequest.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int

    class TopicData(Struct):
        """AssignReplicasToDirsRequest.TopicData: versions 0+."""

        __slots__ = ()
        topic_id: uuid.UUID
        partitions: tuple[AssignReplicasToDirsRequest.PartitionData, ...]

    class DirectoryData(Struct):
        """AssignReplicasToDirsRequest.DirectoryData: versions 0+."""

        __slots__ = ()
        id: uuid.UUID
        topics: tuple[AssignReplicasToDirsRequest.TopicData, ...]


class AssignReplicasToDirsResponse(Message):
    """AssignReplicasToDirsResponse: the response of API key 73; versions 0, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int
    error_code: int
    directories: tuple[AssignReplicasToDirsResponse.DirectoryData, ...]

    class PartitionData(Struct):
        """AssignReplicasToDirsResponse.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int
        error_code: int

    class TopicData(Struct):
        """AssignReplicasToDirsResponse.TopicData: versions 0+."""

        __slots__ = ()
        topic_id: uuid.UUID
        partitions: tuple[AssignReplicasToDirsResponse.PartitionData, ...]

    class DirectoryData(Struct):
        """AssignReplicasToDirsResponse.DirectoryData: versions 0+."""

        __slots__ = ()
        id: uuid.UUID
        topics: tuple[AssignReplicasToDirsResponse.TopicData, ...]


class BeginQuorumEpochRequest(Message):
    """BeginQuorumEpochRequest: the request of API key 53; versions 0-1, flexible 1+."""

    __slots__ = ()
    cluster_id: str | None
    voter_id: int  # versions 1+
    topics: tuple[BeginQuorumEpochRequest.TopicData, ...]
    leader_endpoints: tuple[BeginQuorumEpochRequest.LeaderEndpoint, ...]  # versions 1+

    class PartitionData(Struct):
        """BeginQuorumEpochRequest.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int
        voter_directory_id: uuid.UUID  # versions 1+
        leader_id: int
        leader_epoch: int

    class TopicData(Struct):
        """BeginQuorumEpochRequest.TopicData: versions 0+."""

        __slots__ = ()
        topic_name: str
        partitions: tuple[BeginQuorumEpochRequest.PartitionData, ...]

    class LeaderEndpoint(Struct):
        """BeginQuorumEpochRequest.LeaderEndpoint: versions 1+."""

        __slots__ = ()
        name: str
        host: str
        port: int


class BeginQuorumEpochResponse(Message):
    """BeginQuorumEpochResponse: the response of API key 53; versions 0-1, flexible 1+."""

    __slots__ = ()
    error_code: int
    topics: tuple[BeginQuorumEpochResponse.TopicData, ...]
    node_endpoints: tuple[BeginQuorumEpochResponse.NodeEndpoint, ...]  # versions 1+, tag 0

    class PartitionData(Struct):
        """BeginQuorumEpochResponse.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int
        error_code: int
        leader_id: int
        leader_epoch: int

    class TopicData(Struct):
        """BeginQuorumEpochResponse.TopicData: versions 0+."""

        __slots__ = ()
        topic_name: str
        partitions: tuple[BeginQuorumEpochResponse.PartitionData, ...]

    class NodeEndpoint(Struct):
        """BeginQuorumEpochResponse.NodeEndpoint: versions 1+."""

        __slots__ = ()
        node_id: int
        host: str
        port: int


class BrokerHeartbeatRequest(Message):
    """BrokerHeartbeatRequest: the request of API key 63; versions 0-2, flexible 0+."""

    __slots__ = ()
    broker_id: int
    broker_epoch: int
    current_metadata_offset: int
    want_fence: bool
    want_shut_down: bool
    offline_log_dirs: tuple[uuid.UUID, ...]  # versions 1+, tag 0
    cordoned_log_dirs: tuple[uuid.UUID, ...] | None  # versions 2+, tag 1


class BrokerHeartbeatResponse(Message):
    """BrokerHeartbeatResponse: the response of API key 63; versions 0-2, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int
    error_code: int
    is_caught_up: bool
    is_fenced: bool
    should_shut_down: bool


class BrokerRegistrationRequest(Message):
    """BrokerRegistrationRequest: the request of API key 62; versions 0-4, flexible 0+."""

    __slots__ = ()
    broker_id: int
    cluster_id: str
    incarnation_id: uuid.UUID
    listeners: tuple[BrokerRegistrationRequest.Listener, ...]
    features: tuple[BrokerRegistrationRequest.Feature, ...]
    rack: str | None
    is_migrating_zk_broker: bool  # versions 1+
    log_dirs: tuple[uuid.UUID, ...]  # versions 2+
    previous_broker_epoch: int  # versions 3+

    class Listener(Struct):
        """BrokerRegistrationRequest.Listener: versions 0+."""

        __slots__ = ()
        name: str
        host: str
        port: int
        security_protocol: int

    class Feature(Struct):
        """BrokerRegistrationRequest.Feature: versions 0+."""

        __slots__ = ()
        name: str
        min_supported_version: int
        max_supported_version: int


class BrokerRegistrationResponse(Message):
    """BrokerRegistrationResponse: the response of API key 62; versions 0-4, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int
    error_code: int
    broker_epoch: int


class CreateAclsRequest(Message):
    """CreateAclsRequest: the request of API key 30; versions 1-3, flexible 2+."""

    __slots__ = ()
    creations: tuple[CreateAclsRequest.AclCreation, ...]

    class AclCreation(Struct):
        """CreateAclsRequest.AclCreation: versions 0+."""

        __slots__ = ()
        resource_type: int
        resource_name: str
        resource_pattern_type: int  # versions 1+
        principal: str
        host: str
        operation: int
        permission_type: int


class CreateAclsResponse(Message):
    """CreateAclsResponse: the response of API key 30; versions 1-3, flexible 2+."""

    __slots__ = ()
    throttle_time_ms: int
    results: tuple[CreateAclsResponse.AclCreationResult, ...]

    class AclCreationResult(Struct):
        """CreateAclsResponse.AclCreationResult: versions 0+."""

        __slots__ = ()
        error_code: int
        error_message: str | None


class CreatePartitionsRequest(Message):
    """CreatePartitionsRequest: the request of API key 37; versions 0-3, flexible 2+."""

    __slots__ = ()
    topics: tuple[CreatePartitionsRequest.CreatePartitionsTopic, ...]
    timeout_ms: int
    validate_only: bool

    class CreatePartitionsAssignment(Struct):
        """CreatePartitionsRequest.CreatePartitionsAssignment: versions 0+."""

        __slots__ = ()
        broker_ids: tuple[int, ...]

    class CreatePartitionsTopic(Struct):
        """CreatePartitionsRequest.CreatePartitionsTopic: versions 0+."""

        __slots__ = ()
        name: str
        count: int
        assignments: tuple[CreatePartitionsRequest.CreatePartitionsAssignment, ...] | None


class CreatePartitionsResponse(Message):
    """CreatePartitionsResponse: the response of API key 37; versions 0-3, flexible 2+."""

    __slots__ = ()
    throttle_time_ms: int
    results: tuple[CreatePartitionsResponse.CreatePartitionsTopicResult, ...]

    class CreatePartitionsTopicResult(Struct):
        """CreatePartitionsResponse.CreatePartitionsTopicResult: versions 0+."""

        __slots__ = ()
        name: str
        error_code: int
        error_message: str | None


class CreateTopicsRequest(Message):
    """CreateTopicsRequest: the request of API key 19; versions 0-7, flexible 5+."""

    __slots__ = ()
    topics: tuple[CreateTopicsRequest.CreatableTopic, ...]
    timeout_ms: int
    validate_only: bool  # versions 1+

    class CreatableReplicaAssignment(Struct):
        """CreateTopicsRequest.CreatableReplicaAssignment: versions 0+."""

        __slots__ = ()
        partition_index: int
        broker_ids: tuple[int, ...]

    class CreatableTopicConfig(Struct):
        """CreateTopicsRequest.CreatableTopicConfig: versions 0+."""

        __slots__ = ()
        name: str
        value: str | None

    class CreatableTopic(Struct):
        """CreateTopicsRequest.CreatableTopic: versions 0+."""

        __slots__ = ()
        name: str
        num_partitions: int
        replication_factor: int
        assignments: tuple[CreateTopicsRequest.CreatableReplicaAssignment, ...]
        configs: tuple[CreateTopicsRequest.CreatableTopicConfig, ...]


class CreateTopicsResponse(Message):
    """CreateTopicsResponse: the response of API key 19; versions 0-7, flexible 5+."""

    __slots__ = ()
    throttle_time_ms: int  # versions 2+
    topics: tuple[CreateTopicsResponse.CreatableTopicResult, ...]

    class CreatableTopicConfigs(Struct):
        """CreateTopicsResponse.CreatableTopicConfigs: versions 5+."""

        __slots__ = ()
        name: str
        value: str | None
        read_only: bool
        config_source: int
        is_sensitive: bool

    class CreatableTopicResult(Struct):
        """CreateTopicsResponse.CreatableTopicResult: versions 0+."""

        __slots__ = ()
        name: str
        topic_id: uuid.UUID  # versions 7+
        error_code: int
        error_message: str | None  # versions 1+
        topic_config_error_code: int  # versions 5+, tag 0
        num_partitions: int  # versions 5+
        replication_factor: int  # versions 5+
        configs: tuple[CreateTopicsResponse.CreatableTopicConfigs, ...] | None  # versions 5+


class DeleteAclsRequest(Message):
    """DeleteAclsRequest: the request of API key 31; versions 1-3, flexible 2+."""

    __slots__ = ()
    filters: tuple[DeleteAclsRequest.DeleteAclsFilter, ...]

    class DeleteAclsFilter(Struct):
        """DeleteAclsRequest.DeleteAclsFilter: versions 0+."""

        __slots__ = ()
        resource_type_filter: int
        resource_name_filter: str | None
        pattern_type_filter: int  # versions 1+
        principal_filter: str | None
        host_filter: str | None
        operation: int
        permission_type: int


class DeleteAclsResponse(Message):
    """DeleteAclsResponse: the response of API key 31; versions 1-3, flexible 2+."""

    __slots__ = ()
    throttle_time_ms: int
    filter_results: tuple[DeleteAclsResponse.DeleteAclsFilterResult, ...]

    class DeleteAclsMatchingAcl(Struct):
        """DeleteAclsResponse.DeleteAclsMatchingAcl: versions 0+."""

        __slots__ = ()
        error_code: int
        error_message: str | None
        resource_type: int
        resource_name: str
        pattern_type: int  # versions 1+
        principal: str
        host: str
        operation: int
        permission_type: int

    class DeleteAclsFilterResult(Struct):
        """DeleteAclsResponse.DeleteAclsFilterResult: versions 0+."""

        __slots__ = ()
        error_code: int
        error_message: str | None
        matching_acls: tuple[DeleteAclsResponse.DeleteAclsMatchingAcl, ...]


class DeleteTopicsRequest(Message):
    """DeleteTopicsRequest: the request of API key 20; versions 0-6, flexible 4+."""

    __slots__ = ()
    topics: tuple[DeleteTopicsRequest.DeleteTopicState, ...]  # versions 6+
    topic_names: tuple[str, ...]  # versions 0-5
    timeout_ms: int

    class DeleteTopicState(Struct):
        """DeleteTopicsRequest.DeleteTopicState: versions 6+."""

        __slots__ = ()
        name: str | None
        topic_id: uuid.UUID


class DeleteTopicsResponse(Message):
    """DeleteTopicsResponse: the response of API key 20; versions 0-6, flexible 4+."""

    __slots__ = ()
    throttle_time_ms: int  # versions 1+
    responses: tuple[DeleteTopicsResponse.DeletableTopicResult, ...]

    class DeletableTopicResult(Struct):
        """DeleteTopicsResponse.DeletableTopicResult: versions 0+."""

        __slots__ = ()
        name: str | None  # nullable 6+
        topic_id: uuid.UUID  # versions 6+
        error_code: int
        error_message: str | None  # versions 5+


class DescribeAclsRequest(Message):
    """DescribeAclsRequest: the request of API key 29; versions 1-3, flexible 2+."""

    __slots__ = ()
    resource_type_filter: int
    resource_name_filter: str | None
    pattern_type_filter: int
    principal_filter: str | None
    host_filter: str | None
    operation: int
    permission_type: int


class DescribeAclsResponse(Message):
    """DescribeAclsResponse: the response of API key 29; versions 1-3, flexible 2+."""

    __slots__ = ()
    throttle_time_ms: int
    error_code: int
    error_message: str | None
    resources: tuple[DescribeAclsResponse.DescribeAclsResource, ...]

    class AclDescription(Struct):
        """DescribeAclsResponse.AclDescription: versions 0+."""

        __slots__ = ()
        principal: str
        host: str
        operation: int
        permission_type: int

    class DescribeAclsResource(Struct):
        """DescribeAclsResponse.DescribeAclsResource: versions 0+."""

        __slots__ = ()
        resource_type: int
        resource_name: str
        pattern_type: int  # versions 1+
        acls: tuple[DescribeAclsResponse.AclDescription, ...]


class DescribeClusterRequest(Message):
    """DescribeClusterRequest: the request of API key 60; versions 0-2, flexible 0+."""

    __slots__ = ()
    include_cluster_authorized_operations: bool
    endpoint_type: int  # versions 1+
    include_fenced_brokers: bool  # versions 2+


class DescribeClusterResponse(Message):
    """DescribeClusterResponse: the response of API key 60; versions 0-2, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int
    error_code: int
    error_message: str | None
    endpoint_type: int  # versions 1+
    cluster_id: str
    controller_id: int
    brokers: tuple[DescribeClusterResponse.DescribeClusterBroker, ...]
    cluster_authorized_operations: int

    class DescribeClusterBroker(Struct):
        """DescribeClusterResponse.DescribeClusterBroker: versions 0+."""

        __slots__ = ()
        broker_id: int
        host: str
        port: int
        rack: str | None
        is_fenced: bool  # versions 2+


class DescribeConfigsRequest(Message):
    """DescribeConfigsRequest: the request of API key 32; versions 0-4, flexible 4+."""

    __slots__ = ()
    resources: tuple[DescribeConfigsRequest.DescribeConfigsResource, ...]
    include_synonyms: bool  # versions 1+
    include_documentation: bool  # versions 3+

    class DescribeConfigsResource(Struct):
        """DescribeConfigsRequest.DescribeConfigsResource: versions 0+."""

        __slots__ = ()
        resource_type: int
        resource_name: str
        configuration_keys: tuple[str, ...] | None


class DescribeConfigsResponse(Message):
    """DescribeConfigsResponse: the response of API key 32; versions 0-4, flexible 4+."""

    __slots__ = ()
    throttle_time_ms: int
    results: tuple[DescribeConfigsResponse.DescribeConfigsResult, ...]

    class DescribeConfigsSynonym(Struct):
        """DescribeConfigsResponse.DescribeConfigsSynonym: versions 1+."""

        __slots__ = ()
        name: str
        value: str | None
        source: int

    class DescribeConfigsResourceResult(Struct):
        """DescribeConfigsResponse.DescribeConfigsResourceResult: versions 0+."""

        __slots__ = ()
        name: str
        value: str | None
        read_only: bool
        is_default: bool  # versions 0
        config_source: int  # versions 1+
        is_sensitive: bool
        synonyms: tuple[DescribeConfigsResponse.DescribeConfigsSynonym, ...]  # versions 1+
        config_type: int  # versions 3+
        documentation: str | None  # versions 3+

    class DescribeConfigsResult(Struct):
        """DescribeConfigsResponse.DescribeConfigsResult: versions 0+."""

        __slots__ = ()
        error_code: int
        error_message: str | None
        resource_type: int
        resource_name: str
        configs: tuple[DescribeConfigsResponse.DescribeConfigsResourceResult, ...]


class DescribeLogDirsRequest(Message):
    """DescribeLogDirsRequest: the request of API key 35; versions 0-5, flexible 2+."""

    __slots__ = ()
    topics: tuple[DescribeLogDirsRequest.DescribableLogDirTopic, ...] | None

    class DescribableLogDirTopic(Struct):
        """DescribeLogDirsRequest.DescribableLogDirTopic: versions 0+."""

        __slots__ = ()
        topic: str
        partitions: tuple[int, ...]


class DescribeLogDirsResponse(Message):
    """DescribeLogDirsResponse: the response of API key 35; versions 0-5, flexible 2+."""

    __slots__ = ()
    throttle_time_ms: int
    error_code: int  # versions 3+
    results: tuple[DescribeLogDirsResponse.DescribeLogDirsResult, ...]

    class DescribeLogDirsPartition(Struct):
        """DescribeLogDirsResponse.DescribeLogDirsPartition: versions 0+."""

        __slots__ = ()
        partition_index: int
        partition_size: int
        offset_lag: int
        is_future_key: bool

    class DescribeLogDirsTopic(Struct):
        """DescribeLogDirsResponse.DescribeLogDirsTopic: versions 0+."""

        __slots__ = ()
        name: str
        partitions: tuple[DescribeLogDirsResponse.DescribeLogDirsPartition, ...]

    class DescribeLogDirsResult(Struct):
        """DescribeLogDirsResponse.DescribeLogDirsResult: versions 0+."""

        __slots__ = ()
        error_code: int
        log_dir: str
        topics: tuple[DescribeLogDirsResponse.DescribeLogDirsTopic, ...]
        total_bytes: int  # versions 4+
        usable_bytes: int  # versions 4+
        is_cordoned: bool  # versions 5+


class DescribeQuorumRequest(Message):
    """DescribeQuorumRequest: the request of API key 55; versions 0-2, flexible 0+."""

    __slots__ = ()
    topics: tuple[DescribeQuorumRequest.TopicData, ...]

    class PartitionData(Struct):
        """DescribeQuorumRequest.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int

    class TopicData(Struct):
        """DescribeQuorumRequest.TopicData: versions 0+."""

        __slots__ = ()
        topic_name: str
        partitions: tuple[DescribeQuorumRequest.PartitionData, ...]


class DescribeQuorumResponse(Message):
    """DescribeQuorumResponse: the response of API key 55; versions 0-2, flexible 0+."""

    __slots__ = ()
    error_code: int
    error_message: str | None  # versions 2+
    topics: tuple[DescribeQuorumResponse.TopicData, ...]
    nodes: tuple[DescribeQuorumResponse.Node, ...]  # versions 2+

    class ReplicaState(Struct):
        """DescribeQuorumResponse.ReplicaState: versions 0+."""

        __slots__ = ()
        replica_id: int
        replica_directory_id: uuid.UUID  # versions 2+
        log_end_offset: int
        last_fetch_timestamp: int  # versions 1+
        last_caught_up_timestamp: int  # versions 1+

    class PartitionData(Struct):
        """DescribeQuorumResponse.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int
        error_code: int
        error_message: str | None  # versions 2+
        leader_id: int
        leader_epoch: int
        high_watermark: int
        current_voters: tuple[DescribeQuorumResponse.ReplicaState, ...]
        observers: tuple[DescribeQuorumResponse.ReplicaState, ...]

    class TopicData(Struct):
        """DescribeQuorumResponse.TopicData: versions 0+."""

        __slots__ = ()
        topic_name: str
        partitions: tuple[DescribeQuorumResponse.PartitionData, ...]

    class Listener(Struct):
        """DescribeQuorumResponse.Listener: versions 2+."""

        __slots__ = ()
        name: str
        host: str
        port: int

    class Node(Struct):
        """DescribeQuorumResponse.Node: versions 2+."""

        __slots__ = ()
        node_id: int
        listeners: tuple[DescribeQuorumResponse.Listener, ...]


class DescribeTopicPartitionsRequest(Message):
    """DescribeTopicPartitionsRequest: the request of API key 75; versions 0, flexible 0+."""

    __slots__ = ()
    topics: tuple[DescribeTopicPartitionsRequest.TopicRequest, ...]
    response_partition_limit: int
    cursor: DescribeTopicPartitionsRequest.Cursor | None

    class TopicRequest(Struct):
        """DescribeTopicPartitionsRequest.TopicRequest: versions 0+."""

        __slots__ = ()
        name: str

    class Cursor(Struct):
        """DescribeTopicPartitionsRequest.Cursor: versions 0+."""

        __slots__ = ()
        topic_name: str
        partition_index: int


class DescribeTopicPartitionsResponse(Message):
    """DescribeTopicPartitionsResponse: the response of API key 75; versions 0, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int
    topics: tuple[DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponseTopic, ...]
    next_cursor: DescribeTopicPartitionsResponse.Cursor | None

    class DescribeTopicPartitionsResponsePartition(Struct):
        """DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponsePartition: versions 0+."""

        __slots__ = ()
        error_code: int
        partition_index: int
        leader_id: int
        leader_epoch: int
        replica_nodes: tuple[int, ...]
        isr_nodes: tuple[int, ...]
        eligible_leader_replicas: tuple[int, ...] | None
        last_known_elr: tuple[int, ...] | None
        offline_replicas: tuple[int, ...]

    class DescribeTopicPartitionsResponseTopic(Struct):
        """DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponseTopic: versions 0+."""

        __slots__ = ()
        error_code: int
        name: str | None
        topic_id: uuid.UUID
        is_internal: bool
        partitions: tuple[DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponsePartition, ...]
        topic_authorized_operations: int

    class Cursor(Struct):
        """DescribeTopicPartitionsResponse.Cursor: versions 0+."""

        __slots__ = ()
        topic_name: str
        partition_index: int


class DescribeUserScramCredentialsRequest(Message):
    """DescribeUserScramCredentialsRequest: the request of API key 50; versions 0, flexible 0+."""

    __slots__ = ()
    users: tuple[DescribeUserScramCredentialsRequest.UserName, ...] | None

    class UserName(Struct):
        """DescribeUserScramCredentialsRequest.UserName: versions 0+."""

        __slots__ = ()
        name: str


class DescribeUserScramCredentialsResponse(Message):
    """DescribeUserScramCredentialsResponse: the response of API key 50; versions 0, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int
    error_code: int
    error_message: str | None
    results: tuple[DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult, ...]

    class CredentialInfo(Struct):
        """DescribeUserScramCredentialsResponse.CredentialInfo: versions 0+."""

        __slots__ = ()
        mechanism: int
        iterations: int

    class DescribeUserScramCredentialsResult(Struct):
        """DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult: versions 0+."""

        __slots__ = ()
        user: str
        error_code: int
        error_message: str | None
        credential_infos: tuple[DescribeUserScramCredentialsResponse.CredentialInfo, ...]


class ElectLeadersRequest(Message):
    """ElectLeadersRequest: the request of API key 43; versions 0-2, flexible 2+."""

    __slots__ = ()
    election_type: int  # versions 1+
    topic_partitions: tuple[ElectLeadersRequest.TopicPartitions, ...] | None
    timeout_ms: int

    class TopicPartitions(Struct):
        """ElectLeadersRequest.TopicPartitions: versions 0+."""

        __slots__ = ()
        topic: str
        partitions: tuple[int, ...]


class ElectLeadersResponse(Message):
    """ElectLeadersResponse: the response of API key 43; versions 0-2, flexible 2+."""

    __slots__ = ()
    throttle_time_ms: int
    error_code: int  # versions 1+
    replica_election_results: tuple[ElectLeadersResponse.ReplicaElectionResult, ...]

    class PartitionResult(Struct):
        """ElectLeadersResponse.PartitionResult: versions 0+."""

        __slots__ = ()
        partition_id: int
        error_code: int
        error_message: str | None

    class ReplicaElectionResult(Struct):
        """ElectLeadersResponse.ReplicaElectionResult: versions 0+."""

        __slots__ = ()
        topic: str
        partition_result: tuple[ElectLeadersResponse.PartitionResult, ...]


class EndQuorumEpochRequest(Message):
    """EndQuorumEpochRequest: the request of API key 54; versions 0-1, flexible 1+."""

    __slots__ = ()
    cluster_id: str | None
    topics: tuple[EndQuorumEpochRequest.TopicData, ...]
    leader_endpoints: tuple[EndQuorumEpochRequest.LeaderEndpoint, ...]  # versions 1+

    class ReplicaInfo(Struct):
        """EndQuorumEpochRequest.ReplicaInfo: versions 1+."""

        __slots__ = ()
        candidate_id: int
        candidate_directory_id: uuid.UUID

    class PartitionData(Struct):
        """EndQuorumEpochRequest.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int
        leader_id: int
        leader_epoch: int
        preferred_successors: tuple[int, ...]  # versions 0
        preferred_candidates: tuple[EndQuorumEpochRequest.ReplicaInfo, ...]  # versions 1+

    class TopicData(Struct):
        """EndQuorumEpochRequest.TopicData: versions 0+."""

        __slots__ = ()
        topic_name: str
        partitions: tuple[EndQuorumEpochRequest.PartitionData, ...]

    class LeaderEndpoint(Struct):
        """EndQuorumEpochRequest.LeaderEndpoint: versions 1+."""

        __slots__ = ()
        name: str
        host: str
        port: int


class EndQuorumEpochResponse(Message):
    """EndQuorumEpochResponse: the response of API key 54; versions 0-1, flexible 1+."""

    __slots__ = ()
    error_code: int
    topics: tuple[EndQuorumEpochResponse.TopicData, ...]
    node_endpoints: tuple[EndQuorumEpochResponse.NodeEndpoint, ...]  # versions 1+, tag 0

    class PartitionData(Struct):
        """EndQuorumEpochResponse.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int
        error_code: int
        leader_id: int
        leader_epoch: int

    class TopicData(Struct):
        """EndQuorumEpochResponse.TopicData: versions 0+."""

        __slots__ = ()
        topic_name: str
        partitions: tuple[EndQuorumEpochResponse.PartitionData, ...]

    class NodeEndpoint(Struct):
        """EndQuorumEpochResponse.NodeEndpoint: versions 1+."""

        __slots__ = ()
        node_id: int
        host: str
        port: int


class FetchRequest(Message):
    """FetchRequest: the request of API key 1; versions 4-17, flexible 12+."""

    __slots__ = ()
    cluster_id: str | None  # versions 12+, tag 0
    replica_id: int  # versions 0-14
    replica_state: FetchRequest.ReplicaState  # versions 15+, tag 1
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    isolation_level: int
    session_id: int  # versions 7+
    session_epoch: int  # versions 7+
    topics: tuple[FetchRequest.FetchTopic, ...]
    forgotten_topics_data: tuple[FetchRequest.ForgottenTopic, ...]  # versions 7+
    rack_id: str  # versions 11+

    class ReplicaState(Struct):
        """FetchRequest.ReplicaState: versions 15+."""

        __slots__ = ()
        replica_id: int
        replica_epoch: int

    class FetchPartition(Struct):
        """FetchRequest.FetchPartition: versions 0+."""

        __slots__ = ()
        partition: int
        current_leader_epoch: int  # versions 9+
        fetch_offset: int
        last_fetched_epoch: int  # versions 12+
        log_start_offset: int  # versions 5+
        partition_max_bytes: int
        replica_directory_id: uuid.UUID  # versions 17+, tag 0

    class FetchTopic(Struct):
        """FetchRequest.FetchTopic: versions 0+."""

        __slots__ = ()
        topic: str  # versions 0-12
        topic_id: uuid.UUID  # versions 13+
        partitions: tuple[FetchRequest.FetchPartition, ...]

    class ForgottenTopic(Struct):
        """FetchRequest.ForgottenTopic: versions 7+."""

        __slots__ = ()
        topic: str  # versions 7-12
        topic_id: uuid.UUID  # versions 13+
        partitions: tuple[int, ...]


class FetchResponse(Message):
    """FetchResponse: the response of API key 1; versions 4-17, flexible 12+."""

    __slots__ = ()
    throttle_time_ms: int
    error_code: int  # versions 7+
    session_id: int  # versions 7+
    responses: tuple[FetchResponse.FetchableTopicResponse, ...]
    node_endpoints: tuple[FetchResponse.NodeEndpoint, ...]  # versions 16+, tag 0

    class EpochEndOffset(Struct):
        """FetchResponse.EpochEndOffset: versions 12+."""

        __slots__ = ()
        epoch: int
        end_offset: int

    class LeaderIdAndEpoch(Struct):
        """FetchResponse.LeaderIdAndEpoch: versions 12+."""

        __slots__ = ()
        leader_id: int
        leader_epoch: int

    class SnapshotId(Struct):
        """FetchResponse.SnapshotId: versions 12+."""

        __slots__ = ()
        end_offset: int
        epoch: int

    class AbortedTransaction(Struct):
        """FetchResponse.AbortedTransaction: versions 4+."""

        __slots__ = ()
        producer_id: int
        first_offset: int

    class PartitionData(Struct):
        """FetchResponse.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int
        error_code: int
        high_watermark: int
        last_stable_offset: int  # versions 4+
        log_start_offset: int  # versions 5+
        diverging_epoch: FetchResponse.EpochEndOffset  # versions 12+, tag 0
        current_leader: FetchResponse.LeaderIdAndEpoch  # versions 12+, tag 1
        snapshot_id: FetchResponse.SnapshotId  # versions 12+, tag 2
        aborted_transactions: tuple[FetchResponse.AbortedTransaction, ...] | None  # versions 4+
        preferred_read_replica: int  # versions 11+
        records: bytes | None

    class FetchableTopicResponse(Struct):
        """FetchResponse.FetchableTopicResponse: versions 0+."""

        __slots__ = ()
        topic: str  # versions 0-12
        topic_id: uuid.UUID  # versions 13+
        partitions: tuple[FetchResponse.PartitionData, ...]

    class NodeEndpoint(Struct):
        """FetchResponse.NodeEndpoint: versions 16+."""

        __slots__ = ()
        node_id: int
        host: str
        port: int
        rack: str | None


class FetchSnapshotRequest(Message):
    """FetchSnapshotRequest: the request of API key 59; versions 0-1, flexible 0+."""

    __slots__ = ()
    cluster_id: str | None  # tag 0
    replica_id: int
    max_bytes: int
    topics: tuple[FetchSnapshotRequest.TopicSnapshot, ...]

    class SnapshotId(Struct):
        """FetchSnapshotRequest.SnapshotId: versions 0+."""

        __slots__ = ()
        end_offset: int
        epoch: int

    class PartitionSnapshot(Struct):
        """FetchSnapshotRequest.PartitionSnapshot: versions 0+."""

        __slots__ = ()
        partition: int
        current_leader_epoch: int
        snapshot_id: FetchSnapshotRequest.SnapshotId
        position: int
        replica_directory_id: uuid.UUID  # versions 1+, tag 0

    class TopicSnapshot(Struct):
        """FetchSnapshotRequest.TopicSnapshot: versions 0+."""

        __slots__ = ()
        name: str
        partitions: tuple[FetchSnapshotRequest.PartitionSnapshot, ...]


class FetchSnapshotResponse(Message):
    """FetchSnapshotResponse: the response of API key 59; versions 0-1, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int
    error_code: int
    topics: tuple[FetchSnapshotResponse.TopicSnapshot, ...]
    node_endpoints: tuple[FetchSnapshotResponse.NodeEndpoint, ...]  # versions 1+, tag 0

    class SnapshotId(Struct):
        """FetchSnapshotResponse.SnapshotId: versions 0+."""

        __slots__ = ()
        end_offset: int
        epoch: int

    class LeaderIdAndEpoch(Struct):
        """FetchSnapshotResponse.LeaderIdAndEpoch: versions 0+."""

        __slots__ = ()
        leader_id: int
        leader_epoch: int

    class PartitionSnapshot(Struct):
        """FetchSnapshotResponse.PartitionSnapshot: versions 0+."""

        __slots__ = ()
        index: int
        error_code: int
        snapshot_id: FetchSnapshotResponse.SnapshotId
        current_leader: FetchSnapshotResponse.LeaderIdAndEpoch  # tag 0
        size: int
        position: int
        unaligned_records: bytes

    class TopicSnapshot(Struct):
        """FetchSnapshotResponse.TopicSnapshot: versions 0+."""

        __slots__ = ()
        name: str
        partitions: tuple[FetchSnapshotResponse.PartitionSnapshot, ...]

    class NodeEndpoint(Struct):
        """FetchSnapshotResponse.NodeEndpoint: versions 1+."""

        __slots__ = ()
        node_id: int
        host: str
        port: int


class IncrementalAlterConfigsRequest(Message):
    """IncrementalAlterConfigsRequest: the request of API key 44; versions 0-1, flexible 1+."""

    __slots__ = ()
    resources: tuple[IncrementalAlterConfigsRequest.AlterConfigsResource, ...]
    validate_only: bool

    class AlterableConfig(Struct):
        """IncrementalAlterConfigsRequest.AlterableConfig: versions 0+."""

        __slots__ = ()
        name: str
        config_operation: int
        value: str | None

    class AlterConfigsResource(Struct):
        """IncrementalAlterConfigsRequest.AlterConfigsResource: versions 0+."""

        __slots__ = ()
        resource_type: int
        resource_name: str
        configs: tuple[IncrementalAlterConfigsRequest.AlterableConfig, ...]


class IncrementalAlterConfigsResponse(Message):
    """IncrementalAlterConfigsResponse: the response of API key 44; versions 0-1, flexible 1+."""

    __slots__ = ()
    throttle_time_ms: int
    responses: tuple[IncrementalAlterConfigsResponse.AlterConfigsResourceResponse, ...]

    class AlterConfigsResourceResponse(Struct):
        """IncrementalAlterConfigsResponse.AlterConfigsResourceResponse: versions 0+."""

        __slots__ = ()
        error_code: int
        error_message: str | None
        resource_type: int
        resource_name: str


class LeaderAndIsrRequest(Message):
    """LeaderAndIsrRequest: the request of API key 4; versions 0-7, flexible 4+."""

    __slots__ = ()
    controller_id: int
    is_k_raft_controller: bool  # versions 7+
    controller_epoch: int
    broker_epoch: int  # versions 2+
    type: int  # versions 5+
    ungrouped_partition_states: tuple[LeaderAndIsrRequest.LeaderAndIsrPartitionState, ...]  # versions 0-1
    topic_states: tuple[LeaderAndIsrRequest.LeaderAndIsrTopicState, ...]  # versions 2+
    live_leaders: tuple[LeaderAndIsrRequest.LeaderAndIsrLiveLeader, ...]

    class LeaderAndIsrPartitionState(Struct):
        """LeaderAndIsrRequest.LeaderAndIsrPartitionState: versions 0+."""

        __slots__ = ()
        topic_name: str  # versions 0-1
        partition_index: int
        controller_epoch: int
        leader: int
        leader_epoch: int
        isr: tuple[int, ...]
        partition_epoch: int
        replicas: tuple[int, ...]
        adding_replicas: tuple[int, ...]  # versions 3+
        removing_replicas: tuple[int, ...]  # versions 3+
        is_new: bool  # versions 1+
        leader_recovery_state: int  # versions 6+

    class LeaderAndIsrTopicState(Struct):
        """LeaderAndIsrRequest.LeaderAndIsrTopicState: versions 2+."""

        __slots__ = ()
        topic_name: str
        topic_id: uuid.UUID  # versions 5+
        partition_states: tuple[LeaderAndIsrRequest.LeaderAndIsrPartitionState, ...]

    class LeaderAndIsrLiveLeader(Struct):
        """LeaderAndIsrRequest.LeaderAndIsrLiveLeader: versions 0+."""

        __slots__ = ()
        broker_id: int
        host_name: str
        port: int


class LeaderAndIsrResponse(Message):
    """LeaderAndIsrResponse: the response of API key 4; versions 0-7, flexible 4+."""

    __slots__ = ()
    error_code: int
    partition_errors: tuple[LeaderAndIsrResponse.LeaderAndIsrPartitionError, ...]  # versions 0-4
    topics: tuple[LeaderAndIsrResponse.LeaderAndIsrTopicError, ...]  # versions 5+

    class LeaderAndIsrPartitionError(Struct):
        """LeaderAndIsrResponse.LeaderAndIsrPartitionError: versions 0+."""

        __slots__ = ()
        topic_name: str  # versions 0-4
        partition_index: int
        error_code: int

    class LeaderAndIsrTopicError(Struct):
        """LeaderAndIsrResponse.LeaderAndIsrTopicError: versions 5+."""

        __slots__ = ()
        topic_id: uuid.UUID
        partition_errors: tuple[LeaderAndIsrResponse.LeaderAndIsrPartitionError, ...]


class ListConfigResourcesRequest(Message):
    """ListConfigResourcesRequest: the request of API key 74; versions 0-1, flexible 0+."""

    __slots__ = ()
    resource_types: tuple[int, ...]  # versions 1+


class ListConfigResourcesResponse(Message):
    """ListConfigResourcesResponse: the response of API key 74; versions 0-1, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int
    error_code: int
    config_resources: tuple[ListConfigResourcesResponse.ConfigResource, ...]

    class ConfigResource(Struct):
        """ListConfigResourcesResponse.ConfigResource: versions 0+."""

        __slots__ = ()
        resource_name: str
        resource_type: int  # versions 1+


class ListPartitionReassignmentsRequest(Message):
    """ListPartitionReassignmentsRequest: the request of API key 46; versions 0, flexible 0+."""

    __slots__ = ()
    timeout_ms: int
    topics: tuple[ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics, ...] | None

    class ListPartitionReassignmentsTopics(Struct):
        """ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics: versions 0+."""

        __slots__ = ()
        name: str
        partition_indexes: tuple[int, ...]


class ListPartitionReassignmentsResponse(Message):
    """ListPartitionReassignmentsResponse: the response of API key 46; versions 0, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int
    error_code: int
    error_message: str | None
    topics: tuple[ListPartitionReassignmentsResponse.OngoingTopicReassignment, ...]

    class OngoingPartitionReassignment(Struct):
        """ListPartitionReassignmentsResponse.OngoingPartitionReassignment: versions 0+."""

        __slots__ = ()
        partition_index: int
        replicas: tuple[int, ...]
        adding_replicas: tuple[int, ...]
        removing_replicas: tuple[int, ...]

    class OngoingTopicReassignment(Struct):
        """ListPartitionReassignmentsResponse.OngoingTopicReassignment: versions 0+."""

        __slots__ = ()
        name: str
        partitions: tuple[ListPartitionReassignmentsResponse.OngoingPartitionReassignment, ...]


class MetadataRequest(Message):
    """MetadataRequest: the request of API key 3; versions 0-13, flexible 9+."""

    __slots__ = ()
    topics: tuple[MetadataRequest.MetadataRequestTopic, ...] | None  # nullable 1+
    allow_auto_topic_creation: bool  # versions 4+
    include_cluster_authorized_operations: bool  # versions 8-10
    include_topic_authorized_operations: bool  # versions 8+

    class MetadataRequestTopic(Struct):
        """MetadataRequest.MetadataRequestTopic: versions 0+."""

        __slots__ = ()
        topic_id: uuid.UUID  # versions 10+
        name: str | None  # nullable 10+


class MetadataResponse(Message):
    """MetadataResponse: the response of API key 3; versions 0-13, flexible 9+."""

    __slots__ = ()
    throttle_time_ms: int  # versions 3+
    brokers: tuple[MetadataResponse.MetadataResponseBroker, ...]
    cluster_id: str | None  # versions 2+
    controller_id: int  # versions 1+
    topics: tuple[MetadataResponse.MetadataResponseTopic, ...]
    cluster_authorized_operations: int  # versions 8-10
    error_code: int  # versions 13+

    class MetadataResponseBroker(Struct):
        """MetadataResponse.MetadataResponseBroker: versions 0+."""

        __slots__ = ()
        node_id: int
        host: str
        port: int
        rack: str | None  # versions 1+

    class MetadataResponsePartition(Struct):
        """MetadataResponse.MetadataResponsePartition: versions 0+."""

        __slots__ = ()
        error_code: int
        partition_index: int
        leader_id: int
        leader_epoch: int  # versions 7+
        replica_nodes: tuple[int, ...]
        isr_nodes: tuple[int, ...]
        offline_replicas: tuple[int, ...]  # versions 5+

    class MetadataResponseTopic(Struct):
        """MetadataResponse.MetadataResponseTopic: versions 0+."""

        __slots__ = ()
        error_code: int
        name: str | None  # nullable 12+
        topic_id: uuid.UUID  # versions 10+
        is_internal: bool  # versions 1+
        partitions: tuple[MetadataResponse.MetadataResponsePartition, ...]
        topic_authorized_operations: int  # versions 8+


class RemoveRaftVoterRequest(Message):
    """RemoveRaftVoterRequest: the request of API key 81; versions 0, flexible 0+."""

    __slots__ = ()
    cluster_id: str | None
    voter_id: int
    voter_directory_id: uuid.UUID


class RemoveRaftVoterResponse(Message):
    """RemoveRaftVoterResponse: the response of API key 81; versions 0, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int
    error_code: int
    error_message: str | None


class RequestHeader(Message):
    """RequestHeader: a header schema; versions 0-2, flexible 2+."""

    __slots__ = ()
    request_api_key: int
    request_api_version: int
    correlation_id: int
    client_id: str | None  # versions 1+


class ResponseHeader(Message):
    """ResponseHeader: a header schema; versions 0-1, flexible 1+."""

    __slots__ = ()
    correlation_id: int


class SaslAuthenticateRequest(Message):
    """SaslAuthenticateRequest: the request of API key 36; versions 0-2, flexible 2+."""

    __slots__ = ()
    auth_bytes: bytes


class SaslAuthenticateResponse(Message):
    """SaslAuthenticateResponse: the response of API key 36; versions 0-2, flexible 2+."""

    __slots__ = ()
    error_code: int
    error_message: str | None
    auth_bytes: bytes
    session_lifetime_ms: int  # versions 1+


class SaslHandshakeRequest(Message):
    """SaslHandshakeRequest: the request of API key 17; versions 0-1."""

    __slots__ = ()
    mechanism: str


class SaslHandshakeResponse(Message):
    """SaslHandshakeResponse: the response of API key 17; versions 0-1."""

    __slots__ = ()
    error_code: int
    mechanisms: tuple[str, ...]


class UpdateRaftVoterRequest(Message):
    """UpdateRaftVoterRequest: the request of API key 82; versions 0, flexible 0+."""

    __slots__ = ()
    cluster_id: str | None
    current_leader_epoch: int
    voter_id: int
    voter_directory_id: uuid.UUID
    listeners: tuple[UpdateRaftVoterRequest.Listener, ...]
    k_raft_version_feature: UpdateRaftVoterRequest.KRaftVersionFeature

    class Listener(Struct):
        """UpdateRaftVoterRequest.Listener: versions 0+."""

        __slots__ = ()
        name: str
        host: str
        port: int

    class KRaftVersionFeature(Struct):
        """UpdateRaftVoterRequest.KRaftVersionFeature: versions 0+."""

        __slots__ = ()
        min_supported_version: int
        max_supported_version: int


class UpdateRaftVoterResponse(Message):
    """UpdateRaftVoterResponse: the response of API key 82; versions 0, flexible 0+."""

    __slots__ = ()
    throttle_time_ms: int
    error_code: int
    current_leader: UpdateRaftVoterResponse.CurrentLeader  # tag 0

    class CurrentLeader(Struct):
        """UpdateRaftVoterResponse.CurrentLeader: versions 0+."""

        __slots__ = ()
        leader_id: int
        leader_epoch: int
        host: str
        port: int


class VoteRequest(Message):
    """VoteRequest: the request of API key 52; versions 0-2, flexible 0+."""

    __slots__ = ()
    cluster_id: str | None
    voter_id: int  # versions 1+
    topics: tuple[VoteRequest.TopicData, ...]

    class PartitionData(Struct):
        """VoteRequest.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int
        replica_epoch: int
        replica_id: int
        replica_directory_id: uuid.UUID  # versions 1+
        voter_directory_id: uuid.UUID  # versions 1+
        last_offset_epoch: int
        last_offset: int
        pre_vote: bool  # versions 2+

    class TopicData(Struct):
        """VoteRequest.TopicData: versions 0+."""

        __slots__ = ()
        topic_name: str
        partitions: tuple[VoteRequest.PartitionData, ...]


class VoteResponse(Message):
    """VoteResponse: the response of API key 52; versions 0-2, flexible 0+."""

    __slots__ = ()
    error_code: int
    topics: tuple[VoteResponse.TopicData, ...]
    node_endpoints: tuple[VoteResponse.NodeEndpoint, ...]  # versions 1+, tag 0

    class PartitionData(Struct):
        """VoteResponse.PartitionData: versions 0+."""

        __slots__ = ()
        partition_index: int
        error_code: int
        leader_id: int
        leader_epoch: int
        vote_granted: bool

    class TopicData(Struct):
        """VoteResponse.TopicData: versions 0+."""

        __slots__ = ()
        topic_name: str
        partitions: tuple[VoteResponse.PartitionData, ...]

    class NodeEndpoint(Struct):
        """VoteResponse.NodeEndpoint: versions 1+."""

        __slots__ = ()
        node_id: int
        host: str
        port: int


ALL = bind_message_classes(globals(), load_package('kraftwire.schemas.messages'))
__all__ = [
    "AddRaftVoterRequest",
    "AddRaftVoterResponse",
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
    "CreateAclsRequest",
    "CreateAclsResponse",
    "CreatePartitionsRequest",
    "CreatePartitionsResponse",
    "CreateTopicsRequest",
    "CreateTopicsResponse",
    "DeleteAclsRequest",
    "DeleteAclsResponse",
    "DeleteTopicsRequest",
    "DeleteTopicsResponse",
    "DescribeAclsRequest",
    "DescribeAclsResponse",
    "DescribeClusterRequest",
    "DescribeClusterResponse",
    "DescribeConfigsRequest",
    "DescribeConfigsResponse",
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
    "IncrementalAlterConfigsRequest",
    "IncrementalAlterConfigsResponse",
    "LeaderAndIsrRequest",
    "LeaderAndIsrResponse",
    "ListConfigResourcesRequest",
    "ListConfigResourcesResponse",
    "ListPartitionReassignmentsRequest",
    "ListPartitionReassignmentsResponse",
    "MetadataRequest",
    "MetadataResponse",
    "RemoveRaftVoterRequest",
    "RemoveRaftVoterResponse",
    "RequestHeader",
    "ResponseHeader",
    "SaslAuthenticateRequest",
    "SaslAuthenticateResponse",
    "SaslHandshakeRequest",
    "SaslHandshakeResponse",
    "UpdateRaftVoterRequest",
    "UpdateRaftVoterResponse",
    "VoteRequest",
    "VoteResponse",
]
