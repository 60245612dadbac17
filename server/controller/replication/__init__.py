"""The replication control: Kafka's ``ReplicationControlManager``, cut by what it owns.

Each module holds one pure ``decide``: a function of the image (and the decoded request) that returns a
``ControllerResult`` (records and the response to send once they commit), or, for a read, the response.

* ``topic_creation`` - CreateTopics: names, configs, placement, the new topics' records;
* ``topic_deletion`` - DeleteTopics: by name or id, one RemoveTopicRecord each;
* ``partition_creation`` - CreatePartitions: new partitions of existing topics;
* ``reassignment`` - AlterPartitionReassignments: start, change or cancel moves;
* ``reassignment_listing`` - ListPartitionReassignments, and the encoded "list all" answer of an image;
* ``elections`` - ElectLeaders: preferred and unclean elections;
* ``alter_partition`` - AlterPartition: a leader's proposed ISR, which completes reassignments;
* ``directories`` - AssignReplicasToDirs: which log directory holds a replica (KIP-858);

They share the controller's rules beside this package (``partition_change``, ``topics``, ``placement``,
``broker_lifecycle``); the bulk reassignment's positional records and answers are in
``server/metadata/fast_paths.py``, the one module of such speed tricks. They import only ``codec``,
``server.metadata`` and other decision modules of ``server.controller``: never the wire, the Raft log,
the handlers, the broker wing, nor the controller's log and writer (tests/project/test_layout.py).
"""
