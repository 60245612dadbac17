"""Start-up's security helpers: ``super.users`` parsed as Kafka separates principals (a certificate
subject's commas kept), the nodes' principal on each kind of controller listener, and the repeated
warning limiter ``kraftwire serve`` logs through."""
from __future__ import annotations

import io
import logging

import pytest

from kraftwire import Security
from kraftwire.server.host.config_file import RepeatLimiter
from kraftwire.server.host.security_settings import parse_super_users
from kraftwire.server.metadata.image import MetadataImage


@pytest.mark.parametrize("text, principals", [
    ("User:admin,User:ops", ("User:admin", "User:ops")),
    ("User:admin;User:ops", ("User:admin", "User:ops")),
    ("User:CN=node,OU=brokers,O=ops", ("User:CN=node,OU=brokers,O=ops",)),
    ("User:CN=node,O=ops;User:admin", ("User:CN=node,O=ops", "User:admin")),
    ("User:CN=node,O=ops, User:CN=other,O=ops", ("User:CN=node,O=ops", "User:CN=other,O=ops")),
    (" ; ", ()),
])
def test_super_users_keep_the_commas_of_a_subject(text, principals):
    assert parse_super_users(text) == principals


def test_the_nodes_principal_on_each_controller_listener():
    assert Security(authorizer=True).nodes_principal() == "User:ANONYMOUS"
    sasl = Security(listener_name="SASL_PLAINTEXT", protocol_map={"CONTROLLER": "SASL_PLAINTEXT"},
                    plain_users={"admin": "x"}, authorizer=True)
    assert sasl.nodes_principal() == "User:kraftwire-broker"
    # both are super users of their own: nothing to refuse
    for security in (Security(authorizer=True), sasl):
        security.check_nodes_authorized(security.make_authorizer(), MetadataImage(), "127.0.0.1")


class Lines(logging.Handler):
    def __init__(self, clock):
        super().__init__()
        self.out = io.StringIO()
        self.addFilter(RepeatLimiter(interval=10.0, clock=clock))

    def emit(self, record):
        self.out.write(f"{record.levelname} {record.getMessage()}\n")


def test_a_warning_repeated_in_a_loop_is_logged_once_per_interval():
    now = [0.0]
    handler = Lines(lambda: now[0])
    logger = logging.getLogger("kraftwire.test-repeat")
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    try:
        for _ in range(500):
            logger.warning("broker %d: metadata fetch refused: %s", 1, "CLUSTER_AUTHORIZATION_FAILED")
            now[0] += 0.01
        logger.warning("broker %d: metadata fetch refused: %s", 2, "CLUSTER_AUTHORIZATION_FAILED")
        logger.info("an info line passes every time")
        logger.info("an info line passes every time")
        now[0] = 10.5
        logger.warning("broker %d: metadata fetch refused: %s", 1, "CLUSTER_AUTHORIZATION_FAILED")
        logger.critical("cannot start")
        logger.critical("cannot start")
    finally:
        logger.removeHandler(handler)
    assert handler.out.getvalue().splitlines() == [
        "WARNING broker 1: metadata fetch refused: CLUSTER_AUTHORIZATION_FAILED",
        "WARNING broker 2: metadata fetch refused: CLUSTER_AUTHORIZATION_FAILED",
        "INFO an info line passes every time",
        "INFO an info line passes every time",
        "WARNING broker 1: metadata fetch refused: CLUSTER_AUTHORIZATION_FAILED (and 499 more times in 10 s)",
        "CRITICAL cannot start",
        "CRITICAL cannot start",
    ]


def test_the_limiter_forgets_the_oldest_kinds_first():
    now = [0.0]
    limiter = RepeatLimiter(interval=10.0, kinds=2, clock=lambda: now[0])

    def passes(text):
        return limiter.filter(logging.LogRecord("x", logging.WARNING, __file__, 1, text, None, None))
    # "c" makes three kinds: "a", the oldest, is forgotten and passes again; "c" is held back
    assert [passes(t) for t in ("a", "b", "a", "c", "a", "c")] == [True, True, False, True, True, False]
