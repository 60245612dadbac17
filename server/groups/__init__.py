"""The group coordinator (Kafka's group-coordinator module), classic protocol: pure, imports only ``codec``.

``records``: the keys and values of ``__consumer_offsets`` as Kafka 4.3.1 writes them (OffsetCommitKey/
Value, GroupMetadataKey/Value, each prefixed by its int16 type or version), so ``kafka-dump-log
--offsets-decoder`` reads kraftwire's segments. ``shard``: the state of one ``__consumer_offsets``
partition (its groups, members, generations, committed offsets) and the operations on it, each taking
the shard, a request and the time and giving the records to append and an answer. Committed offsets
and group metadata change only by ``GroupShard.replay`` of records (also how a new leader loads the
partition); what Kafka keeps only in memory (members waiting in a join or sync, session deadlines) is
kept in memory here too. ``consumer`` holds the KIP-848 consumer groups of a shard (ConsumerGroupHeartbeat,
its assignors and records: ``consumer_records``). The broker wing hosts the shards
(server/broker/group_coordinator.py).
"""
