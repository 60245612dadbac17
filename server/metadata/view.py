"""The seam between the simulated brokers and the controller: what a broker may know of the metadata.

A broker reads the committed metadata image, is told of each commit and of the partitions it changed, and
knows the cluster id; it has no other handle on the controller and reaches it only over the wire (BrokerRegistration,
BrokerHeartbeat, AlterPartition, AssignReplicasToDirs, forwarded requests). The role of Kafka's
``MetadataPublisher``: something that hands committed images to the broker's components.

The implementation is ``FollowerView`` (server/broker/metadata_follower.py): the broker fetches the
metadata log from the active controller as a KRaft observer and applies it to its image. A broker
starts its view, waits until it has caught up with the log, and closes it when it stops.
"""
from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Protocol

from kraftwire.codec.message import Message

from .image import MetadataImage

CommitListener = Callable[[list[tuple[int, Message]]], None]  # told the committed (offset, record) pairs
# told a broker's local changes of a commit, [(topic id, topic state or None, [(partition, state or
# None)])]: each partition that lists the broker as a replica before or after, with its state after (None:
# gone); or None when any may have changed (a snapshot loaded)
PartitionListener = Callable[[list[tuple[uuid.UUID, object, list[tuple[int, object]]]] | None], None]


class MetadataView(Protocol):
    @property
    def cluster_id(self) -> str: ...

    @property
    def image(self) -> MetadataImage:
        """The image as of the last commit (read it, never change it)."""

    def subscribe(self, listener: CommitListener) -> None:
        """Call ``listener`` after each commit, once ``image`` includes it."""

    def subscribe_partitions(self, listener: PartitionListener) -> None:
        """Call ``listener`` with the broker's local changes of each commit, once ``image`` includes it
        and before the commit listeners (Kafka's TopicsDelta.localChanges, which its brokers'
        ReplicaManager applies)."""

    async def start(self) -> None:
        """Begin following the metadata log."""

    async def wait_caught_up(self, timeout: float) -> None:
        """Return once the image holds the log up to the high watermark first seen; TimeoutError otherwise."""

    async def sync(self) -> None:
        """Return once the image holds what the leader has committed now (bounded wait)."""

    async def close(self) -> None:
        """Stop following."""
