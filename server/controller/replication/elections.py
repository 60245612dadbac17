"""Leader elections, ElectLeaders (43): run preferred (0) or unclean (1) leader elections.

Pure: ``decide(image, request)`` returns the ``ControllerResult``.

Who: admin clients, through any broker (forwarded) or on the controller listener. Follows Kafka's
ReplicationControlManager.electLeaders. v0 has no ``ElectionType`` and means PREFERRED; another type
than 0 or 1 fails the whole request with INVALID_REQUEST (the top-level ErrorCode from v1, and every
listed partition). Per partition:

* unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION (3) "No such topic as T" / "No such
  partition as T-P";
* PREFERRED when the first replica already leads, UNCLEAN when there is a leader:
  ELECTION_NOT_NEEDED (84);
* otherwise Kafka's PartitionChangeBuilder with that election (``partition_change.build_change``).
  PREFERRED makes the first replica leader if it is in sync and can lead (else any in-sync replica that
  can, when the current leader cannot stay); UNCLEAN elects an in-sync replica, else any live replica,
  which becomes the whole ISR. No change possible: PREFERRED_LEADER_NOT_AVAILABLE (80) or
  ELIGIBLE_LEADERS_NOT_AVAILABLE (83).

``TopicPartitions`` null means every partition of every topic; partitions that need no election are
then left out, and every topic is listed even when none of its partitions is. All changes of a request
are one atomic batch.

Deliberate differences: ``TimeoutMs`` is not enforced and there are no ACLs. A partition listed twice
is elected once and both entries get that result (Kafka would write the same change twice).
"""
from __future__ import annotations

from collections.abc import Sequence

from kraftwire.codec import ErrorCode
from kraftwire.codec.constants import NO_LEADER
from kraftwire.codec.messages import ElectLeadersRequest, ElectLeadersResponse
from kraftwire.codec.records import PartitionChangeRecord
from kraftwire.server.metadata.image import MetadataImage

from ..partition_change import Election, build_change, rules_for
from ..result import ControllerResult

PREFERRED, UNCLEAN = 0, 1
ELECTIONS = {PREFERRED: Election.PREFERRED, UNCLEAN: Election.UNCLEAN}
TopicResult = ElectLeadersResponse.ReplicaElectionResult
PartitionResult = ElectLeadersResponse.PartitionResult
Outcome = tuple[int, str | None, PartitionChangeRecord | None]  # error code, message, the change if any


def elect(image: MetadataImage, topic_name: str, partition_id: int, election_type: int) -> Outcome:
    """(error code, error message, PartitionChangeRecord or None) of one partition's election."""
    topic = image.topic(topic_name)
    if topic is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {topic_name}", None
    state = topic.partitions.get(partition_id)
    if state is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {topic_name}-{partition_id}", None
    if election_type == PREFERRED and state.replicas and state.leader == state.replicas[0]:
        return _refusal(ErrorCode.ELECTION_NOT_NEEDED)
    if election_type == UNCLEAN and state.leader != NO_LEADER:
        return _refusal(ErrorCode.ELECTION_NOT_NEEDED)
    change = build_change(image.brokers, topic.topic_id, partition_id, state, rules=rules_for(image, topic_name),
                          election=ELECTIONS[election_type])
    if change is None:
        return _refusal(ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE if election_type == PREFERRED
                        else ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE)
    return ErrorCode.NONE, None, change


def _refusal(code: ErrorCode) -> Outcome:
    return code, code.message, None


def decide(image: MetadataImage, request: ElectLeadersRequest) -> ControllerResult:
    """The PartitionChangeRecords and ElectLeadersResponse."""
    election_type = request.election_type
    if election_type not in ELECTIONS:
        unknown = f"Unknown election type {election_type}"
        results = [TopicResult(topic=t.topic, partition_result=[
            PartitionResult(partition_id=p, error_code=ErrorCode.INVALID_REQUEST, error_message=unknown)
            for p in t.partitions]) for t in request.topic_partitions or ()]
        return ControllerResult([], ElectLeadersResponse(throttle_time_ms=0, error_code=ErrorCode.INVALID_REQUEST,
                                                         replica_election_results=results))

    wanted: list[tuple[str, Sequence[int]]]
    if request.topic_partitions is None:
        wanted = [(name, sorted(image.topics[topic_id].partitions))
                  for name, topic_id in sorted(image.topic_ids.items())]
    else:
        wanted = [(t.topic, t.partitions) for t in request.topic_partitions]
    records: list[PartitionChangeRecord] = []
    decided: dict[tuple[str, int], tuple[int, str | None]] = {}
    results = []
    for topic_name, partitions in wanted:
        partition_results = []
        for partition_id in partitions:
            key = (topic_name, partition_id)
            if key not in decided:
                code, message, change = elect(image, topic_name, partition_id, election_type)
                decided[key] = code, message
                if change is not None:
                    records.append(change)
            code, message = decided[key]
            if request.topic_partitions is None and code == ErrorCode.ELECTION_NOT_NEEDED:
                continue
            partition_results.append(PartitionResult(partition_id=partition_id, error_code=code, error_message=message))
        results.append(TopicResult(topic=topic_name, partition_result=partition_results))
    return ControllerResult(records, ElectLeadersResponse(throttle_time_ms=0, error_code=ErrorCode.NONE,
                                                          replica_election_results=results))
