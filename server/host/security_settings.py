"""``Security``: the listeners' security settings of a cluster, as ``Cluster(security=...)`` and
``kraftwire serve`` take them.

Kafka's names: the brokers' listener (``listener_name``, default PLAINTEXT) and the controller's
(``controller_listener_name``, default CONTROLLER) each get a protocol through ``protocol_map``
(``listener.security.protocol.map``; a name that is itself a protocol maps to itself, and CONTROLLER
is PLAINTEXT unless mapped). TLS takes ``certfile``/``keyfile`` (the listeners' certificate),
``cafile`` (trusted to sign client certificates, and by brokers to check the controller's) and
``client_auth`` (``ssl.client.auth``: none, requested, required). SASL takes ``mechanisms``
(``sasl.enabled.mechanisms``), ``plain_users`` ({user: password}, as Kafka's JAAS ``user_<name>``
entries) and ``scram_users`` ([(mechanism, user, password, iterations)]: salted at start and written
to the metadata log as UserScramCredentialRecords unless the user already has a credential there, as
``kafka-storage format --add-scram`` does; the passwords are not kept). SCRAM logins check the
credentials in a committed metadata image, which AlterUserScramCredentials changes: a broker's listener
the brokers' own metadata view, a controller's the controller's committed image.

Brokers authenticate to the controller as ``inter_broker_user`` (user, password), with SCRAM-SHA-512
when enabled, else PLAIN; without one the cluster makes a user of its own with a random password.
Over SSL they show the listeners' certificate as their client certificate.

``authorizer=True`` turns on ACLs (Kafka's StandardAuthorizer, server/metadata/acls.py) with
``super_users`` (``super.users``, principals such as ``User:admin``) and
``allow_everyone_if_no_acl_found`` (default false). The nodes' own principal (their SASL user, and
``User:ANONYMOUS`` when the controller listener is PLAINTEXT, so anyone who reaches that port) is a
super user, as a Kafka cluster must list it in ``super.users``; lock the controller listener with SASL
to keep others off it. On an SSL controller listener list the certificate's principal yourself, as a
Kafka operator does (``super.users=User:CN=node,O=ops``; with ``client_auth`` none the nodes are
``User:ANONYMOUS`` there). ``check_nodes_tls`` refuses at start, in one line, certificates the nodes
would refuse each other, and ``check_nodes_authorized`` a configuration whose nodes would be refused
CLUSTER_ACTION on the controller listener (every metadata fetch, vote and registration), instead of
brokers retrying refused fetches until the start-up deadline. The controllers reach each other over the
controller listener, as the brokers reach them.
Without ``authorizer`` every request is allowed and the ACL APIs answer
SECURITY_DISABLED, as Kafka without an authorizer does.

    Cluster(security=Security(listener_name="SASL_SSL", certfile=..., keyfile=..., cafile=...,
                              plain_users={"alice": "alice-secret"}))
"""
from __future__ import annotations

import os
import re
import secrets
import ssl
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from kraftwire.server.controller.scram import MECHANISM_IDS, salted_password
from kraftwire.server.metadata.acls import CLUSTER_NAME, Authorizer, Operation, ResourceType
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.wire.security import (
    ANONYMOUS, DEFAULT_FAILED_AUTHENTICATION_DELAY_MS, MECHANISMS, SCRAM_MAX_ITERATIONS, SCRAM_MIN_ITERATIONS,
    ClientSecurity, Credentials, ListenerSecurity, ScramCredential, certificate_principal, protocol_of,
    server_ssl_context)

INTERNAL_BROKER_USER = "kraftwire-broker"
# Between principals: Kafka's super.users separator ";", and "," before the next principal's type ("User:"),
# so the commas inside a certificate's subject (User:CN=node,O=ops) stay in it.
_PRINCIPAL_SEPARATOR = re.compile(r";|,(?=\s*[A-Za-z]+:)")
BootstrapCredential = tuple[str, int, bytes, bytes, int]  # user, mechanism id, salt, salted password, iterations
ImageSource = Callable[[], MetadataImage]  # the committed metadata image a listener's SCRAM logins read


@dataclass
class Security:
    listener_name: str = "PLAINTEXT"
    controller_listener_name: str = "CONTROLLER"
    protocol_map: dict[str, str] = field(default_factory=dict)
    certfile: str | None = None
    keyfile: str | None = None
    cafile: str | None = None
    client_auth: str = "none"
    mechanisms: tuple[str, ...] = MECHANISMS
    plain_users: dict[str, str] = field(default_factory=dict)
    scram_users: Sequence[tuple[str, str, str] | tuple[str, str, str, int]] = field(default_factory=list)
    inter_broker_user: tuple[str, str] | None = None
    failed_authentication_delay_ms: int = DEFAULT_FAILED_AUTHENTICATION_DELAY_MS
    authorizer: bool = False
    super_users: tuple[str, ...] = ()
    allow_everyone_if_no_acl_found: bool = False

    def __post_init__(self) -> None:
        self.listener_name = self.listener_name.upper()
        self.controller_listener_name = self.controller_listener_name.upper()
        self.protocol_map = {name.upper(): protocol.upper() for name, protocol in self.protocol_map.items()}
        self.protocol_map.setdefault("CONTROLLER", "PLAINTEXT")
        self.broker_protocol = protocol_of(self.listener_name, self.protocol_map)
        self.controller_protocol = protocol_of(self.controller_listener_name, self.protocol_map)
        uses_ssl = {self.broker_protocol, self.controller_protocol} & {"SSL", "SASL_SSL"}
        if uses_ssl and not self.certfile:
            raise ValueError(f"a {' and '.join(sorted(uses_ssl))} listener needs certfile (and keyfile)")
        if uses_ssl and not self.cafile:
            raise ValueError("the nodes need cafile to check each other's TLS certificates")
        self.credentials = Credentials(plain=dict(self.plain_users))
        self.bootstrap_scram = [self._bootstrap_credential(*user) for user in self.scram_users]
        self._server_context: ssl.SSLContext | None = None
        if uses_ssl and self.certfile:  # (refused above without one)
            self._server_context = server_ssl_context(self.certfile, self.keyfile, self.cafile, self.client_auth)
        self._inter_broker = self._inter_broker_credential()

    @staticmethod
    def _bootstrap_credential(mechanism: str, user: str, password: str,
                              iterations: int = SCRAM_MIN_ITERATIONS) -> BootstrapCredential:
        """(user, mechanism id, salt, salted password, iterations) for ``scram.bootstrap_credentials``."""
        if mechanism not in MECHANISM_IDS:
            raise ValueError(f"unknown SCRAM mechanism {mechanism!r}: {', '.join(MECHANISM_IDS)}")
        if not SCRAM_MIN_ITERATIONS <= iterations <= SCRAM_MAX_ITERATIONS:
            raise ValueError(f"SCRAM iterations must be {SCRAM_MIN_ITERATIONS}-{SCRAM_MAX_ITERATIONS}, "
                             f"got {iterations}")
        mechanism_id, salt = MECHANISM_IDS[mechanism], os.urandom(32)
        return user, mechanism_id, salt, salted_password(mechanism_id, password, salt, iterations), iterations

    def _credentials_reading(self, image_of: ImageSource | None) -> Credentials:
        """The listener's users: the cluster's, with SCRAM logins checking ``image_of()``'s credentials (a
        committed metadata image) first, when given. The PLAIN and in-memory SCRAM users stay shared."""
        if image_of is None:
            return self.credentials

        def lookup(mechanism: str, user: str) -> ScramCredential | None:
            found = image_of().scram.get((MECHANISM_IDS[mechanism], user))
            return None if found is None else ScramCredential(*found)
        return replace(self.credentials, scram_lookup=lookup)

    def _inter_broker_credential(self) -> tuple[str, str, str] | None:
        """(mechanism, user, password) the nodes use towards each other's SASL listeners, or None without SASL."""
        if not (self.controller_protocol.startswith("SASL_") or self.broker_protocol.startswith("SASL_")):
            return None
        mechanism = "SCRAM-SHA-512" if "SCRAM-SHA-512" in self.mechanisms else "PLAIN"
        if mechanism not in self.mechanisms:
            raise ValueError("brokers authenticate to a SASL controller listener with SCRAM-SHA-512 or PLAIN: "
                             "enable one of them")
        user, password = self.inter_broker_user or (INTERNAL_BROKER_USER, secrets.token_urlsafe(24))
        if self.inter_broker_user is None:  # the cluster's own user, known to both sides only in memory
            if mechanism == "PLAIN":
                self.credentials.plain[user] = password
            else:
                self.credentials.add_scram(mechanism, user, password)
        return mechanism, user, password

    def make_authorizer(self) -> Authorizer | None:
        if not self.authorizer:
            return None
        super_users = set(self.super_users)
        if self._inter_broker is not None:
            super_users.add("User:" + self._inter_broker[1])
        if self.controller_protocol == "PLAINTEXT":  # the brokers have no other name there
            super_users.add(ANONYMOUS)
        return Authorizer(super_users, self.allow_everyone_if_no_acl_found)

    def nodes_principal(self) -> str:
        """The principal the controller listener gives the nodes' own connections (brokers' and peers')."""
        if self.controller_protocol.startswith("SASL_") and self._inter_broker is not None:
            return "User:" + self._inter_broker[1]
        if self.controller_protocol == "SSL" and self.client_auth != "none" and self.certfile:
            return certificate_principal(_certificate_of(self.certfile))
        return ANONYMOUS

    def check_nodes_authorized(self, authorizer: Authorizer | None, image: MetadataImage, host: str) -> None:
        """ValueError, one line, when the authorizer would refuse the nodes CLUSTER_ACTION on the cluster
        (super users, then the ACLs ``image`` holds), which every broker-to-controller RPC needs."""
        if authorizer is None:
            return
        principal = self.nodes_principal()
        if authorizer.authorize(image.acls.values(), principal, host, Operation.CLUSTER_ACTION, ResourceType.CLUSTER,
                                CLUSTER_NAME):
            return
        how = {"SSL": "their certificate's subject" if self.client_auth != "none" else
               "no client certificate asked for (ssl.client.auth none)"}.get(self.controller_protocol, "")
        raise ValueError(f"the nodes' principal {principal} on the {self.controller_protocol} controller listener"
                         f"{f' ({how})' if how else ''} is not allowed CLUSTER_ACTION on the cluster, which brokers "
                         f"need to fetch the metadata log: add it to super.users (--super-users '{principal}')")

    def check_nodes_tls(self, host: str) -> None:
        """ValueError, one line, when the nodes could not open TLS to each other's listeners: a handshake in
        memory between a listener's context and the nodes' client context, as a broker makes it to ``host``
        (a certificate the CA file did not sign, an expired one, one not naming ``host``, or, with client
        authentication, one the listener refuses as a client's). Without it brokers retry failed fetches
        until the start-up deadline, which says only that the metadata log made no progress."""
        if self._server_context is None:
            return
        for protocol in sorted({self.controller_protocol, self.broker_protocol} & {"SSL", "SASL_SSL"}):
            client = self._client(protocol).ssl_context
            assert client is not None  # a TLS protocol's client context (refused without a certfile)
            failure = _memory_handshake(self._server_context, client, host)
            if failure is not None:
                raise ValueError(f"the nodes cannot open TLS to their own {protocol} listener at {host}: {failure} "
                                 f"(the --ssl-cafile CA must sign --ssl-certfile, which must be valid now and name "
                                 f"{host}{', and allow client authentication' if self.client_auth != 'none' else ''})")

    def static_configs(self) -> dict[str, str]:
        """The listener settings these listeners stand for in a Kafka server.properties (DescribeConfigs)."""
        return {"listener.security.protocol.map": f"{self.controller_listener_name}:{self.controller_protocol},"
                                                  f"{self.listener_name}:{self.broker_protocol}",
                "controller.listener.names": self.controller_listener_name}

    def broker_listener(self, scram_image: ImageSource | None = None) -> ListenerSecurity:
        """A broker's listener; its SCRAM logins read ``scram_image()``, the brokers' metadata view."""
        return self._listener(self.broker_protocol, scram_image)

    def controller_listener(self, scram_image: ImageSource | None = None) -> ListenerSecurity:
        """A controller's listener; its SCRAM logins read ``scram_image()``, the controller's committed image."""
        return self._listener(self.controller_protocol, scram_image)

    def _listener(self, protocol: str, scram_image: ImageSource | None) -> ListenerSecurity:
        return ListenerSecurity(protocol, ssl_context=self._server_context, mechanisms=self.mechanisms,
                                credentials=self._credentials_reading(scram_image),
                                failed_authentication_delay_ms=self.failed_authentication_delay_ms)

    def broker_client(self) -> ClientSecurity:
        """How brokers reach the controller's listener."""
        return self._client(self.controller_protocol)

    def controller_client(self) -> ClientSecurity:
        """How the controllers reach each other's listeners (Cluster.peer_security): the controller listener's
        protocol, as Kafka's controllers reach each other over controller.listener.names (the brokers'
        protocol here made a quorum of a TLS broker listener and a PLAINTEXT controller one never elect)."""
        return self._client(self.controller_protocol)

    def _client(self, protocol: str) -> ClientSecurity:
        context = None
        if protocol in ("SSL", "SASL_SSL") and self.certfile:  # (__post_init__ refuses TLS without one)
            context = ssl.create_default_context(cafile=self.cafile)
            context.load_cert_chain(self.certfile, self.keyfile)
        if protocol.startswith("SASL_") and self._inter_broker is not None:
            mechanism, user, password = self._inter_broker
            return ClientSecurity(protocol, context, mechanism, user, password)
        return ClientSecurity(protocol, context)


def parse_super_users(text: str) -> tuple[str, ...]:
    """``super.users``: principals separated by ``;`` (Kafka's separator) or by ``,`` before the next
    ``User:`` (a certificate subject's own commas stay): ``User:CN=node,O=ops;User:admin``."""
    return tuple(part.strip() for part in _PRINCIPAL_SEPARATOR.split(text) if part.strip())


def _certificate_of(certfile: str) -> dict:
    """The first certificate of a PEM file, as ``SSLSocket.getpeercert()`` shows a peer's, so its principal
    is the one the listener will compute. ``_test_decode_cert`` is CPython's own decoder (private, there
    since 3.2, used by its ssl tests); the standard library has no public one."""
    decoded: dict = ssl._ssl._test_decode_cert(certfile)  # type: ignore[attr-defined]  # not in typeshed
    return decoded


def _memory_handshake(server: ssl.SSLContext, client: ssl.SSLContext, host: str) -> str | None:
    """Run a TLS handshake between the two contexts over memory buffers; why it failed, or None."""
    to_server, to_client = ssl.MemoryBIO(), ssl.MemoryBIO()
    client_side = client.wrap_bio(to_client, to_server, server_hostname=host)
    server_side = server.wrap_bio(to_server, to_client, server_side=True)
    done = {"client": False, "server": False}
    for _ in range(20):  # a TLS 1.2 or 1.3 handshake takes a few flights
        for name, side in (("client", client_side), ("server", server_side)):
            if done[name]:
                continue
            try:
                side.do_handshake()
                done[name] = True
            except ssl.SSLWantReadError:
                pass
            except ssl.SSLError as exc:
                return f"the {'listener' if name == 'server' else 'nodes'} refused: {exc.reason or exc}" + (
                    f" ({exc.verify_message})" if isinstance(exc, ssl.SSLCertVerificationError) else "")
        if all(done.values()):
            try:  # TLS 1.3: the listener judges the client certificate once data flows
                client_side.write(b"x")
                server_side.read(1)
            except ssl.SSLWantReadError:
                pass
            except ssl.SSLError as exc:
                return f"the listener refused the nodes' certificate: {exc.reason or exc}"
            return None
    return "the handshake did not complete"
