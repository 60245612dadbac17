"""Voter sets for the Raft core (KIP-853): replica keys, the VotersRecord and KRaftVersionRecord control
entries, and the history of voter sets along a log.

A replica's voter set is the one of the latest VotersRecord in its log, committed or not, as in Kafka;
without one it is the bootstrap set (``controller.quorum.voters`` or the bootstrap checkpoint). Truncating
the log past a VotersRecord brings back the set before it. ``kraft.version`` 0 means a static set that
cannot change; 1 means dynamic voters. Voters are keyed by node id and metadata log directory id, so a
node whose disk was replaced is a different replica; a static set has no directory ids and matches any.

A snapshot written with kraft.version 1 holds, right after its SnapshotHeaderRecord and in the same control
batch, the KRaftVersionRecord and VotersRecord in force at its end (Kafka's RecordsSnapshotWriter); loading
it puts them in the history at the snapshot's last offset, over whatever came before (Kafka's
KRaftControlRecordStateMachine), so the log below a snapshot is not needed to know the voters.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from collections.abc import Iterable

from kraftwire.codec import records
from kraftwire.codec.constants import ZERO_UUID

NO_DIRECTORY = None   # Kafka's ZERO_UUID: a replica key whose directory is unknown
DirectoryId = uuid.UUID | None  # a replica's metadata log directory id; NO_DIRECTORY when unknown


@dataclass(frozen=True)
class ReplicaKey:
    id: int
    directory_id: DirectoryId = NO_DIRECTORY


@dataclass(frozen=True)
class VoterNode:
    """A voter as VotersRecord lists it: its key, its listeners (name, host, port) and kraft.version range."""
    key: ReplicaKey
    listeners: tuple[tuple[str, str, int], ...] = ()
    kraft_versions: tuple[int, int] = (0, 1)


@dataclass(frozen=True)
class VoterSet:
    voters: tuple[VoterNode, ...]

    @classmethod
    def static(cls, ids: Iterable[int]) -> VoterSet:
        """A ``controller.quorum.voters`` set: ids only."""
        return cls(tuple(VoterNode(ReplicaKey(i)) for i in sorted(ids)))

    @property
    def ids(self) -> tuple[int, ...]:
        return tuple(sorted(v.key.id for v in self.voters))

    def node(self, voter_id: int) -> VoterNode | None:
        return next((v for v in self.voters if v.key.id == voter_id), None)

    def is_voter(self, key: ReplicaKey) -> bool:
        """Ids must match; directory ids too, unless the set does not know the voter's directory."""
        node = self.node(key.id)
        return node is not None and node.key.directory_id in (NO_DIRECTORY, key.directory_id)

    def majority(self) -> int:
        return len(self.voters) // 2 + 1

    def adding(self, node: VoterNode) -> VoterSet | None:
        """The set with ``node`` added, or None if its id already votes."""
        if self.node(node.key.id) is not None:
            return None
        return VoterSet(tuple(sorted(self.voters + (node,), key=lambda v: v.key.id)))

    def removing(self, key: ReplicaKey) -> VoterSet | None:
        """The set without ``key``, or None if that exact key does not vote (or it is the last voter)."""
        node = self.node(key.id)
        if node is None or node.key != key or len(self.voters) == 1:
            return None
        return VoterSet(tuple(v for v in self.voters if v.key != key))

    def updating(self, node: VoterNode) -> VoterSet | None:
        """The set with ``node`` in place of the voter its key matches, or None if it matches none."""
        if not self.is_voter(node.key):
            return None
        return VoterSet(tuple(node if v.key.id == node.key.id else v for v in self.voters))

    def differs_by_at_most_one(self, other: VoterSet) -> bool:
        """Any majority of one set overlaps any majority of the other: the single-change rule."""
        mine, theirs = {v.key for v in self.voters}, {v.key for v in other.voters}
        return len(mine ^ theirs) <= 1


@dataclass(frozen=True)
class VotersRecord:
    """Control record type 6: the complete voter set from this offset on."""
    voters: VoterSet


@dataclass(frozen=True)
class KRaftVersionRecord:
    """Control record type 5: the finalized kraft.version from this offset on."""
    kraft_version: int


def to_control_record(data: VotersRecord | KRaftVersionRecord) -> records.VotersRecord | records.KRaftVersionRecord:
    """The codec's control record (type 6 or 5) for a core entry's data, as the log stores it."""
    if isinstance(data, KRaftVersionRecord):
        return records.KRaftVersionRecord(version=0, k_raft_version=data.kraft_version)
    wire = records.VotersRecord
    return wire(version=0, voters=[wire.Voter(
        voter_id=v.key.id, voter_directory_id=ZERO_UUID if v.key.directory_id is NO_DIRECTORY else v.key.directory_id,
        endpoints=[wire.Endpoint(name=name, host=host, port=port) for name, host, port in v.listeners],
        k_raft_version_feature=wire.KRaftVersionFeature(min_supported_version=v.kraft_versions[0],
                                                        max_supported_version=v.kraft_versions[1]))
        for v in data.voters.voters])


def from_control_record(record: records.VotersRecord | records.KRaftVersionRecord) -> VotersRecord | KRaftVersionRecord:
    """A core entry's data from the log's control record."""
    if isinstance(record, records.KRaftVersionRecord):
        return KRaftVersionRecord(record.k_raft_version)
    return VotersRecord(VoterSet(tuple(sorted((VoterNode(
        ReplicaKey(v.voter_id, NO_DIRECTORY if v.voter_directory_id == ZERO_UUID else v.voter_directory_id),
        tuple((e.name, e.host, e.port) for e in v.endpoints),
        (v.k_raft_version_feature.min_supported_version, v.k_raft_version_feature.max_supported_version))
        for v in record.voters), key=lambda node: node.key.id))))


@dataclass(frozen=True)
class SnapshotVoters:
    """The KRaftVersionRecord and VotersRecord a snapshot holds (None where it holds none)."""
    kraft_version: int | None = None
    voters: VoterSet | None = None

    def control_records(self) -> list:
        """The codec's control records to write after a snapshot's header, as Kafka orders them."""
        found = [] if self.kraft_version is None else [to_control_record(KRaftVersionRecord(self.kraft_version))]
        return found + ([] if self.voters is None else [to_control_record(VotersRecord(self.voters))])

    @classmethod
    def of_records(cls, control: Iterable) -> SnapshotVoters:
        """From a snapshot's control records (other types are skipped)."""
        kraft_version = voters = None
        for record in control:
            if isinstance(record, (records.VotersRecord, records.KRaftVersionRecord)):
                data = from_control_record(record)
                if isinstance(data, KRaftVersionRecord):
                    kraft_version = data.kraft_version
                else:
                    voters = data.voters
        return cls(kraft_version, voters)


class VoterHistory:
    """The voter sets and kraft.versions a log holds, by offset, over the bootstrap ones (offset -1)."""

    def __init__(self, bootstrap: VoterSet, kraft_version: int):
        self._bootstrap = (-1, bootstrap), (-1, kraft_version)
        self._sets: list[tuple[int, VoterSet]] = [self._bootstrap[0]]
        self._versions: list[tuple[int, int]] = [self._bootstrap[1]]

    def appended(self, offset: int, entries: Iterable) -> None:
        """Entries (``Entry`` of core.py) were appended at ``offset``."""
        for position, entry in enumerate(entries, offset):
            if isinstance(entry.data, VotersRecord):
                self._sets.append((position, entry.data.voters))
            elif isinstance(entry.data, KRaftVersionRecord):
                self._versions.append((position, entry.data.kraft_version))

    def loaded(self, end_offset: int, snapshot: SnapshotVoters) -> None:
        """A snapshot ending at ``end_offset`` replaced the log below it: what it holds is in force from its
        last offset on, and nothing before it is kept; what it does not hold falls back to the bootstrap."""
        last = end_offset - 1
        self._sets = [(last, snapshot.voters) if snapshot.voters is not None else self._bootstrap[0]]
        self._versions = [(last, snapshot.kraft_version) if snapshot.kraft_version is not None
                          else self._bootstrap[1]]

    def retired(self, start: int) -> None:
        """The log now starts at ``start``: forget the sets and versions superseded before it."""
        while len(self._sets) > 1 and self._sets[1][0] < start:
            self._sets.pop(0)
        while len(self._versions) > 1 and self._versions[1][0] < start:
            self._versions.pop(0)

    def in_force(self, offset: int) -> SnapshotVoters:
        """What a snapshot ending at ``offset`` holds: with kraft.version 1 the version and the set in force
        there, with 0 nothing (Kafka writes them only where the voters can change)."""
        version = next(v for at, v in reversed(self._versions) if at < offset)
        return SnapshotVoters(version, self.in_force_at(offset)) if version >= 1 else SnapshotVoters()

    def truncated(self, offset: int) -> None:
        """The log keeps only the entries below ``offset``: the sets and versions after it go."""
        while self._sets[-1][0] >= offset:
            self._sets.pop()
        while self._versions[-1][0] >= offset:
            self._versions.pop()

    @property
    def latest(self) -> VoterSet:
        return self._sets[-1][1]

    @property
    def latest_offset(self) -> int:
        """Where the latest set was written; -1 for the bootstrap set."""
        return self._sets[-1][0]

    @property
    def kraft_version(self) -> int:
        return self._versions[-1][1]

    def in_force_at(self, offset: int) -> VoterSet:
        """The set of the latest VotersRecord below ``offset`` (the committed set, for a high watermark)."""
        return next(voters for at, voters in reversed(self._sets) if at < offset)
