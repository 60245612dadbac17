"""The leader side of a replica (server/broker/partition.py) over a real log in a temporary directory:
the high watermark is the smallest log end offset the ISR's members reported, acks=-1 waiters wake when
it passes their records (NOT_ENOUGH_REPLICAS_AFTER_APPEND once the ISR shrank below min.insync.replicas,
NOT_LEADER_OR_FOLLOWER when leadership moves, REQUEST_TIMED_OUT otherwise), NOT_ENOUGH_REPLICAS refuses
an acks=-1 append up front, and DeleteRecords' low watermark waits for the followers' log start offsets.
This is the interface the followers' fetches drive."""
import asyncio
import time
import uuid

import pytest

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.records import encode_batch
from kraftwire.server.broker.partition import Partition
from kraftwire.server.metadata.image import PartitionState
from kraftwire.server.storage import LogConfig, PartitionLog

TOPIC_ID = uuid.uuid4()


class FixedClock:
    def now_ms(self) -> int:
        return int(time.time() * 1000)


def state(isr=(1, 2, 3), leader=1, epoch=3, replicas=(1, 2, 3)) -> PartitionState:
    return PartitionState(replicas=tuple(replicas), isr=tuple(isr), removing=(), adding=(), leader=leader,
                          leader_recovery_state=0, leader_epoch=epoch, partition_epoch=epoch,
                          directories=tuple(uuid.UUID(int=0) for _ in replicas))


def make_partition(tmp_path, min_insync=2, **kwargs):
    return Partition("orders", TOPIC_ID, 0, 1, state(**kwargs),
                     lambda: PartitionLog.open(tmp_path / "orders-0", TOPIC_ID, LogConfig(), FixedClock().now_ms()),
                     FixedClock(), lambda: min_insync)


def records(count: int) -> bytes:
    return encode_batch(0, -1, int(time.time() * 1000), [(None, b"v%d" % i) for i in range(count)])


async def test_the_high_watermark_is_the_isrs_smallest_log_end(tmp_path):
    partition = make_partition(tmp_path)
    appended = partition.append_as_leader(records(3), -1)
    assert (appended.base_offset, appended.required_offset, partition.high_watermark) == (0, 3, 0)
    waiter = asyncio.ensure_future(partition.wait_for_high_watermark(appended.required_offset, 30))
    partition.follower_fetched(2, 3)
    await asyncio.sleep(0)
    assert partition.high_watermark == 0 and not waiter.done()  # broker 3 has not reported yet
    partition.follower_fetched(3, 2)
    assert partition.high_watermark == 2 and not waiter.done()
    partition.follower_fetched(3, 3)
    assert partition.high_watermark == 3
    assert await waiter == ErrorCode.NONE
    partition.follower_fetched(2, 1)  # the watermark never goes back
    assert partition.high_watermark == 3
    # the log is Kafka's, on disk, with the leader's epoch stamped on the batch
    assert partition.log.leader_epoch_cache[0].epoch == 3
    assert (tmp_path / "orders-0" / "00000000000000000000.log").stat().st_size > 0


async def test_an_isr_of_the_leader_alone_follows_its_log_end_at_once(tmp_path):
    partition = make_partition(tmp_path, isr=(1,), min_insync=1)
    result = partition.append_as_leader(records(4), -1)
    assert partition.high_watermark == 4
    assert await partition.wait_for_high_watermark(result.required_offset, 1) == ErrorCode.NONE


async def test_min_insync_replicas_before_and_after_the_append(tmp_path):
    partition = make_partition(tmp_path, isr=(1,), min_insync=2)
    with pytest.raises(KafkaError) as refused:
        partition.append_as_leader(records(1), -1)
    assert refused.value.code == ErrorCode.NOT_ENOUGH_REPLICAS and partition.log.log_end_offset == 0
    assert partition.append_as_leader(records(1), 1).base_offset == 0  # acks=1 does not ask
    partition.update(state(isr=(1, 2)))
    waiting = partition.append_as_leader(records(1), -1)
    waiter = asyncio.ensure_future(partition.wait_for_high_watermark(waiting.required_offset, 30))
    await asyncio.sleep(0)
    partition.update(state(isr=(1,)))  # broker 2 left the ISR meanwhile: the leader's log end is the HW
    assert await waiter == ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND


async def test_waiters_fail_when_leadership_moves_or_time_runs_out(tmp_path):
    partition = make_partition(tmp_path)
    offset = partition.append_as_leader(records(1), -1).required_offset
    assert await partition.wait_for_high_watermark(offset, 0.05) == ErrorCode.REQUEST_TIMED_OUT
    waiter = asyncio.ensure_future(partition.wait_for_high_watermark(offset, 30))
    await asyncio.sleep(0)
    partition.update(state(leader=2, epoch=4))
    assert await waiter == ErrorCode.NOT_LEADER_OR_FOLLOWER
    with pytest.raises(KafkaError) as refused:
        partition.append_as_leader(records(1), 1)
    assert refused.value.code == ErrorCode.NOT_LEADER_OR_FOLLOWER


async def test_the_low_watermark_waits_for_the_followers_log_starts(tmp_path):
    partition = make_partition(tmp_path, isr=(1, 2), replicas=(1, 2))
    partition.append_as_leader(records(5), -1)
    partition.follower_fetched(2, 5, log_start_offset=0)
    assert partition.high_watermark == 5
    with pytest.raises(KafkaError) as beyond:
        partition.delete_records(6)
    assert beyond.value.code == ErrorCode.OFFSET_OUT_OF_RANGE
    assert partition.delete_records(3) == 3 and partition.log.log_start_offset == 3
    waiter = asyncio.ensure_future(partition.wait_for_low_watermark(3, 30))
    await asyncio.sleep(0)
    assert partition.low_watermark == 0 and not waiter.done()
    partition.follower_fetched(2, 5, log_start_offset=3)
    assert await waiter == ErrorCode.NONE and partition.low_watermark == 3
    assert partition.delete_records(-1) == 5  # -1: the high watermark
