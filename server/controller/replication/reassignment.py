"""Partition reassignments, AlterPartitionReassignments (45): start, change or cancel partition reassignments (KIP-455).

Pure: ``decide(image, request)`` returns the ``ControllerResult``; the listing is
``reassignment_listing``.

Who: admin clients, on any broker listener (forwarded to the controller) or on the controller
listener. One request is one atomic batch of PartitionChangeRecords, answered after it commits.
``Replicas`` null cancels the partition's reassignment; an empty list is an invalid assignment, not a
cancel. An empty ``Topics`` array is answered at once with the default response (ErrorMessage "").

Per partition, in Kafka's order (the first failure is that partition's error; others go on):
unknown topic (3, "Unable to find a topic named {t}."); unknown partition (3, "Unable to find
partition {t}:{i}."); for a cancel: nothing in progress (85, null message) and a revert that would need
an unclean election on a topic that does not allow one (39); for a target: empty list (39), then
walking the ids in ascending order an unregistered broker (39, negatives included), a broker whose log
directories are all cordoned (39, KIP-1066) or a duplicate (39);
then KIP-860 (v1+, ``AllowReplicationFactorChange`` false): a target whose size differs from the
current replication factor (38, "The replication factor is changed from {a} to {b}"), where a
reassigning partition's factor is that of its in-flight target, |R| - |RR|; cancels skip the check.
A batch holds at most 10000 records: partitions past that fail with UNKNOWN_SERVER_ERROR (-1). Every
entry, duplicates included, is judged against the state before the request; v1 responses echo the
flag.

A start merges the lists as KRaft does: the target in request order, then the removed replicas in
ascending id order; AddingReplicas and RemovingReplicas are stored sorted. A cancel keeps the merged
order minus the adding replicas (the original order is not restored).

Deliberate difference from Kafka (reference §2.5): a new target for a partition that is already
reassigning always sets RemovingReplicas to the computed list (current merged replicas minus the
target), even when it is empty, and AddingReplicas to the computed list (target minus current), or,
when that is empty, to the previously adding replicas that the new target keeps. Kafka leaves the old
value of an empty computed list in place, which can leave a partition with AR = RR (it can never
complete, only be cancelled: [1,2,3]->[4,5,6] then [1,2,3]) or later remove a replica the new target
keeps ([1,2,3]->[1,2,4] then [1,2,3,4] drops 3). Here the first completes as soon as the kept replicas
are in sync, and the second goes on until 4 has caught up and then keeps [1,2,3,4]. Wherever Kafka's
rule does not misbehave (both computed lists non-empty, or an identical target re-sent) the result is
Kafka's.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.messages import AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse
from kraftwire.codec.records import PartitionChangeRecord
from kraftwire.server.metadata.image import MetadataImage, PartitionState, TopicState

from ..broker_lifecycle import election_for
from ..partition_change import ChangeRules, Election, build_change, rules_for
from ..result import ControllerResult
from ..topics import check_manual_assignment
from kraftwire.server.metadata.fast_paths import (ACCEPTED, ChangeTemplate, change_template, partition_answer,
                                                   stamped_change)

MAX_RECORDS_PER_REQUEST = 10000  # QuorumController.MAX_RECORDS_PER_USER_OP

TopicResponse = AlterPartitionReassignmentsResponse.ReassignableTopicResponse

Plan = ChangeTemplate | KafkaError | None
"""What a start or cancel does to a partition: its record less the id, a refusal, or no change."""


def reassignment_lists(current: Sequence[int], target: Sequence[int]
                       ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(merged replicas, adding, removing) for moving ``current`` (possibly already merged) to
    ``target``: the target in its order then the removed replicas ascending; both sets sorted."""
    removing = tuple(sorted(set(current) - set(target)))
    adding = tuple(sorted(set(target) - set(current)))
    return tuple(target) + removing, adding, removing


def revert_lists(state: PartitionState) -> tuple[tuple[int, ...], tuple[int, ...], bool]:
    """(replicas, ISR, unclean) after cancelling: the adding replicas leave both lists; when no ISR
    member is left, the first remaining replica alone forms the ISR and the revert is unclean."""
    replicas = tuple(r for r in state.replicas if r not in state.adding)
    isr = tuple(r for r in state.isr if r not in state.adding)
    if isr:
        return replicas, isr, False
    if not replicas:
        raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                         "Invalid replica assignment: addingReplicas contains all replicas.")
    return replicas, replicas[:1], True


def current_replication_factor(state: PartitionState) -> int:
    """The factor KIP-860 compares against: the in-flight target's size while reassigning."""
    return len(state.replicas) - len(state.removing)


def cancel(image: MetadataImage, topic: TopicState, index: int, state: PartitionState,
           election: Election | None = None, rules: ChangeRules | None = None) -> PartitionChangeRecord | None:
    """The record cancelling the partition's reassignment (None: nothing changes); raises KafkaError."""
    if not state.reassigning:
        raise KafkaError(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS)
    replicas, isr, unclean = revert_lists(state)
    election = election_for(image, topic.name) if election is None else election
    if unclean and election is not Election.UNCLEAN:
        raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                         f"Unable to revert partition assignment for {topic.name}:{index} "
                         "because it would require an unclean leader election.")
    return build_change(image.brokers, topic.topic_id, index, state,
                        rules=rules_for(image, topic.name) if rules is None else rules, isr=isr,
                        replicas=replicas, adding=(), removing=(), election=election)


def reassign(image: MetadataImage, topic: TopicState, index: int, state: PartitionState, target: tuple[int, ...],
             allow_rf_change: bool, rules: ChangeRules) -> PartitionChangeRecord | None:
    """The record starting (or changing) the move of the partition to ``target``; raises KafkaError."""
    check_manual_assignment(image, target, None)
    if not allow_rf_change and len(target) != current_replication_factor(state):
        raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, f"The replication factor is changed from "
                         f"{current_replication_factor(state)} to {len(target)}")
    merged, adding, removing = reassignment_lists(state.replicas, target)
    if not adding:
        adding = tuple(r for r in state.adding if r in target)  # still catching up, and still wanted
    return build_change(image.brokers, topic.topic_id, index, state, rules=rules,
                        replicas=merged if merged != state.replicas else None, adding=adding, removing=removing)


class _TopicPlans(NamedTuple):
    rules: ChangeRules
    election: Election
    plans: dict[tuple[PartitionState, tuple[int, ...] | None], Plan]  # (state, target or None) -> plan


class _Plans:
    """A start's or a cancel's outcome depends only on the partition's state, the target and its
    topic's rules and election (the brokers are the same for the whole request), so partitions alike
    share one computation: a bulk move or cancel of a topic computes a handful of plans and stamps each
    partition's id on its record. Plans are kept per topic (whose rules, min.insync.replicas and
    unclean election, are the same for all its partitions). A refusal that names the partition is not
    shared."""

    def __init__(self, image: MetadataImage, allow_rf_change: bool) -> None:
        self.image, self.allow_rf_change = image, allow_rf_change
        self._topics: dict[str, _TopicPlans] = {}

    def of(self, topic: TopicState) -> dict[tuple[PartitionState, tuple[int, ...] | None], Plan]:
        """The topic's plans by (state, target tuple or None)."""
        found = self._topics.get(topic.name)
        if found is None:
            found = self._topics[topic.name] = _TopicPlans(rules_for(self.image, topic.name),
                                                           election_for(self.image, topic.name), {})
        return found.plans

    def plan(self, topic: TopicState, index: int, state: PartitionState, target: tuple[int, ...] | None) -> Plan:
        """The plan for one entry: a start (``target`` a tuple) or a cancel (``target`` None); raises
        the KafkaError that names the partition, which is not shared."""
        topic_plans = self._topics[topic.name]
        try:
            if target is None:
                record = cancel(self.image, topic, index, state, topic_plans.election, topic_plans.rules)
            else:
                record = reassign(self.image, topic, index, state, target, self.allow_rf_change, topic_plans.rules)
        except KafkaError as exc:
            if target is None and exc.code == ErrorCode.INVALID_REPLICA_ASSIGNMENT:
                raise  # its message names the partition
            return exc
        return None if record is None else change_template(record)


_UNSET: Plan = KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, "no plan yet")  # compared by identity only
_TOO_MANY = KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR)


class _Reassigner:
    """One request's decision: the records so far and the plans its partitions share."""

    def __init__(self, image: MetadataImage, allow_rf_change: bool) -> None:
        self.image = image
        self.plans = _Plans(image, allow_rf_change)
        self.records: list[PartitionChangeRecord] = []

    def topic(self, entry: AlterPartitionReassignmentsRequest.ReassignableTopic) -> TopicResponse:
        """Judge one topic entry. A run of partitions in the same state with the same target (a bulk
        move's partitions share their state object) takes the plan of the first without looking it up."""
        answers: list[AlterPartitionReassignmentsResponse.ReassignablePartitionResponse] = []
        answer = answers.append
        topic = self.image.topic(entry.name)
        if topic is None:
            unknown = f"Unable to find a topic named {entry.name}."
            for partition in entry.partitions:
                answer(partition_answer(partition.partition_index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, unknown))
            return TopicResponse(name=entry.name, partitions=answers)
        found, states, records = self.plans.of(topic), topic.partitions, self.records
        record, accepted = records.append, ACCEPTED
        last_state: PartitionState | None = None
        last_target: tuple[int, ...] | None = None
        last_plan: Plan = _UNSET
        for partition in entry.partitions:
            index = partition.partition_index
            target = partition.replicas
            if target is not None:
                target = tuple(target)
            state = states.get(index)
            if state is None:
                answer(partition_answer(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                        f"Unable to find partition {entry.name}:{index}."))
                continue
            if state is last_state and target == last_target:
                plan = last_plan
            else:
                key = (state, target)
                plan = found.get(key, _UNSET)
                if plan is _UNSET:
                    try:
                        plan = found[key] = self.plans.plan(topic, index, state, target)
                    except KafkaError as exc:
                        answer(partition_answer(index, exc.code, exc.message))
                        continue
                last_state, last_target, last_plan = state, target, plan
            if plan is not None:
                if isinstance(plan, KafkaError):
                    answer(partition_answer(index, plan.code, plan.message))
                    continue
                if len(records) >= MAX_RECORDS_PER_REQUEST:
                    answer(partition_answer(index, _TOO_MANY.code, _TOO_MANY.message))
                    continue
                record(stamped_change(index, plan))
            answer(accepted[index])
        return TopicResponse(name=entry.name, partitions=answers)


def decide(image: MetadataImage, request: AlterPartitionReassignmentsRequest) -> ControllerResult:
    """The records and response for a non-empty request, every entry judged against ``image``."""
    allow = request.allow_replication_factor_change
    reassigner = _Reassigner(image, allow)
    responses = [reassigner.topic(entry) for entry in request.topics]
    return ControllerResult(reassigner.records, AlterPartitionReassignmentsResponse(
        allow_replication_factor_change=allow, error_message=None, responses=responses))
