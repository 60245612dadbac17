"""Kafka's error codes (``Errors`` in Kafka), each with Kafka's default message and whether
clients retry it.

Generated from ``schemas/`` by ``python -m kraftwire.codec.generate``; do not edit.
"""
from __future__ import annotations

from enum import IntEnum


class ErrorCode(IntEnum):
    """A Kafka error code; ``message`` is the text Kafka gives a code when a response carries no
    ErrorMessage (None for NONE), ``retriable`` whether Kafka's clients retry the request."""

    message: str | None
    retriable: bool

    # Called only as the members are made (a lookup, ``ErrorCode(3)``, finds the member): the defaults
    # are there for type checkers, which read a lookup as a call of this.
    def __new__(cls, code: int, message: str | None = None, retriable: bool = False) -> ErrorCode:
        member = int.__new__(cls, code)
        member._value_ = code
        member.message = message
        member.retriable = retriable
        return member

    UNKNOWN_SERVER_ERROR = (
        -1,
        "The server experienced an unexpected error when processing the request.",
        False,
    )
    NONE = 0, None, False
    OFFSET_OUT_OF_RANGE = (
        1,
        "The requested offset is not within the range of offsets maintained by the server.",
        False,
    )
    CORRUPT_MESSAGE = (
        2,
        "This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted "
        "topic, or is otherwise corrupt.",
        True,
    )
    UNKNOWN_TOPIC_OR_PARTITION = 3, "This server does not host this topic-partition.", True
    INVALID_FETCH_SIZE = 4, "The requested fetch size is invalid.", False
    LEADER_NOT_AVAILABLE = (
        5,
        "There is no leader for this topic-partition as we are in the middle of a leadership election.",
        True,
    )
    NOT_LEADER_OR_FOLLOWER = (
        6,
        "For requests intended only for the leader, this error indicates that the broker is not the current "
        "leader. For requests intended for any replica, this error indicates that the broker is not a "
        "replica of the topic partition.",
        True,
    )
    REQUEST_TIMED_OUT = 7, "The request timed out.", True
    BROKER_NOT_AVAILABLE = 8, "The broker is not available.", False
    REPLICA_NOT_AVAILABLE = (
        9,
        "The replica is not available for the requested topic-partition. Produce/Fetch requests and other "
        "requests intended only for the leader or follower return NOT_LEADER_OR_FOLLOWER if the broker is "
        "not a replica of the topic-partition.",
        True,
    )
    MESSAGE_TOO_LARGE = (
        10,
        "The request included a message larger than the max message size the server will accept.",
        False,
    )
    STALE_CONTROLLER_EPOCH = 11, "The controller moved to another broker.", False
    OFFSET_METADATA_TOO_LARGE = 12, "The metadata field of the offset request was too large.", False
    NETWORK_EXCEPTION = 13, "The server disconnected before a response was received.", True
    COORDINATOR_LOAD_IN_PROGRESS = 14, "The coordinator is loading and hence can't process requests.", True
    COORDINATOR_NOT_AVAILABLE = 15, "The coordinator is not available.", True
    NOT_COORDINATOR = 16, "This is not the correct coordinator.", True
    INVALID_TOPIC_EXCEPTION = 17, "The request attempted to perform an operation on an invalid topic.", False
    RECORD_LIST_TOO_LARGE = (
        18,
        "The request included message batch larger than the configured segment size on the server.",
        False,
    )
    NOT_ENOUGH_REPLICAS = (
        19,
        "Messages are rejected since there are fewer in-sync replicas than required.",
        True,
    )
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = (
        20,
        "Messages are written to the log, but to fewer in-sync replicas than required.",
        True,
    )
    INVALID_REQUIRED_ACKS = 21, "Produce request specified an invalid value for required acks.", False
    ILLEGAL_GENERATION = 22, "Specified group generation id is not valid.", False
    INCONSISTENT_GROUP_PROTOCOL = (
        23,
        "The group member's supported protocols are incompatible with those of existing members or first "
        "group member tried to join with empty protocol type or empty protocol list.",
        False,
    )
    INVALID_GROUP_ID = 24, "The group id is invalid.", False
    UNKNOWN_MEMBER_ID = 25, "The coordinator is not aware of this member.", False
    INVALID_SESSION_TIMEOUT = (
        26,
        "The session timeout is not within the range allowed by the broker (as configured by "
        "group.min.session.timeout.ms and group.max.session.timeout.ms).",
        False,
    )
    REBALANCE_IN_PROGRESS = 27, "The group is rebalancing, so a rejoin is needed.", False
    INVALID_COMMIT_OFFSET_SIZE = 28, "The committing offset data size is not valid.", False
    TOPIC_AUTHORIZATION_FAILED = 29, "Topic authorization failed.", False
    GROUP_AUTHORIZATION_FAILED = 30, "Group authorization failed.", False
    CLUSTER_AUTHORIZATION_FAILED = 31, "Cluster authorization failed.", False
    INVALID_TIMESTAMP = 32, "The timestamp of the message is out of acceptable range.", False
    UNSUPPORTED_SASL_MECHANISM = 33, "The broker does not support the requested SASL mechanism.", False
    ILLEGAL_SASL_STATE = 34, "Request is not valid given the current SASL state.", False
    UNSUPPORTED_VERSION = 35, "The version of API is not supported.", False
    TOPIC_ALREADY_EXISTS = 36, "Topic with this name already exists.", False
    INVALID_PARTITIONS = 37, "Number of partitions is below 1.", False
    INVALID_REPLICATION_FACTOR = (
        38,
        "Replication factor is below 1 or larger than the number of available brokers.",
        False,
    )
    INVALID_REPLICA_ASSIGNMENT = 39, "Replica assignment is invalid.", False
    INVALID_CONFIG = 40, "Configuration is invalid.", False
    NOT_CONTROLLER = 41, "This is not the correct controller for this cluster.", True
    INVALID_REQUEST = (
        42,
        "This most likely occurs because of a request being malformed by the client library or the message "
        "was sent to an incompatible broker. See the broker logs for more details.",
        False,
    )
    UNSUPPORTED_FOR_MESSAGE_FORMAT = (
        43,
        "The message format version on the broker does not support the request.",
        False,
    )
    POLICY_VIOLATION = 44, "Request parameters do not satisfy the configured policy.", False
    OUT_OF_ORDER_SEQUENCE_NUMBER = 45, "The broker received an out of order sequence number.", False
    DUPLICATE_SEQUENCE_NUMBER = 46, "The broker received a duplicate sequence number.", False
    INVALID_PRODUCER_EPOCH = 47, "Producer attempted to produce with an old epoch.", False
    INVALID_TXN_STATE = 48, "The producer attempted a transactional operation in an invalid state.", False
    INVALID_PRODUCER_ID_MAPPING = (
        49,
        "The producer attempted to use a producer id which is not currently assigned to its transactional "
        "id.",
        False,
    )
    INVALID_TRANSACTION_TIMEOUT = (
        50,
        "The transaction timeout is larger than the maximum value allowed by the broker (as configured by "
        "transaction.max.timeout.ms).",
        False,
    )
    CONCURRENT_TRANSACTIONS = (
        51,
        "The producer attempted to update a transaction while another concurrent operation on the same "
        "transaction was ongoing.",
        True,
    )
    TRANSACTION_COORDINATOR_FENCED = (
        52,
        "Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the current "
        "coordinator for a given producer.",
        False,
    )
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53, "Transactional Id authorization failed.", False
    SECURITY_DISABLED = 54, "Security features are disabled.", False
    OPERATION_NOT_ATTEMPTED = (
        55,
        "The broker did not attempt to execute this operation. This may happen for batched RPCs where some "
        "operations in the batch failed, causing the broker to respond without trying the rest.",
        False,
    )
    KAFKA_STORAGE_ERROR = 56, "Disk error when trying to access log file on the disk.", True
    LOG_DIR_NOT_FOUND = 57, "The user-specified log directory is not found in the broker config.", False
    SASL_AUTHENTICATION_FAILED = 58, "SASL Authentication failed.", False
    UNKNOWN_PRODUCER_ID = (
        59,
        "This exception is raised by the broker if it could not locate the producer metadata associated with"
        " the producerId in question. This could happen if, for instance, the producer's records were "
        "deleted because their retention time had elapsed. Once the last records of the producerId are "
        "removed, the producer's metadata is removed from the broker, and future appends by the producer "
        "will return this exception.",
        False,
    )
    REASSIGNMENT_IN_PROGRESS = 60, "A partition reassignment is in progress.", False
    DELEGATION_TOKEN_AUTH_DISABLED = 61, "Delegation Token feature is not enabled.", False
    DELEGATION_TOKEN_NOT_FOUND = 62, "Delegation Token is not found on server.", False
    DELEGATION_TOKEN_OWNER_MISMATCH = 63, "Specified Principal is not valid Owner/Renewer.", False
    DELEGATION_TOKEN_REQUEST_NOT_ALLOWED = (
        64,
        "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token "
        "authenticated channels.",
        False,
    )
    DELEGATION_TOKEN_AUTHORIZATION_FAILED = 65, "Delegation Token authorization failed.", False
    DELEGATION_TOKEN_EXPIRED = 66, "Delegation Token is expired.", False
    INVALID_PRINCIPAL_TYPE = 67, "Supplied principalType is not supported.", False
    NON_EMPTY_GROUP = 68, "The group is not empty.", False
    GROUP_ID_NOT_FOUND = 69, "The group id does not exist.", False
    FETCH_SESSION_ID_NOT_FOUND = 70, "The fetch session ID was not found.", True
    INVALID_FETCH_SESSION_EPOCH = 71, "The fetch session epoch is invalid.", True
    LISTENER_NOT_FOUND = (
        72,
        "There is no listener on the leader broker that matches the listener on which metadata request was "
        "processed.",
        True,
    )
    TOPIC_DELETION_DISABLED = 73, "Topic deletion is disabled.", False
    FENCED_LEADER_EPOCH = 74, "The leader epoch in the request is older than the epoch on the broker.", True
    UNKNOWN_LEADER_EPOCH = 75, "The leader epoch in the request is newer than the epoch on the broker.", True
    UNSUPPORTED_COMPRESSION_TYPE = (
        76,
        "The requesting client does not support the compression type of given partition.",
        False,
    )
    STALE_BROKER_EPOCH = 77, "Broker epoch has changed.", False
    OFFSET_NOT_AVAILABLE = (
        78,
        "The leader high watermark has not caught up from a recent leader election so the offsets cannot be "
        "guaranteed to be monotonically increasing.",
        True,
    )
    MEMBER_ID_REQUIRED = (
        79,
        "The group member needs to have a valid member id before actually entering a consumer group.",
        False,
    )
    PREFERRED_LEADER_NOT_AVAILABLE = 80, "The preferred leader was not available.", True
    GROUP_MAX_SIZE_REACHED = 81, "The group has reached its maximum size.", False
    FENCED_INSTANCE_ID = (
        82,
        "The broker rejected this static consumer since another consumer with the same group.instance.id has"
        " registered with a different member.id.",
        False,
    )
    ELIGIBLE_LEADERS_NOT_AVAILABLE = 83, "Eligible topic partition leaders are not available.", True
    ELECTION_NOT_NEEDED = 84, "Leader election not needed for topic partition.", True
    NO_REASSIGNMENT_IN_PROGRESS = 85, "No partition reassignment is in progress.", False
    GROUP_SUBSCRIBED_TO_TOPIC = (
        86,
        "Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it.",
        False,
    )
    INVALID_RECORD = 87, "This record has failed the validation on broker and hence will be rejected.", False
    UNSTABLE_OFFSET_COMMIT = 88, "There are unstable offsets that need to be cleared.", True
    THROTTLING_QUOTA_EXCEEDED = 89, "The throttling quota has been exceeded.", True
    PRODUCER_FENCED = (
        90,
        "There is a newer producer with the same transactionalId which fences the current one.",
        False,
    )
    RESOURCE_NOT_FOUND = 91, "A request illegally referred to a resource that does not exist.", False
    DUPLICATE_RESOURCE = 92, "A request illegally referred to the same resource twice.", False
    UNACCEPTABLE_CREDENTIAL = 93, "Requested credential would not meet criteria for acceptability.", False
    INCONSISTENT_VOTER_SET = (
        94,
        "Indicates that the either the sender or recipient of a voter-only request is not one of the "
        "expected voters.",
        False,
    )
    INVALID_UPDATE_VERSION = 95, "The given update version was invalid.", False
    FEATURE_UPDATE_FAILED = (
        96,
        "Unable to update finalized features due to an unexpected server error.",
        False,
    )
    PRINCIPAL_DESERIALIZATION_FAILURE = (
        97,
        "Request principal deserialization failed during forwarding. This indicates an internal error on the"
        " broker cluster security setup.",
        False,
    )
    SNAPSHOT_NOT_FOUND = 98, "Requested snapshot was not found.", False
    POSITION_OUT_OF_RANGE = (
        99,
        "Requested position is not greater than or equal to zero, and less than the size of the snapshot.",
        False,
    )
    UNKNOWN_TOPIC_ID = 100, "This server does not host this topic ID.", True
    DUPLICATE_BROKER_REGISTRATION = 101, "This broker ID is already in use.", False
    BROKER_ID_NOT_REGISTERED = 102, "The given broker ID was not registered.", False
    INCONSISTENT_TOPIC_ID = 103, "The log's topic ID did not match the topic ID in the request.", True
    INCONSISTENT_CLUSTER_ID = (
        104,
        "The clusterId in the request does not match that found on the server.",
        False,
    )
    TRANSACTIONAL_ID_NOT_FOUND = 105, "The transactionalId could not be found.", False
    FETCH_SESSION_TOPIC_ID_ERROR = 106, "The fetch session encountered inconsistent topic ID usage.", True
    INELIGIBLE_REPLICA = 107, "The new ISR contains at least one ineligible replica.", False
    NEW_LEADER_ELECTED = (
        108,
        "The AlterPartition request successfully updated the partition state but the leader has changed.",
        False,
    )
    OFFSET_MOVED_TO_TIERED_STORAGE = 109, "The requested offset is moved to tiered storage.", False
    FENCED_MEMBER_EPOCH = (
        110,
        "The member epoch is fenced by the group coordinator. The member must abandon all its partitions and"
        " rejoin.",
        False,
    )
    UNRELEASED_INSTANCE_ID = (
        111,
        "The instance ID is still used by another member in the consumer group. That member must leave "
        "first.",
        False,
    )
    UNSUPPORTED_ASSIGNOR = (
        112,
        "The assignor or its version range is not supported by the consumer group.",
        False,
    )
    STALE_MEMBER_EPOCH = (
        113,
        "The member epoch is stale. The member must retry after receiving its updated member epoch via the "
        "ConsumerGroupHeartbeat API.",
        False,
    )
    MISMATCHED_ENDPOINT_TYPE = 114, "The request was sent to an endpoint of the wrong type.", False
    UNSUPPORTED_ENDPOINT_TYPE = 115, "This endpoint type is not supported yet.", False
    UNKNOWN_CONTROLLER_ID = 116, "This controller ID is not known.", False
    UNKNOWN_SUBSCRIPTION_ID = (
        117,
        "Client sent a push telemetry request with an invalid or outdated subscription ID.",
        False,
    )
    TELEMETRY_TOO_LARGE = (
        118,
        "Client sent a push telemetry request larger than the maximum size the broker will accept.",
        False,
    )
    INVALID_REGISTRATION = 119, "The controller has considered the broker registration to be invalid.", False
    TRANSACTION_ABORTABLE = (
        120,
        "The server encountered an error with the transaction. The client can abort the transaction to "
        "continue using this transactional ID.",
        False,
    )
    INVALID_RECORD_STATE = (
        121,
        "The record state is invalid. The acknowledgement of delivery could not be completed.",
        False,
    )
    SHARE_SESSION_NOT_FOUND = 122, "The share session was not found.", True
    INVALID_SHARE_SESSION_EPOCH = 123, "The share session epoch is invalid.", True
    FENCED_STATE_EPOCH = (
        124,
        "The coordinator rejected the request because the state epoch did not match.",
        False,
    )
    INVALID_VOTER_KEY = 125, "The voter key doesn't match the receiving replica's key.", False
    DUPLICATE_VOTER = 126, "The voter is already part of the set of voters.", False
    VOTER_NOT_FOUND = 127, "The voter is not part of the set of voters.", False
    INVALID_REGULAR_EXPRESSION = 128, "The regular expression is not valid.", False
    REBOOTSTRAP_REQUIRED = (
        129,
        "Client metadata is stale. The client should rebootstrap to obtain new metadata.",
        False,
    )
    STREAMS_INVALID_TOPOLOGY = 130, "The supplied topology is invalid.", False
    STREAMS_INVALID_TOPOLOGY_EPOCH = 131, "The supplied topology epoch is invalid.", False
    STREAMS_TOPOLOGY_FENCED = 132, "The supplied topology epoch is outdated.", False
    SHARE_SESSION_LIMIT_REACHED = 133, "The limit of share sessions has been reached.", True
    GROUP_DELETION_FAILED = (
        134,
        "DeleteGroups could not complete; see the error message on the per-group result for details.",
        False,
    )
    STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED = (
        135,
        "The broker could not process the topology description update; see the error message for details.",
        False,
    )
    CONTROLLER_ID_NOT_REGISTERED = 136, "The given controller ID was not registered.", False
