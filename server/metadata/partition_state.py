"""A partition's registration and Kafka's rules for building and changing it from records.

``PartitionState`` is what a PartitionRecord registers; ``merge_change`` is Kafka's replay of a
PartitionChangeRecord onto it (``PartitionRegistration.merge``): every change bumps the partition epoch;
the leader epoch goes up exactly when the record carries a Leader (-2 means unchanged); absent (null)
lists mean unchanged; directories that end up missing are MIGRATING for every replica.

Both builders take ``share``, which turns a list into the tuple the state keeps: the image passes its
interning table (``fast_paths.PartitionStates.shared``) so equal lists are one object; ``tuple`` is as good
for a state built once (``merged_partition``).
"""
from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from typing import NamedTuple, TypeVar

from kraftwire.codec import records as rec
from kraftwire.codec.constants import LEADER_RECOVERY_UNCHANGED, LEADER_UNCHANGED, MIGRATING

T = TypeVar("T")
Share = Callable[[Iterable[T]], tuple[T, ...]]


class PartitionState(NamedTuple):
    """A partition's registration. A named tuple: it is built for every record applied, twice (the
    working and the committed image), and a tuple builds in a fifth of a frozen dataclass's time."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    removing: tuple[int, ...]
    adding: tuple[int, ...]
    leader: int
    leader_recovery_state: int
    leader_epoch: int
    partition_epoch: int
    directories: tuple[uuid.UUID, ...]
    # Eligible leader replicas (KIP-966), kept by the controller where eligible.leader.replicas.version
    # is on (server/controller/partition_change.py), or as a Kafka log holds them.
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()

    @property
    def reassigning(self) -> bool:
        return bool(self.adding or self.removing)

    def directory_of(self, broker_id: int) -> uuid.UUID:
        return self.directories[self.replicas.index(broker_id)]


def _as_tuple(values: Iterable[T]) -> tuple[T, ...]:
    return tuple(values)


def all_directories(directories: Iterable[uuid.UUID] | None, replicas: tuple[int, ...],
                    share: Share = _as_tuple) -> tuple[uuid.UUID, ...]:
    """The directories a state keeps for ``replicas``: all MIGRATING where none are named or all are
    MIGRATING (checked by the UUIDs' ints: UUID equality is Python code)."""
    listed = tuple(directories) if directories is not None else ()
    if not listed or (not listed[0].int and not any(d.int for d in listed)):
        return share((MIGRATING,) * len(replicas))
    return share(listed)


def build_partition_state(r: rec.PartitionRecord, share: Share = _as_tuple) -> PartitionState:
    """The state a PartitionRecord registers."""
    replicas = share(r.replicas)
    return PartitionState(
        replicas, share(r.isr), tuple(r.removing_replicas), tuple(r.adding_replicas), r.leader,
        r.leader_recovery_state, r.leader_epoch, r.partition_epoch, all_directories(r.directories, replicas, share),
        tuple(r.eligible_leader_replicas or ()), tuple(r.last_known_elr or ()))


def merge_change(state: PartitionState, r: rec.PartitionChangeRecord, share: Share = _as_tuple) -> PartitionState:
    """The partition after the PartitionChangeRecord ``r`` (Kafka's PartitionRegistration.merge)."""
    replicas = state.replicas if r.replicas is None else share(r.replicas)
    directories = state.directories if r.directories is None else tuple(r.directories)
    if len(directories) != len(replicas) and r.directories is None:
        directories = all_directories(None, replicas, share)
    return PartitionState(
        replicas,
        state.isr if r.isr is None else share(r.isr),
        state.removing if r.removing_replicas is None else tuple(r.removing_replicas),
        state.adding if r.adding_replicas is None else tuple(r.adding_replicas),
        state.leader if r.leader == LEADER_UNCHANGED else r.leader,
        (state.leader_recovery_state if r.leader_recovery_state == LEADER_RECOVERY_UNCHANGED
         else r.leader_recovery_state),
        state.leader_epoch + (r.leader != LEADER_UNCHANGED),
        state.partition_epoch + 1,
        directories if directories is state.directories else all_directories(directories, replicas, share),
        state.elr if r.eligible_leader_replicas is None else tuple(r.eligible_leader_replicas),
        state.last_known_elr if r.last_known_elr is None else tuple(r.last_known_elr))


def merged_partition(state: PartitionState, change: rec.PartitionChangeRecord) -> PartitionState:
    """The partition after ``change``, built on its own (a decision previewing its answer)."""
    return merge_change(state, change)
