"""Who is on the other end of a connection: listener security protocols, TLS, SASL PLAIN and SCRAM.

A listener has a security protocol, as Kafka names them: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL.
A listener's name maps to its protocol through ``listener.security.protocol.map`` semantics
(``protocol_of``): a name in the map gets its entry; a name that is itself a protocol maps to itself.

``ListenerSecurity`` holds what one listener needs (its TLS context, the SASL mechanisms it enables,
the credentials) and opens a ``Session`` per connection, which the transport consults before every
request. The session follows Kafka's ``SaslServerAuthenticator``:

* before authentication only ApiVersions, SaslHandshake (17) and SaslAuthenticate (36) are read, in
  that order (ApiVersions optional); any other request closes the connection; SaslHandshake in the
  authenticate stage, or SaslAuthenticate before a handshake, gets ILLEGAL_SASL_STATE (34) and a close;
* an unknown mechanism gets UNSUPPORTED_SASL_MECHANISM (33) listing the enabled ones, and a close;
* a wrong user or password gets SASL_AUTHENTICATION_FAILED (58) with a message that does not say
  which was wrong, and the connection closes ``connection.failed.authentication.delay.ms`` later;
* frames before authentication are capped at ``sasl.server.max.receive.size`` (512 KiB);
* SaslHandshake v0 switches to raw tokens (size-prefixed, no Kafka header), as Kafka's v0 clients
  expect; a failed raw exchange closes without an answer;
* once authenticated (or on a non-SASL listener), SaslHandshake and SaslAuthenticate answer
  ILLEGAL_SASL_STATE, as Kafka's request handler does (no re-authentication, KIP-368).

The principal is ``User:<name>`` after SASL, ``User:<distinguished name>`` of a TLS client
certificate (most specific part first, as Kafka's default SSL principal builder writes it), and
``User:ANONYMOUS`` otherwise.

SCRAM credentials are kept as Kafka keeps them (salt, StoredKey, ServerKey, iterations; never the
password); PLAIN passwords are compared in constant time, as Kafka's JAAS ``user_<name>`` entries are.
"""
from __future__ import annotations

import asyncio
import hmac
import logging
import ssl
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import SaslAuthenticateResponse, SaslHandshakeResponse

log = logging.getLogger("kraftwire.security")


def _scramp() -> Any:
    """scramp, imported by the first SCRAM credential or exchange: with asn1crypto under it, ~30 ms of
    imports that a cluster without SCRAM would pay at every start."""
    import scramp

    return scramp

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
PROTOCOL_IDS = {name: index for index, name in enumerate(PROTOCOLS)}  # Kafka's SecurityProtocol ids
SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
MECHANISMS = ("PLAIN", *SCRAM_MECHANISMS)
PRE_AUTH_MAX_FRAME_BYTES = 524_288  # sasl.server.max.receive.size
DEFAULT_FAILED_AUTHENTICATION_DELAY_MS = 100  # connection.failed.authentication.delay.ms
SCRAM_MIN_ITERATIONS, SCRAM_MAX_ITERATIONS = 4096, 16384  # Kafka's ScramMechanism bounds
ANONYMOUS = "User:ANONYMOUS"
SASL_HANDSHAKE, SASL_AUTHENTICATE, API_VERSIONS = 17, 36, 18
_FAILED = "Authentication failed: Invalid username or password"


def protocol_of(listener_name: str, protocol_map: dict[str, str] | None = None) -> str:
    """The security protocol of a listener name (``listener.security.protocol.map``)."""
    protocol = (protocol_map or {}).get(listener_name, listener_name if listener_name in PROTOCOLS else None)
    if protocol not in PROTOCOLS:
        raise ValueError(f"listener {listener_name!r} has no security protocol: map it to one of "
                         f"{', '.join(PROTOCOLS)}")
    return protocol


def parse_protocol_map(text: str) -> dict[str, str]:
    """``CLIENT:SASL_SSL,CONTROLLER:PLAINTEXT`` -> {name: protocol}; ValueError when malformed."""
    result = {}
    for entry in filter(None, (part.strip() for part in text.split(","))):
        name, sep, protocol = entry.partition(":")
        if not sep or not name or protocol.upper() not in PROTOCOLS:
            raise ValueError(f"bad listener.security.protocol.map entry {entry!r}: expected NAME:PROTOCOL "
                             f"with PROTOCOL one of {', '.join(PROTOCOLS)}")
        result[name.upper()] = protocol.upper()
    return result


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


def scram_credential(mechanism: str, password: str, iterations: int = SCRAM_MIN_ITERATIONS,
                     salt: bytes | None = None) -> ScramCredential:
    """Salt and hash a password as a SCRAM credential; the password itself is not kept."""
    if mechanism not in SCRAM_MECHANISMS:
        raise ValueError(f"unknown SCRAM mechanism {mechanism!r}")
    if not SCRAM_MIN_ITERATIONS <= iterations <= SCRAM_MAX_ITERATIONS:
        raise ValueError(f"SCRAM iterations must be {SCRAM_MIN_ITERATIONS}-{SCRAM_MAX_ITERATIONS}, got {iterations}")
    scram = _scramp().ScramMechanism(mechanism)
    salt_, stored_key, server_key, count = scram.make_auth_info(password, iterations, salt)
    return ScramCredential(salt_, stored_key, server_key, count)


@dataclass
class Credentials:
    """The users a listener accepts: PLAIN ``{user: password}`` and SCRAM ``{(mechanism, user): credential}``.
    ``scram_lookup`` (mechanism, user) -> credential or None, when given, is asked before ``scram``
    (for credentials that live elsewhere, such as the metadata image)."""
    plain: dict[str, str] = field(default_factory=dict)
    scram: dict[tuple[str, str], ScramCredential] = field(default_factory=dict)
    # (mechanism, user) -> a credential kept elsewhere, or None
    scram_lookup: Callable[[str, str], ScramCredential | None] | None = None

    def add_scram(self, mechanism: str, user: str, password: str, iterations: int = SCRAM_MIN_ITERATIONS) -> None:
        self.scram[(mechanism, user)] = scram_credential(mechanism, password, iterations)

    def find_scram(self, mechanism: str, user: str) -> ScramCredential | None:
        found = self.scram_lookup(mechanism, user) if self.scram_lookup is not None else None
        return found or self.scram.get((mechanism, user))

    def check_plain(self, user: str, password: str) -> bool:
        expected = self.plain.get(user)
        # compare against something even for an unknown user, so timing does not tell users apart
        ok = hmac.compare_digest((expected or "\0").encode(), password.encode())
        return expected is not None and ok


def parse_add_scram(text: str) -> tuple[str, str, str, int]:
    """``SCRAM-SHA-256=[name=alice,password=secret]`` (``kafka-storage format --add-scram``, optionally
    ``,iterations=N``) -> (mechanism, user, password, iterations); ValueError when malformed."""
    mechanism, sep, rest = text.partition("=")
    mechanism = mechanism.strip().upper()
    rest = rest.strip()
    if not sep or mechanism not in SCRAM_MECHANISMS or not (rest.startswith("[") and rest.endswith("]")):
        raise ValueError(f"bad SCRAM credential {text!r}: expected SCRAM-SHA-256=[name=USER,password=PASSWORD]")
    fields = dict(part.partition("=")[::2] for part in rest[1:-1].split(","))
    fields = {key.strip(): value.strip().strip('"') for key, value in fields.items()}
    if not fields.get("name") or "password" not in fields:
        raise ValueError(f"bad SCRAM credential {text!r}: name and password are required")
    return mechanism, fields["name"], fields["password"], int(fields.get("iterations", SCRAM_MIN_ITERATIONS))


def server_ssl_context(certfile: str, keyfile: str | None = None, cafile: str | None = None,
                       client_auth: str = "none") -> ssl.SSLContext:
    """A TLS server context; ``client_auth`` is Kafka's ``ssl.client.auth``: none, requested, required."""
    modes = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
    if client_auth not in modes:
        raise ValueError(f"ssl.client.auth must be one of {', '.join(modes)}, got {client_auth!r}")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certfile, keyfile)
    context.verify_mode = modes[client_auth]
    if client_auth != "none":
        if cafile is None:
            raise ValueError("client authentication needs a CA file to check client certificates against")
        context.load_verify_locations(cafile)
    return context


def certificate_principal(certificate: dict | None) -> str:
    """``User:CN=...,OU=...,O=...``: the subject of a verified peer certificate, most specific part first
    (RFC 2253 order, as Java's ``X500Principal.getName()``); ANONYMOUS without one."""
    if not certificate or not certificate.get("subject"):
        return ANONYMOUS
    short = {"commonName": "CN", "organizationName": "O", "organizationalUnitName": "OU", "countryName": "C",
             "stateOrProvinceName": "ST", "localityName": "L", "domainComponent": "DC", "userId": "UID"}
    parts = ["+".join(f"{short.get(key, key)}={_escape_dn(value)}" for key, value in rdn)
             for rdn in reversed(certificate["subject"])]
    return "User:" + ",".join(parts)


def _escape_dn(value: str) -> str:
    return "".join("\\" + c if c in ',+"\\<>;' else c for c in value)


class ListenerSecurity:
    """The security of one listener: its protocol, TLS context, enabled SASL mechanisms and users."""

    def __init__(self, protocol: str, *, ssl_context: ssl.SSLContext | None = None,
                 mechanisms: tuple[str, ...] = MECHANISMS, credentials: Credentials | None = None,
                 failed_authentication_delay_ms: int = DEFAULT_FAILED_AUTHENTICATION_DELAY_MS):
        if protocol not in PROTOCOLS:
            raise ValueError(f"unknown security protocol {protocol!r}")
        if protocol.endswith("SSL") and ssl_context is None:
            raise ValueError(f"a {protocol} listener needs a TLS certificate")
        unknown = set(mechanisms) - set(MECHANISMS)
        if unknown:
            raise ValueError(f"unsupported SASL mechanisms {sorted(unknown)}: kraftwire has {', '.join(MECHANISMS)}")
        self.protocol = protocol
        self.ssl_context = ssl_context if protocol.endswith("SSL") else None
        self.sasl = protocol.startswith("SASL_")
        self.mechanisms = tuple(mechanisms)
        self.credentials = credentials or Credentials()
        self.failed_authentication_delay = failed_authentication_delay_ms / 1000

    def session(self, transport: asyncio.BaseTransport) -> Session:
        peercert = transport.get_extra_info("peercert") if self.ssl_context is not None else None
        return Session(self, certificate_principal(peercert))


class _PlainRefused(Exception):
    """A PLAIN token refused, with Kafka's message for why."""


class Session:
    """One connection's authentication state, consulted by the transport before every request."""

    def __init__(self, security: ListenerSecurity, principal: str):
        self.security = security
        self.principal = principal
        self.stage = "handshake" if security.sasl else "complete"
        self.mechanism: str | None = None
        self.raw_tokens = False  # SaslHandshake v0: the tokens come without Kafka headers
        self.close_after: float | None = None  # set when the connection must close that many seconds on
        self._scram: Any = None  # a scramp ScramServer (scramp is untyped) while SCRAM runs
        self._scram_user: str | None = None
        self.failure = _FAILED  # the last refused token's message

    @property
    def authenticated(self) -> bool:
        return self.stage == "complete"

    @property
    def max_frame_bytes(self) -> int | None:
        return None if self.authenticated else PRE_AUTH_MAX_FRAME_BYTES

    def admits(self, api_key: int) -> bool:
        """May a request of this key be read now? (Before authentication: only the SASL exchange.)"""
        if self.authenticated:
            return True
        if self.stage == "handshake":  # SaslAuthenticate before SaslHandshake closes, as Kafka's
            return api_key in (API_VERSIONS, SASL_HANDSHAKE)
        return api_key in (SASL_HANDSHAKE, SASL_AUTHENTICATE)

    def handshake(self, version: int, mechanism: str) -> SaslHandshakeResponse:
        if self.stage != "handshake":
            return self._illegal(SaslHandshakeResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=[]))
        if mechanism not in self.security.mechanisms:
            self.close_after = 0.0
            return SaslHandshakeResponse(error_code=ErrorCode.UNSUPPORTED_SASL_MECHANISM,
                                         mechanisms=list(self.security.mechanisms))
        self.mechanism = mechanism
        self.stage = "authenticate"
        self.raw_tokens = version == 0
        return SaslHandshakeResponse(error_code=ErrorCode.NONE, mechanisms=list(self.security.mechanisms))

    def authenticate(self, auth_bytes: bytes) -> SaslAuthenticateResponse:
        if self.stage != "authenticate":
            message = ("SaslAuthenticate request received after successful authentication" if self.authenticated
                       else "SaslAuthenticate request received before SaslHandshake")
            return self._illegal(SaslAuthenticateResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE,
                                                          error_message=message, auth_bytes=b""))
        reply = self.token(auth_bytes)
        if reply is None:
            return SaslAuthenticateResponse(error_code=ErrorCode.SASL_AUTHENTICATION_FAILED,
                                            error_message=self.failure, auth_bytes=b"")
        return SaslAuthenticateResponse(error_code=ErrorCode.NONE, error_message="", auth_bytes=reply)

    def token(self, auth_bytes: bytes) -> bytes | None:
        """One step of the mechanism: the server's token, or None when authentication failed (the
        connection then closes after the failed-authentication delay)."""
        self.failure = _FAILED
        try:
            if self.mechanism == "PLAIN":
                reply = self._plain(auth_bytes)
            else:
                reply = self._scram_step(auth_bytes)
        except _PlainRefused as refused:
            self.failure, reply = str(refused), None
        except (_scramp().ScramException, UnicodeDecodeError, ValueError) as exc:
            log.info("%s authentication failed for %s: %s", self.mechanism, self.principal, exc)
            reply = None
            if self.mechanism != "PLAIN":
                self.failure = ("Authentication failed during authentication due to invalid credentials with "
                                f"SASL mechanism {self.mechanism}")
        if reply is None:
            self.stage = "failed"
            self.close_after = self.security.failed_authentication_delay
        return reply

    def _plain(self, auth_bytes: bytes) -> bytes | None:
        parts = auth_bytes.decode("utf-8").split("\0")
        if len(parts) != 3:  # Kafka's PlainSaslServer's refusals, in its order and words
            raise _PlainRefused(f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(parts)}")
        authzid, user, password = parts
        if not user:
            raise _PlainRefused("Authentication failed: username not specified")
        if not password:
            raise _PlainRefused("Authentication failed: password not specified")
        if authzid and authzid != user:
            raise _PlainRefused("Authentication failed: Client requested an authorization id that is different "
                                "from username")
        if not self.security.credentials.check_plain(user, password):
            return None
        self._complete(user)
        return b""

    def _scram_step(self, auth_bytes: bytes) -> bytes | None:
        message = auth_bytes.decode("utf-8")
        if self._scram is None:
            credentials, mechanism = self.security.credentials, self.mechanism
            assert mechanism is not None  # chosen by the handshake before any token

            def lookup(user: str) -> tuple[bytes, bytes, bytes, int]:
                self._scram_user = user
                found = credentials.find_scram(mechanism, user)
                if found is None:
                    raise _scramp().ScramException("unknown user")
                return found.salt, found.stored_key, found.server_key, found.iterations

            self._scram = _scramp().ScramMechanism(mechanism).make_server(lookup)
            self._scram.set_client_first(message)
            return self._scram.get_server_first().encode()
        self._scram.set_client_final(message)
        server_final: bytes = self._scram.get_server_final().encode()
        assert self._scram_user is not None  # the client's first message named the user
        self._complete(self._scram_user)
        return server_final

    def _complete(self, user: str) -> None:
        self.principal = "User:" + user
        self.stage = "complete"
        self._scram = None

    def _illegal(self, response: T) -> T:
        if not self.authenticated:  # out of order during authentication: answer, then close
            self.stage = "failed"
            self.close_after = 0.0
        return response


@dataclass(frozen=True)
class ClientSecurity:
    """How kraftwire's own client (a broker talking to the controller) authenticates: TLS with
    ``ssl_context`` for SSL and SASL_SSL, and SASL with ``mechanism``, ``username``, ``password``."""
    protocol: str = "PLAINTEXT"
    ssl_context: ssl.SSLContext | None = None
    mechanism: str | None = None
    username: str | None = None
    password: str | None = None

    def sasl_steps(self) -> Generator[bytes, bytes, None]:
        """A generator of the client's tokens: send what it yields, send the server's answer back in."""
        if self.mechanism == "PLAIN":
            yield f"\0{self.username}\0{self.password}".encode()
            return
        client = _scramp().ScramClient([self.mechanism], self.username, self.password)
        server_first = yield client.get_client_first().encode()
        client.set_server_first(server_first.decode())
        server_final = yield client.get_client_final().encode()
        client.set_server_final(server_final.decode())
