"""Build PartitionChangeRecords the way Kafka's controller does (``PartitionChangeBuilder``).

One pure function, ``build_change``: given a partition's current state, the wanted targets (ISR,
replicas, adding/removing, directories) and the kind of election, it first tries to complete an
in-flight reassignment, then elects a leader, then writes only the fields that change. It returns None
when nothing would change (Kafka never writes a no-op change record).

Rules (reference §2.4, §2.10):
* completion (Kafka 4.3, KAFKA-19975): with AR/RR non-empty, I' = ISR - RR and R' = R - RR; complete
  when I' and R' are non-empty (I' may be empty only when nothing is being removed), every adding replica
  is in I', and, when the replication factor shrinks (|AR| < |RR|), every replica of R' is in I';
* a leader is acceptable when its broker is registered, unfenced, not shutting down and its directory
  for this partition is online, judged on the directories before the change as Kafka's LeaderAcceptor
  does (so a record that only moves a replica to an offline directory keeps its leader: the move away
  is a second record); the current leader stays if acceptable and in the ISR;
* election (ONLINE/UNCLEAN): keep the leader if it can lead and is in the target ISR, else the first
  such replica in replica order; PREFERRED tries the first replica first; UNCLEAN then falls back to
  the first acceptable replica, whose ISR becomes just itself, RECOVERING;
* the ISR never becomes empty: when its last member must go, it stays and the partition goes leaderless
  (Kafka without ELR);
* leader epoch: +1 when the leader changes, and also when a replica leaves the replica set (forced by
  writing the current leader, even -1); the partition epoch goes up on every record (applied on replay).
"""
from __future__ import annotations

import uuid
from enum import Enum

from kraftwire.codec import records as rec
from kraftwire.codec.constants import LEADER_RECOVERING, LEADER_UNCHANGED, MIGRATING, NO_LEADER, UNASSIGNED

from kraftwire.server.metadata.image import BrokerState, PartitionState

Brokers = dict[int, BrokerState]



class Election(Enum):
    ONLINE = "online"  # keep the leader if it can stay, else the first acceptable in-sync replica
    PREFERRED = "preferred"  # move leadership to the first replica if it is acceptable and in sync
    UNCLEAN = "unclean"  # like ONLINE, falling back to any acceptable replica when none is in sync


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


def _without(values, removed) -> tuple[int, ...]:
    return tuple(v for v in values if v not in removed)


def try_complete_reassignment(replicas, isr, adding, removing):
    """Kafka 4.3's completion rule; returns (replicas, isr) after completion, or None if not yet."""
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
    if len(adding) < len(removing) and any(r not in new_isr for r in new_replicas):
        return None
    return new_replicas, new_isr


def build_change(brokers: Brokers, topic_id: uuid.UUID, partition_id: int, state: PartitionState, *,
                 isr=None, replicas=None, adding=None, removing=None, directories=None,
                 leader_recovery_state: int | None = None, election: Election = Election.ONLINE,
                 ineligible: frozenset[int] = frozenset()):
    """The PartitionChangeRecord taking ``state`` to the targets, or None if nothing changes.

    ``brokers`` are the registrations to judge leaders by (usually ``image.brokers``; a decision that
    also changes a registration passes the registrations as they will be).
    ``ineligible`` lists brokers that must not lead (and leave the ISR), e.g. one being fenced.
    ``leader_recovery_state`` is the wanted state (AlterPartition's); None keeps the current one."""
    target_replicas = state.replicas if replicas is None else tuple(replicas)
    target_isr = state.isr if isr is None else tuple(isr)
    target_adding = state.adding if adding is None else tuple(adding)
    target_removing = state.removing if removing is None else tuple(removing)
    if directories is not None:
        target_dirs = tuple(directories)
    else:
        target_dirs = state.directories if replicas is None else _realign_directories(brokers, state, target_replicas)
    if ineligible:
        target_isr = _without(target_isr, ineligible)

    completed = try_complete_reassignment(target_replicas, target_isr, target_adding, target_removing)
    if completed is not None:
        kept = completed[0]
        target_dirs = tuple(target_dirs[target_replicas.index(b)] for b in kept)
        target_replicas, target_isr = completed
        target_adding = target_removing = ()

    def can_lead(broker_id: int) -> bool:
        if broker_id in ineligible:
            return False
        if broker_id in state.replicas:
            return acceptable_leader(brokers, broker_id, state.directory_of(broker_id))
        return acceptable_leader(brokers, broker_id, target_dirs[target_replicas.index(broker_id)])

    def valid_leader(broker_id: int) -> bool:
        return broker_id in target_isr and broker_id in target_replicas and can_lead(broker_id)

    unclean = False
    if election is Election.PREFERRED and valid_leader(target_replicas[0]):
        leader = target_replicas[0]
    elif valid_leader(state.leader):
        leader = state.leader
    else:
        in_sync = [b for b in target_replicas if valid_leader(b)]
        alive = [b for b in target_replicas if can_lead(b)] if election is Election.UNCLEAN else []
        leader, unclean = (in_sync[0], False) if in_sync else (alive[0], True) if alive else (NO_LEADER, False)

    changes = {}
    if leader != state.leader:
        changes["leader"] = leader
        if unclean:  # nobody in sync could lead: the new leader's log becomes the truth
            changes["isr"] = (leader,)
            if state.leader_recovery_state != LEADER_RECOVERING:
                changes["leader_recovery_state"] = LEADER_RECOVERING
    elif any(b not in target_replicas for b in state.replicas):
        changes["leader"] = leader  # a replica left: force a leader-epoch bump (even with no leader)
    if "isr" not in changes and target_isr and target_isr != state.isr:
        changes["isr"] = target_isr  # without ELR an ISR is never emptied: it keeps its last member
    if target_replicas:
        if target_dirs != state.directories:
            changes["directories"] = target_dirs
        if target_replicas != state.replicas:
            changes["replicas"] = target_replicas
    if target_removing != state.removing:
        changes["removing_replicas"] = target_removing
    if target_adding != state.adding:
        changes["adding_replicas"] = target_adding
    if leader_recovery_state is not None and leader_recovery_state != state.leader_recovery_state:
        changes["leader_recovery_state"] = leader_recovery_state
    if not changes:
        return None
    changes.setdefault("leader", LEADER_UNCHANGED)
    return rec.PartitionChangeRecord(partition_id=partition_id, topic_id=topic_id, **changes)


def _realign_directories(brokers: Brokers, state: PartitionState, replicas) -> tuple[uuid.UUID, ...]:
    """Existing replicas keep their directory wherever they move; new ones get the default."""
    current = dict(zip(state.replicas, state.directories))
    return tuple(current[b] if b in current else default_directory(brokers, b) for b in replicas)
