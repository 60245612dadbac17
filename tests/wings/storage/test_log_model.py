"""Random sequences of appends (every codec, rising epochs), truncations, high watermark moves,
DeleteRecords, clean reopens and crash reopens against a plain model of what the log must hold: its
offsets, the records a read returns, and its leader epochs (hypothesis' stateful testing)."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kraftwire.server.storage import LogConfig
from tests.wings.storage.test_partition_log import NOW, open_log, make_batch, read_back

CONFIG = LogConfig(segment_bytes=700, index_interval_bytes=120)


class LogModel(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="storage-model-"))
        self.log = open_log(self.root, CONFIG)
        self.batches: list[tuple[int, int, int]] = []  # (base offset, record count, epoch)
        self.epoch = 0
        self.start = self.hw = 0
        self.epochs: list[tuple[int, int]] = []  # Kafka's rules, applied as the operations go

    @property
    def end(self) -> int:
        return self.batches[-1][0] + self.batches[-1][1] if self.batches else self.end_when_empty

    end_when_empty = 0

    def teardown(self):
        self.log.delete()
        shutil.rmtree(self.root, ignore_errors=True)

    @rule(count=st.integers(1, 6), codec=st.integers(0, 4), bump=st.booleans())
    def append(self, count, codec, bump):
        self.epoch += bump
        info = self.log.append_as_leader(make_batch(count, codec, value_size=40), self.epoch, NOW)
        assert info.first_offset == self.end
        self.batches.append((info.first_offset, count, self.epoch))
        if not self.epochs or self.epochs[-1][0] != self.epoch:  # Kafka's assign: a later start replaces
            self.epochs = [e for e in self.epochs if e[1] < info.first_offset] + [(self.epoch, info.first_offset)]

    @precondition(lambda self: self.batches)
    @rule(data=st.data())
    def truncate(self, data):
        offset = data.draw(st.integers(self.start, self.end))
        changed = self.log.truncate_to(offset)
        assert changed == (offset < self.end)
        kept = [b for b in self.batches if b[0] + b[1] <= offset]
        if changed:
            self.end_when_empty = self.batches[len(kept)][0] if len(kept) < len(self.batches) else self.end
        self.batches = kept
        self.hw = min(self.hw, self.end)
        self.start = min(self.start, self.end)
        if changed:
            self.epochs = [e for e in self.epochs if e[1] < self.end]  # Kafka's truncateFromEnd

    @rule(data=st.data())
    def move_hw(self, data):
        self.hw = self.log.update_high_watermark(data.draw(st.integers(self.start, self.end)))

    @rule(data=st.data())
    def delete_records(self, data):
        offset = data.draw(st.integers(self.start, self.hw))
        self.start = max(self.start, offset)
        assert self.log.delete_records_before(offset) == self.start
        self.epochs = self.from_start(self.epochs)

    def from_start(self, entries):
        """Kafka's truncateFromStart at the log start: the epoch holding it now starts there."""
        below = [e for e in entries if e[1] <= self.start]
        return [(below[-1][0], self.start)] + entries[len(below):] if below else entries

    @rule(crash=st.booleans())
    def reopen(self, crash):
        if not crash:
            self.log.close()
        recovery_point = None if crash else self.log.recovery_point
        self.log = open_log(self.root, CONFIG, recovery_point=recovery_point, log_start_offset=self.start)
        self.log.update_high_watermark(self.hw)
        if crash:  # every segment is re-read: the epochs are those of the batches still on disk
            first = self.log.segments[0].base_offset
            derived: list[tuple[int, int]] = []
            for base, _, epoch in self.batches:
                if base >= first and (not derived or derived[-1][0] != epoch):
                    derived.append((epoch, base))
            self.epochs = self.from_start(derived)
        else:  # the checkpoint, less the epochs starting at the log end (Kafka's loader truncates there)
            self.epochs = self.from_start([e for e in self.epochs if e[1] < self.end])

    @invariant()
    def offsets_agree(self):
        assert (self.log.log_start_offset, self.log.log_end_offset, self.log.high_watermark) == (
            self.start, self.end, self.hw)

    @invariant()
    def reads_return_the_records(self):
        offsets = []
        position = self.start
        while position < self.end:
            chunk = self.log.read(position, 500)
            assert chunk.first_offset <= position < chunk.next_offset
            offsets += [r[0] for r in read_back(chunk.read())]
            position = chunk.next_offset
        holding = next((b[0] for b in self.batches if b[0] + b[1] > self.start), self.end)
        assert offsets == list(range(holding, self.end))

    @invariant()
    def epochs_agree(self):
        assert [tuple(e) for e in self.log.leader_epoch_cache] == self.epochs


TestLogModel = LogModel.TestCase
TestLogModel.settings = settings(max_examples=60, stateful_step_count=25, deadline=None)
