"""``quorum-state``: the Raft election state, one line of JSON in KRaft's shape.

Kafka's FileQuorumStateStore writes QuorumStateData in camelCase plus ``data_version``; version 0 (the
static quorum this controller runs) is::

    {"clusterId":"","leaderId":3000,"leaderEpoch":7,"votedId":-1,"appliedOffset":0,
     "currentVoters":[{"voterId":3000}],"data_version":0}

and version 1 (kraft.version 1: the voters are in the log, and a vote names the candidate's directory,
Kafka's ``KRaftVersion.quorumStateVersion``)::

    {"leaderId":-1,"leaderEpoch":2,"votedId":3001,"votedDirectoryId":"J8aAPcfLQt2bqs1JT_rMgQ","data_version":1}

Like Kafka, ``clusterId`` is written empty and ``appliedOffset`` 0 (version 0). The file is replaced atomically
(``quorum-state.tmp``, fsync, rename, fsync of the directory), so a leftover ``quorum-state.tmp`` is
an interrupted write and is ignored. A present but unreadable ``quorum-state`` stops start-up: the
epoch must never go backwards, and guessing it could.
"""
from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path

from kraftwire.codec.log_layout import QUORUM_STATE_FILE

from ..durable.files import atomic_write
from .storage import StorageError, kafka_uuid

NO_ID = -1


ZERO_UUID = uuid.UUID(int=0)  # Kafka's NO_DIRECTORY_ID: no vote, or a voter whose directory is unknown


@dataclass(frozen=True)
class QuorumState:
    leader_id: int
    leader_epoch: int
    voted_id: int
    voters: tuple[int, ...]  # version 0 only
    version: int = 0
    voted_directory_id: uuid.UUID | None = None  # version 1 only

    def to_json(self) -> str:
        if self.version == 1:
            data = {"leaderId": self.leader_id, "leaderEpoch": self.leader_epoch, "votedId": self.voted_id,
                    "votedDirectoryId": kafka_uuid(self.voted_directory_id or ZERO_UUID), "data_version": 1}
        else:
            data = {"clusterId": "", "leaderId": self.leader_id, "leaderEpoch": self.leader_epoch,
                    "votedId": self.voted_id, "appliedOffset": 0,
                    "currentVoters": [{"voterId": v} for v in self.voters], "data_version": 0}
        return json.dumps(data, separators=(",", ":"))


def read_quorum_state(directory: Path) -> QuorumState | None:
    """The stored state, None when there is none yet; StorageError when the file is damaged."""
    path = directory / QUORUM_STATE_FILE
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise StorageError(f"{path} cannot be read ({exc}); refusing to start with an unknown Raft epoch") from None
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        version = data.get("data_version")
        if version not in (0, 1):
            raise ValueError(f"unknown data_version {version!r}")
        epoch, leader, voted = data["leaderEpoch"], data["leaderId"], data.get("votedId", NO_ID)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (epoch, leader, voted)) or epoch < 0:
            raise ValueError("leaderEpoch, leaderId and votedId must be integers, the epoch not negative")
        voters = tuple(v["voterId"] for v in data.get("currentVoters") or ())
        if not all(isinstance(v, int) for v in voters):
            raise ValueError("currentVoters must hold integer voterIds")
    except (ValueError, KeyError, TypeError) as exc:
        raise StorageError(f"{path} is damaged ({exc}): {text[:200]!r}; refusing to start with an unknown "
                           f"Raft epoch (restore the file, or delete it only if no other voter exists)") from None
    return QuorumState(leader, epoch, voted, voters, version)


def write_quorum_state(directory: Path, state: QuorumState) -> None:
    atomic_write(directory / QUORUM_STATE_FILE, state.to_json().encode())
