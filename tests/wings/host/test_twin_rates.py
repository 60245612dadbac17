"""A twin's produce rates, learnt from two ``kafka-log-dirs --describe`` snapshots taken some seconds
apart (``--sizes``, ``--sizes-later``, ``--sizes-interval``) or read from a file (``--rates``): they
become the topics' ``kraftwire.partition.ingress.rates``, which a client reads back, and the leaders'
logs grow by them on the virtual clock."""
import json

import pytest
from kafka.admin import ConfigResource, KafkaAdminClient, NewTopic

from kraftwire.server.host.cluster import BackgroundCluster

MiB = 1 << 20


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A kraftwire cluster's metadata log with topic t (2 partitions on broker 1), stopped."""
    root = tmp_path_factory.mktemp("rates-source")

    with BackgroundCluster(brokers=1, data_dir=root / "source") as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap)
        try:
            admin.create_topics([NewTopic("t", 2, 1)])
        finally:
            admin.close()
    (root / "earlier.json").write_text(log_dirs_json({0: 100 * MiB, 1: 50 * MiB}))
    (root / "later.json").write_text(log_dirs_json({0: 160 * MiB, 1: 40 * MiB}))  # 60 s later; t-1 shrank
    return root


def test_two_snapshots_some_seconds_apart_give_the_rates(source, tmp_path):
    with BackgroundCluster(from_log=source / "source", sizes=source / "earlier.json",
                           sizes_later=source / "later.json", sizes_interval_s=60, virtual_clock=True,
                           data_dir=tmp_path / "twin") as bg:
        assert ingress_rates(bg) == f"0:{MiB}"  # 60 MiB in 60 s; t-1 shrank: 0 B/s, not listed
        assert leader_sizes(bg) == {0: 100 * MiB, 1: 50 * MiB}
        bg.run(bg.cluster.advance(10))
        assert leader_sizes(bg) == {0: 110 * MiB, 1: 50 * MiB}


def test_a_file_of_rates_gives_them(source, tmp_path):
    rates = tmp_path / "rates.json"
    rates.write_text(json.dumps({"t": {"1": 2048}}))
    with BackgroundCluster(from_log=source / "source", sizes=source / "earlier.json", rates=rates,
                           virtual_clock=True, data_dir=tmp_path / "twin") as bg:
        assert ingress_rates(bg) == "1:2048"
    rates.write_text(json.dumps({"nope": 1}))
    with pytest.raises(Exception, match="the log has no topic 'nope'"):
        with BackgroundCluster(from_log=source / "source", rates=rates, data_dir=tmp_path / "again"):
            pass


def log_dirs_json(sizes: dict[int, int]) -> str:
    """What kafka-log-dirs --describe prints for broker 1 holding t-0 and t-1 at ``sizes``."""
    partitions = [{"partition": f"t-{p}", "size": size, "offsetLag": 0, "isFuture": False}
                  for p, size in sizes.items()]
    return ("Querying brokers for log directories information\nReceived log directory information from brokers 1\n"
            + json.dumps({"version": 1, "brokers": [{"broker": 1, "logDirs": [
                {"logDir": "/var/kafka", "error": None, "partitions": partitions}]}]}) + "\n")


def ingress_rates(bg) -> str | None:
    admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap)
    try:
        described = admin.describe_configs([ConfigResource("TOPIC", "t")])["topic"]["t"]
        return described["kraftwire.partition.ingress.rates"]["value"]
    finally:
        admin.close()


def leader_sizes(bg) -> dict[int, int]:
    [result] = bg.call(lambda: bg.cluster.broker(1).log_manager.describe(None))
    return {p.partition_index: p.partition_size for t in result.topics if t.name == "t" for p in t.partitions}
