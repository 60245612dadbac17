"""``Lifecycle``: how a ``RaftLog`` stops, and the harness's pause.

``close`` finishes the writes under way (a leader of several voters resigns first, so another takes over
at once); ``kill`` stops as a killed process stops, losing what was written but not fsync'd; ``pause``
freezes the replica (its timer stops and nothing reaches its core) until ``resume``.
"""
from __future__ import annotations

import asyncio

from .log_state import LogState


class Lifecycle(LogState):
    async def close(self) -> None:
        """Finish the writes under way (their appends commit), then close the files; later appends fail.
        A leader of several voters resigns first (EndQuorumEpoch), so another takes over at once."""
        if self._closed:
            return
        self._closed = True
        if self.active and len(self.voters) > 1:
            self._run(self._core.resign(self._now()))
            if self._tasks:
                await asyncio.wait(list(self._tasks), timeout=self.timers.request_timeout_ms / 1000)
        self._failed = self._failed or "the metadata log is closed"
        self._stop_driving()
        if self._flushing is not None:
            await self._flushing
        if self._snapshotting is not None:
            await self._snapshotting
        self._abandon_download()
        if self._files is not None and self._files.segments:
            await asyncio.get_running_loop().run_in_executor(self._io, self._files.close, self.failure is not None)
        self._io.shutdown()
        self._snapshot_io.shutdown()

    async def kill(self) -> None:
        """Stop as a killed process stops: nothing more is written, sent or answered, and what was
        written but not fsync'd is lost (the active segment is cut back to its fsync'd length)."""
        if self._closed:
            return
        self._closed = True
        self._failed = "the controller was killed"
        self._ops = []
        self._stop_driving()
        if self._flushing is not None:
            self._flushing.cancel()
        if self._snapshotting is not None:
            self._snapshotting.cancel()
        if self._download is not None:  # a download cut short: its .part file stays, as a crash leaves it
            self._download[2].close()
            self._download = None
        if self._files is not None and self._files.segments:
            await asyncio.get_running_loop().run_in_executor(self._io, self._files.drop_unsynced)
        self._io.shutdown()
        self._snapshot_io.shutdown(wait=False)

    def _stop_driving(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for task in list(self._tasks):
            task.cancel()
        for waiting in self._incoming.values():
            waiting.cancel()
        if self._resumed is not None:
            self._resumed.set()

    # --- freezing (the harness's pause) --------------------------------------------------------------

    def pause(self) -> None:
        """Freeze the replica: its timer stops, and nothing reaches its core (answers to its requests,
        finished fsyncs, other replicas' requests) until ``resume``."""
        if self._resumed is None:
            self._resumed = asyncio.Event()
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    def resume(self) -> None:
        if self._resumed is not None:
            self._resumed.set()
            self._resumed = None
            if not self._closed:
                self._arm_timer()

    async def _unfrozen(self) -> None:
        while self._resumed is not None and not self._closed:
            await self._resumed.wait()
