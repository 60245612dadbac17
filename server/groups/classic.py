"""A classic group and its members, as Kafka's ClassicGroup keeps them (states Empty,
PreparingRebalance, CompletingRebalance, Stable, Dead)."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class State(Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass(eq=False)
class Member:
    member_id: str
    instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    awaiting_join: bool = False  # a JoinGroup of it waits for the rebalance to complete
    awaiting_sync: bool = False
    session_deadline_ms: int = 0

    def metadata(self, protocol: str | None) -> bytes:
        return next((data for name, data in self.protocols if name == protocol), b"")

    def same_protocols(self, protocols: list[tuple[str, bytes]]) -> bool:
        return self.protocols == protocols


@dataclass(eq=False)
class ClassicGroup:
    group_id: str
    state: State = State.EMPTY
    generation: int = 0
    protocol_type: str | None = None
    protocol: str | None = None
    leader: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    pending: dict[str, int] = field(default_factory=dict)  # member ids told MEMBER_ID_REQUIRED -> their deadline
    static: dict[str, str] = field(default_factory=dict)  # group.instance.id -> member id
    state_timestamp_ms: int = -1
    rebalance_deadline_ms: int | None = None  # when a PreparingRebalance (or a CompletingRebalance) ends
    initial_delay: bool = False  # the PreparingRebalance is Kafka's InitialDelayedJoin
    initial_delay_remaining_ms: int = 0

    def transition(self, state: State, now_ms: int) -> None:
        self.state = state
        self.state_timestamp_ms = now_ms

    def add(self, member: Member) -> None:
        if not self.members:
            self.protocol_type = member.protocol_type
        self.members[member.member_id] = member
        if member.instance_id is not None:
            self.static[member.instance_id] = member.member_id
        if self.leader is None:
            self.leader = member.member_id

    def remove(self, member_id: str) -> None:
        member = self.members.pop(member_id, None)
        if member is not None and member.instance_id is not None and self.static.get(member.instance_id) == member_id:
            del self.static[member.instance_id]
        if self.leader == member_id:
            self.leader = next(iter(self.members), None)

    def all_joined(self) -> bool:
        return not self.pending and all(m.awaiting_join for m in self.members.values())

    def max_rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def select_protocol(self) -> str | None:
        """The protocol every member supports, the one most members list first among those (Kafka's
        vote: each member votes for its most preferred candidate)."""
        members = list(self.members.values())
        if not members:
            return None
        candidates = set(name for name, _ in members[0].protocols)
        for m in members[1:]:
            candidates &= {name for name, _ in m.protocols}
        if not candidates:
            return None
        votes: dict[str, int] = {}
        for m in members:
            vote = next(name for name, _ in m.protocols if name in candidates)
            votes[vote] = votes.get(vote, 0) + 1
        return max(sorted(votes), key=lambda name: votes[name])

    def supports(self, protocol_type: str, protocols: list[tuple[str, bytes]]) -> bool:
        """A joining member's protocols fit the group (INCONSISTENT_GROUP_PROTOCOL otherwise)."""
        if not protocols or not protocol_type:
            return False
        if not self.members:
            return True
        if protocol_type != self.protocol_type:
            return False
        names = {name for name, _ in protocols}
        common = None
        for m in self.members.values():
            mine = {name for name, _ in m.protocols}
            common = mine if common is None else common & mine
        return bool(common and common & names)
