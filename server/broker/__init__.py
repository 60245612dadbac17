"""The simulated brokers: ``node`` (``BrokerNode``: its listener, its session with the controller over
BrokerRegistration and BrokerHeartbeat, forwarding), ``replication_network`` (the cluster-wide data
plane: copies and their rates), ``replica_manager`` (the replicas one broker hosts, joined to the network
by the callbacks it registers), ``partition`` (a replica's real log, its leader state and high watermark),
``produce`` and ``offsets`` (the answers to Produce, ListOffsets and DeleteRecords), ``topic_stats``
(Kafka's BrokerTopicMetrics counts, which Produce and Fetch bump), ``producer_ids`` (the
producer ids a broker hands out), ``log_dirs`` (its JBOD log directories) and ``checkpoints`` (what its
log directories keep across a restart of its process: Kafka's checkpoint and clean-shutdown files).

A broker is a peer of the controller behind the wire: it may import the codec, the metadata wing
(the image it reads, through a ``MetadataView``), the log layer (``storage``) and the wire, and nothing
of ``controller``, ``apis`` or ``raft``, even indirectly; the host passes it the view, the handler table
and the controller's address.
"""
