"""Who may drive the control plane over HTTP: a bearer token for every state-changing call, and Host and
Origin headers that name the bound address.

* **Token.** Every method other than GET and HEAD needs ``Authorization: Bearer <token>`` (401
  otherwise). The token is configured or generated at start (and printed by ``kraftwire serve``).
* **Host** (against DNS rebinding: a page whose name resolves to 127.0.0.1 still sends its own name).
  A request must name the bound address: ``host:port``, and for a loopback bind also ``localhost``,
  ``127.0.0.1`` and ``[::1]`` with that port (403 otherwise). A server bound to every address
  (0.0.0.0, ::) cannot know its names; there the token alone guards the state-changing calls.
* **Origin** (against cross-site requests from a browser): when present it must be ``http://`` and
  an accepted Host (403 otherwise). Programs that send no Origin are not affected.

The read-only live view (``GET /``, ``/view``, ``/api/...``) needs no token, so a browser tab can show it.
"""
from __future__ import annotations

import hmac
import ipaddress

from .httpd import HttpError, Request

SAFE_METHODS = ("GET", "HEAD")
_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class RequestGuard:
    """Called for every request before it is routed; raises HttpError to refuse it."""

    def __init__(self, host: str, port: int, token: str):
        if not token:
            raise ValueError("the control plane needs a non-empty token")
        self.host = host
        self.port = port  # set again once an ephemeral port is bound
        self.token = token

    def accepted_hosts(self) -> set[str] | None:
        """The Host header values accepted, or None when bound to every address."""
        if self.host in ("0.0.0.0", "::", ""):
            return None
        names = {f"[{self.host}]" if ":" in self.host else self.host}
        if _is_loopback(self.host):
            names.update(_LOOPBACK_NAMES)
        return {f"{name}:{self.port}" for name in names}

    def __call__(self, request: Request) -> None:
        accepted = self.accepted_hosts()
        host = request.headers.get("host", "").lower()
        if accepted is not None and host not in accepted:
            raise HttpError(403, f"Host {host!r} is not this server's address")
        origin = request.headers.get("origin")
        if origin is not None:
            scheme, _, origin_host = origin.lower().partition("://")
            if scheme != "http" or (origin_host not in accepted if accepted is not None else origin_host != host):
                raise HttpError(403, f"requests from origin {origin!r} are not accepted")
        if request.method not in SAFE_METHODS:
            given = request.headers.get("authorization", "")
            scheme, _, credential = given.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(credential.strip().encode(), self.token.encode()):
                raise HttpError(401, "this call needs the control plane's token: Authorization: Bearer <token>")
