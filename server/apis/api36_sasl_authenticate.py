"""SaslAuthenticate (36), v0-2: one step of the SASL exchange chosen by SaslHandshake v1.

The connection's session (server/wire/security.py) checks the token: PLAIN in one step, SCRAM in two.
A wrong user or password gets SASL_AUTHENTICATION_FAILED (58) with a generic message and the
connection closes after ``connection.failed.authentication.delay.ms``; a SaslAuthenticate before the
handshake, after authentication, or on a listener without SASL gets ILLEGAL_SASL_STATE (34).
SessionLifetimeMs (v1+) is 0: sessions do not expire (no re-authentication, KIP-368).
"""
from __future__ import annotations

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import SaslAuthenticateRequest, SaslAuthenticateResponse
from kraftwire.server.wire.transport import RequestContext

from .nodes import NodeApi, session_of

API_KEY = 36


def on_any(_node: NodeApi, context: RequestContext, request: SaslAuthenticateRequest) -> SaslAuthenticateResponse:
    session = session_of(context)
    if session is None:
        return SaslAuthenticateResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE, auth_bytes=b"",
                                        error_message="SaslAuthenticate on a listener without SASL")
    return session.authenticate(request.auth_bytes)
