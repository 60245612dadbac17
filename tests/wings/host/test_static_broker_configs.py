"""A broker's startup configs through kafka-python's describe_configs over TCP: the names, values,
sources, types and read-only flags a KRaft broker reports for its server.properties, with the
listeners' real addresses; and kraftwire's refusal to change a running broker's listeners."""
from __future__ import annotations

from kafka import KafkaAdminClient
from kafka.admin import ConfigResource

STATIC = "STATIC_BROKER_CONFIG"
INT, LIST, STRING = 3, 7, 2


def test_broker_reports_its_startup_configs(bg_cluster):
    broker = bg_cluster.cluster.broker(2)
    admin = KafkaAdminClient(bootstrap_servers=bg_cluster.bootstrap, client_id="static-configs-test")
    try:
        described = admin.describe_configs([ConfigResource("BROKER", "2")], config_filter="all")["broker"]["2"]
        found = {name: (entry["value"], entry["config_source"], entry["read_only"]) for name, entry in described.items()}
        address = f"{broker.host}:{broker.port}"
        controller = bg_cluster.cluster.controller_node
        paths = ",".join(directory.path for directory in broker.log_manager.directories)
        assert found["node.id"] == ("2", STATIC, True)
        assert found["broker.id"] == ("2", STATIC, True)
        assert found["process.roles"] == ("broker", STATIC, True)
        assert found["listeners"] == (f"PLAINTEXT://{address}", STATIC, False)
        assert found["advertised.listeners"] == (f"PLAINTEXT://{address}", STATIC, True)  # read-only in Kafka 4.3.1
        assert found["listener.security.protocol.map"] == ("CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT", STATIC, False)
        assert found["inter.broker.listener.name"] == ("PLAINTEXT", STATIC, True)
        assert found["controller.listener.names"] == ("CONTROLLER", STATIC, True)
        assert found["controller.quorum.bootstrap.servers"] == (f"{controller.host}:{controller.port}", STATIC, True)
        assert found["log.dirs"] == (paths, STATIC, True) and paths.endswith("broker-2/logs-0")
        assert found["log.dir"] == ("/tmp/kafka-logs", "DEFAULT_CONFIG", True)

        # kafka-python's admin reads the advertised listener back as a client would.
        [(host, port)] = [tuple(entry.rsplit("//", 1)[1].rsplit(":", 1)) for entry in
                          found["advertised.listeners"][0].split(",")]
        assert (host, int(port)) == (broker.advertised_host, broker.port)
        assert {node["broker_id"]: (node["host"], node["port"]) for node in admin.describe_cluster()["brokers"]}[2] == (
            host, int(port))

        with_types = admin.describe_configs([ConfigResource("BROKER", "2", ["node.id", "listeners",
                                                                            "listener.security.protocol.map"])],
                                            config_filter="all")["broker"]["2"]
        assert {name: entry.get("config_type") for name, entry in with_types.items()} == {
            "node.id": "INT", "listeners": "LIST", "listener.security.protocol.map": "STRING"}

        refused = admin.alter_configs([ConfigResource("BROKER", "2", {"listeners": "PLAINTEXT://:1"})],
                                      raise_on_unknown=False)
        assert refused == {"broker": {"2": "[Error 42] InvalidRequestError: kraftwire cannot update these configs of "
                                           "a running broker, which Kafka can: [listeners]"}}
        read_only = admin.alter_configs([ConfigResource("BROKER", "2", {"node.id": "7"})], raise_on_unknown=False)
        assert read_only == {"broker": {"2": "[Error 42] InvalidRequestError: Cannot update these configs "
                                             "dynamically: [node.id]"}}
    finally:
        admin.close()
