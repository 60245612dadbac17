"""What the group handlers share: a group call's KafkaError as the answer's error code."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from kraftwire.codec import KafkaError


async def answer_or(call: Awaitable[Any], refused: Callable[[int], Any]) -> Any:
    """The group call's answer, or ``refused(code)`` when the coordinator could not serve it."""
    try:
        return await call
    except KafkaError as exc:
        return refused(exc.code)
