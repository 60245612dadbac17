"""Replica placement: Kafka's own StripedReplicaPlacer test vectors, and its properties over many seeds."""

import random
from collections import Counter

import pytest

from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.server.controller.placement import place


class JavaMockRandom(random.Random):
    """The generator of Kafka's tests (MockRandom, a java.util.Random with a fixed LCG), so that
    Kafka's expected placements can be checked to the broker."""

    MASK = (1 << 64) - 1

    def __init__(self, state: int = 17):
        super().__init__(0)
        self.state = state

    def _next(self, bits: int) -> int:
        self.state = (self.state * 2862933555777941757 + 3037000493) & self.MASK
        return self.state >> (64 - bits)

    def randrange(self, bound):  # Random.nextInt(bound)
        value = self._next(31)
        if bound & (bound - 1) == 0:
            return (bound * value) >> 31
        while True:
            result = value % bound
            if value - result + bound - 1 < 1 << 31:  # no int overflow in Java
                return result
            value = self._next(31)

    def shuffle(self, items):  # Collections.shuffle(list, random)
        for size in range(len(items), 1, -1):
            other = self.randrange(size)
            items[size - 1], items[other] = items[other], items[size - 1]


# ---- Kafka's vectors (metadata/src/test/.../placement/StripedReplicaPlacerTest.java) ----------------

def test_avoids_the_fenced_broker_on_a_single_rack():
    brokers = [(3, None), (1, None), (0, None), (4, None), (2, None)]
    assert place(brokers, 0, 5, 4, JavaMockRandom(), fenced={1}) == [
        [3, 4, 0, 2], [4, 0, 2, 3], [0, 2, 3, 4], [2, 3, 4, 0], [0, 4, 3, 2]]


def test_uses_the_fenced_broker_when_it_must():
    brokers = [(3, None), (1, None), (2, None)]
    assert place(brokers, 0, 4, 3, JavaMockRandom(), fenced={1}) == [[3, 2, 1], [2, 3, 1], [3, 2, 1], [2, 3, 1]]


def test_stripes_over_racks():
    brokers = [(11, "1"), (10, "1"), (30, "3"), (31, "3"), (21, "2"), (20, "2")]
    assert place(brokers, 0, 3, 4, JavaMockRandom(), fenced={20}) == [
        [11, 21, 31, 10], [21, 30, 10, 20], [31, 11, 21, 30]]


def test_racks_with_only_fenced_brokers_give_followers_only():
    brokers = [(11, "1"), (10, "1"), (30, "3"), (31, "3"), (20, "2"), (21, "2"), (41, "4"), (40, "4")]
    assert place(brokers, 0, 3, 4, JavaMockRandom(), fenced={30, 31, 20, 21, 40}) == [
        [41, 11, 21, 30], [10, 20, 31, 41], [41, 21, 30, 11]]


def test_successful_placement():
    brokers = [(0, None), (3, None), (2, None), (1, None)]
    assert place(brokers, 0, 5, 3, JavaMockRandom()) == [[2, 3, 0], [3, 0, 1], [0, 1, 2], [1, 2, 3], [1, 0, 2]]


def test_single_unfenced_broker_takes_every_partition():
    assert place([(0, None), (1, None)], 0, 3, 1, JavaMockRandom(), fenced={1}) == [[0], [0], [0]]


def test_even_distribution_of_replica_pairs():
    assignments = place([(0, None), (1, None), (2, None), (3, None)], 0, 200, 2, JavaMockRandom())
    assert Counter(tuple(replicas) for replicas in assignments) == {
        (0, 1): 14, (0, 2): 22, (0, 3): 14, (1, 0): 17, (1, 2): 17, (1, 3): 16,
        (2, 0): 13, (2, 1): 17, (2, 3): 20, (3, 0): 20, (3, 1): 19, (3, 2): 11}


# ---- Errors --------------------------------------------------------------------------------------

def error_of(*args, **kwargs):
    with pytest.raises(KafkaError) as raised:
        place(*args, **kwargs)
    return raised.value.code, raised.value.message


THREE = [(1, None), (2, None), (3, None)]


@pytest.mark.parametrize("replication_factor", [0, -1, -2])
def test_non_positive_replication_factor(replication_factor):
    assert error_of(THREE, 0, 1, replication_factor, random.Random(0)) == (
        ErrorCode.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0, or -1 to use the default value.")


@pytest.mark.parametrize("num_partitions", [0, -3])
def test_non_positive_partition_count(num_partitions):
    assert error_of(THREE, 0, num_partitions, 1, random.Random(0)) == (
        ErrorCode.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value.")


def test_too_few_brokers_when_creating_a_topic():
    assert error_of(THREE, 0, 2, 4, random.Random(0)) == (
        ErrorCode.INVALID_REPLICATION_FACTOR,
        "Unable to replicate the partition 4 time(s): The target replication factor of 4 cannot be reached "
        "because only 3 broker(s) are registered or some brokers have all their log directories cordoned.")


def test_too_few_brokers_when_adding_partitions_gives_the_bare_reason():
    assert error_of(THREE, 5, 2, 4, random.Random(0)) == (
        ErrorCode.INVALID_REPLICATION_FACTOR,
        "The target replication factor of 4 cannot be reached because only 3 broker(s) are registered or "
        "some brokers have all their log directories cordoned.")


def test_fenced_brokers_count_as_registered():
    assert place(THREE, 0, 1, 3, random.Random(0), fenced={2, 3})[0][0] == 1


def test_all_brokers_fenced():
    assert error_of(THREE, 0, 1, 1, random.Random(0), fenced={1, 2, 3}) == (
        ErrorCode.INVALID_REPLICATION_FACTOR,
        "Unable to replicate the partition 1 time(s): All brokers are currently fenced, or have all their "
        "log directories cordoned.")
    assert error_of(THREE, 2, 1, 1, random.Random(0), fenced={1, 2, 3})[1] == (
        "All brokers are currently fenced, or have all their log directories cordoned.")


def test_all_fenced_is_reported_before_too_few():
    assert "All brokers are currently fenced" in error_of(THREE, 0, 1, 5, random.Random(0), fenced={1, 2, 3})[1]


def test_no_brokers_reads_as_all_fenced():
    assert "All brokers are currently fenced" in error_of([], 0, 1, 1, random.Random(0))[1]


# ---- Properties over many seeds -----------------------------------------------------------------

SEEDS = range(200)
NO_RACKS = [(broker, None) for broker in range(6)]
THREE_RACKS = [(broker, "rack-" + "abc"[broker % 3]) for broker in range(9)]
TWO_RACKS = [(broker, "ab"[broker % 2]) for broker in range(10, 16)]


@pytest.mark.parametrize("brokers", [NO_RACKS, THREE_RACKS, TWO_RACKS])
@pytest.mark.parametrize("replication_factor", [1, 2, 3, 5])
def test_every_partition_gets_distinct_known_brokers(brokers, replication_factor):
    known = {broker for broker, _ in brokers}
    for seed in SEEDS:
        for replicas in place(brokers, 0, 37, replication_factor, random.Random(seed)):
            assert len(replicas) == replication_factor
            assert len(set(replicas)) == replication_factor
            assert set(replicas) <= known


def test_same_seed_same_placement():
    assert place(THREE_RACKS, 0, 50, 3, random.Random(7)) == place(THREE_RACKS, 0, 50, 3, random.Random(7))
    assert place(THREE_RACKS, 0, 50, 3, random.Random(7)) != place(THREE_RACKS, 0, 50, 3, random.Random(8))


def test_partition_numbering_does_not_change_the_placement():
    assert place(NO_RACKS, 0, 9, 2, random.Random(3)) == place(NO_RACKS, 4, 9, 2, random.Random(3))


@pytest.mark.parametrize("replication_factor", [1, 2, 3, 6])
def test_single_rack_spreads_leaders_and_replicas_exactly(replication_factor):
    for seed in SEEDS:
        assignments = place(NO_RACKS, 0, 4 * len(NO_RACKS), replication_factor, random.Random(seed))
        assert Counter(replicas[0] for replicas in assignments) == {broker: 4 for broker, _ in NO_RACKS}
        replica_counts = Counter(broker for replicas in assignments for broker in replicas)
        assert replica_counts == {broker: 4 * replication_factor for broker, _ in NO_RACKS}


@pytest.mark.parametrize("brokers", [THREE_RACKS, TWO_RACKS])
@pytest.mark.parametrize("replication_factor", [1, 2, 3])
def test_racks_spread_leaders_and_replicas_evenly(brokers, replication_factor):
    rack_of = dict(brokers)
    racks = set(rack_of.values())
    for seed in SEEDS:
        assignments = place(brokers, 0, 10 * len(brokers), replication_factor, random.Random(seed))
        leaders_per_rack = Counter(rack_of[replicas[0]] for replicas in assignments)
        assert len(set(leaders_per_rack.values())) == 1 and leaders_per_rack.keys() == racks
        replica_counts = Counter(broker for replicas in assignments for broker in replicas)
        assert max(replica_counts.values()) - min(replica_counts.values()) <= 1


@pytest.mark.parametrize("brokers", [THREE_RACKS, TWO_RACKS])
@pytest.mark.parametrize("replication_factor", [2, 3, 4, 5])
def test_replicas_alternate_racks(brokers, replication_factor):
    """A partition uses as many racks as it can, each about equally often."""
    rack_of = dict(brokers)
    racks = set(rack_of.values())
    for seed in SEEDS:
        for replicas in place(brokers, 0, 20, replication_factor, random.Random(seed)):
            per_rack = Counter(rack_of[broker] for broker in replicas)
            assert len(per_rack) == min(replication_factor, len(racks))
            assert max(per_rack.values()) - min(per_rack.get(rack, 0) for rack in racks) <= 1


def test_leaders_are_even_on_average_across_seeds():
    """With as many replicas as racks a broker can lead several partitions in a row (Kafka's striping
    does the same), but no broker is favoured."""
    totals = Counter()
    for seed in SEEDS:
        totals.update(replicas[0] for replicas in place(THREE_RACKS, 0, 90, 3, random.Random(seed)))
    expected = 90 * len(SEEDS) / len(THREE_RACKS)
    assert all(abs(count - expected) < 0.1 * expected for count in totals.values())


def test_fenced_brokers_never_lead_and_are_used_only_when_needed():
    for seed in SEEDS:
        spare = place(NO_RACKS, 0, 30, 3, random.Random(seed), fenced={0, 4})
        assert all(0 not in replicas and 4 not in replicas for replicas in spare)
        needed = place(NO_RACKS, 0, 30, 6, random.Random(seed), fenced={0, 4})
        assert all(replicas[0] not in (0, 4) and set(replicas[-2:]) == {0, 4} for replicas in needed)


def test_unequal_racks_load_the_small_racks():
    """Rack spread outranks broker spread, as in Kafka: a lone broker in its rack joins most partitions."""
    brokers = [(0, "a"), (1, "a"), (2, "a"), (3, "b"), (4, "c")]
    for seed in SEEDS:
        counts = Counter(broker for replicas in place(brokers, 0, 30, 2, random.Random(seed))
                         for broker in replicas)
        assert min(counts[3], counts[4]) > max(counts[0], counts[1], counts[2])
