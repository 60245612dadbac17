"""The on-disk layout of KRaft's metadata partition: its directory, the names of its files, and the
entries of a segment's offset index.

The Raft log writes and recovers these files, ``kraftwire log`` checks them, and the audit plans its
splits over them; each keeps its own logic, and all spell the layout from here.

* ``__cluster_metadata-0/``: the partition directory under a data directory.
* ``{base offset:020d}.log``: a segment of back-to-back v2 record batches, named by its first offset;
  ``{base offset:020d}.index`` beside it is Kafka's offset index (8-byte entries: int32 offset minus
  the base, int32 byte position of a batch start).
* ``{end offset:020d}-{epoch:010d}.checkpoint``: a snapshot; ``.checkpoint.part`` is one being written.
* ``quorum-state``: the Raft election state.
"""
from __future__ import annotations

import re
import uuid
import struct

METADATA_TOPIC = "__cluster_metadata"
METADATA_PARTITION = 0
METADATA_TOPIC_ID = uuid.UUID(int=1)  # Uuid.METADATA_TOPIC_ID: the topic id Fetch v13+ names it by
PARTITION_DIR = f"{METADATA_TOPIC}-{METADATA_PARTITION}"
QUORUM_STATE_FILE = "quorum-state"

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
SNAPSHOT_SUFFIX = ".checkpoint"
PARTIAL_SNAPSHOT_SUFFIX = ".checkpoint.part"

INDEX_ENTRY = struct.Struct(">ii")  # (offset - base offset, byte position)
DEFAULT_INDEX_INTERVAL_BYTES = 4096  # log.index.interval.bytes

_SNAPSHOT_NAME = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")


def segment_file_name(base_offset: int, suffix: str = LOG_SUFFIX) -> str:
    """The name of a segment (``.log``) or of its index (``INDEX_SUFFIX``)."""
    return f"{base_offset:020d}{suffix}"


def parse_base_offset(name: str, suffix: str = LOG_SUFFIX) -> int | None:
    """The base offset in a segment (or, with ``INDEX_SUFFIX``, index) file name; None for other files."""
    stem = name[: -len(suffix)]
    if name.endswith(suffix) and len(stem) == 20 and stem.isdigit():
        return int(stem)
    return None


def snapshot_file_name(end_offset: int, epoch: int) -> str:
    return f"{end_offset:020d}-{epoch:010d}{SNAPSHOT_SUFFIX}"


def parse_snapshot_name(name: str) -> tuple[int, int] | None:
    """(end offset, epoch) of a snapshot file name; None for other files."""
    match = _SNAPSHOT_NAME.match(name)
    return (int(match[1]), int(match[2])) if match else None


def index_entries(index: bytes) -> list[tuple[int, int]]:
    """(offset - base offset, position) entries of an index file's bytes; they stop at the first
    all-zero entry after the first, where a pre-allocated Kafka index ends."""
    entries = []
    for i in range(len(index) // INDEX_ENTRY.size):
        entry = INDEX_ENTRY.unpack_from(index, i * INDEX_ENTRY.size)
        if i > 0 and entry == (0, 0):
            break
        entries.append(entry)
    return entries
