"""SaslHandshake (17), v0-1: choose the SASL mechanism of a connection, on every listener.

On a SASL listener before authentication the connection's session (server/wire/security.py) answers:
NONE and the enabled mechanisms, or UNSUPPORTED_SASL_MECHANISM (33) and a close. Anywhere else (a
listener without SASL, or a connection already authenticated) the answer is ILLEGAL_SASL_STATE (34)
with no mechanisms, as Kafka's request handler gives. v0 means the tokens that follow come bare,
without Kafka headers (the transport hands them to the session).
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import SaslHandshakeRequest, SaslHandshakeResponse
from kraftwire.server.wire.transport import RequestContext

from .nodes import NodeApi, session_of

API_KEY = 17


def on_any(_node: NodeApi, context: RequestContext, request: SaslHandshakeRequest) -> SaslHandshakeResponse:
    session = session_of(context)
    if session is None:
        return SaslHandshakeResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=[])
    return session.handshake(context.api_version, request.mechanism)
