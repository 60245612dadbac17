"""A seeded, deterministic simulation of a KRaft quorum in virtual time, and the invariants it checks.

Voters and observers each run a ``RaftCore`` (server/raft/core.py) over a simulated network that loses,
duplicates, delays and so reorders messages, and that can be partitioned; a simulated disk that fsyncs
after a delay (now and then a long one); pauses (a frozen replica handles nothing, then everything that
waited); graceful resignations of the leader; and crashes, of one replica or of all at once, that lose
what was not fsync'd (a random part of the unsynced tail survives, as a page cache might), followed by
restarts from the persisted state: quorum-state and the log left on disk. Clients submit writes to
whichever replica believes it leads; a write is acknowledged once that leader's high watermark passes
it while it still leads its epoch.

After every event the checker asserts (``Violation`` names the seed and the command that replays it):

* at most one leader per epoch (also across the quorum-state of every replica);
* the epoch a replica has persisted never goes back;
* a replica's high watermark never goes back while it runs (it is not persisted, so a restart starts
  from 0, as in Kafka), and is never beyond its log end;
* a majority of voters have the leader's high watermark fsync'd (only fsync'd data counts);
* committed entries never change: every entry below any replica's high watermark equals the first
  entry ever committed at that offset, and no replica truncates or overwrites below its high watermark;
* log matching: every replica's log up to its high watermark is a prefix of the newest leader's
  (checked every 20 events, as it costs a pass over the logs).

Then the faults stop and the network heals; within a bounded virtual time a leader must be elected,
a new write must commit, and every replica must catch up. Finally every acknowledged write must be in
the log of every replica at the offset it was acknowledged at.

Soak: ``python -m kraftwire.server.raft.simulation --seeds 1000`` (``--seed N`` replays one).
"""
from __future__ import annotations

import argparse
import heapq
import random
import sys
import time
from collections import Counter, deque
from dataclasses import dataclass, field

from .core import (NO_ID, AppendLog, Commit, Entry, FlushLog, NotLeaderError, PersistState, RaftCore, Role, Send,
                   Timers, TruncateLog)


class Violation(AssertionError):
    """An invariant broke; the message names the seed and the command that replays it."""


@dataclass(frozen=True)
class Faults:
    """How hostile the run is; probabilities per message, mean intervals in virtual ms."""
    loss: float = 0.05
    duplicate: float = 0.02
    max_delay_ms: int = 15
    max_fsync_ms: int = 8
    fsync_stall: float = 0.05        # the odd fsync takes far longer than a round trip
    fsync_stall_ms: int = 150
    crash_every_ms: int = 1500
    down_ms: tuple[int, int] = (50, 800)
    partition_every_ms: int = 1200
    partition_ms: tuple[int, int] = (100, 1500)
    resign_every_ms: int = 3000
    pause_every_ms: int = 2500       # a replica freezes (as under SIGSTOP or a long GC) and resumes
    pause_ms: tuple[int, int] = (50, 1200)
    crash_all_every_ms: int = 12_000  # every replica crashes at once, and each restarts on its own
    write_every_ms: int = 15


@dataclass
class Disk:
    """What survives a crash: quorum-state (written atomically) and the log, fsync'd up to ``synced``."""
    quorum_state: PersistState = PersistState(0, NO_ID, NO_ID)
    entries: list[Entry] = field(default_factory=list)
    synced: int = 0
    truncations: list[int] = field(default_factory=list)  # every truncation point, so a late fsync stops at them


@dataclass
class Node:
    node_id: int
    disk: Disk = field(default_factory=Disk)
    core: RaftCore | None = None
    incarnation: int = 0
    paused_until: int = 0
    last_high_watermark: int = 0
    pending_writes: dict[int, tuple[int, object]] = field(default_factory=dict)  # offset → (epoch, value)


class Simulation:
    def __init__(self, seed: int, voters: int = 3, observers: int = 1, *, duration_ms: int = 20_000,
                 faults: Faults = Faults(), timers: Timers = Timers(), core_class: type[RaftCore] = RaftCore):
        """``core_class`` lets a test hand in a deliberately broken core to prove the checker catches it."""
        self.seed, self.voter_count, self.observer_count, self.duration_ms = seed, voters, observers, duration_ms
        self.faults, self.timers, self.core_class = faults, timers, core_class
        self.rng = random.Random(seed)
        self.voters = tuple(range(1, voters + 1))
        self.nodes = {i: Node(i) for i in range(1, voters + observers + 1)}
        self.now = 0
        self.events_checked = 0
        self.recovery_ms = -1  # virtual time from healing to the first acknowledged write
        self.faults_injected: Counter[str] = Counter()
        self._queue: list = []
        self._sequence = 0
        self._cut: set[frozenset[int]] = set()
        self.faulty = True
        self.leader_of_epoch: dict[int, int] = {}
        self.committed: list[Entry] = []
        self.acknowledged: dict[int, object] = {}  # offset → value
        self._next_value = 0
        self._recent: deque[tuple[int, str, object]] = deque(maxlen=25)
        for node in self.nodes.values():
            self._boot(node)
        self._schedule(0, "write")
        self._schedule(self._interval(faults.crash_every_ms), "crash")
        self._schedule(self._interval(faults.partition_every_ms), "partition")
        self._schedule(self._interval(faults.resign_every_ms), "resign")
        self._schedule(self._interval(faults.pause_every_ms), "pause")
        self._schedule(self._interval(faults.crash_all_every_ms), "crash_all")

    # ------------------------------------------------------------------ running

    def run(self) -> Simulation:
        self._run_until(self.duration_ms)
        self._heal()
        heal_time = self.now
        bound = 20 * self.timers.election_timeout_ms + 4 * self.timers.fetch_timeout_ms
        probe = self._commit_probe(heal_time + bound)
        self.recovery_ms = self.now - heal_time
        self._run_until_caught_up(probe, heal_time + 2 * bound)
        self._check_final()
        return self

    def _run_until(self, end_ms: int, until=lambda: False) -> bool:
        while self._queue and self._queue[0][0] <= end_ms:
            when, _, kind, args = heapq.heappop(self._queue)
            self.now = when
            getattr(self, f"_on_{kind}")(*args)
            self.events_checked += 1
            self._check()
            if until():
                return True
        self.now = max(self.now, end_ms)
        return until()

    def _commit_probe(self, deadline: int) -> tuple[int, object]:
        """After healing, a leader must be elected and a write must commit before ``deadline``."""
        while True:
            if not self._run_until(deadline, lambda: self._leader() is not None):
                self._fail(f"liveness: no leader elected by {deadline} ms")
            leader = self._leader()
            epoch, value = leader.core.epoch, ("probe", self.now)
            offset = self._submit(leader, value)

            def settled() -> bool:
                return (self.acknowledged.get(offset) == value or leader.core is None
                        or leader.core.role is not Role.LEADER or leader.core.epoch != epoch)

            if not self._run_until(deadline, settled):
                self._fail(f"liveness: write {value!r} at offset {offset} not committed by {deadline} ms")
            if self.acknowledged.get(offset) == value:
                return offset, value

    def _run_until_caught_up(self, probe: tuple[int, object], deadline: int) -> None:
        end = probe[0] + 1

        def caught_up() -> bool:
            return all(n.core is not None and n.core.high_watermark >= end for n in self.nodes.values())

        if not self._run_until(deadline, caught_up):
            behind = {n.node_id: n.core.high_watermark for n in self.nodes.values()}
            self._fail(f"liveness: not every replica reached high watermark {end} by {deadline} ms: {behind}")

    def _heal(self) -> None:
        self.faulty = False
        self._cut.clear()
        for node in self.nodes.values():
            node.paused_until = min(node.paused_until, self.now)
            if node.core is None:
                self._boot(node)

    # ------------------------------------------------------------------ events

    def _schedule(self, delay: int, kind: str, *args) -> None:
        self._sequence += 1
        heapq.heappush(self._queue, (self.now + delay, self._sequence, kind, args))

    def _interval(self, mean_ms: int) -> int:
        return 1 + int(self.rng.expovariate(1 / mean_ms))

    def _boot(self, node: Node) -> None:
        node.incarnation += 1
        state = node.disk.quorum_state
        node.core = self.core_class(node.node_id, self.voters, random.Random(self.rng.random()), self.now,
                             timers=self.timers, epoch=state.epoch, leader_id=state.leader_id,
                             voted_id=state.voted_id, log=node.disk.entries)
        node.last_high_watermark = 0
        node.pending_writes.clear()
        self._record(f"boot {node.node_id}", f"as {node.core.role.value} in epoch {state.epoch}, "
                                              f"log end {node.core.log_end}")
        self._arm_timer(node)

    def _arm_timer(self, node: Node) -> None:
        deadline = node.core.next_deadline()
        if deadline is not None:
            self._schedule(max(0, deadline - self.now), "timer", node.node_id, node.incarnation, deadline)

    def _postponed(self, node: Node, kind: str, *args) -> bool:
        """A frozen replica handles nothing until it resumes; then it handles all that waited, in order."""
        if node.paused_until > self.now:
            self._schedule(node.paused_until - self.now, kind, *args)
            return True
        return False

    def _on_timer(self, node_id: int, incarnation: int, deadline: int) -> None:
        node = self.nodes[node_id]
        if self._postponed(node, "timer", node_id, incarnation, deadline):
            return
        if node.core is None or node.incarnation != incarnation or node.core.next_deadline() != deadline:
            return  # a timer of an earlier incarnation, or one the core has moved since
        self._apply(node, node.core.on_timer(self.now))

    def _on_deliver(self, node_id: int, incarnation: int, message) -> None:
        node = self.nodes[node_id]
        if self._postponed(node, "deliver", node_id, incarnation, message):
            return
        if node.core is None or node.incarnation != incarnation:
            return  # the connection it travelled on died with the replica
        self._record("deliver", message)
        self._apply(node, node.core.receive(self.now, message))

    def _on_fsync(self, node_id: int, incarnation: int, end_offset: int, truncations_seen: int) -> None:
        node = self.nodes[node_id]
        if self._postponed(node, "fsync", node_id, incarnation, end_offset, truncations_seen):
            return
        if node.core is None or node.incarnation != incarnation:
            return
        disk = node.disk
        synced = min([end_offset, len(disk.entries)] + disk.truncations[truncations_seen:])
        disk.synced = max(disk.synced, synced)
        self._apply(node, node.core.flush_completed(self.now, synced))

    def _on_write(self) -> None:
        if self.faulty:
            leaders = [n for n in self.nodes.values()
                       if n.core is not None and n.core.role is Role.LEADER and n.paused_until <= self.now]
            if leaders:
                self._submit(self.rng.choice(leaders), ("w", self._next_value))
                self._next_value += 1
            self._schedule(self._interval(self.faults.write_every_ms), "write")

    def _submit(self, node: Node, value: object) -> int:
        try:
            offset, actions = node.core.append(self.now, value)
        except NotLeaderError:
            raise AssertionError("submit to a replica that does not lead") from None
        node.pending_writes[offset] = (node.core.epoch, value)
        self._apply(node, actions)
        return offset

    def _on_crash(self) -> None:
        if self.faulty:
            self._crash(self.rng.choice(list(self.nodes.values())))
            self._schedule(self._interval(self.faults.crash_every_ms), "crash")

    def _on_crash_all(self) -> None:
        if self.faulty:
            self.faults_injected["crashes of all replicas"] += 1
            for node in self.nodes.values():
                self._crash(node)
            self._schedule(self._interval(self.faults.crash_all_every_ms), "crash_all")

    def _crash(self, node: Node) -> None:
        """Stop the replica; of its log, the fsync'd part and a random part of the rest survive."""
        if node.core is None:
            return
        self.faults_injected["crashes"] += 1
        disk = node.disk
        survivors = disk.synced + self.rng.randint(0, len(disk.entries) - disk.synced)
        self._record(f"crash {node.node_id}: log {len(disk.entries)} → {survivors} (fsync'd {disk.synced})")
        del disk.entries[survivors:]
        disk.truncations.clear()
        disk.synced = len(disk.entries)
        node.core = None
        node.paused_until = 0
        node.pending_writes.clear()
        self._schedule(self.rng.randint(*self.faults.down_ms), "restart", node.node_id)

    def _on_pause(self) -> None:
        if self.faulty:
            node = self.rng.choice(list(self.nodes.values()))
            if node.core is not None and node.paused_until <= self.now:
                self.faults_injected["pauses"] += 1
                node.paused_until = self.now + self.rng.randint(*self.faults.pause_ms)
                self._record(f"pause {node.node_id} until {node.paused_until}")
            self._schedule(self._interval(self.faults.pause_every_ms), "pause")

    def _on_restart(self, node_id: int) -> None:
        node = self.nodes[node_id]
        if node.core is None:
            self._boot(node)

    def _on_partition(self) -> None:
        if not self.faulty:
            return
        ids = list(self.nodes)
        self.rng.shuffle(ids)
        if self.rng.random() < 0.5:
            side = {ids[0]}  # isolate one replica
        else:
            side = set(ids[:self.rng.randint(1, len(ids) - 1)])
        cut = {frozenset((a, b)) for a in side for b in self.nodes if b not in side}
        self._cut |= cut
        self.faults_injected["partitions"] += 1
        self._record(f"partition {sorted(side)} from the rest")
        self._schedule(self.rng.randint(*self.faults.partition_ms), "heal_partition", frozenset(cut))
        self._schedule(self._interval(self.faults.partition_every_ms), "partition")

    def _on_heal_partition(self, cut: frozenset) -> None:
        self._cut -= cut

    def _on_resign(self) -> None:
        if not self.faulty:
            return
        leader = self._leader()
        if leader is not None and leader.paused_until <= self.now:
            self.faults_injected["resignations"] += 1
            self._record(f"resign {leader.node_id}")
            self._apply(leader, leader.core.resign(self.now))
        self._schedule(self._interval(self.faults.resign_every_ms), "resign")

    def _leader(self) -> Node | None:
        """The leader of the highest epoch any running replica leads."""
        leaders = [n for n in self.nodes.values() if n.core is not None and n.core.role is Role.LEADER]
        return max(leaders, key=lambda n: n.core.epoch, default=None)

    # ------------------------------------------------------------------ actions

    def _apply(self, node: Node, actions: list) -> None:
        core, disk = node.core, node.disk
        for action in actions:
            if isinstance(action, PersistState):
                if action.epoch < disk.quorum_state.epoch:
                    self._fail(f"node {node.node_id} persisted epoch {action.epoch} after {disk.quorum_state.epoch}")
                disk.quorum_state = action
            elif isinstance(action, TruncateLog):
                if action.offset < node.last_high_watermark:
                    self._fail(f"node {node.node_id} truncated to {action.offset}, below its high watermark "
                               f"{node.last_high_watermark}")
                del disk.entries[action.offset:]
                disk.synced = min(disk.synced, action.offset)
                disk.truncations.append(action.offset)
            elif isinstance(action, AppendLog):
                if action.offset != len(disk.entries):
                    self._fail(f"node {node.node_id} appended at {action.offset} to a log ending at "
                               f"{len(disk.entries)}")
                disk.entries.extend(action.entries)
            elif isinstance(action, FlushLog):
                slow = self.faulty and self.rng.random() < self.faults.fsync_stall
                delay = self.rng.randint(0, self.faults.fsync_stall_ms if slow else self.faults.max_fsync_ms)
                self._schedule(delay, "fsync", node.node_id,
                               node.incarnation, action.end_offset, len(disk.truncations))
            elif isinstance(action, Send):
                self._send(action.message)
            elif isinstance(action, Commit):
                self._acknowledge(node, action.high_watermark)
        self._arm_timer(node)

    def _send(self, message) -> None:
        link = frozenset((message.src, message.dst))
        if self.faulty and (link in self._cut or self.rng.random() < self.faults.loss):
            return
        destination = self.nodes[message.dst]
        if destination.core is None:
            return
        copies = 2 if self.faulty and self.rng.random() < self.faults.duplicate else 1
        for _ in range(copies):
            self._schedule(self.rng.randint(1, self.faults.max_delay_ms), "deliver", message.dst,
                           destination.incarnation, message)

    def _acknowledge(self, node: Node, high_watermark: int) -> None:
        core = node.core
        for offset in [o for o in node.pending_writes if o < high_watermark]:
            epoch, value = node.pending_writes.pop(offset)
            if core.role is Role.LEADER and core.epoch == epoch:
                if core.log[offset] != Entry(epoch, value):
                    self._fail(f"leader {node.node_id} acknowledged offset {offset} but holds {core.log[offset]}")
                self.acknowledged[offset] = value
                self._record(f"ack offset {offset} = {value!r} by {node.node_id}")

    # ------------------------------------------------------------------ invariants

    def _check(self) -> None:
        leaders_now: dict[int, int] = {}
        for node in self.nodes.values():
            state = node.disk.quorum_state
            if state.leader_id != NO_ID:
                self._one_leader(state.epoch, state.leader_id, f"quorum-state of node {node.node_id}")
            core = node.core
            if core is None:
                continue
            if core.role is Role.LEADER:
                self._one_leader(core.epoch, node.node_id, f"node {node.node_id}")
                leaders_now[core.epoch] = node.node_id
            if core.epoch != state.epoch:
                self._fail(f"node {node.node_id} runs in epoch {core.epoch} but persisted {state.epoch}")
            hw = core.high_watermark
            if hw < node.last_high_watermark:
                self._fail(f"node {node.node_id}'s high watermark went back from {node.last_high_watermark} to {hw}")
            if hw > core.log_end:
                self._fail(f"node {node.node_id}'s high watermark {hw} is beyond its log end {core.log_end}")
            for offset in range(node.last_high_watermark, hw):
                entry = core.log[offset]
                if offset < len(self.committed):
                    if self.committed[offset] != entry:
                        self._fail(f"committed entry at offset {offset} changed: first {self.committed[offset]}, "
                                   f"now {entry} on node {node.node_id}")
                else:
                    self.committed.append(entry)
            node.last_high_watermark = hw
        for leader_id in leaders_now.values():
            self._check_majority_durable(self.nodes[leader_id])
        newest = max(self.leader_of_epoch, default=None)
        if newest in leaders_now and self.events_checked % 20 == 0:
            # Only the leader of the newest epoch is sure to hold every committed entry (a deposed one
            # may still believe it leads).
            self._check_log_matching(self.nodes[leaders_now[newest]])

    def _one_leader(self, epoch: int, leader_id: int, where: str) -> None:
        known = self.leader_of_epoch.setdefault(epoch, leader_id)
        if known != leader_id:
            self._fail(f"two leaders in epoch {epoch}: {known} and {leader_id} ({where})")

    def _check_majority_durable(self, leader: Node) -> None:
        hw = leader.core.high_watermark
        durable = [v for v in self.voters if self.nodes[v].disk.synced >= hw]
        if len(durable) < len(self.voters) // 2 + 1:
            self._fail(f"leader {leader.node_id} has high watermark {hw} but only voters {durable} have it fsync'd "
                       f"({ {v: self.nodes[v].disk.synced for v in self.voters} })")

    def _check_log_matching(self, leader: Node) -> None:
        for node in self.nodes.values():
            if node.core is not None:
                hw = min(node.core.high_watermark, leader.core.log_end)
                if node.core.log[:hw] != leader.core.log[:hw]:
                    first = next(o for o in range(hw) if node.core.log[o] != leader.core.log[o])
                    self._fail(f"node {node.node_id}'s log differs from leader {leader.node_id}'s at offset {first}, "
                               f"below its high watermark {node.core.high_watermark}")

    def _check_final(self) -> None:
        leader = self._leader()
        self._check_log_matching(leader)
        for node in self.nodes.values():
            for offset, value in self.acknowledged.items():
                if offset >= node.core.log_end or node.core.log[offset].data != value:
                    found = node.core.log[offset] if offset < node.core.log_end else "nothing"
                    self._fail(f"acknowledged write {value!r} at offset {offset} is lost on node {node.node_id} "
                               f"(it holds {found})")

    # ------------------------------------------------------------------ reporting

    def _record(self, what: str, detail: object = "") -> None:
        """Keep the last events for a failure report; formatted only then, as most runs never need them."""
        self._recent.append((self.now, what, detail))

    def replay_command(self) -> str:
        kafka_timers = " --kafka-timers" if self.timers == Timers.kafka_defaults() else ""
        return (f"python -m kraftwire.server.raft.simulation --seed {self.seed} --voters {self.voter_count} "
                f"--observers {self.observer_count} --duration-ms {self.duration_ms}{kafka_timers}")

    def _fail(self, problem: str) -> None:
        recent = "\n".join(f"{when:>7} ms  {what} {detail}" for when, what, detail in self._recent)
        raise Violation(f"seed {self.seed} ({self.voter_count} voters, {self.observer_count} observers), "
                        f"t={self.now} ms, event {self.events_checked}: {problem}\n"
                        f"replay: {self.replay_command()}\nlast events:\n{recent}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Soak the Raft core in a seeded simulation.")
    parser.add_argument("--seed", type=int, help="replay one seed")
    parser.add_argument("--seeds", type=int, default=100, help="run seeds --first .. --first + N - 1")
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--voters", type=int, nargs="+", default=[3, 5])
    parser.add_argument("--observers", type=int, default=1)
    parser.add_argument("--duration-ms", type=int, default=20_000, help="virtual time with faults, per seed")
    parser.add_argument("--kafka-timers", action="store_true", help="Kafka's default timers instead of short ones")
    args = parser.parse_args(argv)
    seeds = [args.seed] if args.seed is not None else range(args.first, args.first + args.seeds)
    timers = Timers.kafka_defaults() if args.kafka_timers else Timers()
    started, runs, events, writes, failures, epochs = time.monotonic(), 0, 0, 0, 0, 0
    faults: Counter[str] = Counter()
    recoveries: list[int] = []
    for seed in seeds:
        for voters in args.voters:
            simulation = Simulation(seed, voters, args.observers, duration_ms=args.duration_ms, timers=timers)
            try:
                simulation.run()
            except Violation as violation:
                failures += 1
                print(violation, file=sys.stderr)
            runs += 1
            events += simulation.events_checked
            writes += len(simulation.acknowledged)
            epochs += len(simulation.leader_of_epoch)
            faults += simulation.faults_injected
            if simulation.recovery_ms >= 0:
                recoveries.append(simulation.recovery_ms)
    print(f"{runs} runs ({len(seeds)} seeds × voters {args.voters}, {args.observers} observers, "
          f"{args.duration_ms} virtual ms each): {events} events checked, {writes} acknowledged writes, "
          f"{epochs} elected leaders, faults {dict(faults)}, {failures} failures, {time.monotonic() - started:.1f} s")
    if recoveries:
        recoveries.sort()
        print(f"healing → first acknowledged write (virtual ms): median {recoveries[len(recoveries) // 2]}, "
              f"p99 {recoveries[len(recoveries) * 99 // 100]}, max {recoveries[-1]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
