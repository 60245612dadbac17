"""Brokers keep their logs across a restart of their process, as Kafka's do (server/broker/checkpoints.py):
each log directory holds Kafka's ``recovery-point-offset-checkpoint`` (every log's size, offsets being
bytes) and, after a clean stop, ``.kafka_cleanshutdown`` with the broker's epoch. Restarted on the same
data directory, an in-sync follower copies nothing: it rejoins the ISR although replication is slowed to
1 byte a second. After kill -9 a replica starts from the last periodic checkpoint and copies the rest.
Everything goes through the wire (CreateTopics, IncrementalAlterConfigs, AlterPartitionReassignments,
DescribeLogDirs to a broker's listener) and the files on disk."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from kraftwire.codec.messages import (AlterPartitionReassignmentsRequest, AlterReplicaLogDirsRequest, CreateTopicsRequest,
                                     DeleteTopicsRequest, DescribeLogDirsRequest, IncrementalAlterConfigsRequest)
from kraftwire.server.broker.checkpoints import CLEAN_SHUTDOWN_FILE, RECOVERY_POINT_FILE
from kraftwire.server.host.cluster import Cluster
from kraftwire.server.metadata.configs import PARTITION_SIZE_BYTES, REPLICATION_BANDWIDTH
from tests.wings.broker.test_metadata_followers import eventually
from tests.wings.broker.test_replicas_from_the_log import ask
from tests.served import Served

SIZE = 10 ** 9
TOPIC_RESOURCE, BROKER_RESOURCE, SET = 2, 4, 0


async def create(broker, name: str, assignment: list[list[int]], size: int) -> None:
    answer = await ask(broker, CreateTopicsRequest(timeout_ms=10000, topics=[CreateTopicsRequest.CreatableTopic(
        name=name, num_partitions=-1, replication_factor=-1,
        configs=[CreateTopicsRequest.CreatableTopicConfig(name=PARTITION_SIZE_BYTES, value=str(size))],
        assignments=[CreateTopicsRequest.CreatableReplicaAssignment(partition_index=i, broker_ids=replicas)
                     for i, replicas in enumerate(assignment)])]))
    assert answer.topics[0].error_code == 0, answer


async def slow_down(broker, bytes_per_second: int) -> None:
    """Set every broker's simulated replication bandwidth (the cluster default) with IncrementalAlterConfigs."""
    answer = await ask(broker, IncrementalAlterConfigsRequest(validate_only=False, resources=[
        IncrementalAlterConfigsRequest.AlterConfigsResource(resource_type=BROKER_RESOURCE, resource_name="", configs=[
            IncrementalAlterConfigsRequest.AlterableConfig(name=REPLICATION_BANDWIDTH, config_operation=SET,
                                                           value=str(bytes_per_second))])]))
    assert [r.error_code for r in answer.responses] == [0], answer


async def sizes(broker) -> dict[tuple[str, int], tuple[int, int]]:
    """(topic, partition) -> (size, offset lag) as the broker's DescribeLogDirs lists them."""
    answer = await ask(broker, DescribeLogDirsRequest(topics=None), 4)
    return {(t.name, p.partition_index): (p.partition_size, p.offset_lag)
            for result in answer.results for t in result.topics for p in t.partitions}


def checkpoint(directory: Path) -> tuple[list[str], dict[tuple[str, int], int]]:
    """The header lines and the entries of a directory's recovery-point checkpoint."""
    lines = (directory / RECOVERY_POINT_FILE).read_text().splitlines()
    entries = {(topic, int(partition)): int(offset) for topic, partition, offset in map(str.split, lines[2:])}
    return lines[:2], entries


def log_dir(data: Path, broker_id: int) -> Path:
    return data / f"broker-{broker_id}" / "logs-0"


async def test_after_a_clean_stop_an_in_sync_follower_copies_nothing(tmp_path):
    async with Cluster(brokers=3, data_dir=tmp_path) as cluster:
        first = cluster.broker(1)
        await create(first, "kept", [[1, 2, 3], [2, 3, 1]], SIZE)
        await cluster.wait_until(lambda image: all(len(s.isr) == 3 for s in image.topic("kept").partitions.values()))
        await slow_down(first, 1)  # a follower that had to copy its partition never would
        epochs = {b.broker_id: b.epoch for b in cluster.brokers}
    for broker_id, epoch in epochs.items():
        directory = log_dir(tmp_path, broker_id)
        assert checkpoint(directory) == (["0", "2"], {("kept", 0): SIZE, ("kept", 1): SIZE})
        assert json.loads((directory / CLEAN_SHUTDOWN_FILE).read_text()) == {"version": 0, "brokerEpoch": epoch}

    async with Cluster(brokers=3, data_dir=tmp_path) as restarted:
        # the files were read (and the clean-shutdown one deleted, as Kafka's start does); each broker is a
        # new incarnation that registered with its previous epoch
        for broker in restarted.brokers:
            assert not (log_dir(tmp_path, broker.broker_id) / CLEAN_SHUTDOWN_FILE).exists()
            assert broker.previous_epoch == epochs[broker.broker_id] != broker.epoch
        # each re-registration took its broker out of the ISRs (Kafka's rule for a new incarnation); at
        # 1 byte a second only followers that kept their logs can be back in them
        await restarted.wait_until(lambda image: all(len(s.isr) == 3 for s in image.topic("kept").partitions.values()),
                                   timeout=30)
        for broker in restarted.brokers:
            assert await sizes(broker) == {("kept", 0): (SIZE, 0), ("kept", 1): (SIZE, 0)}


SERVE = ("--brokers", "3", "--port", "0", "--controller-port", "0", "--data-dir", "data", "--log-level", "WARNING",
         "--log-flush-offset-checkpoint-interval-ms", "100")


async def test_after_kill_9_a_replica_starts_from_its_last_checkpoint(tmp_path):
    """A reassignment copies onto broker 3 at 1 MB/s; the process is killed once broker 3's checkpoint
    holds at least 2 MB of it. Restarted, broker 3's replica has at least what that checkpoint holds (it
    never starts empty) and copies the rest."""
    data = tmp_path / "data"
    served = Served(tmp_path, *SERVE)
    try:
        host, port = served.bootstrap.split(",")[0].rsplit(":", 1)
        broker = SimpleNamespace(host=host, port=int(port))
        await create(broker, "moving", [[1, 2]], 20 * 10 ** 6)
        await slow_down(broker, 10 ** 6)
        answer = await ask(broker, AlterPartitionReassignmentsRequest(timeout_ms=10000, topics=[
            AlterPartitionReassignmentsRequest.ReassignableTopic(name="moving", partitions=[
                AlterPartitionReassignmentsRequest.ReassignablePartition(partition_index=0, replicas=[1, 2, 3])])]))
        assert [p.error_code for t in answer.responses for p in t.partitions] == [0], answer

        async def copied_2_mb() -> bool:
            try:
                return checkpoint(log_dir(data, 3))[1].get(("moving", 0), 0) >= 2 * 10 ** 6
            except (FileNotFoundError, ValueError):  # not written yet
                return False
        await eventually(copied_2_mb, 60, "broker 3's checkpoint to hold 2 MB of the partition")
    finally:
        served.kill()
    kept = checkpoint(log_dir(data, 3))[1][("moving", 0)]
    assert not (log_dir(data, 3) / CLEAN_SHUTDOWN_FILE).exists()
    assert 2 * 10 ** 6 <= kept < 20 * 10 ** 6

    served = Served(tmp_path, *SERVE)
    try:
        brokers = served.bootstrap.split(",")
        host, port = brokers[2].rsplit(":", 1)
        third = SimpleNamespace(host=host, port=int(port))
        size, lag = (await sizes(third))[("moving", 0)]
        assert size >= kept and size + lag == 20 * 10 ** 6

        async def done() -> bool:
            return (await sizes(third))[("moving", 0)] == (20 * 10 ** 6, 0)
        await eventually(done, 60, "broker 3 to copy the rest")
    finally:
        served.stop()


async def placed(broker) -> dict[tuple[str, int], tuple[str, int]]:
    """(topic, partition) -> (log directory, size) as the broker's DescribeLogDirs lists them."""
    answer = await ask(broker, DescribeLogDirsRequest(topics=None), 4)
    return {(t.name, p.partition_index): (result.log_dir, p.partition_size)
            for result in answer.results for t in result.topics for p in t.partitions}


async def test_each_log_directory_keeps_its_own_logs(tmp_path):
    """JBOD: each directory's checkpoint lists the logs it holds, and after a clean restart every replica
    is in the same directory with its size, and back in its ISR at 1 byte a second."""
    async with Cluster(brokers=2, log_dirs=2, data_dir=tmp_path) as cluster:
        first = cluster.broker(1)
        await create(first, "spread", [[1, 2], [2, 1], [1, 2], [2, 1]], SIZE)
        await cluster.wait_until(lambda image: all(len(s.isr) == 2 for s in image.topic("spread").partitions.values()))
        await slow_down(first, 1)
        before = {b.broker_id: await placed(b) for b in cluster.brokers}
    for broker_id, logs in before.items():
        assert len({directory for directory, _ in logs.values()}) == 2  # both directories hold logs
        for k in range(2):
            directory = tmp_path / f"broker-{broker_id}" / f"logs-{k}"
            assert checkpoint(directory)[1] == {key: size for key, (path, size) in logs.items()
                                                if Path(path) == directory.resolve()}
    async with Cluster(brokers=2, log_dirs=2, data_dir=tmp_path) as restarted:
        await restarted.wait_until(lambda image: all(len(s.isr) == 2 for s in image.topic("spread").partitions.values()),
                                   timeout=30)
        for broker in restarted.brokers:
            assert await placed(broker) == before[broker.broker_id]


def checkpoints_of(data: Path, broker_id: int) -> dict[int, dict[tuple[str, int], int]] | None:
    """Each of a broker's two directories' checkpoint entries (None before both are written)."""
    try:
        return {k: checkpoint(data / f"broker-{broker_id}" / f"logs-{k}")[1] for k in range(2)}
    except FileNotFoundError:
        return None


async def test_each_periodic_checkpoint_follows_deletions_resizes_and_directory_moves(tmp_path):
    """A broker writes a topic's lines again only while its logs are unchanged (CheckpointedTopic): after a
    deletion, a smaller partition size and a move to the other directory, the next checkpoints list
    exactly the logs as they are."""
    async with Cluster(brokers=2, log_dirs=2, data_dir=tmp_path, checkpoint_interval_ms=50) as cluster:
        first = cluster.broker(1)
        await create(first, "stays", [[1, 2], [2, 1]], SIZE)
        await create(first, "gone", [[1, 2]], SIZE)
        everything = {("stays", 0): SIZE, ("stays", 1): SIZE, ("gone", 0): SIZE}

        async def listed(wanted: dict) -> bool:
            found = checkpoints_of(tmp_path, 1)
            return found is not None and found[0] | found[1] == wanted and not found[0].keys() & found[1].keys()
        await eventually(lambda: listed(everything), 30, "broker 1's checkpoints to list every log")
        where = 0 if ("stays", 0) in checkpoints_of(tmp_path, 1)[0] else 1
        other = tmp_path / "broker-1" / f"logs-{1 - where}"

        answer = await ask(first, DeleteTopicsRequest(topic_names=["gone"], timeout_ms=10000), 5)
        assert answer.responses[0].error_code == 0, answer
        answer = await ask(first, IncrementalAlterConfigsRequest(validate_only=False, resources=[
            IncrementalAlterConfigsRequest.AlterConfigsResource(resource_type=TOPIC_RESOURCE, resource_name="stays", configs=[
                IncrementalAlterConfigsRequest.AlterableConfig(name=PARTITION_SIZE_BYTES, config_operation=SET,
                                                               value=str(SIZE // 2))])]))
        assert [r.error_code for r in answer.responses] == [0], answer
        answer = await ask(first, AlterReplicaLogDirsRequest(dirs=[AlterReplicaLogDirsRequest.AlterReplicaLogDir(
            path=str(other), topics=[AlterReplicaLogDirsRequest.AlterReplicaLogDirTopic(name="stays", partitions=[0])])]))
        assert [p.error_code for t in answer.results for p in t.partitions] == [0], answer

        async def moved() -> bool:
            found = checkpoints_of(tmp_path, 1)
            return found is not None and found[1 - where].get(("stays", 0)) == SIZE // 2 and await listed(
                {("stays", 0): SIZE // 2, ("stays", 1): SIZE // 2})
        await eventually(moved, 30, "broker 1's checkpoints to list the logs as they are now")
