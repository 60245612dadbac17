"""The leader's view of its quorum in one epoch: voters, observers, and the high watermark.

Each voter's progress is the end of its fsync'd log (for the leader, its own flushed end; for
followers, the offset they fetch from, once there are followers). The high watermark is the largest
offset that a majority of voters have: the end at index ``len(voters) // 2`` of the ends sorted
high to low. As in Raft (and KafkaRaftClient), it moves only once it is past the epoch's start offset,
i.e. once a record of the leader's own epoch is on a majority, and it never moves back.

Observers are replicas that follow without voting (brokers); here they report through their
heartbeats, which carry the last metadata offset they applied.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ReplicaProgress:
    replica_id: int
    end_offset: int = -1  # -1: not known yet
    last_fetch_ms: int = -1
    last_caught_up_ms: int = -1


class Quorum:
    def __init__(self, local_id: int, voter_ids: list[int], epoch: int, epoch_start_offset: int,
                 high_watermark: int = 0):
        if local_id not in voter_ids:
            raise ValueError(f"node {local_id} leads but is not one of the voters {voter_ids}")
        self.local_id = local_id
        self.epoch = epoch
        self.epoch_start_offset = epoch_start_offset
        self.high_watermark = high_watermark
        self.voters = {v: ReplicaProgress(v) for v in sorted(voter_ids)}
        self.observers: dict[int, ReplicaProgress] = {}

    def update_voter(self, replica_id: int, end_offset: int, now_ms: int) -> bool:
        """Record a voter's durable end; returns True if the high watermark moved."""
        progress = self.voters[replica_id]
        progress.end_offset = max(progress.end_offset, end_offset)
        progress.last_fetch_ms = now_ms
        if end_offset >= self.high_watermark:
            progress.last_caught_up_ms = now_ms
        return self._advance()

    def observe(self, replica_id: int, end_offset: int, now_ms: int) -> None:
        """Record the position an observer reported."""
        if replica_id in self.voters:
            return
        progress = self.observers.setdefault(replica_id, ReplicaProgress(replica_id))
        progress.end_offset = end_offset
        progress.last_fetch_ms = now_ms
        if end_offset >= self.high_watermark:
            progress.last_caught_up_ms = now_ms

    def forget_observers(self, older_than_ms: int) -> None:
        for replica_id in [r for r, p in self.observers.items() if p.last_fetch_ms < older_than_ms]:
            del self.observers[replica_id]

    def _advance(self) -> bool:
        ends = sorted((p.end_offset for p in self.voters.values()), reverse=True)
        candidate = ends[len(ends) // 2]
        if candidate > self.epoch_start_offset and candidate > self.high_watermark:
            self.high_watermark = candidate
            return True
        return False
