"""Kafka error codes that kraftwire answers with, and the exception that carries one to a response.

Decision code raises ``KafkaError``; the handler turns it into the response's ErrorCode and
ErrorMessage, so a client sees the same code (and, where Kafka has one, the same text) as from Kafka.
"""

UNKNOWN_SERVER_ERROR = -1
UNKNOWN_TOPIC_OR_PARTITION = 3
NOT_LEADER_OR_FOLLOWER = 6
REPLICA_NOT_AVAILABLE = 9
INVALID_TOPIC_EXCEPTION = 17
TOPIC_ALREADY_EXISTS = 36
INVALID_PARTITIONS = 37
INVALID_REPLICATION_FACTOR = 38
INVALID_REPLICA_ASSIGNMENT = 39
INVALID_CONFIG = 40
INVALID_REQUEST = 42
POLICY_VIOLATION = 44
KAFKA_STORAGE_ERROR = 56
LOG_DIR_NOT_FOUND = 57
STALE_BROKER_EPOCH = 77
PREFERRED_LEADER_NOT_AVAILABLE = 80
ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
ELECTION_NOT_NEEDED = 84
UNKNOWN_TOPIC_ID = 100


class KafkaError(Exception):
    """A refused request: ``code`` is the Kafka error code, ``message`` the ErrorMessage (None for
    Kafka's stock message of that code)."""

    def __init__(self, code: int, message: str | None = None):
        super().__init__(code, message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"error {self.code}: {self.message}"
