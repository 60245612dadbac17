"""kraftwire's codec: Kafka's wire and metadata-log formats, generated from the JSON in ``schemas/``.

The classes and constants are checked in as generated modules (``messages.py``, ``record_types.py``,
``error_codes.py``), rewritten after any change in ``schemas/`` by::

    python -m kraftwire.codec.generate

and ``tests/wings/codec/test_codec_generated.py`` fails while they differ from what that writes.

* ``codec.messages.<Name>``: request, response and header classes (``encode(version)``,
  ``decode(data, version)``); ``codec.api(api_key)`` gives the (request, response) pair of an API.
* ``codec.records``: metadata and control records, their frame and v2 record batches.
* ``codec.ErrorCode``: Kafka's error codes with their default messages; ``codec.KafkaError`` carries
  one from a decision to its response.
* ``codec.constants``: resource types and the leader and directory sentinels; ``codec.log_layout``:
  the metadata partition's directory, file names and index entries.
* Header versions follow Kafka: flexible API versions use request header v2 / response header v1,
  others v1 / v0, and ApiVersions responses always use header v0.
"""
from . import messages
from .error_codes import ErrorCode
from .errors import CodecError, EncodeError, KafkaError, MalformedError, UnsupportedVersionError
from .message import Message

API_VERSIONS_KEY = 18

_APIS: dict[int, tuple[type[Message], type[Message]]] = {}
for _cls in messages.ALL.values():
    if _cls.SPEC.type == "request" and _cls.API_KEY is not None:
        _APIS[_cls.API_KEY] = (_cls, messages.ALL[_cls.__name__[: -len("Request")] + "Response"])


def api(api_key: int) -> tuple[type[Message], type[Message]]:
    """The (request class, response class) of an API key; KeyError if kraftwire has no schema for it."""
    return _APIS[api_key]


def api_keys() -> list[int]:
    return sorted(_APIS)


def request_header_version(api_key: int, api_version: int) -> int:
    request = _APIS[api_key][0]
    return 2 if api_version in request.FLEXIBLE_VERSIONS else 1


def response_header_version(api_key: int, api_version: int) -> int:
    if api_key == API_VERSIONS_KEY:
        return 0
    response = _APIS[api_key][1]
    return 1 if api_version in response.FLEXIBLE_VERSIONS else 0


__all__ = ["api", "api_keys", "request_header_version", "response_header_version", "messages",
           "CodecError", "EncodeError", "MalformedError", "UnsupportedVersionError", "ErrorCode", "KafkaError"]
