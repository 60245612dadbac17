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

from kraftwire.audit.logwriter import LogWriter
from kraftwire.codec import records as r

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
        change = r.LeaderChangeMessage(version=0, leader_id=leader, voters=[], granting_voters=[])
        return self.w.control(self.now, [change], epoch=epoch)

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

    def move(self, topic_id: uuid.UUID, index: int, replicas: list[int], adding=None, removing=None, **fields) -> int:
        """A change of the replica list, with its directories; adding/removing when given ([] clears)."""
        return self.change(topic_id, index, replicas=replicas, directories=dirs(replicas), adding_replicas=adding,
                            removing_replicas=removing, **fields)

    def reassign(self, topic_id: uuid.UUID, index: int, times: tuple[int, int, int], merged: list[int],
                 adding: list[int], removing: list[int], caught_up: list[int], leader: int) -> tuple[int, int]:
        """A reassignment as Kafka logs it: it starts (the merged replicas), the ISR grows to
        ``caught_up``, then it completes (the removing replicas leave; ``leader`` leads). ``times`` are
        the three moments in ms; returns the offsets of the start and of the completion."""
        self.at(times[0])
        start = self.move(topic_id, index, merged, adding=adding, removing=removing)
        self.at(times[1])
        self.change(topic_id, index, isr=caught_up)
        self.at(times[2])
        final = [b for b in merged if b not in removing]
        end = self.move(topic_id, index, final, isr=[b for b in caught_up if b not in removing], leader=leader,
                        adding=[], removing=[])
        return start, end

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
    plant("adding_removing_overlap", 4, log.move(t, 4, [1, 2, 3, 4], adding=[4], removing=[4]))
    plant("duplicate_replicas", 5, log.move(t, 5, [1, 1, 2], isr=[1, 2]))
    plant("directories_misaligned", 6, log.change(t, 6, directories=dirs([1, 2])))
    log.change(t, 7, leader=2)  # leader epoch 1
    plant("epoch_went_back", 7, log.put(partition(t, 7, [1, 2, 3], leader=2)))
    log.move(t, 8, [4, 1, 2, 3], adding=[4], removing=[3])
    plant("completed_before_in_sync", 8, log.move(t, 8, [4, 1, 2], isr=[1, 2], adding=[], removing=[]))
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


# --- a realistic scenario --------------------------------------------------------------------------

ORDERS = uuid.UUID("0a0a0a0a-0000-4000-8000-000000000001")
EVENTS = uuid.UUID("0e0e0e0e-0000-4000-8000-000000000002")
SCRATCH = uuid.UUID("05050505-0000-4000-8000-000000000003")
THROTTLE_RATE = "10485760"


def scenario_log(directory, **writer_options) -> dict[str, int]:
    """Records as Kafka's controller writes them (reference §2.3-2.6, §3.5, §4); returns the offset of
    each step by name. Times are T0 + the second in the comments."""
    log = Log(directory, **writer_options)
    at: dict[str, int] = {}
    log.leader_change()
    for b in (1, 2, 3, 4):
        log.broker(b)
    at["orders"] = log.topic("orders", ORDERS, [[1, 2, 3], [2, 3, 4]])
    at["events"] = log.topic("events", EVENTS, [[1, 2]])
    at["scratch"] = log.topic("scratch", SCRATCH, [[3, 4]])

    # 1 s: kafka-reassign-partitions sets throttles for moving orders-0 from broker 1 to 4
    log.at(1000)
    at["throttle_leader"] = log.config(2, "orders", "leader.replication.throttled.replicas", "0:1,0:2,0:3")
    at["throttle_follower"] = log.config(2, "orders", "follower.replication.throttled.replicas", "0:4")
    at["rate_1"] = log.config(4, "1", "leader.replication.throttled.rate", THROTTLE_RATE)
    at["rate_4"] = log.config(4, "4", "follower.replication.throttled.rate", THROTTLE_RATE)
    # 2-5.5 s: orders-0 [1,2,3] -> [4,2,3]: start, 4 joins the ISR, completion (leader 1 leaves: 4 leads)
    at["a_start"], at["a_end"] = log.reassign(ORDERS, 0, (2000, 5000, 5500), [4, 2, 3, 1], adding=[4], removing=[1],
                                              caught_up=[1, 2, 3, 4], leader=4)
    # 6 s: --verify removes the throttles
    log.at(6000)
    at["unthrottle"] = log.put(*(
        r.ConfigRecord(resource_type=kind, resource_name=name, name=key, value=None)
        for kind, name, key in ((2, "orders", "leader.replication.throttled.replicas"),
                                (2, "orders", "follower.replication.throttled.replicas"),
                                (4, "1", "leader.replication.throttled.rate"),
                                (4, "4", "follower.replication.throttled.rate"))))
    # 7 s: orders-1 [2,3,4] -> [1,3,4]; 8 s: superseded by [1,2,3] (Kafka keeps AR [1], RR becomes [4]);
    # 9 s: 1 joins the ISR, which completes it in the same record (4 leaves: leader 2 re-elected)
    log.at(7000)
    at["b_start"] = log.move(ORDERS, 1, [1, 3, 4, 2], removing=[2], adding=[1])
    log.at(8000)
    at["b_again"] = log.move(ORDERS, 1, [1, 2, 3, 4], removing=[4])
    log.at(9000)
    at["b_end"] = log.move(ORDERS, 1, [1, 2, 3], isr=[2, 3, 1], leader=2, removing=[], adding=[])
    # 10-13 s: events-0 RF 2 -> 3 with a throttle that is never removed
    log.at(10000)
    at["events_throttle"] = log.config(2, "events", "follower.replication.throttled.replicas", "0:3")
    at["rate_3"] = log.config(4, "3", "follower.replication.throttled.rate", THROTTLE_RATE)
    at["c_start"] = log.move(EVENTS, 0, [1, 2, 3], adding=[3])
    log.at(13000)
    at["c_end"] = log.change(EVENTS, 0, isr=[1, 2, 3], adding_replicas=[])
    # 14-15 s: scratch-0 [3,4] -> [1,2], cancelled
    log.at(14000)
    at["d_start"] = log.move(SCRATCH, 0, [1, 2, 3, 4], adding=[1, 2], removing=[3, 4])
    log.at(15000)
    at["d_cancel"] = log.move(SCRATCH, 0, [3, 4], leader=3, adding=[], removing=[])
    # 16 s: orders-0 [4,2,3] -> [4,2,1], still running at the end
    log.at(16000)
    at["e_start"] = log.move(ORDERS, 0, [4, 2, 1, 3], removing=[3], adding=[1])
    # 17 s: broker 3 is fenced: it leaves every ISR and scratch-0's leadership, in one batch
    log.at(17000)
    at["fence"] = log.put(
        r.BrokerRegistrationChangeRecord(broker_id=3, broker_epoch=103, fenced=1),
        r.PartitionChangeRecord(partition_id=0, topic_id=ORDERS, isr=[2, 4]),
        r.PartitionChangeRecord(partition_id=1, topic_id=ORDERS, isr=[2, 1]),
        r.PartitionChangeRecord(partition_id=0, topic_id=EVENTS, isr=[1, 2]),
        r.PartitionChangeRecord(partition_id=0, topic_id=SCRATCH, isr=[4], leader=4))
    # 18 s: broker 2's first directory fails (heartbeat OfflineLogDirs): its replicas there leave the ISRs
    log.at(18000)
    at["dir_offline"] = log.put(
        r.PartitionChangeRecord(partition_id=0, topic_id=ORDERS, isr=[4]),
        r.PartitionChangeRecord(partition_id=1, topic_id=ORDERS, isr=[1], leader=1),
        r.PartitionChangeRecord(partition_id=0, topic_id=EVENTS, isr=[1]),
        r.BrokerRegistrationChangeRecord(broker_id=2, broker_epoch=102, log_dirs=[dir_of(2, 1)]))
    # 18.5-19 s: scratch-0 [3,4] -> [4,1] starts, then the topic is deleted
    log.at(18500)
    at["f_start"] = log.move(SCRATCH, 0, [4, 1, 3], adding=[1], removing=[3])
    log.at(19000)
    at["delete"] = log.put(r.RemoveTopicRecord(topic_id=SCRATCH))
    log.at(20000)
    at["last"] = log.put(r.NoOpRecord())
    log.close()
    return at
