"""Helpers for the metadata log tests: a RaftLog wired to an image the way the controller wires it,
random metadata histories, and byte-level views of segment files."""
from __future__ import annotations

import random
import uuid
from pathlib import Path

from kraftwire.codec import records as rec
from kraftwire.codec.records import check_batch
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.raft import RaftConfig, RaftLog
from kraftwire.codec.log_layout import PARTITION_DIR

NODE_ID = 3000


async def open_log(data_dir: Path, **config) -> tuple[RaftLog, MetadataImage]:
    """Open the log, rebuild the image from its replay, and keep the image following commits."""
    log = RaftLog(data_dir, NODE_ID, RaftConfig(**config))
    await log.open()
    image = MetadataImage()
    for offset, record in log.replay():
        image.apply(record, offset)
    log.add_commit_listener(lambda committed: [image.apply(r, o) for o, r in committed])
    log.snapshot_source = image.snapshot_batches
    return log, image


def state(image: MetadataImage) -> dict:
    """Everything an image holds except its position, change counter and private look-up caches."""
    return {k: v for k, v in vars(image).items() if k not in ("offset", "version") and not k.startswith("_")}


def partition_dir(data_dir: Path) -> Path:
    return Path(data_dir) / PARTITION_DIR


def segments(data_dir: Path) -> list[Path]:
    return sorted(partition_dir(data_dir).glob("*.log"))


def batches(path: Path) -> list[tuple[int, int, int, int]]:
    """(position, size, base offset, record count) of every batch of a segment file."""
    data = path.read_bytes()
    found, position = [], 0
    while position < len(data):
        header = check_batch(data, position)
        found.append((position, header.size, header.base_offset, header.count))
        position += header.size
    return found


class RandomHistory:
    """Random but valid metadata records: brokers registering and being fenced, topics created with
    partitions and deleted, partition changes (ISR, leader, reassignment lists), configs set and removed."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.image = MetadataImage()

    def next_write(self) -> list[tuple]:
        rng, image = self.rng, self.image
        brokers = sorted(image.brokers)
        choice = rng.random()
        if not brokers or choice < 0.05:
            broker_id = rng.randint(1, 6)
            records = [(rec.RegisterBrokerRecord(
                broker_id=broker_id, incarnation_id=uuid.UUID(int=rng.getrandbits(128)), broker_epoch=image.offset + 1,
                end_points=[rec.RegisterBrokerRecord.BrokerEndpoint(name="PLAINTEXT", host="localhost",
                                                                    port=9091 + broker_id, security_protocol=0)],
                features=[rec.RegisterBrokerRecord.BrokerFeature(name="metadata.version", min_supported_version=7,
                                                                 max_supported_version=21)],
                rack=rng.choice([None, "a", "b"]), fenced=rng.random() < 0.5,
                log_dirs=[uuid.UUID(int=rng.getrandbits(128))]), 3)]
        elif choice < 0.15:
            broker_id = rng.choice(brokers)
            records = [(rec.BrokerRegistrationChangeRecord(broker_id=broker_id, broker_epoch=image.brokers[broker_id].epoch,
                                                           fenced=rng.choice([1, -1])), 0)]
        elif not image.topics or choice < 0.3:
            topic_id = uuid.UUID(int=rng.getrandbits(128))
            records = [(rec.TopicRecord(name=f"topic-{rng.getrandbits(32):08x}", topic_id=topic_id), None)]
            for index in range(rng.randint(1, 8)):
                replicas = rng.sample(brokers, min(len(brokers), rng.randint(1, 3)))
                records.append((rec.PartitionRecord(
                    partition_id=index, topic_id=topic_id, replicas=replicas, isr=replicas, leader=replicas[0],
                    leader_epoch=0, partition_epoch=0,
                    directories=[image.brokers[b].log_dirs[0] for b in replicas]), 1))
        elif choice < 0.35:
            records = [(rec.RemoveTopicRecord(topic_id=rng.choice(list(image.topics))), None)]
        elif choice < 0.8:
            topic = image.topics[rng.choice(list(image.topics))]
            index = rng.choice(list(topic.partitions))
            current = topic.partitions[index]
            change = {"partition_id": index, "topic_id": topic.topic_id}
            if rng.random() < 0.5:
                change["isr"] = rng.sample(current.replicas, rng.randint(1, len(current.replicas)))
            if rng.random() < 0.5:
                change["leader"] = rng.choice([-1, *current.replicas])
            if rng.random() < 0.2:
                target = rng.sample(brokers, min(len(brokers), rng.randint(1, 3)))
                change["replicas"] = target
                change["adding_replicas"] = [b for b in target if b not in current.replicas]
                change["removing_replicas"] = []
            records = [(rec.PartitionChangeRecord(**change), None)]
        else:
            topic = image.topics[rng.choice(list(image.topics))]
            resource = rng.choice([(2, topic.name), (4, ""), (4, str(rng.choice(brokers)))])
            name = rng.choice(["retention.ms", "cleanup.policy", "leader.replication.throttled.rate"])
            value = None if rng.random() < 0.3 else str(rng.randint(1, 10**9))
            records = [(rec.ConfigRecord(resource_type=resource[0], resource_name=resource[1], name=name,
                                         value=value), None)]
        for record, _version in records:
            image.apply(record, image.offset + 1)
        return records
