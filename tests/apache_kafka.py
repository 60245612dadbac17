"""Apache Kafka itself, for the tests that take it as the oracle: its command-line tools and a real KRaft
cluster, both run from the jars that tests/setup.sh resolves from Maven Central (tests/kafka/pom.xml pins
the version) into tests/kafka/lib.

``run_tool`` runs one of Kafka's tools by its main class, as ``bin/kafka-*.sh`` would; ``KafkaCluster``
starts a real cluster: node 1 a combined controller+broker, the others plain brokers, each with
``log_dirs`` log directories, on ports the kernel picked, formatted with Kafka's storage tool; or, with
``dedicated_controller``, a controller node of its own beside the brokers, as kraftwire is laid out.
"""
from __future__ import annotations

import asyncio
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from kraftwire.codec.messages import MetadataRequest
from kraftwire.server.wire.client import KafkaClient, KafkaClientError
from kraftwire.server.host.cluster import CONTROLLER_NODE_ID
from kraftwire.server.raft.storage import kafka_uuid, random_kafka_uuid
from kraftwire.server.wire.security import ClientSecurity
from served import free_ports

KAFKA_DIR = Path(__file__).resolve().parent / "kafka"
LIB = KAFKA_DIR / "lib"
# Kafka 3.7's broker (tests/kafka37/pom.xml), whose metadata log the production-level twin test records
KAFKA37_LIB = KAFKA_DIR.parent / "kafka37" / "lib"
# Small heaps, and a JVM tuned to start fast rather than to run long: the tools live a second or two.
JVM_FLAGS = ["-Xmx256m", "-Xms32m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
             "-Djava.awt.headless=true", f"-Dlog4j2.configurationFile={KAFKA_DIR / 'log4j2.properties'}"]


def kafka_version() -> str:
    """The Apache Kafka version the jars are of (from kafka-clients' file name)."""
    return next(LIB.glob("kafka-clients-*.jar")).stem.removeprefix("kafka-clients-")


def java_command(main_class: str, *args: str, lib: Path = LIB) -> list[str]:
    """``lib`` is the folder of jars: tests/kafka/lib, or tests/kafka37/lib for Kafka 3.7 (KAFKA37_LIB)."""
    if not (lib / ".resolved").exists():
        raise AssertionError(f"Apache Kafka's jars are not in {lib}: run tests/setup.sh")
    return ["java", *JVM_FLAGS, "-cp", f"{lib}/*", main_class, *args]


def run_tool(main_class: str, *args: str, timeout: float = 180, input: str | None = None
             ) -> subprocess.CompletedProcess:
    """One of Kafka's tools run to its end; stdout and stderr as text, and its exit code."""
    return subprocess.run(java_command(main_class, *args), capture_output=True, text=True, timeout=timeout,
                          input=input, stdin=None if input is not None else subprocess.DEVNULL)


def metadata_shell(snapshot, *command: str, attempts: int = 5) -> subprocess.CompletedProcess:
    """``kafka-metadata-shell --snapshot SNAPSHOT COMMAND...``, asked again while its answer is that of an
    empty image: nothing printed (an ``ls``) or the path missing (a ``cat``: "No such file or directory").
    Kafka's shell runs the command once its loader has applied any offset above 0
    (MetadataShell.waitUntilCaughtUp): a snapshot that opens with kraft.version 1's control batch (header,
    KRaftVersion, Voters at offsets 0-2), Kafka's own included, can be read before its data batches are
    applied. A path really missing is still missing at the last attempt."""
    for _ in range(attempts):
        shown = run_tool(METADATA_SHELL, "--snapshot", str(snapshot), *command)
        if shown.returncode != 0 or (shown.stdout.strip() and "No such file or directory" not in shown.stdout):
            break
    return shown


# Main classes of Kafka's scripts (bin/kafka-*.sh), as of Kafka 4.
STORAGE_TOOL = "kafka.tools.StorageTool"
REASSIGN_PARTITIONS = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
TOPICS = "org.apache.kafka.tools.TopicCommand"
CONFIGS = "kafka.admin.ConfigCommand"
LOG_DIRS = "org.apache.kafka.tools.LogDirsCommand"
METADATA_QUORUM = "org.apache.kafka.tools.MetadataQuorumCommand"
DUMP_LOG = "org.apache.kafka.tools.DumpLogSegments"
METADATA_SHELL = "org.apache.kafka.shell.MetadataShell"


class PortTaken(Exception):
    """A node could not bind a port chosen for it: another process took it meanwhile."""


class KafkaCluster:
    """A real Apache Kafka KRaft cluster of ``brokers`` broker nodes (ids 1..n), each a JVM with a small heap.

    There is one voter: node 1, combined with a broker like a development cluster, or with
    ``dedicated_controller`` a controller-only node of that id. Offsets and transactions topics take
    one replica, and a group's first rebalance does not wait, so the cluster answers at once.
    """

    def __init__(self, brokers: int = 3, log_dirs: int = 2, dedicated_controller: int | None = None,
                 overrides: dict[str, str] | None = None, lib: Path = LIB, format_args: tuple[str, ...] = (),
                 sasl_users: dict[str, str] | None = None, super_users: tuple[str, ...] | None = None):
        """``lib``: the jars to run (another Kafka release's); ``format_args``: more for the storage tool's
        format (``--release-version 3.5-IV2``). ``sasl_users`` ({user: password}) puts the brokers'
        listener on SASL_PLAINTEXT with PLAIN and SCRAM-SHA-256 (PLAIN's users from the JAAS config, the
        first user the brokers' own, SCRAM's from the metadata log); ``super_users`` turns on Kafka's
        StandardAuthorizer with those principals in ``super.users`` (the controller listener stays
        PLAINTEXT, so ``User:ANONYMOUS`` is one as well: the nodes' own name there)."""
        self.count, self.log_dirs_per_broker, self.overrides = brokers, log_dirs, overrides or {}
        self.sasl_users, self.super_users = sasl_users, super_users
        self.protocol = "SASL_PLAINTEXT" if sasl_users else "PLAINTEXT"
        self.lib, self.format_args = lib, format_args
        self.controller_id = dedicated_controller or 1
        self.dedicated = dedicated_controller is not None
        self.root = Path(tempfile.mkdtemp(prefix="apache-kafka-"))
        self.cluster_id = _cluster_id()
        self.processes: list[subprocess.Popen] = []
        self._pick_ports()

    def _pick_ports(self) -> None:
        base = free_ports(self.count + 1)
        self.controller_port, self.ports = base, [base + 1 + i for i in range(self.count)]

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{p}" for p in self.ports)

    def node_dir(self, node_id: int) -> Path:
        return self.root / f"node-{node_id}"

    def log_dirs(self, node_id: int) -> list[Path]:
        return [self.node_dir(node_id) / f"logs-{k}" for k in range(self.log_dirs_per_broker)]

    def metadata_dir(self) -> Path:
        """The controller's ``__cluster_metadata-0`` partition directory."""
        return self.node_dir(self.controller_id) / "metadata" / "__cluster_metadata-0"

    @property
    def node_ids(self) -> list[int]:
        return ([self.controller_id] if self.dedicated else []) + list(range(1, self.count + 1))

    def _properties(self, node_id: int) -> dict[str, str]:
        roles = [role for role, yes in (("broker", node_id <= self.count), ("controller", node_id == self.controller_id))
                 if yes]
        listeners = [f"CONTROLLER://127.0.0.1:{self.controller_port}"] if "controller" in roles else []
        properties = {
            "process.roles": ",".join(roles),
            "node.id": str(node_id),
            "controller.quorum.voters": f"{self.controller_id}@127.0.0.1:{self.controller_port}",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": f"{self.protocol}:{self.protocol},CONTROLLER:PLAINTEXT",
            "metadata.log.dir": str(self.node_dir(node_id) / "metadata"),
            "offsets.topic.replication.factor": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "num.network.threads": "2",
            "num.io.threads": "2",
            "background.threads": "2",
            "log.cleaner.enable": "false",
        }
        if "broker" in roles:
            port = self.ports[node_id - 1]
            listeners.insert(0, f"{self.protocol}://127.0.0.1:{port}")
            properties.update({"advertised.listeners": f"{self.protocol}://127.0.0.1:{port}",
                               "inter.broker.listener.name": self.protocol,
                               "log.dirs": ",".join(str(d) for d in self.log_dirs(node_id))})
        else:
            properties["log.dirs"] = str(self.node_dir(node_id) / "metadata")
        properties.update(self._security_properties())
        properties["listeners"] = ",".join(listeners)
        properties.update(self.overrides)
        return properties

    def _security_properties(self) -> dict[str, str]:
        properties = {}
        if self.sasl_users:
            (user, password), prefix = next(iter(self.sasl_users.items())), "listener.name.sasl_plaintext"
            entries = " ".join(f'user_{u}="{p}"' for u, p in self.sasl_users.items())
            properties.update({
                "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
                "sasl.mechanism.inter.broker.protocol": "PLAIN",
                f"{prefix}.plain.sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule "
                                                    f'required username="{user}" password="{password}" {entries};',
                f"{prefix}.scram-sha-256.sasl.jaas.config":
                    "org.apache.kafka.common.security.scram.ScramLoginModule required;"})
        if self.super_users is not None:
            properties.update({"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                               "super.users": ";".join((*self.super_users, "User:ANONYMOUS"))})
        return properties

    def client_security(self) -> ClientSecurity | None:
        """How a client logs in to the brokers' listener: as the first SASL user, with PLAIN."""
        if not self.sasl_users:
            return None
        user, password = next(iter(self.sasl_users.items()))
        return ClientSecurity(protocol=self.protocol, mechanism="PLAIN", username=user, password=password)

    def start(self, timeout: float = 120, attempts: int = 3) -> "KafkaCluster":
        """Format and start every node; on new ports if one was taken in between (Kafka needs its
        controller's port in every node's config before any starts, so the kernel cannot pick it at bind)."""
        for _ in range(attempts):
            try:
                return self._start(timeout)
            except PortTaken:
                self.stop(remove=False)
                shutil.rmtree(self.root, ignore_errors=True)
                self.root.mkdir()
                self._pick_ports()
        raise AssertionError(f"Apache Kafka found its ports taken {attempts} times")

    def _start(self, timeout: float) -> "KafkaCluster":
        formats = []
        for node_id in self.node_ids:
            directory = self.node_dir(node_id)
            directory.mkdir(parents=True)
            config = directory / "server.properties"
            config.write_text("".join(f"{k}={v}\n" for k, v in self._properties(node_id).items()))
            formats.append(subprocess.Popen(java_command(STORAGE_TOOL, "format", f"--cluster-id={self.cluster_id}",
                                                         "-c", str(config), *self.format_args, lib=self.lib),
                                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        for formatting in formats:
            output = formatting.communicate(timeout=180)[0]
            assert formatting.returncode == 0, output
        for node_id in self.node_ids:
            directory = self.node_dir(node_id)
            log = open(directory / "kafka.log", "w")
            self.processes.append(subprocess.Popen(
                java_command("kafka.Kafka", str(directory / "server.properties"), lib=self.lib),
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
            log.close()
        try:
            asyncio.run(self._wait_for_brokers(timeout))
        except PortTaken:
            raise
        except BaseException:
            self.stop()
            raise
        return self

    async def _wait_for_brokers(self, timeout: float) -> None:
        """Until node 1 lists every broker as alive (registered and unfenced)."""
        deadline = time.monotonic() + timeout
        while True:
            for process in self.processes:
                if process.poll() is not None:
                    if "java.net.BindException: Address already in use" in self.logs():
                        raise PortTaken()
                    raise AssertionError(f"an Apache Kafka node exited ({process.returncode}): {self.logs()}")
            client = KafkaClient("127.0.0.1", self.ports[0], "kafka-fixture", self.client_security())
            try:
                answer = await client.send(MetadataRequest(topics=[]), 12)
                if len(answer.brokers) == self.count:
                    return
            except KafkaClientError:
                pass
            finally:
                await client.close()
            if time.monotonic() > deadline:
                raise AssertionError(f"Apache Kafka did not come up in {timeout} s: {self.logs()}")
            await asyncio.sleep(0.2)

    def logs(self) -> str:
        return "\n".join(f"--- node {i}\n" + (self.node_dir(i) / "kafka.log").read_text()[-4000:]
                         for i in self.node_ids if (self.node_dir(i) / "kafka.log").exists())

    def stop(self, remove: bool = True) -> None:
        """Kill every node: nothing is kept, so a controlled shutdown (up to a minute) buys nothing."""
        for process in self.processes:
            process.kill()
        for process in self.processes:
            process.wait()
        self.processes.clear()
        if remove:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> "KafkaCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _cluster_id() -> str:
    """A cluster id as Kafka draws them (16 random bytes, URL-safe base64 without padding, never starting
    with "-", which Kafka's own format command would take for an option)."""
    return kafka_uuid(random_kafka_uuid())


@pytest.fixture(scope="session")
def apache_kafka():
    """One real Apache Kafka cluster for the whole run (its JVMs start once), laid out as kraftwire's
    default: 3 brokers with 2 log dirs each, and a controller of its own with kraftwire's node id."""
    with KafkaCluster(brokers=3, log_dirs=2, dedicated_controller=CONTROLLER_NODE_ID) as cluster:
        yield cluster



# The users of the secured oracle (``apache_kafka_acls``), {user: password}: the first is a super user,
# the brokers' own; the others have only what a test's ACLs give them.
ACL_ORACLE_USERS = {user: f"{user}-secret" for user in (
    "admin", "alice", "bob", "carol", "dave", "eve", "frank", "grace", "heidi", "ivan", "mallory")}


@pytest.fixture(scope="session")
def apache_kafka_acls():
    """A second real Apache Kafka for the whole run, secured: one combined controller+broker node (one
    JVM), its listener SASL_PLAINTEXT (PLAIN for ``ACL_ORACLE_USERS``, SCRAM-SHA-256), the
    StandardAuthorizer with ``User:admin`` as the super user and no ACLs to begin with."""
    with KafkaCluster(brokers=1, log_dirs=1, sasl_users=ACL_ORACLE_USERS, super_users=("User:admin",)) as cluster:
        yield cluster
