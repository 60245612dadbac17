"""Reassignments in progress, ListPartitionReassignments (46): the partitions with a reassignment in progress.

Pure: ``decide(image, request)`` returns the response of this read; ``ReassignmentListings`` keeps the
encoded answer to "list all" of a committed image while its version holds.

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
from typing import NamedTuple

from kraftwire.codec.messages import ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse
from kraftwire.server.metadata.image import MetadataImage, PartitionState

TopicEntry = ListPartitionReassignmentsResponse.OngoingTopicReassignment
PartitionEntry = ListPartitionReassignmentsResponse.OngoingPartitionReassignment


def _entry(index: int, state: PartitionState) -> PartitionEntry:
    return PartitionEntry(partition_index=index, replicas=state.replicas, adding_replicas=state.adding,
                          removing_replicas=state.removing)


def decide(image: MetadataImage, request: ListPartitionReassignmentsRequest
                       ) -> ListPartitionReassignmentsResponse:
    """The reassigning partitions ``request`` asks for (``Topics`` null: all), read from ``image``."""
    topics = []
    if request.topics is None:
        for topic_id, indexes in image.reassigning.items():
            topic = image.topics[topic_id]
            topics.append(TopicEntry(name=topic.name,
                                     partitions=[_entry(i, topic.partitions[i]) for i in sorted(indexes)]))
    else:
        for wanted in request.topics:
            found = image.topic(wanted.name)
            if found is None:
                continue
            partitions = [_entry(i, s) for i in wanted.partition_indexes
                          if (s := found.partitions.get(i)) is not None and (s.adding or s.removing)]
            if partitions:
                topics.append(TopicEntry(name=found.name, partitions=partitions))
    return ListPartitionReassignmentsResponse(error_message=None, topics=topics)


class _Listing(NamedTuple):
    version: int  # the image's version it was encoded at
    api_version: int
    body: bytes


class ReassignmentListings:
    """The encoded answer to "list all" of each image (a client polling a long move asks it again and
    again), kept until the image's version changes; an image's entry goes with the image."""

    def __init__(self) -> None:
        self._by_image: weakref.WeakKeyDictionary[MetadataImage, _Listing] = weakref.WeakKeyDictionary()

    def all_encoded(self, image: MetadataImage, api_version: int) -> bytes:
        """The ListPartitionReassignmentsResponse listing every reassigning partition, encoded at
        ``api_version``."""
        cached = self._by_image.get(image)
        if cached is None or cached.version != image.version or cached.api_version != api_version:
            body = bytearray()
            decide(image, ListPartitionReassignmentsRequest(topics=None)).encode_into(body, api_version)
            cached = self._by_image[image] = _Listing(image.version, api_version, bytes(body))
        return cached.body


LISTINGS = ReassignmentListings()
