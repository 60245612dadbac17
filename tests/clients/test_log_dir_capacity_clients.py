"""A log directory's simulated capacity, through kafka-python over TCP on the virtual clock: a move that
overfills a directory takes it offline as a full disk takes Kafka's (its replicas offline, the leaders it
held move, DescribeLogDirs answers KAFKA_STORAGE_ERROR for it); raising its capacity and restoring it
brings it back, and the move then completes."""
from kafka import TopicPartition
from kafka.structs import TopicPartitionReplica
from kafka.admin import KafkaAdminClient, NewTopic

from kraftwire.codec import ErrorCode
from kraftwire.server.host.cluster import BackgroundCluster

MiB = 1 << 20


def leader_of(admin: KafkaAdminClient, topic: str) -> int:
    [described] = admin.describe_topics([topic])
    return described["partitions"][0]["leader_id"]


def test_a_move_that_overfills_a_directory_takes_it_offline():
    with BackgroundCluster(brokers=3, virtual_clock=True, log_dirs=2,
                           log_dir_capacities={(2, 0): 150 * MiB, (2, 1): 150 * MiB}) as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap)
        try:
            admin.create_topics([NewTopic("big", replica_assignments={0: [1]},
                                          topic_configs={"kraftwire.partition.size.bytes": str(200 * MiB)}),
                                 NewTopic("led", replica_assignments={0: [2, 3]},
                                          topic_configs={"kraftwire.partition.size.bytes": str(MiB)})])
            bg.run(bg.cluster.advance(1))
            assert leader_of(admin, "led") == 2
            (before,) = admin.describe_log_dirs(brokers=[2])
            [path] = [d["log_dir"] for d in before["log_dirs"] if d["topics"]]  # the one holding "led"
            assert {(d["error_code"], d["total_bytes"]) for d in before["log_dirs"]} == {(0, 150 * MiB)}
            admin.alter_replica_log_dirs({TopicPartitionReplica("big", 0, 2): path})  # the move goes there too
            admin.alter_partition_reassignments({TopicPartition("big", 0): [2]})
            bg.run(bg.cluster.advance(10))  # at 100 MiB/s, 150 MiB fill after 1.5 s of copying
            (after,) = admin.describe_log_dirs(brokers=[2])
            assert {d["log_dir"]: d["error_code"] for d in after["log_dirs"]}[path] == ErrorCode.KAFKA_STORAGE_ERROR
            assert leader_of(admin, "led") == 3  # its leadership moved off the offline replica
            assert list(admin.list_partition_reassignments()) == [TopicPartition("big", 0)]  # stuck
            log_dir = bg.call(lambda: bg.cluster.broker(2).log_manager.directory(path))
            assert not log_dir.online and log_dir.full and bg.call(lambda: bg.cluster.broker(2).running)
            image = bg.call(lambda: bg.cluster.controller.committed)
            assert log_dir.directory_id not in image.brokers[2].log_dirs

            bg.run(bg.cluster.set_log_dir_capacity(2, path, 1 << 30))  # the operator makes room ...
            bg.run(bg.cluster.restore_log_dir(2, path))  # ... and brings the directory back
            bg.run(bg.cluster.run_until_reassignments_done())
            assert admin.list_partition_reassignments() == {}
            (healed,) = admin.describe_log_dirs(brokers=[2])
            [directory] = [d for d in healed["log_dirs"] if d["log_dir"] == path]
            assert directory["error_code"] == 0 and directory["total_bytes"] == 1 << 30
            assert directory["usable_bytes"] == (1 << 30) - 201 * MiB
        finally:
            admin.close()


def test_a_directory_restored_while_still_full_fails_again():
    """A broker's only directory filling stops it, as Kafka's halts; brought back and started while still
    full, it fails again."""
    with BackgroundCluster(brokers=2, virtual_clock=True, log_dir_capacities={(2, 0): 50 * MiB}) as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap)
        try:
            admin.create_topics([NewTopic("big", replica_assignments={0: [1]},
                                          topic_configs={"kraftwire.partition.size.bytes": str(200 * MiB)})])
            admin.alter_partition_reassignments({TopicPartition("big", 0): [1, 2]})
            bg.run(bg.cluster.advance(10))
            log_dir = bg.call(lambda: bg.cluster.broker(2).log_manager.directories[0])
            assert not log_dir.online
            assert not bg.call(lambda: bg.cluster.broker(2).running)
            bg.run(bg.cluster.restore_log_dir(2, 0))
            assert log_dir.online
            bg.run(bg.cluster.start_broker(2))
            bg.run(bg.cluster.advance(1))
            assert not log_dir.online and log_dir.full
        finally:
            admin.close()
