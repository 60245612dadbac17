"""The replay of one partition: pure Python on decoded records, no Spark.

``PartitionReplay``, one per (topic id, partition), takes PartitionRecord and PartitionChangeRecord with
Kafka's replay rules (``PartitionRegistration.merge``): absent (null) lists are unchanged; the leader
epoch goes up exactly when the record carries a Leader other than -2; the partition epoch goes up on
every change; directories that end up empty or all MIGRATING mean MIGRATING for every replica. It checks
the invariants after every record, follows reassignments and RF changes, and counts under-replicated
partitions by Kafka's rule (``Partition.isUnderReplicated``: the ISR is smaller than the replication
factor, which during a reassignment is the replicas minus adding, so copies still catching up do not
count) and leaderless ones.

A partition's replay needs only its own records, its topic's name and its topic's deletion offset
(``Topics``, which ``audit.global_replay`` fills), so the partitions can be replayed apart, e.g. one group per
Spark task, once the global records are replayed: the single-process run and the Spark job feed the
same classes and get the same rows.

Reassignments as seen in the log (reference §2.3-2.6): one starts when AddingReplicas/RemovingReplicas
become non-empty (original = the replicas before, target = replicas minus removing); a record that
changes replicas, adding or removing while one is in flight supersedes it (a new one starts from replicas
minus adding); one ends when both lists are empty again: ``completed`` when the replicas are the replicas
minus removing of the state before, ``cancelled`` when they are its replicas minus adding (Kafka's
revert, which after a superseding request may differ from the original). A replica change with no
reassignment in flight (a removal or reorder that completed at once) is a reassignment that starts and
completes at the same record. One still in flight at the end of the log is ``running``; one whose topic
was deleted is ``deleted``.

Violations are reported when they appear (a state that stays broken is reported once, at the record
that broke it) with the offset and a detail.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from kraftwire.codec import MalformedError
from kraftwire.codec import records as rec
from kraftwire.codec.constants import LEADER_RECOVERY_UNCHANGED, LEADER_UNCHANGED, MIGRATING, NO_LEADER

from .rows import Output, Raw, decode, partition_fields_json, record_row, undecodable, violation

Brokers = tuple[int, ...]


@dataclass(slots=True)
class TopicLife:
    """A topic as the global replay saw it: its name, the offset of its TopicRecord and, once a
    RemoveTopicRecord deleted it, that record's offset and timestamp."""

    name: str
    created: int
    deleted: int | None = None
    deleted_time: int | None = None


class Topics:
    """Topic id -> ``TopicLife``; what a partition's replay needs from the global one. Picklable, to
    broadcast."""

    def __init__(self) -> None:
        self.by_id: dict[uuid.UUID, TopicLife] = {}

    def name_at(self, topic_id: uuid.UUID, offset: int) -> str | None:
        """The topic's name if it exists at ``offset``."""
        topic = self.by_id.get(topic_id)
        if topic is None or offset < topic.created or (topic.deleted is not None and offset >= topic.deleted):
            return None
        return topic.name

    def deletion(self, topic_id: uuid.UUID) -> tuple[int, int] | None:
        """(offset, timestamp) of the record that deleted the topic, None while it exists."""
        topic = self.by_id.get(topic_id)
        if topic is None or topic.deleted is None or topic.deleted_time is None:
            return None
        return topic.deleted, topic.deleted_time


class PartitionState(NamedTuple):
    """A partition as its records have left it (Kafka's ``PartitionRegistration``), with its
    directories also as text (the tables' form, made once per change of them)."""

    replicas: Brokers
    isr: Brokers
    removing: Brokers
    adding: Brokers
    leader: int
    leader_recovery_state: int
    leader_epoch: int
    partition_epoch: int
    directories: tuple[uuid.UUID, ...]
    directory_texts: tuple[str, ...]


@dataclass(slots=True)
class OpenReassignment:
    """A reassignment followed from the record that started it; ``row`` is its ``reassignments`` row
    (``rows.COLUMNS`` order) once it is closed."""

    topic: str | None
    topic_id: str
    partition: int
    start_offset: int
    start_time: int
    original_replicas: Brokers
    target_replicas: Brokers
    adding: Brokers
    removing: Brokers
    end_offset: int | None = None
    end_time: int | None = None
    outcome: str | None = None
    final_replicas: Brokers | None = None
    rf_after: int | None = None
    duration_ms: int | None = None

    def row(self) -> tuple:
        return (self.topic, self.topic_id, self.partition, self.start_offset, self.start_time, self.end_offset,
                self.end_time, self.outcome, self.original_replicas, self.target_replicas, self.final_replicas,
                self.adding, self.removing, len(self.original_replicas), self.rf_after, self.duration_ms)



_INVARIANTS = ("duplicate_replicas", "isr_not_in_replicas", "leader_not_in_isr", "adding_not_in_replicas",
               "removing_not_in_replicas", "adding_removing_overlap", "directories_misaligned")


class PartitionReplay:
    """One partition's history. ``state`` is None before its PartitionRecord and after its topic is
    deleted."""

    __slots__ = ("topic_id", "partition", "topic_id_text", "out", "state", "topic", "reassignment",
                 "settled_rf", "broken", "under_replicated", "offline")

    @classmethod
    def for_key(cls, key: bytes, out: Output) -> PartitionReplay:
        """The replay for a reader key (PartitionId int32 + TopicId bytes)."""
        return cls(uuid.UUID(bytes=key[4:20]), int.from_bytes(key[:4], "big", signed=True), out)

    def __init__(self, topic_id: uuid.UUID, partition: int, out: Output):
        self.topic_id = topic_id
        self.partition = partition
        self.topic_id_text = str(topic_id)
        self.out = out
        self.state: PartitionState | None = None
        self.topic: str | None = None
        self.reassignment: OpenReassignment | None = None  # the one in flight
        self.settled_rf: int | None = None  # replica count when no reassignment was in flight
        self.broken: frozenset[str] = frozenset()  # invariants currently violated
        self.under_replicated = self.offline = False

    def feed(self, raw: Raw, topics: Topics) -> None:
        out = self.out
        try:
            record, version = decode(raw)
        except MalformedError as exc:
            undecodable(out, raw, exc, topic_id=self.topic_id_text, partition=self.partition)
            return
        if not isinstance(record, (rec.PartitionRecord, rec.PartitionChangeRecord)):
            raise TypeError(f"{type(record).__name__} keyed as a partition's record")  # the reader keys only these
        offset, timestamp = raw[0], raw[1]
        out.record_types[type(record).__name__] += 1
        name = topics.name_at(self.topic_id, offset)
        in_window = out.window.contains(offset, timestamp)
        texts = None if record.directories is None else tuple(map(str, record.directories))
        if in_window:
            out.rows["records"].append(record_row(raw, record, version, name, self.topic_id_text, self.partition,
                                                  partition_fields_json(record, self.topic_id_text, texts)))
        if name is None:
            self._violation(offset, timestamp, "unknown_topic",
                            f"{type(record).__name__} for topic id {self.topic_id_text}, which does not exist here")
            return
        self.topic = name
        if isinstance(record, rec.PartitionRecord):
            self._create(offset, timestamp, record, texts)
        elif self.state is None:
            self._violation(offset, timestamp, "unknown_partition",
                            "PartitionChangeRecord for a partition that does not exist")
            return
        else:
            self._change(offset, timestamp, record, texts)
        if in_window:
            s = self.state
            assert s is not None
            out.rows["partition_states"].append((
                offset, timestamp, name, self.topic_id_text, self.partition, type(record).__name__, s.replicas, s.isr,
                s.leader, s.leader_epoch, s.partition_epoch, s.adding, s.removing, s.directory_texts,
                s.leader_recovery_state))

    def _create(self, offset: int, timestamp: int, r: rec.PartitionRecord, texts: tuple[str, ...] | None) -> None:
        old = self.state
        directories = _directories(r.directories, r.replicas)
        state = PartitionState(r.replicas, r.isr, r.removing_replicas, r.adding_replicas, r.leader,
                               r.leader_recovery_state, r.leader_epoch, r.partition_epoch, directories,
                               _texts(directories, r.directories, texts))
        if old is not None and (state.leader_epoch < old.leader_epoch or state.partition_epoch < old.partition_epoch):
            self._violation(offset, timestamp, "epoch_went_back", (
                f"PartitionRecord sets leader epoch {old.leader_epoch} -> {state.leader_epoch}, partition epoch "
                f"{old.partition_epoch} -> {state.partition_epoch}"))
        if self.reassignment is not None:
            self._close(offset, timestamp, "superseded", None)
        self.state = state
        if r.adding_replicas or r.removing_replicas:
            self._open(offset, timestamp, state, [b for b in r.replicas if b not in r.adding_replicas])
        else:
            self.settled_rf = len(r.replicas)
        self._check(offset, timestamp, state)

    def _change(self, offset: int, timestamp: int, r: rec.PartitionChangeRecord,
                texts: tuple[str, ...] | None) -> None:
        old = self.state
        assert old is not None
        replicas = old.replicas if r.replicas is None else r.replicas
        if r.directories is None and r.replicas is None:
            directories, directory_texts = old.directories, old.directory_texts
        else:
            directories = _directories(old.directories if r.directories is None else r.directories, replicas)
            directory_texts = (old.directory_texts if directories is old.directories
                               else _texts(directories, r.directories, texts))
        if r.leader == LEADER_UNCHANGED:
            leader, leader_epoch = old.leader, old.leader_epoch
        else:
            leader, leader_epoch = r.leader, old.leader_epoch + 1
        state = PartitionState(
            replicas,
            old.isr if r.isr is None else r.isr,
            old.removing if r.removing_replicas is None else r.removing_replicas,
            old.adding if r.adding_replicas is None else r.adding_replicas,
            leader,
            old.leader_recovery_state if r.leader_recovery_state == LEADER_RECOVERY_UNCHANGED
            else r.leader_recovery_state,
            leader_epoch, old.partition_epoch + 1, directories, directory_texts)
        self.state = state
        was, now = bool(old.removing or old.adding), bool(state.removing or state.adding)
        if was or now or replicas != old.replicas:
            self._follow_reassignment(offset, timestamp, old, state, was, now)
        self._check(offset, timestamp, state)

    # --- reassignments -----------------------------------------------------------------------------

    def _follow_reassignment(self, offset: int, timestamp: int, old: PartitionState, new: PartitionState,
                             was: bool, now: bool) -> None:
        if not was:
            self._open(offset, timestamp, new, old.replicas)
            if not now:
                self._end(offset, timestamp, new, "completed")
            return
        if now:
            if (new.replicas, new.removing, new.adding) != (old.replicas, old.removing, old.adding):
                self._close(offset, timestamp, "superseded", None)
                self._open(offset, timestamp, new, [b for b in old.replicas if b not in old.adding])
            return
        # Kafka completes to R - RR and reverts to R - AR, both of the state just before
        completed = {b for b in old.replicas if b not in old.removing}
        reverted = {b for b in old.replicas if b not in old.adding}
        final = set(new.replicas)
        if completed == reverted or final == reverted:
            self._end(offset, timestamp, new, "cancelled")
        elif final == completed:
            self._end(offset, timestamp, new, "completed")
        else:
            self._close(offset, timestamp, "superseded", None)
            self._open(offset, timestamp, new, [b for b in old.replicas if b not in old.adding])
            self._end(offset, timestamp, new, "completed")

    def _open(self, offset: int, timestamp: int, state: PartitionState, before: Iterable[int]) -> None:
        removing = state.removing
        target = tuple(b for b in state.replicas if b not in removing)
        original = tuple(before)
        adding = state.adding if state.adding else tuple(b for b in target if b not in original)
        removing = removing if removing else tuple(b for b in original if b not in target)
        self.reassignment = OpenReassignment(self.topic, self.topic_id_text, self.partition, offset, timestamp,
                                             original, target, adding, removing)

    def _end(self, offset: int, timestamp: int, new: PartitionState, outcome: str) -> None:
        """Close the open reassignment as completed or cancelled at a record that settles the partition."""
        ra = self.reassignment
        assert ra is not None
        if outcome == "completed":
            missing = [b for b in ra.adding if b not in new.isr]
            if missing:
                self._violation(offset, timestamp, "completed_before_in_sync", (
                    f"reassignment to {list(ra.target_replicas)} completed while adding replicas {missing} were "
                    f"not in the ISR {list(new.isr)}"))
        self._close(offset, timestamp, outcome, new.replicas)
        rf = len(new.replicas)
        if self.settled_rf is not None and rf != self.settled_rf:
            self.out.rows["rf_changes"].append((
                self.topic, self.topic_id_text, self.partition, offset, timestamp, self.settled_rf, rf,
                ra.original_replicas, tuple(new.replicas), ra.start_offset, outcome))
        self.settled_rf = rf

    def _close(self, offset: int | None, timestamp: int | None, outcome: str, final: Brokers | None) -> None:
        ra = self.reassignment
        assert ra is not None
        ra.outcome = outcome
        if outcome != "running":
            ra.end_offset, ra.end_time = offset, timestamp
        if final is not None:
            ra.final_replicas, ra.rf_after = tuple(final), len(final)
        if outcome != "running" and timestamp is not None and ra.start_time is not None:
            ra.duration_ms = timestamp - ra.start_time
        self.out.rows["reassignments"].append(ra.row())
        self.reassignment = None

    # --- invariants and counts ---------------------------------------------------------------------

    def _check(self, offset: int, timestamp: int, state: PartitionState) -> None:
        replicas, isr, removing, adding, leader = state.replicas, state.isr, state.removing, state.adding, state.leader
        members = set(replicas)
        broken = set()
        if len(members) != len(replicas):
            broken.add("duplicate_replicas")
        if not members.issuperset(isr):
            broken.add("isr_not_in_replicas")
        if leader != NO_LEADER and leader not in isr:
            broken.add("leader_not_in_isr")
        if adding and not members.issuperset(adding):
            broken.add("adding_not_in_replicas")
        if removing and not members.issuperset(removing):
            broken.add("removing_not_in_replicas")
        if adding and removing and not set(adding).isdisjoint(removing):
            broken.add("adding_removing_overlap")
        if len(state.directories) != len(replicas):
            broken.add("directories_misaligned")
        if broken or self.broken:
            for kind in _INVARIANTS:
                if kind in broken and kind not in self.broken:
                    self._violation(offset, timestamp, kind, _describe(kind, state))
            self.broken = frozenset(broken)
        replication_factor = len(replicas) - sum(1 for b in replicas if b in adding) if adding else len(replicas)
        under = len(isr) < replication_factor  # Kafka's rule: copies being added are not missing yet
        offline = leader == NO_LEADER
        if under != self.under_replicated or offline != self.offline:
            self.out.count_urp(offset, timestamp, under - self.under_replicated, offline - self.offline)
            self.under_replicated, self.offline = under, offline

    def _violation(self, offset: int, timestamp: int, kind: str, detail: str) -> None:
        if self.out.window.contains(offset, timestamp):
            self.out.rows["violations"].append(violation(offset, timestamp, kind, topic=self.topic,
                                                         topic_id=self.topic_id_text, partition=self.partition,
                                                         detail=detail))

    def delete(self, offset: int, timestamp: int) -> None:
        """The topic was deleted at ``offset``."""
        if self.state is None:
            return
        if self.reassignment is not None:
            self._close(offset, timestamp, "deleted", None)
        if self.under_replicated or self.offline:
            self.out.count_urp(offset, timestamp, -self.under_replicated, -self.offline)
        self.state = None
        self.broken = frozenset()
        self.under_replicated = self.offline = False
        self.settled_rf = None

    def finish(self) -> None:
        """The end of the log: a reassignment still in flight is reported as running."""
        if self.reassignment is not None:
            self._close(None, None, "running", None)


def replay_partition(key: bytes, raws: Iterable[Raw], topics: Topics, out: Output) -> PartitionReplay:
    """Replay one partition's raw records (in log order) apart from the others, its topic's deletion
    taking effect at its offset; the single-process run gets the same result by interleaving."""
    replay = PartitionReplay.for_key(key, out)
    deletion = topics.deletion(replay.topic_id)
    for raw in raws:
        if deletion is not None and raw[0] > deletion[0]:
            replay.delete(*deletion)
            deletion = None
        replay.feed(raw, topics)
    if deletion is not None:
        replay.delete(*deletion)
    replay.finish()
    return replay


def _directories(directories: tuple[uuid.UUID, ...] | None, replicas: Brokers) -> tuple[uuid.UUID, ...]:
    if not directories or all(d == MIGRATING for d in directories):
        return (MIGRATING,) * len(replicas)
    return directories


def _texts(directories: tuple[uuid.UUID, ...], recorded: tuple[uuid.UUID, ...] | None,
           recorded_texts: tuple[str, ...] | None) -> tuple[str, ...]:
    """The directories as text: the record's own texts when they are the record's directories."""
    if directories is recorded and recorded_texts is not None:
        return recorded_texts
    return tuple(map(str, directories))


def _describe(kind: str, state: PartitionState) -> str:
    replicas, isr, removing, adding = list(state.replicas), list(state.isr), list(state.removing), list(state.adding)
    leader = state.leader
    subsets = {"isr_not_in_replicas": ("ISR", isr), "adding_not_in_replicas": ("adding", adding),
               "removing_not_in_replicas": ("removing", removing)}
    if kind in subsets:
        label, values = subsets[kind]
        return f"{label} {values} has {[b for b in values if b not in replicas]} outside replicas {replicas}"
    if kind == "duplicate_replicas":
        return f"replicas {replicas} name a broker twice"
    if kind == "leader_not_in_isr":
        return f"leader {leader} is not in ISR {isr}"
    if kind == "adding_removing_overlap":
        return f"{[b for b in adding if b in removing]} both adding {adding} and removing {removing}"
    return f"{len(state.directories)} directories for {len(replicas)} replicas {replicas}"
