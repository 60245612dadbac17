"""``kraftwire log verify`` and a real ``kraftwire serve`` start-up judge the same damaged data directory
alike, case by case: verify exits 1 exactly when start-up refuses (exit 1, ``cannot start: ...``), and 0
when it starts. The directory is written by a real server and clients; each case damages a fresh copy."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.raft_helpers import batches, partition_dir, segments
from tests.served import Served, create_topics

SERVE = ("--brokers", "1", "--port", "0", "--controller-port", "0", "--data-dir", "data", "--log-level", "WARNING",
         "--snapshot-every-records", "12", "--log-segment-bytes", "1000")


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> tuple[Path, bytes]:
    """A server's data directory after a clean stop (snapshots, segments, quorum-state), and a copy of
    its fsync'd-length record taken before the last writes (a stale copy)."""
    cwd = tmp_path_factory.mktemp("agree")
    served = Served(cwd, *SERVE)
    try:
        for round_ in range(6):
            create_topics(served.bootstrap, [f"t{round_}-{i}" for i in range(3)])
            if round_ == 4:
                stale = (partition_dir(cwd / "data") / "synced-lengths.json").read_bytes()
    finally:
        served.stop()
    directory = partition_dir(cwd / "data")
    snapshots = sorted(directory.glob("*.checkpoint"))
    assert len(snapshots) >= 2 and len(segments(cwd / "data")) >= 3
    assert int(segments(cwd / "data")[1].stem) <= int(snapshots[-1].name.split("-")[0])  # the first is below it
    return cwd / "data", stale


def flip(path: Path, position: int, mask: int = 0x10) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= mask
    path.write_bytes(bytes(data))


def newest_snapshot(directory: Path) -> Path:
    return sorted(directory.glob("*.checkpoint"))[-1]


def last_batch(directory: Path) -> tuple[Path, int, int]:
    segment = sorted(directory.glob("*.log"))[-1]
    position, size, _base, _count = batches(segment)[-1]
    return segment, position, size


def flip_last_batch(directory: Path) -> None:
    segment, position, size = last_batch(directory)
    flip(segment, position + size - 2)


def unfinished_batch(directory: Path) -> None:
    """What a write the crash interrupted leaves: a copy of the last batch, cut short."""
    segment, position, size = last_batch(directory)
    data = segment.read_bytes()
    segment.write_bytes(data + data[position:position + size - 7])


def cut_into_last_batch(directory: Path) -> None:
    segment, position, size = last_batch(directory)
    segment.write_bytes(segment.read_bytes()[:position + size // 2])


def record(stale: bytes | None) -> Callable[[Path], None]:
    def replace(directory: Path) -> None:
        path = directory / "synced-lengths.json"
        if stale is None:
            path.unlink()
        else:
            path.write_bytes(stale)
    return replace


def both(*steps: Callable[[Path], None]) -> Callable[[Path], None]:
    def run(directory: Path) -> None:
        for step in steps:
            step(directory)
    return run


def first_segment_flipped(directory: Path) -> None:
    segment = sorted(directory.glob("*.log"))[0]
    position, size, _base, _count = batches(segment)[1]
    flip(segment, position + size - 2)


def newest_segment_first_batch_flipped(directory: Path) -> None:
    segment = sorted(directory.glob("*.log"))[-1]
    position, size, _base, _count = batches(segment)[0]
    flip(segment, position + size - 2)


STALE = object()  # stands for the stale copy of the record, filled in by the test

CASES: dict[str, tuple[Callable[[Path], None] | object, bool]] = {
    # name: (damage, start-up starts)
    "intact": (lambda d: None, True),
    "flipped newest snapshot": (lambda d: flip(newest_snapshot(d), newest_snapshot(d).stat().st_size // 2), True),
    "every snapshot flipped": (lambda d: [flip(p, p.stat().st_size // 2) for p in d.glob("*.checkpoint")], True),
    "newest snapshot without its footer": (
        lambda d: newest_snapshot(d).write_bytes(newest_snapshot(d).read_bytes()[:-20]), True),
    "garbage quorum-state": (lambda d: (d / "quorum-state").write_bytes(b'{"leaderEpoch": "seven'), False),
    "quorum-state of another data version": (
        lambda d: (d / "quorum-state").write_text(json.dumps({"leaderId": 1, "leaderEpoch": 3, "data_version": 7})),
        False),
    "quorum-state deleted": (lambda d: (d / "quorum-state").unlink(), True),
    "flipped last acknowledged batch": (flip_last_batch, False),
    "flipped last acknowledged batch, record deleted": (both(record(None), flip_last_batch), False),
    "flipped last acknowledged batch, stale record": (STALE, False),
    "unfinished batch after the last": (unfinished_batch, True),
    "unfinished batch after the last, record deleted": (both(record(None), unfinished_batch), True),
    "newest segment cut into its last batch": (cut_into_last_batch, False),
    "garbage offset index": (lambda d: sorted(d.glob("*.index"))[-1].write_bytes(b"\0\0\0\1\0\0\0\5"), True),
    "flipped batch in a segment below the newest snapshot": (first_segment_flipped, True),
    "flipped first batch of the newest segment": (newest_segment_first_batch_flipped, False),
    "interrupted snapshot write": (lambda d: (d / "00000000000000000001-0000000001-ab.checkpoint.part").write_bytes(
        b"half"), True),
}


def verify(directory: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kraftwire", "log", "verify", str(directory)], capture_output=True,
                          text=True, timeout=60)


def start_up(cwd: Path) -> tuple[bool, str]:
    """Whether a real ``kraftwire serve`` on the directory becomes ready (then stopped), or the refusal."""
    try:
        served = Served(cwd, *SERVE)
    except AssertionError as refused:
        assert "cannot start: " in str(refused), refused
        return False, next(line for line in str(refused).splitlines() if "cannot start: " in line)
    served.stop()
    return True, ""


@pytest.mark.parametrize("case", list(CASES))
def test_verify_fails_exactly_when_start_up_refuses(written, tmp_path, case):
    source, stale = written
    damage, starts = CASES[case]
    data = tmp_path / "data"
    shutil.copytree(source, data)
    directory = partition_dir(data)
    if damage is STALE:
        damage = both(record(stale), flip_last_batch)
    assert callable(damage)
    damage(directory)
    verified = verify(directory)
    started, refusal = start_up(tmp_path)
    assert verified.returncode == (0 if started else 1), f"{case}: verify said {verified.stdout}; start-up: {refusal}"
    assert started == starts, f"{case}: {refusal or 'started'}"
    if not started:  # the same judgement, so the same words
        assert verified.stdout.startswith("damaged: ")
        reason = verified.stdout.removeprefix("damaged: ").strip().split(str(directory))[-1]
        assert reason in refusal, (verified.stdout, refusal)
