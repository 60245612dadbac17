"""The codec's two failure kinds (bad bytes coming in, a bad object going out), and ``KafkaError``: a
request refused with a Kafka error code, raised by decision code and turned by the handler into the
response's ErrorCode and ErrorMessage, so a client sees the same code (and, where Kafka has one, the
same text) as from Kafka."""
from .error_codes import ErrorCode


class CodecError(ValueError):
    """Base of every error the codec raises."""


class MalformedError(CodecError):
    """Input bytes that are not a valid encoding: truncated data, a bad varint, a length beyond the
    buffer, a negative length where null is not allowed, bytes left over, a bad CRC.

    ``what`` says what was being read and ``offset`` where (a byte offset into the input)."""

    def __init__(self, what: str, offset: int):
        super().__init__(f"{what} (at byte {offset})")
        self.what = what
        self.offset = offset


class EncodeError(CodecError):
    """An object that cannot be written at the requested version: the version is not valid for the
    message, a field the version lacks holds a non-default value, null sits where it may not, or
    unknown tagged fields are set on a version without tagged fields."""


class UnsupportedVersionError(CodecError):
    """A version outside the message's validVersions was asked for."""


class KafkaError(Exception):
    """A refused request: ``code`` is the Kafka error code, ``message`` the ErrorMessage (None for
    Kafka's stock message of that code)."""

    def __init__(self, code: int, message: str | None = None):
        super().__init__(code, message)
        self.code = ErrorCode(code)
        self.message = message

    def __str__(self) -> str:
        return f"error {self.code}: {self.message}"
