"""Metadata for tests built from records, the way the controller builds it: images for the pure
decisions, and config writes through the controller while IncrementalAlterConfigs is not served."""
from __future__ import annotations

import uuid

from kraftwire.codec import records as rec
from kraftwire.codec.constants import ConfigResourceType
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.controller.partition_change import default_directory
from kraftwire.server.controller.result import ControllerResult

TOPIC, BROKER = ConfigResourceType.TOPIC, ConfigResourceType.BROKER


def image_with_brokers(*broker_ids: int, fenced=(), shutting_down=()) -> MetadataImage:
    """An image where ``broker_ids`` are registered (epoch 100 + id), each with one directory."""
    image = MetadataImage()
    for broker_id in broker_ids:
        image.apply(rec.RegisterBrokerRecord(
            broker_id=broker_id, incarnation_id=uuid.uuid4(), broker_epoch=100 + broker_id,
            fenced=broker_id in fenced, in_controlled_shutdown=broker_id in shutting_down,
            log_dirs=[uuid.uuid4()]), image.offset + 1)
    return image


def add_topic(image: MetadataImage, name: str, partitions: dict, configs: dict | None = None) -> uuid.UUID:
    """Apply a topic whose ``partitions`` map index -> dict(replicas, isr, leader, adding, removing)
    (isr defaults to the replicas, leader to the first ISR member)."""
    topic_id = uuid.uuid4()
    image.apply(rec.TopicRecord(name=name, topic_id=topic_id), image.offset + 1)
    for index, spec in partitions.items():
        replicas = spec["replicas"]
        isr = spec.get("isr", replicas)
        image.apply(rec.PartitionRecord(
            partition_id=index, topic_id=topic_id, replicas=replicas, isr=isr, leader=spec.get("leader", isr[0]),
            adding_replicas=spec.get("adding", ()), removing_replicas=spec.get("removing", ()),
            leader_epoch=spec.get("leader_epoch", 0), partition_epoch=spec.get("partition_epoch", 0),
            directories=[default_directory(image.brokers, b) for b in replicas]), image.offset + 1)
    for key, value in (configs or {}).items():
        image.apply(rec.ConfigRecord(resource_type=TOPIC, resource_name=name, name=key, value=value),
                    image.offset + 1)
    return topic_id


def apply_all(image: MetadataImage, records) -> None:
    for record in records:
        image.apply(record, image.offset + 1)


async def set_configs(cluster, resource_type: int, resource_name: str, values: dict) -> None:
    """Write dynamic configs (None deletes) through the controller, as committed ConfigRecords (returns
    once the brokers' metadata has them)."""
    await cluster.write(lambda image: ControllerResult([
        rec.ConfigRecord(resource_type=resource_type, resource_name=resource_name, name=k, value=v)
        for k, v in values.items()]))
