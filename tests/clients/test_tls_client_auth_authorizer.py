"""Controllers and brokers on SSL with ``--ssl-client-auth required`` and ``--authorizer``, configured as a
Kafka operator does: the nodes' certificate principal in ``super.users`` (``User:CN=...,O=...``, commas
and all). Such a cluster comes up and serves clients by their certificates' principals; one whose nodes'
principal is not allowed stops at once with one line naming it and exit 1, instead of brokers retrying
refused metadata fetches until the start-up deadline."""
from __future__ import annotations

import pytest
import trustme
from cryptography import x509
from kafka import KafkaAdminClient
from kafka.admin import NewTopic
from kafka.errors import TopicAuthorizationFailedError

from served import Served, serve_once


def principal_of(pem_path) -> str:
    """The certificate's subject as Kafka names it (RFC 4514, most specific part first), read by
    ``cryptography``, independently of kraftwire."""
    data = open(pem_path, "rb").read()
    start = data.index(b"-----BEGIN CERTIFICATE-----")
    return "User:" + x509.load_pem_x509_certificate(data[start:]).subject.rfc4514_string()


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    directory = tmp_path_factory.mktemp("pki")
    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(directory / "ca.pem"))
    ca.issue_cert("127.0.0.1", "localhost", common_name="kraftwire-node", organization_name="ops") \
        .private_key_and_cert_chain_pem.write_to_path(str(directory / "node.pem"))
    trustme.CA().cert_pem.write_to_path(str(directory / "other-ca.pem"))
    ca.issue_cert("kafka.example.com", common_name="elsewhere").private_key_and_cert_chain_pem.write_to_path(
        str(directory / "elsewhere.pem"))
    for name in ("admin", "mallory"):
        ca.issue_cert(f"{name}@example.com", common_name=name, organization_name="clients") \
            .private_key_and_cert_chain_pem.write_to_path(str(directory / f"{name}.pem"))
    return {name: str(directory / f"{name}.pem") for name in ("ca", "node", "admin", "mallory", "other-ca",
                                                               "elsewhere")}


def tls_flags(pki, client_auth: str = "required", certfile: str = "node", cafile: str = "ca") -> list[str]:
    return ["--brokers", "2", "--port", "0", "--controller-port", "0", "--data-dir", "d",
            "--listener-name", "SSL", "--listener-security-protocol-map", "CONTROLLER:SSL",
            "--ssl-certfile", pki[certfile], "--ssl-cafile", pki[cafile], "--ssl-client-auth", client_auth,
            "--authorizer"]


def admin_as(served, pki, who: str) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=served.bootstrap, security_protocol="SSL", ssl_cafile=pki["ca"],
                            ssl_certfile=pki[who], ssl_check_hostname=False, request_timeout_ms=30000)


@pytest.mark.parametrize("controllers", [1, 3])
def test_ssl_client_auth_and_authorizer_work_end_to_end(tmp_path, pki, controllers):
    assert "," in principal_of(pki["node"])  # a subject of several parts: its commas must survive the flag
    super_users = f"{principal_of(pki['node'])};{principal_of(pki['admin'])}"
    served = Served(tmp_path, *tls_flags(pki), "--super-users", super_users, "--controllers", str(controllers),
                    "--quorum-timers", "short")
    try:
        admin = admin_as(served, pki, "admin")
        try:
            admin.create_topics([NewTopic("secured", 2, 2)])
            assert "secured" in admin.list_topics()
            assert {b["broker_id"] for b in admin.describe_cluster()["brokers"]} == {1, 2}
        finally:
            admin.close()
        mallory = admin_as(served, pki, "mallory")
        try:
            with pytest.raises(TopicAuthorizationFailedError):
                mallory.create_topics([NewTopic("not-allowed", 1, 1)])
        finally:
            mallory.close()
    finally:
        log = served.stop()
    assert "refused" not in log, log


@pytest.mark.parametrize("client_auth, principal", [("required", None), ("none", "User:ANONYMOUS")])
def test_nodes_refused_cluster_action_stop_at_once_in_one_line(tmp_path, pki, client_auth, principal):
    """No super.users (or the wrong one): one line naming the nodes' principal and the setting, exit 1,
    before any broker retries a refused fetch."""
    principal = principal or principal_of(pki["node"])
    result = serve_once(tmp_path, *tls_flags(pki, client_auth), "--super-users", principal_of(pki["admin"]))
    assert result.returncode == 1, result.stderr
    problems = [line for line in result.stderr.splitlines() if " INFO " not in line]
    assert len(problems) == 1, result.stderr
    assert "cannot start" in problems[0] and principal in problems[0] and "super.users" in problems[0], problems
    assert "ready" not in result.stdout


@pytest.mark.parametrize("certfile, cafile, why", [
    ("node", "other-ca", "CERTIFICATE_VERIFY_FAILED (unable to get local issuer certificate)"),
    ("elsewhere", "ca", "CERTIFICATE_VERIFY_FAILED (IP address mismatch"),
])
def test_certificates_the_nodes_would_refuse_stop_at_once_in_one_line(tmp_path, pki, certfile, cafile, why):
    """A CA that did not sign the certificate, or a certificate not naming the listeners' address: one line
    saying so and exit 1, where brokers used to retry failed fetches for 30 s and say only that."""
    result = serve_once(tmp_path, *tls_flags(pki, certfile=certfile, cafile=cafile), "--super-users",
                        principal_of(pki[certfile]))
    assert result.returncode == 1, result.stderr
    problems = [line for line in result.stderr.splitlines() if " INFO " not in line]
    assert len(problems) == 1, result.stderr
    assert "cannot start: the nodes cannot open TLS to their own SSL listener at 127.0.0.1" in problems[0], problems
    assert why in problems[0], problems


@pytest.mark.parametrize("broker, controller", [("SSL", "PLAINTEXT"), ("SASL_SSL", "SASL_PLAINTEXT"),
                                                ("SASL_PLAINTEXT", "SSL")])
def test_a_quorum_of_three_forms_whatever_the_brokers_listener(tmp_path, pki, broker, controller):
    """The controllers reach each other over the controller listener, with its protocol: they used to take
    the brokers' (TLS towards a PLAINTEXT controller listener, and the reverse), and never elected a leader."""
    served = Served(tmp_path, "--brokers", "1", "--port", "0", "--controller-port", "0", "--data-dir", "d",
                    "--controllers", "3", "--quorum-timers", "short", "--listener-name", broker,
                    "--listener-security-protocol-map", f"CONTROLLER:{controller}", "--ssl-certfile", pki["node"],
                    "--ssl-cafile", pki["ca"], "--sasl-plain-users", "admin:admin-secret")
    assert served.bootstrap
    served.stop()
