"""The controller: the one writer of the metadata log. ``active_controller`` (``Controller``: the working
and committed images, ``write`` around a decision, broker sessions) through the ``metadata_log``
interface; the pure decision rules, functions of an image that return records (``partition_change``,
``placement``, ``topics``, ``broker_lifecycle``, ``throttle_cleanup``, ``replication_bandwidth``,
``config_validation``, ``acls``, ``scram``; a request's whole decision is a ``result.ControllerResult``);
and ``node``, the controller's listener with the commit listeners that run beside it (throttle clean-up).
Brokers learn what they host from the metadata log itself (server/broker/replica_manager.py), as KRaft
brokers do: the controller sends them nothing.

It may import the codec, the metadata wing and the wire (the node's listener);
the decision rules only the codec and the metadata wing (no wire, no Raft log, no handlers). The Raft log
is reached through ``MetadataLog``, handed in by the host, and the handlers through the table the host
passes to ``ControllerNode``.
"""
