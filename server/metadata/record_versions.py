"""Which metadata.version a cluster runs at, which version of each metadata record it writes there, and
which behaviours each level turns on.

A cluster is started at one of ``METADATA_VERSIONS`` (default 4.3-IV0, feature level 30) and writes its
FeatureLevelRecord once, at its first start; later starts keep the level in the log. A twin runs at its
source's level, any KRaft production level from 3.3-IV3 (7) on (``TWIN_LEVELS``). With a new cluster's
level come the other features Kafka's storage tool finalizes for that release and kraftwire models
(``bootstrap_records``): group.version 1 from 4.0-IV0 (the consumer group protocol, KIP-848),
eligible.leader.replicas.version 1 from 4.1-IV0, with the cluster-wide
min.insync.replicas=1 Kafka's controller writes for it. Records are written at the versions Kafka's
MetadataVersion picks for the level the image holds: PartitionRecord and PartitionChangeRecord v0, from
3.7-IV2 v1 (Directories), from 4.0-IV1 v2 (the ELR fields); RegisterBrokerRecord v1, from 3.4-IV0 v2
(IsMigratingZkBroker), from 3.7-IV2 v3 (LogDirs), from 4.3-IV0 v4 (CordonedLogDirs);
BrokerRegistrationChangeRecord at the version its change needs (Kafka's fixed choice: v0 to fence or
unfence, v1 for controlled shutdown, v2 for a change of log directories, v3 for a change of cordoned
directories). Every other record has only version 0.

A record that carries state its level's version has no field for is written at the version that has it
whatever the level: ELR or cordoned directories (only a log from elsewhere gives kraftwire such state,
and a snapshot must keep it), and below 3.7-IV2 replica directories and a broker's log directories
(kraftwire's brokers always place replicas in directories: ``unmodelled`` says so at start-up).

Behaviours by level (README, "Metadata versions"): SCRAM credentials from 3.5-IV2 (``SCRAM_LEVEL``),
the leader-epoch bump on an ISR shrink below 3.6-IV0 (KAFKA-15021, ``ISR_SHRINK_BUMP_BELOW``), directory
assignment (KIP-858) from 3.7-IV2, eligible leader replicas (KIP-966) wherever the
eligible.leader.replicas.version feature is 1 (``elr_enabled``); cordoned log directories (KIP-1066) from
4.3-IV0; the reassignment completion rule of Kafka 4.3 (KAFKA-19975) from 4.3-IV0, the earlier one below
(Kafka ships it with the 4.3 release rather than behind a level; kraftwire runs each level as the release
that added it).

Decisions return bare records and the controller picks each one's version here, so the choice lives in
one place.
"""
from __future__ import annotations

from kraftwire.codec import records as rec
from kraftwire.codec.constants import MIGRATING, ConfigResourceType
from kraftwire.codec.message import Message

from .configs import MIN_INSYNC_REPLICAS

METADATA_VERSION_FEATURE = "metadata.version"
# The levels kraftwire can run at (Kafka's MetadataVersion from 3.9-IV0; 4.4-IV2 is Kafka's newest
# production level).
METADATA_VERSIONS = {
    "3.9-IV0": 21, "4.0-IV0": 22, "4.0-IV1": 23, "4.0-IV2": 24, "4.0-IV3": 25, "4.1-IV0": 26, "4.1-IV1": 27,
    "4.2-IV0": 28, "4.2-IV1": 29, "4.3-IV0": 30, "4.4-IV0": 31, "4.4-IV1": 32, "4.4-IV2": 33,
}
# The production level of Kafka's newest release (4.3); trunk's newest, 4.4-IV2, is unreadable by released
# Kafka's tools and brokers (README.md).
DEFAULT_METADATA_VERSION = "4.3-IV0"
METADATA_VERSION_LEVEL = max(METADATA_VERSIONS.values())  # the newest level kraftwire's nodes support
MIN_METADATA_VERSION = 7  # 3.3-IV3, the oldest KRaft metadata.version
# Every KRaft production level a twin's source may be at (Kafka's MetadataVersion, 3.3-IV3 to 4.4-IV2),
# those a new cluster may start at included.
TWIN_LEVELS = {
    "3.3-IV3": 7, "3.4-IV0": 8, "3.5-IV0": 9, "3.5-IV1": 10, "3.5-IV2": 11, "3.6-IV0": 12, "3.6-IV1": 13,
    "3.6-IV2": 14, "3.7-IV0": 15, "3.7-IV1": 16, "3.7-IV2": 17, "3.7-IV3": 18, "3.7-IV4": 19, "3.8-IV0": 20,
    **METADATA_VERSIONS,
}
# The newest level of each release: what a node of that release supports (its ApiVersions' range).
RELEASE_NEWEST_LEVEL = {"3.3": 7, "3.4": 8, "3.5": 11, "3.6": 14, "3.7": 19, "3.8": 20, "3.9": 21, "4.0": 25,
                        "4.1": 27, "4.2": 29, "4.3": 30, "4.4": 33}
KAFKA3_MIN_METADATA_VERSION = 1  # 3.0-IV1: the oldest level a Kafka 3.x node supports
MIGRATION_FIELD_LEVEL = 8  # 3.4-IV0: RegisterBrokerRecord v2 (IsMigratingZkBroker, KIP-866)
SCRAM_LEVEL = 11  # 3.5-IV2: SCRAM credentials in KRaft (KIP-554)
ISR_SHRINK_BUMP_BELOW = 12  # 3.6-IV0: no more leader-epoch bump when the controller shrinks an ISR
DIRECTORY_ASSIGNMENT_LEVEL = 17  # 3.7-IV2: JBOD (KIP-858), PartitionRecord v1, RegisterBrokerRecord v3
ELR_RECORDS_LEVEL = 23  # 4.0-IV1: PartitionRecord and PartitionChangeRecord v2
ELR_DEFAULT_LEVEL = 26  # 4.1-IV0: new clusters start with eligible leader replicas on
CORDONED_LOG_DIRS_LEVEL = 30  # 4.3-IV0: RegisterBrokerRecord v4, cordoned log directories
RELAXED_COMPLETION_LEVEL = 30  # 4.3-IV0: the first level of the release with KAFKA-19975
ELR_FEATURE = "eligible.leader.replicas.version"
GROUP_VERSION_FEATURE = "group.version"  # 1: the consumer group protocol (KIP-848) is served
GROUP_VERSION_DEFAULT_LEVEL = 22  # 4.0-IV0: new clusters start with group.version 1 (Kafka's GroupVersion.GV_1)
# The features kraftwire's nodes support, (min, max) as Kafka's do.
KRAFT_VERSION_FEATURE = "kraft.version"  # the metadata log's own feature (KIP-853): 1 lets the voters change
SUPPORTED_FEATURES = {METADATA_VERSION_FEATURE: (MIN_METADATA_VERSION, METADATA_VERSION_LEVEL), ELR_FEATURE: (0, 1),
                      KRAFT_VERSION_FEATURE: (0, 1), GROUP_VERSION_FEATURE: (0, 1)}
# The newest metadata.version a node of the emulated release (Kafka 4.3.1) supports: its newest production
# level, which is what a 4.3.1 node advertises (its newer, unstable levels only when configured to).
RELEASE_METADATA_VERSION_LEVEL = METADATA_VERSIONS[DEFAULT_METADATA_VERSION]


def supported_features(finalized_level: int) -> dict[str, tuple[int, int]]:
    """The feature ranges a node advertises (ApiVersions, BrokerRegistration) and its controller checks
    UpdateFeatures against, in a cluster at metadata.version ``finalized_level``: those of a Kafka 4.3.1
    node, metadata.version up to 4.3-IV0, or up to kraftwire's newest level in a cluster started above
    it (as a Kafka node with unstable feature versions enabled)."""
    if finalized_level < METADATA_VERSIONS["3.9-IV0"]:
        # a twin of a release before 3.9: that release's range (from 3.0-IV1, which 3.x nodes still
        # supported; a downgrade below 3.3-IV3 crosses a level that changed the metadata, which the
        # controller refuses), and none of the features it did not know (kraft.version from 3.9,
        # eligible.leader.replicas.version from 4.0)
        return {METADATA_VERSION_FEATURE: (KAFKA3_MIN_METADATA_VERSION, release_newest_level(finalized_level))}
    newest = RELEASE_METADATA_VERSION_LEVEL if finalized_level <= RELEASE_METADATA_VERSION_LEVEL \
        else METADATA_VERSION_LEVEL
    return {**SUPPORTED_FEATURES, METADATA_VERSION_FEATURE: (MIN_METADATA_VERSION, newest)}


def level_name(level: int) -> str:
    """The metadata.version name of a feature level (``3.7-IV4``), or ``level N`` for one kraftwire does not name."""
    return next((name for name, value in TWIN_LEVELS.items() if value == level), f"level {level}")


def release_newest_level(level: int) -> int:
    """The newest level of the release that introduced ``level`` (3.7-IV2 -> 3.7-IV4)."""
    return RELEASE_NEWEST_LEVEL.get(level_name(level).split("-")[0], level)


def metadata_version_level(name: str) -> int:
    """The feature level of a metadata.version name such as ``4.1-IV0`` (any KRaft production level from
    3.3-IV3); ValueError for others."""
    try:
        return TWIN_LEVELS[name]
    except KeyError:
        raise ValueError(f"unsupported metadata.version {name!r}: one of {', '.join(TWIN_LEVELS)}") from None


def version_for(record: Message, level: int = METADATA_VERSIONS[DEFAULT_METADATA_VERSION]) -> int:
    """The version Kafka writes ``record`` at, at metadata.version feature level ``level``."""
    if isinstance(record, (rec.PartitionRecord, rec.PartitionChangeRecord)):
        elr = record.eligible_leader_replicas is not None or record.last_known_elr is not None
        if level >= ELR_RECORDS_LEVEL or elr:
            return 2
        return 1 if level >= DIRECTORY_ASSIGNMENT_LEVEL or _names_directories(record) else 0
    if isinstance(record, rec.RegisterBrokerRecord):
        if level >= CORDONED_LOG_DIRS_LEVEL or record.cordoned_log_dirs is not None:
            return 4
        if level >= DIRECTORY_ASSIGNMENT_LEVEL or record.log_dirs:
            return 3
        return 2 if level >= MIGRATION_FIELD_LEVEL or record.is_migrating_zk_broker else 1
    if isinstance(record, rec.BrokerRegistrationChangeRecord):
        if record.cordoned_log_dirs is not None:
            return 3
        if record.log_dirs:
            return 2
        return 1 if record.in_controlled_shutdown else 0
    return 0


def at_level(record: Message, level: int) -> tuple[Message, int]:
    """``record`` as it is written at metadata.version ``level``: with its version (``version_for``) and,
    at PartitionRecord/PartitionChangeRecord v0 (below 3.7-IV2), without its directories, every one
    MIGRATING (v0 has no field for them; they are read back as MIGRATING)."""
    version = version_for(record, level)
    if version == 0 and isinstance(record, rec.PartitionRecord) and record.directories:
        return record.replace(directories=[]), 0
    if version == 0 and isinstance(record, rec.PartitionChangeRecord) and record.directories is not None:
        return record.replace(directories=None), 0
    return record, version


def _names_directories(record: rec.PartitionRecord | rec.PartitionChangeRecord) -> bool:
    """The record says which directory holds a replica: v0 has no field for it (a v0 record's replicas
    are read back as MIGRATING, so one naming only MIGRATING loses nothing at v0)."""
    return record.directories is not None and any(d != MIGRATING for d in record.directories)


def unmodelled(level: int) -> list[str]:
    """What kraftwire does otherwise than a Kafka node at ``level``, one line each, said when a twin
    starts (none of them changes where a reassignment places replicas or when it completes)."""
    lines = []
    if level < DIRECTORY_ASSIGNMENT_LEVEL:
        lines.append(f"{level_name(level)} predates directory assignment (KIP-858, 3.7-IV2): the twin still places "
                     f"each replica in a log directory and writes records that name them (RegisterBrokerRecord v3, "
                     f"PartitionRecord/PartitionChangeRecord v1), which a Kafka of this level cannot read")
    if level < METADATA_VERSIONS["3.9-IV0"]:
        lines.append(f"the twin's nodes answer as Kafka 4.3.1's (its API versions), not as Kafka "
                     f"{level_name(level).split('-')[0]}'s; their metadata.version range is that release's")
    return lines


def consumer_protocol_enabled(features: dict[str, int]) -> bool:
    """The consumer group protocol is served (Kafka's GroupVersion.isConsumerRebalanceProtocolSupported)."""
    return features.get(GROUP_VERSION_FEATURE, 0) >= 1


def elr_enabled(features: dict[str, int]) -> bool:
    """Eligible leader replicas are on (Kafka's FeatureControlManager.isElrFeatureEnabled)."""
    return features.get(ELR_FEATURE, 0) >= 1


def bootstrap_records(level: int) -> list[Message]:
    """What a cluster first started at metadata.version ``level`` writes: the features Kafka's storage
    tool finalizes for it (those kraftwire models) and, with eligible leader replicas on, the
    cluster-wide min.insync.replicas that Kafka's controller then writes (ActivationRecordsGenerator)."""
    records: list[Message] = [rec.FeatureLevelRecord(name=METADATA_VERSION_FEATURE, feature_level=level)]
    if level >= ELR_DEFAULT_LEVEL:
        records.append(rec.FeatureLevelRecord(name=ELR_FEATURE, feature_level=1))
    if level >= GROUP_VERSION_DEFAULT_LEVEL:  # Kafka's bootstrap writes the features in name order
        records.append(rec.FeatureLevelRecord(name=GROUP_VERSION_FEATURE, feature_level=1))
    if level >= ELR_DEFAULT_LEVEL:
        records += [rec.ConfigRecord(resource_type=ConfigResourceType.BROKER, resource_name="",
                                     name=MIN_INSYNC_REPLICAS, value="1")]
    return records
