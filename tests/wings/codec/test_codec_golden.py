"""Golden byte vectors for the broker/controller APIs, metadata records and headers that kafka-python
lacks (so the interop tests cannot cover them).

Every vector was written by hand from the field tables of /work/shared/reference/kafka-behaviour.md
(§1.3-1.5, 1.8-1.10), kraft-log-and-spark.md §2 and, for AddRaftVoter, RemoveRaftVoter and
UpdateRaftVoter, the field lists of Kafka's message JSON, not produced by the codec: a schema file that
drifts from Kafka's layout fails here. Each vector checks that the object encodes to the bytes and that
the bytes decode to the object.

Reading the hex: classic (non-flexible) versions use int16 string lengths, int32 array counts, -1 for
null. Flexible versions use unsigned varints of length+1 / count+1 (0 = null) and end every struct with
a tagged-field section: a varint count, then (tag, size, bytes) in ascending tag order; ``00`` is an
empty section.
"""
from __future__ import annotations

import uuid
import warnings

import pytest

from kraftwire import codec
from kraftwire.codec import messages as m
from kraftwire.codec import records as r

with warnings.catch_warnings():  # importing kafka loads its schemas with a deprecated resources API
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.record import _crc32c

TOPIC = uuid.UUID("00112233445566778899aabbccddeeff")
DIR_A = uuid.UUID("aa" * 16)
DIR_B = uuid.UUID("bb" * 16)
DIR_C = uuid.UUID("cc" * 16)
INCARNATION = uuid.UUID("1c" * 16)


def unhex(text: str) -> bytes:
    """Bytes from a commented hex vector: '#' starts a comment, whitespace is ignored."""
    return bytes.fromhex("".join("".join(line.split("#", 1)[0].split()) for line in text.splitlines()))


# --- LeaderAndIsr (apiKey 4, flexible 4+) -------------------------------------------------------

LAI = m.LeaderAndIsrRequest
LEADER_AND_ISR_V0 = (LAI, 0, LAI(
    controller_id=1, controller_epoch=5,
    ungrouped_partition_states=[LAI.LeaderAndIsrPartitionState(
        topic_name="foo", partition_index=0, controller_epoch=5, leader=2, leader_epoch=7, isr=[2, 3],
        partition_epoch=11, replicas=[2, 3])],
    live_leaders=[LAI.LeaderAndIsrLiveLeader(broker_id=2, host_name="b2", port=9092)]), """
    00000001                    # ControllerId 1
    00000005                    # ControllerEpoch 5
                                # (BrokerEpoch 2+, Type 5+, TopicStates 2+: absent in v0)
    00000001                    # UngroupedPartitionStates: int32 count 1
      0003 666f6f               #   TopicName "foo" (int16 length; only v0-1 carry it here)
      00000000                  #   PartitionIndex 0
      00000005                  #   ControllerEpoch 5
      00000002                  #   Leader 2
      00000007                  #   LeaderEpoch 7
      00000002 00000002 00000003  # Isr [2, 3]
      0000000b                  #   PartitionEpoch 11
      00000002 00000002 00000003  # Replicas [2, 3]  (Adding/Removing 3+, IsNew 1+: absent)
    00000001                    # LiveLeaders: count 1
      00000002                  #   BrokerId 2
      0002 6232                 #   HostName "b2"
      00002384                  #   Port 9092
""")

LEADER_AND_ISR_V7 = (LAI, 7, LAI(
    controller_id=3000, is_k_raft_controller=True, controller_epoch=2, broker_epoch=42, type=1,
    topic_states=[LAI.LeaderAndIsrTopicState(topic_name="t", topic_id=TOPIC, partition_states=[
        LAI.LeaderAndIsrPartitionState(partition_index=1, controller_epoch=2, leader=1, leader_epoch=4, isr=[1, 2],
                                       partition_epoch=9, replicas=[1, 2, 3], adding_replicas=[3],
                                       removing_replicas=[], is_new=False, leader_recovery_state=1)])],
    live_leaders=[LAI.LeaderAndIsrLiveLeader(broker_id=1, host_name="h1", port=9093)]), """
    00000bb8                    # ControllerId 3000
    01                          # isKRaftController true (7+)
    00000002                    # ControllerEpoch 2
    000000000000002a            # BrokerEpoch 42 (2+)
    01                          # Type 1 = INCREMENTAL (5+)
    02                          # TopicStates: compact count 1+1
      02 74                     #   TopicName "t"
      00112233445566778899aabbccddeeff  # TopicId (5+)
      02                        #   PartitionStates: count 1
        00000001                #     PartitionIndex 1
        00000002                #     ControllerEpoch 2
        00000001                #     Leader 1
        00000004                #     LeaderEpoch 4
        03 00000001 00000002    #     Isr [1, 2]
        00000009                #     PartitionEpoch 9
        04 00000001 00000002 00000003  # Replicas [1, 2, 3]
        02 00000003             #     AddingReplicas [3]
        01                      #     RemovingReplicas [] (empty, not null)
        00                      #     IsNew false
        01                      #     LeaderRecoveryState 1 (6+)
        00                      #     tagged fields (partition state)
      00                        #   tagged fields (topic state)
    02                          # LiveLeaders: count 1
      00000001                  #   BrokerId 1
      03 6831                   #   HostName "h1"
      00002385                  #   Port 9093
      00                        #   tagged fields
    00                          # tagged fields (request)
""")

LAIR = m.LeaderAndIsrResponse
LEADER_AND_ISR_RESPONSE_V5 = (LAIR, 5, LAIR(error_code=0, topics=[LAIR.LeaderAndIsrTopicError(
    topic_id=TOPIC, partition_errors=[LAIR.LeaderAndIsrPartitionError(partition_index=0, error_code=0),
                                      LAIR.LeaderAndIsrPartitionError(partition_index=1, error_code=56)])]), """
    0000                        # ErrorCode 0  (PartitionErrors is v0-4 only)
    02                          # Topics (5+): count 1
      00112233445566778899aabbccddeeff  # TopicId
      03                        #   PartitionErrors: count 2  (TopicName is v0-4 only)
        00000000 0000 00        #     PartitionIndex 0, ErrorCode 0, tags
        00000001 0038 00        #     PartitionIndex 1, ErrorCode 56 KAFKA_STORAGE_ERROR, tags
      00                        #   tagged fields (topic)
    00                          # tagged fields
""")

# --- AssignReplicasToDirs (apiKey 73, flexible 0+) ------------------------------------------------

ARD = m.AssignReplicasToDirsRequest
ASSIGN_REQUEST_V0 = (ARD, 0, ARD(broker_id=1, broker_epoch=100, directories=[ARD.DirectoryData(
    id=DIR_A, topics=[ARD.TopicData(topic_id=TOPIC, partitions=[ARD.PartitionData(partition_index=0),
                                                                ARD.PartitionData(partition_index=2)])])]), """
    00000001                    # BrokerId 1
    0000000000000064            # BrokerEpoch 100
    02                          # Directories: count 1
      aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa  # Id
      02                        #   Topics: count 1
        00112233445566778899aabbccddeeff  # TopicId
        03                      #     Partitions: count 2
          00000000 00           #       PartitionIndex 0, tags
          00000002 00           #       PartitionIndex 2, tags
        00                      #     tags (topic)
      00                        #   tags (directory)
    00                          # tags
""")

ARDR = m.AssignReplicasToDirsResponse
ASSIGN_RESPONSE_V0 = (ARDR, 0, ARDR(throttle_time_ms=0, error_code=0, directories=[ARDR.DirectoryData(
    id=DIR_A, topics=[ARDR.TopicData(topic_id=TOPIC, partitions=[
        ARDR.PartitionData(partition_index=0, error_code=0),
        ARDR.PartitionData(partition_index=2, error_code=57)])])]), """
    00000000                    # ThrottleTimeMs 0
    0000                        # ErrorCode 0
    02                          # Directories: count 1
      aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa  # Id
      02                        #   Topics: count 1
        00112233445566778899aabbccddeeff  # TopicId
        03                      #     Partitions: count 2
          00000000 0000 00      #       PartitionIndex 0, ErrorCode 0, tags
          00000002 0039 00      #       PartitionIndex 2, ErrorCode 57 LOG_DIR_NOT_FOUND, tags
        00 00                   #     tags (topic), tags (directory)
    00                          # tags
""")

# --- BrokerRegistration (62), BrokerHeartbeat (63), AlterPartition (56); flexible 0+ --------------

BR = m.BrokerRegistrationRequest
_BROKER = dict(broker_id=2, cluster_id="abc", incarnation_id=INCARNATION,
               listeners=[BR.Listener(name="PLAINTEXT", host="h", port=9092, security_protocol=0)],
               features=[BR.Feature(name="metadata.version", min_supported_version=7, max_supported_version=21)])
_BROKER_HEX = """
    00000002                    # BrokerId 2
    04 616263                   # ClusterId "abc"
    1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c  # IncarnationId
    02                          # Listeners: count 1
      0a 504c41494e54455854     #   Name "PLAINTEXT" (9 bytes, so 0a)
      02 68                     #   Host "h"
      2384                      #   Port 9092 (uint16)
      0000                      #   SecurityProtocol 0 = PLAINTEXT
      00                        #   tags
    02                          # Features: count 1
      11 6d657461646174612e76657273696f6e  # Name "metadata.version" (16 bytes)
      0007                      #   MinSupportedVersion 7
      0015                      #   MaxSupportedVersion 21
      00                        #   tags
"""
BROKER_REGISTRATION_V0 = (BR, 0, BR(**_BROKER, rack=None), _BROKER_HEX + """
    00                          # Rack null
    00                          # tags  (IsMigratingZkBroker 1+, LogDirs 2+, PreviousBrokerEpoch 3+: absent)
""")
BROKER_REGISTRATION_V3 = (BR, 3, BR(**_BROKER, rack="r1", is_migrating_zk_broker=False, log_dirs=[DIR_A, DIR_B],
                                    previous_broker_epoch=17), _BROKER_HEX + """
    03 7231                     # Rack "r1"
    00                          # IsMigratingZkBroker false (1+)
    03                          # LogDirs (2+): count 2
      aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
      bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb
    0000000000000011            # PreviousBrokerEpoch 17 (3+)
    00                          # tags
""")

BH = m.BrokerHeartbeatRequest
BROKER_HEARTBEAT_V1 = (BH, 1, BH(broker_id=1, broker_epoch=10, current_metadata_offset=1234, want_fence=False,
                                 want_shut_down=False, offline_log_dirs=[DIR_C]), """
    00000001                    # BrokerId 1
    000000000000000a            # BrokerEpoch 10
    00000000000004d2            # CurrentMetadataOffset 1234
    00                          # WantFence false
    00                          # WantShutDown false
    01                          # tagged fields: 1 present
      00                        #   tag 0 = OfflineLogDirs
      11                        #   size 17
      02 cccccccccccccccccccccccccccccccc  # count 1, the directory
""")

AP = m.AlterPartitionRequest
ALTER_PARTITION_V3 = (AP, 3, AP(broker_id=1, broker_epoch=5, topics=[AP.TopicData(topic_id=TOPIC, partitions=[
    AP.PartitionData(partition_index=0, leader_epoch=3, leader_recovery_state=0, partition_epoch=8,
                     new_isr_with_epochs=[AP.BrokerState(broker_id=1, broker_epoch=5),
                                          AP.BrokerState(broker_id=2, broker_epoch=6)])])]), """
    00000001                    # BrokerId 1
    0000000000000005            # BrokerEpoch 5
    02                          # Topics: count 1
      00112233445566778899aabbccddeeff  # TopicId (2+; TopicName is gone)
      02                        #   Partitions: count 1
        00000000                #     PartitionIndex 0
        00000003                #     LeaderEpoch 3   (NewIsr is v0-2 only)
        03                      #     NewIsrWithEpochs (3+): count 2
          00000001 0000000000000005 00  # BrokerId 1, BrokerEpoch 5, tags
          00000002 0000000000000006 00  # BrokerId 2, BrokerEpoch 6, tags
        00                      #     LeaderRecoveryState 0 (1+)
        00000008                #     PartitionEpoch 8
        00                      #     tags (partition)
      00                        #   tags (topic)
    00                          # tags
""")

APR = m.AlterPartitionResponse
ALTER_PARTITION_RESPONSE_V2 = (APR, 2, APR(throttle_time_ms=0, error_code=0, topics=[APR.TopicData(
    topic_id=TOPIC, partitions=[APR.PartitionData(partition_index=0, error_code=0, leader_id=1, leader_epoch=3,
                                                  isr=[1, 2], leader_recovery_state=0, partition_epoch=9)])]), """
    00000000                    # ThrottleTimeMs 0
    0000                        # ErrorCode 0
    02                          # Topics: count 1
      00112233445566778899aabbccddeeff  # TopicId (2+)
      02                        #   Partitions: count 1
        00000000                #     PartitionIndex 0
        0000                    #     ErrorCode 0
        00000001                #     LeaderId 1
        00000003                #     LeaderEpoch 3
        03 00000001 00000002    #     Isr [1, 2]
        00                      #     LeaderRecoveryState 0 (1+)
        00000009                #     PartitionEpoch 9
        00                      #     tags (partition)
      00                        #   tags (topic)
    00                          # tags
""")

# --- Raft RPCs ------------------------------------------------------------------------------------

META = "13 5f5f636c75737465725f6d65746164617461"  # "__cluster_metadata" (18 bytes, so 13)

VR = m.VoteRequest
VOTE_V2 = (VR, 2, VR(cluster_id="c", voter_id=2, topics=[VR.TopicData(topic_name="__cluster_metadata", partitions=[
    VR.PartitionData(partition_index=0, replica_epoch=4, replica_id=1, replica_directory_id=DIR_A,
                     voter_directory_id=DIR_B, last_offset_epoch=3, last_offset=100, pre_vote=True)])]), f"""
    02 63                       # ClusterId "c"
    00000002                    # VoterId 2 (1+)
    02                          # Topics: count 1
      {META}                    #   TopicName
      02                        #   Partitions: count 1
        00000000                #     PartitionIndex 0
        00000004                #     ReplicaEpoch 4
        00000001                #     ReplicaId 1
        aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa  # ReplicaDirectoryId (1+)
        bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb  # VoterDirectoryId (1+)
        00000003                #     LastOffsetEpoch 3
        0000000000000064        #     LastOffset 100
        01                      #     PreVote true (2+)
        00                      #     tags (partition)
      00                        #   tags (topic)
    00                          # tags
""")

BQ = m.BeginQuorumEpochRequest
BEGIN_QUORUM_V1 = (BQ, 1, BQ(cluster_id=None, voter_id=2, topics=[BQ.TopicData(
    topic_name="__cluster_metadata", partitions=[BQ.PartitionData(partition_index=0, voter_directory_id=DIR_B,
                                                                  leader_id=1, leader_epoch=5)])],
    leader_endpoints=[BQ.LeaderEndpoint(name="CONTROLLER", host="c1", port=9093)]), f"""
    00                          # ClusterId null
    00000002                    # VoterId 2 (1+)
    02                          # Topics: count 1
      {META}                    #   TopicName
      02                        #   Partitions: count 1
        00000000                #     PartitionIndex 0
        bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb  # VoterDirectoryId (1+)
        00000001                #     LeaderId 1
        00000005                #     LeaderEpoch 5
        00                      #     tags (partition)
      00                        #   tags (topic)
    02                          # LeaderEndpoints (1+): count 1
      0b 434f4e54524f4c4c4552   #   Name "CONTROLLER"
      03 6331                   #   Host "c1"
      2385                      #   Port 9093 (uint16)
      00                        #   tags
    00                          # tags
""")

BQR = m.BeginQuorumEpochResponse
BEGIN_QUORUM_RESPONSE_V1 = (BQR, 1, BQR(error_code=0, topics=[BQR.TopicData(
    topic_name="__cluster_metadata", partitions=[BQR.PartitionData(partition_index=0, error_code=0, leader_id=1,
                                                                   leader_epoch=5)])],
    node_endpoints=[BQR.NodeEndpoint(node_id=1, host="c1", port=9093)]), f"""
    0000                        # ErrorCode 0
    02                          # Topics: count 1
      {META}                    #   TopicName
      02                        #   Partitions: count 1
        00000000 0000 00000001 00000005 00  # PartitionIndex 0, ErrorCode 0, LeaderId 1, LeaderEpoch 5, tags
      00                        #   tags (topic)
    01                          # tagged fields: 1 present
      00                        #   tag 0 = NodeEndpoints (a tagged struct array)
      0b                        #   size 11
      02                        #   count 1
        00000001                #     NodeId 1
        03 6331                 #     Host "c1"
        2385                    #     Port 9093
        00                      #     tags (endpoint)
""")

EQ = m.EndQuorumEpochRequest
END_QUORUM_V1 = (EQ, 1, EQ(cluster_id="c", topics=[EQ.TopicData(topic_name="__cluster_metadata", partitions=[
    EQ.PartitionData(partition_index=0, leader_id=1, leader_epoch=5, preferred_candidates=[
        EQ.ReplicaInfo(candidate_id=2, candidate_directory_id=DIR_B)])])],
    leader_endpoints=[EQ.LeaderEndpoint(name="CONTROLLER", host="c1", port=9093)]), f"""
    02 63                       # ClusterId "c"
    02                          # Topics: count 1
      {META}                    #   TopicName
      02                        #   Partitions: count 1
        00000000                #     PartitionIndex 0
        00000001                #     LeaderId 1
        00000005                #     LeaderEpoch 5  (PreferredSuccessors is v0 only)
        02                      #     PreferredCandidates (1+): count 1
          00000002              #       CandidateId 2
          bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb  # CandidateDirectoryId
          00                    #       tags
        00                      #     tags (partition)
      00                        #   tags (topic)
    02                          # LeaderEndpoints (1+): count 1
      0b 434f4e54524f4c4c4552 03 6331 2385 00  # "CONTROLLER", "c1", 9093, tags
    00                          # tags
""")

DQ = m.DescribeQuorumResponse
DESCRIBE_QUORUM_V2 = (DQ, 2, DQ(error_code=0, error_message=None, topics=[DQ.TopicData(
    topic_name="__cluster_metadata", partitions=[DQ.PartitionData(
        partition_index=0, error_code=0, error_message=None, leader_id=1, leader_epoch=5, high_watermark=200,
        current_voters=[DQ.ReplicaState(replica_id=1, replica_directory_id=DIR_A, log_end_offset=200,
                                        last_fetch_timestamp=1000, last_caught_up_timestamp=1000)],
        observers=[])])],
    nodes=[DQ.Node(node_id=1, listeners=[DQ.Listener(name="CONTROLLER", host="c1", port=9093)])]), f"""
    0000                        # ErrorCode 0
    00                          # ErrorMessage null (2+)
    02                          # Topics: count 1
      {META}                    #   TopicName
      02                        #   Partitions: count 1
        00000000                #     PartitionIndex 0
        0000                    #     ErrorCode 0
        00                      #     ErrorMessage null (2+)
        00000001                #     LeaderId 1
        00000005                #     LeaderEpoch 5
        00000000000000c8        #     HighWatermark 200
        02                      #     CurrentVoters: count 1
          00000001              #       ReplicaId 1
          aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa  # ReplicaDirectoryId (2+)
          00000000000000c8      #       LogEndOffset 200
          00000000000003e8      #       LastFetchTimestamp 1000 (1+)
          00000000000003e8      #       LastCaughtUpTimestamp 1000 (1+)
          00                    #       tags
        01                      #     Observers: empty
        00                      #     tags (partition)
      00                        #   tags (topic)
    02                          # Nodes (2+): count 1
      00000001                  #   NodeId 1
      02                        #   Listeners: count 1
        0b 434f4e54524f4c4c4552 03 6331 2385 00  # "CONTROLLER", "c1", 9093, tags
      00                        #   tags (node)
    00                          # tags
""")

# --- headers (§1.9) -------------------------------------------------------------------------------

RQH, RSH = m.RequestHeader, m.ResponseHeader
REQUEST_HEADER_V0 = (RQH, 0, RQH(request_api_key=7, request_api_version=0, correlation_id=1), """
    0007 0000 00000001          # ApiKey 7, ApiVersion 0, CorrelationId 1; no ClientId in v0
""")
REQUEST_HEADER_V1 = (RQH, 1, RQH(request_api_key=3, request_api_version=8, correlation_id=42,
                                 client_id="kraftwire"), """
    0003 0008 0000002a          # ApiKey 3 (Metadata), ApiVersion 8, CorrelationId 42
    0009 6b7261667477697265     # ClientId "kraftwire", int16 length
""")
REQUEST_HEADER_V1_NULL = (RQH, 1, RQH(request_api_key=3, request_api_version=8, correlation_id=43,
                                      client_id=None), """
    0003 0008 0000002b          # ApiKey 3, ApiVersion 8, CorrelationId 43
    ffff                        # ClientId null
""")
REQUEST_HEADER_V2 = (RQH, 2, RQH(request_api_key=45, request_api_version=1, correlation_id=7,
                                 client_id="adminclient-1"), """
    002d 0001 00000007          # ApiKey 45 (AlterPartitionReassignments), ApiVersion 1, CorrelationId 7
    000d 61646d696e636c69656e742d31  # ClientId "adminclient-1": still int16 length in the flexible header
    00                          # tagged fields
""")
RESPONSE_HEADER_V0 = (RSH, 0, RSH(correlation_id=42), """
    0000002a                    # CorrelationId 42
""")
RESPONSE_HEADER_V1 = (RSH, 1, RSH(correlation_id=42), """
    0000002a 00                 # CorrelationId 42, tagged fields
""")

# --- AddRaftVoter (80), RemoveRaftVoter (81), UpdateRaftVoter (82): KIP-853, flexible from v0 -----------

ARV = m.AddRaftVoterRequest
ADD_RAFT_VOTER_V1 = (ARV, 1, ARV(
    cluster_id="c1", timeout_ms=30000, voter_id=4, voter_directory_id=DIR_A,
    listeners=[ARV.Listener(name="CONTROLLER", host="h4", port=9093)], ack_when_committed=False), """
    03 6331                     # ClusterId "c1" (compact nullable string)
    00007530                    # TimeoutMs 30000
    00000004                    # VoterId 4
    aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa  # VoterDirectoryId
    02                          # Listeners: count 1
      0b 434f4e54524f4c4c4552   #   Name "CONTROLLER"
      03 6834                   #   Host "h4"
      2385                      #   Port 9093 (uint16)
      00                        #   tagged fields
    00                          # AckWhenCommitted false (1+)
    00                          # tagged fields
""")

RRV = m.RemoveRaftVoterRequest
REMOVE_RAFT_VOTER_V0 = (RRV, 0, RRV(cluster_id=None, voter_id=2, voter_directory_id=DIR_B), """
    00                          # ClusterId null
    00000002                    # VoterId 2
    bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb  # VoterDirectoryId
    00                          # tagged fields
""")

URV = m.UpdateRaftVoterRequest
UPDATE_RAFT_VOTER_V0 = (URV, 0, URV(
    cluster_id="c1", current_leader_epoch=7, voter_id=2, voter_directory_id=DIR_B,
    listeners=[URV.Listener(name="CONTROLLER", host="h2", port=9094)],
    k_raft_version_feature=URV.KRaftVersionFeature(min_supported_version=0, max_supported_version=1)), """
    03 6331                     # ClusterId "c1"
    00000007                    # CurrentLeaderEpoch 7
    00000002                    # VoterId 2
    bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb  # VoterDirectoryId
    02                          # Listeners: count 1
      0b 434f4e54524f4c4c4552   #   Name "CONTROLLER"
      03 6832                   #   Host "h2"
      2386                      #   Port 9094
      00                        #   tagged fields
    0000 0001                   # KRaftVersionFeature: MinSupportedVersion 0, MaxSupportedVersion 1
    00                          #   tagged fields (struct)
    00                          # tagged fields
""")

URVR = m.UpdateRaftVoterResponse
UPDATE_RAFT_VOTER_RESPONSE_V0 = (URVR, 0, URVR(
    throttle_time_ms=0, error_code=0,
    current_leader=URVR.CurrentLeader(leader_id=1, leader_epoch=7, host="h1", port=9093)), """
    00000000                    # ThrottleTimeMs 0
    0000                        # ErrorCode 0
    01                          # tagged fields: 1
      00 10                     #   tag 0 (CurrentLeader), 16 bytes
      00000001                  #   LeaderId 1
      00000007                  #   LeaderEpoch 7
      03 6831                   #   Host "h1"
      00002385                  #   Port 9093 (int32 here)
      00                        #   tagged fields (struct)
""")


MESSAGE_VECTORS = {
    "LeaderAndIsrRequest-v0": LEADER_AND_ISR_V0,
    "LeaderAndIsrRequest-v7": LEADER_AND_ISR_V7,
    "LeaderAndIsrResponse-v5": LEADER_AND_ISR_RESPONSE_V5,
    "AssignReplicasToDirsRequest-v0": ASSIGN_REQUEST_V0,
    "AssignReplicasToDirsResponse-v0": ASSIGN_RESPONSE_V0,
    "BrokerRegistrationRequest-v0": BROKER_REGISTRATION_V0,
    "BrokerRegistrationRequest-v3": BROKER_REGISTRATION_V3,
    "BrokerHeartbeatRequest-v1": BROKER_HEARTBEAT_V1,
    "AlterPartitionRequest-v3": ALTER_PARTITION_V3,
    "AlterPartitionResponse-v2": ALTER_PARTITION_RESPONSE_V2,
    "VoteRequest-v2": VOTE_V2,
    "BeginQuorumEpochRequest-v1": BEGIN_QUORUM_V1,
    "BeginQuorumEpochResponse-v1": BEGIN_QUORUM_RESPONSE_V1,
    "EndQuorumEpochRequest-v1": END_QUORUM_V1,
    "DescribeQuorumResponse-v2": DESCRIBE_QUORUM_V2,
    "AddRaftVoterRequest-v1": ADD_RAFT_VOTER_V1,
    "RemoveRaftVoterRequest-v0": REMOVE_RAFT_VOTER_V0,
    "UpdateRaftVoterRequest-v0": UPDATE_RAFT_VOTER_V0,
    "UpdateRaftVoterResponse-v0": UPDATE_RAFT_VOTER_RESPONSE_V0,
    "RequestHeader-v0": REQUEST_HEADER_V0,
    "RequestHeader-v1": REQUEST_HEADER_V1,
    "RequestHeader-v1-null-client": REQUEST_HEADER_V1_NULL,
    "RequestHeader-v2": REQUEST_HEADER_V2,
    "ResponseHeader-v0": RESPONSE_HEADER_V0,
    "ResponseHeader-v1": RESPONSE_HEADER_V1,
}


@pytest.mark.parametrize("cls,version,obj,vector", [pytest.param(*v, id=k) for k, v in MESSAGE_VECTORS.items()])
def test_message_vector(cls, version, obj, vector):
    expected = unhex(vector)
    assert obj.encode(version) == expected
    assert cls.decode(expected, version) == obj


def test_header_versions_follow_flexible_versions():
    """Which header version frames the vectors above (§1.9)."""
    assert codec.request_header_version(3, 8) == 1      # Metadata v8 is not flexible
    assert codec.request_header_version(45, 1) == 2     # AlterPartitionReassignments is flexible from 0
    assert codec.response_header_version(3, 8) == 0
    assert codec.response_header_version(3, 9) == 1
    assert codec.response_header_version(18, 4) == 0    # ApiVersionsResponse: always header v0


# --- metadata records, framed (§1.10; kraft-log §2.4) ---------------------------------------------

PR, PCR, RBR = r.PartitionRecord, r.PartitionChangeRecord, r.RegisterBrokerRecord
_PARTITION = dict(partition_id=0, topic_id=TOPIC, replicas=[1, 2, 3], isr=[1, 2], removing_replicas=[],
                  adding_replicas=[], leader=1, leader_epoch=0, partition_epoch=0)
_PARTITION_HEX = """
    00000000                    # PartitionId 0
    00112233445566778899aabbccddeeff  # TopicId
    04 00000001 00000002 00000003  # Replicas [1, 2, 3]
    03 00000001 00000002        # Isr [1, 2]
    01                          # RemovingReplicas [] (untagged, never null)
    01                          # AddingReplicas []
    00000001                    # Leader 1
    00000000                    # LeaderEpoch 0
    00000000                    # PartitionEpoch 0
"""
PARTITION_V0 = (PR(**_PARTITION), 0, """
    01 03 00                    # frame version 1, record type 3 (PartitionRecord), record version 0
""" + _PARTITION_HEX + """
    00                          # tags: LeaderRecoveryState (tag 0) is at its default 0, so not written
""")
PARTITION_V1 = (PR(**_PARTITION, directories=[DIR_A, DIR_B, DIR_C], leader_recovery_state=1), 1, """
    01 03 01                    # frame version 1, record type 3, record version 1
""" + _PARTITION_HEX + """
    04                          # Directories (1+, untagged): count 3, one per replica
      aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
      bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb
      cccccccccccccccccccccccccccccccc
    01                          # tagged fields: 1 present
      00 01 01                  #   tag 0 LeaderRecoveryState, size 1, value 1 (RECOVERING)
""")
PARTITION_CHANGE_V1 = (PCR(partition_id=2, topic_id=TOPIC, directories=[DIR_A, DIR_B], isr=[1, 2]), 1, """
    01 05 01                    # frame version 1, record type 5 (PartitionChangeRecord), version 1
    00000002                    # PartitionId 2
    00112233445566778899aabbccddeeff  # TopicId
    02                          # tagged fields: 2 present, ascending tags (Directories is declared first)
      00 09                     #   tag 0 Isr, size 9
        03 00000001 00000002    #     [1, 2]
      08 21                     #   tag 8 Directories, size 33
        03 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb
                                # (Leader -2, LeaderRecoveryState -1, other arrays null: defaults, not written)
""")
REGISTER_BROKER_V3 = (RBR(broker_id=1, is_migrating_zk_broker=False, incarnation_id=INCARNATION, broker_epoch=7,
                          end_points=[RBR.BrokerEndpoint(name="PLAINTEXT", host="h", port=9092, security_protocol=0)],
                          features=[RBR.BrokerFeature(name="metadata.version", min_supported_version=7,
                                                      max_supported_version=21)],
                          rack=None, fenced=True, in_controlled_shutdown=False, log_dirs=[DIR_A]), 3, """
    01 00 03                    # frame version 1, record type 0 (RegisterBrokerRecord), version 3
    00000001                    # BrokerId 1
    00                          # IsMigratingZkBroker false (2+)
    1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c  # IncarnationId
    0000000000000007            # BrokerEpoch 7
    02                          # EndPoints: count 1
      0a 504c41494e54455854 02 68 2384 0000 00  # "PLAINTEXT", "h", 9092, SecurityProtocol 0, tags
    02                          # Features: count 1
      11 6d657461646174612e76657273696f6e 0007 0015 00  # "metadata.version", 7, 21, tags
    00                          # Rack null
    01                          # Fenced true
    00                          # InControlledShutdown false (1+)
    01                          # tagged fields: 1 present
      00 11                     #   tag 0 LogDirs (3+), size 17
        02 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa  # count 1, the directory
""")
CONFIG_DELETE = (r.ConfigRecord(resource_type=2, resource_name="orders", name="retention.ms", value=None), 0, """
    01 04 00                    # frame version 1, record type 4 (ConfigRecord), version 0
    02                          # ResourceType 2 = TOPIC
    07 6f7264657273             # ResourceName "orders"
    0d 726574656e74696f6e2e6d73  # Name "retention.ms" (12 bytes)
    00                          # Value null: the key is deleted
    00                          # tags
""")

RECORD_VECTORS = {
    "PartitionRecord-v0": PARTITION_V0,
    "PartitionRecord-v1": PARTITION_V1,
    "PartitionChangeRecord-v1": PARTITION_CHANGE_V1,
    "RegisterBrokerRecord-v3": REGISTER_BROKER_V3,
    "ConfigRecord-null-value": CONFIG_DELETE,
}


@pytest.mark.parametrize("record,version,vector", [pytest.param(*v, id=k) for k, v in RECORD_VECTORS.items()])
def test_framed_record_vector(record, version, vector):
    expected = unhex(vector)
    assert r.encode_frame(record, version) == expected
    assert r.decode_frame(expected) == (record, version)


# --- a control batch holding LeaderChangeMessage (kraft-log §2.2, 2.3, 2.5) -----------------------

LEADER_CHANGE = r.LeaderChangeMessage(version=0, leader_id=1,
                                      voters=[r.LeaderChangeMessage.Voter(voter_id=i) for i in (1, 2, 3)],
                                      granting_voters=[r.LeaderChangeMessage.Voter(voter_id=i) for i in (1, 2)])
LEADER_CHANGE_VALUE = """
    0000                        # Version 0
    00000001                    # LeaderId 1
    04 00000001 00 00000002 00 00000003 00  # Voters: count 3, each VoterId + tags
    03 00000001 00 00000002 00  # GrantingVoters: count 2
    00                          # tags
"""                             # 34 bytes, no metadata frame
CONTROL_BATCH_HEADER = """
    000000000000000a            # baseOffset 10
    0000005e                    # batchLength 94 = 61 - 12 header bytes + 45 record bytes
    00000002                    # partitionLeaderEpoch 2
    02                          # magic 2
    {crc}                       # CRC-32C of bytes [21, end)
    0020                        # attributes: control bit (0x20), no compression
    00000000                    # lastOffsetDelta 0
    0000018bcfe56800            # baseTimestamp 1700000000000
    0000018bcfe56800            # maxTimestamp, the same
    ffffffffffffffff ffff ffffffff  # producerId -1, producerEpoch -1, baseSequence -1
    00000001                    # recordsCount 1
"""
CONTROL_RECORD = """
    58                          # record length 44 (zig-zag varint)
    00                          # attributes
    00                          # timestampDelta 0
    00                          # offsetDelta 0
    08 0000 0002                # key length 4; key = version 0, type 2 (LEADER_CHANGE)
    44                          # value length 34
""" + LEADER_CHANGE_VALUE + """
    00                          # headers count 0
"""
# The one value not derivable by hand: the CRC, checked below against kafka-python's pure-Python
# CRC-32C (independent of the crc32c package the codec uses).
CONTROL_BATCH_CRC = "1735ab2b"


def test_control_batch_vector():
    body = unhex(CONTROL_RECORD)
    assert len(unhex(LEADER_CHANGE_VALUE)) == 34 and len(body) == 45
    expected = unhex(CONTROL_BATCH_HEADER.format(crc=CONTROL_BATCH_CRC)) + body
    assert f"{_crc32c.crc(expected[21:]):08x}" == CONTROL_BATCH_CRC
    assert LEADER_CHANGE.encode(0) == unhex(LEADER_CHANGE_VALUE)
    assert r.control_batch(10, 2, 1_700_000_000_000, [LEADER_CHANGE]) == expected
    batch = r.read_batch(expected, 0)
    assert batch.is_control and batch.size == len(expected) and batch.next_offset == 11
    assert list(r.iter_records(expected)) == [(10, 2, 1_700_000_000_000, LEADER_CHANGE)]
