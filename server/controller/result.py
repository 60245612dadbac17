"""What a controller decision returns: the records to write and the response to send once they commit
(Kafka's ``ControllerResult``).

A decision never picks record versions: ``Controller.write`` frames each record at the version the
metadata version calls for (``kraftwire.server.metadata.record_versions``).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from kraftwire.codec.message import Message


class ControllerResult(NamedTuple):
    records: Sequence[Message] = ()
    response: Any = None  # the API's response message: its class is the decision's API's
