"""The decision behind ``Cluster.set_bandwidth``: a broker's simulated replication bandwidth is the broker
config ``kraftwire.replication.bandwidth.bytes.per.second``, written as a ConfigRecord like any client's
config change and checked by the same config catalogue (a value below 1 is refused with Kafka's message).
"""
from __future__ import annotations

from kraftwire.codec import records as rec

from kraftwire.server.metadata import configs
from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.constants import ConfigResourceType
from kraftwire.server.metadata.image import MetadataImage
from .config_validation import AlterOp, validate_broker_changes
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
