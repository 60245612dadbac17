"""GROUP config resources (type 32) side by side with a real Apache Kafka 4.3.1: DescribeConfigs of a
group (every config, its broker synonym and source), IncrementalAlterConfigs accepted and refused
(bounds from the broker configs, a value of the wrong type, an unknown name, APPEND to a config that is
not a list, an empty group name), a deletion, ListConfigResources of groups, and Kafka's own
``kafka-configs --entity-type groups`` (describe, --all, alter, a refused alter), compared answer by
answer and line by line."""
from __future__ import annotations

import time
import uuid

from apache_kafka import CONFIGS, run_tool
from kraftwire.codec.messages import DescribeConfigsRequest as Describe
from kraftwire.codec.messages import IncrementalAlterConfigsRequest as Alter
from kraftwire.codec.messages import ListConfigResourcesRequest
from raw_client import RawConnection

GROUP_TYPE = 32
SET, DELETE, APPEND = 0, 1, 2
CHANGES = [
    [("consumer.session.timeout.ms", "50000", SET)],
    [("consumer.session.timeout.ms", "5", SET)],
    [("consumer.session.timeout.ms", "abc", SET)],
    [("consumer.session.timeout.ms", "0", SET)],
    [("nope", "1", SET)],
    [("consumer.heartbeat.interval.ms", "60000", SET)],
    [("consumer.heartbeat.interval.ms", "5000", SET), ("consumer.session.timeout.ms", "45000", SET)],
    [("share.auto.offset.reset", "bogus", SET)],
    [("share.auto.offset.reset", "by_duration:PT1H", SET)],
    [("share.isolation.level", "read_committed", SET)],
    [("share.isolation.level", "serializable", SET)],
    [("share.renew.acknowledge.enable", "maybe", SET)],
    [("share.delivery.count.limit", "11", SET)],
    [("share.delivery.count.limit", "3", APPEND)],
    [("streams.num.standby.replicas", "3", SET)],
    [("consumer.assignment.interval.ms", "20000", SET)],
    [("consumer.session.timeout.ms", None, DELETE)],
]


def describe(conn: RawConnection, group: str, keys: list[str] | None = None) -> list:
    answer = conn.send(Describe(resources=[Describe.DescribeConfigsResource(
        resource_type=GROUP_TYPE, resource_name=group, configuration_keys=keys)], include_synonyms=True,
        include_documentation=False), 4)
    return [(r.error_code, r.error_message, sorted((c.name, c.value, c.read_only, c.config_source, c.is_sensitive,
                                                    c.config_type, [(s.name, s.value, s.source) for s in c.synonyms])
                                                   for c in r.configs)) for r in answer.results]


def alter(conn: RawConnection, group: str, changes) -> list:
    configs = [Alter.AlterableConfig(name=n, config_operation=op, value=v) for n, v, op in changes]
    answer = conn.send(Alter(resources=[Alter.AlterConfigsResource(resource_type=GROUP_TYPE, resource_name=group,
                                                                   configs=configs)], validate_only=False), 1)
    return [(r.error_code, r.error_message) for r in answer.responses]


def scenario(bootstrap: str) -> dict:
    group = f"cfg-{uuid.uuid4().hex[:8]}"
    seen: dict = {}
    with RawConnection(bootstrap.split(",")[0]) as conn:
        seen["describe fresh"] = describe(conn, "g")
        keys = ["consumer.session.timeout.ms", "share.isolation.level", "share.auto.offset.reset",
                "consumer.heartbeat.interval.ms"]
        before = describe(conn, group, keys)
        for i, changes in enumerate(CHANGES):
            seen[f"alter {i} {changes}"] = outcome = alter(conn, group, changes)
            deadline = time.monotonic() + 15
            # every accepted change here changes what is described; Kafka's broker describes from its
            # metadata cache, which the change reaches a moment after the answer
            while (after := describe(conn, group, keys)) == before and outcome == [(0, None)]:
                assert time.monotonic() < deadline, f"alter {i} never showed"
                time.sleep(0.05)
            seen[f"after {i}"] = before = after
        seen["empty name"] = alter(conn, "", [("consumer.session.timeout.ms", "50000", SET)])
        seen["describe empty name"] = describe(conn, "")
        listed = conn.send(ListConfigResourcesRequest(resource_types=[GROUP_TYPE]), 1)
        seen["listed"] = (listed.error_code, [(r.resource_name == group, r.resource_type)
                                              for r in listed.config_resources if r.resource_name == group])
    for args in (["--describe", "--entity-name", group], ["--describe", "--entity-name", group, "--all"],
                 ["--alter", "--entity-name", group, "--add-config", "share.delivery.count.limit=4"],
                 ["--alter", "--entity-name", group, "--add-config", "consumer.heartbeat.interval.ms=1"],
                 ["--alter", "--entity-name", group, "--delete-config", "share.isolation.level"],
                 ["--describe", "--entity-name", group]):
        done = run_tool(CONFIGS, "--bootstrap-server", bootstrap, "--entity-type", "groups", *args)
        caused = [line for line in done.stderr.splitlines() if line.startswith("Caused by")]
        seen[f"tool {args[:1] + args[3:]}"] = (done.returncode, done.stdout.replace(group, "G"), caused)
    return seen


def test_group_configs_answer_as_kafka_does(apache_kafka, kraftwire_clean_cluster):
    kafka = scenario(apache_kafka.bootstrap)
    ours = scenario(kraftwire_clean_cluster.bootstrap)
    differing = {k: (kafka[k], v) for k, v in ours.items() if v != kafka[k]}
    assert differing == {}
    assert len(kafka["describe fresh"][0][2]) == 17 and kafka["listed"] == (0, [(True, GROUP_TYPE)])
    assert kafka[f"alter 1 {CHANGES[1]}"][0][0] == 40 and kafka[f"alter 0 {CHANGES[0]}"] == [(0, None)]
