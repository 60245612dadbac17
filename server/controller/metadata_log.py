"""The metadata log interface the controller writes through.

A log hands out offsets at append time and resolves the returned future once the records are
committed (fsync'd on a majority of the voters). Committed records are delivered, in order, to the
commit listeners; that is how the controller's committed image advances. ``replay`` yields what is
already committed at start-up (a snapshot's records, then the log after it). The implementation is
``kraftwire.server.raft.RaftLog``, the durable, Raft-style log in KRaft's on-disk format.
"""
from __future__ import annotations

import asyncio
from typing import Callable, Iterable, Iterator, Protocol

from kraftwire.codec.message import Message

from kraftwire.server.metadata.view import CommitListener

VersionedRecord = tuple[Message, int]  # a record and the version to frame it at


class NotControllerError(Exception):
    """A write reached a controller that is not the active one (answered NOT_CONTROLLER)."""


class MetadataLog(Protocol):
    epoch: int
    leader_id: int  # the Raft leader this replica knows, -1 for none
    active: bool  # this replica leads and its epoch's first record is committed: its controller may write
    high_watermark: int  # offset of the first record not yet committed
    end_offset: int  # offset the next appended record gets
    kraft_version: int  # 1 when the log's voter set can change (KIP-853), else 0
    # Called when a snapshot is due: returns the committed image's data batches as of the high watermark,
    # (record count, records' bytes), iterable on another thread (``MetadataImage.snapshot_batches``).
    snapshot_source: Callable[[], Iterable[tuple[int, bytes]]] | None

    async def open(self) -> None: ...

    def replay(self, frames: Callable[[list[bytes], int], None] | None = None) -> Iterator[tuple[int, Message]]:
        """Committed (offset, record) pairs to rebuild the image from at start-up. With ``frames``, the
        snapshot's records go to ``frames(framed records, offset)`` undecoded instead, before the rest
        is yielded (``MetadataImage.apply_frames``)."""

    def append(self, records: list[VersionedRecord]) -> tuple[int, asyncio.Future]:
        """Append one atomic batch on the active controller; returns (base offset, future resolved with the
        last offset once committed, or failed if it cannot be, e.g. when leadership is lost first)."""

    def add_commit_listener(self, listener: CommitListener) -> None: ...

    def add_leadership_listener(self, listener: Callable[[bool], None]) -> None:
        """Called with ``active`` each time it changes."""

    def describe(self):
        """The quorum as the leader sees it (``kraftwire.server.raft.QuorumDescription``), for DescribeQuorum."""

    async def handle(self, request, version: int):
        """Answer another replica's Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch or FetchSnapshot request."""

    def add_snapshot_listener(self, listener: Callable[[object, object], None]) -> None:
        """Called with (snapshot id, path) when a snapshot from the leader replaced the log: the committed
        state is that snapshot now, and ``replay`` yields it."""

    async def close(self) -> None: ...

    async def kill(self) -> None:
        """Stop at once, losing what was not fsync'd (the harness's kill)."""
