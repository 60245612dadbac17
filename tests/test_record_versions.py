"""The metadata log on disk holds each record at the version Kafka writes at metadata.version 3.9-IV0."""
from kafka.admin import KafkaAdminClient, NewTopic

from kraftwire.codec import records as rec
from kraftwire.server.host.cluster import BackgroundCluster
from kraftwire.server.metadata.record_versions import version_for


def _logged_records(data_dir):
    for segment in sorted((data_dir / "__cluster_metadata-0").glob("*.log")):
        for batch in rec.iter_batches(segment.read_bytes()):
            if not batch.is_control:
                for record in batch.records:
                    yield rec.decode_frame(record.value)


def test_records_on_disk_use_the_versions_of_metadata_version_3_9():
    with BackgroundCluster(brokers=3) as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap)
        try:
            admin.create_topics([NewTopic("versions", 2, 2, topic_configs={"retention.ms": "1000"})])
            bg.run(bg.cluster.broker(3).stop())
            bg.run(bg.cluster.wait_until(lambda image: image.brokers[3].fenced, 30))
        finally:
            admin.close()
        logged = list(_logged_records(bg.cluster.data_dir))
    seen = {}
    for record, version in logged:
        assert version == version_for(record), record
        seen.setdefault(type(record), set()).add(version)
    assert seen[rec.PartitionRecord] == {1}
    assert seen[rec.RegisterBrokerRecord] == {3}
    assert seen[rec.TopicRecord] == seen[rec.ConfigRecord] == seen[rec.FeatureLevelRecord] == {0}
    assert 0 in seen[rec.BrokerRegistrationChangeRecord]  # the fence
    assert seen.get(rec.PartitionChangeRecord, {1}) == {1}
