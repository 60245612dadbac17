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

from kraftwire.codec import MalformedError
from kraftwire.codec import records as rec
from kraftwire.codec.constants import LEADER_RECOVERY_UNCHANGED, LEADER_UNCHANGED, MIGRATING, NO_LEADER

from .rows import Output, Raw, decode, partition_fields_json, record_row, undecodable, violation



class Topics:
    """Topic id -> [name, created offset, deleted offset, deleted timestamp]; what a partition's replay
    needs from the global one. Picklable, to broadcast."""

    def __init__(self):
        self.by_id: dict[uuid.UUID, list] = {}

    def name_at(self, topic_id: uuid.UUID, offset: int) -> str | None:
        """The topic's name if it exists at ``offset``."""
        topic = self.by_id.get(topic_id)
        if topic is None or offset < topic[1] or (topic[2] is not None and offset >= topic[2]):
            return None
        return topic[0]

    def deletion(self, topic_id: uuid.UUID) -> tuple[int, int] | None:
        topic = self.by_id.get(topic_id)
        return None if topic is None or topic[2] is None else (topic[2], topic[3])



_INVARIANTS = ("duplicate_replicas", "isr_not_in_replicas", "leader_not_in_isr", "adding_not_in_replicas",
               "removing_not_in_replicas", "adding_removing_overlap", "directories_misaligned")


class PartitionReplay:
    """One partition's history. ``state`` is None before its PartitionRecord and after its topic is
    deleted; otherwise (replicas, isr, removing, adding, leader, leader recovery state, leader epoch,
    partition epoch, directories, directories as text)."""

    __slots__ = ("topic_id", "partition", "topic_id_text", "out", "state", "topic", "reassignment",
                 "settled_rf", "broken", "under_replicated", "offline")

    @classmethod
    def for_key(cls, key: bytes, out: Output) -> "PartitionReplay":
        """The replay for a reader key (PartitionId int32 + TopicId bytes)."""
        return cls(uuid.UUID(bytes=key[4:20]), int.from_bytes(key[:4], "big", signed=True), out)

    def __init__(self, topic_id: uuid.UUID, partition: int, out: Output):
        self.topic_id = topic_id
        self.partition = partition
        self.topic_id_text = str(topic_id)
        self.out = out
        self.state = None
        self.topic = None
        self.reassignment = None  # the open reassignment row, as a list
        self.settled_rf = None  # replica count when no reassignment was in flight
        self.broken: frozenset[str] = frozenset()  # invariants currently violated
        self.under_replicated = self.offline = False

    def feed(self, raw: Raw, topics: Topics) -> None:
        out = self.out
        try:
            record, version = decode(raw)
        except MalformedError as exc:
            undecodable(out, raw, exc, topic_id=self.topic_id_text, partition=self.partition)
            return
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
        if type(record) is rec.PartitionRecord:
            self._create(offset, timestamp, record, texts)
        elif self.state is None:
            self._violation(offset, timestamp, "unknown_partition",
                            "PartitionChangeRecord for a partition that does not exist")
            return
        else:
            self._change(offset, timestamp, record, texts)
        if in_window:
            s = self.state
            out.rows["partition_states"].append((
                offset, timestamp, name, self.topic_id_text, self.partition, type(record).__name__, s[0], s[1], s[4],
                s[6], s[7], s[3], s[2], s[9], s[5]))

    def _create(self, offset, timestamp, r, texts) -> None:
        old = self.state
        directories = _directories(r.directories, r.replicas)
        state = (r.replicas, r.isr, r.removing_replicas, r.adding_replicas, r.leader, r.leader_recovery_state,
                 r.leader_epoch, r.partition_epoch, directories,
                 texts if directories is r.directories else tuple(map(str, directories)))
        if old is not None and (state[6] < old[6] or state[7] < old[7]):
            self._violation(offset, timestamp, "epoch_went_back", (
                f"PartitionRecord sets leader epoch {old[6]} -> {state[6]}, partition epoch {old[7]} -> {state[7]}"))
        if self.reassignment is not None:
            self._close(offset, timestamp, "superseded", None)
        self.state = state
        if r.adding_replicas or r.removing_replicas:
            self._open(offset, timestamp, state, [b for b in r.replicas if b not in r.adding_replicas])
        else:
            self.settled_rf = len(r.replicas)
        self._check(offset, timestamp, state)

    def _change(self, offset, timestamp, r, texts) -> None:
        old = self.state
        replicas = old[0] if r.replicas is None else r.replicas
        if r.directories is None and r.replicas is None:
            directories, texts = old[8], old[9]
        else:
            directories = _directories(old[8] if r.directories is None else r.directories, replicas)
            if directories is old[8]:
                texts = old[9]
            elif directories is not r.directories:
                texts = tuple(map(str, directories))
        leader, leader_epoch = (old[4], old[6]) if r.leader == LEADER_UNCHANGED else (r.leader, old[6] + 1)
        state = (replicas,
                 old[1] if r.isr is None else r.isr,
                 old[2] if r.removing_replicas is None else r.removing_replicas,
                 old[3] if r.adding_replicas is None else r.adding_replicas,
                 leader,
                 old[5] if r.leader_recovery_state == LEADER_RECOVERY_UNCHANGED else r.leader_recovery_state,
                 leader_epoch, old[7] + 1, directories, texts)
        self.state = state
        was, now = bool(old[2] or old[3]), bool(state[2] or state[3])
        if was or now or replicas != old[0]:
            self._follow_reassignment(offset, timestamp, old, state, was, now)
        self._check(offset, timestamp, state)

    # --- reassignments -----------------------------------------------------------------------------

    def _follow_reassignment(self, offset, timestamp, old, new, was, now) -> None:
        if not was:
            self._open(offset, timestamp, new, old[0])
            if not now:
                self._end(offset, timestamp, new, "completed")
            return
        if now:
            if (new[0], new[2], new[3]) != (old[0], old[2], old[3]):
                self._close(offset, timestamp, "superseded", None)
                self._open(offset, timestamp, new, [b for b in old[0] if b not in old[3]])
            return
        # Kafka completes to R - RR and reverts to R - AR, both of the state just before
        completed = {b for b in old[0] if b not in old[2]}
        reverted = {b for b in old[0] if b not in old[3]}
        final = set(new[0])
        if completed == reverted or final == reverted:
            self._end(offset, timestamp, new, "cancelled")
        elif final == completed:
            self._end(offset, timestamp, new, "completed")
        else:
            self._close(offset, timestamp, "superseded", None)
            self._open(offset, timestamp, new, [b for b in old[0] if b not in old[3]])
            self._end(offset, timestamp, new, "completed")

    def _open(self, offset, timestamp, state, original) -> None:
        replicas, removing = state[0], state[2]
        target = tuple(b for b in replicas if b not in removing)
        original = tuple(original)
        adding = state[3] if state[3] else tuple(b for b in target if b not in original)
        removing = removing if removing else tuple(b for b in original if b not in target)
        self.reassignment = [self.topic, self.topic_id_text, self.partition, offset, timestamp, None, None, None,
                             original, target, None, adding, removing, len(original), None, None]

    def _end(self, offset, timestamp, new, outcome) -> None:
        """Close the open reassignment as completed or cancelled at a record that settles the partition."""
        ra = self.reassignment
        if outcome == "completed":
            missing = [b for b in ra[11] if b not in new[1]]
            if missing:
                self._violation(offset, timestamp, "completed_before_in_sync", (
                    f"reassignment to {list(ra[9])} completed while adding replicas {missing} were not in the "
                    f"ISR {list(new[1])}"))
        self._close(offset, timestamp, outcome, new[0])
        rf = len(new[0])
        if self.settled_rf is not None and rf != self.settled_rf:
            self.out.rows["rf_changes"].append((
                self.topic, self.topic_id_text, self.partition, offset, timestamp, self.settled_rf, rf, ra[8],
                tuple(new[0]), ra[3], outcome))
        self.settled_rf = rf

    def _close(self, offset, timestamp, outcome, final) -> None:
        ra = self.reassignment
        ra[5], ra[6], ra[7] = offset, timestamp, outcome
        if final is not None:
            ra[10], ra[14] = tuple(final), len(final)
        if outcome != "running" and timestamp is not None and ra[4] is not None:
            ra[15] = timestamp - ra[4]
        if outcome == "running":
            ra[5] = ra[6] = None
        self.out.rows["reassignments"].append(tuple(ra))
        self.reassignment = None

    # --- invariants and counts ---------------------------------------------------------------------

    def _check(self, offset, timestamp, state) -> None:
        replicas, isr, removing, adding, leader = state[0], state[1], state[2], state[3], state[4]
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
        if len(state[8]) != len(replicas):
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

    def _violation(self, offset, timestamp, kind, detail) -> None:
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


def replay_partition(key: bytes, raws, topics: Topics, out: Output) -> PartitionReplay:
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


def _directories(directories, replicas) -> tuple:
    if not directories or all(d == MIGRATING for d in directories):
        return (MIGRATING,) * len(replicas)
    return directories


def _describe(kind: str, state) -> str:
    replicas, isr, removing, adding, leader = (list(state[0]), list(state[1]), list(state[2]), list(state[3]),
                                               state[4])
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
    return f"{len(state[8])} directories for {len(replicas)} replicas {replicas}"
