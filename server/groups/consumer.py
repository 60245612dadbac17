"""Consumer groups of the KIP-848 protocol (Kafka's GroupMetadataManager.consumerGroupHeartbeat and
ConsumerGroupDescribe), pure.

A group has an epoch, bumped when a member joins, leaves or changes its subscription, or when the
subscribed topics' partitions change (``metadata_hash``); a target assignment computed by the
server-side assignor (``uniform``, the default, or ``range``) at that epoch (the target assignment
epoch); and each member's current assignment and member epoch. A member moves towards its target in
Kafka's order (CurrentAssignmentBuilder): the partitions it must give up are first revoked (state
UNREVOKED_PARTITIONS, its epoch unchanged) until a heartbeat no longer lists them as owned; then its
epoch becomes the target's and it gets the target's partitions no other member still holds (those it
waits for: UNRELEASED_PARTITIONS, handed over on a later heartbeat). Every change is written as the
records Kafka writes (``consumer_records``) and read back by ``replay`` on load. Sessions expire after
group.consumer.session.timeout.ms without a heartbeat; a revocation not acknowledged within the
member's rebalance timeout fences the member.
"""
from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from kraftwire.codec import ErrorCode
from kraftwire.codec import records as rec
from kraftwire.codec.messages import (ConsumerGroupDescribeResponse, ConsumerGroupHeartbeatRequest,
                                      ConsumerGroupHeartbeatResponse)

from . import consumer_records as cr
from .consumer_records import Assignment, Record

STABLE, UNREVOKED_PARTITIONS, UNRELEASED_PARTITIONS = 0, 1, 2  # Kafka's MemberState
LEAVE_EPOCH, STATIC_LEAVE_EPOCH = -1, -2
ASSIGNORS = ("uniform", "range")  # group.consumer.assignors' default; the first is the default assignor
TopicLookup = Callable[[str], "tuple[uuid.UUID, int] | None"]  # a topic's id and partition count
NameLookup = Callable[[uuid.UUID], "str | None"]


class GroupState(Enum):
    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass(frozen=True)
class ConsumerLimits:
    heartbeat_interval_ms: int = 5000  # group.consumer.heartbeat.interval.ms
    session_timeout_ms: int = 45000  # group.consumer.session.timeout.ms
    max_size: int = 2_147_483_647  # group.consumer.max.size


@dataclass(eq=False)
class ConsumerMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed: tuple[str, ...] = ()
    rebalance_timeout_ms: int = 300_000
    server_assignor: str | None = None
    epoch: int = 0
    previous_epoch: int = 0
    state: int = STABLE
    assigned: Assignment = field(default_factory=dict)
    pending: Assignment = field(default_factory=dict)  # being revoked
    session_deadline_ms: int = 0
    revocation_deadline_ms: int = 0

    def metadata_value(self) -> rec.ConsumerGroupMemberMetadataValue:
        return rec.ConsumerGroupMemberMetadataValue(
            instance_id=self.instance_id, rack_id=self.rack_id, client_id=self.client_id, client_host=self.client_host,
            subscribed_topic_names=list(self.subscribed), subscribed_topic_regex=None,
            rebalance_timeout_ms=self.rebalance_timeout_ms, server_assignor=self.server_assignor)

    def assignment_state(self) -> tuple[int, int, int, Assignment, Assignment]:
        return self.epoch, self.previous_epoch, self.state, self.assigned, self.pending


@dataclass(eq=False)
class ConsumerGroup:
    group_id: str
    epoch: int = 0
    metadata_hash: int = 0
    assignment_epoch: int = 0
    members: dict[str, ConsumerMember] = field(default_factory=dict)
    target: dict[str, Assignment] = field(default_factory=dict)

    @property
    def state(self) -> GroupState:
        if not self.members:
            return GroupState.EMPTY
        if self.assignment_epoch < self.epoch:
            return GroupState.ASSIGNING
        if any(m.epoch != self.assignment_epoch or m.state != STABLE for m in self.members.values()):
            return GroupState.RECONCILING
        return GroupState.STABLE

    def assignor(self) -> str:
        """The assignor most members name, else the default (Kafka's preferredServerAssignor)."""
        votes: dict[str, int] = {}
        for m in self.members.values():
            if m.server_assignor:
                votes[m.server_assignor] = votes.get(m.server_assignor, 0) + 1
        return max(sorted(votes), key=lambda name: votes[name]) if votes else ASSIGNORS[0]

    def owners(self, skip: str) -> dict[tuple[uuid.UUID, int], str]:
        """Which member holds each partition (assigned or being revoked), but ``skip``."""
        held: dict[tuple[uuid.UUID, int], str] = {}
        for m in self.members.values():
            if m.member_id != skip:
                for source in (m.assigned, m.pending):
                    for topic_id, parts in source.items():
                        held.update({(topic_id, p): m.member_id for p in parts})
        return held


# --- assignors ---------------------------------------------------------------------------------

def _uniform(members: dict[str, tuple[str, ...]], topics: dict[str, tuple[uuid.UUID, int]],
             previous: dict[str, Assignment]) -> dict[str, set[tuple[uuid.UUID, int]]]:
    """Balanced and sticky: each member keeps what it had while within its share, the rest go to the
    subscribed member holding fewest, then partitions move from the fullest to the emptiest member
    that subscribes to their topic until no two such members differ by more than one."""
    out: dict[str, set[tuple[uuid.UUID, int]]] = {m: set() for m in members}
    candidates: dict[tuple[uuid.UUID, int], list[str]] = {}
    for name, (topic_id, count) in sorted(topics.items()):
        subscribers = sorted(m for m, subscribed in members.items() if name in subscribed)
        for p in range(count):
            if subscribers:
                candidates[(topic_id, p)] = subscribers
    share = -(-len(candidates) // max(len(members), 1))
    taken: set[tuple[uuid.UUID, int]] = set()
    for member_id in sorted(members):
        for topic_id, parts in sorted(previous.get(member_id, {}).items()):
            for p in sorted(parts):
                tp = (topic_id, p)
                if tp in candidates and tp not in taken and member_id in candidates[tp] and len(out[member_id]) < share:
                    out[member_id].add(tp)
                    taken.add(tp)
    for tp, subscribers in sorted(candidates.items()):
        if tp not in taken:
            out[min(subscribers, key=lambda m: (len(out[m]), m))].add(tp)
    _balance(out, candidates)
    return out


def _balance(out: dict[str, set[tuple[uuid.UUID, int]]], candidates: dict[tuple[uuid.UUID, int], list[str]]) -> None:
    moved = True
    while moved:
        moved = False
        for member_id in sorted(out, key=lambda m: (-len(out[m]), m)):
            for tp in sorted(out[member_id]):
                target = min(candidates[tp], key=lambda m: (len(out[m]), m))
                if len(out[target]) + 1 < len(out[member_id]):
                    out[member_id].discard(tp)
                    out[target].add(tp)
                    moved = True
                    break
            if moved:
                break


def _range(members: dict[str, tuple[str, ...]], topics: dict[str, tuple[uuid.UUID, int]],
           previous: dict[str, Assignment]) -> dict[str, set[tuple[uuid.UUID, int]]]:
    """Per topic, its subscribers in member id order take contiguous ranges, the first ones one more."""
    out: dict[str, set[tuple[uuid.UUID, int]]] = {m: set() for m in members}
    for name, (topic_id, count) in sorted(topics.items()):
        subscribers = sorted(m for m, subscribed in members.items() if name in subscribed)
        if not subscribers:
            continue
        base, extra = divmod(count, len(subscribers))
        start = 0
        for i, member_id in enumerate(subscribers):
            size = base + (1 if i < extra else 0)
            out[member_id].update((topic_id, p) for p in range(start, start + size))
            start += size
    return out


def _as_assignment(pairs: set[tuple[uuid.UUID, int]]) -> Assignment:
    grouped: dict[uuid.UUID, set[int]] = {}
    for topic_id, p in pairs:
        grouped.setdefault(topic_id, set()).add(p)
    return {t: frozenset(p) for t, p in grouped.items()}


def _subtract(a: Assignment, b: Assignment) -> Assignment:
    return {t: frozenset(p - b.get(t, frozenset())) for t, p in a.items() if p - b.get(t, frozenset())}


def _intersect(a: Assignment, b: Assignment) -> Assignment:
    return {t: frozenset(p & b.get(t, frozenset())) for t, p in a.items() if p & b.get(t, frozenset())}


def _union(a: Assignment, b: Assignment) -> Assignment:
    return {t: frozenset(a.get(t, frozenset()) | b.get(t, frozenset())) for t in set(a) | set(b)
            if a.get(t, frozenset()) | b.get(t, frozenset())}


# --- the shard's consumer groups ------------------------------------------------------------------

@dataclass
class Step:
    """What one operation wrote and answers."""

    records: list[Record] = field(default_factory=list)
    response: Any = None


class ConsumerGroups:
    """The consumer groups of one ``__consumer_offsets`` partition."""

    def __init__(self, limits: ConsumerLimits) -> None:
        self.limits = limits
        self.groups: dict[str, ConsumerGroup] = {}

    # --- replay ---------------------------------------------------------------------------------

    def replay(self, key: bytes, value: bytes | None) -> None:
        decoded = cr.decode(key, value)
        if decoded.kind in (cr.PARTITION_METADATA, cr.REGULAR_EXPRESSION):
            return
        k: Any = decoded.key
        v: Any = decoded.value
        if decoded.kind == cr.GROUP_METADATA:
            if v is None:
                self.groups.pop(k.group_id, None)
                return
            group = self.groups.setdefault(k.group_id, ConsumerGroup(k.group_id))
            group.epoch, group.metadata_hash = v.epoch, v.metadata_hash
            return
        group = self.groups.setdefault(k.group_id, ConsumerGroup(k.group_id))
        if decoded.kind == cr.TARGET_METADATA:
            group.assignment_epoch = v.assignment_epoch if v is not None else 0
        elif decoded.kind == cr.TARGET_MEMBER:
            if v is None:
                group.target.pop(k.member_id, None)
            else:
                group.target[k.member_id] = cr.assignment_of(v.topic_partitions)
        elif decoded.kind == cr.MEMBER_METADATA:
            self._replay_member(group, k.member_id, v)
        elif decoded.kind == cr.CURRENT_ASSIGNMENT and v is not None and k.member_id in group.members:
            m = group.members[k.member_id]
            m.epoch, m.previous_epoch, m.state = v.member_epoch, v.previous_member_epoch, v.state
            m.assigned = cr.assignment_of(v.assigned_partitions)
            m.pending = cr.assignment_of(v.partitions_pending_revocation)

    def _replay_member(self, group: ConsumerGroup, member_id: str, v: Any) -> None:
        if v is None:
            group.members.pop(member_id, None)
            return
        m = group.members.get(member_id)
        if m is None:
            m = group.members[member_id] = ConsumerMember(member_id)
        m.instance_id, m.rack_id, m.client_id, m.client_host = v.instance_id, v.rack_id, v.client_id, v.client_host
        m.subscribed, m.rebalance_timeout_ms = tuple(v.subscribed_topic_names), v.rebalance_timeout_ms
        m.server_assignor = v.server_assignor

    def loaded(self, now_ms: int) -> None:
        for group in self.groups.values():
            for m in group.members.values():
                m.session_deadline_ms = now_ms + self.limits.session_timeout_ms

    # --- ConsumerGroupHeartbeat -------------------------------------------------------------------

    def heartbeat(self, request: ConsumerGroupHeartbeatRequest, client_id: str, client_host: str,
                  topics: TopicLookup, now_ms: int) -> Step:
        refused = self._check(request)
        if refused is not None:
            return Step(response=refused)
        group = self.groups.get(request.group_id)
        step = Step()
        if request.member_epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
            return self._leave(group, request, topics, now_ms)
        if group is None:
            group = self.groups[request.group_id] = ConsumerGroup(request.group_id)
            step.records.append(cr.group_metadata(group.group_id, 0))
        member = group.members.get(request.member_id)
        if request.member_epoch == 0:
            if member is None and len(group.members) >= self.limits.max_size:
                return Step(response=_error(ErrorCode.GROUP_MAX_SIZE_REACHED,
                                            f"The consumer group has reached its maximum capacity of "
                                            f"{self.limits.max_size} members."))
            if member is None:
                member = ConsumerMember(request.member_id)
        elif member is None:
            return Step(response=_error(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {request.member_id} is not a member "
                                                                      f"of group {request.group_id}."))
        elif not self._epoch_ok(member, request):
            return Step(response=_error(ErrorCode.FENCED_MEMBER_EPOCH,
                                        f"The consumer group member has a smaller member epoch "
                                        f"({request.member_epoch}) than the one known by the group coordinator "
                                        f"({member.epoch}). The member must abandon all its partitions and rejoin."))
        member.session_deadline_ms = now_ms + self.limits.session_timeout_ms
        self._update_member(group, member, request, client_id, client_host, step)
        self._update_metadata(group, topics, step)
        if group.assignment_epoch < group.epoch:
            self._assign(group, topics, now_ms, step)
        changed = self._reconcile(group, member, request, now_ms, step)
        response = ConsumerGroupHeartbeatResponse(error_code=ErrorCode.NONE, member_id=member.member_id,
                                                  member_epoch=member.epoch,
                                                  heartbeat_interval_ms=self.limits.heartbeat_interval_ms)
        if changed or request.member_epoch == 0 or request.topic_partitions is not None:
            cls = ConsumerGroupHeartbeatResponse
            response = response.replace(assignment=cls.Assignment(topic_partitions=[
                cls.TopicPartitions(topic_id=t, partitions=sorted(p)) for t, p in sorted(member.assigned.items())]))
        step.response = response
        return step

    def _check(self, request: ConsumerGroupHeartbeatRequest) -> ConsumerGroupHeartbeatResponse | None:
        """Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid, INVALID_REQUEST and its words."""
        if not request.member_id or not request.member_id.strip():
            return _error(ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")
        if not request.group_id or not request.group_id.strip():
            return _error(ErrorCode.INVALID_REQUEST, "GroupId can't be empty.")
        if request.rack_id is not None and not request.rack_id.strip():
            return _error(ErrorCode.INVALID_REQUEST, "RackId can't be empty.")
        if request.member_epoch == 0:
            if request.rebalance_timeout_ms == -1:
                return _error(ErrorCode.INVALID_REQUEST, "RebalanceTimeoutMs must be provided in first request.")
            if request.topic_partitions is None or request.topic_partitions:
                return _error(ErrorCode.INVALID_REQUEST, "TopicPartitions must be empty when (re-)joining.")
            if request.subscribed_topic_names is None and request.subscribed_topic_regex is None:
                return _error(ErrorCode.INVALID_REQUEST, "SubscribedTopicNames or SubscribedTopicRegex must be set "
                                                         "in first request.")
        elif request.member_epoch < STATIC_LEAVE_EPOCH:
            return _error(ErrorCode.INVALID_REQUEST, f"MemberEpoch is {request.member_epoch}, but must be greater "
                                                     f"than or equal to -2.")
        if request.subscribed_topic_regex:  # kraftwire's own refusal (README, differences); "" is no regex
            return _error(ErrorCode.INVALID_REGULAR_EXPRESSION, "kraftwire does not serve regular expression "
                                                                "subscriptions.")
        if request.server_assignor is not None and request.server_assignor not in ASSIGNORS:
            return _error(ErrorCode.UNSUPPORTED_ASSIGNOR, f"ServerAssignor {request.server_assignor} is not "
                                                          f"supported. Supported assignors: {', '.join(ASSIGNORS)}.")
        return None

    @staticmethod
    def _epoch_ok(member: ConsumerMember, request: ConsumerGroupHeartbeatRequest) -> bool:
        """The member's epoch, or its previous one with owned partitions within its assignment (a lost
        answer), is taken (Kafka's throwIfMemberEpochIsInvalid)."""
        if request.member_epoch == member.epoch:
            return True
        if request.member_epoch != member.previous_epoch or request.topic_partitions is None:
            return False
        owned = {tp.topic_id: frozenset(tp.partitions) for tp in request.topic_partitions}
        return not _subtract(owned, member.assigned)

    def _update_member(self, group: ConsumerGroup, member: ConsumerMember, request: ConsumerGroupHeartbeatRequest,
                       client_id: str, client_host: str, step: Step) -> None:
        before = member.metadata_value()
        subscribed = member.subscribed
        if request.subscribed_topic_names is not None:
            member.subscribed = tuple(sorted(set(request.subscribed_topic_names)))
        if request.instance_id is not None:
            member.instance_id = request.instance_id
        if request.rack_id is not None:
            member.rack_id = request.rack_id
        if request.rebalance_timeout_ms != -1:
            member.rebalance_timeout_ms = request.rebalance_timeout_ms
        if request.server_assignor is not None:
            member.server_assignor = request.server_assignor
        member.client_id, member.client_host = client_id, client_host
        new = member.member_id not in group.members
        if new or member.metadata_value().to_dict() != before.to_dict():
            group.members[member.member_id] = member
            step.records.append(cr.member_metadata(group.group_id, member.member_id, member.metadata_value()))
        if new or subscribed != member.subscribed:
            self._bump(group, group.metadata_hash, step)

    @staticmethod
    def _bump(group: ConsumerGroup, metadata_hash: int, step: Step) -> None:
        group.epoch += 1
        group.metadata_hash = metadata_hash
        step.records.append(cr.group_metadata(group.group_id, group.epoch, metadata_hash))

    def _update_metadata(self, group: ConsumerGroup, topics: TopicLookup, step: Step) -> None:
        """A subscribed topic created, deleted or given partitions: a new group epoch."""
        found = self._subscribed_topics(group, topics)
        digest = _hash(found)
        if digest == group.metadata_hash:
            return
        bumped = [i for i, (key, _) in enumerate(step.records) if cr.record_type(key) == cr.GROUP_METADATA]
        if bumped:  # this heartbeat bumped the epoch already: that record carries the new hash
            group.metadata_hash = digest
            step.records[bumped[-1]] = cr.group_metadata(group.group_id, group.epoch, digest)
        else:
            self._bump(group, digest, step)

    @staticmethod
    def _subscribed_topics(group: ConsumerGroup, topics: TopicLookup) -> dict[str, tuple[uuid.UUID, int]]:
        names = {name for m in group.members.values() for name in m.subscribed}
        found = {}
        for name in sorted(names):
            info = topics(name)
            if info is not None:
                found[name] = info
        return found

    def _assign(self, group: ConsumerGroup, topics: TopicLookup, now_ms: int, step: Step) -> None:
        assignor = _range if group.assignor() == "range" else _uniform
        subscriptions = {m.member_id: m.subscribed for m in group.members.values()}
        computed = assignor(subscriptions, self._subscribed_topics(group, topics), group.target)
        for member_id, pairs in sorted(computed.items()):
            assignment = _as_assignment(pairs)
            if group.target.get(member_id) != assignment:
                group.target[member_id] = assignment
                step.records.append(cr.target_member(group.group_id, member_id, assignment))
        group.assignment_epoch = group.epoch
        step.records.append(cr.target_metadata(group.group_id, group.epoch, now_ms))

    def _reconcile(self, group: ConsumerGroup, member: ConsumerMember, request: ConsumerGroupHeartbeatRequest,
                   now_ms: int, step: Step) -> bool:
        """Move the member towards its target (revocation first); True when its assignment changed."""
        before = member.assignment_state()
        target = group.target.get(member.member_id, {})
        owned = None if request.topic_partitions is None else {
            tp.topic_id: frozenset(tp.partitions) for tp in request.topic_partitions if tp.partitions}
        if member.state == UNREVOKED_PARTITIONS:
            if owned is None or _intersect(owned, member.pending):
                return self._write_if_changed(group, member, before, step)
            member.pending = {}
        if member.epoch != group.assignment_epoch or member.state != STABLE:
            revoking = _subtract(member.assigned, target)
            if revoking:
                member.assigned = _intersect(member.assigned, target)
                member.pending = revoking
                member.state = UNREVOKED_PARTITIONS
                member.revocation_deadline_ms = now_ms + member.rebalance_timeout_ms
            else:
                held = group.owners(member.member_id)
                wanted = _subtract(target, member.assigned)
                free = {t: frozenset(p for p in parts if (t, p) not in held) for t, parts in wanted.items()}
                member.assigned = _union(member.assigned, {t: p for t, p in free.items() if p})
                member.state = UNRELEASED_PARTITIONS if _subtract(target, member.assigned) else STABLE
                if member.epoch != group.assignment_epoch:
                    member.previous_epoch, member.epoch = member.epoch, group.assignment_epoch
                member.revocation_deadline_ms = 0
        return self._write_if_changed(group, member, before, step)

    @staticmethod
    def _write_if_changed(group: ConsumerGroup, member: ConsumerMember,
                          before: tuple[int, int, int, Assignment, Assignment], step: Step) -> bool:
        if member.assignment_state() == before:
            return False
        step.records.append(cr.current_assignment(group.group_id, member.member_id, member.assignment_state()))
        return before[3] != member.assigned

    def _leave(self, group: ConsumerGroup | None, request: ConsumerGroupHeartbeatRequest, topics: TopicLookup,
               now_ms: int) -> Step:
        member = group.members.get(request.member_id) if group is not None else None
        if group is None or member is None:
            return Step(response=_error(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {request.member_id} is not a member "
                                                                      f"of group {request.group_id}."))
        step = Step()
        self.remove_member(group, member.member_id, topics, now_ms, step)
        step.response = ConsumerGroupHeartbeatResponse(error_code=ErrorCode.NONE, member_id=request.member_id,
                                                       member_epoch=request.member_epoch,
                                                       heartbeat_interval_ms=0)
        return step

    def remove_member(self, group: ConsumerGroup, member_id: str, topics: TopicLookup | None, now_ms: int,
                      step: Step) -> None:
        """A member leaves, or is fenced: its records' tombstones, a new group epoch, a new target."""
        step.records += [cr.current_assignment(group.group_id, member_id, None),
                         cr.target_member(group.group_id, member_id, None),
                         cr.member_metadata(group.group_id, member_id, None)]
        group.members.pop(member_id, None)
        group.target.pop(member_id, None)
        self._bump(group, group.metadata_hash, step)
        if group.members and topics is not None:
            self._assign(group, topics, now_ms, step)
        elif not group.members:
            group.assignment_epoch = group.epoch
            step.records.append(cr.target_metadata(group.group_id, group.epoch, now_ms))

    # --- time -------------------------------------------------------------------------------------

    def next_deadline(self) -> int | None:
        deadlines = [d for g in self.groups.values() for m in g.members.values()
                     for d in (m.session_deadline_ms, m.revocation_deadline_ms) if d]
        return min(deadlines, default=None)

    def tick(self, now_ms: int, topics: TopicLookup | None) -> list[Record]:
        """Members whose session expired, or who did not revoke in time, are removed."""
        step = Step()
        for group in list(self.groups.values()):
            for m in list(group.members.values()):
                if (m.session_deadline_ms and m.session_deadline_ms <= now_ms) or (
                        m.revocation_deadline_ms and m.revocation_deadline_ms <= now_ms):
                    self.remove_member(group, m.member_id, topics, now_ms, step)
        return step.records

    # --- ConsumerGroupDescribe, ListGroups, DeleteGroups ----------------------------------------------

    def describe(self, group_id: str, names: NameLookup) -> ConsumerGroupDescribeResponse.DescribedGroup:
        cls = ConsumerGroupDescribeResponse
        group = self.groups.get(group_id)
        if group is None:
            return cls.DescribedGroup(group_id=group_id, error_code=ErrorCode.GROUP_ID_NOT_FOUND,
                                      error_message=f"Group {group_id} not found.")

        def parts(assignment: Assignment) -> Any:
            return cls.Assignment(topic_partitions=[
                cls.TopicPartitions(topic_id=t, topic_name=names(t) or "", partitions=sorted(p))
                for t, p in sorted(assignment.items())])
        members = [cls.Member(member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id,
                              member_epoch=m.epoch, client_id=m.client_id, client_host=m.client_host,
                              subscribed_topic_names=list(m.subscribed), subscribed_topic_regex=None,
                              assignment=parts(m.assigned), target_assignment=parts(group.target.get(m.member_id, {})),
                              member_type=1) for m in group.members.values()]
        return cls.DescribedGroup(group_id=group_id, group_state=group.state.value, group_epoch=group.epoch,
                                  assignment_epoch=group.assignment_epoch, assignor_name=group.assignor(),
                                  members=members)

    def delete(self, group_id: str) -> tuple[int, list[Record]]:
        group = self.groups.get(group_id)
        if group is None:
            return ErrorCode.GROUP_ID_NOT_FOUND, []
        if group.members:
            return ErrorCode.NON_EMPTY_GROUP, []
        records = [cr.target_metadata(group_id, None), cr.group_metadata(group_id, None)]
        del self.groups[group_id]
        return ErrorCode.NONE, records

    def check_commit(self, group_id: str, member_id: str, epoch: int, version: int) -> int:
        """An OffsetCommit to a consumer group (Kafka's ConsumerGroup.validateOffsetCommit)."""
        group = self.groups[group_id]
        if epoch < 0 and not member_id and not group.members:
            return ErrorCode.NONE
        member = group.members.get(member_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if version < 9:
            return ErrorCode.UNSUPPORTED_VERSION
        return ErrorCode.NONE if epoch == member.epoch else ErrorCode.STALE_MEMBER_EPOCH


def _hash(found: dict[str, tuple[uuid.UUID, int]]) -> int:
    """A stand-in for Kafka's metadata hash: any change of the subscribed topics' ids or partition
    counts changes it (kraftwire's own digest, not Kafka's murmur3 of racks and partitions)."""
    import hashlib
    text = ";".join(f"{name}:{topic_id}:{count}" for name, (topic_id, count) in sorted(found.items()))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big", signed=True) if found else 0


def _error(code: int, message: str) -> ConsumerGroupHeartbeatResponse:
    return ConsumerGroupHeartbeatResponse(error_code=code, error_message=message, member_epoch=0,
                                          heartbeat_interval_ms=0)
