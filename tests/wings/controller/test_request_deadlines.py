"""Request deadlines as Kafka's controller enforces them: a decision that would start at or after its
deadline is not run (nothing written) and the whole request gets REQUEST_TIMED_OUT in its error shape; a
request with nothing to do is decided as it is. The differential test compares the answers with Kafka's."""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec import records as rec
from kraftwire.codec.messages import CreateTopicsRequest, ElectLeadersRequest
from kraftwire.server.controller.request_deadlines import deadline_of, has_work, within_deadline
from kraftwire.server.controller.result import ControllerResult
from kraftwire.server.metadata.image import MetadataImage

Topic = CreateTopicsRequest.CreatableTopic


def create(*names, timeout_ms=0):
    return CreateTopicsRequest(timeout_ms=timeout_ms, topics=[Topic(name=n, num_partitions=1, replication_factor=1)
                                                              for n in names])


def decided(image):
    return ControllerResult([rec.TopicRecord(name="t")], "decided")


def test_a_passed_deadline_writes_nothing_and_names_every_topic():
    request = create("t", "t", "u")
    for timeout_ms in (0, -1):
        decide = within_deadline(decided, request, 7, deadline_of(timeout_ms, 100.0), clock=lambda: 100.0)
        records, response = decide(MetadataImage())
        assert records == []
        assert [(t.name, t.error_code, t.error_message, t.num_partitions) for t in response.topics] == [
            ("t", ErrorCode.REQUEST_TIMED_OUT, None, -1), ("t", ErrorCode.REQUEST_TIMED_OUT, None, -1),
            ("u", ErrorCode.REQUEST_TIMED_OUT, None, -1)]


def test_a_deadline_not_reached_decides():
    decide = within_deadline(decided, create("t"), 7, deadline_of(30000, 100.0), clock=lambda: 129.9)
    assert decide(MetadataImage()).response == "decided"


def test_nothing_to_do_is_answered_without_a_deadline():
    assert not has_work(create())
    assert not has_work(create("dup", "dup", "__cluster_metadata"))
    assert not has_work(ElectLeadersRequest(timeout_ms=0, topic_partitions=[]))
    assert has_work(ElectLeadersRequest(timeout_ms=0, topic_partitions=None))  # every partition
    decide = within_deadline(decided, create("dup", "dup"), 7, deadline_of(0, 100.0), clock=lambda: 200.0)
    assert decide(MetadataImage()).response == "decided"


def test_a_timed_out_election_answers_in_every_version():
    """ElectLeaders' request-wide error code is v1+: at v0 only the partitions carry REQUEST_TIMED_OUT (as
    Kafka's ElectLeadersResponse sets it), so the answer encodes in every version the request came in."""
    from kraftwire.codec.messages import ElectLeadersResponse
    from kraftwire.server.controller.request_deadlines import timed_out

    Topic = ElectLeadersRequest.TopicPartitions
    request = ElectLeadersRequest(timeout_ms=0, topic_partitions=[Topic(topic="t", partitions=[0, 1])])
    for version in (0, 1, 2):
        answer = timed_out(request, version)
        decoded = ElectLeadersResponse.decode(answer.encode(version), version)
        assert decoded.error_code == (ErrorCode.REQUEST_TIMED_OUT if version >= 1 else 0)
        assert [p.error_code for p in decoded.replica_election_results[0].partition_result] == \
            [ErrorCode.REQUEST_TIMED_OUT] * 2
