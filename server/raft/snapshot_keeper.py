"""``SnapshotKeeper``: a ``RaftLog``'s snapshots (KIP-630): taking them, retiring the files below them, and
downloading and installing the leader's.

Snapshots are taken every ``snapshot_every_records`` records or ``snapshot_every_bytes`` bytes committed,
from the data batches ``snapshot_source`` captures at the high watermark, written in a thread, and told
to the core (``snapshot_taken``), whose log start then moves to the snapshot's end; with retention set,
the segments wholly below it are deleted or archived. A replica that fetches below the leader's log
start downloads the leader's latest snapshot by FetchSnapshot: the leader reads the chunks the core names
from the file (``_read_chunk``), the follower writes them to ``<end>-<epoch>.checkpoint.part``; once whole
it is checked and fsync'd and its install queued as a truncation is (``files.Install``), and the snapshot
listeners hear its id and path once the install is durable.
"""
from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path

from kraftwire.codec.log_layout import PARTIAL_SNAPSHOT_SUFFIX, SNAPSHOT_SUFFIX

from .core import InstallSnapshot, SnapshotChunk, WriteSnapshotChunk
from .driver import wall_ms
from .files import Install
from .log_state import LogState
from .recovery import voters_of
from .snapshots import SnapshotError, SnapshotId, check_snapshot, write_snapshot_batches

log = logging.getLogger("kraftwire.raft")


class SnapshotKeeper(LogState):
    @property
    def latest_snapshot(self) -> tuple[SnapshotId, Path] | None:
        """The newest snapshot (its id and ``.checkpoint`` file), taken here or downloaded."""
        return self._snapshot

    def add_snapshot_listener(self, listener: Callable[[SnapshotId, Path], None]) -> None:
        """Called with a snapshot downloaded from the leader once it replaced the log: what was committed
        before is that snapshot now, and ``replay()`` yields it (the brokers' view can reset from the path)."""
        self._snapshot_listeners.append(listener)

    # --- taking -----------------------------------------------------------------------------------------

    def _maybe_snapshot(self) -> None:
        every_records, every_bytes = self.config.snapshot_every_records, self.config.snapshot_every_bytes
        due = ((every_records is not None and self._since_snapshot_records >= every_records)
               or (every_bytes is not None and self._since_snapshot_bytes >= every_bytes))
        if due and self.snapshot_source is not None and (self._snapshotting is None or self._snapshotting.done()):
            self._snapshotting = asyncio.get_running_loop().create_task(self._take_snapshot())

    async def snapshot(self) -> SnapshotId | None:
        """Take a snapshot of everything committed now (waiting for one under way first)."""
        if self._snapshotting is not None and not self._snapshotting.done():
            await self._snapshotting
        self._snapshotting = asyncio.get_running_loop().create_task(self._take_snapshot())
        return await self._snapshotting

    async def _take_snapshot(self) -> SnapshotId | None:
        if self.snapshot_source is None:
            return None
        snapshot = SnapshotId(self.high_watermark, self._committed_epoch)
        if self._snapshot is not None and self._snapshot[0].end_offset >= snapshot.end_offset:
            return self._snapshot[0]
        batches = self.snapshot_source()  # captured now, consistent with the high watermark
        voters = self._core.voters_at(snapshot.end_offset).control_records()
        self._since_snapshot_records = self._since_snapshot_bytes = 0
        loop = asyncio.get_running_loop()
        try:
            path = await loop.run_in_executor(self._snapshot_io, write_snapshot_batches, self.directory, snapshot,
                                              self._committed_timestamp, wall_ms(), batches, voters)
        except Exception:  # the log goes on without this snapshot; the next one is due as usual
            log.exception("could not write snapshot %s", snapshot.file_name)
            return None
        if self._closed or self._core.log_start >= snapshot.end_offset:
            return snapshot  # a snapshot downloaded meanwhile already covers it
        self._snapshot = (snapshot, path)
        log.info("wrote snapshot %s", path.name)
        self._run(self._core.snapshot_taken(self._now(), snapshot.end_offset, path.stat().st_size))
        if self._retirable and (self.config.retention_bytes is not None or self.config.retention_ms is not None):
            await loop.run_in_executor(self._io, self.files.retire, self._retirable)
        return snapshot

    # --- serving --------------------------------------------------------------------------------------------

    def _read_chunk(self, chunk: SnapshotChunk) -> bytes:
        """The bytes of the latest snapshot a FetchSnapshot answer names (the core names only that one)."""
        if self._snapshot is None:
            raise SnapshotError(f"{self.directory}: no snapshot to read {chunk.snapshot_id} from")
        with open(self._snapshot[1], "rb") as snapshot_file:
            snapshot_file.seek(chunk.position)
            return snapshot_file.read(chunk.length)

    # --- downloading and installing ---------------------------------------------------------------------

    def _write_chunk(self, action: WriteSnapshotChunk) -> None:
        """Write a downloaded chunk to the snapshot's ``.part`` file (a new download starts a new file)."""
        if self.failure is not None:
            return
        try:
            if action.position == 0 or self._download is None or self._download[0] != action.snapshot_id:
                self._abandon_download()
                name = action.snapshot_id.file_name[:-len(SNAPSHOT_SUFFIX)] + PARTIAL_SNAPSHOT_SUFFIX
                path = self.directory / name
                self._download = (action.snapshot_id, path, open(path, "wb"))  # kept open across chunks
            self._download[2].write(action.data)
        except OSError as exc:
            self._fail(exc)

    def _abandon_download(self) -> None:
        if self._download is not None:
            _, path, partial = self._download
            partial.close()
            path.unlink(missing_ok=True)
            self._download = None

    def _install(self, action: InstallSnapshot) -> None:
        """The download is whole: check it and fsync it, then queue its install (``SegmentFiles.install``)."""
        if self._download is None or self.failure is not None:  # a chunk's write failed: nothing more is written
            return
        snapshot_id, path, partial = self._download
        self._download = None
        try:
            partial.flush()
            os.fsync(partial.fileno())
            partial.close()
            check_snapshot(path)
            self._core.installed_snapshot_voters(voters_of(path))
        except (OSError, SnapshotError) as exc:
            return self._fail(exc)
        end = snapshot_id.end_offset
        self._queue(Install(snapshot_id, path))
        self._truncating.append(end)
        self._start_flush()
        self._control.clear()
        self.high_watermark = end
        self._committed_epoch = snapshot_id.epoch
        self._since_snapshot_records = self._since_snapshot_bytes = 0

    def _announce_installs(self) -> None:
        """Installs are durable: the snapshot is the latest, and the listeners reset to it."""
        installed, self._installed = self._installed, []
        for snapshot_id, final in installed:
            log.info("installed snapshot %s from the leader", final.name)
            self._snapshot = (snapshot_id, final)
            for listener in self._snapshot_listeners:
                try:
                    listener(snapshot_id, final)
                except Exception:
                    log.exception("a snapshot listener failed")
