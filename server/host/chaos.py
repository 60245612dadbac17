"""Chaos over controller processes (``ControllerProcesses``): a write workload that records every
acknowledged write, the faults thrown at the quorum while it runs, and the check of the logs afterwards.
tests/test_chaos_processes.py runs one round of each fault; bench/chaos.py runs many and prints figures.

Every write carries a value of its own and is never retried (a retry gets a new value), so the check
is exact: each acknowledged write is in every controller's log exactly once, and a write whose answer
never came (a timeout, a dropped connection, NOT_CONTROLLER) is there at most once. The writes go over
TCP straight to the controller the workload believes active, as an admin client with
``--bootstrap-controller`` (KIP-919) does: cluster-default broker configs (IncrementalAlterConfigs,
``log.retention.ms`` set to the write's own value) and SCRAM users (AlterUserScramCredentials, a user
of its own). The logs must also agree byte for byte, batch for batch, below the high watermark the
voters converged on.
"""
from __future__ import annotations

import os
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import AlterUserScramCredentialsRequest, IncrementalAlterConfigsRequest

from .process_harness import ControllerProcesses

BROKER_RESOURCE = 4  # ConfigResource.Type.BROKER; the name "" is the cluster default
SET = 0  # AlterConfigOp.OpType.SET
SCRAM_SHA_256 = 1
FIRST_RETENTION_MS = 3_600_000
WRITE_TIMEOUT_S = 3.0


@dataclass
class Writes:
    """What the workload sent: ``acknowledged`` and ``unknown`` (no answer) writes, each (kind, key)."""
    acknowledged: list[tuple[str, str]] = field(default_factory=list)
    unknown: list[tuple[str, str]] = field(default_factory=list)
    refused: int = 0  # answered with an error (NOT_CONTROLLER): not written


class ControllerWorkload:
    """A thread writing unique config values and SCRAM users to the active controller until ``stop``."""

    def __init__(self, harness: ControllerProcesses):
        self._harness = harness
        self.writes = Writes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kraftwire-chaos-workload", daemon=True)
        self._target: int | None = None

    def start(self) -> "ControllerWorkload":
        self._thread.start()
        return self

    def stop(self) -> Writes:
        self._stop.set()
        self._thread.join(30)
        return self.writes

    def acknowledged_since(self, count: int) -> int:
        return len(self.writes.acknowledged) - count

    def _request(self, sequence: int):
        if sequence % 2:
            value = str(FIRST_RETENTION_MS + sequence)
            request = IncrementalAlterConfigsRequest(validate_only=False, resources=[
                IncrementalAlterConfigsRequest.AlterConfigsResource(
                    resource_type=BROKER_RESOURCE, resource_name="", configs=[
                        IncrementalAlterConfigsRequest.AlterableConfig(
                            name="log.retention.ms", config_operation=SET, value=value)])])
            return ("config", value), request, 1, lambda answer: answer.responses[0].error_code
        user = f"chaos-{sequence}"
        request = AlterUserScramCredentialsRequest(deletions=[], upsertions=[
            AlterUserScramCredentialsRequest.ScramCredentialUpsertion(
                name=user, mechanism=SCRAM_SHA_256, iterations=4096, salt=os.urandom(16),
                salted_password=os.urandom(32))])
        # a standby's NOT_CONTROLLER answer to this request lists no results (error_response cannot pair
        # them with both request arrays): no result is no acknowledgement
        return ("scram", user), request, 0, lambda answer: next((r.error_code for r in answer.results), None)

    def _run(self) -> None:
        sequence = 0
        while not self._stop.is_set():
            if self._target not in self._harness.addresses or self._target in self._harness.paused:
                self._target = self._harness.active()
                if self._target is None:
                    time.sleep(0.05)
                    continue
            sequence += 1
            key, request, version, error_of = self._request(sequence)
            try:
                answer = self._harness.request(self._target, request, version, timeout=WRITE_TIMEOUT_S)
            except Exception:  # no answer: lost, timed out or the connection dropped; it may have been written
                self.writes.unknown.append(key)
                self._target = None
                continue
            if error_of(answer) == ErrorCode.NONE:
                self.writes.acknowledged.append(key)
            else:
                self.writes.refused += 1
                self._target = None


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.05)
    return value


def wait_for_writes(workload: ControllerWorkload, count: int, timeout: float = 60.0) -> None:
    """Wait until ``count`` more writes are acknowledged (the quorum serves again)."""
    start = len(workload.writes.acknowledged)
    wait_for(lambda: workload.acknowledged_since(start) >= count, timeout, f"{count} acknowledged writes")


def new_active(harness: ControllerProcesses, old: int | None, timeout: float = 60.0) -> int:
    return wait_for(lambda: (a := harness.active()) not in (None, old) and a, timeout, "another active controller")


def kill_active(harness: ControllerProcesses, workload: ControllerWorkload, writes: int) -> None:
    """kill -9 the active controller, write on under its successor, restart it."""
    victim = wait_for(harness.active, 60, "an active controller")
    harness.kill(victim)
    new_active(harness, victim)
    wait_for_writes(workload, writes)
    harness.start(victim)


def pause_active(harness: ControllerProcesses, workload: ControllerWorkload, writes: int) -> None:
    """SIGSTOP the active controller until another leads and writes go on, then SIGCONT it (it must
    step down and follow, not write as a stale leader)."""
    victim = wait_for(harness.active, 60, "an active controller")
    harness.pause(victim)
    new_active(harness, victim)
    wait_for_writes(workload, writes)
    harness.resume(victim)


def isolate_active(harness: ControllerProcesses, workload: ControllerWorkload, writes: int) -> None:
    """Cut the active controller off from both peers (it keeps its clients' connections), write on
    under the majority's new leader, heal."""
    victim = wait_for(harness.active, 60, "an active controller")
    for other in harness.ids:
        if other != victim:
            harness.cut(victim, other)
    new_active(harness, victim)
    wait_for_writes(workload, writes)
    harness.heal_all()


def cut_follower_link(harness: ControllerProcesses, workload: ControllerWorkload, writes: int,
                      rng: random.Random) -> None:
    """Cut the link between the active controller and one follower: the other follower keeps a majority."""
    active = wait_for(harness.active, 60, "an active controller")
    follower = rng.choice([i for i in harness.ids if i != active])
    harness.cut(active, follower)
    wait_for_writes(workload, writes)
    harness.heal_all()


FAULTS = ("kill", "pause", "isolate", "cut")


def run_fault(name: str, harness: ControllerProcesses, workload: ControllerWorkload, writes: int,
              rng: random.Random) -> None:
    if name == "kill":
        kill_active(harness, workload, writes)
    elif name == "pause":
        pause_active(harness, workload, writes)
    elif name == "isolate":
        isolate_active(harness, workload, writes)
    else:
        cut_follower_link(harness, workload, writes, rng)


@dataclass
class Verdict:
    high_watermark: int
    acknowledged: int
    lost: list = field(default_factory=list)  # (controller, write) acknowledged but absent
    duplicated: list = field(default_factory=list)  # (controller, write, times) present more than once
    diverged: list = field(default_factory=list)  # (controller, base offset) of a batch unlike the first one's

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicated or self.diverged)


def _written(records: list[dict], high_watermark: int) -> Counter:
    """(kind, key) of every workload write among the committed records of one log."""
    found = Counter()
    for record in records:
        if record["offset"] >= high_watermark:
            continue
        fields = record["fields"]
        if record["type"] == "ConfigRecord" and fields.get("name") == "log.retention.ms":
            found[("config", fields["value"])] += 1
        elif record["type"] == "UserScramCredentialRecord":
            found[("scram", fields["name"])] += 1
    return found


def settle_and_check(harness: ControllerProcesses, writes: Writes) -> Verdict:
    """Heal and resume everything, start what is down, wait until the voters converge, stop them all,
    and judge their logs offline."""
    harness.heal_all()
    for node_id in list(harness.paused):
        harness.resume(node_id)
    for node_id in harness.ids:
        if node_id not in harness.processes:
            harness.start(node_id)
    high_watermark = harness.wait_converged()
    harness.stop_all()
    verdict = Verdict(high_watermark, len(writes.acknowledged))
    reference = None
    for node_id in harness.ids:
        found = _written(harness.log_dump(node_id), high_watermark)
        verdict.lost += [(node_id, w) for w in writes.acknowledged if found[w] == 0]
        verdict.duplicated += [(node_id, w, n) for w, n in found.items() if n > 1]
        batches = harness.committed_batches(node_id, high_watermark)
        if reference is None:
            reference = batches
        else:
            verdict.diverged += [(node_id, base) for (base, data), (_, expected) in zip(batches, reference)
                                 if data != expected]
            if len(batches) != len(reference):
                verdict.diverged.append((node_id, "batch count"))
    return verdict
