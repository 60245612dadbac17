"""The producer id control manager (AllocateProducerIds, KIP-730): each block starts where the image's
next producer id is, its ProducerIdsRecord moves that past the block, a stale broker epoch is refused,
and the next id survives a snapshot; and through the wire, the controller answers AllocateProducerIds
from brokers with blocks that never overlap."""
import uuid

from kraftwire.codec import ErrorCode
from kraftwire.codec import records as rec
from kraftwire.codec.messages import AllocateProducerIdsRequest
from kraftwire.server.controller import producer_ids
from kraftwire.server.metadata.image import MetadataImage
from kraftwire.server.host.cluster import Cluster
from kraftwire.server.wire.client import KafkaClient


def registered(broker_id: int, epoch: int) -> rec.RegisterBrokerRecord:
    return rec.RegisterBrokerRecord(broker_id=broker_id, incarnation_id=uuid.uuid4(), broker_epoch=epoch,
                                    end_points=[], features=[], rack=None, fenced=False,
                                    in_controlled_shutdown=False, log_dirs=[])


def test_blocks_follow_each_other_and_stale_epochs_are_refused():
    image = MetadataImage()
    image.apply(registered(1, 7), 0)
    image.apply(registered(2, 9), 1)
    records, answer = producer_ids.decide(image, AllocateProducerIdsRequest(broker_id=1, broker_epoch=7))
    assert (answer.error_code, answer.producer_id_start, answer.producer_id_len) == (ErrorCode.NONE, 0, 1000)
    assert records == [rec.ProducerIdsRecord(broker_id=1, broker_epoch=7, next_producer_id=1000)]
    image.apply(records[0], 2)
    records, answer = producer_ids.decide(image, AllocateProducerIdsRequest(broker_id=2, broker_epoch=9))
    assert (answer.producer_id_start, records[0].next_producer_id) == (1000, 2000)
    image.apply(records[0], 3)
    for stale in (AllocateProducerIdsRequest(broker_id=2, broker_epoch=8),
                  AllocateProducerIdsRequest(broker_id=5, broker_epoch=9)):
        records, answer = producer_ids.decide(image, stale)
        assert (records, answer.error_code) == ([], ErrorCode.STALE_BROKER_EPOCH)
    # the next id is part of the image's snapshot, and comes back from it
    rebuilt = MetadataImage()
    for offset, (record, _version) in enumerate(image.to_records()):
        rebuilt.apply(record, offset)
    assert rebuilt.next_producer_id == 2000


def test_ids_near_the_end_of_int64_are_refused():
    image = MetadataImage()
    image.apply(registered(1, 7), 0)
    image.apply(rec.ProducerIdsRecord(broker_id=1, broker_epoch=7, next_producer_id=(1 << 63) - 500), 1)
    records, answer = producer_ids.decide(image, AllocateProducerIdsRequest(broker_id=1, broker_epoch=7))
    assert (records, answer.error_code) == ([], ErrorCode.UNKNOWN_SERVER_ERROR)


async def test_the_controller_hands_out_blocks_over_the_wire():
    async with Cluster(brokers=2) as cluster:
        starts = []
        for broker in cluster.brokers:
            client = KafkaClient(cluster.controller_node.host, cluster.controller_node.port, "test")
            try:
                answer = await client.send(AllocateProducerIdsRequest(broker_id=broker.broker_id,
                                                                      broker_epoch=broker.epoch))
            finally:
                await client.close()
            assert answer.error_code == ErrorCode.NONE
            starts.append(answer.producer_id_start)
        assert sorted(starts) == [starts[0], starts[0] + 1000]
        assert cluster.controller.committed.next_producer_id == starts[0] + 2000
