"""Listener security through real clients over real TCP: SASL PLAIN and SCRAM-SHA-256/512 over plaintext
and TLS with kafka-python, confluent-kafka and aiokafka; Kafka's answers to a wrong password, to requests
out of order and before authentication; TLS client certificates; brokers authenticating to the
controller. The certificates are made here by ``trustme``; no key is kept in the tree.
"""
from __future__ import annotations

import asyncio
import json
import shutil
import socket
import ssl
import struct
import subprocess
from pathlib import Path

import pytest
import trustme

from kraftwire import BackgroundCluster, Cluster, Security
from kraftwire import codec
from kraftwire.codec import ErrorCode
from kraftwire.codec.messages import (ApiVersionsRequest, ApiVersionsResponse, BrokerRegistrationRequest,
                                      MetadataRequest, RequestHeader, ResponseHeader, SaslAuthenticateRequest,
                                      SaslAuthenticateResponse, SaslHandshakeRequest, SaslHandshakeResponse)
from kraftwire.server.wire.security import PRE_AUTH_MAX_FRAME_BYTES

_SIZE = struct.Struct(">i")
READ_TIMEOUT = 10
MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
USERS = {"PLAIN": ("alice", "alice-secret"), "SCRAM-SHA-256": ("bob", "bob-secret"),
         "SCRAM-SHA-512": ("carol", "carol-secret")}


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """A CA, the listeners' certificate (127.0.0.1, localhost) and a client certificate, as files."""
    directory = tmp_path_factory.mktemp("pki")
    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(directory / "ca.pem"))
    ca.issue_cert("127.0.0.1", "localhost").private_key_and_cert_chain_pem.write_to_path(str(directory / "server.pem"))
    client = ca.issue_cert("tester@example.com", common_name="tester", organization_name="kraftwire-tests")
    client.private_key_and_cert_chain_pem.write_to_path(str(directory / "client.pem"))
    return {name: str(directory / f"{name}.pem") for name in ("ca", "server", "client")}


def sasl_security(pki, protocol: str) -> Security:
    return Security(listener_name=protocol, protocol_map={"CONTROLLER": protocol},
                    certfile=pki["server"], cafile=pki["ca"], plain_users={"alice": "alice-secret"},
                    scram_users=[("SCRAM-SHA-256", "bob", "bob-secret"), ("SCRAM-SHA-512", "carol", "carol-secret")])


@pytest.fixture(scope="module", params=["SASL_PLAINTEXT", "SASL_SSL"])
def sasl_cluster(request, pki):
    with BackgroundCluster(brokers=2, security=sasl_security(pki, request.param)) as bg:
        bg.protocol = request.param
        yield bg


def kafka_python_brokers(bg, pki, mechanism, password=None):
    from kafka import KafkaAdminClient

    user, secret = USERS[mechanism]
    admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap, security_protocol=bg.protocol, sasl_mechanism=mechanism,
                             sasl_plain_username=user, sasl_plain_password=password or secret,
                             ssl_cafile=pki["ca"], request_timeout_ms=10000)
    try:
        return sorted(b["broker_id"] for b in admin.describe_cluster()["brokers"])
    finally:
        admin.close()


def confluent_brokers(bg, pki, mechanism):
    from confluent_kafka.admin import AdminClient

    user, secret = USERS[mechanism]
    admin = AdminClient({"bootstrap.servers": bg.bootstrap, "security.protocol": bg.protocol,
                         "sasl.mechanism": mechanism, "sasl.username": user, "sasl.password": secret,
                         "ssl.ca.location": pki["ca"]})
    return sorted(admin.list_topics(timeout=10).brokers)


def aiokafka_brokers(bg, pki, mechanism):
    from aiokafka.admin import AIOKafkaAdminClient
    from aiokafka.helpers import create_ssl_context

    user, secret = USERS[mechanism]

    async def describe():
        admin = AIOKafkaAdminClient(bootstrap_servers=bg.bootstrap, security_protocol=bg.protocol,
                                    sasl_mechanism=mechanism, sasl_plain_username=user, sasl_plain_password=secret,
                                    ssl_context=create_ssl_context(cafile=pki["ca"]))
        await admin.start()
        try:
            return sorted(b["node_id"] for b in (await admin.describe_cluster())["brokers"])
        finally:
            await admin.close()

    return asyncio.run(describe())


NODE_DIR = Path(__file__).resolve().parents[1] / "node"
HAS_KAFKAJS = shutil.which("node") is not None and (NODE_DIR / "node_modules" / "kafkajs").is_dir()


def kafkajs_answer(bg, pki, mechanism, password=None) -> dict:
    user, secret = USERS[mechanism]
    ca = [pki["ca"]] if bg.protocol == "SASL_SSL" else []
    done = subprocess.run(["node", str(NODE_DIR / "sasl.js"), bg.bootstrap, mechanism.lower(), user,
                           password or secret, *ca], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def kafkajs_brokers(bg, pki, mechanism):
    if not HAS_KAFKAJS:
        pytest.skip("node and kafkajs (npm install in tests/node) are needed")
    return kafkajs_answer(bg, pki, mechanism)["brokers"]


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("client", [kafka_python_brokers, confluent_brokers, aiokafka_brokers, kafkajs_brokers],
                         ids=["kafka-python", "confluent-kafka", "aiokafka", "kafkajs"])
def test_clients_authenticate(sasl_cluster, pki, client, mechanism):
    assert client(sasl_cluster, pki, mechanism) == [1, 2]


@pytest.mark.skipif(not HAS_KAFKAJS, reason="node and kafkajs (npm install in tests/node) are needed")
def test_kafkajs_wrong_password_gets_58(sasl_cluster, pki):
    answer = kafkajs_answer(sasl_cluster, pki, "SCRAM-SHA-512", password="wrong")
    assert answer["error"] == "KafkaJSSASLAuthenticationError"
    # the 58 answer's message: SCRAM's, as Kafka words it (it names the mechanism, never the user)
    assert "due to invalid credentials with SASL mechanism SCRAM-SHA-512" in answer["message"], answer


# --- the exchange byte by byte -----------------------------------------------------------------------------------

def frame(request, version: int, correlation_id: int = 1) -> bytes:
    out = bytearray(b"\0\0\0\0")
    RequestHeader(request_api_key=request.API_KEY, request_api_version=version, correlation_id=correlation_id,
                  client_id="test-security").encode_into(out, codec.request_header_version(request.API_KEY, version))
    request.encode_into(out, version)
    _SIZE.pack_into(out, 0, len(out) - 4)
    return bytes(out)


class Raw:
    """A socket to a listener, TLS when ``context`` is given; answers decoded with the codec."""

    def __init__(self, address: tuple[str, int], context: ssl.SSLContext | None = None):
        sock = socket.create_connection(address, timeout=READ_TIMEOUT)
        self.sock = context.wrap_socket(sock, server_hostname=address[0]) if context else sock

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def ask(self, request, version: int, response_cls):
        self.send(frame(request, version))
        data = self.read_frame()
        assert data is not None, "closed without an answer"
        _, pos = ResponseHeader.decode_from(data, 0, codec.response_header_version(request.API_KEY, version))
        return response_cls.decode(data[pos:], version)

    def read_frame(self) -> bytes | None:
        size = self._read(4)
        return None if size is None else self._read(_SIZE.unpack(size)[0])

    def _read(self, count: int) -> bytes | None:
        data = b""
        while len(data) < count:
            chunk = self.sock.recv(count - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    def closed(self) -> bool:
        """The server closed the connection (no more bytes come)."""
        try:
            return self.sock.recv(1) == b""
        except (ConnectionResetError, ssl.SSLError):
            return True

    def close(self) -> None:
        self.sock.close()


@pytest.fixture(scope="module")
def sasl_plaintext(pki):
    with BackgroundCluster(brokers=1, security=sasl_security(pki, "SASL_PLAINTEXT")) as bg:
        yield bg


def broker_address(bg) -> tuple[str, int]:
    host, port = bg.bootstrap.split(",")[0].rsplit(":", 1)
    return host, int(port)


def handshake(raw: Raw, mechanism: str, version: int = 1) -> SaslHandshakeResponse:
    return raw.ask(SaslHandshakeRequest(mechanism=mechanism), version, SaslHandshakeResponse)


@pytest.mark.parametrize("mechanism,token", [
    ("PLAIN", b"\0alice\0wrong-password"),
    ("PLAIN", b"\0mallory\0alice-secret"),
    ("SCRAM-SHA-512", b"n,,n=mallory,r=abcdefghijklmnop"),
], ids=["plain-wrong-password", "plain-unknown-user", "scram-unknown-user"])
def test_failed_authentication_gets_58_with_a_generic_message_then_a_close(sasl_plaintext, mechanism, token):
    raw = Raw(broker_address(sasl_plaintext))
    try:
        assert handshake(raw, mechanism).error_code == ErrorCode.NONE
        answer = raw.ask(SaslAuthenticateRequest(auth_bytes=token), 2, SaslAuthenticateResponse)
        assert answer.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert answer.error_message == (  # Kafka's, per mechanism: neither says which of user or password
            "Authentication failed: Invalid username or password" if mechanism == "PLAIN" else
            f"Authentication failed during authentication due to invalid credentials with SASL mechanism {mechanism}")
        assert raw.closed()
    finally:
        raw.close()


def test_credentials_are_not_kept_by_the_listener(sasl_plaintext):
    """The listener keeps what small repeated requests decode to (server/wire/transport.py); a PLAIN
    password and SCRAM's messages are not among them once their login is over."""
    from kafka import KafkaAdminClient

    for mechanism in ("PLAIN", "SCRAM-SHA-256"):
        user, secret = USERS[mechanism]
        admin = KafkaAdminClient(bootstrap_servers=sasl_plaintext.bootstrap, security_protocol="SASL_PLAINTEXT",
                                 sasl_mechanism=mechanism, sasl_plain_username=user, sasl_plain_password=secret)
        try:
            assert [b["broker_id"] for b in admin.describe_cluster()["brokers"]] == [1]
        finally:
            admin.close()
    listener = sasl_plaintext.cluster.broker(1).listener
    kept = b"".join(tail for route in listener.routes.values() for tail in route.decoded)
    assert kept  # ApiVersions and Metadata were kept
    assert b"alice" not in kept and b"n=bob" not in kept


def test_a_wrong_scram_proof_gets_58(sasl_plaintext):
    import scramp

    raw = Raw(broker_address(sasl_plaintext))
    try:
        assert handshake(raw, "SCRAM-SHA-256").error_code == ErrorCode.NONE
        client = scramp.ScramClient(["SCRAM-SHA-256"], "bob", "not-bobs-password")
        first = raw.ask(SaslAuthenticateRequest(auth_bytes=client.get_client_first().encode()), 2,
                        SaslAuthenticateResponse)
        assert first.error_code == ErrorCode.NONE
        client.set_server_first(first.auth_bytes.decode())
        final = raw.ask(SaslAuthenticateRequest(auth_bytes=client.get_client_final().encode()), 2,
                        SaslAuthenticateResponse)
        assert final.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert raw.closed()
    finally:
        raw.close()


def test_scram_over_raw_tokens_after_handshake_v0(sasl_plaintext):
    import scramp

    raw = Raw(broker_address(sasl_plaintext))
    try:
        assert handshake(raw, "SCRAM-SHA-512", version=0).error_code == ErrorCode.NONE
        client = scramp.ScramClient(["SCRAM-SHA-512"], "carol", "carol-secret")
        for token in (client.get_client_first, client.get_client_final):
            data = token().encode()
            raw.send(_SIZE.pack(len(data)) + data)
            reply = raw.read_frame().decode()
            (client.set_server_first if token == client.get_client_first else client.set_server_final)(reply)
        metadata = raw.ask(MetadataRequest(topics=None), 12, codec.api(3)[1])
        assert [b.node_id for b in metadata.brokers] == [1]
    finally:
        raw.close()


def test_only_the_sasl_exchange_is_read_before_authentication(sasl_plaintext):
    raw = Raw(broker_address(sasl_plaintext))
    try:
        versions = raw.ask(ApiVersionsRequest(), 0, ApiVersionsResponse)
        assert {17, 36} <= {k.api_key for k in versions.api_keys}
        raw.send(frame(MetadataRequest(topics=None), 12))
        assert raw.read_frame() is None  # closed, no answer
    finally:
        raw.close()


def test_out_of_order_and_unknown_mechanism(sasl_plaintext):
    raw = Raw(broker_address(sasl_plaintext))
    try:
        # SaslAuthenticate before SaslHandshake: closed unanswered, as Kafka 4.3.1 (the ACL differential)
        raw.send(frame(SaslAuthenticateRequest(auth_bytes=b"\0alice\0alice-secret"), 1))
        assert raw.closed()
    finally:
        raw.close()
    raw = Raw(broker_address(sasl_plaintext))
    try:
        assert handshake(raw, "PLAIN").error_code == ErrorCode.NONE
        assert handshake(raw, "PLAIN").error_code == ErrorCode.ILLEGAL_SASL_STATE
        assert raw.closed()
    finally:
        raw.close()
    raw = Raw(broker_address(sasl_plaintext))
    try:
        answer = handshake(raw, "GSSAPI")
        assert answer.error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM
        assert list(answer.mechanisms) == MECHANISMS
        assert raw.closed()
    finally:
        raw.close()


def test_after_authentication_sasl_requests_get_34_and_others_are_served(sasl_plaintext):
    raw = Raw(broker_address(sasl_plaintext))
    try:
        assert handshake(raw, "PLAIN").error_code == ErrorCode.NONE
        ok = raw.ask(SaslAuthenticateRequest(auth_bytes=b"\0alice\0alice-secret"), 2, SaslAuthenticateResponse)
        assert ok.error_code == ErrorCode.NONE
        assert handshake(raw, "PLAIN").error_code == ErrorCode.ILLEGAL_SASL_STATE
        metadata = raw.ask(MetadataRequest(topics=None), 12, codec.api(3)[1])
        assert [b.node_id for b in metadata.brokers] == [1]
    finally:
        raw.close()


def test_a_large_frame_before_authentication_closes(sasl_plaintext):
    raw = Raw(broker_address(sasl_plaintext))
    try:
        raw.send(_SIZE.pack(PRE_AUTH_MAX_FRAME_BYTES + 1) + b"\0" * 64)
        assert raw.read_frame() is None
    finally:
        raw.close()


def test_the_controller_reads_nothing_from_an_unauthenticated_peer(sasl_plaintext):
    """Nobody registers a broker on a SASL controller listener without credentials; the cluster's own
    brokers registered (they authenticate), so the cluster started."""
    controller = sasl_plaintext.call(lambda: ("127.0.0.1", sasl_plaintext.cluster.controller_node.port))
    raw = Raw(controller)
    try:
        raw.send(frame(BrokerRegistrationRequest(broker_id=99, cluster_id="x", listeners=[]), 0))
        assert raw.read_frame() is None
    finally:
        raw.close()
    assert 99 not in sasl_plaintext.call(lambda: set(sasl_plaintext.cluster.controller.committed.brokers))


def test_plaintext_listeners_answer_sasl_with_illegal_state(bg_cluster):
    raw = Raw(broker_address(bg_cluster))
    try:
        answer = handshake(raw, "PLAIN")
        assert (answer.error_code, list(answer.mechanisms)) == (ErrorCode.ILLEGAL_SASL_STATE, [])
        metadata = raw.ask(MetadataRequest(topics=None), 12, codec.api(3)[1])
        assert len(metadata.brokers) == 3
    finally:
        raw.close()


# --- TLS -----------------------------------------------------------------------------------------------------------

async def test_tls_client_certificates_give_the_principal(pki):
    """ssl.client.auth=required: a client without a certificate is turned away, one with a certificate is
    ``User:<its subject>``; the brokers show the listeners' certificate to the controller."""
    security = Security(listener_name="SSL", protocol_map={"CONTROLLER": "SSL"}, certfile=pki["server"],
                        cafile=pki["ca"], client_auth="required")
    async with Cluster(brokers=1, security=security) as cluster:
        host, port = "127.0.0.1", cluster.broker(1).port
        context = ssl.create_default_context(cafile=pki["ca"])
        context.load_cert_chain(pki["client"])
        reader, writer = await asyncio.open_connection(host, port, ssl=context, server_hostname=host)
        writer.write(frame(MetadataRequest(topics=None), 12))
        size = _SIZE.unpack(await asyncio.wait_for(reader.readexactly(4), READ_TIMEOUT))[0]
        await reader.readexactly(size)
        principals = {c.session.principal for c in cluster.broker(1).listener._connections}
        assert any(p.startswith("User:CN=tester,") and "O=kraftwire-tests" in p for p in principals), principals
        writer.close()
        controller_principals = {c.session.principal for c in cluster.controller_node.listener._connections}
        assert all(p.startswith("User:") and p != "User:ANONYMOUS" for p in controller_principals)

        anonymous = ssl.create_default_context(cafile=pki["ca"])
        with pytest.raises((ssl.SSLError, ConnectionError, asyncio.IncompleteReadError)):
            reader, writer = await asyncio.open_connection(host, port, ssl=anonymous, server_hostname=host)
            writer.write(frame(MetadataRequest(topics=None), 12))
            await asyncio.wait_for(reader.readexactly(4), READ_TIMEOUT)


async def test_a_plaintext_client_on_a_tls_port_gets_nothing(pki):
    security = Security(listener_name="SSL", certfile=pki["server"], cafile=pki["ca"])
    async with Cluster(brokers=1, security=security) as cluster:
        reader, writer = await asyncio.open_connection("127.0.0.1", cluster.broker(1).port)
        writer.write(frame(MetadataRequest(topics=None), 12))
        data = await asyncio.wait_for(reader.read(), READ_TIMEOUT)
        writer.close()
        # the TLS server answers a non-TLS record with at most an alert, never a Kafka frame
        assert not data or data[0] == 0x15


# --- kraftwire serve -----------------------------------------------------------------------------------------------

def test_serve_takes_the_security_settings_from_flags_and_the_file(tmp_path, pki):
    """SASL_SSL brokers and a SASL_PLAINTEXT controller listener, with the users split between the file
    and a flag; kafka-python logs in with PLAIN and SCRAM-SHA-512."""
    from kafka.errors import NoError
    from served import Served

    (tmp_path / "kraftwire.toml").write_text(
        'listener-name = "CLIENT"\nlistener-security-protocol-map = "CLIENT:SASL_SSL,CONTROLLER:SASL_PLAINTEXT"\n'
        f'ssl-certfile = "{pki["server"]}"\nssl-cafile = "{pki["ca"]}"\nsasl-plain-users = "alice:alice-secret"\n'
        'authorizer = true\nsuper-users = "User:alice,User:carol"\n')
    served = Served(tmp_path, "--brokers", "1", "--port", "0", "--controller-port", "0", "--data-dir", "d",
                    "--add-scram", "SCRAM-SHA-512=[name=carol,password=carol-secret]")
    try:
        served.protocol = "SASL_SSL"
        for mechanism in ("PLAIN", "SCRAM-SHA-512"):
            assert kafka_python_brokers(served, pki, mechanism) == [1]
        from kafka import KafkaAdminClient
        from kafka.admin import ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType
        from kafka.admin import ResourcePatternFilter, ResourceType

        admin = KafkaAdminClient(bootstrap_servers=served.bootstrap, security_protocol="SASL_SSL",
                                 sasl_mechanism="PLAIN", sasl_plain_username="alice",
                                 sasl_plain_password="alice-secret", ssl_cafile=pki["ca"])
        try:  # the authorizer is on (no SECURITY_DISABLED) and alice is a super user
            every = ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY)
            assert admin.describe_acls(ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY, every)) == ([],
                                                                                                              NoError)
        finally:
            admin.close()
    finally:
        served.stop()
