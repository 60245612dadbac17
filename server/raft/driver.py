"""``CoreDriver``: carries out the Raft core's actions for a ``RaftLog``, in the order the core returns them.

``PersistState`` writes ``quorum-state`` (fsync'd) before the next action; ``AppendLog`` queues the
entries' record batches, whose partition leader epoch is the entries' epoch (a new leader's
``LeaderChange`` entry becomes a LeaderChangeMessage control batch); ``TruncateLog`` queues a
truncation; ``FlushLog`` starts the one flush at a time that runs in the I/O thread: it carries out every
queued write and truncation, fsyncs once (group commit), and reports the end fsync'd back with
``flush_completed``. ``Send`` goes to ``QuorumRpcs._send``; ``Commit`` hands the newly committed records to
the commit listeners, then resolves the appends' futures. One ``loop.call_at`` is armed for the core's
next deadline, and after every call the driver follows leadership: the controller is active once the
core leads and its ``LeaderChange`` is committed.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

from kraftwire.codec.records import control_batch

from .batches import LogBatch, control_record, logged_batch, past_batch
from .core import (AppendLog, Commit, Entry, FlushLog, InstallSnapshot, NotLeaderError, PersistState, RetireLog, Role,
                   Send, TruncateLog, WriteSnapshotChunk)
from .files import FileOp, LogFailedError, Truncate, WriteBatch
from .log_state import LogState
from .quorum_state import QuorumState, write_quorum_state

log = logging.getLogger("kraftwire.raft")


def wall_ms() -> int:
    return int(time.time() * 1000)


class CoreDriver(LogState):
    def resign(self) -> None:
        """Step down as leader (EndQuorumEpoch to the voters, best-replicated first); a no-op elsewhere."""
        self._run(self._core.resign(self._now()))

    def _run(self, actions: Sequence[object]) -> None:
        """Carry out the core's actions in order, then re-arm the timer and follow leadership."""
        for action in actions:
            if isinstance(action, PersistState):
                self._persist(action)
            elif isinstance(action, TruncateLog):
                self._queue(Truncate(action.offset))
                self._truncating.append(action.offset)
                self._start_flush()  # the Fetch the core sends next waits for this truncation's fsync
                for offset in [o for o in self._control if o >= action.offset]:
                    del self._control[offset]
            elif isinstance(action, AppendLog):
                self._queue_entries(action.offset, action.entries)
            elif isinstance(action, FlushLog):
                self._start_flush()
            elif isinstance(action, Send):
                self._send(action.message)
            elif isinstance(action, Commit):
                self._deliver(action.high_watermark)
            elif isinstance(action, RetireLog):
                self._retirable = action.log_start  # _take_snapshot retires the files below it
            elif isinstance(action, WriteSnapshotChunk):
                self._write_chunk(action)
            elif isinstance(action, InstallSnapshot):
                self._install(action)
        self._arm_timer()
        self._follow_leadership()
        self._maybe_update_voter()

    def _persist(self, action: PersistState) -> None:
        try:
            if self.kraft_version >= 1:  # Kafka's quorum-state version 1: the vote names a directory too
                voted = next((v.key.directory_id for v in self._core.voter_set.voters
                              if v.key.id == action.voted_id), None)
                state = QuorumState(action.leader_id, action.epoch, action.voted_id, (), 1, voted)
            else:
                state = QuorumState(action.leader_id, action.epoch, action.voted_id, self.voters)
            write_quorum_state(self.directory, state)
        except OSError as exc:
            self._fail(exc)

    def _queue(self, op: FileOp) -> None:
        self._ops.append(op)

    def _queue_entries(self, offset: int, entries: Sequence[Entry]) -> None:
        i = 0
        while i < len(entries):
            batch = logged_batch(entries[i])
            if batch is not None:
                if batch.base == offset + i:
                    self._queue(WriteBatch(batch))
                i = past_batch(entries, i, offset, batch)
            else:  # the core's own control entries, written by this replica as leader
                i += self._queue_control(offset + i, entries[i:])

    def _queue_control(self, base: int, entries: Sequence[Entry]) -> int:
        """One control batch for a run of the core's control entries: a new leader's LeaderChange (with,
        in a dynamic quorum's first epoch, the bootstrap KRaftVersionRecord and VotersRecord, in one
        batch as Kafka writes them), or a leader's new VotersRecord."""
        run = []
        for entry in entries:
            if logged_batch(entry) is not None:
                break
            run.append(entry)
        records = [control_record(entry.data, self.voters, self.node_id) for entry in run]
        now = wall_ms()
        batch = LogBatch(base, base + len(run) - 1, control_batch(base, run[0].epoch, now, records), run[0].epoch,
                         now, True, [])
        for offset in range(base, base + len(run)):
            self._control[offset] = batch
        self._queue(WriteBatch(batch))
        return len(run)

    def _start_flush(self) -> None:
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self) -> None:
        loop = asyncio.get_running_loop()
        while self._ops and self.failure is None:
            if self.config.group_commit:
                group, self._ops = self._ops, []
            else:
                cut = next((i + 1 for i, op in enumerate(self._ops) if isinstance(op, WriteBatch)), len(self._ops))
                group, self._ops = self._ops[:cut], self._ops[cut:]
            truncations = sum(1 for op in group if not isinstance(op, WriteBatch))
            try:
                end, installed = await loop.run_in_executor(self._io, self.files.write_and_sync, group)
            except OSError as exc:
                self._fail(exc)
                return
            self._installed.extend(installed)
            self.fsync_count += 1
            await self._unfrozen()
            del self._truncating[:truncations]
            self._announce_installs()
            if self._truncating:  # a truncation queued meanwhile: only what lies below it stays durable
                end = min(end, *self._truncating)
            else:
                held, self._held = self._held, []
                for message in held:
                    self._send(message)
            self._run(self._core.flush_completed(self._now(), end))

    def _arm_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        frozen = self._resumed is not None or self._closed or self.failure is not None
        deadline = self.core.next_deadline() if self.core is not None and not frozen else None
        if deadline is not None:
            self._timer = asyncio.get_running_loop().call_at((deadline + 1) / 1000, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self._run(self._core.on_timer(self._now()))

    def _follow_leadership(self) -> None:
        core = self._core
        leading = core.role is Role.LEADER
        if leading and self._leader_epoch != core.epoch:
            self._leader_epoch = core.epoch
            start = core.log_end
            while start > core.log_start and core.entry(start - 1).epoch == core.epoch:
                start -= 1
            self._leader_change_offset = start
            self._progress = {}
        active = leading and core.epoch == self._leader_epoch and self.high_watermark > self._leader_change_offset
        if active == self.active:
            return
        self.active = active
        log.info("node %d %s the active controller (epoch %d)", self.node_id, "is now" if active else "is no longer",
                 core.epoch)
        if not active:
            error = NotLeaderError(core.leader_id, core.epoch)
            for batch in self._batches_awaiting():
                self._settle(batch, error)
        if self._active_changed is not None:
            self._active_changed.set()
        for listener in self._leadership_listeners:
            try:
                listener(active)
            except Exception:
                log.exception("a leadership listener failed")

    @staticmethod
    def _settle(batch: LogBatch, error: BaseException) -> None:
        if batch.future is not None:
            batch.future.set_exception(error)

    def _batches_awaiting(self) -> list[LogBatch]:
        """This replica's appends past the high watermark whose futures are still open."""
        core = self._core
        found, seen = [], set()
        for offset in range(max(self.high_watermark, core.log_start), core.log_end):
            batch = core.entry(offset).data
            if isinstance(batch, LogBatch) and id(batch) not in seen:
                seen.add(id(batch))
                if batch.future is not None and not batch.future.done():
                    found.append(batch)
        return found

    def _deliver(self, high_watermark: int) -> None:
        """Hand the records below the new high watermark to the listeners, then resolve their appends."""
        done = list(self._batches(self.high_watermark, high_watermark))
        if not done:
            return
        # decoded only for listeners: a log opened with one voter commits its whole tail before any listens
        committed = [record for batch in done for record in batch.decoded()] if self._listeners else []
        self.high_watermark = done[-1].last + 1
        self._committed_epoch = done[-1].epoch
        self._committed_timestamp = done[-1].timestamp
        self._since_snapshot_records += sum(b.last - b.base + 1 for b in done if not b.control)
        self._since_snapshot_bytes += sum(len(b.data) for b in done)
        if committed:
            for listener in self._listeners:
                try:
                    listener(committed)
                except Exception:
                    log.exception("a commit listener failed")
        self.commit_count += len(done)
        for batch in done:
            if batch.future is not None and not batch.future.done():
                batch.future.set_result(batch.last)
            # a local append's records were for its commit: from now on they are read from its bytes
            # (a replay), not kept alive (a 10,000-record batch holds 20,000 objects)
            batch.records = None
        self._maybe_snapshot()

    def _fail(self, exc: BaseException) -> None:
        """A write or fsync failed (ENOSPC, EIO): nothing more is written, not even at close, and every
        append not yet committed fails; what was fsync'd before stays the log's durable end."""
        log.critical("metadata log write failed, accepting no more appends: %s", exc)
        self.failure = f"cannot write the metadata log in {self.directory}: {exc}"
        self._failed = f"an earlier write of the metadata log failed: {exc}"
        self._ops = []
        error = LogFailedError(self.failure)
        for batch in self._batches_awaiting():
            self._settle(batch, error)
        self._arm_timer()
        if self._active_changed is not None:
            self._active_changed.set()  # an open waiting to lead gives up
        if self.on_failure is not None:
            self.on_failure(self.failure)
