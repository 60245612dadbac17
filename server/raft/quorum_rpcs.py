"""``QuorumRpcs``: the Raft RPCs of a ``RaftLog``, served and sent.

The controller node reaches them through its quorum handle: ``handle`` answers a Vote,
BeginQuorumEpoch, EndQuorumEpoch, Fetch, FetchSnapshot, AddRaftVoter, RemoveRaftVoter or UpdateRaftVoter
request by handing it to the core and waiting for the core's reply (a parked Fetch included),
``describe`` is DescribeQuorum's view, ``leader_id`` (on ``LogState``) the leader the core knows. The
core's own requests go out through ``transport`` (peer_wire.py maps them onto the schemas) and their
answers back to the core; a Fetch the core sends after a truncation waits until that truncation is
fsync'd. A voter whose listeners differ from those its log records sends UpdateRaftVoter to the leader.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from dataclasses import replace

from kraftwire.codec import ErrorCode, MalformedError
from kraftwire.codec.message import Message as WireMessage

from . import peer_wire
from .batches import decode_records, past_batch
from .core import (AddRaftVoterRequest, AddRaftVoterResponse, BeginQuorumEpochResponse, EndQuorumEpochResponse, Entry,
                   FetchRequest, FetchResponse, FetchSnapshotResponse, Message, NotLeaderError,
                   RemoveRaftVoterResponse, Role, UpdateRaftVoterRequest, UpdateRaftVoterResponse, VoteResponse)
from .driver import wall_ms
from .files import LogFailedError
from .log_state import LogState, QuorumDescription, ReplicaProgress
from .quorum_state import NO_ID

log = logging.getLogger("kraftwire.raft")

OBSERVER_SESSION_MS = 300_000  # LeaderState.OBSERVER_SESSION_TIMEOUT_MS
_RESPONSES = (BeginQuorumEpochResponse, EndQuorumEpochResponse, FetchResponse, FetchSnapshotResponse, VoteResponse,
              AddRaftVoterResponse, RemoveRaftVoterResponse, UpdateRaftVoterResponse)


def _unanswered_fetch(request: FetchRequest) -> FetchResponse:
    """The answer to a long poll the core dropped (its role changed while it waited)."""
    return FetchResponse(src=request.dst, dst=request.src, correlation_id=request.correlation_id,
                         error_code=int(ErrorCode.NOT_LEADER_OR_FOLLOWER), high_watermark=0,
                         base_offset=request.fetch_offset, records=(), diverging_epoch=None, current_leader=(NO_ID, 0))


class QuorumRpcs(LogState):
    # --- served ----------------------------------------------------------------------------------------

    async def handle(self, request: WireMessage, version: int) -> WireMessage:
        """Answer a Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch or FetchSnapshot request from another
        replica, or an AddRaftVoter, RemoveRaftVoter or UpdateRaftVoter (answered by the leader's core once the
        new voter set is appended or committed)."""
        await self._unfrozen()
        if self.core is None or self._closed or self.failure is not None:
            raise LogFailedError(self._failed or "the metadata log is not open")
        core = self.core
        try:
            message = peer_wire.from_request(request, version, self.cluster_id, next(self._incoming_ids))
        except peer_wire.Refused as refused:
            return refused.response
        if isinstance(message, FetchRequest) and self.active:
            message = self._note_fetch(message)
        timeout = self.timers.request_timeout_ms / 1000 + getattr(message, "max_wait_ms", 0) / 1000
        if isinstance(message, AddRaftVoterRequest):
            timeout += message.timeout_ms / 1000  # the core answers REQUEST_TIMED_OUT at TimeoutMs
        try:
            reply = await self._ask_core(message, timeout)
        except TimeoutError:  # a long poll the core dropped when its role changed
            if not isinstance(message, FetchRequest):
                raise
            return peer_wire.to_response(replace(
                _unanswered_fetch(message), high_watermark=self.high_watermark,
                current_leader=(core.leader_id, core.epoch)), version)
        if isinstance(reply, FetchResponse) and isinstance(message, FetchRequest) \
                and message.replica_id not in self.voters:
            self._told_observers[message.replica_id] = reply.high_watermark
        return peer_wire.to_response(reply, version, self._encode_records, core.log_start, self._read_chunk,
                                     self._leader_endpoint())

    def _note_fetch(self, message: FetchRequest) -> FetchRequest:
        """The leader notes a fetcher's progress; an observer not yet told the newest high watermark is
        answered at once rather than parked."""
        observer = message.replica_id not in self.voters
        if observer and self._core.high_watermark > self._told_observers.get(message.replica_id, -1):
            message = replace(message, max_wait_ms=0)  # the observer is not told the newest one yet
        progress = (self._observers if observer else self._progress).setdefault(
            message.replica_id, ReplicaProgress(message.replica_id))
        progress.directory_id = message.replica_directory_id
        self._note_progress(progress, message.fetch_offset, replace_end=observer)
        return message

    async def _ask_core(self, message: Message, timeout: float) -> Message:
        """Hand a request to the core and wait for its reply (TimeoutError when it drops the request)."""
        waiting = self._incoming[(message.src, message.correlation_id)] = asyncio.get_running_loop().create_future()
        self._run(self._core.receive(self._now(), message))
        try:
            return await asyncio.wait_for(waiting, timeout)
        finally:
            self._incoming.pop((message.src, message.correlation_id), None)

    def _encode_records(self, base_offset: int, entries: tuple[Entry, ...]) -> bytes:
        """The batches holding the entries, each whole (a batch cut by the core's entry limit goes out
        entire, so fetchers' logs end between batches)."""
        chunks, last = [], base_offset - 1
        i = 0
        while i < len(entries):
            batch = self._batch_at(base_offset + i, entries[i])
            if batch is None:
                i += 1
                continue
            if batch.base > last:
                chunks.append(batch.data)
                last = batch.last
            i = past_batch(entries, i, base_offset, batch)
        return b"".join(chunks)

    def describe(self) -> QuorumDescription:
        """The quorum as the leader sees it; NotLeaderError elsewhere."""
        core = self._core
        if not self.active:
            raise NotLeaderError(core.leader_id, core.epoch)
        now = wall_ms()
        for replica_id in [r for r, p in self._observers.items() if p.last_fetch_ms < now - OBSERVER_SESSION_MS]:
            del self._observers[replica_id]
        voters = []
        for node in core.voter_set.voters:
            replica_id = node.key.id
            progress = (ReplicaProgress(replica_id, core.durable_end, now, now) if replica_id == self.node_id
                        else self._progress.setdefault(replica_id, ReplicaProgress(replica_id)))
            voters.append(replace(progress, directory_id=node.key.directory_id))
        observers = [p for p in self._observers.values() if p.replica_id not in self.voters]  # not since it was added
        return QuorumDescription(self.node_id, self.epoch, self.high_watermark, voters,
                                 sorted(observers, key=lambda p: p.replica_id),
                                 {v.key.id: v.listeners for v in core.voter_set.voters if v.listeners})

    def _note_progress(self, progress: ReplicaProgress, end_offset: int, replace_end: bool = False) -> None:
        now = wall_ms()
        progress.end_offset = end_offset if replace_end else max(progress.end_offset, end_offset)
        progress.last_fetch_ms = now
        if end_offset >= self.high_watermark:
            progress.last_caught_up_ms = now

    # --- sent ------------------------------------------------------------------------------------------

    def _send(self, message: Message) -> None:
        if isinstance(message, _RESPONSES):  # the answer to a request this replica received
            waiting = self._incoming.pop((message.dst, message.correlation_id), None)
            if waiting is not None and not waiting.done():
                waiting.set_result(message)
        elif isinstance(message, FetchRequest) and self._truncating:
            self._held.append(message)
        elif self.transport is not None:
            self._spawn(self._exchange(message))

    def _spawn(self, work: Coroutine[object, object, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _exchange(self, message: Message) -> None:
        """Send one request and hand the answer to the core; a lost one is the core's timers' business."""
        if self.transport is None:
            return
        request, version = peer_wire.to_request(message, self.cluster_id)
        timeout = self.timers.request_timeout_ms / 1000
        if isinstance(message, FetchRequest):
            timeout += message.max_wait_ms / 1000
        try:
            answer = await asyncio.wait_for(self.transport(message.dst, request, version), timeout)
            response = peer_wire.from_response(message, answer, decode_records)
            self._leader_endpoints.update(peer_wire.node_endpoints(answer))
        except (TimeoutError, OSError, MalformedError) as exc:
            log.debug("node %d: %s to %d got no answer: %s", self.node_id, type(message).__name__, message.dst, exc)
            return
        await self._unfrozen()
        if response is not None and not self._closed:
            self._run(self._core.receive(self._now(), response))

    def voter_endpoints(self) -> dict[int, tuple[str, int]]:
        """Where the voters (and the leaders answers named) are reached: the listener named like this
        replica's own, as the latest voter set logs it (KIP-853); the host's transport uses it."""
        if self.core is None:
            return dict(self._leader_endpoints)
        own = self.endpoints[0][0] if self.endpoints else None
        found = dict(self._leader_endpoints)
        for node in self.core.voter_set.voters:
            named = [(host, port) for name, host, port in node.listeners if name == own] or [
                (host, port) for _name, host, port in node.listeners]
            if named:
                found[node.key.id] = named[0]
        return found

    def _leader_endpoint(self) -> tuple[str, int]:
        """The leader's listener (the one named like this replica's own) as the voter set logs it."""
        core = self._core
        node = core.voter_set.node(core.leader_id)
        own = self.endpoints[0][0] if self.endpoints else None
        found = [(host, port) for name, host, port in (node.listeners if node else ()) if name == own]
        return found[0] if found else ("", -1)

    def _maybe_update_voter(self) -> None:
        """A voter whose listeners differ from those the voter set logs (it restarted on another port)
        sends UpdateRaftVoter to the leader, as Kafka's voters do once they know the leader; the leader
        hands it to its own core. Retried after a fetch timeout until the set shows the new listeners."""
        core = self._core
        if core.kraft_version < 1 or not self.endpoints or core.role not in (Role.LEADER, Role.FOLLOWER):
            return
        node = core.voter_set.node(self.node_id)
        now = self._now()
        if (node is None or not core.is_voter or node.listeners == self.endpoints or now < self._voter_update_due
                or self._closed or (self.transport is None and core.leader_id != self.node_id)):
            return
        self._voter_update_due = now + self.timers.fetch_timeout_ms
        request = UpdateRaftVoterRequest(src=self.node_id, dst=core.leader_id, correlation_id=next(self._incoming_ids),
                                         current_leader_epoch=core.epoch, voter_id=self.node_id,
                                         voter_directory_id=self.directory_id, listeners=self.endpoints,
                                         kraft_versions=(0, 1))
        self._spawn(self._update_voter(request))

    async def _update_voter(self, request: UpdateRaftVoterRequest) -> None:
        answer: Message | None
        try:
            if request.dst == self.node_id:
                answer = await self._ask_core(request, self.timers.request_timeout_ms / 1000)
            elif self.transport is not None:
                wire, version = peer_wire.to_request(request, self.cluster_id)
                answer = peer_wire.from_response(request, await asyncio.wait_for(
                    self.transport(request.dst, wire, version), self.timers.request_timeout_ms / 1000))
            else:
                return
        except (TimeoutError, OSError, MalformedError) as exc:
            log.debug("node %d: UpdateRaftVoter got no answer: %s", self.node_id, exc)
            return
        assert isinstance(answer, UpdateRaftVoterResponse)  # what the core answers an UpdateRaftVoter with
        log.info("node %d: UpdateRaftVoter with listeners %s: %s", self.node_id, list(request.listeners),
                 ErrorCode(answer.error_code).name)
