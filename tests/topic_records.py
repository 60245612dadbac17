"""Creating topics in tests by writing their records through the controller (as CreateTopics would)."""
from __future__ import annotations

import uuid

from codec import records as rec
from server.partition_change import default_directory

TOPIC = 2
BROKER = 4


def topic_records(image, name: str, assignment, configs: dict | None = None):
    """(records, topic id) creating topic ``name`` with ``assignment`` (replica lists, leader first)."""
    topic_id = uuid.uuid4()
    records = [(rec.TopicRecord(name=name, topic_id=topic_id), None)]
    for index, replicas in enumerate(assignment):
        records.append((rec.PartitionRecord(
            partition_id=index, topic_id=topic_id, replicas=replicas, isr=replicas, leader=replicas[0],
            leader_epoch=0, partition_epoch=0,
            directories=[default_directory(image.brokers, b) for b in replicas]), None))
    records += [(rec.ConfigRecord(resource_type=TOPIC, resource_name=name, name=k, value=v), None)
                for k, v in (configs or {}).items()]
    return records, topic_id


async def create_topic(cluster, name: str, assignment, configs: dict | None = None) -> uuid.UUID:
    """Create a topic on a running ``Cluster`` and wait until its leaders know they lead."""
    topic_id = await cluster.controller.write(lambda image: topic_records(image, name, assignment, configs))
    await cluster.wait_until(lambda image: topic_id in image.topics)
    return topic_id


async def set_configs(cluster, resource_type: int, resource_name: str, values: dict) -> None:
    """Write dynamic configs (None deletes) as committed ConfigRecords."""
    await cluster.controller.write(lambda image: ([
        (rec.ConfigRecord(resource_type=resource_type, resource_name=resource_name, name=k, value=v), None)
        for k, v in values.items()], None))
