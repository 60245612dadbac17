"""Reset: bring a running cluster's metadata back to what a fresh start leaves (``Cluster.reset``,
``POST /api/reset``, the pytest fixture ``kraftwire_clean_cluster``), as one harness decision.

Pure: ``decide(image, fresh)`` returns the ``ControllerResult`` whose records, applied to ``image``,
leave no topic, no ACL, no dynamic config and no SCRAM credential but those of ``fresh`` (what the
cluster's own start-up writes: the bootstrap SCRAM users of its security settings, the
``throttle_auto_remove`` cluster default). Brokers' registrations, the feature levels and the cluster id
are kept, so the cluster keeps its ids, ports and metadata.version.

How the metadata log says what happened: with the records Kafka itself writes for each part, so
Kafka's own tools (``kafka-metadata-shell``, ``kafka-dump-log --cluster-metadata-decoder``) and the
audit read a reset as ordinary deletions, not as a new kind of record:

* a ``RemoveTopicRecord`` per topic (its partitions, topic configs, pending reassignments and, on the
  brokers, its replicas, copies and logs go with it on replay, as a DeleteTopics' do);
* a ``ConfigRecord`` with a null value per dynamic config of any other resource (brokers, the
  cluster default, ...) that a fresh start does not have, and one with the fresh value where it differs;
* a ``RemoveAccessControlEntryRecord`` per ACL;
* a ``RemoveUserScramCredentialRecord`` per SCRAM credential a fresh start does not have, and a
  ``UserScramCredentialRecord`` for a bootstrap one that is missing or was changed.

All of them are one batch, so a reset commits whole or not at all. A cluster already fresh writes
nothing. The answer counts what went.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

from kraftwire.codec import records as rec
from kraftwire.codec.constants import ConfigResourceType
from kraftwire.codec.message import Message
from kraftwire.server.metadata.image import MetadataImage

from .result import ControllerResult

ConfigKey = tuple[int, str]  # (resource type, resource name)


class FreshState(NamedTuple):
    """What a cluster's start-up writes beyond its brokers and features: the dynamic configs and the
    SCRAM credentials a reset keeps (or puts back)."""
    configs: Mapping[ConfigKey, Mapping[str, str]] = {}
    scram: tuple[rec.UserScramCredentialRecord, ...] = ()

    @classmethod
    def of(cls, records: Iterable[Message]) -> FreshState:
        """The fresh state the start-up ``records`` (ConfigRecords, UserScramCredentialRecords) write."""
        configs: dict[ConfigKey, dict[str, str]] = {}
        scram = []
        for record in records:
            if isinstance(record, rec.ConfigRecord) and record.value is not None:
                configs.setdefault((record.resource_type, record.resource_name), {})[record.name] = record.value
            elif isinstance(record, rec.UserScramCredentialRecord):
                scram.append(record)
        return cls(configs, tuple(scram))


class ResetSummary(NamedTuple):
    """What a reset removed (counts) and how many records it wrote."""
    topics: int
    configs: int
    acls: int
    scram_credentials: int
    records: int

    def to_dict(self) -> dict[str, int]:
        return self._asdict()


NOTHING_KEPT = FreshState()


def decide(image: MetadataImage, fresh: FreshState = NOTHING_KEPT) -> ControllerResult:
    """The records taking ``image`` back to ``fresh`` (module docstring) and a ``ResetSummary``."""
    records: list[Message] = [rec.RemoveTopicRecord(topic_id=topic_id) for topic_id in image.topics]
    removed_topics = {topic.name for topic in image.topics.values()}
    config_records = list(_config_records(image, fresh, removed_topics))
    records += config_records
    records += [rec.RemoveAccessControlEntryRecord(id=acl_id) for acl_id in image.acls]
    scram_records = list(_scram_records(image, fresh))
    records += scram_records
    summary = ResetSummary(topics=len(image.topics), configs=len(config_records), acls=len(image.acls),
                           scram_credentials=sum(isinstance(r, rec.RemoveUserScramCredentialRecord)
                                                 for r in scram_records),
                           records=len(records))
    return ControllerResult(records, summary)


def _config_records(image: MetadataImage, fresh: FreshState, removed_topics: set[str]) -> Iterable[rec.ConfigRecord]:
    """Null values for the configs a fresh start lacks (a removed topic's go with its RemoveTopicRecord),
    fresh values where they are missing or differ."""
    for (resource_type, resource_name), values in image.configs.items():
        if resource_type == ConfigResourceType.TOPIC and resource_name in removed_topics:
            continue
        kept: Mapping[str, str] = fresh.configs.get((resource_type, resource_name), {})
        for name in values:
            if name not in kept:
                yield rec.ConfigRecord(resource_type=resource_type, resource_name=resource_name, name=name,
                                       value=None)
    for (resource_type, resource_name), fresh_values in fresh.configs.items():
        now: Mapping[str, str] = image.configs.get((resource_type, resource_name), {})
        for name, value in fresh_values.items():
            if now.get(name) != value:
                yield rec.ConfigRecord(resource_type=resource_type, resource_name=resource_name, name=name,
                                       value=value)


def _scram_records(image: MetadataImage, fresh: FreshState) -> Iterable[Message]:
    """Removals of the credentials a fresh start lacks; the bootstrap ones put back where missing or changed."""
    kept = {(r.mechanism, r.name): r for r in fresh.scram}
    for mechanism, name in image.scram:
        if (mechanism, name) not in kept:
            yield rec.RemoveUserScramCredentialRecord(name=name, mechanism=mechanism)
    for key, record in kept.items():
        if image.scram.get(key) != (bytes(record.salt), bytes(record.stored_key), bytes(record.server_key),
                                    record.iterations):
            yield record
