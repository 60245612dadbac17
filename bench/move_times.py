"""Simulated move times against durations computed here, independently of the simulator.

Each scenario sets up partitions, broker bandwidths and throttles in an in-process ``Cluster`` with the
virtual clock (simulated time moves only from one copy's end to the next, so the machine's load does
not enter the figures), starts its moves with one AlterPartitionReassignments decision, optionally
changes a throttle part-way, and records the simulated time at which each partition stops
reassigning. The expected times come from this file's own fluid model: rates by progressive filling
(every unfrozen flow's rate grows alike until a link or throttle is full; its flows freeze; repeat),
advanced from one flow's end to the next. The simulator (server/broker/replication_network.py) finds
max-min fair rates by another algorithm, per class of copies; the scenarios have copies competing for
the same links, throttles above and below the bandwidth, on the leader's and the follower's side, and a
throttle changed mid-move. Goal: every partition within ±10 %.

Run: python bench/move_times.py
"""
from __future__ import annotations

import math
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import uvloop  # noqa: E402

from provenance import header  # noqa: E402
from kraftwire.codec import records as rec  # noqa: E402
from kraftwire.codec.constants import ConfigResourceType  # noqa: E402
from kraftwire.codec.messages import AlterPartitionReassignmentsRequest as Alter  # noqa: E402
from kraftwire.server.controller.replication.reassignment import decide  # noqa: E402
from kraftwire.server.controller.result import ControllerResult  # noqa: E402
from kraftwire.server.host.cluster import Cluster  # noqa: E402
from kraftwire.server.metadata import configs  # noqa: E402

MiB = 1024 * 1024
BANDWIDTH = configs.DEFAULT_BROKER_BANDWIDTH


# --- the independent model ----------------------------------------------------------------------


def fill(flows: dict, capacity: dict) -> dict:
    """Progressive filling: flow -> rate, ``flows`` mapping each flow to the links it uses."""
    rate = {f: 0.0 for f in flows}
    frozen: set = set()
    left = dict(capacity)
    while len(frozen) < len(flows):
        active = {link: [f for f in flows if link in flows[f] and f not in frozen] for link in left}
        step = min(left[link] / len(fs) for link, fs in active.items() if fs)
        for f in flows:
            if f not in frozen:
                rate[f] += step
        for link, fs in active.items():
            left[link] -= step * len(fs)
        full = {link for link, fs in active.items() if fs and left[link] <= 1e-9 * capacity[link]}
        frozen |= {f for f in flows if f not in frozen and flows[f] & full}
    return rate


def expected_ends(moves: dict, links_of, capacity_at) -> dict:
    """Each move's end time: ``moves`` maps a name to its bytes; ``links_of(name)`` its links;
    ``capacity_at(t)`` the link capacities from time t on, and the next time they change (or inf)."""
    left, ends, now = dict(moves), {}, 0.0
    while left:
        capacity, change = capacity_at(now)
        rates = fill({m: links_of(m) for m in left}, capacity)
        step = min(min(left[m] / rates[m] for m in left if rates[m] > 0), change - now)
        now += step
        for m in list(left):
            left[m] -= rates[m] * step
            if left[m] <= 1e-6 * moves[m]:
                ends[m] = now
                del left[m]
    return ends


# --- the simulator ------------------------------------------------------------------------------


def config(resource_type, name: str, key: str, value: str):
    return rec.ConfigRecord(resource_type=resource_type, resource_name=name, name=key, value=value)


async def simulate(topics: dict, broker_configs: dict, moves: dict, change_at=None) -> dict:
    """``topics``: name -> (configs, {partition: leader}); ``moves``: (topic, partition) -> target
    replicas; ``change_at``: (simulated seconds, [ConfigRecord]) written then. Returns each move's end."""
    async with Cluster(brokers=4, virtual_clock=True) as cluster:
        def create(image):
            records = []
            for name, (topic_configs, leaders) in topics.items():
                topic_id = uuid.uuid4()
                records.append(rec.TopicRecord(name=name, topic_id=topic_id))
                records += [config(ConfigResourceType.TOPIC, name, k, v) for k, v in topic_configs.items()]
                records += [rec.PartitionRecord(partition_id=p, topic_id=topic_id, replicas=[leader], isr=[leader],
                                                leader=leader, leader_epoch=0, partition_epoch=0)
                            for p, leader in leaders.items()]
            records += [config(ConfigResourceType.BROKER, str(b), k, v) for b, kv in broker_configs.items()
                        for k, v in kv.items()]
            return ControllerResult(records)
        await cluster.controller.write(create)
        request = Alter(timeout_ms=60000, topics=[Alter.ReassignableTopic(name=name, partitions=[
            Alter.ReassignablePartition(partition_index=p, replicas=target)
            for (t, p), target in moves.items() if t == name]) for name in topics])
        await cluster.controller.write(lambda image: decide(image, request))
        network, ends = cluster.network, {}
        changed = change_at is None
        while len(ends) < len(moves):
            until = math.inf if changed else change_at[0]
            await cluster._quiesce(30)
            for (name, p) in moves:
                state = cluster.controller.committed.topics[cluster.controller.committed.topic_ids[name]].partitions[p]
                if (name, p) not in ends and not state.reassigning:
                    ends[(name, p)] = network.now()
            if len(ends) == len(moves):
                break
            if not network.run_next_timer(until):
                if changed:
                    raise RuntimeError("the moves cannot finish")
                network.move_clock_to(change_at[0])
                await cluster.controller.write(lambda image: ControllerResult(list(change_at[1])))
                changed = True
        return ends


# --- scenarios ----------------------------------------------------------------------------------


def scenarios():
    size = {"kraftwire.partition.size.bytes": str(300 * MiB)}
    throttled_leader = {**size, configs.LEADER_THROTTLED_REPLICAS: "*"}
    throttled_follower = {**size, configs.FOLLOWER_THROTTLED_REPLICAS: "*"}

    def links(plan, throttles):
        """plan: move -> (leader, follower, topic); throttles: (side, broker) -> topics it applies to."""
        def of(move):
            leader, follower, topic = plan[move]
            used = {("out", leader), ("in", follower)}
            for (side, broker), topics_ in throttles.items():
                if topic in topics_ and broker == (leader if side == "leader" else follower):
                    used.add((side, broker))
            return frozenset(used)
        return of

    def bandwidth(extra):
        base = {(d, b): float(BANDWIDTH) for d in ("out", "in") for b in range(1, 5)}
        return {**base, **extra}

    # 1. Five moves compete: three leave broker 1 for broker 2, one 1 -> 3, one 4 -> 2.
    plan = {("a", 0): (1, 2, "a"), ("a", 1): (1, 2, "a"), ("a", 2): (1, 2, "a"), ("a", 3): (1, 3, "a"),
            ("a", 4): (4, 2, "a")}
    yield ("competing for links, no throttle", {"a": (size, {0: 1, 1: 1, 2: 1, 3: 1, 4: 4})}, {},
           {("a", 0): [2], ("a", 1): [2], ("a", 2): [2], ("a", 3): [3], ("a", 4): [2]}, None,
           links(plan, {}), lambda t: (bandwidth({}), math.inf), plan)

    # 2. A leader throttle below the bandwidth on broker 1 for topic t, beside an unthrottled topic u.
    plan = {("t", 0): (1, 2, "t"), ("t", 1): (1, 3, "t"), ("u", 0): (1, 2, "u")}
    rate = 40 * MiB
    yield ("leader throttle 40 MiB/s < bandwidth, beside an unthrottled move",
           {"t": (throttled_leader, {0: 1, 1: 1}), "u": (size, {0: 1})},
           {1: {configs.LEADER_THROTTLED_RATE: str(rate)}},
           {("t", 0): [2], ("t", 1): [3], ("u", 0): [2]}, None,
           links(plan, {("leader", 1): {"t"}}), lambda t: (bandwidth({("leader", 1): float(rate)}), math.inf), plan)

    # 3. Follower throttles on broker 2: one above the bandwidth (no effect), then one below it.
    for rate in (250 * MiB, 30 * MiB):
        plan = {("f", 0): (1, 2, "f"), ("f", 1): (3, 2, "f"), ("g", 0): (4, 2, "g")}
        yield (f"follower throttle {rate // MiB} MiB/s on broker 2",
               {"f": (throttled_follower, {0: 1, 1: 3}), "g": (size, {0: 4})},
               {2: {configs.FOLLOWER_THROTTLED_RATE: str(rate)}},
               {("f", 0): [2], ("f", 1): [2], ("g", 0): [2]}, None,
               links(plan, {("follower", 2): {"f"}}),
               (lambda r: lambda t: (bandwidth({("follower", 2): float(r)}), math.inf))(rate), plan)

    # 4. A leader throttle raised mid-move: 20 MiB/s, then 80 MiB/s from simulated second 10.
    plan = {("m", 0): (1, 2, "m"), ("m", 1): (1, 3, "m")}
    low, high, at = 20 * MiB, 80 * MiB, 10.0
    yield ("leader throttle 20 MiB/s raised to 80 MiB/s at 10 s",
           {"m": (throttled_leader, {0: 1, 1: 1})}, {1: {configs.LEADER_THROTTLED_RATE: str(low)}},
           {("m", 0): [2], ("m", 1): [3]},
           (at, [config(ConfigResourceType.BROKER, "1", configs.LEADER_THROTTLED_RATE, str(high))]),
           links(plan, {("leader", 1): {"m"}}),
           lambda t: (bandwidth({("leader", 1): float(low if t < at else high)}), at if t < at else math.inf), plan)


def main() -> int:
    header()
    worst = 0.0
    for name, topics, broker_configs, moves, change, links_of, capacity_at, plan in scenarios():
        simulated = uvloop.run(simulate(topics, broker_configs, moves, change))
        expected = expected_ends({m: 300.0 * MiB for m in moves}, links_of, capacity_at)
        print(f"{name}:")
        for move in moves:
            error = (simulated[move] - expected[move]) / expected[move] * 100
            worst = max(worst, abs(error))
            leader, follower, _ = plan[move]
            print(f"  {move[0]}-{move[1]} ({leader} -> {follower}): expected {expected[move]:7.2f} s, "
                  f"simulated {simulated[move]:7.2f} s, error {error:+.2f} %")
    print(f"largest error: {worst:.2f} % (goal: within 10 %)")
    return 0 if worst <= 10 else 1


if __name__ == "__main__":
    sys.exit(main())
