"""Kafka error codes that kraftwire answers with, and the exception that carries one to a response.

Decision code raises ``KafkaError``; the handler turns it into the response's ErrorCode and
ErrorMessage, so a client sees the same code (and, where Kafka has one, the same text) as from Kafka.
"""

INVALID_PARTITIONS = 37
INVALID_REPLICATION_FACTOR = 38
INVALID_CONFIG = 40
INVALID_REQUEST = 42


class KafkaError(Exception):
    """A refused request: ``code`` is the Kafka error code, ``message`` the ErrorMessage (None for
    Kafka's stock message of that code)."""

    def __init__(self, code: int, message: str | None = None):
        super().__init__(code, message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"error {self.code}: {self.message}"
