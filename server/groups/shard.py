"""One ``__consumer_offsets`` partition's groups: Kafka's GroupMetadataManager (classic groups) and
OffsetMetadataManager, as pure operations. Each takes the request and the time and gives an
``Outcome``: the records to append, the answer (None while a JoinGroup or SyncGroup waits) and the
answers it completes of requests that waited (keyed ``(group, member, "join"|"sync")``). The runtime
appends the records, replays them (``replay``: the only way offsets and group metadata change) and
answers once they are committed. ``tick(now)`` runs what the time brought: expired sessions, ended
rebalances; ``next_deadline`` says when to tick next.
"""
from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass, field
from typing import Any

from kraftwire.codec import ErrorCode
from kraftwire.codec import records as rec
from kraftwire.codec.messages import (HeartbeatRequest, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse,
                                      LeaveGroupRequest, LeaveGroupResponse, OffsetCommitRequest, SyncGroupRequest,
                                      SyncGroupResponse)

from . import consumer_records, records
from .classic import ClassicGroup, Member, State
from .consumer import ConsumerGroups, ConsumerLimits, NameLookup, TopicLookup
from .records import OffsetKey

Record = tuple[bytes, bytes | None]
Waiter = tuple[str, str, str]
FIRST_VERSION_REQUIRING_MEMBER_ID = 4


@dataclass(frozen=True)
class GroupLimits:
    """The broker configs a shard follows (Kafka's names and defaults)."""

    min_session_timeout_ms: int = 6000  # group.min.session.timeout.ms
    max_session_timeout_ms: int = 1_800_000  # group.max.session.timeout.ms
    max_size: int = 2_147_483_647  # group.max.size
    initial_rebalance_delay_ms: int = 3000  # group.initial.rebalance.delay.ms
    metadata_max_bytes: int = 4096  # offset.metadata.max.bytes
    retention_ms: int = 7 * 24 * 3600 * 1000  # offsets.retention.minutes
    consumer: ConsumerLimits = ConsumerLimits()  # group.consumer.*


@dataclass
class Outcome:
    records: list[Record] = field(default_factory=list)
    response: Any = None
    waiter: Waiter | None = None  # with no response: the completion that will answer this request
    completions: list[tuple[Waiter, Any]] = field(default_factory=list)


@dataclass
class Committed:
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp_ms: int


class GroupShard:
    """The groups and offsets of one ``__consumer_offsets`` partition."""

    def __init__(self, limits: GroupLimits) -> None:
        self.limits = limits
        self.groups: dict[str, ClassicGroup] = {}
        self.offsets: dict[OffsetKey, Committed] = {}
        self.version = 0  # JoinGroup/SyncGroup responses of a rebalance carry the generation they close
        self.consumer = ConsumerGroups(limits.consumer)  # the KIP-848 groups (server/groups/consumer.py)
        self.topics: TopicLookup | None = None  # the broker's topics, for timers' reassignments

    # --- replay: the only way the persisted state changes --------------------------------------

    def replay(self, key: bytes, value: bytes | None) -> None:
        if consumer_records.record_type(key) in consumer_records.TYPES:
            self.consumer.replay(key, value)
            return
        decoded = records.decode_key(key)
        if isinstance(decoded, OffsetKey):
            if value is None:
                self.offsets.pop(decoded, None)
            else:
                v = records.decode_offset_value(value)
                self.offsets[decoded] = Committed(v.offset, v.leader_epoch, v.metadata, v.commit_timestamp)
                # a commit with no group record: an empty group, as Kafka
                if decoded.group not in self.groups and decoded.group not in self.consumer.groups:
                    self.groups[decoded.group] = ClassicGroup(decoded.group, state_timestamp_ms=v.commit_timestamp)
        elif isinstance(decoded, str):
            if value is None:
                self.groups.pop(decoded, None)
            else:
                self._replay_group(decoded, records.decode_group_value(value))

    def _replay_group(self, group_id: str, value: rec.GroupMetadataValue) -> None:
        group = self.groups.get(group_id)
        if group is not None and group.state in (State.PREPARING_REBALANCE, State.COMPLETING_REBALANCE,
                                                 State.STABLE) and group.generation == value.generation:
            return  # written by this shard itself: the live group already holds it
        group = ClassicGroup(group_id, generation=value.generation, protocol_type=value.protocol_type or None,
                             protocol=value.protocol, leader=value.leader,
                             state_timestamp_ms=value.current_state_timestamp)
        for m in value.members:
            group.members[m.member_id] = Member(
                m.member_id, m.group_instance_id, m.client_id, m.client_host, m.session_timeout,
                m.rebalance_timeout if m.rebalance_timeout >= 0 else m.session_timeout,
                value.protocol_type, [(value.protocol or "", m.subscription)], m.assignment)
            if m.group_instance_id is not None:
                group.static[m.group_instance_id] = m.member_id
        group.state = State.STABLE if group.members else State.EMPTY
        self.groups[group_id] = group

    def loaded(self, now_ms: int) -> None:
        """After a load: the members read back get a fresh session, as Kafka schedules on load."""
        for group in self.groups.values():
            for m in group.members.values():
                m.session_deadline_ms = now_ms + m.session_timeout_ms
        self.consumer.loaded(now_ms)
        for group_id in [g for g, group in self.groups.items() if g in self.consumer.groups and not group.members]:
            del self.groups[group_id]  # an empty classic group a consumer group took over

    # --- JoinGroup -----------------------------------------------------------------------------

    def join(self, request: JoinGroupRequest, version: int, client_id: str, client_host: str, now_ms: int) -> Outcome:
        rebalance_timeout = request.rebalance_timeout_ms if version >= 1 else request.session_timeout_ms
        protocols = [(p.name, p.metadata) for p in request.protocols]
        if not request.group_id:
            return Outcome(response=_join_error(ErrorCode.INVALID_GROUP_ID, request.member_id))
        if request.group_id in self.consumer.groups:  # classic members in a consumer group: not modelled
            return Outcome(response=_join_error(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, request.member_id))
        if not (self.limits.min_session_timeout_ms <= request.session_timeout_ms
                <= self.limits.max_session_timeout_ms):
            return Outcome(response=_join_error(ErrorCode.INVALID_SESSION_TIMEOUT, request.member_id))
        group = self.groups.get(request.group_id)
        if group is None:
            if request.member_id:
                return Outcome(response=_join_error(ErrorCode.UNKNOWN_MEMBER_ID, request.member_id))
            group = self.groups[request.group_id] = ClassicGroup(request.group_id, state_timestamp_ms=now_ms)
        if group.state == State.DEAD:
            return Outcome(response=_join_error(ErrorCode.COORDINATOR_NOT_AVAILABLE, request.member_id))
        if not group.supports(request.protocol_type, protocols):
            return Outcome(response=_join_error(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, request.member_id))
        joining = Member(request.member_id, request.group_instance_id, client_id, client_host,
                         request.session_timeout_ms, rebalance_timeout, request.protocol_type, protocols)
        if not request.member_id:
            return self._join_unknown(group, joining, version, now_ms)
        return self._join_known(group, joining, now_ms)

    def _join_unknown(self, group: ClassicGroup, joining: Member, version: int, now_ms: int) -> Outcome:
        instance = joining.instance_id
        if instance is not None and instance in group.static:
            return self._replace_static(group, joining, now_ms)
        joining.member_id = f"{joining.client_id}-{uuid.uuid4()}" if instance is None else f"{instance}-{uuid.uuid4()}"
        if len(group.members) + len(group.pending) >= self.limits.max_size:
            return Outcome(response=_join_error(ErrorCode.GROUP_MAX_SIZE_REACHED, ""))
        if instance is None and version >= FIRST_VERSION_REQUIRING_MEMBER_ID:
            group.pending[joining.member_id] = now_ms + joining.session_timeout_ms
            return Outcome(response=_join_error(ErrorCode.MEMBER_ID_REQUIRED, joining.member_id))
        return self._add_and_rebalance(group, joining, now_ms)

    def _replace_static(self, group: ClassicGroup, joining: Member, now_ms: int) -> Outcome:
        """A static member rejoining with no member id takes its old place under a new id (Kafka's
        updateStaticMemberThenRebalanceOrCompleteJoin, simplified: the group rebalances unless stable with
        the same protocols, where the new id is handed the current generation)."""
        assert joining.instance_id is not None
        old_id = group.static[joining.instance_id]
        old = group.members[old_id]
        joining.member_id = f"{joining.instance_id}-{uuid.uuid4()}"
        outcome = Outcome()
        if old.awaiting_join:
            outcome.completions.append(((group.group_id, old_id, "join"),
                                        _join_error(ErrorCode.FENCED_INSTANCE_ID, old_id)))
        if old.awaiting_sync:
            outcome.completions.append(((group.group_id, old_id, "sync"), _sync_error(ErrorCode.FENCED_INSTANCE_ID)))
        was_leader = group.leader == old_id
        group.remove(old_id)
        joining.assignment = old.assignment
        group.add(joining)
        if was_leader:
            group.leader = joining.member_id
        if group.state == State.STABLE and old.same_protocols(joining.protocols) and not was_leader:
            joining.session_deadline_ms = now_ms + joining.session_timeout_ms
            outcome.records.append(self._group_record(group, now_ms))
            outcome.response = self._join_response(group, joining, now_ms)
            return outcome
        more = self._add_and_rebalance(group, joining, now_ms, added=True)
        more.completions[:0] = outcome.completions
        return more

    def _join_known(self, group: ClassicGroup, joining: Member, now_ms: int) -> Outcome:
        member_id = joining.member_id
        if member_id in group.pending:
            del group.pending[member_id]
            return self._add_and_rebalance(group, joining, now_ms)
        member = group.members.get(member_id)
        if member is None or group.state == State.EMPTY:
            return Outcome(response=_join_error(ErrorCode.UNKNOWN_MEMBER_ID, member_id))
        if member.instance_id != joining.instance_id and joining.instance_id is not None:
            return Outcome(response=_join_error(ErrorCode.FENCED_INSTANCE_ID, member_id))
        outcome = Outcome()
        if member.awaiting_join:  # a second JoinGroup replaces the first (Kafka answers the old one)
            outcome.completions.append(((group.group_id, member_id, "join"),
                                        _join_error(ErrorCode.REBALANCE_IN_PROGRESS, member_id)))
        unchanged = member.same_protocols(joining.protocols)
        member.protocols, member.session_timeout_ms = joining.protocols, joining.session_timeout_ms
        member.rebalance_timeout_ms, member.client_id = joining.rebalance_timeout_ms, joining.client_id
        member.session_deadline_ms = now_ms + member.session_timeout_ms
        if group.state == State.COMPLETING_REBALANCE and unchanged or (
                group.state == State.STABLE and unchanged and group.leader != member_id):
            outcome.response = self._join_response(group, member, now_ms)
            return outcome
        if group.state != State.PREPARING_REBALANCE:
            self._prepare_rebalance(group, now_ms, outcome)
        member.awaiting_join = True
        outcome.waiter = (group.group_id, member_id, "join")
        self._maybe_complete_join(group, now_ms, outcome)
        return outcome

    def _add_and_rebalance(self, group: ClassicGroup, joining: Member, now_ms: int, added: bool = False) -> Outcome:
        outcome = Outcome()
        if not added:
            group.add(joining)
        joining.awaiting_join = True
        joining.session_deadline_ms = now_ms + joining.session_timeout_ms
        outcome.waiter = (group.group_id, joining.member_id, "join")
        if group.state == State.PREPARING_REBALANCE:
            if group.initial_delay:  # each new member extends the initial delay (Kafka's InitialDelayedJoin)
                self._extend_initial_delay(group, now_ms)
        else:
            self._prepare_rebalance(group, now_ms, outcome)
        self._maybe_complete_join(group, now_ms, outcome)
        return outcome

    def _extend_initial_delay(self, group: ClassicGroup, now_ms: int) -> None:
        delay = self.limits.initial_rebalance_delay_ms
        if group.initial_delay_remaining_ms > 0:
            step = min(delay, group.initial_delay_remaining_ms)
            group.initial_delay_remaining_ms -= step
            group.rebalance_deadline_ms = now_ms + step

    def _prepare_rebalance(self, group: ClassicGroup, now_ms: int, outcome: Outcome) -> None:
        """To PreparingRebalance: pending syncs are told REBALANCE_IN_PROGRESS; an empty group waits
        group.initial.rebalance.delay.ms for more members, up to the rebalance timeout."""
        for m in group.members.values():
            if m.awaiting_sync:
                m.awaiting_sync = False
                outcome.completions.append(((group.group_id, m.member_id, "sync"),
                                            _sync_error(ErrorCode.REBALANCE_IN_PROGRESS)))
        delay = self.limits.initial_rebalance_delay_ms
        group.initial_delay = group.state == State.EMPTY and delay > 0
        if group.initial_delay:
            group.rebalance_deadline_ms = now_ms + delay
            group.initial_delay_remaining_ms = max(group.max_rebalance_timeout_ms() - delay, 0)
        else:
            group.rebalance_deadline_ms = now_ms + group.max_rebalance_timeout_ms()
        group.transition(State.PREPARING_REBALANCE, now_ms)

    def _maybe_complete_join(self, group: ClassicGroup, now_ms: int, outcome: Outcome) -> None:
        if group.state == State.PREPARING_REBALANCE and not group.initial_delay and group.all_joined():
            self._complete_join(group, now_ms, outcome)

    def _complete_join(self, group: ClassicGroup, now_ms: int, outcome: Outcome) -> None:
        """The rebalance's join phase ends: members that did not rejoin leave, the generation grows, a
        protocol is chosen and every waiting JoinGroup is answered (the leader with the members)."""
        for m in [m for m in group.members.values() if not m.awaiting_join]:
            group.remove(m.member_id)
        group.pending.clear()
        group.initial_delay = False
        if not group.members:
            group.generation += 1
            group.protocol = None
            group.transition(State.EMPTY, now_ms)
            group.rebalance_deadline_ms = None
            outcome.records.append(self._group_record(group, now_ms))
            return
        group.generation += 1
        group.protocol = group.select_protocol()
        if group.leader not in group.members:
            group.leader = next(iter(group.members))
        group.transition(State.COMPLETING_REBALANCE, now_ms)
        group.rebalance_deadline_ms = now_ms + group.max_rebalance_timeout_ms()
        for m in group.members.values():
            m.awaiting_join = False
            m.session_deadline_ms = now_ms + m.session_timeout_ms
            outcome.completions.append(((group.group_id, m.member_id, "join"), self._join_response(group, m, now_ms)))

    def _join_response(self, group: ClassicGroup, member: Member, now_ms: int) -> JoinGroupResponse:
        members = []
        if member.member_id == group.leader:
            members = [JoinGroupResponse.JoinGroupResponseMember(member_id=m.member_id, group_instance_id=m.instance_id,
                                                                 metadata=m.metadata(group.protocol))
                       for m in group.members.values()]
        return JoinGroupResponse(error_code=ErrorCode.NONE, generation_id=group.generation,
                                 protocol_type=group.protocol_type, protocol_name=group.protocol,
                                 leader=group.leader or "", member_id=member.member_id, members=members)

    # --- SyncGroup ----------------------------------------------------------------------------

    def _check_member(self, group: ClassicGroup | None, member_id: str, instance_id: str | None,
                      generation: int) -> int:
        if group is None or group.state == State.DEAD:
            return ErrorCode.UNKNOWN_MEMBER_ID
        member = group.members.get(member_id)
        if instance_id is not None and instance_id in group.static and group.static[instance_id] != member_id:
            return ErrorCode.FENCED_INSTANCE_ID
        if member is None or group.state == State.EMPTY:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if generation != group.generation:
            return ErrorCode.ILLEGAL_GENERATION
        return ErrorCode.NONE

    def sync(self, request: SyncGroupRequest, version: int, now_ms: int) -> Outcome:
        group = self.groups.get(request.group_id)
        code = self._check_member(group, request.member_id, request.group_instance_id, request.generation_id)
        if code:
            return Outcome(response=_sync_error(code))
        assert group is not None
        if (request.protocol_type is not None and request.protocol_type != group.protocol_type) or (
                request.protocol_name is not None and request.protocol_name != group.protocol):
            return Outcome(response=_sync_error(ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
        member = group.members[request.member_id]
        member.session_deadline_ms = now_ms + member.session_timeout_ms
        if group.state == State.PREPARING_REBALANCE:
            return Outcome(response=_sync_error(ErrorCode.REBALANCE_IN_PROGRESS))
        if group.state == State.STABLE:
            return Outcome(response=self._sync_response(group, member))
        outcome = Outcome(waiter=(group.group_id, member.member_id, "sync"))
        member.awaiting_sync = True
        if request.member_id == group.leader:
            given = {a.member_id: a.assignment for a in request.assignments}
            for m in group.members.values():
                m.assignment = given.get(m.member_id, b"")
            outcome.records.append(self._group_record(group, now_ms))
            group.transition(State.STABLE, now_ms)
            group.rebalance_deadline_ms = None
            for m in group.members.values():
                if m.awaiting_sync and m is not member:
                    m.awaiting_sync = False
                    outcome.completions.append(((group.group_id, m.member_id, "sync"), self._sync_response(group, m)))
            member.awaiting_sync = False
            outcome.response = self._sync_response(group, member)
        return outcome

    def _sync_response(self, group: ClassicGroup, member: Member) -> SyncGroupResponse:
        return SyncGroupResponse(error_code=ErrorCode.NONE, protocol_type=group.protocol_type,
                                 protocol_name=group.protocol, assignment=member.assignment)

    # --- Heartbeat and LeaveGroup ----------------------------------------------------------------

    def heartbeat(self, request: HeartbeatRequest, now_ms: int) -> Outcome:
        return Outcome(response=HeartbeatResponse(error_code=self._heartbeat(request, now_ms)))

    def _heartbeat(self, request: HeartbeatRequest, now_ms: int) -> int:
        group = self.groups.get(request.group_id)
        code = self._check_member(group, request.member_id, request.group_instance_id, request.generation_id)
        if code:
            return code
        assert group is not None
        member = group.members[request.member_id]
        member.session_deadline_ms = now_ms + member.session_timeout_ms
        return ErrorCode.REBALANCE_IN_PROGRESS if group.state == State.PREPARING_REBALANCE else ErrorCode.NONE

    def leave(self, request: LeaveGroupRequest, version: int, now_ms: int) -> Outcome:
        identities = ([(request.member_id, None)] if version < 3
                      else [(m.member_id, m.group_instance_id) for m in request.members])
        group = self.groups.get(request.group_id)
        if group is None or group.state == State.DEAD:  # each member unknown (v0-2: at the top), as Kafka
            if version < 3:
                return Outcome(response=LeaveGroupResponse(error_code=ErrorCode.UNKNOWN_MEMBER_ID))
            return Outcome(response=LeaveGroupResponse(error_code=ErrorCode.NONE, members=[
                LeaveGroupResponse.MemberResponse(member_id=m, group_instance_id=i,
                                                  error_code=ErrorCode.UNKNOWN_MEMBER_ID) for m, i in identities]))
        outcome = Outcome()
        answers = []
        for member_id, instance_id in identities:
            code = self._leave_one(group, member_id, instance_id, now_ms, outcome)
            answers.append(LeaveGroupResponse.MemberResponse(member_id=member_id, group_instance_id=instance_id,
                                                             error_code=code))
        top = answers[0].error_code if version < 3 and answers else ErrorCode.NONE
        outcome.response = LeaveGroupResponse(error_code=top, members=answers if version >= 3 else [])
        return outcome

    def _leave_one(self, group: ClassicGroup, member_id: str, instance_id: str | None, now_ms: int,
                   outcome: Outcome) -> int:
        if instance_id is not None:
            known = group.static.get(instance_id)
            if known is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            if member_id and known != member_id:
                return ErrorCode.FENCED_INSTANCE_ID
            member_id = known
        if member_id in group.pending:
            del group.pending[member_id]
            self._maybe_complete_join(group, now_ms, outcome)
            return ErrorCode.NONE
        if member_id not in group.members:
            return ErrorCode.UNKNOWN_MEMBER_ID
        self._remove_member(group, member_id, now_ms, outcome)
        return ErrorCode.NONE

    def _remove_member(self, group: ClassicGroup, member_id: str, now_ms: int, outcome: Outcome) -> None:
        """A member leaves or its session expires: the group rebalances without it (Kafka's
        removeMemberAndUpdateClassicGroup)."""
        member = group.members[member_id]
        if member.awaiting_join:
            outcome.completions.append(((group.group_id, member_id, "join"),
                                        _join_error(ErrorCode.UNKNOWN_MEMBER_ID, member_id)))
        group.remove(member_id)
        if group.state in (State.STABLE, State.COMPLETING_REBALANCE):
            self._prepare_rebalance(group, now_ms, outcome)
            group.initial_delay = False
            group.rebalance_deadline_ms = now_ms + max(group.max_rebalance_timeout_ms(), 0)
        self._maybe_complete_join(group, now_ms, outcome)

    # --- the consumer protocol (server/groups/consumer.py) -----------------------------------------

    def consumer_heartbeat(self, request: Any, version: int, client_id: str, client_host: str, topics: TopicLookup,
                           now_ms: int) -> Outcome:
        """ConsumerGroupHeartbeat: a classic group with members is not taken over (GROUP_ID_NOT_FOUND, as
        Kafka answers); an empty one becomes the consumer group (its metadata's tombstone written)."""
        from kraftwire.codec.messages import ConsumerGroupHeartbeatResponse
        self.topics = topics
        classic = self.groups.get(request.group_id)
        records_first: list[Record] = []
        if classic is not None and classic.state != State.DEAD:
            if classic.members or classic.state != State.EMPTY:
                return Outcome(response=ConsumerGroupHeartbeatResponse(
                    error_code=ErrorCode.GROUP_ID_NOT_FOUND, error_message=f"Group {request.group_id} is not a "
                                                                            f"consumer group."))
        if classic is not None and request.member_epoch == 0:
            del self.groups[request.group_id]
            records_first.append((records.group_key(request.group_id), None))
        if version == 0 and request.member_epoch == 0 and not request.member_id:  # v0: the coordinator names it
            request = request.replace(member_id=base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("="))
        step = self.consumer.heartbeat(request, client_id, client_host, topics, now_ms)
        return Outcome(records=records_first + step.records, response=step.response)

    def consumer_describe(self, group_id: str, names: NameLookup) -> Outcome:
        from kraftwire.codec.messages import ConsumerGroupDescribeResponse
        if group_id in self.groups and self.groups[group_id].state != State.DEAD \
                and group_id not in self.consumer.groups:
            return Outcome(response=ConsumerGroupDescribeResponse.DescribedGroup(
                group_id=group_id, error_code=ErrorCode.GROUP_ID_NOT_FOUND,
                error_message=f"Group {group_id} is not a consumer group."))
        return Outcome(response=self.consumer.describe(group_id, names))

    # --- offsets (server/groups/offsets.py) ------------------------------------------------------

    def commit(self, request: OffsetCommitRequest, version: int, refused: dict[tuple[str, int], int],
               now_ms: int) -> Outcome:
        from . import offsets
        return offsets.commit(self, request, version, refused, now_ms)

    def fetch_offsets(self, group_id: str, wanted: list[tuple[str, list[int]]] | None) -> Outcome:
        """The committed offsets of ``wanted`` (topic, partitions), or of every partition for None, as
        the outcome's response: {(topic, partition): Committed}."""
        from . import offsets
        return Outcome(response=offsets.fetch(self, group_id, wanted))

    # --- admin (server/groups/admin.py) ---------------------------------------------------------

    def list_groups(self, states: list[str], types: list[str]) -> list[Any]:
        from . import admin
        return admin.list_groups(self, states, types)

    def describe(self, group_id: str, version: int) -> Outcome:
        from . import admin
        if group_id in self.consumer.groups:
            from kraftwire.codec.messages import DescribeGroupsResponse
            if version >= admin.FIRST_VERSION_WITH_NOT_FOUND:
                return Outcome(response=DescribeGroupsResponse.DescribedGroup(
                    group_id=group_id, group_state=State.DEAD.value, error_code=ErrorCode.GROUP_ID_NOT_FOUND,
                    error_message=f"Group {group_id} is not a classic group."))
            return Outcome(response=DescribeGroupsResponse.DescribedGroup(group_id=group_id,
                                                                          group_state=State.DEAD.value))
        return Outcome(response=admin.describe(self, group_id, version))

    def delete_group(self, group_id: str) -> Outcome:
        """DeleteGroups of one group: the outcome's response is its error code."""
        from . import offsets
        if group_id in self.consumer.groups:
            code, tail = self.consumer.delete(group_id)
            if code:
                return Outcome(response=code)
            head: list[Record] = [(records.offset_key(k), None) for k in self.offsets if k.group == group_id]
            return Outcome(records=head + tail, response=code)
        code, tombstones = offsets.delete_group(self, group_id)
        return Outcome(records=tombstones, response=code)

    def delete_offsets(self, group_id: str, topics: list[tuple[str, list[int]]]) -> Outcome:
        from . import admin
        return admin.delete_offsets(self, group_id, topics)

    # --- time ---------------------------------------------------------------------------------

    def next_deadline(self) -> int | None:
        deadlines = []
        for group in self.groups.values():
            if group.rebalance_deadline_ms is not None:
                deadlines.append(group.rebalance_deadline_ms)
            deadlines.extend(group.pending.values())
            deadlines.extend(m.session_deadline_ms for m in group.members.values()
                             if not m.awaiting_join and m.session_deadline_ms)
        consumer = self.consumer.next_deadline()
        if consumer is not None:
            deadlines.append(consumer)
        return min(deadlines, default=None)

    def tick(self, now_ms: int) -> Outcome:
        outcome = Outcome(records=self.consumer.tick(now_ms, self.topics))
        for group in list(self.groups.values()):
            for pending_id in [p for p, deadline in group.pending.items() if deadline <= now_ms]:
                del group.pending[pending_id]
            for m in list(group.members.values()):
                if not m.awaiting_join and m.session_deadline_ms and m.session_deadline_ms <= now_ms \
                        and m.member_id in group.members:
                    self._remove_member(group, m.member_id, now_ms, outcome)
            if group.rebalance_deadline_ms is not None and group.rebalance_deadline_ms <= now_ms:
                self._rebalance_timed_out(group, now_ms, outcome)
            else:
                self._maybe_complete_join(group, now_ms, outcome)
        return outcome

    def _rebalance_timed_out(self, group: ClassicGroup, now_ms: int, outcome: Outcome) -> None:
        if group.state == State.PREPARING_REBALANCE:
            if group.initial_delay and group.initial_delay_remaining_ms > 0 and not group.all_joined():
                self._extend_initial_delay(group, now_ms)
                return
            self._complete_join(group, now_ms, outcome)
        elif group.state == State.COMPLETING_REBALANCE:  # the leader never synced: those who did not sync leave
            group.rebalance_deadline_ms = None
            for m in [m for m in group.members.values() if not m.awaiting_sync]:
                self._remove_member(group, m.member_id, now_ms, outcome)
        else:
            group.rebalance_deadline_ms = None

    # --- records ------------------------------------------------------------------------------

    def _group_record(self, group: ClassicGroup, now_ms: int) -> Record:
        members = [rec.GroupMetadataValue.MemberMetadata(
            member_id=m.member_id, group_instance_id=m.instance_id, client_id=m.client_id, client_host=m.client_host,
            rebalance_timeout=m.rebalance_timeout_ms, session_timeout=m.session_timeout_ms,
            subscription=m.metadata(group.protocol), assignment=m.assignment) for m in group.members.values()]
        value = rec.GroupMetadataValue(protocol_type=group.protocol_type or "", generation=group.generation,
                                       protocol=group.protocol, leader=group.leader if members else None,
                                       current_state_timestamp=group.state_timestamp_ms, members=members)
        return records.group_key(group.group_id), records.group_value(value)


def unrouted(group_id: str, limits: GroupLimits, named: bool, session_timeout_ms: int | None = None) -> int:
    """What Kafka's GroupCoordinatorService refuses before it routes a request to the group's shard, so
    on any broker: INVALID_GROUP_ID for an empty group id where the API needs one (``named``: JoinGroup,
    SyncGroup, Heartbeat, LeaveGroup, OffsetDelete), INVALID_SESSION_TIMEOUT for a JoinGroup's session
    timeout outside group.min/max.session.timeout.ms."""
    if named and not group_id:
        return ErrorCode.INVALID_GROUP_ID
    if session_timeout_ms is not None and not (
            limits.min_session_timeout_ms <= session_timeout_ms <= limits.max_session_timeout_ms):
        return ErrorCode.INVALID_SESSION_TIMEOUT
    return ErrorCode.NONE


def _join_error(code: int, member_id: str) -> JoinGroupResponse:
    return JoinGroupResponse(error_code=code, generation_id=-1, protocol_name=None, leader="", member_id=member_id,
                             members=[])


def _sync_error(code: int) -> SyncGroupResponse:
    return SyncGroupResponse(error_code=code, assignment=b"")
