"""Replica placement for CreateTopics and CreatePartitions when the client gives no assignment.

Clients and tools judge a cluster by where new replicas land, so this follows the striping of Kafka's
KRaft controller (StripedReplicaPlacer): racks are taken round-robin from a random starting rack, and
brokers round-robin within each rack from a random starting broker; each new partition starts one rack
further on, and within a rack one broker further on. The result:

* the replicas of a partition are distinct brokers, spread over as many racks as possible;
* leaders (first replicas) and replicas spread evenly over brokers and racks;
* a leader is always an unfenced broker; fenced brokers take followers only when unfenced ones run out;
* after as many partitions as there are unfenced brokers, the rack and broker orders are reshuffled so
  that large topics do not repeat the same few replica sets.

All randomness comes from the ``random.Random`` passed in (``randrange`` and ``shuffle``), so a seeded
generator gives a reproducible placement.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence

from kraftwire.codec import ErrorCode, KafkaError


class _BrokerCycle:
    """Brokers handed out round-robin. Each new epoch (one per partition placed) starts one broker
    further on, and within an epoch each broker is handed out at most once."""

    def __init__(self) -> None:
        self.brokers: list[int] = []
        self.offset = 0
        self.index = 0
        self.epoch = 0

    def start(self, rng: random.Random) -> None:
        if self.brokers:
            self.brokers.sort()
            self.offset = rng.randrange(len(self.brokers))

    def next(self, epoch: int) -> int | None:
        if not self.brokers:
            return None
        if epoch != self.epoch:
            self.epoch, self.index = epoch, 0
            self.offset = (self.offset + 1) % len(self.brokers)
        if self.index >= len(self.brokers):
            return None
        broker = self.brokers[(self.index + self.offset) % len(self.brokers)]
        self.index += 1
        return broker


class _Rack:
    def __init__(self) -> None:
        self.unfenced = _BrokerCycle()
        self.fenced = _BrokerCycle()

    def next(self, epoch: int) -> int | None:
        """Unfenced brokers first; fenced ones only once those are used up in this epoch."""
        broker = self.unfenced.next(epoch)
        return broker if broker is not None else self.fenced.next(epoch)


class _Striper:
    """The racks of the cluster, taken round-robin to place one partition after another."""

    def __init__(self, brokers: Sequence[tuple[int, str | None]], fenced: Collection[int],
                 rng: random.Random):
        self.rng = rng
        by_rack: dict[str | None, _Rack] = {}
        for broker_id, rack in brokers:
            cycles = by_rack.setdefault(rack, _Rack())
            (cycles.fenced if broker_id in fenced else cycles.unfenced).brokers.append(broker_id)
        # Brokers without a rack form one rack that sorts first.
        self.rack_order = sorted(by_rack, key=lambda rack: (rack is not None, rack or ""))
        self.racks = {rack: by_rack[rack] for rack in self.rack_order}
        for cycles in self.racks.values():
            cycles.fenced.start(rng)
            cycles.unfenced.start(rng)
        self.total = len(brokers)
        self.unfenced = sum(len(rack.unfenced.brokers) for rack in self.racks.values())
        self.offset = rng.randrange(len(self.rack_order)) if self.rack_order else 0
        self.epoch = 0

    def place(self, replication_factor: int) -> list[int]:
        if self.epoch == self.unfenced and self.unfenced > 1:
            self._reshuffle()
        self.offset %= len(self.rack_order)
        leader_rack = self.offset
        while (leader := self._rack(leader_rack).unfenced.next(self.epoch)) is None:
            leader_rack = (leader_rack + 1) % len(self.rack_order)
        replicas = [leader]
        rack_index = self.offset
        skip: int | None = leader_rack
        while len(replicas) < replication_factor:
            if rack_index == skip:
                skip = None  # the leader's rack gave this round's broker already
                broker = None
            else:
                broker = self._rack(rack_index).next(self.epoch)
            rack_index = (rack_index + 1) % len(self.rack_order)
            if broker is not None:
                replicas.append(broker)
        self.epoch += 1
        self.offset += 1
        return replicas

    def _rack(self, index: int) -> _Rack:
        return self.racks[self.rack_order[index]]

    def _reshuffle(self) -> None:
        """Every unfenced broker has led once since the last shuffle: vary the orders."""
        self.rng.shuffle(self.rack_order)
        for rack in self.racks.values():
            self.rng.shuffle(rack.fenced.brokers)
            self.rng.shuffle(rack.unfenced.brokers)
        self.epoch = 0


def place(brokers: Sequence[tuple[int, str | None]], start_partition: int, num_partitions: int,
          replication_factor: int, rng: random.Random, fenced: Collection[int] = ()) -> list[list[int]]:
    """Replica lists (leader first) for partitions start_partition .. start_partition+num_partitions-1.

    ``brokers`` are the usable brokers as (id, rack or None): registered, not in controlled shutdown
    and with a log directory that is not cordoned; ``fenced`` names those of them that are fenced.
    ``start_partition`` is 0 for CreateTopics and the current partition count for CreatePartitions;
    as in Kafka, CreateTopics words placement failures as "Unable to replicate the partition N
    time(s): ..." and CreatePartitions reports the placer's reason alone.

    Raises KafkaError INVALID_REPLICATION_FACTOR for a non-positive replication factor, when every
    broker is fenced, or when there are fewer brokers than replicas; INVALID_PARTITIONS for a
    non-positive number of partitions."""
    if replication_factor <= 0:
        raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR,
                         "Replication factor must be larger than 0, or -1 to use the default value.")
    if num_partitions <= 0:
        raise KafkaError(ErrorCode.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value.")
    striper = _Striper(brokers, fenced, rng)
    if striper.unfenced == 0:
        reason = "All brokers are currently fenced, or have all their log directories cordoned."
    elif replication_factor > striper.total:
        reason = (f"The target replication factor of {replication_factor} cannot be reached because only "
                  f"{striper.total} broker(s) are registered or some brokers have all their log "
                  "directories cordoned.")
    else:
        return [striper.place(replication_factor) for _ in range(num_partitions)]
    if start_partition == 0:
        reason = f"Unable to replicate the partition {replication_factor} time(s): {reason}"
    raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, reason)
