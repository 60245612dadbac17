"""The metadata log interface the controller writes through, and an in-memory implementation.

A log hands out offsets at append time and resolves the returned future once the records are
committed (durable on the voters). Committed records are delivered, in order, to ``on_commit``; that is
how the controller's committed image advances. ``replay`` yields what is already committed at start-up.
The durable, Raft-style implementation lives in ``server.raft``.
"""
from __future__ import annotations

import asyncio
import time
from typing import Callable, Iterator, Protocol

from codec.message import Message

Entry = tuple[Message, int | None]  # a record and the version to write it at (None: the latest)
CommitListener = Callable[[list[tuple[int, Message]]], None]


class MetadataLog(Protocol):
    epoch: int
    high_watermark: int  # offset of the first record not yet committed
    end_offset: int  # offset the next appended record gets

    async def open(self) -> None: ...

    def replay(self) -> Iterator[tuple[int, Message]]:
        """Committed (offset, record) pairs to rebuild the image from at start-up."""

    def append(self, records: list[Entry]) -> tuple[int, asyncio.Future]:
        """Append one atomic batch; returns (base offset, future resolved with the last offset once
        committed, or failed if it cannot be)."""

    def add_commit_listener(self, listener: CommitListener) -> None: ...

    async def close(self) -> None: ...


class MemoryLog:
    """Commits on append (nothing is durable): for unit tests and throwaway clusters."""

    def __init__(self):
        self.epoch = 1
        self.high_watermark = 0
        self.end_offset = 0
        self.entries: list[tuple[int, int, Message]] = []  # (offset, timestamp ms, record)
        self._listeners: list[CommitListener] = []

    async def open(self) -> None:
        return None

    def replay(self):
        return ((offset, record) for offset, _, record in self.entries)

    def add_commit_listener(self, listener: CommitListener) -> None:
        self._listeners.append(listener)

    def append(self, records: list[Entry]) -> tuple[int, asyncio.Future]:
        base = self.end_offset
        now = int(time.time() * 1000)
        committed = [(base + i, record) for i, (record, _version) in enumerate(records)]
        self.entries.extend((offset, now, record) for offset, record in committed)
        self.end_offset = self.high_watermark = base + len(records)
        for listener in self._listeners:
            listener(committed)
        future = asyncio.get_running_loop().create_future()
        future.set_result(self.end_offset - 1)
        return base, future

    async def close(self) -> None:
        return None
