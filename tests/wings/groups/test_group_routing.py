"""Where a group lives and what is refused before it gets there: Kafka's partition rule (Utils.abs of
Java's String.hashCode, so Integer.MIN_VALUE goes to partition 0), the checks Kafka's
GroupCoordinatorService makes before routing (empty group id, JoinGroup's session timeout) and
OffsetCommit's rules for a missing group (GROUP_ID_NOT_FOUND from v9, ILLEGAL_GENERATION before, a
simple group for generation -1 whatever the member id)."""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.server.broker.group_coordinator import java_abs, java_hash
from kraftwire.server.groups.offsets import check_commit
from kraftwire.server.groups.shard import GroupLimits, GroupShard, unrouted


def test_java_string_hash_and_utils_abs():
    assert java_hash("polygenelubricants") == -(1 << 31)
    assert java_abs(java_hash("polygenelubricants")) % 50 == 0  # plain abs would give 2**31 % 50 == 48
    assert java_hash("") == 0 and java_hash("a") == 97
    assert java_hash("\U0001F600") == 0xD83D * 31 + 0xDE00  # UTF-16 code units, as Java counts them


def test_refused_before_routing():
    limits = GroupLimits()
    assert unrouted("", limits, named=True) == ErrorCode.INVALID_GROUP_ID
    assert unrouted("", limits, named=False) == ErrorCode.NONE  # OffsetCommit, OffsetFetch, Describe, Delete
    assert unrouted("g", limits, True, session_timeout_ms=10) == ErrorCode.INVALID_SESSION_TIMEOUT
    assert unrouted("g", limits, True, session_timeout_ms=10_000) == ErrorCode.NONE


def test_commit_to_a_missing_group():
    shard = GroupShard(GroupLimits())
    assert check_commit(shard, "g", "ghost", None, 3, 9) == ErrorCode.GROUP_ID_NOT_FOUND
    assert check_commit(shard, "g", "ghost", None, 3, 8) == ErrorCode.ILLEGAL_GENERATION
    assert check_commit(shard, "g", "someone", None, -1, 9) == ErrorCode.NONE
