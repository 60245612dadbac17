"""bench/audit.py: the metadata-log audit, single process against Spark local[1] and local[2].

Generates (once; reused while the parameters match) a metadata log with the codec: 12 brokers, 100
topics x 100 partitions at RF 3, then churn as Kafka's controller would log it: ISR shrinks and
expands, preferred-leader elections, reassignments (throttled, completed, cancelled, superseded, some
changing the RF, some throttles left behind), brokers fenced and unfenced (their partitions' ISRs and
leaders change in one batch), NoOp records and leader changes, batched like a controller's group
commit into one 1 GiB-segment-sized log with its .index. Then times, each in a fresh process:

* ``local``: audit.local, the single-process replay writing the same tables;
* ``spark local[1]`` and ``spark local[2]``: audit.job (session start reported apart);
* with ``--master spark://HOST:PORT`` (and ``--executor-env``), the Spark job on that cluster;
* with ``--compare-paths``, ``arrow local[2]``: the same replay over a DataFrame path (a Spark Python
  data source yielding Arrow batches, repartition + sortWithinPartitions + mapInArrow), to compare
  with the pickled-RDD path audit.job uses.

    python bench/audit.py                       # 5,000,000 records
    python bench/audit.py --records 1000000 --compare-paths
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from provenance import header  # noqa: E402
from kraftwire.audit.logwriter import LogWriter  # noqa: E402
from kraftwire.codec import records as rec  # noqa: E402
from kraftwire.codec.constants import ConfigResourceType, NO_LEADER  # noqa: E402

BROKERS = 12
TOPICS = 100
PARTITIONS_PER_TOPIC = 100
RF = 3
MAX_IN_FLIGHT = 400
RATE = "10485760"
SPARK_SETTINGS = {"spark.driver.memory": "2g", "spark.ui.showConsoleProgress": "false"}


def directory(broker: int, n: int) -> uuid.UUID:
    return uuid.UUID(int=(broker << 64) + 1000 + n)


class Partition:
    __slots__ = ("topic_id", "topic", "index", "replicas", "isr", "leader", "adding", "removing", "dirs")

    def __init__(self, topic_id, topic, index, replicas):
        self.topic_id, self.topic, self.index = topic_id, topic, index
        self.replicas, self.isr, self.leader = list(replicas), list(replicas), replicas[0]
        self.adding, self.removing = [], []
        self.dirs = [directory(b, index % 2) for b in replicas]


class Bag:
    """A set with O(1) add, remove and random choice."""

    def __init__(self):
        self.items: list[int] = []
        self.where: dict[int, int] = {}

    def add(self, item: int) -> None:
        if item not in self.where:
            self.where[item] = len(self.items)
            self.items.append(item)

    def discard(self, item: int) -> None:
        i = self.where.pop(item, None)
        if i is not None:
            last = self.items.pop()
            if i < len(self.items):
                self.items[i] = last
                self.where[last] = i

    def __contains__(self, item: int) -> bool:
        return item in self.where

    def __len__(self) -> int:
        return len(self.items)


class Churn:
    """Writes records as events; events are grouped into batches the way a controller commits them."""

    def __init__(self, writer: LogWriter, records: int, seed: int = 7):
        self.w = writer
        self.target = records
        self.rng = random.Random(seed)
        self.clock = 1_767_225_600_000
        self.epoch = 1
        self.pending: list = []
        self.batch_target = 1
        self.written = 0
        self.fenced: set[int] = set()
        self.in_flight: dict[int, tuple] = {}  # partition number -> (throttled?, time its data is copied)
        self.moving = Bag()  # the keys of in_flight
        self.lagging = Bag()  # partitions not reassigning with replicas out of the ISR
        self.followups: list = []  # throttle removals due after a completion
        self.partitions: list[Partition] = []

    # --- output ------------------------------------------------------------------------------------

    def emit(self, *records) -> None:
        self.pending.extend(records)
        if len(self.pending) >= self.batch_target:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        self.clock += self.rng.randint(20, 500)
        self.w.append(rec.metadata_batch(self.w.next_offset, self.epoch, self.clock,
                                         [(r, None) for r in self.pending]))
        self.written += len(self.pending)
        self.pending = []
        self.batch_target = self.rng.randint(1, 40)

    def change(self, p: Partition, **fields) -> rec.PartitionChangeRecord:
        return rec.PartitionChangeRecord(partition_id=p.index, topic_id=p.topic_id, **fields)

    # --- the cluster -------------------------------------------------------------------------------

    def setup(self) -> None:
        self.w.control(self.clock, [rec.LeaderChangeMessage(version=0, leader_id=3000, voters=[], granting_voters=[])],
                       epoch=self.epoch)
        for b in range(1, BROKERS + 1):
            self.emit(rec.RegisterBrokerRecord(broker_id=b, broker_epoch=b, incarnation_id=uuid.UUID(int=b),
                                               fenced=False, log_dirs=[directory(b, 0), directory(b, 1)]))
        self.flush()
        for t in range(TOPICS):
            topic_id = uuid.UUID(int=self.rng.getrandbits(128))
            name = f"topic-{t:03d}"
            self.emit(rec.TopicRecord(name=name, topic_id=topic_id))
            for i in range(PARTITIONS_PER_TOPIC):
                replicas = self.rng.sample(range(1, BROKERS + 1), RF)
                p = Partition(topic_id, name, i, replicas)
                self.partitions.append(p)
                self.emit(rec.PartitionRecord(partition_id=i, topic_id=topic_id, replicas=replicas, isr=replicas,
                                              leader=replicas[0], leader_epoch=0, partition_epoch=0,
                                              directories=p.dirs))
            self.flush()

    def run(self) -> None:
        self.setup()
        actions = [(self.isr_flap, 50), (self.elect_preferred, 5), (self.start_reassignment, 8),
                   (self.progress_reassignment, 22), (self.cancel_reassignment, 1), (self.supersede, 0.5)]
        functions, weights = zip(*actions)
        next_fence, next_noop, next_epoch = 250_000, 500, 1_000_000
        while self.written < self.target:
            self.rng.choices(functions, weights)[0]()
            if self.followups and self.rng.random() < 0.2:
                self.emit(*self.followups.pop(0))
            if self.written >= next_noop:
                self.emit(rec.NoOpRecord())
                next_noop += 500
            if self.written >= next_fence:
                self.fence_or_unfence()
                next_fence += 125_000
            if self.written >= next_epoch:
                self.flush()
                self.epoch += 1
                self.w.control(self.clock, [rec.LeaderChangeMessage(version=0, leader_id=3000, voters=[],
                                                                    granting_voters=[])], epoch=self.epoch)
                next_epoch += 1_000_000
        self.flush()

    def pick(self, reassigning: bool = False) -> tuple[int, Partition]:
        if reassigning:
            n = self.rng.choice(self.moving.items)
        else:
            n = self.rng.randrange(len(self.partitions))
            while n in self.in_flight:
                n = self.rng.randrange(len(self.partitions))
        return n, self.partitions[n]

    def settle(self, n: int, p: Partition) -> None:
        """Track whether a partition that is not reassigning lags."""
        if len(p.isr) < len(p.replicas) and n not in self.in_flight:
            self.lagging.add(n)
        else:
            self.lagging.discard(n)

    def leader_for(self, replicas, isr, current) -> int:
        if current in isr and current in replicas and current not in self.fenced:
            return current
        return next((b for b in replicas if b in isr and b not in self.fenced), -1)

    def isr_flap(self) -> None:
        """A follower falls out of the ISR, or (mostly) one that lags catches up."""
        if len(self.lagging) and self.rng.random() < 0.9:
            n = self.rng.choice(self.lagging.items)
            p = self.partitions[n]
            missing = [b for b in p.replicas if b not in p.isr and b not in self.fenced]
            if missing:
                p.isr = p.isr + [self.rng.choice(missing)]
                fields = {"isr": p.isr}
                if p.leader == NO_LEADER:
                    p.leader = fields["leader"] = self.leader_for(p.replicas, p.isr, -1)
                self.emit(self.change(p, **fields))
                self.settle(n, p)
            return
        n, p = self.pick()
        followers = [b for b in p.isr if b != p.leader] if p.leader != NO_LEADER else []
        if len(p.isr) == len(p.replicas) and followers:
            p.isr = [b for b in p.isr if b != self.rng.choice(followers)]
            self.emit(self.change(p, isr=p.isr))
            self.settle(n, p)

    def elect_preferred(self) -> None:
        _, p = self.pick()
        first = p.replicas[0]
        if p.leader != first and first in p.isr and first not in self.fenced:
            p.leader = first
            self.emit(self.change(p, leader=first))

    def start_reassignment(self) -> None:
        if len(self.in_flight) >= MAX_IN_FLIGHT:
            return
        n, p = self.pick()
        others = [b for b in range(1, BROKERS + 1) if b not in p.replicas]
        target = list(p.replicas)
        roll = self.rng.random()
        if len(target) > 2 and (roll < 0.05 or (len(target) > RF and roll < 0.5) or not others):
            target.remove(self.rng.choice([b for b in target if b != p.leader]))  # RF down: completes at once
        elif roll < 0.10 and len(target) <= RF:  # RF up
            target.append(self.rng.choice(others))
        else:
            target[self.rng.randrange(len(target))] = self.rng.choice(others)
        throttled = self.rng.random() < 0.3
        if throttled:
            self.emit(rec.ConfigRecord(resource_type=ConfigResourceType.TOPIC, resource_name=p.topic,
                                       name="leader.replication.throttled.replicas",
                                       value=",".join(f"{p.index}:{b}" for b in p.replicas)))
            for b in set(target) - set(p.replicas):
                self.emit(rec.ConfigRecord(resource_type=ConfigResourceType.BROKER, resource_name=str(b),
                                           name="follower.replication.throttled.rate", value=RATE))
        removing = sorted(set(p.replicas) - set(target))
        adding = sorted(set(target) - set(p.replicas))
        if not adding and all(b in p.isr for b in target):
            self.complete(n, p, target, [b for b in p.isr if b in target], throttled)
            return
        merged = target + removing
        p.dirs = [p.dirs[p.replicas.index(b)] if b in p.replicas else directory(b, n % 2) for b in merged]
        copy_ms = int(self.rng.lognormvariate(10.3, 1.0))  # data copy: median 30 s, a few take many minutes
        self.in_flight[n] = (throttled, self.clock + copy_ms)
        self.moving.add(n)
        self.lagging.discard(n)
        p.replicas, p.adding, p.removing = merged, adding, removing
        self.emit(self.change(p, replicas=merged, directories=p.dirs, adding_replicas=adding or None,
                              removing_replicas=removing or None))

    def progress_reassignment(self) -> None:
        if not self.in_flight:
            return
        n, p = self.pick(True)
        target = [b for b in p.replicas if b not in p.removing]
        waiting = [b for b in target if b not in p.isr and b not in self.fenced]
        if not waiting or self.clock < self.in_flight[n][1]:
            return
        isr = p.isr + [self.rng.choice(waiting)]
        in_sync = [b for b in isr if b not in p.removing]
        shrinking = len(p.adding) < len(p.removing)  # Kafka 4.3: then every remaining replica must be in sync
        if in_sync and all(b in in_sync for b in (target if shrinking else p.adding)):
            self.moving.discard(n)
            self.complete(n, p, target, in_sync, self.in_flight.pop(n)[0])
            return
        p.isr = isr
        self.emit(self.change(p, isr=isr))

    def complete(self, n: int, p: Partition, target, isr, throttled: bool) -> None:
        """The record that ends a reassignment (or is one, when it completes at once)."""
        added = list(p.adding)
        leader = self.leader_for(target, isr, p.leader)
        dropped = any(b not in target for b in p.replicas)
        fields = {"replicas": target, "isr": isr, "directories": [p.dirs[p.replicas.index(b)] for b in target]}
        if p.adding:
            fields["adding_replicas"] = []
        if p.removing:
            fields["removing_replicas"] = []
        if leader != p.leader or dropped:
            fields["leader"] = leader
        p.replicas, p.isr, p.leader, p.dirs, p.adding, p.removing = target, isr, leader, fields["directories"], [], []
        self.emit(self.change(p, **fields))
        self.settle(n, p)
        if throttled and self.rng.random() < 0.85:  # the rest are left behind
            self.followups.append(
                [rec.ConfigRecord(resource_type=ConfigResourceType.TOPIC, resource_name=p.topic,
                                  name="leader.replication.throttled.replicas", value=None)]
                + [rec.ConfigRecord(resource_type=ConfigResourceType.BROKER, resource_name=str(b),
                                    name="follower.replication.throttled.rate", value=None) for b in added])

    def cancel_reassignment(self) -> None:
        if not self.in_flight:
            return
        n, p = self.pick(True)
        self.in_flight.pop(n)
        self.moving.discard(n)
        replicas = [b for b in p.replicas if b not in p.adding]
        isr = [b for b in p.isr if b not in p.adding] or [replicas[0]]
        leader = self.leader_for(replicas, isr, p.leader)
        fields = {"replicas": replicas, "isr": isr, "leader": leader, "adding_replicas": [],
                  "directories": [p.dirs[p.replicas.index(b)] for b in replicas]}
        if p.removing:
            fields["removing_replicas"] = []
        p.replicas, p.isr, p.leader, p.dirs, p.adding, p.removing = replicas, isr, leader, fields["directories"], [], []
        self.emit(self.change(p, **fields))
        self.settle(n, p)

    def supersede(self) -> None:
        if not self.in_flight:
            return
        n, p = self.pick(True)
        current = [b for b in p.replicas if b not in p.adding]
        others = [b for b in range(1, BROKERS + 1) if b not in p.replicas]
        if not others:
            return
        target = list(current)
        target[self.rng.randrange(len(target))] = self.rng.choice(others)
        removing = sorted(set(p.replicas) - set(target))
        adding = sorted(set(target) - set(p.replicas))
        merged = target + removing
        p.dirs = [p.dirs[p.replicas.index(b)] if b in p.replicas else directory(b, n % 2) for b in merged]
        p.replicas, p.adding, p.removing = merged, adding, removing  # merged keeps every replica: ISR and leader stay
        self.emit(self.change(p, replicas=merged, directories=p.dirs, adding_replicas=adding,
                              removing_replicas=removing))

    def fence_or_unfence(self) -> None:
        self.flush()
        if self.fenced:
            broker = self.fenced.pop()
            self.emit(rec.BrokerRegistrationChangeRecord(broker_id=broker, broker_epoch=broker, fenced=-1))
            self.flush()
            return
        broker = self.rng.randrange(1, BROKERS + 1)
        self.fenced.add(broker)
        records = [rec.BrokerRegistrationChangeRecord(broker_id=broker, broker_epoch=broker, fenced=1)]
        for n, p in enumerate(self.partitions):
            if broker not in p.isr:
                continue
            isr = [b for b in p.isr if b != broker] or p.isr
            leader = self.leader_for(p.replicas, isr, -1 if p.leader == broker else p.leader)
            fields = {"isr": isr} if isr != p.isr else {}
            if leader != p.leader:
                fields["leader"] = leader
            if fields:
                p.isr, p.leader = isr, leader
                records.append(self.change(p, **fields))
                self.settle(n, p)
        self.pending.extend(records)
        self.flush()


def generate(log_dir: Path, records: int) -> dict:
    marker = log_dir / "bench.json"
    wanted = {"records": records, "brokers": BROKERS, "topics": TOPICS, "partitions": PARTITIONS_PER_TOPIC,
              "generator": 5}
    if marker.exists() and json.loads(marker.read_text()).get("wanted") == wanted:
        return json.loads(marker.read_text())
    shutil.rmtree(log_dir, ignore_errors=True)
    started = time.perf_counter()
    with LogWriter(log_dir) as writer:
        churn = Churn(writer, records)
        churn.run()
        end = writer.next_offset
    info = {"wanted": wanted, "records": end, "bytes": sum(p.stat().st_size for p in log_dir.glob("*.log")),
            "generate_s": round(time.perf_counter() - started, 1)}
    marker.write_text(json.dumps(info))
    return info


# --- measurements, each in a fresh process -----------------------------------------------------------


class TreeCpu:
    """CPU time (user + system) of a process and its descendants, sampled every 0.1 s: PySpark's
    daemon ignores SIGCHLD, so a finished Python worker's time reaches no parent's total and must be
    read while it lives (at most the last 0.1 s of each worker is missed)."""

    def __init__(self, root: int):
        self.root = root
        self.seen: dict[int, int] = {}  # pid -> clock ticks
        self.stop = threading.Event()
        self.sample()
        self.start = sum(self.seen.values())
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def sample(self) -> None:
        stats = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                stats[int(entry)] = (int(fields[1]), int(fields[11]) + int(fields[12]))  # ppid, utime + stime
        children: dict[int, list] = {}
        for pid, (ppid, _) in stats.items():
            children.setdefault(ppid, []).append(pid)
        todo = [self.root]
        while todo:
            pid = todo.pop()
            if pid in stats:
                self.seen[pid] = max(self.seen.get(pid, 0), stats[pid][1])
            todo.extend(children.get(pid, ()))

    def run(self) -> None:
        while not self.stop.wait(0.1):
            self.sample()

    def seconds(self) -> float:
        self.stop.set()
        self.thread.join()
        self.sample()
        return (sum(self.seen.values()) - self.start) / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


def measure(kind: str, log_dir: str, out: str, split_mib: float, executor_env: str | None = None) -> dict:
    from kraftwire.audit import job, local

    split_bytes = int(split_mib * (1 << 20))
    if kind == "local":
        started, cpu = time.perf_counter(), own_cpu_seconds()
        result = local.run([log_dir], out, split_bytes=split_bytes)
        return {"run_s": time.perf_counter() - started, "cpu_s": own_cpu_seconds() - cpu, "rows": result.counts}
    path, master = kind.split(":", 1)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    started = time.perf_counter()
    spark = job.session(master, SPARK_SETTINGS, progress=False, executor_env=executor_env)
    spark.sparkContext.setLogLevel("ERROR")
    session_s = time.perf_counter() - started
    jvm = TreeCpu(spark.sparkContext._gateway.proc.pid)
    started, cpu = time.perf_counter(), own_cpu_seconds()
    if path == "spark":
        counts = job.run(spark, [log_dir], out, split_bytes=split_bytes).counts
    else:
        from arrow_path import run_arrow

        counts = run_arrow(spark, [log_dir], out, split_bytes)
    run_s = time.perf_counter() - started
    cpu_s = own_cpu_seconds() - cpu + jvm.seconds()
    spark.stop()
    return {"session_s": session_s, "run_s": run_s, "cpu_s": cpu_s, "rows": counts}


def run_measurement(kind: str, args) -> dict:
    out = str(Path(args.work) / f"out-{kind.replace(':', '-').replace('[', '').replace(']', '').replace('/', '')}")
    command = [sys.executable, __file__, "--measure", kind, "--log-dir", str(args.log_dir), "--out", out,
               "--split-mib", str(args.split_mib)] + (["--executor-env", args.executor_env] if args.executor_env else [])
    try:
        done = subprocess.run(command, capture_output=True, text=True)
    finally:
        shutil.rmtree(out, ignore_errors=True)  # the tables (GBs for 5M records); their row counts are kept
    if done.returncode != 0:
        sys.exit(f"{kind} failed:\n{done.stderr[-4000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["load"] = os.getloadavg()[0]  # other work on the machine competes for the same cores
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=5_000_000)
    parser.add_argument("--work", default="/tmp/kraftwire-bench-audit", help="log and outputs go here")
    parser.add_argument("--log-dir", default=None)
    parser.add_argument("--split-mib", type=float, default=16)
    parser.add_argument("--compare-paths", action="store_true", help="also time the Arrow/DataFrame path")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run the measurements this many times, in turn; the fastest run of each counts")
    parser.add_argument("--master", action="append", default=[],
                        help="also time a running cluster, e.g. spark://HOST:PORT (repeatable; audit/README.md)")
    parser.add_argument("--executor-env", default=None, help="the cluster executors' pack-env archive")
    parser.add_argument("--measure", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--remove-log", action="store_true",
                        help="remove the generated log at the end too (by default it stays for the next run)")
    args = parser.parse_args()
    args.log_dir = Path(args.log_dir or Path(args.work) / f"log-{args.records}" / "__cluster_metadata-0")
    if args.measure:
        print(json.dumps(measure(args.measure, str(args.log_dir), args.out, args.split_mib, args.executor_env)))
        return 0

    header()
    info = generate(args.log_dir, args.records)
    print(f"log: {info['records']:,} records, {info['bytes'] / 2**20:.0f} MiB in {args.log_dir} "
          f"(generated in {info['generate_s']} s)")
    kinds = ["local", "spark:local[1]", "spark:local[2]"] + (["arrow:local[2]"] if args.compare_paths else [])
    kinds += [f"spark:{master}" for master in args.master]
    results: dict[str, dict] = {}
    for round_ in range(1, args.repeat + 1):
        for kind in kinds:
            r = run_measurement(kind, args)
            session = f", session start {r['session_s']:.1f} s" if "session_s" in r else ""
            rate = info["records"] / r["run_s"] / 1000
            print(f"{kind:16} run {round_}: {r['run_s']:7.1f} s, {rate:4.0f} k records/s, {r['cpu_s']:6.1f} CPU s"
                  f"{session} (1-min load average after: {r['load']:.1f})", flush=True)
            if kind not in results or r["run_s"] < results[kind]["run_s"]:
                results[kind] = r
    reference = results["local"]["rows"]
    differing = [f"{kind} wrote {r['rows']} rows, local wrote {reference}" for kind, r in results.items()
                 if r["rows"] != reference]
    if differing:
        sys.exit("\n".join(differing))
    one, two, single = (results[k] for k in ("spark:local[1]", "spark:local[2]", "local"))
    print(f"fastest runs: local {single['run_s']:.1f} s, local[1] {one['run_s']:.1f} s, local[2] {two['run_s']:.1f} s")
    print(f"local[2] vs single process: {single['run_s'] / two['run_s']:.2f}x (goal >= 1.0); "
          f"local[2] vs local[1]: {one['run_s'] / two['run_s']:.2f}x (goal >= 1.6)")
    print(f"CPU time: local {single['cpu_s']:.1f} s, local[1] {one['cpu_s']:.1f} s, local[2] {two['cpu_s']:.1f} s "
          f"(local[2] on two free cores could take about {two['cpu_s'] / 2:.0f} s)")
    print(f"rows per table: {reference}")
    if args.remove_log:
        shutil.rmtree(Path(args.work), ignore_errors=True)
    else:
        print(f"the generated log stays in {args.log_dir.parent} for the next run (--remove-log removes it)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
