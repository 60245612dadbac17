"""Metadata logs for the audit tests, written with the codec into Kafka-named files.

``planted_log`` breaks each invariant once (each on its own partition, so nothing else fires) and
damages one batch; ``scenario_log`` is a cluster's life as Kafka's controller would have logged it:
topics created, throttles set, reassignments completed, cancelled, superseded and left running, an RF
change, a throttle left behind, a fenced broker, an offline directory and a deleted topic. Both
return the offsets the tests expect findings and rows at.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from audit.logwriter import LogWriter
from codec import records as r

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def dir_of(broker: int, n: int = 0) -> uuid.UUID:
    return uuid.UUID(int=(broker << 64) + 1000 + n)


def dirs(replicas) -> list[uuid.UUID]:
    return [dir_of(b) for b in replicas]


class Log:
    """A LogWriter with one record per batch by default and shorthands for the records used here."""

    def __init__(self, directory, **writer_options):
        self.w = LogWriter(directory, **writer_options)
        self.now = T0

    def at(self, ms: int) -> "Log":
        self.now = T0 + ms
        return self

    def put(self, *records) -> int:
        """One batch of these records; returns the offset of the first."""
        return self.w.metadata(self.now, list(records))

    def leader_change(self, leader: int = 1, epoch: int = 1) -> int:
        return self.w.control(self.now, [r.LeaderChangeMessage(version=0, leader_id=leader, voters=[], granting_voters=[])],
                              epoch=epoch)

    def broker(self, broker: int, fenced: bool = False) -> int:
        return self.put(r.RegisterBrokerRecord(broker_id=broker, broker_epoch=100 + broker,
                                               incarnation_id=uuid.UUID(int=broker), fenced=fenced,
                                               log_dirs=[dir_of(broker), dir_of(broker, 1)], rack=None))

    def topic(self, name: str, topic_id: uuid.UUID, assignments: list[list[int]]) -> int:
        first = self.put(r.TopicRecord(name=name, topic_id=topic_id))
        for index, replicas in enumerate(assignments):
            self.put(partition(topic_id, index, replicas))
        return first

    def change(self, topic_id: uuid.UUID, index: int, **fields) -> int:
        return self.put(r.PartitionChangeRecord(partition_id=index, topic_id=topic_id, **fields))

    def config(self, resource_type: int, name: str, key: str, value: str | None) -> int:
        return self.put(r.ConfigRecord(resource_type=resource_type, resource_name=name, name=key, value=value))

    def close(self):
        self.w.close()


def partition(topic_id, index, replicas, isr=None, leader=None, leader_epoch=0, partition_epoch=0, **extra):
    return r.PartitionRecord(partition_id=index, topic_id=topic_id, replicas=replicas,
                             isr=replicas if isr is None else isr, leader=replicas[0] if leader is None else leader,
                             leader_epoch=leader_epoch, partition_epoch=partition_epoch,
                             directories=extra.pop("directories", dirs(replicas)), **extra)


# --- planted violations ----------------------------------------------------------------------------

PLANTED = uuid.UUID("00000000-0000-4000-8000-00000000beef")


@dataclass
class Planted:
    found: dict[str, int] = field(default_factory=dict)  # violation kind -> offset
    partition: dict[str, int] = field(default_factory=dict)  # invariant kind -> partition index
    corrupt_file: str = ""
    corrupt_position: int = 0
    torn_file: str = ""
    torn_position: int = 0
    last_offset: int = 0


def planted_log(directory, **writer_options) -> Planted:
    """A log that breaks each invariant once, then has a corrupt batch, an offset gap and a torn end."""
    log = Log(directory, **writer_options)
    p = Planted()
    log.leader_change()
    for b in (1, 2, 3, 4):
        log.broker(b)
    log.topic("planted", PLANTED, [[1, 2, 3]] * 11)
    t = PLANTED

    def plant(kind: str, index: int, offset: int) -> None:
        p.found[kind] = offset
        p.partition[kind] = index

    log.at(1000)
    plant("isr_not_in_replicas", 0, log.change(t, 0, isr=[1, 2, 3, 9]))
    plant("leader_not_in_isr", 1, log.change(t, 1, isr=[1, 2], leader=3))
    plant("adding_not_in_replicas", 2, log.change(t, 2, adding_replicas=[5]))
    plant("removing_not_in_replicas", 3, log.change(t, 3, removing_replicas=[6]))
    plant("adding_removing_overlap", 4, log.change(t, 4, replicas=[1, 2, 3, 4], directories=dirs([1, 2, 3, 4]),
                                                   adding_replicas=[4], removing_replicas=[4]))
    plant("duplicate_replicas", 5, log.change(t, 5, replicas=[1, 1, 2], directories=dirs([1, 1, 2]), isr=[1, 2]))
    plant("directories_misaligned", 6, log.change(t, 6, directories=dirs([1, 2])))
    log.change(t, 7, leader=2)  # leader epoch 1
    plant("epoch_went_back", 7, log.put(partition(t, 7, [1, 2, 3], leader=2)))
    log.change(t, 8, replicas=[4, 1, 2, 3], directories=dirs([4, 1, 2, 3]), adding_replicas=[4], removing_replicas=[3])
    plant("completed_before_in_sync", 8, log.change(t, 8, replicas=[4, 1, 2], directories=dirs([4, 1, 2]),
                                                    isr=[1, 2], adding_replicas=[], removing_replicas=[]))
    plant("unknown_partition", 11, log.change(t, 11, isr=[1]))
    plant("unknown_topic", 0, log.change(uuid.UUID(int=404), 0, isr=[1]))

    log.at(2000)
    healthy = r.metadata_batch(log.w.next_offset, 1, log.now, [(r.PartitionChangeRecord(
        partition_id=9, topic_id=t, isr=[1, 2]), None)])
    damaged = bytearray(healthy)
    damaged[-3] ^= 0xFF  # inside the record: the CRC no longer matches
    p.corrupt_file, p.corrupt_position = log.w.position
    p.found["corrupt_batch"] = log.w.next_offset
    log.w.append(bytes(damaged))
    after = log.change(t, 9, isr=[1, 3])
    log.w.next_offset = after + 5  # five offsets never written
    p.found["offset_gap"] = after + 1
    p.last_offset = log.change(t, 10, isr=[1, 3])
    torn = r.metadata_batch(log.w.next_offset, 1, log.now, [(r.PartitionChangeRecord(partition_id=10, topic_id=t,
                                                                                      isr=[1, 2, 3]), None)])
    p.torn_file, p.torn_position = log.w.position
    p.found["torn_batch"] = log.w.next_offset
    log.w.append(torn[: len(torn) // 2])
    log.close()
    return p
