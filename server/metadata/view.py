"""The seam between the simulated brokers and the controller: what a broker may know of the metadata.

A broker reads the committed metadata image, is told of each commit, and knows the cluster id; it has
no other handle on the controller and reaches it only over the wire (BrokerRegistration,
BrokerHeartbeat, AlterPartition, AssignReplicasToDirs, forwarded requests). The role of Kafka's
``MetadataPublisher``: something that hands committed images to the broker's components.

Today the host (``kraftwire.server.host.cluster``) passes a view of the controller's own committed
image, shared by every broker of the process; a broker replaying the log itself would be another
implementation of the same view.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from kraftwire.codec.message import Message

from .image import MetadataImage

CommitListener = Callable[[list[tuple[int, Message]]], None]  # told the committed (offset, record) pairs


class MetadataView(Protocol):
    @property
    def cluster_id(self) -> str: ...

    @property
    def image(self) -> MetadataImage:
        """The image as of the last commit (read it, never change it)."""

    def subscribe(self, listener: CommitListener) -> None:
        """Call ``listener`` after each commit, once ``image`` includes it."""
