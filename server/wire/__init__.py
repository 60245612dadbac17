"""The wire: Kafka's framing over TCP. ``transport`` serves a port (``Listener``: frames, request headers,
pipelined in-order responses, a table of handlers by API key); ``client`` is the small asyncio client the
simulated brokers and the controller use to talk to each other. It knows messages only as the codec
builds them and imports nothing of the server besides itself: only ``kraftwire.codec``.
"""
