"""The kraftwire server (``kraftwire.server``): the asyncio process that serves the Kafka wire, in wings.

``wire`` (framing, listener, client), ``apis`` (one handler per API key), ``metadata`` (the image and
its records, shared by the controller and the brokers), ``controller`` (the one writer and its pure
decisions), ``broker`` (the simulated brokers), ``raft`` (the metadata log on disk) and ``host`` (what
composes them into a cluster and runs it). Each wing's docstring says what it may import;
tests/project/test_layout.py checks those rules and ARCHITECTURE.md draws them. Nothing here imports
``kraftwire.audit`` except the host's CLI.
"""
