"""``LeaderEpochCache``: the first offset each leader epoch wrote, kept in ``leader-epoch-checkpoint``
with Kafka's rules (LeaderEpochFileCache): a new epoch is fsync'd before its first batch counts; entries
are cut from the end on truncation and from the start when the log start offset rises."""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from .checkpoints import LEADER_EPOCH_CHECKPOINT, read_epoch_checkpoint, write_epoch_checkpoint

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


class EpochEntry(NamedTuple):
    epoch: int
    start_offset: int


class LeaderEpochCache:
    """The epochs of one partition's log, ordered by epoch and by start offset."""

    def __init__(self, directory: Path):
        self.path = directory / LEADER_EPOCH_CHECKPOINT
        self._entries = [EpochEntry(epoch, offset) for epoch, offset in read_epoch_checkpoint(self.path)]

    @property
    def entries(self) -> tuple[EpochEntry, ...]:
        return tuple(self._entries)

    @property
    def latest_epoch(self) -> int | None:
        return self._entries[-1].epoch if self._entries else None

    @property
    def earliest_entry(self) -> EpochEntry | None:
        return self._entries[0] if self._entries else None

    def assign(self, epoch: int, start_offset: int) -> bool:
        """Record that ``epoch`` starts at ``start_offset`` (written and fsync'd when it is new); entries
        it contradicts (an epoch as high or a start as late) go. Negative epochs are ignored."""
        if epoch < 0 or start_offset < 0:
            return False
        latest = self._entries[-1] if self._entries else None
        if latest is not None and latest.epoch == epoch and latest.start_offset <= start_offset:
            return False
        while self._entries and (self._entries[-1].epoch >= epoch or self._entries[-1].start_offset >= start_offset):
            self._entries.pop()
        self._entries.append(EpochEntry(epoch, start_offset))
        self.flush()
        return True

    def end_offset_for(self, requested: int, log_end_offset: int) -> tuple[int, int]:
        """OffsetForLeaderEpoch's (epoch, end offset): the end of the largest epoch <= ``requested``,
        which is the start of the next epoch or, for the latest epoch, the log end offset;
        (-1, -1) for UNDEFINED or an epoch beyond the latest."""
        if requested == UNDEFINED_EPOCH:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if self._entries and self._entries[-1].epoch == requested:
            return requested, log_end_offset
        higher = next((entry for entry in self._entries if entry.epoch > requested), None)
        if higher is None:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        floor = [entry for entry in self._entries if entry.epoch <= requested]
        return (floor[-1].epoch if floor else requested), higher.start_offset

    def epoch_for_offset(self, offset: int) -> int | None:
        previous = None
        for entry in self._entries:
            if entry.start_offset == offset:
                return entry.epoch
            if entry.start_offset > offset:
                return previous
            previous = entry.epoch
        return previous

    def truncate_from_end(self, end_offset: int) -> None:
        """Drop the epochs starting at or after ``end_offset`` (the log was truncated there)."""
        if end_offset >= 0 and self._entries and self._entries[-1].start_offset >= end_offset:
            while self._entries and self._entries[-1].start_offset >= end_offset:
                self._entries.pop()
            self.flush()

    def truncate_from_start(self, start_offset: int) -> None:
        """The log now starts at ``start_offset``: the epoch holding it starts there, earlier ones go."""
        removed = [entry for entry in self._entries if entry.start_offset <= start_offset]
        if removed:
            self._entries = [EpochEntry(removed[-1].epoch, start_offset)] + self._entries[len(removed):]
            self.flush()

    def clear(self) -> None:
        self._entries = []
        self.flush()

    def flush(self) -> None:
        if self.path.parent.exists():
            write_epoch_checkpoint(self.path, [tuple(entry) for entry in self._entries])  # type: ignore[misc]
