"""Kafka's numeric and UUID sentinels that the wire, the metadata log, the controller and the audit
share, each spelled once here.

The sentinels are plain ints and UUIDs, not enums: the image and the audit compare them once per
replayed record, where an enum member costs several times an int.
"""
import uuid
from enum import IntEnum


class ConfigResourceType(IntEnum):
    """ConfigResource.Type: the ResourceType of DescribeConfigs, AlterConfigs, IncrementalAlterConfigs
    and ConfigRecord. kraftwire keeps configs for TOPIC and BROKER only."""

    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16
    GROUP = 32


# Leaders in PartitionRecord, PartitionChangeRecord and the responses that report them.
NO_LEADER = -1  # the partition has no leader (LeaderConstants.NO_LEADER)
LEADER_UNCHANGED = -2  # PartitionChangeRecord's default Leader: the leader stays (NO_LEADER_CHANGE)

# LeaderRecoveryState (KIP-704): after an unclean election the leader is RECOVERING until its ISR grows.
LEADER_RECOVERED = 0
LEADER_RECOVERING = 1
LEADER_RECOVERY_UNCHANGED = -1  # PartitionChangeRecord's default LeaderRecoveryState (NO_CHANGE)

# BrokerRegistrationChangeRecord's Fenced (BrokerRegistrationFencingChange; 0 leaves it) and
# InControlledShutdown (InControlledShutdownChange; 0 leaves it).
FENCE = 1
UNFENCE = -1
ENTER_CONTROLLED_SHUTDOWN = 1

ZERO_UUID = uuid.UUID(int=0)  # Uuid.ZERO_UUID: no topic id, no directory id

# DirectoryId (KIP-858): the reserved directory ids a replica's directory may hold instead of a real one.
MIGRATING = ZERO_UUID  # the broker registered without directories (not yet migrated to JBOD in KRaft)
UNASSIGNED = uuid.UUID(int=1)  # not yet placed; the hosting broker picks a directory and reports it
LOST = uuid.UUID(int=2)  # the directory it was in is gone
RESERVED_DIRECTORY_LIMIT = 100  # ids with a zero high half and a low half below this are reserved


def is_reserved_directory(directory: uuid.UUID) -> bool:
    return directory.int < RESERVED_DIRECTORY_LIMIT
