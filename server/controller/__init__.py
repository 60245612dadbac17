"""The controller: the one writer of the metadata log. ``active_controller`` (``Controller``: the working
and committed images, ``write`` around a decision, broker sessions) through the ``metadata_log``
interface; ``node``, the controller's listener (``ControllerNode``, what it offers the handlers, and its
``QuorumHandle``: the Raft log as the Raft RPCs reach it) with the commit listeners that run beside it
(throttle clean-up); and every other module, the decision modules: pure functions of an image (and a
request) whose whole decision is a ``result.ControllerResult``. They are the managers, named for what
they own as Kafka's controller is cut (``configuration_control``, ``cluster_control``, ``quorum_control``,
``acls``, ``scram``, the replication managers, ``reset`` for the harness), and the rules they share
(``broker_lifecycle``, ``partition_change``, ``placement``, ``topics``, ``throttle_cleanup``, ``replication_bandwidth``,
``config_validation``). Brokers learn what they host from the metadata log itself
(server/broker/replica_manager.py), as KRaft brokers do: the controller sends them nothing.

It may import the codec, the metadata wing and the wire (the node's listener); the decision modules
only the codec, the metadata wing and each other (no wire, no Raft log, no handlers, no broker wing,
not the log interface nor the writer; tests/project/test_layout.py). The Raft log is reached through
``MetadataLog`` and ``QuorumHandle``, handed in by the host, and the handlers through the table the host
passes to ``ControllerNode``.
"""
