"""The wire: Kafka's framing over TCP. ``transport`` serves a port (``Listener``: frames, request headers,
pipelined in-order responses, a table of handlers by API key); ``client`` is the small asyncio client the
simulated brokers and the controller use to talk to each other; ``security`` gives a listener its
protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL), TLS context and per-connection SASL session. It knows
messages only as the codec builds them and imports nothing of the server besides itself: only ``kraftwire.codec``.
"""
