"""The metadata log interface the controller writes through.

A log hands out offsets at append time and resolves the returned future once the records are
committed (fsync'd on a majority of the voters). Committed records are delivered, in order, to the
commit listeners; that is how the controller's committed image advances. ``replay`` yields what is
already committed at start-up (a snapshot's records, then the log after it). The implementation is
``kraftwire.server.raft.RaftLog``, the durable, Raft-style log in KRaft's on-disk format.

Only what the controller itself uses is named here; the Raft RPCs and DescribeQuorum reach the same
``RaftLog`` as the controller node's quorum handle (``kraftwire.server.controller.node.QuorumHandle``).
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from kraftwire.codec.message import Message

from kraftwire.server.metadata.view import CommitListener

VersionedRecord = tuple[Message, int]  # a record and the version to frame it at


class NotControllerError(Exception):
    """A write reached a controller that is not the active one (answered NOT_CONTROLLER)."""


class MetadataLog(Protocol):
    @property
    def active(self) -> bool:
        """This replica leads and its epoch's first record is committed: its controller may write."""
        ...

    @property
    def high_watermark(self) -> int:
        """Offset of the first record not yet committed."""
        ...

    @property
    def end_offset(self) -> int:
        """Offset the next appended record gets."""
        ...

    @property
    def kraft_version(self) -> int:
        """1 when the log's voter set can change (KIP-853), else 0."""
        ...

    # Called when a snapshot is due: returns the committed image's data batches as of the high watermark,
    # (record count, records' bytes), iterable on another thread (``MetadataImage.snapshot_batches``).
    snapshot_source: Callable[[], Iterable[tuple[int, bytes]]] | None

    async def open(self) -> None:
        """Recover the log (its snapshot and segments); with one voter, return once it leads."""

    def replay(self, frames: Callable[[list[bytes], int], None] | None = None) -> Iterator[tuple[int, Message]]:
        """Committed (offset, record) pairs to rebuild the image from at start-up. With ``frames``, the
        snapshot's records go to ``frames(framed records, offset)`` undecoded instead, before the rest
        is yielded (``MetadataImage.apply_frames``)."""

    def append(self, records: Sequence[VersionedRecord]) -> tuple[int, asyncio.Future[Any]]:
        """Append one atomic batch on the active controller; returns (base offset, future resolved with the
        last offset once committed, or failed if it cannot be, e.g. when leadership is lost first)."""

    def add_commit_listener(self, listener: CommitListener) -> None:
        """Called with [(offset, record)] after each commit, in order."""

    def add_leadership_listener(self, listener: Callable[[bool], None]) -> None:
        """Called with ``active`` each time it changes."""

    def add_snapshot_listener(self, listener: Callable[[Any, Path], None]) -> None:
        """Called with (snapshot id, path) when a snapshot from the leader replaced the log: the committed
        state is that snapshot now, and ``replay`` yields it."""

    async def close(self) -> None:
        """Stop, once what was appended is fsync'd."""

    async def kill(self) -> None:
        """Stop at once, losing what was not fsync'd (the harness's kill)."""
