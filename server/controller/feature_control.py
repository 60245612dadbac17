"""The feature control manager (Kafka's FeatureControlManager, with QuorumController.updateFeatures'
answer): UpdateFeatures (57) changes the finalized level of metadata.version,
eligible.leader.replicas.version and kraft.version, with Kafka 4.3.1's checks and words.

One feature after another, the first refusal fails the whole request (INVALID_UPDATE_VERSION, 95, "The
update failed for all features since the following feature had an error: ..."), nothing written:
an upgrade type other than 1-3; a level below 0; a level outside what this controller, then each
registered broker, supports ("Local controller 3000 only supports versions 7-30", "... does not support
this feature" for a feature it does not know); a downgrade asked as an upgrade, or an upgrade asked as a
downgrade; for metadata.version a downgrade across a level that changed the metadata format, safe or
unsafe (Kafka supports neither); for kraft.version any downgrade; for eligible.leader.replicas.version
a level whose metadata.version it depends on (1 needs 4.0-IV1) is not the one proposed. Accepted: a
FeatureLevelRecord per feature (level 0 turns a feature off), nothing under ValidateOnly; turning eligible
leader replicas on first writes the cluster's min.insync.replicas (if unset) and removes the
brokers' own, as Kafka's ELR safety records do. v0-1 answers list each feature with code 0 and
Kafka's message "NONE"; v2 answers have no per-feature list. v0's AllowDowngrade is not read: Kafka's
controller reads UpgradeType, which v0 cannot send, so a v0 downgrade is refused as an upgrade.

group.version (0-1, the consumer group protocol) is changed as any other feature.

Where kraftwire differs (README): it knows only those four features, so transaction.version,
share.version and streams.version are ones "the local controller does not support";
and it cannot change kraft.version of a running quorum (the upgrade Kafka performs through its Raft
client), so a kraft.version upgrade is checked but refused unless ValidateOnly.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from kraftwire.codec import ErrorCode
from kraftwire.codec import records as rec
from kraftwire.codec.constants import ConfigResourceType
from kraftwire.codec.message import Message
from kraftwire.codec.messages import UpdateFeaturesRequest, UpdateFeaturesResponse
from kraftwire.server.metadata.configs import MIN_INSYNC_REPLICAS
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.metadata.record_versions import (ELR_FEATURE, ELR_RECORDS_LEVEL, KRAFT_VERSION_FEATURE,
                                                       METADATA_VERSION_FEATURE, supported_features)

from .result import ControllerResult

UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
# The metadata.version levels whose records differ from the level below (Kafka's didMetadataChange): a
# downgrade across one might drop metadata, so Kafka refuses it.
METADATA_CHANGED_LEVELS = frozenset({7, 8, 11, 13, 14, 15, 17, 23, 30, 32, 33})
# Each feature level's dependencies on metadata.version (Kafka's FeatureVersion.dependencies).
METADATA_VERSION_NEEDED = {(ELR_FEATURE, 1): ELR_RECORDS_LEVEL}
# The features Kafka 4.3.1 knows besides metadata.version (its Feature enum, test features included): turning
# one kraftwire does not model off (level 0) is accepted, as by Kafka; another name is "not found".
KAFKA_FEATURES = frozenset({KRAFT_VERSION_FEATURE, "transaction.version", "group.version", ELR_FEATURE, "share.version",
                            "streams.version", "test.feature.version", *(f"unit.test.feature.version.{i}"
                                                                        for i in range(8))})
ALL_FAILED = "The update failed for all features since the following feature had an error: "
DEFAULT_MIN_INSYNC_REPLICAS = "1"


class Refused(Exception):
    """One feature's update refused, with Kafka's text."""


def _range_text(low: int, high: int) -> str:
    return f"{low}-{high}"


def _not_supported(level: int, who: str, supported: tuple[int, int]) -> str | None:
    low, high = supported
    if low <= level <= high:
        return None
    return f"{who} does not support this feature." if high == 0 else \
        f"{who} only supports versions {_range_text(low, high)}"


def _reason_not_supported(image: MetadataImage, name: str, level: int, controller_id: int) -> str | None:
    """The first node that does not support ``level`` of ``name``: this controller, then each broker."""
    local = supported_features(image.metadata_version_level).get(name, (0, 0))
    reason = _not_supported(level, f"Local controller {controller_id}", local)
    for broker in sorted(image.brokers.values(), key=lambda b: b.broker_id):
        if reason is not None:
            break
        ranges = {feature: (low, high) for feature, low, high in broker.features}
        reason = _not_supported(level, f"Broker {broker.broker_id}", ranges.get(name, (0, 0)))
    return reason


def _current_level(image: MetadataImage, name: str) -> int:
    if name == METADATA_VERSION_FEATURE:
        return image.metadata_version_level
    if name == KRAFT_VERSION_FEATURE:
        return image.kraft_version
    return image.features.get(name, 0)


def _metadata_version_records(current: int, level: int, upgrade_type: int) -> list[Message]:
    if level < current and any(current >= changed > level for changed in METADATA_CHANGED_LEVELS):
        reason = ("Unsafe metadata downgrade is not supported in this version." if upgrade_type == UNSAFE_DOWNGRADE
                  else "Refusing to perform the requested downgrade because it might delete metadata information.")
        raise Refused(f"Unsupported metadata.version downgrade from {current} to {level}. {reason}")
    return [rec.FeatureLevelRecord(name=METADATA_VERSION_FEATURE, feature_level=level)]


def _kraft_version_records(current: int, level: int, upgrade_type: int, validate_only: bool) -> list[Message]:
    if upgrade_type != UPGRADE:
        if level != current:
            raise Refused(f"Invalid update version {level} for feature {KRAFT_VERSION_FEATURE}. "
                          "Can't downgrade the version of this feature.")
        return []
    if level != current and not validate_only:  # kraftwire's own limit (module docstring)
        raise Refused(f"Invalid update version {level} for feature {KRAFT_VERSION_FEATURE}. kraftwire cannot "
                      "change the kraft.version of a running quorum; format it with the version wanted.")
    return [rec.NoOpRecord()]  # Kafka's: one offset for the answer to wait on


def _feature_records(name: str, level: int, proposed: Mapping[str, int]) -> list[Message]:
    if name not in KAFKA_FEATURES:
        raise Refused(f"Invalid update version {level} for feature {name}. Feature {name} not found.")
    needed = METADATA_VERSION_NEEDED.get((name, level))
    if needed is not None and proposed[METADATA_VERSION_FEATURE] < needed:
        raise Refused(f"Invalid update version {level} for feature {name}. {name} could not be set to {level} "
                      f"because it depends on {METADATA_VERSION_FEATURE} level {needed}")
    return [rec.FeatureLevelRecord(name=name, feature_level=level)]


def _update_records(image: MetadataImage, name: str, level: int, upgrade_type: int, proposed: Mapping[str, int],
                    controller_id: int, validate_only: bool) -> list[Message]:
    """One feature's records; raises Refused with Kafka's text (FeatureControlManager.updateFeature)."""
    def refused(reason: str) -> Refused:
        return Refused(f"Invalid update version {level} for feature {name}. {reason}")
    if upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
        raise refused("The controller does not support the given upgrade type.")
    current = _current_level(image, name)
    if level < 0:
        raise refused("A feature version cannot be less than 0.")
    reason = _reason_not_supported(image, name, level, controller_id)
    if reason is not None:
        raise refused(reason)
    if level < current and upgrade_type == UPGRADE:
        raise refused("Can't downgrade the version of this feature without setting the upgrade type to either "
                      "safe or unsafe downgrade.")
    if level > current and upgrade_type != UPGRADE:
        raise refused("Can't downgrade to a newer version.")
    if name == METADATA_VERSION_FEATURE:
        return _metadata_version_records(current, level, upgrade_type)
    if name == KRAFT_VERSION_FEATURE:
        return _kraft_version_records(current, level, upgrade_type, validate_only)
    return _feature_records(name, level, proposed)


def _elr_safety_records(image: MetadataImage, static_min_insync: str | None) -> list[Message]:
    """What Kafka writes before turning eligible leader replicas on: the cluster's min.insync.replicas
    (the node's static value, else 1) if it has none, and no broker-level ones."""
    records: list[Message] = []
    if MIN_INSYNC_REPLICAS not in image.broker_configs(""):
        records.append(rec.ConfigRecord(resource_type=ConfigResourceType.BROKER, resource_name="",
                                        name=MIN_INSYNC_REPLICAS,
                                        value=static_min_insync or DEFAULT_MIN_INSYNC_REPLICAS))
    for (resource_type, name), configs in sorted(image.configs.items()):
        if resource_type == ConfigResourceType.BROKER and name and MIN_INSYNC_REPLICAS in configs:
            records.append(rec.ConfigRecord(resource_type=ConfigResourceType.BROKER, resource_name=name,
                                            name=MIN_INSYNC_REPLICAS, value=None))
    return records


def _updates(request: UpdateFeaturesRequest) -> dict[str, tuple[int, int]]:
    """``{feature: (level, upgrade type)}``, the last of a feature named twice winning (Kafka's map)."""
    return {u.feature: (u.max_version_level, u.upgrade_type) for u in request.feature_updates}


def decide(image: MetadataImage, request: UpdateFeaturesRequest, version: int, controller_id: int,
           static_min_insync: str | None = None) -> ControllerResult:
    """The records and answer of controller ``controller_id`` to an UpdateFeatures request (at ``version``)."""
    updates = _updates(request)
    proposed = {**image.features, METADATA_VERSION_FEATURE: image.metadata_version_level,
                **{name: level for name, (level, _) in updates.items()}}
    records: list[Message] = []
    try:
        for name, (level, upgrade_type) in updates.items():
            records += _update_records(image, name, level, upgrade_type, proposed, controller_id,
                                       request.validate_only)
    except Refused as refusal:
        return ControllerResult([], UpdateFeaturesResponse(error_code=ErrorCode.INVALID_UPDATE_VERSION,
                                                           error_message=ALL_FAILED + str(refusal)))
    if updates.get(ELR_FEATURE, (0, 0))[0] > 0:
        records = _elr_safety_records(image, static_min_insync) + records
    return ControllerResult([] if request.validate_only else records, _accepted(request, version))


def _accepted(request: UpdateFeaturesRequest, version: int) -> UpdateFeaturesResponse:
    results: Sequence[UpdateFeaturesResponse.UpdatableFeatureResult] = () if version >= 2 else [
        UpdateFeaturesResponse.UpdatableFeatureResult(feature=u.feature, error_code=ErrorCode.NONE,
                                                      error_message="NONE")
        for u in request.feature_updates]
    return UpdateFeaturesResponse(error_code=ErrorCode.NONE, error_message=None, results=results)
