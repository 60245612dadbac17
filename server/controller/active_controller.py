"""The active controller: the one writer of the metadata log.

All state changes go through ``write``: a pure decision ``(image, ...) -> ControllerResult`` runs
against the *working* image (committed records plus those appended but not yet committed), its records
are appended as one atomic batch and applied to the working image at once, and the response is returned
only after the batch commits. A decision that writes nothing still read the working image: its answer
waits for the last batch appended before it to commit, as Kafka's controller completes a read-only
operation once the log reaches its highest pending offset (otherwise a CreateTopics retried right after
a first one reached the controller is told TOPIC_ALREADY_EXISTS of a topic not committed yet); if that
batch failed (the log's directory failed), so does the decision, as every write after it would.

The *committed* image, which every read is served from, advances only from the log's commit
notifications (taking the partition states the working image built from the same records where it can,
so a bulk change is merged once). Everything runs on one asyncio loop, so a decision and its append never
interleave with another write: no locks.

Broker sessions (Kafka's BrokerHeartbeatManager) are soft state here, not records: a broker whose
heartbeats stop for ``session_timeout_ms`` is fenced by a write like any other. Time the event loop
stood still does not count against a session (the heartbeats sent meanwhile could not be read yet).
On start, every broker the log holds as registered and unfenced gets a session that starts then, as a
newly active Kafka controller gives them (BrokerHeartbeatManager): one that never heartbeats again is
fenced after the timeout and its leaderships move. Such an inherited session does not make a new
incarnation's registration a duplicate, so the restarted process's own brokers re-register at once.
"""
from __future__ import annotations

import asyncio
import functools
import logging
import random
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kraftwire.codec.message import Message
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.metadata.record_versions import (DEFAULT_METADATA_VERSION, METADATA_VERSION_FEATURE,
                                                      bootstrap_records, metadata_version_level, at_level)
from kraftwire.server.metadata.view import CommitListener
from .broker_lifecycle import fence_broker
from .metadata_log import MetadataLog, NotControllerError
from .result import ControllerResult

logger = logging.getLogger("kraftwire.controller")

Decision = Callable[[MetadataImage], ControllerResult]


class Controller:
    def __init__(self, metadata_log: MetadataLog, node_id: int = 3000, cluster_id: str | None = None,
                 session_timeout_ms: int = 9000, rng: random.Random | None = None,
                 metadata_version: str = DEFAULT_METADATA_VERSION):
        self.log = metadata_log
        # written at the first start only; a log that has a metadata.version keeps it
        self.bootstrap_metadata_version_level = metadata_version_level(metadata_version)
        self.node_id = node_id
        self.cluster_id = cluster_id or "kraftwire-" + uuid.uuid4().hex[:12]
        self.session_timeout_ms = session_timeout_ms
        self.rng = rng or random.Random()  # every random choice of the decisions (placement, topic ids)
        self.committed = MetadataImage()
        self.working = MetadataImage()
        self._sessions: dict[int, float] = {}  # broker id -> monotonic deadline
        self._inherited: set[int] = set()  # sessions given at start, not yet renewed by the broker
        self._commit_listeners: list[CommitListener] = []
        # offset -> (record, state before, state after) of the partition records this controller appended and
        # applied to the working image: on commit the committed image adopts the state the working image
        # built (when it still holds the same state before), instead of merging the record a second time
        self._changed_in_working: dict[int, tuple] = {}
        self._expiry_task: asyncio.Task | None = None
        self._frozen_at: float | None = None  # monotonic time the harness froze this controller (as SIGSTOP)
        self.active = False  # the log made this the active controller: the one that writes
        self._leadership_listeners: list[Callable[[bool], None]] = []
        self._bootstrap_writes: asyncio.Future | None = None
        self._last_append: asyncio.Future | None = None  # the commit of the last batch this controller appended
        self.commit_observer: Callable[[float], None] | None = None  # told each write's seconds to commit

    async def start(self) -> None:
        await self.log.open()
        self._replay_into(self.committed)
        self.log.add_commit_listener(self._on_commit)
        self.log.add_snapshot_listener(self._on_snapshot_installed)
        self.log.add_leadership_listener(self._leadership_changed)
        self.log.snapshot_source = lambda: self.committed.snapshot_batches()
        if self.log.active:
            self._leadership_changed(True)
            assert self._bootstrap_writes is not None  # started by the leadership change
            await self._bootstrap_writes

    def _replay_into(self, image: MetadataImage) -> None:
        """Build the committed image from what the log replays: its snapshot, then the committed records after it."""
        self.committed = image
        for offset, record in self.log.replay(frames=image.apply_frames):
            image.apply(record, offset)
        # Images sit just before the next offset, whatever non-metadata (control) records took.
        self.committed.offset = self.log.high_watermark - 1
        self.committed.kraft_version = self.log.kraft_version
        self.working = self.committed.copy()

    def _on_snapshot_installed(self, snapshot_id: object, path: Path) -> None:
        """A standby that lagged behind the leader's log start took the leader's snapshot: start from it."""
        logger.info("node %d: the committed image is reset to snapshot %s", self.node_id, path.name)
        self._replay_into(MetadataImage())

    async def stop(self, *, killed: bool = False) -> None:
        """Stop; ``killed``: as a killed process, losing what the log had not fsync'd."""
        self.stop_sessions()
        self.active = False
        await (self.log.kill() if killed else self.log.close())

    def _leadership_changed(self, active: bool) -> None:
        """The log made this controller active (every earlier record is committed and applied by now), or
        took that away: a new active controller starts from the committed image, as Kafka's does."""
        self.active = active
        self.working = self.committed.copy()
        self._changed_in_working.clear()
        self._last_append = None
        if active:
            self._inherit_sessions()
            self._expiry_task = asyncio.create_task(self._expire_sessions())
            self._bootstrap_writes = asyncio.ensure_future(self._bootstrap())
        else:
            self.stop_sessions()
        for listener in self._leadership_listeners:
            listener(active)

    async def _bootstrap(self) -> None:
        if METADATA_VERSION_FEATURE not in self.working.features:
            try:
                level = self.bootstrap_metadata_version_level
                await self.write(lambda image: ControllerResult(bootstrap_records(level)))
            except NotControllerError:
                pass  # the next active controller writes it

    def stop_sessions(self) -> None:
        """Stop keeping broker sessions (they start afresh when this controller next becomes active)."""
        if self._expiry_task is not None:
            self._expiry_task.cancel()
            self._expiry_task = None
        self._sessions.clear()
        self._inherited.clear()

    def add_leadership_listener(self, listener: Callable[[bool], None]) -> None:
        """Called with True when this controller becomes the active one, False when it stops being it."""
        self._leadership_listeners.append(listener)

    def add_commit_listener(self, listener: CommitListener) -> None:
        """Called with [(offset, record)] after each commit, once the committed image has them."""
        self._commit_listeners.append(listener)

    def _on_commit(self, committed: list[tuple[int, Message]]) -> None:
        self.committed.kraft_version = self.log.kraft_version
        self.committed.adopt_or_apply(committed, self._changed_in_working)
        for listener in self._commit_listeners:
            listener(committed)

    async def write(self, decide: Decision) -> Any:
        """Run a decision against the working image; append and apply its records; answer after commit.
        NotControllerError on a standby controller, or when this one stops being active meanwhile."""
        if not self.active:
            raise NotControllerError(f"node {self.node_id} is not the active controller")
        records, response = decide(self.working)
        if records:
            level = self.working.metadata_version_level
            base, committed = self.log.append([at_level(record, level) for record in records])
            self._changed_in_working.update(self.working.apply_appended(records, base))
            self.working.offset = self.log.end_offset - 1
            self._last_append = committed
            appended = time.perf_counter()
            await committed
            if self.commit_observer is not None:
                self.commit_observer(time.perf_counter() - appended)
        elif self._last_append is not None:  # what the decision read is committed (module docstring), or
            await asyncio.shield(self._last_append)  # never will be: the log failed, and so does this write
        return response

    # --- broker sessions -----------------------------------------------------------------------------

    def _inherit_sessions(self) -> None:
        for broker_id, broker in self.committed.brokers.items():
            if not broker.fenced:
                self.touch_session(broker_id)
                self._inherited.add(broker_id)

    def freeze_sessions(self) -> None:
        """The harness froze this controller in process (``Cluster.pause_controller``, as SIGSTOP would):
        its sessions stand still, no fence is decided, until ``thaw_sessions`` gives the frozen time
        back to every session, as a stopped process's loop does when it wakes (``_expire_sessions``);
        by then the Raft log has learned whether it still leads."""
        if self._frozen_at is None:
            self._frozen_at = time.monotonic()

    def thaw_sessions(self) -> None:
        if self._frozen_at is not None:
            frozen = time.monotonic() - self._frozen_at
            self._frozen_at = None
            for broker_id in self._sessions:
                self._sessions[broker_id] += frozen

    def touch_session(self, broker_id: int) -> None:
        self._sessions[broker_id] = time.monotonic() + self.session_timeout_ms / 1000
        self._inherited.discard(broker_id)

    def session_alive(self, broker_id: int) -> bool:
        return broker_id not in self._inherited and self._sessions.get(broker_id, 0) > time.monotonic()

    async def _expire_sessions(self) -> None:
        interval = min(1.0, self.session_timeout_ms / 4000)
        while True:
            planned = time.monotonic() + interval
            await asyncio.sleep(interval)
            now = time.monotonic()
            # Time the loop stood still past the planned wake-up (CPU starvation, a long callback) is given
            # back to every session: the heartbeats sent meanwhile are still unread. Kafka's request threads
            # note a heartbeat when it arrives, whatever the controller's event loop is doing.
            stalled = max(now - planned, 0.0)
            if self._frozen_at is not None:
                continue  # frozen: thaw_sessions gives the time back
            for broker_id in self._sessions:
                self._sessions[broker_id] += stalled
            for broker_id, deadline in list(self._sessions.items()):
                if deadline <= now:
                    del self._sessions[broker_id]
                    broker = self.working.brokers.get(broker_id)
                    if broker is not None and not broker.fenced:
                        logger.info("broker %d missed its heartbeats for %d ms: fencing it",
                                    broker_id, self.session_timeout_ms)
                        await self.write(functools.partial(_fence, broker_id=broker_id))


def _fence(image: MetadataImage, broker_id: int) -> ControllerResult:
    """The decision fencing a broker whose session expired."""
    return ControllerResult(fence_broker(image, broker_id))
