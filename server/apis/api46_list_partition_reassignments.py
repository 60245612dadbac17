"""ListPartitionReassignments (46): the partitions with a reassignment in progress.

Who: admin clients, on any broker listener (forwarded to the controller) or on the controller
listener; answered from the last committed image, with no write. ``Topics`` null lists every
reassigning partition; an empty array is answered at once with nothing. For named topics, unknown
topics and partitions, and partitions not reassigning, are left out without an error; a partition
index named twice is listed twice; a topic left with nothing is omitted. Each entry carries the merged
``Replicas`` with ``AddingReplicas`` and ``RemovingReplicas``. There are no partition-level errors.

Order: topics in creation order, partitions by index (Kafka lists "all" from a hash map, in an order it
does not specify). The answer to "all" is encoded once per committed image version.
"""
from __future__ import annotations

import weakref

from kraftwire.codec.messages import ListPartitionReassignmentsResponse

from kraftwire.server.wire.transport import Encoded

API_KEY = 46

TopicEntry = ListPartitionReassignmentsResponse.OngoingTopicReassignment
PartitionEntry = ListPartitionReassignmentsResponse.OngoingPartitionReassignment


def _entry(index, state) -> PartitionEntry:
    return PartitionEntry(partition_index=index, replicas=state.replicas, adding_replicas=state.adding,
                          removing_replicas=state.removing)


def decide(image, request) -> ListPartitionReassignmentsResponse:
    topics = []
    if request.topics is None:
        for topic_id, indexes in image.reassigning.items():
            topic = image.topics[topic_id]
            topics.append(TopicEntry(name=topic.name,
                                     partitions=[_entry(i, topic.partitions[i]) for i in sorted(indexes)]))
    else:
        for wanted in request.topics:
            topic = image.topic(wanted.name)
            if topic is None:
                continue
            partitions = [_entry(i, s) for i in wanted.partition_indexes
                          if (s := topic.partitions.get(i)) is not None and (s.adding or s.removing)]
            if partitions:
                topics.append(TopicEntry(name=topic.name, partitions=partitions))
    return ListPartitionReassignmentsResponse(error_message=None, topics=topics)


_encoded = weakref.WeakKeyDictionary()  # image -> (its version, api version, Encoded) of "all"


def on_controller(node, context, request):
    if request.topics is not None and not request.topics:
        return ListPartitionReassignmentsResponse(error_message=None)
    image = node.controller.committed
    if request.topics is not None:
        return decide(image, request)
    cached = _encoded.get(image)
    if cached is None or cached[:2] != (image.version, context.api_version):
        body = bytearray()
        decide(image, request).encode_into(body, context.api_version)
        cached = _encoded[image] = (image.version, context.api_version, Encoded(bytes(body)))
    return cached[2]
