"""``LogState``: the state one ``RaftLog`` keeps, shared by the parts it is made of.

``RaftLog`` (log.py) is one object built from a few mixins over this state, one per job: ``CoreDriver``
(driver.py) carries out the core's actions, ``QuorumRpcs`` (quorum_rpcs.py) serves and sends the Raft
RPCs, ``SnapshotKeeper`` (snapshot_keeper.py) takes, downloads and installs snapshots, and ``Lifecycle``
(lifecycle.py) closes, kills and pauses the log. Mixins rather than separate objects because every job
reads and moves the same few facts (the core, the high watermark, the queued file work, whether the
log failed or is frozen), and the harness and tests see them as attributes of the log. What each part
offers the others is declared below, so each module is checked on its own; the files themselves
(``files.SegmentFiles``) and what ``open`` finds on disk (``recovery``) are plain objects the state holds.
"""
from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO
from uuid import UUID

from kraftwire.codec.log_layout import PARTITION_DIR
from kraftwire.codec.message import Message as WireMessage

from .batches import LogBatch, logged_batch
from .core import Entry, InstallSnapshot, Message, RaftCore, Role, SnapshotChunk, Timers, WriteSnapshotChunk
from .files import FileOp, LogFailedError, RaftConfig, SegmentFiles
from .quorum_state import NO_ID
from .snapshots import SnapshotId
from .voters import NO_DIRECTORY, SnapshotVoters, VoterSet

# transport(destination id, request, version) -> response; raises (or never answers) when the link is down
Transport = Callable[[int, WireMessage, int], Awaitable[WireMessage]]
Listeners = tuple[tuple[str, str, int], ...]  # (listener name, host, port)


@dataclass
class ReplicaProgress:
    """A replica as the leader sees it, for DescribeQuorum (times in wall-clock ms, -1: never)."""
    replica_id: int
    end_offset: int = -1
    last_fetch_ms: int = -1
    last_caught_up_ms: int = -1
    directory_id: UUID | None = NO_DIRECTORY


@dataclass(frozen=True)
class QuorumDescription:
    leader_id: int
    epoch: int
    high_watermark: int
    voters: list[ReplicaProgress]
    observers: list[ReplicaProgress]
    listeners: dict[int, Listeners] = field(default_factory=dict)  # a voter's, when logged


DEFAULT_CONFIG = RaftConfig()
DEFAULT_TIMERS = Timers()


class LogState:
    def __init__(self, data_dir: str | Path, node_id: int, config: RaftConfig = DEFAULT_CONFIG,
                 voters: list[int] | VoterSet | None = None, timers: Timers = DEFAULT_TIMERS,
                 rng: random.Random | None = None, cluster_id: str = "", kraft_version: int = 0,
                 directory_id: UUID | None = NO_DIRECTORY):
        """``voters``: the bootstrap voter set, ids (``controller.quorum.voters``) or a ``VoterSet`` with
        directory ids and listeners; ``kraft_version`` 1 lets the set change (KIP-853), and the log's
        VotersRecords then rule over the bootstrap set. ``directory_id``: this replica's metadata log
        directory id (meta.properties' ``directory.id``)."""
        self.directory = Path(data_dir) / PARTITION_DIR
        self.node_id = node_id
        self.config = config
        self.bootstrap_voters = voters if isinstance(voters, VoterSet) else VoterSet.static(voters or [node_id])
        self.bootstrap_kraft_version = kraft_version
        self.directory_id = directory_id
        self.endpoints: Listeners = ()  # this replica's controller listeners, set by the host
        self.bootstrap_servers: tuple[int, ...] = ()  # the ids the transport reaches the bootstrap servers at
        self._leader_endpoints: dict[int, tuple[str, int]] = {}  # a leader's address, as an answer named it
        self.timers = timers
        self.rng = rng or random.Random()
        self.cluster_id = cluster_id
        self.transport: Transport | None = None  # how requests reach the other voters
        self.core: RaftCore | None = None
        self.high_watermark = 0
        self.active = False
        # -> the committed image's data batches, (record count, bytes): ``MetadataImage.snapshot_batches``
        self.snapshot_source: Callable[[], Iterable[tuple[int, bytes]]] | None = None
        self.fsync_count = 0
        self.commit_count = 0  # batches committed
        self._listeners: list[Callable[[list[tuple[int, Any]]], None]] = []
        self._snapshot_listeners: list[Callable[[SnapshotId, Path], None]] = []
        self._retirable = 0  # the core's log start: files wholly below it may be retired
        self._installed: list[tuple[SnapshotId, Path]] = []  # installs the I/O thread carried out, to announce
        self._download: tuple[SnapshotId, Path, BinaryIO] | None = None  # (id, .part path, open file)
        self._leadership_listeners: list[Callable[[bool], None]] = []
        # the control batches this replica wrote as leader (LeaderChange, KRaftVersion, Voters), by offset
        self._control: dict[int, LogBatch] = {}
        self._voter_update_due = 0  # when this voter may next send UpdateRaftVoter (its listeners changed)
        self._ops: list[FileOp] = []  # file work queued, not carried out yet
        self._truncating: list[int] = []  # truncations queued or under way, not yet fsync'd
        self._held: list[Message] = []  # Fetch requests waiting for a truncation to be fsync'd
        self._flushing: asyncio.Task[None] | None = None
        self._snapshotting: asyncio.Task[SnapshotId | None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._incoming: dict[tuple[int, int], asyncio.Future[Message]] = {}
        self._incoming_ids = itertools.count(1)
        self._leader_epoch = -1  # the epoch this replica last led
        self._leader_change_offset = -1
        self._progress: dict[int, ReplicaProgress] = {}
        self._observers: dict[int, ReplicaProgress] = {}
        self._told_observers: dict[int, int] = {}  # the high watermark each observer's last answer carried
        self._active_changed: asyncio.Event | None = None
        self._resumed: asyncio.Event | None = None  # set while the harness has the replica paused
        self._closed = False
        self._failed: str | None = None  # why appends are refused: a failed write, or the log is closed
        self.failure: str | None = None  # why a write or fsync failed, once one has
        self.on_failure: Callable[[str], None] | None = None  # told once, after the pending appends failed
        self._files: SegmentFiles | None = None  # once open
        self._snapshot: tuple[SnapshotId, Path] | None = None
        self._snapshot_voters = SnapshotVoters()  # the voter records the snapshot the log started from holds
        self._since_snapshot_records = 0
        self._since_snapshot_bytes = 0
        self._committed_epoch = 0
        self._committed_timestamp = -1
        self._io = ThreadPoolExecutor(1, thread_name_prefix="kraftwire-log-io")
        self._snapshot_io = ThreadPoolExecutor(1, thread_name_prefix="kraftwire-snapshot")

    # --- the core's view ------------------------------------------------------------------------------

    @property
    def voters(self) -> tuple[int, ...]:
        """The ids of the latest voter set in the log (the bootstrap set before the log is open)."""
        return self.core.voters if self.core is not None else self.bootstrap_voters.ids

    @property
    def kraft_version(self) -> int:
        return self.core.kraft_version if self.core is not None else self.bootstrap_kraft_version

    @property
    def epoch(self) -> int:
        return self.core.epoch if self.core is not None else 0

    @property
    def end_offset(self) -> int:
        return self.core.log_end if self.core is not None else 0

    @property
    def leader_id(self) -> int:
        return self.core.leader_id if self.core is not None else NO_ID

    @property
    def role(self) -> Role | None:
        return self.core.role if self.core is not None else None

    @property
    def _core(self) -> RaftCore:
        """The core, once the log is open."""
        if self.core is None:
            raise LogFailedError("the metadata log is not open")
        return self.core

    @property
    def files(self) -> SegmentFiles:
        """The segment files, once the log is open."""
        if self._files is None:
            raise LogFailedError("the metadata log is not open")
        return self._files

    def _now(self) -> int:
        return int(asyncio.get_running_loop().time() * 1000)

    def _batches(self, start: int, end: int) -> Iterator[LogBatch]:
        """The batches that hold offsets ``start`` .. ``end - 1`` and end before ``end``."""
        core = self._core
        offset = max(start, core.log_start)
        while offset < end:
            batch = self._batch_at(offset, core.entry(offset))
            if batch is None:
                offset += 1
                continue
            if batch.last >= end:
                return
            yield batch
            offset = batch.last + 1

    def _batch_at(self, offset: int, entry: Entry) -> LogBatch | None:
        batch = logged_batch(entry)
        if batch is not None:
            return batch
        return self._control.get(offset)  # a LeaderChange this replica wrote as leader; None below the log start

    # --- what each part offers the others ----------------------------------------------------------------

    def _run(self, actions: Sequence[object]) -> None:  # driver.CoreDriver
        raise NotImplementedError

    def _fail(self, exc: BaseException) -> None:  # driver.CoreDriver
        raise NotImplementedError

    def _queue(self, op: FileOp) -> None:  # driver.CoreDriver
        raise NotImplementedError

    def _start_flush(self) -> None:  # driver.CoreDriver
        raise NotImplementedError

    def _arm_timer(self) -> None:  # driver.CoreDriver
        raise NotImplementedError

    def _batches_awaiting(self) -> list[LogBatch]:  # driver.CoreDriver
        raise NotImplementedError

    def _send(self, message: Message) -> None:  # quorum_rpcs.QuorumRpcs
        raise NotImplementedError

    def _maybe_update_voter(self) -> None:  # quorum_rpcs.QuorumRpcs
        raise NotImplementedError

    def _maybe_snapshot(self) -> None:  # snapshot_keeper.SnapshotKeeper
        raise NotImplementedError

    def _write_chunk(self, action: WriteSnapshotChunk) -> None:  # snapshot_keeper.SnapshotKeeper
        raise NotImplementedError

    def _install(self, action: InstallSnapshot) -> None:  # snapshot_keeper.SnapshotKeeper
        raise NotImplementedError

    def _announce_installs(self) -> None:  # snapshot_keeper.SnapshotKeeper
        raise NotImplementedError

    def _abandon_download(self) -> None:  # snapshot_keeper.SnapshotKeeper
        raise NotImplementedError

    def _read_chunk(self, chunk: SnapshotChunk) -> bytes:  # snapshot_keeper.SnapshotKeeper
        raise NotImplementedError

    async def _unfrozen(self) -> None:  # lifecycle.Lifecycle
        raise NotImplementedError
