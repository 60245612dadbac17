"""Build PartitionChangeRecords the way Kafka's controller does (``PartitionChangeBuilder``).

One pure function, ``build_change``: given a partition's current state, the wanted targets (ISR,
replicas, adding/removing, directories) and the kind of election, it first tries to complete an
in-flight reassignment, then elects a leader, then writes only the fields that change. It returns None
when nothing would change (Kafka never writes a no-op change record).

Rules (reference §2.4, §2.10), with what the cluster's metadata.version turns on (``ChangeRules``):
* completion: with AR/RR non-empty, I' = ISR - RR and R' = R - RR; complete when I' and R' are
  non-empty (I' may be empty only when nothing is being removed) and every adding replica is in I'.
  Kafka 4.3 (KAFKA-19975) asks more only when the replication factor shrinks (|AR| < |RR|): every
  replica of R' in I'; Kafka before 4.3 asks that always. Kafka ships the change with its 4.3 release,
  not behind a metadata.version; kraftwire runs a cluster at a level as the Kafka release that added
  the level, so levels below 4.3-IV0 complete by the old rule;
* a leader is acceptable when its broker is registered, unfenced, not shutting down and its directory
  for this partition is online, judged on the directories before the change as Kafka's LeaderAcceptor
  does (so a record that only moves a replica to an offline directory keeps its leader: the move away
  is a second record); the current leader stays if acceptable and in the ISR;
* election (ONLINE/UNCLEAN): keep the leader if it can lead and is in the target ISR, else the first
  such replica in replica order; PREFERRED tries the first replica first; UNCLEAN then falls back to
  the first acceptable replica, whose ISR becomes just itself, RECOVERING;
* without eligible leader replicas the ISR never becomes empty: when its last member must go, it stays
  and the partition goes leaderless;
* with eligible leader replicas (KIP-966, ``eligible.leader.replicas.version`` 1, on from 4.1-IV0):
  an ISR below the topic's min.insync.replicas (capped at the replication factor) moves the members
  it loses into the ELR (less any replica that shut down uncleanly), and an ISR back at min ISR
  empties the ELR; the ISR may become empty; when it is, an acceptable ELR member may be elected and
  becomes the ISR; a partition that goes leaderless for the first time remembers its last leader in
  LastKnownElr, which is elected (as an unclean election: ISR itself, RECOVERING) when ISR and ELR are
  both empty and it can lead again, and cleared once the partition has a leader; an unclean election
  empties the ELR;
* leader epoch: +1 when the leader changes, and also when a replica leaves the replica set (forced by
  writing the current leader, even -1); the partition epoch goes up on every record (applied on replay).
"""
from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Iterable, Sequence
from enum import Enum
from typing import NamedTuple, cast

from kraftwire.codec import records as rec
from kraftwire.codec.constants import LEADER_RECOVERING, LEADER_UNCHANGED, MIGRATING, NO_LEADER, UNASSIGNED

from kraftwire.server.metadata.configs import MIN_INSYNC_REPLICAS, topic_value
from kraftwire.server.metadata.image import BrokerState, MetadataImage, PartitionState
from kraftwire.server.metadata.record_versions import ISR_SHRINK_BUMP_BELOW, RELAXED_COMPLETION_LEVEL, elr_enabled

Brokers = dict[int, BrokerState]


class Election(Enum):
    ONLINE = "online"  # keep the leader if it can stay, else the first acceptable in-sync replica
    PREFERRED = "preferred"  # move leadership to the first replica if it is acceptable and in sync
    UNCLEAN = "unclean"  # like ONLINE, falling back to any acceptable replica when none is in sync


class ChangeRules(NamedTuple):
    """What the cluster's metadata.version and features turn on for one topic's partition changes."""

    relaxed_completion: bool = True  # KAFKA-19975 (Kafka 4.3)
    elr: bool = False  # eligible leader replicas (KIP-966)
    min_isr: int = 1  # the topic's effective min.insync.replicas, which the ELR follows
    isr_shrink_bump: bool = False  # below 3.6-IV0: a shrinking ISR bumps the leader epoch (KAFKA-15021)


def rules_for(image: MetadataImage, topic_name: str) -> ChangeRules:
    """The rules at the image's metadata.version for ``topic_name``; min ISR as Kafka's
    getTopicEffectiveMinIsr: the topic's min.insync.replicas, else the cluster default, else 1,
    capped at the replication factor of the topic's partition 0."""
    elr = elr_enabled(image.features)
    min_isr = 1
    if elr:
        # an INT config, which the catalogue parses to int (its values are typed ``object``)
        min_isr = cast(int, topic_value(image.topic_configs(topic_name), image.broker_configs(""), MIN_INSYNC_REPLICAS))
        topic = image.topic(topic_name)
        first = topic.partitions.get(0) if topic is not None else None
        if first is not None:
            min_isr = min(min_isr, len(first.replicas))
    level = image.metadata_version_level
    return ChangeRules(relaxed_completion=level >= RELAXED_COMPLETION_LEVEL, elr=elr, min_isr=min_isr,
                       isr_shrink_bump=level < ISR_SHRINK_BUMP_BELOW)


def default_directory(brokers: Brokers, broker_id: int) -> uuid.UUID:
    """Where a new replica goes (ClusterControlManager.defaultDir): a single-directory broker's one
    directory; MIGRATING for a broker registered without directories; otherwise UNASSIGNED, and the
    broker picks and reports with AssignReplicasToDirs."""
    broker = brokers.get(broker_id)
    if broker is None:
        return UNASSIGNED
    if not broker.log_dirs:
        return MIGRATING
    if len(broker.log_dirs) == 1:
        return broker.log_dirs[0]
    return UNASSIGNED


def acceptable_leader(brokers: Brokers, broker_id: int, directory: uuid.UUID) -> bool:
    broker = brokers.get(broker_id)
    if broker is None or not broker.active:
        return False
    return broker.has_online_dir(directory)


def _without(values: Iterable[int], removed: Collection[int]) -> tuple[int, ...]:
    return tuple(v for v in values if v not in removed)


def try_complete_reassignment(replicas: Sequence[int], isr: Sequence[int], adding: Sequence[int],
                              removing: Sequence[int], relaxed: bool = True
                              ) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The completion rule (Kafka 4.3's when ``relaxed``, else the earlier one); returns (replicas,
    isr) after completion, or None if not yet."""
    if not adding and not removing:
        return None
    new_isr = _without(isr, removing)
    if removing and not new_isr:
        return None
    new_replicas = _without(replicas, removing)
    if not new_replicas:
        return None
    if any(a not in new_isr for a in adding):
        return None
    if (not relaxed or len(adding) < len(removing)) and any(r not in new_isr for r in new_replicas):
        return None
    return new_replicas, new_isr


class _Target(NamedTuple):
    """Where a change takes a partition: its lists after the request, then after completion."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]
    directories: tuple[uuid.UUID, ...]


def build_change(brokers: Brokers, topic_id: uuid.UUID, partition_id: int, state: PartitionState, *,
                 rules: ChangeRules, isr: Iterable[int] | None = None, replicas: Iterable[int] | None = None,
                 adding: Iterable[int] | None = None, removing: Iterable[int] | None = None,
                 directories: Iterable[uuid.UUID] | None = None, leader_recovery_state: int | None = None,
                 election: Election = Election.ONLINE, ineligible: frozenset[int] = frozenset(),
                 unclean_shutdown: frozenset[int] = frozenset()) -> rec.PartitionChangeRecord | None:
    """The PartitionChangeRecord taking ``state`` to the targets, or None if nothing changes.

    ``brokers`` are the registrations to judge leaders by (usually ``image.brokers``; a decision that
    also changes a registration passes the registrations as they will be); ``rules`` what the
    metadata.version turns on (``rules_for``).
    ``ineligible`` lists brokers that must not lead (and leave the ISR), e.g. one being fenced;
    ``unclean_shutdown`` brokers that restarted without a clean shutdown: they also leave the ELR.
    ``leader_recovery_state`` is the wanted state (AlterPartition's); None keeps the current one."""
    excluded = ineligible | unclean_shutdown
    target = _requested_target(brokers, state, isr, replicas, adding, removing, directories, excluded)
    target = _completed(target, rules)
    target_elr = _eligible_leader_replicas(state, target.isr, rules, unclean_shutdown)
    judge = _LeaderJudge(brokers, state, target, target_elr, excluded)
    leader, unclean = _elect(state, target.replicas, target.isr, target_elr, rules, election, judge.valid_leader,
                             judge.can_lead)
    changes: dict[str, object] = {}
    target_isr, target_elr = _leader_changes(state, target, target_elr, leader, unclean, changes)
    _isr_and_elr_changes(state, target_isr, target_elr, rules, changes)
    _assignment_changes(state, target, leader_recovery_state, changes)
    if rules.isr_shrink_bump and "leader" not in changes and "isr" in changes \
            and not set(state.isr) <= set(cast(tuple[int, ...], changes["isr"])):
        changes["leader"] = state.leader  # Kafka's triggerLeaderEpochBumpForIsrShrinkIfNeeded
    if not changes:
        return None
    changes.setdefault("leader", LEADER_UNCHANGED)
    return rec.PartitionChangeRecord(partition_id=partition_id, topic_id=topic_id, **changes)


def _requested_target(brokers: Brokers, state: PartitionState, isr: Iterable[int] | None,
                      replicas: Iterable[int] | None, adding: Iterable[int] | None, removing: Iterable[int] | None,
                      directories: Iterable[uuid.UUID] | None, excluded: frozenset[int]) -> _Target:
    """The lists the caller asks for (the current ones where it names none), less the excluded brokers
    in the ISR; a new replica set realigns the directories unless the caller gives them."""
    target_replicas = state.replicas if replicas is None else tuple(replicas)
    target_isr = state.isr if isr is None else tuple(isr)
    if directories is not None:
        target_dirs = tuple(directories)
    else:
        target_dirs = state.directories if replicas is None else _realign_directories(brokers, state, target_replicas)
    if excluded:
        target_isr = _without(target_isr, excluded)
    return _Target(target_replicas, target_isr, state.adding if adding is None else tuple(adding),
                   state.removing if removing is None else tuple(removing), target_dirs)


def _completed(target: _Target, rules: ChangeRules) -> _Target:
    """``target`` with its reassignment completed where the completion rule allows it."""
    completed = try_complete_reassignment(target.replicas, target.isr, target.adding, target.removing,
                                          rules.relaxed_completion)
    if completed is None:
        return target
    kept, kept_isr = completed
    directories = tuple(target.directories[target.replicas.index(b)] for b in kept)
    return _Target(kept, kept_isr, (), (), directories)


class _LeaderJudge:
    """Who may lead the partition after the change (Kafka's LeaderAcceptor, judged on the directories
    before the change for the current replicas)."""

    __slots__ = ("brokers", "state", "target", "elr", "excluded")

    def __init__(self, brokers: Brokers, state: PartitionState, target: _Target, elr: tuple[int, ...],
                 excluded: frozenset[int]) -> None:
        self.brokers, self.state, self.target, self.elr, self.excluded = brokers, state, target, elr, excluded

    def can_lead(self, broker_id: int) -> bool:
        if broker_id in self.excluded:
            return False
        if broker_id in self.state.replicas:
            return acceptable_leader(self.brokers, broker_id, self.state.directory_of(broker_id))
        replicas = self.target.replicas
        if broker_id not in replicas:
            return False
        return acceptable_leader(self.brokers, broker_id, self.target.directories[replicas.index(broker_id)])

    def valid_leader(self, broker_id: int) -> bool:
        """In the target ISR, or in the ELR when the ISR is empty, and able to lead."""
        isr = self.target.isr
        eligible = broker_id in isr or (not isr and broker_id in self.elr)
        return eligible and broker_id in self.target.replicas and self.can_lead(broker_id)


def _leader_changes(state: PartitionState, target: _Target, target_elr: tuple[int, ...], leader: int,
                    unclean: bool, changes: dict[str, object]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Write the leader (and what an unclean election or one from the ELR implies) into ``changes``;
    returns the (ISR, ELR) targets after the election."""
    target_isr = target.isr
    if leader != state.leader:
        changes["leader"] = leader
        if leader in target_elr:  # elected from the ELR: it is the ISR now
            target_isr = (leader,)
            target_elr = tuple(b for b in target_elr if b != leader)
        if unclean:  # nobody in sync could lead: the new leader's log becomes the truth
            changes["isr"] = (leader,)
            if state.leader_recovery_state != LEADER_RECOVERING:
                changes["leader_recovery_state"] = LEADER_RECOVERING
    elif any(b not in target.replicas for b in state.replicas):
        changes["leader"] = leader  # a replica left: force a leader-epoch bump (even with no leader)
    return target_isr, target_elr


def _isr_and_elr_changes(state: PartitionState, target_isr: tuple[int, ...], target_elr: tuple[int, ...],
                         rules: ChangeRules, changes: dict[str, object]) -> None:
    """Write the ISR, the ELR and the last known ELR where they change into ``changes``."""
    if "isr" in changes or not rules.elr:
        target_elr = ()  # an unclean election, or no ELR, leaves no eligible leader replicas
    if target_elr != state.elr:
        changes["eligible_leader_replicas"] = target_elr
    if "isr" not in changes and (target_isr or rules.elr) and target_isr != state.isr:
        changes["isr"] = target_isr  # without ELR an ISR is never emptied: it keeps its last member
    if rules.elr:
        written_leader = changes.get("leader", LEADER_UNCHANGED)
        if written_leader == NO_LEADER and not state.last_known_elr:
            changes["last_known_elr"] = (state.leader,)  # leaderless for the first time: remember who led
        elif isinstance(written_leader, int) and written_leader >= 0 and state.last_known_elr:
            changes["last_known_elr"] = ()


def _assignment_changes(state: PartitionState, target: _Target, leader_recovery_state: int | None,
                        changes: dict[str, object]) -> None:
    """Write the replicas, their directories, the adding and removing replicas and the leader recovery
    state where they change into ``changes``."""
    if target.replicas:
        if target.directories != state.directories:
            changes["directories"] = target.directories
        if target.replicas != state.replicas:
            changes["replicas"] = target.replicas
    if target.removing != state.removing:
        changes["removing_replicas"] = target.removing
    if target.adding != state.adding:
        changes["adding_replicas"] = target.adding
    if leader_recovery_state is not None and leader_recovery_state != state.leader_recovery_state:
        changes["leader_recovery_state"] = leader_recovery_state


def _eligible_leader_replicas(state: PartitionState, target_isr: tuple[int, ...], rules: ChangeRules,
                              unclean_shutdown: frozenset[int]) -> tuple[int, ...]:
    """The ELR before the election (Kafka's maybePopulateTargetElr): empty once the ISR reaches min
    ISR; below it, the current ISR and ELR less the target ISR and the uncleanly shut down, ascending."""
    if not rules.elr:
        return state.elr
    if len(target_isr) >= rules.min_isr:
        return ()
    return tuple(sorted(b for b in set(state.elr) | set(state.isr)
                        if b not in target_isr and b not in unclean_shutdown))


def _elect(state: PartitionState, target_replicas: tuple[int, ...], target_isr: tuple[int, ...],
           target_elr: tuple[int, ...], rules: ChangeRules, election: Election, valid_leader: Callable[[int], bool],
           can_lead: Callable[[int], bool]) -> tuple[int, bool]:
    """(leader, unclean): the current leader if still valid, else the first valid replica in replica
    order (the first replica first for PREFERRED), else the last known leader when ISR and ELR are
    empty, else for UNCLEAN the first replica able to lead, else no leader."""
    if election is Election.PREFERRED and valid_leader(target_replicas[0]):
        return target_replicas[0], False
    if valid_leader(state.leader):
        return state.leader, False
    in_sync = next((b for b in target_replicas if valid_leader(b)), None)
    if in_sync is not None:
        return in_sync, False
    if (rules.elr and not target_isr and not target_elr and len(state.last_known_elr) == 1
            and can_lead(state.last_known_elr[0])):
        return state.last_known_elr[0], True
    if election is Election.UNCLEAN:
        alive = next((b for b in target_replicas if can_lead(b)), None)
        if alive is not None:
            return alive, True
    return NO_LEADER, False


def _realign_directories(brokers: Brokers, state: PartitionState, replicas: Iterable[int]) -> tuple[uuid.UUID, ...]:
    """Existing replicas keep their directory wherever they move; new ones get the default."""
    current = dict(zip(state.replicas, state.directories))
    return tuple(current[b] if b in current else default_directory(brokers, b) for b in replicas)
