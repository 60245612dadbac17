"""Apache Kafka's own command-line tools against kraftwire, as a user runs them: each tool's main class
from the jars tests/setup.sh resolved, its printed output and exit code asserted.

One kraftwire cluster (3 brokers, 2 log directories each) serves the module; every test works on topics
of its own. A Kafka tool is a JVM that lives one to a few seconds, so the tests run few of them.
"""
import asyncio
import json
import re
import time

import pytest

from apache_kafka import CONFIGS, LOG_DIRS, METADATA_QUORUM, REASSIGN_PARTITIONS, TOPICS, run_tool
from kraftwire.server.host.cluster import CONTROLLER_NODE_ID, BackgroundCluster
from kraftwire.server.raft.storage import kafka_uuid
from kraftwire.server.wire.client import KafkaClient

DESCRIBE_TOPIC_PARTITIONS = 75


@pytest.fixture(scope="module")
def kraftwire():
    with BackgroundCluster(brokers=3, log_dirs=2) as bg:
        yield bg


def kafka(main_class, bg, *args, expect=0):
    """A Kafka tool against ``bg``; asserts its exit code and returns its standard output."""
    done = run_tool(main_class, "--bootstrap-server", bg.bootstrap, *args)
    assert done.returncode == expect, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout if expect == 0 else done.stdout + done.stderr


def serves(bg, api_key: int) -> bool:
    async def ask():
        host, port = bg.bootstrap.split(",")[0].split(":")
        client = KafkaClient(host, int(port), "kafka-tools-test")
        try:
            await client.connect()
            return api_key in client.versions
        finally:
            await client.close()
    return asyncio.run(ask())


def write_json(tmp_path, name, document) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return str(path)


def replicas(bg, topic):
    """``{partition: replicas}`` from kraftwire's committed image."""
    def read():
        image = bg.cluster.controller.committed
        return {i: list(state.replicas) for name, i, state in image.partitions() if name.name == topic}
    return bg.call(read)


def dynamic_configs(bg, entity_type, name=None):
    """kafka-configs --describe of one topic or of every broker, as ``{entity: {key: value}}``."""
    args = ["--describe", "--entity-type", entity_type] + (["--entity-name", name] if name else [])
    configs, entity = {}, None
    for line in kafka(CONFIGS, bg, *args).splitlines():
        if header := re.match(r"Dynamic configs for (?:broker|topic) (\S+) are:", line):
            entity = header.group(1)
            configs[entity] = {}
        elif line.startswith("  ") and entity is not None:
            key, value = line.split()[0].split("=", 1)
            configs[entity][key] = value
        elif line.startswith("Default configs"):
            entity = None
    return configs


def test_topics_create_describe_alter(kraftwire):
    assert kafka(TOPICS, kraftwire, "--create", "--topic", "tools-topics", "--replica-assignment", "1:2,2:3,3:1",
                 "--config", "retention.ms=3600000") == "Created topic tools-topics.\n"
    out = kafka(TOPICS, kraftwire, "--alter", "--topic", "tools-topics", "--partitions", "4")
    assert out == ""
    out = kafka(TOPICS, kraftwire, "--describe", "--topic", "tools-topics")
    lines = out.splitlines()
    # TopicCommand lists every config not at its static default: min.insync.replicas is the cluster-level
    # value eligible leader replicas need (on at the default metadata.version)
    assert re.fullmatch(r"Topic: tools-topics\tTopicId: \S{22}\tPartitionCount: 4\tReplicationFactor: 2\t"
                        r"Configs: min.insync.replicas=1,retention.ms=3600000", lines[0]), lines[0]
    # Kafka's TopicCommand asks DescribeTopicPartitions (key 75) for the ELR where the cluster serves it,
    # and prints N/A when it had to fall back to Metadata, which carries no ELR.
    elr = "" if serves(kraftwire, DESCRIBE_TOPIC_PARTITIONS) else "N/A"
    assigned = replicas(kraftwire, "tools-topics")
    assert assigned[0] == [1, 2] and assigned[1] == [2, 3] and assigned[2] == [3, 1] and len(assigned[3]) == 2
    for partition, line in enumerate(lines[1:]):
        shown = ",".join(map(str, assigned[partition]))
        assert line == (f"\tTopic: tools-topics\tPartition: {partition}\tLeader: {assigned[partition][0]}\t"
                        f"Replicas: {shown}\tIsr: {shown}\tElr: {elr}\tLastKnownElr: {elr}"), line
    assert len(lines) == 5

    out = kafka(TOPICS, kraftwire, "--create", "--topic", "tools-topics", "--partitions", "1", expect=1)
    assert "TopicExistsException: Topic 'tools-topics' already exists." in out
    out = kafka(TOPICS, kraftwire, "--alter", "--topic", "tools-topics", "--partitions", "2", expect=1)
    assert ("Error while executing topic command : The topic tools-topics currently has 4 partition(s); "
            "2 would not be an increase.") in out
    assert "tools-topics" in kafka(TOPICS, kraftwire, "--list").splitlines()


def test_configs_describe_and_alter_brokers_and_topics(kraftwire):
    kafka(TOPICS, kraftwire, "--create", "--topic", "tools-configs", "--partitions", "1", "--replication-factor", "3")
    out = kafka(CONFIGS, kraftwire, "--alter", "--entity-type", "topics", "--entity-name", "tools-configs",
                "--add-config", "retention.ms=1000,cleanup.policy=[compact,delete]")
    assert out == "Completed updating config for topic tools-configs.\n"
    out = kafka(CONFIGS, kraftwire, "--describe", "--entity-type", "topics", "--entity-name", "tools-configs")
    assert out.splitlines() == [
        "Dynamic configs for topic tools-configs are:",
        "  cleanup.policy=compact,delete sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,delete, "
        "DEFAULT_CONFIG:log.cleanup.policy=delete}",
        "  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000}"]
    kafka(CONFIGS, kraftwire, "--alter", "--entity-type", "topics", "--entity-name", "tools-configs",
          "--delete-config", "retention.ms")
    assert dynamic_configs(kraftwire, "topics", "tools-configs") == {
        "tools-configs": {"cleanup.policy": "compact,delete"}}

    out = kafka(CONFIGS, kraftwire, "--alter", "--entity-type", "brokers", "--entity-name", "2",
                "--add-config", "leader.replication.throttled.rate=7000000")
    assert out == "Completed updating config for broker 2.\n"
    assert dynamic_configs(kraftwire, "brokers", "2") == {"2": {"leader.replication.throttled.rate": "7000000"}}
    kafka(CONFIGS, kraftwire, "--alter", "--entity-type", "brokers", "--entity-name", "2",
          "--delete-config", "leader.replication.throttled.rate")
    assert dynamic_configs(kraftwire, "brokers", "2") == {"2": {}}

    out = kafka(CONFIGS, kraftwire, "--alter", "--entity-type", "topics", "--entity-name", "tools-configs",
                "--add-config", "retention.ms=soon", expect=1)
    assert "Invalid value soon for configuration retention.ms: Not a number of type LONG" in out
    out = kafka(CONFIGS, kraftwire, "--describe", "--entity-type", "topics", "--entity-name", "no-such-topic")
    assert out == "The topic 'no-such-topic' doesn't exist and doesn't have dynamic config.\n"


def test_log_dirs_describe(kraftwire):
    kafka(TOPICS, kraftwire, "--create", "--topic", "tools-dirs", "--replica-assignment", "1:2")
    out = kafka(LOG_DIRS, kraftwire, "--describe", "--topic-list", "tools-dirs")
    header, brokers_line, document = out.splitlines()
    assert header == "Querying brokers for log directories information"
    assert brokers_line == "Received log directory information from brokers 1,2,3"
    described = json.loads(document)
    assert described["version"] == 1
    places = {}
    for broker in described["brokers"]:
        expected_dirs = kraftwire.call(lambda b=broker["broker"]: [
            str(d.path) for d in kraftwire.cluster.broker(b).log_manager.directories])
        assert sorted(d["logDir"] for d in broker["logDirs"]) == sorted(expected_dirs)
        for directory in broker["logDirs"]:
            assert directory["error"] is None
            for partition in directory["partitions"]:
                assert partition["isFuture"] is False and partition["offsetLag"] == 0
                places[broker["broker"]] = partition["partition"]
    assert places == {1: "tools-dirs-0", 2: "tools-dirs-0"}


def test_metadata_quorum_status_and_replication(kraftwire):
    controller = kraftwire.call(lambda: kraftwire.cluster.controller.node_id)
    status = dict(line.split(":", 1) for line in
                  kafka(METADATA_QUORUM, kraftwire, "describe", "--status").splitlines())
    status = {k: v.strip() for k, v in status.items()}
    assert status["ClusterId"] == kraftwire.call(lambda: kraftwire.cluster.controller.cluster_id)
    assert status["LeaderId"] == str(controller)
    assert int(status["HighWatermark"]) > 0 and status["MaxFollowerLag"].isdigit()
    assert json.loads(status["CurrentVoters"])[0]["id"] == controller
    assert sorted(o["id"] for o in json.loads(status["CurrentObservers"])) == [1, 2, 3]

    rows = [line.split() for line in
            kafka(METADATA_QUORUM, kraftwire, "describe", "--replication").splitlines()]
    assert rows[0] == ["NodeId", "DirectoryId", "LogEndOffset", "Lag", "LastFetchTimestamp",
                       "LastCaughtUpTimestamp", "Status"]
    by_node = {int(row[0]): row for row in rows[1:]}
    assert sorted(by_node) == sorted([controller, 1, 2, 3])
    assert by_node[controller][-1] == "Leader"
    assert {by_node[n][-1] for n in (1, 2, 3)} == {"Observer"}
    directories = kraftwire.call(lambda: {b.broker_id: kafka_uuid(b.log_dirs[0]) for b in kraftwire.cluster.brokers})
    for broker_id in (1, 2, 3):  # each broker fetches the log itself, with its first log directory's id
        assert by_node[broker_id][1] == directories[broker_id]
        assert int(by_node[broker_id][2]) > 0 and int(by_node[broker_id][3]) >= 0


def verify(bg, plan_file):
    return kafka(REASSIGN_PARTITIONS, bg, "--verify", "--reassignment-json-file", plan_file)


def verify_until_done(bg, plan_file, deadline_seconds=120):
    deadline = time.monotonic() + deadline_seconds
    while "still in progress" in (out := verify(bg, plan_file)):
        assert time.monotonic() < deadline, out
    return out


def test_reassign_generate_execute_throttled_verify(kraftwire, tmp_path):
    kafka(TOPICS, kraftwire, "--create", "--topic", "tools-move", "--replica-assignment", "1:2,2:3")
    topics = write_json(tmp_path, "topics.json", {"version": 1, "topics": [{"topic": "tools-move"}]})
    out = kafka(REASSIGN_PARTITIONS, kraftwire, "--generate", "--topics-to-move-json-file", topics,
                "--broker-list", "1,2,3")
    lines = out.splitlines()
    assert lines[0] == "Current partition replica assignment" and lines[3] == "Proposed partition reassignment configuration"
    current, proposed = json.loads(lines[1]), json.loads(lines[4])
    assert [(p["partition"], p["replicas"]) for p in current["partitions"]] == [(0, [1, 2]), (1, [2, 3])]
    assert all(len(p["log_dirs"]) == 2 and p["log_dirs"][0].startswith("/") for p in current["partitions"])
    assert [p["partition"] for p in proposed["partitions"]] == [0, 1]
    assert all(len(set(p["replicas"])) == 2 and set(p["replicas"]) <= {1, 2, 3} and p["log_dirs"] == ["any", "any"]
               for p in proposed["partitions"])

    # A plan of our own, so that each partition gains a replica (the generated one may keep some).
    plan = write_json(tmp_path, "plan.json", {"version": 1, "partitions": [
        {"topic": "tools-move", "partition": 0, "replicas": [3, 1]},
        {"topic": "tools-move", "partition": 1, "replicas": [1, 2]}]})
    # Held where it stands until the first --verify has seen it in progress.
    kraftwire.run(kraftwire.cluster.pause_replication(3))
    kraftwire.run(kraftwire.cluster.pause_replication(1))
    try:
        out = kafka(REASSIGN_PARTITIONS, kraftwire, "--execute", "--reassignment-json-file", plan,
                    "--throttle", "50000000", "--replica-alter-log-dirs-throttle", "60000000")
        assert "The inter-broker throttle limit was set to 50000000 B/s" in out
        assert "The replica-alter-dir throttle limit was set to 60000000 B/s" in out
        assert out.rstrip().endswith("Successfully started partition reassignments for tools-move-0,tools-move-1")
        rollback = json.loads(out.splitlines()[2])
        assert [(p["partition"], p["replicas"]) for p in rollback["partitions"]] == [(0, [1, 2]), (1, [2, 3])]

        throttled = dynamic_configs(kraftwire, "brokers")
        for broker in ("1", "2", "3"):
            assert throttled[broker]["leader.replication.throttled.rate"] == "50000000"
            assert throttled[broker]["follower.replication.throttled.rate"] == "50000000"
        assert dynamic_configs(kraftwire, "topics", "tools-move")["tools-move"] == {
            "leader.replication.throttled.replicas": "0:1,0:2,1:2,1:3",
            "follower.replication.throttled.replicas": "0:3,1:1"}
        out = kafka(REASSIGN_PARTITIONS, kraftwire, "--list")
        assert out.splitlines() == ["Current partition reassignments:",
                                    "tools-move-0: replicas: 3,1,2. adding: 3. removing: 2.",
                                    "tools-move-1: replicas: 1,2,3. adding: 1. removing: 3."]
        out = verify(kraftwire, plan)
        assert out.splitlines() == ["Status of partition reassignment:",
                                    "Reassignment of partition tools-move-0 is still in progress.",
                                    "Reassignment of partition tools-move-1 is still in progress.", ""]
        assert dynamic_configs(kraftwire, "topics", "tools-move")["tools-move"], "throttles kept while moving"
    finally:
        kraftwire.run(kraftwire.cluster.resume_replication(1))
        kraftwire.run(kraftwire.cluster.resume_replication(3))

    out = verify_until_done(kraftwire, plan)
    assert out.splitlines() == ["Status of partition reassignment:",
                                "Reassignment of partition tools-move-0 is completed.",
                                "Reassignment of partition tools-move-1 is completed.",
                                "",
                                "Clearing broker-level throttles on brokers 1,2,3",
                                "Clearing topic-level throttles on topic tools-move"]
    assert replicas(kraftwire, "tools-move") == {0: [3, 1], 1: [1, 2]}
    assert dynamic_configs(kraftwire, "brokers") == {"1": {}, "2": {}, "3": {}}
    assert dynamic_configs(kraftwire, "topics", "tools-move") == {"tools-move": {}}


def test_reassign_cancel(kraftwire, tmp_path):
    kafka(TOPICS, kraftwire, "--create", "--topic", "tools-cancel", "--replica-assignment", "1:2")
    plan = write_json(tmp_path, "plan.json", {"version": 1, "partitions": [
        {"topic": "tools-cancel", "partition": 0, "replicas": [1, 3]}]})
    kraftwire.run(kraftwire.cluster.pause_replication(3))
    try:
        out = kafka(REASSIGN_PARTITIONS, kraftwire, "--execute", "--reassignment-json-file", plan,
                    "--throttle", "40000000")
        assert out.rstrip().endswith("Successfully started partition reassignment for tools-cancel-0")
        out = kafka(REASSIGN_PARTITIONS, kraftwire, "--cancel", "--reassignment-json-file", plan)
        assert out.startswith("Successfully cancelled partition reassignment for: tools-cancel-0\n")
        assert "Clearing broker-level throttles on brokers 1,2,3" in out
        assert "Clearing topic-level throttles on topic tools-cancel" in out
    finally:
        kraftwire.run(kraftwire.cluster.resume_replication(3))
    assert replicas(kraftwire, "tools-cancel") == {0: [1, 2]}
    assert kafka(REASSIGN_PARTITIONS, kraftwire, "--list") == "No partition reassignments found.\n"
    assert verify(kraftwire, plan).splitlines()[1] == (
        "There is no active reassignment of partition tools-cancel-0, but replica set is 1,2 rather than 1,3.")
    assert dynamic_configs(kraftwire, "brokers") == {"1": {}, "2": {}, "3": {}}
    assert dynamic_configs(kraftwire, "topics", "tools-cancel") == {"tools-cancel": {}}


def test_reassign_between_log_dirs(kraftwire, tmp_path):
    kafka(TOPICS, kraftwire, "--create", "--topic", "tools-jbod", "--replica-assignment", "1:2")
    listed = json.loads(kafka(LOG_DIRS, kraftwire, "--describe", "--broker-list", "1",
                              "--topic-list", "tools-jbod").splitlines()[-1])
    dirs = {d["logDir"]: [p["partition"] for p in d["partitions"]] for d in listed["brokers"][0]["logDirs"]}
    (source,) = [d for d, partitions in dirs.items() if partitions == ["tools-jbod-0"]]
    (target,) = [d for d in dirs if d != source]
    plan = write_json(tmp_path, "plan.json", {"version": 1, "partitions": [
        {"topic": "tools-jbod", "partition": 0, "replicas": [1, 2], "log_dirs": [target, "any"]}]})
    out = kafka(REASSIGN_PARTITIONS, kraftwire, "--execute", "--reassignment-json-file", plan,
                "--replica-alter-log-dirs-throttle", "80000000")
    assert "The replica-alter-dir throttle limit was set to 80000000 B/s" in out
    assert f"Successfully started moving log directory to {target} for replica tools-jbod-0 with broker 1" in out
    out = verify_until_done(kraftwire, plan)
    assert "Reassignment of partition tools-jbod-0 is completed." in out
    assert f"Reassignment of replica tools-jbod-0-1 completed successfully." in out
    listed = json.loads(kafka(LOG_DIRS, kraftwire, "--describe", "--broker-list", "1",
                              "--topic-list", "tools-jbod").splitlines()[-1])
    dirs = {d["logDir"]: [p["partition"] for p in d["partitions"]] for d in listed["brokers"][0]["logDirs"]}
    assert dirs == {target: ["tools-jbod-0"], source: []}
    assert dynamic_configs(kraftwire, "brokers") == {"1": {}, "2": {}, "3": {}}


FEATURES = "org.apache.kafka.tools.FeatureCommand"


def feature_lines(bg):
    """kafka-features describe, as ``{feature: (supported min, supported max, finalized level)}``."""
    shown = {}
    for line in kafka(FEATURES, bg, "describe").splitlines():
        fields = dict(re.findall(r"(\w+): (\S+)", line))
        shown[fields["Feature"]] = (fields["SupportedMinVersion"], fields["SupportedMaxVersion"],
                                    fields["FinalizedVersionLevel"])
    return shown


def test_features_describe_and_dry_runs(kraftwire):
    """kafka-features against kraftwire prints what it prints against Kafka 4.3.1: the release's newest
    metadata.version as the supported maximum, and Kafka's answers to dry runs and refusals."""
    shown = feature_lines(kraftwire)
    assert shown["metadata.version"] == ("3.3-IV3", "4.3-IV0", "4.3-IV0")
    assert shown["eligible.leader.replicas.version"] == ("0", "1", "1")
    assert kafka(FEATURES, kraftwire, "upgrade", "--metadata", "4.3", "--dry-run").splitlines()[-1] == \
        "metadata.version can be upgraded to 30."
    out = kafka(FEATURES, kraftwire, "upgrade", "--metadata", "4.4-IV0", "--dry-run", expect=1)
    assert ("Can not upgrade metadata.version to 31. The update failed for all features since the following "
            "feature had an error: Invalid update version 31 for feature metadata.version. Local controller "
            f"{CONTROLLER_NODE_ID} only supports versions 7-30") in out
    out = kafka(FEATURES, kraftwire, "downgrade", "--metadata", "4.2-IV1", "--dry-run", expect=1)
    assert ("Can not downgrade metadata.version to 29. The update failed for all features since the following "
            "feature had an error: Unsupported metadata.version downgrade from 30 to 29. Refusing to perform the "
            "requested downgrade because it might delete metadata information.") in out
    assert kafka(FEATURES, kraftwire, "disable", "--feature", "eligible.leader.replicas.version", "--dry-run") == \
        "eligible.leader.replicas.version can be disabled.\n"
    out = kafka(FEATURES, kraftwire, "upgrade", "--feature", "no.such=1", "--dry-run", expect=1)
    assert f"Local controller {CONTROLLER_NODE_ID} does not support this feature." in out
    assert feature_lines(kraftwire)["eligible.leader.replicas.version"][2] == "1"  # the dry run changed nothing


def test_features_upgrade_and_downgrade():
    """A real upgrade of metadata.version and a downgrade across levels that did not change the metadata,
    each written and then shown by describe; turning eligible leader replicas on writes the cluster's
    min.insync.replicas first, as Kafka does."""
    with BackgroundCluster(brokers=1, metadata_version="4.0-IV3") as bg:
        assert feature_lines(bg)["metadata.version"] == ("3.3-IV3", "4.3-IV0", "4.0-IV3")
        assert kafka(FEATURES, bg, "upgrade", "--metadata", "4.2-IV1").splitlines()[-1] == \
            "metadata.version was upgraded to 29."
        assert kafka(FEATURES, bg, "downgrade", "--metadata", "4.1-IV0").splitlines()[-1] == \
            "metadata.version was downgraded to 26."
        assert kafka(FEATURES, bg, "upgrade", "--feature", "eligible.leader.replicas.version=1") == \
            "eligible.leader.replicas.version was upgraded to 1.\n"
        shown = feature_lines(bg)
        assert shown["metadata.version"][2] == "4.1-IV0" and shown["eligible.leader.replicas.version"][2] == "1"
        assert bg.call(lambda: bg.cluster.controller.committed.broker_configs("")) == {"min.insync.replicas": "1"}


def test_configs_broker_loggers_describe_and_alter(kraftwire):
    """kafka-configs --entity-type broker-loggers over a broker's real Python loggers: described with their
    levels in log4j's names, altered (the process's logger changes), an unknown one refused as by Kafka."""
    import logging
    logger = logging.getLogger("kraftwire.controller")
    before = logger.level
    try:
        out = kafka(CONFIGS, kraftwire, "--describe", "--entity-type", "broker-loggers", "--entity-name", "1")
        assert out.splitlines()[0] == "Dynamic configs for broker-logger 1 are:"
        shown = dict(line.split()[0].split("=", 1) for line in out.splitlines()[1:])
        assert "root" in shown and "kraftwire.controller" in shown
        assert kafka(CONFIGS, kraftwire, "--alter", "--entity-type", "broker-loggers", "--entity-name", "1",
                     "--add-config", "kraftwire.controller=TRACE") == \
            "Completed updating config for broker-logger 1.\n"
        assert logger.level == 5
        out = kafka(CONFIGS, kraftwire, "--describe", "--entity-type", "broker-loggers", "--entity-name", "1")
        assert "  kraftwire.controller=TRACE sensitive=false synonyms={}" in out.splitlines()
        kafka(CONFIGS, kraftwire, "--alter", "--entity-type", "broker-loggers", "--entity-name", "1",
              "--delete-config", "kraftwire.controller")
        assert logger.level == logging.NOTSET
        out = kafka(CONFIGS, kraftwire, "--alter", "--entity-type", "broker-loggers", "--entity-name", "1",
                    "--add-config", "kafka.controller=DEBUG", expect=1)
        assert "Invalid broker logger(s): kafka.controller" in out  # the tool checks the described list first
    finally:
        logger.setLevel(before)
