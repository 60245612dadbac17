"""``kraftwire rehearse``: a plan run on a twin of a described cluster on the virtual clock, through the
command (``cli.main``): Kafka's reassignment JSON, throttles set as kafka-reassign-partitions sets them
(over TCP, to the twin's brokers), the report's JSON and HTML, the exit code. The HTML is opened in
headless Chromium."""
import json
import shutil
import subprocess

import pytest

from kraftwire.server.host.cli import main

MB = 1_000_000


def one_topic(tmp_path, size, ingress=None, partitions=1, leader=1, factor=1, **extra):
    topic = {"name": "t", "partitions": partitions, "replication_factor": factor, "size_bytes": size,
             "assignment": {str(p): [leader + k for k in range(factor)] for p in range(partitions)}}
    if ingress is not None:
        topic["ingress_bytes_per_sec"] = ingress
    spec = tmp_path / "cluster.json"
    spec.write_text(json.dumps({"brokers": 3, "topics": [topic], **extra}))
    return spec


def plan(tmp_path, moves):
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "t", "partition": p, "replicas": r, "log_dirs": ["any"] * len(r)} for p, r in moves.items()]}))
    return path


def rehearse(tmp_path, *args):
    out = tmp_path / "report.json"
    code = main(["rehearse", *map(str, args), "--samples", "20", "--report-json", str(out),
                 "--report-html", str(tmp_path / "report.html")])
    return code, json.loads(out.read_text())


def kinds(report, level):
    return [f["kind"] for f in report["findings"] if f["level"] == level]


def test_a_throttle_below_the_ingress_never_completes(tmp_path):
    spec = one_topic(tmp_path, 100 * MB, ingress=2 * MB)
    code, report = rehearse(tmp_path, "--cluster-spec", spec, "--plan", plan(tmp_path, {0: [2]}),
                            "--throttle", 1 * MB)
    assert code == 1
    assert not report["completed"] and "never complete" in report["stopped_because"]
    [never] = [f for f in report["findings"] if f["kind"] == "move-never-completes"]
    assert never["level"] == "error" and never["partition"] == "t-0"
    assert "1000000 B/s below ingress 2000000 B/s" in never["reason"]
    assert report["moves"][0]["end"] is None and report["moves"][0]["never"] == never["reason"]
    assert "throttles-left-behind" in kinds(report, "warning")


def test_a_clean_plan_takes_bytes_over_throttle_less_ingress(tmp_path):
    size, throttle, ingress = 100 * MB, 1 * MB, 200_000
    spec = one_topic(tmp_path, size, ingress=ingress)
    code, report = rehearse(tmp_path, "--cluster-spec", spec, "--plan", plan(tmp_path, {0: [2]}),
                            "--throttle", throttle)
    model = size / (throttle - ingress)  # 125 s
    assert code == 0 and report["completed"]
    assert report["simulated_seconds"] == pytest.approx(model, rel=0.01)
    [move] = report["moves"]
    assert move["seconds"] == pytest.approx(model, rel=0.01) and move["from"] == [1] and move["to"] == [2]
    assert kinds(report, "error") == []
    # broker 2 received what broker 1 sent: the partition as it grew until the copy caught up
    received = report["brokers"]["2"]["bytes_in"][-1]
    assert received == pytest.approx(size + ingress * model, rel=0.01)
    assert report["brokers"]["1"]["bytes_out"][-1] == pytest.approx(received)


def test_a_directory_that_fills(tmp_path):
    spec = one_topic(tmp_path, 100 * MB, partitions=2)
    code, report = rehearse(tmp_path, "--cluster-spec", spec, "--plan", plan(tmp_path, {0: [2], 1: [2]}),
                            "--throttle", 10 * MB, "--log-dir-capacities", "2:0=150000000")
    assert code == 1
    [fills] = [f for f in report["findings"] if f["kind"] == "directory-fills"]
    assert fills["level"] == "error" and fills["directory"] == "2:0"
    directory = report["directories"]["2:0"]
    assert directory["full"] and not directory["online"] and directory["capacity_bytes"] == 150 * MB
    assert directory["peak_bytes"] == pytest.approx(150 * MB, rel=0.01)
    # two copies share broker 2's 10 MB/s follower throttle: 150 MB after 15 s
    assert 14 <= directory["peak_t"] <= 16
    assert "move-never-completes" in kinds(report, "error")


def test_throttles_outside_the_plan_and_on_a_down_broker(tmp_path):
    spec = one_topic(tmp_path, 10 * MB, broker_configs={"3": {"leader.replication.throttled.rate": "5"}},
                     down=[3])
    code, report = rehearse(tmp_path, "--cluster-spec", spec, "--plan", plan(tmp_path, {0: [2]}),
                            "--throttle", 10 * MB)
    warnings = kinds(report, "warning")
    assert "throttle-outside-plan" in warnings and "throttle-on-down-broker" in warnings
    assert code == 0 and report["completed"]


def test_bad_plans_get_an_answer(tmp_path, capsys):
    spec = one_topic(tmp_path, MB)
    bad = tmp_path / "bad.json"
    bad.write_text("{\"partitions\": 3}")
    assert main(["rehearse", "--cluster-spec", str(spec), "--plan", str(bad)]) == 2
    assert "not Kafka's reassignment JSON" in capsys.readouterr().err
    code, report = rehearse(tmp_path, "--cluster-spec", spec, "--plan", plan(tmp_path, {0: [7]}))
    assert code == 1
    [refused] = [f for f in report["findings"] if f["kind"] == "move-refused"]
    assert "error" in refused["message"]


def test_generate_spreads_over_the_broker_list(tmp_path):
    spec = one_topic(tmp_path, MB, partitions=6, factor=2)
    written = tmp_path / "proposed.json"
    code, report = rehearse(tmp_path, "--cluster-spec", spec, "--generate", "--broker-list", "2,3",
                            "--write-plan", written)
    proposed = json.loads(written.read_text())["partitions"]
    assert len(proposed) == 6 and all(sorted(p["replicas"]) == [2, 3] for p in proposed)
    assert code == 0 and report["completed"] and report["moves_completed"] == 6


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")
def test_the_html_report_renders_in_chromium(tmp_path):
    spec = one_topic(tmp_path, 100 * MB, partitions=2)
    code, report = rehearse(tmp_path, "--cluster-spec", spec, "--plan", plan(tmp_path, {0: [2], 1: [3]}),
                            "--throttle", 10 * MB, "--log-dir-capacity-bytes", 10 ** 12)
    page = tmp_path / "report.html"
    assert "http://" not in page.read_text().replace("http://www.w3.org/2000/svg", "")  # nothing fetched
    dom = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                          page.as_uri()], capture_output=True, text=True, timeout=120).stdout
    assert "Reassignment rehearsal" in dom and "simulated seconds" in dom
    assert dom.count('<svg class="chart') == 4  # in, out, directories, moves
    series = [line for line in dom.split("<polyline")[1:]]
    assert len(series) == 3 + 3 + 3  # a line per broker twice, per directory
    assert all('data-points="' in s and 'data-points="0"' not in s for s in series)
    assert dom.count('class="move"') == 2
    assert '<table id="findings">' in dom


def test_a_twin_of_a_metadata_log_with_its_sizes(tmp_path):
    from kafka.admin import KafkaAdminClient, NewTopic

    from kraftwire.server.host.cluster import BackgroundCluster
    from tests.wings.host.test_twin_rates import log_dirs_json

    with BackgroundCluster(brokers=2, data_dir=tmp_path / "source") as bg:
        admin = KafkaAdminClient(bootstrap_servers=bg.bootstrap)
        try:
            admin.create_topics([NewTopic("t", 2, 1)])
            [described] = admin.describe_topics(["t"])
        finally:
            admin.close()
    now = {p["partition_index"]: p["replica_nodes"] for p in described["partitions"]}
    sizes = tmp_path / "sizes.txt"
    sizes.write_text(log_dirs_json({0: 60 * MB, 1: 30 * MB}))
    moves = {0: [3 - now[0][0]]}  # to the other broker
    code, report = rehearse(tmp_path, "--from-log", tmp_path / "source", "--sizes", sizes,
                            "--plan", plan(tmp_path, moves), "--throttle", 2 * MB)
    assert code == 0 and report["completed"]
    assert report["simulated_seconds"] == pytest.approx(60 * MB / (2 * MB), rel=0.01)
