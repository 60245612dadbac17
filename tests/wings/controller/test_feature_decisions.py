"""feature_control.decide, pure: the records an UpdateFeatures writes and the answers Kafka's words give
(the differential test compares the refusals with Kafka 4.3.1's; these check what is written)."""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec import records as rec
from kraftwire.codec.constants import ConfigResourceType
from kraftwire.codec.messages import UpdateFeaturesRequest
from kraftwire.server.controller import feature_control
from kraftwire.server.metadata.image import MetadataImage

BROKER = ConfigResourceType.BROKER
Update = UpdateFeaturesRequest.FeatureUpdateKey


def image_at(level, *records):
    image = MetadataImage()
    for offset, record in enumerate((rec.FeatureLevelRecord(name="metadata.version", feature_level=level), *records)):
        image.apply(record, offset)
    return image


def request(*updates, validate_only=False):
    return UpdateFeaturesRequest(validate_only=validate_only, feature_updates=[
        Update(feature=f, max_version_level=level, upgrade_type=kind) for f, level, kind in updates])


def test_turning_elr_on_writes_the_cluster_min_isr_and_drops_the_brokers():
    image = image_at(25, rec.ConfigRecord(resource_type=BROKER, resource_name="2", name="min.insync.replicas",
                                          value="2"))
    records, response = feature_control.decide(image, request(("eligible.leader.replicas.version", 1, 1)), 1, 3000)
    assert response.error_code == 0 and [(r.feature, r.error_code, r.error_message) for r in response.results] == [
        ("eligible.leader.replicas.version", 0, "NONE")]
    assert records == [
        rec.ConfigRecord(resource_type=BROKER, resource_name="", name="min.insync.replicas", value="1"),
        rec.ConfigRecord(resource_type=BROKER, resource_name="2", name="min.insync.replicas", value=None),
        rec.FeatureLevelRecord(name="eligible.leader.replicas.version", feature_level=1)]


def test_a_dry_run_writes_nothing_and_v2_lists_no_features():
    records, response = feature_control.decide(image_at(29), request(("metadata.version", 30, 1), validate_only=True),
                                               2, 3000)
    assert records == [] and response.error_code == 0 and response.results == ()


def test_downgrades_across_unchanged_levels_and_refusals():
    records, _ = feature_control.decide(image_at(29), request(("metadata.version", 24, 2)), 1, 3000)
    assert records == [rec.FeatureLevelRecord(name="metadata.version", feature_level=24)]
    _, response = feature_control.decide(image_at(29), request(("metadata.version", 22, 2)), 1, 3000)
    assert response.error_code == ErrorCode.INVALID_UPDATE_VERSION
    assert response.error_message.endswith("Unsupported metadata.version downgrade from 29 to 22. Refusing to "
                                           "perform the requested downgrade because it might delete metadata "
                                           "information.")
    _, response = feature_control.decide(image_at(22), request(("eligible.leader.replicas.version", 1, 1)), 1, 3000)
    assert response.error_message.endswith("eligible.leader.replicas.version could not be set to 1 because it "
                                           "depends on metadata.version level 23")
    records, response = feature_control.decide(image_at(30), request(("group.version", 0, 2)), 1, 3000)
    assert response.error_code == 0 and records == [rec.FeatureLevelRecord(name="group.version", feature_level=0)]
    _, response = feature_control.decide(image_at(30), request(("kraft.version", 1, 1)), 1, 3000)
    assert response.error_code == ErrorCode.INVALID_UPDATE_VERSION and "kraftwire cannot" in response.error_message


def test_a_cluster_above_the_release_supports_kraftwire_s_newest_level():
    records, response = feature_control.decide(image_at(31), request(("metadata.version", 33, 1)), 1, 3000)
    assert response.error_code == 0 and records == [rec.FeatureLevelRecord(name="metadata.version", feature_level=33)]
    _, response = feature_control.decide(image_at(30), request(("metadata.version", 31, 1)), 1, 3000)
    assert response.error_message.endswith("Local controller 3000 only supports versions 7-30")
