"""The durable, Raft-style metadata log in KRaft's on-disk format (``__cluster_metadata-0``).

* ``log``: ``RaftLog``, the ``MetadataLog`` the controller writes through and the driver of its Raft
  core (open, replay, append, listeners), made of one part per job over ``log_state`` (the shared
  state): ``recovery`` (what open finds on disk, the state the core starts from), ``files`` (the segment
  files, written in the I/O thread: group commit, truncation, installs, retention), ``driver`` (the core's
  actions, the flush, timers, commits, leadership), ``quorum_rpcs`` (the peers' RPCs served and sent:
  ``handle``, ``describe``), ``snapshot_keeper`` (snapshots taken, downloaded, installed) and
  ``lifecycle`` (close, kill, the harness's pause); ``batches``: the record batches the core's entries
  point at.
* ``peer_wire``: the core's messages as Kafka's Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch,
  AddRaftVoter, RemoveRaftVoter and UpdateRaftVoter.
* ``segments``: ``.log``/``.index`` files and the batch rules recovery and ``log verify`` check; the
  refusal of a record start-up cannot replay (``UnknownRecordError``).
* ``snapshots``: ``.checkpoint`` files.
* ``quorum_state``: the ``quorum-state`` file. ``storage``: atomic writes and ``meta.properties``.
* ``tools``: ``kraftwire log dump`` and ``kraftwire log verify``.
* ``core``: KRaft's Raft for a quorum as a pure state machine (ARCHITECTURE.md, "The quorum core");
  ``voters``: its voter sets and their control records (KIP-853);
  ``simulation``: a seeded simulation of it that checks its named invariants (``INVARIANTS``).

It imports only ``kraftwire.codec``: the controller writes through it as a ``MetadataLog``
(server/controller/metadata_log.py) that the host hands in.
"""
from kraftwire.codec.log_layout import PARTITION_DIR

from .core import NotLeaderError, Timers
from .log import LogCorruptError, LogFailedError, QuorumDescription, RaftConfig, RaftLog
from .storage import StorageError

__all__ = ["PARTITION_DIR", "LogCorruptError", "LogFailedError", "NotLeaderError", "QuorumDescription", "RaftConfig",
           "RaftLog", "StorageError", "Timers"]
