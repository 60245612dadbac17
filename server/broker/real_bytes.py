"""The real bytes of a follower's copy: the leader's record batches moved into the follower's log.

A partition's size, as the replication network copies it, is its simulated bytes
(``kraftwire.partition.size.bytes``) plus the real bytes of the leader's log (its segments' batches).
A copy moves both through the same rates and throttles (server/broker/replication_network.py): it
counts the simulated bytes first (they stand for the data the partition held before anything was
produced), then the leader's batches, oldest first. So a follower that has been credited
``log_bytes`` holds, of the real part, the whole batches that fit in ``log_bytes - simulated``: each
time the network settles, ``move`` appends those the credit now covers with ``append_as_follower``,
batch by batch as the leader stored them (offsets, epochs, compression and CRCs unchanged), and tells
the leader's partition how far the follower's log reaches (``follower_fetched``, which moves the high
watermark by the ISR and completes acks=-1 produces); the follower's high watermark follows the
leader's. A copy that the network finds caught up takes every batch left.

Before it copies from a leader for the first time (a new leader, or a new replica), the follower's log
is made a prefix of the leader's, as Kafka's fetcher does with OffsetForLeaderEpoch: it asks the
leader's log where the follower's latest epoch ended there and truncates to the smaller of that and its
own end of that epoch (to its high watermark when the leader's log does not know the epoch), and a log
that ends below the leader's log start starts again there, empty.
"""
from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .replication_network import CopiedLog, CopiedPartition

NO_EPOCH = -1


class RealCopy:
    """The real-byte state of one copy: the leader epoch whose log it last made its own a prefix of, and
    the partition's simulated bytes, which its credit counts before the real ones."""

    __slots__ = ("aligned_epoch", "simulated")

    def __init__(self) -> None:
        self.aligned_epoch: int | None = None
        self.simulated = 0.0


def align(leader_log: CopiedLog, follower_log: CopiedLog, follower_high_watermark: int) -> None:
    """Truncate the follower's log to where it agrees with the leader's (KIP-101's epoch rule)."""
    latest = follower_log.latest_epoch
    if latest is not None and follower_log.log_end_offset > follower_log.log_start_offset:
        epoch, end_offset = leader_log.end_offset_for_epoch(latest)
        if epoch == NO_EPOCH or end_offset < 0:
            target = min(follower_high_watermark, follower_log.log_end_offset)
        else:
            target = min(end_offset, follower_log.end_offset_for_epoch(epoch)[1], follower_log.log_end_offset)
        if target < follower_log.log_end_offset:
            follower_log.truncate_to(max(target, follower_log.log_start_offset))
    if follower_log.log_end_offset < leader_log.log_start_offset or \
            follower_log.log_end_offset > leader_log.log_end_offset:
        follower_log.truncate_fully_and_start_at(leader_log.log_start_offset)


def move(state: RealCopy, key: tuple[uuid.UUID, int], follower: int, leader: CopiedPartition,
         replica: CopiedPartition, allowance: float, everything: bool, now: float,
         on_moved: Callable[[tuple[uuid.UUID, int]], None]) -> bool:
    """Append to the follower's log the leader's batches its credit covers (``allowance`` real bytes,
    or all of them with ``everything``); True if any moved."""
    if not leader.opened:
        return False
    leader_log, follower_log = leader.log, replica.log
    if state.aligned_epoch != leader.leader_epoch:
        align(leader_log, follower_log, follower_log.high_watermark)
        state.aligned_epoch = leader.leader_epoch
    held, moved = follower_log.size_bytes, False
    while follower_log.log_end_offset < leader_log.log_end_offset:
        batch = leader_log.read(follower_log.log_end_offset, 1, None, True).read()  # its next batch
        if not batch or (not everything and held + len(batch) > allowance):
            break
        follower_log.append_as_follower(batch)
        held += len(batch)
        moved = True
    leader.follower_fetched(follower, follower_log.log_end_offset, int(now * 1000), follower_log.log_start_offset)
    replica.follower_high_watermark(leader.high_watermark)
    if moved:
        on_moved(key)
    return moved
