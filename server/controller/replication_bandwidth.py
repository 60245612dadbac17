"""The decisions behind ``Cluster.set_bandwidth`` and ``Cluster.set_ingress``: a broker's simulated
replication bandwidth is the broker config ``kraftwire.replication.bandwidth.bytes.per.second``, written as a
ConfigRecord like any client's config change and checked by the same config catalogue (a value below 1 is refused with
Kafka's message); a topic's simulated produce rates are its topic configs ``kraftwire.partition.ingress.*``, likewise.
"""
from __future__ import annotations

from kraftwire.codec import records as rec

from kraftwire.server.metadata import configs
from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.constants import ConfigResourceType
from kraftwire.server.metadata.image import MetadataImage
from .config_validation import AlterOp, validate_broker_changes, validate_topic_changes
from .result import ControllerResult


def set_replication_bandwidth(image: MetadataImage, broker_id: int, bytes_per_second: int | None) -> ControllerResult:
    """The ConfigRecord setting (None: deleting, back to the cluster default) the broker's bandwidth; no
    record when it already has that value. Raises KafkaError for a value that is not a whole number of
    bytes per second of at least 1."""
    if bytes_per_second is not None and type(bytes_per_second) is not int:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"The bandwidth must be a whole number of bytes per second, "
                                          f"not {bytes_per_second!r}.")
    name = str(broker_id)
    value = None if bytes_per_second is None else str(bytes_per_second)
    operation = AlterOp.DELETE if value is None else AlterOp.SET
    current = image.broker_configs(name)
    updated = validate_broker_changes(name, current, [(configs.REPLICATION_BANDWIDTH, operation, value)])
    if updated.get(configs.REPLICATION_BANDWIDTH) == current.get(configs.REPLICATION_BANDWIDTH):
        return ControllerResult()
    return ControllerResult([rec.ConfigRecord(resource_type=ConfigResourceType.BROKER, resource_name=name,
                                              name=configs.REPLICATION_BANDWIDTH, value=value)])


def set_topic_ingress(image: MetadataImage, topic: str, bytes_per_second: int | None,
                      partitions: dict[int, int] | None = None) -> ControllerResult:
    """The ConfigRecords setting a topic's simulated produce rate: ``kraftwire.partition.ingress.bytes.per.sec``
    for each partition (None: deleted, back to 0) and ``kraftwire.partition.ingress.rates`` for the
    ``partitions`` named (None or empty: deleted), checked by the config catalogue as an
    IncrementalAlterConfigs would be. UNKNOWN_TOPIC_OR_PARTITION for a topic the image does not hold."""
    if image.topic(topic) is None:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{topic}' does not exist.")
    if bytes_per_second is not None and type(bytes_per_second) is not int or any(
            type(p) is not int or type(r) is not int for p, r in (partitions or {}).items()):
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Ingress rates must be whole numbers of bytes per second.")
    listed = ",".join(f"{p}:{r}" for p, r in sorted((partitions or {}).items())) or None
    ops = [(configs.INGRESS_BYTES_PER_SEC, AlterOp.SET if bytes_per_second is not None else AlterOp.DELETE,
            None if bytes_per_second is None else str(bytes_per_second)),
           (configs.INGRESS_RATES, AlterOp.SET if listed else AlterOp.DELETE, listed)]
    current = image.topic_configs(topic)
    updated = validate_topic_changes(current, ops, image.broker_configs(""))
    return ControllerResult([rec.ConfigRecord(resource_type=ConfigResourceType.TOPIC, resource_name=topic,
                                              name=name, value=updated.get(name))
                             for name, _, _ in ops if updated.get(name) != current.get(name)])
