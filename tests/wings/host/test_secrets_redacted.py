"""Secrets never leave the metadata log in the clear: a ``kraftwire serve`` process with SCRAM users given
by repeated ``--add-scram``, ``--add-scram-file`` and ``KRAFTWIRE_ADD_SCRAM``, a credential upserted with a
known salt and a password-like broker config, then every page of the control plane and the live view, the
process's log and ``kraftwire log dump`` are searched for the salts, keys and the config's value. Only
``log dump --show-secrets`` prints them, and what it prints is the credential the password derives."""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import subprocess
import sys
import urllib.request

import pytest
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType,
                                   ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion)

from kraftwire.server.host import control_plane
from kraftwire.server.wire.client import KafkaClient, KafkaClientError
from kraftwire.server.wire.security import ClientSecurity
from served import REPO, Served

TOKEN = "redaction-test"
KNOWN_SALT = b"known-salt-of-carol-0123456789"
CAROL_PASSWORD = "carol-password"
SECRET_CONFIG = "listener.name.sasl_plaintext.ssl.key.password"
SECRET_VALUE = "keystore-secret-value-31"
USERS = {"alice": ("SCRAM-SHA-256", "alice-pw"), "bob": ("SCRAM-SHA-512", "bob-pw"),
         "filed": ("SCRAM-SHA-256", "filed-pw"), "other": ("SCRAM-SHA-512", "other-pw")}


def get_pages() -> list[str]:
    """Every GET endpoint of the control plane (as its docstring lists them) and the live view."""
    listed = re.findall(r"^\s+GET\s+(/\S*)", control_plane.__doc__ or "", re.M)
    pages = ["/", "/view", *(p.replace("{id}", "1") for p in listed)]
    assert {"/api/state", "/api/brokers", "/api/brokers/1", "/api/controllers", "/api/errors"} <= set(pages)
    return pages


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as answer:
        assert answer.status == 200
        return answer.read().decode()


def logs_in(bootstrap: str, mechanism: str, user: str, password: str) -> bool:
    import asyncio

    async def attempt() -> bool:
        host, port = bootstrap.split(",")[0].rsplit(":", 1)
        client = KafkaClient(host, int(port), "redaction-test", ClientSecurity("SASL_PLAINTEXT", None, mechanism,
                                                                               user, password))
        try:
            await client.connect()
            return True
        except KafkaClientError:
            return False
        finally:
            await client.close()
    return asyncio.run(attempt())


def kraftwire_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kraftwire", *args], capture_output=True, text=True, timeout=120,
                          cwd=REPO)


def encodings(secret: bytes) -> list[str]:
    """The ways a byte string may be printed: hex (both cases), base64 (both alphabets), Python's repr."""
    b64 = base64.b64encode(secret).decode()
    return [secret.hex(), secret.hex().upper(), b64.rstrip("="), base64.urlsafe_b64encode(secret).decode().rstrip("="),
            repr(secret)[2:-1]]


def scram_keys(mechanism: str, password: str, salt: bytes, iterations: int) -> tuple[bytes, bytes]:
    """(StoredKey, ServerKey) as RFC 5802 derives them."""
    digest = "sha256" if mechanism == "SCRAM-SHA-256" else "sha512"
    salted = hashlib.pbkdf2_hmac(digest, password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", digest).digest()
    return hashlib.new(digest, client_key).digest(), hmac.new(salted, b"Server Key", digest).digest()


@pytest.fixture(scope="module")
def served_run(tmp_path_factory):
    """Run the server, upsert carol with a known salt and set the secret config, read every page while it
    runs; then stop it. Returns (the pages' text, its log, its data directory, the users' logins)."""
    tmp = tmp_path_factory.mktemp("secrets")
    (tmp / "scram-users").write_text("# users kept off the command line\n\n"
                                     "SCRAM-SHA-256=[name=filed,password=filed-pw]\n")
    served = Served(tmp, "--brokers", "1", "--port", "0", "--controller-port", "0", "--data-dir", "d",
                    "--listener-name", "SASL_PLAINTEXT", "--control-port", "0", "--control-token", TOKEN,
                    "--log-level", "DEBUG",
                    "--add-scram", "SCRAM-SHA-256=[name=alice,password=alice-pw]",
                    "--add-scram", "SCRAM-SHA-512=[name=bob,password=bob-pw]",
                    "--add-scram-file", str(tmp / "scram-users"),
                    env={"KRAFTWIRE_ADD_SCRAM": "SCRAM-SHA-512=[name=ignored,password=ignored-pw]"})
    try:
        logins = {user: logs_in(served.bootstrap, mechanism, user, password)
                  for user, (mechanism, password) in USERS.items() if user != "other"}
        logins["ignored"] = logs_in(served.bootstrap, "SCRAM-SHA-512", "ignored", "ignored-pw")
        admin = AdminClient({"bootstrap.servers": served.bootstrap, "security.protocol": "SASL_PLAINTEXT",
                             "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": "alice", "sasl.password": "alice-pw"})
        upsert = UserScramCredentialUpsertion("carol", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192),
                                              CAROL_PASSWORD.encode(), KNOWN_SALT)
        for future in admin.alter_user_scram_credentials([upsert]).values():
            future.result(timeout=30)
        broker_one = ConfigResource(ResourceType.BROKER, "1", incremental_configs=[
            ConfigEntry(SECRET_CONFIG, SECRET_VALUE, incremental_operation=AlterConfigOpType.SET)])
        for future in admin.incremental_alter_configs([broker_one]).values():
            future.result(timeout=30)
        assert logs_in(served.bootstrap, "SCRAM-SHA-256", "carol", CAROL_PASSWORD)
        described = admin.describe_configs([ConfigResource(ResourceType.BROKER, "1")])
        entries = next(iter(described.values())).result(timeout=30)
        control = served.wait_logged("control plane and live view on ").split(" on ", 1)[1].strip().rstrip("/")
        pages = {page: fetch(control + page) for page in get_pages()}
    finally:
        log = served.stop()
    return pages, log, tmp / "d", logins, entries.get(SECRET_CONFIG)


def test_every_scram_user_given_is_kept(served_run):
    """Both --add-scram flags and the file's user log in; flags override KRAFTWIRE_ADD_SCRAM as they
    override every setting of the environment."""
    _pages, log, _data, logins, _entry = served_run
    assert logins == {"alice": True, "bob": True, "filed": True, "ignored": False}
    assert "--add-scram passwords on the command line can be read by every local user" in log


def test_environment_supplies_the_users_without_flags(tmp_path):
    served = Served(tmp_path, "--brokers", "1", "--port", "0", "--controller-port", "0", "--data-dir", "d",
                    "--listener-name", "SASL_PLAINTEXT",
                    env={"KRAFTWIRE_ADD_SCRAM": "SCRAM-SHA-512=[name=other,password=other-pw] "
                                                "SCRAM-SHA-256=[name=filed,password=filed-pw]"})
    try:
        assert logs_in(served.bootstrap, "SCRAM-SHA-512", "other", "other-pw")
        assert logs_in(served.bootstrap, "SCRAM-SHA-256", "filed", "filed-pw")
        assert not logs_in(served.bootstrap, "SCRAM-SHA-256", "filed", "wrong")
    finally:
        log = served.stop()
    assert "--add-scram passwords on the command line" not in log  # none was there


def test_a_bad_scram_file_is_one_line_and_exit_1(tmp_path):
    from served import serve_once
    (tmp_path / "users").write_text("SCRAM-SHA-256=[name=x]\n")
    for users in ("users", "missing"):
        result = serve_once(tmp_path, "--brokers", "1", "--port", "0", "--controller-port", "0", "--data-dir", "d",
                            "--add-scram-file", str(tmp_path / users))
        assert result.returncode != 0
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "scram" in result.stderr.lower(), result.stderr


def test_show_secrets_prints_the_credential_the_password_derives(served_run):
    _pages, _log, data, _logins, _entry = served_run
    shown = kraftwire_cli("log", "dump", "--json", "--show-secrets", str(data))
    assert shown.returncode == 0, shown.stderr
    records = [json.loads(line) for line in shown.stdout.splitlines()]
    carol = [r["fields"] for r in records if r["type"] == "UserScramCredentialRecord" and r["fields"]["name"] == "carol"]
    assert [bytes.fromhex(c["salt"]) for c in carol] == [KNOWN_SALT]
    stored, server = scram_keys("SCRAM-SHA-256", CAROL_PASSWORD, KNOWN_SALT, 8192)
    assert (carol[0]["stored_key"], carol[0]["server_key"], carol[0]["iterations"]) == (stored.hex(), server.hex(), 8192)
    assert {r["fields"]["value"] for r in records if r["type"] == "ConfigRecord"
            and r["fields"]["name"] == SECRET_CONFIG} == {SECRET_VALUE}


def secrets_of(data) -> list[str]:
    """Every salt and key of the log (from ``--show-secrets``), each in every encoding, and the config value."""
    shown = kraftwire_cli("log", "dump", "--json", "--show-secrets", str(data))
    found = [SECRET_VALUE, *encodings(KNOWN_SALT)]
    for line in shown.stdout.splitlines():
        record = json.loads(line)
        if record["type"] == "UserScramCredentialRecord":
            for name in ("salt", "stored_key", "server_key"):
                found += encodings(bytes.fromhex(record["fields"][name]))
    assert len(found) >= 4 * 3 * 5  # four credentials, three secrets each, five encodings
    return found


def test_no_page_log_line_or_dump_shows_a_secret(served_run):
    pages, log, data, _logins, _entry = served_run
    dumped = {form: kraftwire_cli("log", "dump", *flag, str(data)) for form, flag in (("text", []), ("json", ["--json"]))}
    assert all(result.returncode == 0 for result in dumped.values())
    outputs = {**{f"GET {page}": text for page, text in pages.items()}, "log": log,
               **{f"log dump ({form})": result.stdout for form, result in dumped.items()}}
    for secret in secrets_of(data):
        leaked = [where for where, text in outputs.items() if secret in text]
        assert leaked == [], f"{secret!r} shown by {leaked}"
    # the records are there, their secrets replaced, their user, mechanism and iterations shown
    state = json.loads(pages["/api/state"])
    recent = {r["type"]: r["fields"] for r in reversed(state["recent_records"])  # newest first: the newest wins
              if r["type"] in ("UserScramCredentialRecord", "ConfigRecord")}
    assert recent["UserScramCredentialRecord"] == {"name": "carol", "mechanism": 1, "salt": "(redacted)",
                                                   "stored_key": "(redacted)", "server_key": "(redacted)",
                                                   "iterations": 8192, "unknown_tagged_fields": []}
    assert recent["ConfigRecord"]["name"] == SECRET_CONFIG and recent["ConfigRecord"]["value"] == "(redacted)"
    assert "carol" in pages["/view"] and "(redacted)" in pages["/view"]
    lines = [json.loads(line) for line in dumped["json"].stdout.splitlines()]
    scram = [r["fields"] for r in lines if r["type"] == "UserScramCredentialRecord"]
    assert len(scram) == 4 and all(f["salt"] == f["stored_key"] == f["server_key"] == "(redacted)" for f in scram)


def test_describe_configs_shows_the_secret_as_sensitive_and_null(served_run):
    *_rest, entry = served_run
    assert entry is not None and entry.is_sensitive and entry.value is None
