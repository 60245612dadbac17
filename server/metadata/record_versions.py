"""Which version of each metadata record kraftwire writes.

kraftwire runs at metadata.version 3.9-IV0 (feature level 21), and writes what Kafka writes there:
PartitionRecord and PartitionChangeRecord v1 (with Directories, without the ELR fields of v2),
RegisterBrokerRecord v3 (with LogDirs), and BrokerRegistrationChangeRecord at the version its change
needs (Kafka's fixed choice: v0 to fence or unfence, v1 for controlled shutdown, v2 for a change of
log directories). Every other record has only version 0.

Decisions return bare records and the controller picks each one's version here, so the choice lives in
one place.
"""
from __future__ import annotations

from kraftwire.codec import records as rec

METADATA_VERSION_FEATURE = "metadata.version"
METADATA_VERSION_LEVEL = 21  # 3.9-IV0
MIN_METADATA_VERSION = 7  # 3.3-IV3, the oldest KRaft metadata.version

_FIXED = {
    rec.PartitionRecord: 1,
    rec.PartitionChangeRecord: 1,
    rec.RegisterBrokerRecord: 3,
}


def version_for(record) -> int:
    if isinstance(record, rec.BrokerRegistrationChangeRecord):
        if record.log_dirs:
            return 2
        return 1 if record.in_controlled_shutdown else 0
    return _FIXED.get(type(record), 0)
