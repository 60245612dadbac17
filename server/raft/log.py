"""``RaftLog``: the durable metadata log of one controller, and the driver of its Raft core.

Layout under ``<data-dir>/__cluster_metadata-0/``: segments and their indexes (``segments``),
snapshots (``snapshots``), ``quorum-state`` (``quorum_state``), and ``synced-lengths.json``, the durable
record of how many bytes of the active segment are fsync'd (``files.SyncedLengths``: fsync'd before a
write below it is acknowledged; recovery refuses damage below it and cuts past it only an unfinished
write, ``segments.judge_damage``).

The log is the ``MetadataLog`` the controller writes through, and it drives a ``RaftCore``
(server/raft/core.py) with real files, timers and, given ``transport``, the wire (peer_wire.py). It is
one object made of parts, one per job (log_state.py says why mixins):

* ``recovery``: what ``open`` finds on disk (the newest valid snapshot, the segments after it, the
  quorum state), checked, and the state the core starts from;
* ``files``: the segment files, written in the I/O thread (group commit, truncation, install, retention);
* ``driver`` (``CoreDriver``): the core's actions carried out in order, the flush, the timer, commits and
  leadership;
* ``quorum_rpcs`` (``QuorumRpcs``): the Raft RPCs served (``handle``, ``describe``) and sent;
* ``snapshot_keeper`` (``SnapshotKeeper``): snapshots taken, retired below, downloaded and installed;
* ``lifecycle`` (``Lifecycle``): ``close``, ``kill`` and the harness's ``pause``/``resume``;
* ``batches``: the record batches the core's entries point at (``LogBatch``).

This module keeps what the controller calls: ``open``, ``replay``, ``append`` and the listeners. The core
holds one entry per offset from the latest snapshot's end; entries hold their batch, so a Fetch is
answered with whole batches, and the high watermark, every fetch offset, every truncation and every
snapshot's end fall between batches.

Dynamic voters (KIP-853): the core's KRaftVersionRecord and VotersRecord entries are written as control
records 5 and 6 (with a new leader's LeaderChange in one control batch), and entries read back from the
log or a Fetch answer carry them decoded, so the voter set is recovered from the log at every start;
every snapshot taken with kraft.version 1 holds the KRaftVersionRecord and VotersRecord in force at its end
after its header (the core's ``voters_at``), and the core gets them from the snapshot it starts from or
installs, so the log below a snapshot can go as with kraft.version 0; ``handle`` serves AddRaftVoter,
RemoveRaftVoter and UpdateRaftVoter, and a voter whose listeners changed sends UpdateRaftVoter to the
leader itself.

The controller on this log is active once the core leads and its ``LeaderChange`` is committed
(``active``; the leadership listeners hear each change); ``append`` anywhere else raises
``NotLeaderError``, and a leader that loses its epoch fails the appends not yet committed with it.
With one voter (the default) the core elects itself at once and ``open`` returns once it is active.

Start-up (``open``): read ``quorum-state`` (a damaged one stops start-up), load the newest valid
snapshot, check every batch after it (an unfinished write at the end is cut away, other damage stops
start-up; ``kraftwire log verify`` makes the same judgement, ``recovery.recover``),
then build the core from the log and the quorum state. ``replay`` yields the snapshot's records
and the committed part of the log after it; a record of a type or version kraftwire has no schema for
stops it (``segments.UnknownRecordError``, as Kafka's metadata loader fails on one).

Retention of the files is off by default (the audit reads the whole history); with ``retention_bytes``
or ``retention_ms``, segments wholly below the newest snapshot are deleted, or moved to ``archive_dir``.

Differences from Kafka: the core keeps the log's batches in memory too (the metadata log is small);
the core's log start moves to every snapshot's end, whatever the retention of the files (a replica
that lags behind it downloads the snapshot); FetchSnapshot serves only the latest snapshot (Kafka serves
any it still has; a follower asking for an older one is answered SNAPSHOT_NOT_FOUND and fetches again);
an observer's Fetch is not held back while the high watermark has moved since its last answer (else it
could wait in vain to learn that what it holds is committed; Kafka 4.1's Fetch v18 carries the
fetcher's high watermark for this, the controllers speak v17); no ``.timeindex`` files; index files are
not pre-allocated, and are fsync'd at roll and close rather than with every commit (recovery rebuilds
them); segments roll by size only (no ``segment.ms``); damage in the middle of the log stops start-up
instead of truncating the log there; ``synced-lengths.json`` is kraftwire's own file. As in Kafka,
snapshots are deleted only once the log start moves past them, so with retention off they accumulate (one
per 20 MiB of records by default).
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from kraftwire.codec import MalformedError
from kraftwire.codec.message import Message
from kraftwire.codec.records import UnknownRecordType, decode_frame, metadata_batch, read_batch

from .batches import LogBatch, metadata_frame
from .core import NotLeaderError, RaftCore
from .driver import CoreDriver, wall_ms
from .files import SYNCED_LENGTHS, LogCorruptError, LogFailedError, RaftConfig
from .lifecycle import Lifecycle
from .log_state import QuorumDescription, ReplicaProgress, Transport
from .quorum_rpcs import QuorumRpcs
from .recovery import election_state, log_entries, read_synced_lengths, recover, started_static
from .segments import UnknownRecordError
from .snapshot_keeper import SnapshotKeeper
from .snapshots import load_snapshot_frames, read_snapshot
from .voters import VoterSet

__all__ = ["SYNCED_LENGTHS", "LogCorruptError", "LogFailedError", "QuorumDescription", "RaftConfig", "RaftLog",
           "ReplicaProgress", "Transport", "read_synced_lengths"]

log = logging.getLogger("kraftwire.raft")


class RaftLog(CoreDriver, QuorumRpcs, SnapshotKeeper, Lifecycle):
    """One controller's metadata log and the driver of its Raft core (the module docstring says how)."""

    # --- start-up ------------------------------------------------------------------------------------

    async def open(self) -> None:
        loop = asyncio.get_running_loop()
        recovered = await loop.run_in_executor(self._io, recover, self.directory, self.config,
                                               self.bootstrap_kraft_version)
        self._files, self._snapshot, self._snapshot_voters = recovered.files, recovered.snapshot, \
            recovered.snapshot_voters
        if recovered.snapshot:
            self._committed_epoch = recovered.snapshot[0].epoch
        entries, snapshot_voters = log_entries(recovered)
        if self.bootstrap_kraft_version >= 1 and started_static(recovered, entries, snapshot_voters):
            # As kafka-storage format fixes it, the first start does here: a log that holds records but no
            # KRaftVersionRecord was started at kraft.version 0 and keeps its static voters.
            log.info("%s was started with static voters (kraft.version 0): it keeps them", self.directory)
            self.bootstrap_kraft_version = 0
            self.bootstrap_voters = VoterSet.static(self.bootstrap_voters.ids)
        epoch, leader, voted = election_state(recovered, entries)
        self.high_watermark = recovered.snapshot_end
        self._active_changed = asyncio.Event()
        snapshot = (self._snapshot[0], self._snapshot[1].stat().st_size) if self._snapshot else None
        self.core = RaftCore(self.node_id, self.bootstrap_voters, self.rng, self._now(), timers=self.timers,
                             epoch=epoch, leader_id=leader, voted_id=voted, log=entries, directory_id=self.directory_id,
                             kraft_version=self.bootstrap_kraft_version, snapshot=snapshot,
                             snapshot_voters=snapshot_voters, bootstrap=self.bootstrap_servers)
        self._arm_timer()
        if self.voters == (self.node_id,):
            await self._until_active(self._active_changed)
        log.info("metadata log open at %s: epoch %d, offsets %d..%d, high watermark %d, voters %s", self.directory,
                 self.epoch, self._log_start_offset(), self.end_offset, self.high_watermark, list(self.voters))

    async def _until_active(self, changed: asyncio.Event) -> None:
        """A sole voter's open waits until it leads (or a write failed)."""
        while not self.active and self.failure is None:
            changed.clear()
            await changed.wait()
        if self.failure is not None:
            raise LogFailedError(self.failure)

    def _log_start_offset(self) -> int:
        return self._files.log_start_offset() if self._files is not None else 0

    # --- reading ------------------------------------------------------------------------------------

    def replay(self, frames: Callable[[list[bytes], int], None] | None = None) -> Iterator[tuple[int, Message]]:
        """Committed metadata records: the snapshot's (at offset end - 1), then the log's up to the high
        watermark (everything, once a sole voter has opened the log). With ``frames``, the snapshot's
        records are not yielded but handed to ``frames(framed records, end - 1)`` undecoded, a batch at
        a time, before the first record is yielded (``MetadataImage.apply_frames``: a snapshot's load)."""
        start = 0
        if self._snapshot is not None:
            snapshot, path = self._snapshot
            start = snapshot.end_offset
            if frames is not None:
                load_snapshot_frames(path, lambda values: frames(values, start - 1))
            else:
                for record in read_snapshot(path):
                    yield start - 1, record
        for batch in self._batches(start, self.high_watermark):
            try:
                records = batch.decoded()
            except UnknownRecordType:
                raise self._unknown_record(batch) from None
            except MalformedError as exc:
                raise LogCorruptError(f"{self.directory}: a record of the batch at offset {batch.base} cannot be "
                                      f"decoded: {exc.what}") from None
            yield from ((offset, record) for offset, record in records if offset >= start)

    def _unknown_record(self, batch: LogBatch) -> UnknownRecordError:
        """The refusal naming the segment file and offset of the first record of ``batch`` with no schema."""
        path = self.files.path_holding(batch.base)
        for offset, _timestamp, _key, value in read_batch(batch.data, 0).records:
            try:
                decode_frame(metadata_frame(value))
            except UnknownRecordType as exc:
                return UnknownRecordError(path, offset, exc)
        raise AssertionError("the batch decoded once and not again")

    def synced_lengths(self) -> dict[str, int]:
        """Bytes of each segment file known to be fsync'd."""
        return self._files.synced_lengths() if self._files is not None else {}

    # --- listeners ---------------------------------------------------------------------------------

    def add_commit_listener(self, listener: Callable[[list[tuple[int, Any]]], None]) -> None:
        self._listeners.append(listener)

    def add_leadership_listener(self, listener: Callable[[bool], None]) -> None:
        """Called with True once this replica's controller is active, with False when it stops being so."""
        self._leadership_listeners.append(listener)

    # --- appending -----------------------------------------------------------------------------------

    def append(self, records: Sequence[tuple[Message, int | None]]) -> tuple[int, asyncio.Future[int]]:
        """Append one batch on the active controller: (base offset, future resolved with its last offset
        once committed). NotLeaderError when this controller is not the active one."""
        loop = asyncio.get_running_loop()
        base = self.end_offset
        if self._failed is not None:
            future: asyncio.Future[int] = loop.create_future()
            future.set_exception(LogFailedError(self._failed))
            return base, future
        core = self._core
        if not self.active:
            raise NotLeaderError(core.leader_id, core.epoch)
        now = wall_ms()
        future = loop.create_future()
        batch = LogBatch(base, base + len(records) - 1, metadata_batch(base, core.epoch, now, records),
                         core.epoch, now, False, [(base + i, record) for i, (record, _version) in enumerate(records)],
                         future)
        self._run(core.append(self._now(), batch, len(records))[1])
        return base, future
