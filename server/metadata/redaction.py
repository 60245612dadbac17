"""What of a metadata record may be shown outside the log: the rendering every reader that prints records
uses (the control plane's ``/api/state``, the live view, ``kraftwire log dump``), so secrets never leave
the metadata log in the clear.

As Kafka's ``RecordRedactor``: a UserScramCredentialRecord shows its user, mechanism and iteration count,
never its salt, StoredKey or ServerKey (enough for an offline attack on the password, and ServerKey lets
anyone pose as the server to SCRAM clients); a ConfigRecord of a sensitive config shows ``(redacted)``
for its value. A config is sensitive when its type is PASSWORD in the catalogue, and also, as in Kafka,
when the catalogue does not know it or its resource type at all (a ``listener.name.*`` keystore password,
a newer release's config): what cannot be judged is not shown. A removal (a null value) stays null,
since it discloses nothing; Kafka writes ``(redacted)`` there too.
"""
from __future__ import annotations

from collections.abc import Mapping

from kraftwire.codec.record_types import ConfigRecord, UserScramCredentialRecord

from .config_values import ConfigType
from .configs import catalogue_of

REDACTED = "(redacted)"
SCRAM_SECRETS = ("salt", "stored_key", "server_key")


def is_sensitive_config(resource_type: int, name: str) -> bool:
    """True for a config whose value must not be shown: PASSWORD typed, or unknown to the catalogue."""
    try:
        key = catalogue_of(resource_type).get(name)
    except ValueError:  # a resource type without a catalogue here (groups, client metrics, ...)
        return True
    return key is None or key.type == ConfigType.PASSWORD


def needs_redaction(record: object) -> bool:
    if isinstance(record, UserScramCredentialRecord):
        return True
    return (isinstance(record, ConfigRecord) and record.value is not None
            and is_sensitive_config(record.resource_type, record.name))


def redact_fields(record: object, fields: Mapping[str, object]) -> dict[str, object]:
    """``fields``: the record rendered as a dict of its field names (``to_dict`` or ``log dump``'s
    rendering); a copy with every secret of the record replaced by ``(redacted)``."""
    shown = dict(fields)
    if not needs_redaction(record):
        return shown
    secrets = SCRAM_SECRETS if isinstance(record, UserScramCredentialRecord) else ("value",)
    for name in secrets:
        if name in shown:
            shown[name] = REDACTED
    return shown
