"""Python's ``testcontainers`` with kafka-python: the image started as a Python user's test starts it, a
throttled reassignment that stands still on the virtual clock until the control plane advances it. The
part between the ``readme`` markers is README's Python snippet, word for word (test_readme_snippets.py)."""
import json
import urllib.request

from kafka import KafkaAdminClient, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from testcontainers.core.container import DockerContainer
from testcontainers.core.wait_strategies import LogMessageWaitStrategy


def test_a_throttled_reassignment_finishes_when_the_clock_is_advanced(engine, broker_port):
    port = broker_port
    # readme: python
    kraftwire = (DockerContainer("localhost/kraftwire:latest")
                 .with_env("KRAFTWIRE_PORT", str(port))  # brokers 1-3 on port, port+1, port+2
                 .with_env("KRAFTWIRE_ADVERTISED_HOST", "localhost")
                 .with_env("KRAFTWIRE_VIRTUAL_CLOCK", "true")
                 .with_env("KRAFTWIRE_CONTROL_TOKEN", "secret")
                 .with_exposed_ports(8080)
                 .waiting_for(LogMessageWaitStrategy("kraftwire ready on")))
    for broker in range(3):
        kraftwire.with_bind_ports(port + broker, port + broker)  # 1:1, so the advertised ports reach them
    with kraftwire:
        control = f"http://localhost:{kraftwire.get_exposed_port(8080)}"
        admin = KafkaAdminClient(bootstrap_servers=f"localhost:{port}")
        admin.create_topics([NewTopic("orders", replica_assignments={0: [1, 2]})])
        admin.alter_configs([  # 100 MiB a partition, copied at 10 MiB/s by broker 3
            ConfigResource(ConfigResourceType.TOPIC, "orders", configs={
                "kraftwire.partition.size.bytes": "104857600", "follower.replication.throttled.replicas": "*"}),
            ConfigResource(ConfigResourceType.BROKER, "3", configs={
                "follower.replication.throttled.rate": "10485760"})])
        admin.alter_partition_reassignments({TopicPartition("orders", 0): [2, 3]})
        assert TopicPartition("orders", 0) in admin.list_partition_reassignments()  # the clock stands still

        advance = urllib.request.Request(f"{control}/api/clock/advance", method="POST",
                                         data=json.dumps({"until": "reassignments-done"}).encode(),
                                         headers={"Authorization": "Bearer secret"})
        clock = json.load(urllib.request.urlopen(advance))["clock"]
        assert clock["seconds"] >= 10  # simulated: 100 MiB at 10 MiB/s
        assert admin.list_partition_reassignments() == {}
        admin.close()
    # readme: end
