"""Every KRaft metadata and control record, described as a :class:`Message`.

This is the project's own description of the bytes (kraft-format.md sections
7 and 9-13); ``schema.Message`` turns each entry into a decoder and an encoder.

Finding a record: search for its name. Each record is one block, in apiKey
order, headed by a short history (which release added which version or
field). Field order is the order of Kafka's schema, tagged fields included
where Kafka lists them (the engine moves them to the tagged section), and
defaults are the ones Kafka declares (``default=`` only where Kafka gives one;
otherwise the type's default applies: 0, false, "", empty, zero UUID).

Tables
------
``METADATA[api_key]``      frame version 1 (Kafka 3.0 - 4.4): apiKeys 0-29 (13 was never assigned)
``METADATA_2_8[api_key]``  frame version 0 (the Kafka 2.8 KRaft preview)
``SUPERSEDED[api_key]``    older layouts that share apiKey *and* version with the current one,
                           tried in order when the current layout does not fit (section 12)
``CONTROL[type]``          control records (types 2-6); ``LEADER_CHANGE_2_8`` is the 2.8 layout
                           of LeaderChangeMessage (no leading ``Version`` field)
``CONTROL_NAMES[type]``    names of the control record types, 0-6

apiKey 30 and above are absent (no release defines them): the reader reports
such records as undecodable and keeps their bytes. (After 4.2, unreleased
trunk had two records claiming 29; Kafka 4.4 released it as
UnregisterControllerRecord.)
"""

from __future__ import annotations

from .fields import Field
from .schema import Message

F = Field

# ---------------------------------------------------------------------------
# Structs shared by several records (same wire shape; the struct names differ)
# ---------------------------------------------------------------------------

# listener endpoint of a broker or controller
_ENDPOINT = (
    F("Name", "string", about="listener name"),
    F("Host", "string"),
    F("Port", "uint16"),
    F("SecurityProtocol", "int16", about="0 PLAINTEXT, 1 SSL, 2 SASL_PLAINTEXT, 3 SASL_SSL"),
)

# supported range of one feature
_FEATURE_RANGE = (
    F("Name", "string", about="feature name"),
    F("MinSupportedVersion", "int16"),
    F("MaxSupportedVersion", "int16"),
)

# ===========================================================================
# Frame version 1: Kafka 3.0 - 4.2 (every record flexible at every version)
# ===========================================================================

# --- 0 RegisterBrokerRecord ------------------------------------------------
# v0 3.0 (adds Fenced over 2.8); v1 3.3 (MV 3.3-IV3, KIP-841) adds InControlledShutdown;
# v2 3.4 (MV 3.4-IV0, KIP-866) adds IsMigratingZkBroker (2nd on the wire);
# v3 3.7 (MV 3.7-IV2, KIP-858 JBOD) adds tagged LogDirs;
# v4 4.4 (KIP-1066) adds tagged CordonedLogDirs (null until the broker reports them).
REGISTER_BROKER = Message("RegisterBrokerRecord", 0, "0-4", [
    F("BrokerId", "int32"),
    F("IsMigratingZkBroker", "bool", "2+", default=False),
    F("IncarnationId", "uuid"),
    F("BrokerEpoch", "int64"),
    F("EndPoints", "[]BrokerEndpoint", fields=_ENDPOINT),
    F("Features", "[]BrokerFeature", fields=_FEATURE_RANGE),
    F("Rack", "string", nullable="0+", about="null = no rack"),
    F("Fenced", "bool", default=True),
    F("InControlledShutdown", "bool", "1+", default=False),
    F("LogDirs", "[]uuid", "3+", tag=0, tagged="3+", about="available log directories"),
    F("CordonedLogDirs", "[]uuid", "4+", nullable="4+", tag=1, tagged="4+", default=None,
      about="cordoned log directories; null = not reported yet"),
])

# --- 1 UnregisterBrokerRecord ----------------------------------------------
# v0 since 2.8/3.0, unchanged.
UNREGISTER_BROKER = Message("UnregisterBrokerRecord", 1, "0", [
    F("BrokerId", "int32"),
    F("BrokerEpoch", "int64"),
])

# --- 2 TopicRecord ---------------------------------------------------------
# v0 since 2.8/3.0. (A v1 with tiered-storage fields lived briefly on trunk in
# 2024 and was reverted: in no release.)
TOPIC = Message("TopicRecord", 2, "0", [
    F("Name", "string"),
    F("TopicId", "uuid"),
])

# --- 3 PartitionRecord -----------------------------------------------------
# v0 3.0; tagged LeaderRecoveryState added to v0 in 3.2 (KIP-704);
# v1 3.7 (MV 3.7-IV2, KIP-858) adds Directories;
# v2 4.0 (MV 4.0-IV1, KIP-966) adds tagged EligibleLeaderReplicas, LastKnownElr
# (the latter spelled LastKnownELR in 3.7; same bytes).
PARTITION = Message("PartitionRecord", 3, "0-2", [
    F("PartitionId", "int32", default=-1),
    F("TopicId", "uuid"),
    F("Replicas", "[]int32", about="preferred order"),
    F("Isr", "[]int32"),
    F("RemovingReplicas", "[]int32"),
    F("AddingReplicas", "[]int32"),
    F("Leader", "int32", default=-1, about="-1 = no leader"),
    F("LeaderRecoveryState", "int8", tag=0, tagged="0+", default=0,
      about="0 RECOVERED, 1 RECOVERING"),
    F("LeaderEpoch", "int32", default=-1),
    F("PartitionEpoch", "int32", default=-1),
    F("Directories", "[]uuid", "1+", about="log directory of each replica, in Replicas order"),
    F("EligibleLeaderReplicas", "[]int32", "2+", nullable="2+", tag=1, tagged="2+", default=None),
    F("LastKnownElr", "[]int32", "2+", nullable="2+", tag=2, tagged="2+", default=None),
])

# --- 4 ConfigRecord --------------------------------------------------------
# v0 since 3.0 (Value became nullable in 3.0: null deletes the key).
CONFIG = Message("ConfigRecord", 4, "0", [
    F("ResourceType", "int8", about="ConfigResource type: 2 topic, 4 broker, 8 broker logger, "
                                    "16 client metrics, 32 group"),
    F("ResourceName", "string", about="\"\" = cluster default"),
    F("Name", "string"),
    F("Value", "string", nullable="0+", about="null = delete the key"),
])

# --- 5 PartitionChangeRecord -----------------------------------------------
# 2.8 had tags 0-1 only; 3.0 adds tags 2-4; 3.2 adds tag 5 (KIP-704);
# v1 3.7 (MV 3.7-IV2) adds tag 8 Directories; v2 4.0 (MV 4.0-IV1) adds tags 6, 7 (ELR).
# Every change field is tagged; its default means "unchanged".
PARTITION_CHANGE = Message("PartitionChangeRecord", 5, "0-2", [
    F("PartitionId", "int32", default=-1),
    F("TopicId", "uuid"),
    F("Isr", "[]int32", nullable="0+", tag=0, tagged="0+", default=None),
    F("Leader", "int32", tag=1, tagged="0+", default=-2, about="-1 = no leader, -2 = unchanged"),
    F("Replicas", "[]int32", nullable="0+", tag=2, tagged="0+", default=None),
    F("RemovingReplicas", "[]int32", nullable="0+", tag=3, tagged="0+", default=None),
    F("AddingReplicas", "[]int32", nullable="0+", tag=4, tagged="0+", default=None),
    F("LeaderRecoveryState", "int8", tag=5, tagged="0+", default=-1,
      about="-1 unchanged, 0 recovered, 1 recovering"),
    F("Directories", "[]uuid", "1+", nullable="1+", tag=8, tagged="1+", default=None),
    F("EligibleLeaderReplicas", "[]int32", "2+", nullable="2+", tag=6, tagged="2+", default=None),
    F("LastKnownElr", "[]int32", "2+", nullable="2+", tag=7, tagged="2+", default=None),
])

# --- 6 AccessControlRecord (removed) ---------------------------------------
# Schema in 2.8-3.4, removed in 3.5; never written by any release (ACLs in
# KRaft use 18/19 since 3.2). Kept so such a record still decodes.
ACCESS_CONTROL = Message("AccessControlRecord", 6, "0", [
    F("ResourceType", "int8"),
    F("ResourceName", "string", nullable="0+"),
    F("PatternType", "int8"),
    F("Principal", "string"),
    F("Host", "string"),
    F("Operation", "int8"),
    F("PermissionType", "int8"),
], about="removed in 3.5; never written")

# --- 7 FenceBrokerRecord ---------------------------------------------------
# v0 since 2.8/3.0; from MV 3.3-IV2 the controller writes
# BrokerRegistrationChangeRecord instead.
FENCE_BROKER = Message("FenceBrokerRecord", 7, "0", [
    F("Id", "int32"),
    F("Epoch", "int64"),
])

# --- 8 UnfenceBrokerRecord -------------------------------------------------
# v0 since 2.8/3.0; superseded like FenceBrokerRecord from MV 3.3-IV2.
UNFENCE_BROKER = Message("UnfenceBrokerRecord", 8, "0", [
    F("Id", "int32"),
    F("Epoch", "int64"),
])

# --- 9 RemoveTopicRecord ---------------------------------------------------
# v0 since 2.8/3.0.
REMOVE_TOPIC = Message("RemoveTopicRecord", 9, "0", [
    F("TopicId", "uuid"),
])

# --- 10 DelegationTokenRecord ----------------------------------------------
# Written from 3.6 (MV 3.6-IV2). Requester was added in 3.6 without a version
# bump; the 3.0-3.5 layout (never written) is in SUPERSEDED.
DELEGATION_TOKEN = Message("DelegationTokenRecord", 10, "0", [
    F("Owner", "string", about="principal"),
    F("Requester", "string"),
    F("Renewers", "[]string"),
    F("IssueTimestamp", "int64"),
    F("MaxTimestamp", "int64"),
    F("ExpirationTimestamp", "int64"),
    F("TokenId", "string"),
])

# --- 11 UserScramCredentialRecord ------------------------------------------
# Written from 3.5 (MV 3.5-IV2), flat layout. The 3.0-3.4 nested layout
# (never written) shares version 0 and is in SUPERSEDED.
USER_SCRAM_CREDENTIAL = Message("UserScramCredentialRecord", 11, "0", [
    F("Name", "string"),
    F("Mechanism", "int8", about="1 SCRAM-SHA-256, 2 SCRAM-SHA-512"),
    F("Salt", "bytes"),
    F("StoredKey", "bytes"),
    F("ServerKey", "bytes"),
    F("Iterations", "int32"),
])

# --- 12 FeatureLevelRecord -------------------------------------------------
# 3.3+ layout (one level per feature; written from MV 3.3-IV0, first record of
# every log and snapshot since). Version stays 0 forever. The 3.0-3.2 min/max
# layout is in SUPERSEDED.
FEATURE_LEVEL = Message("FeatureLevelRecord", 12, "0", [
    F("Name", "string", about="e.g. metadata.version"),
    F("FeatureLevel", "int16", about="0 = feature disabled"),
])

# --- 13: never assigned ----------------------------------------------------

# --- 14 ClientQuotaRecord --------------------------------------------------
# v0 since 3.0 (called QuotaRecord in 2.8, same fields).
CLIENT_QUOTA = Message("ClientQuotaRecord", 14, "0", [
    F("Entity", "[]EntityData", fields=(
        F("EntityType", "string", about="user, client-id or ip"),
        F("EntityName", "string", nullable="0+", about="null = default entity"),
    )),
    F("Key", "string"),
    F("Value", "float64"),
    F("Remove", "bool"),
])

# --- 15 ProducerIdsRecord --------------------------------------------------
# v0 3.0. NextProducerId was named ProducerIdsEnd in 3.0/3.1 (same bytes).
PRODUCER_IDS = Message("ProducerIdsRecord", 15, "0", [
    F("BrokerId", "int32"),
    F("BrokerEpoch", "int64", default=-1),
    F("NextProducerId", "int64", about="first id of the next block"),
])

# --- 16 RemoveFeatureLevelRecord (removed) ---------------------------------
# Schema in 3.0-3.2, removed in 3.3; never written. Kept for decoding.
REMOVE_FEATURE_LEVEL = Message("RemoveFeatureLevelRecord", 16, "0", [
    F("Name", "string"),
], about="removed in 3.3; never written")

# --- 17 BrokerRegistrationChangeRecord -------------------------------------
# v0 schema 3.0, written from MV 3.3-IV2 (fence/unfence); v1 3.3 (MV 3.3-IV3,
# controlled shutdown); v2 3.7 (MV 3.7-IV2, log dirs); v3 4.4 (KIP-1066, cordoned
# log dirs). The controller picks the version by purpose.
BROKER_REGISTRATION_CHANGE = Message("BrokerRegistrationChangeRecord", 17, "0-3", [
    F("BrokerId", "int32"),
    F("BrokerEpoch", "int64"),
    F("Fenced", "int8", tag=0, tagged="0+", about="-1 unfenced, 0 no change, 1 fenced"),
    F("InControlledShutdown", "int8", "1+", tag=1, tagged="1+",
      about="0 no change, 1 in controlled shutdown"),
    F("LogDirs", "[]uuid", "2+", tag=2, tagged="2+", about="available log directories"),
    F("CordonedLogDirs", "[]uuid", "3+", nullable="3+", tag=3, tagged="3+", default=None,
      about="cordoned log directories; null = no change"),
])

# --- 18 AccessControlEntryRecord -------------------------------------------
# v0 3.2 (KRaft ACLs).
ACCESS_CONTROL_ENTRY = Message("AccessControlEntryRecord", 18, "0", [
    F("Id", "uuid"),
    F("ResourceType", "int8"),
    F("ResourceName", "string"),
    F("PatternType", "int8"),
    F("Principal", "string", about="e.g. User:alice"),
    F("Host", "string"),
    F("Operation", "int8"),
    F("PermissionType", "int8"),
])

# --- 19 RemoveAccessControlEntryRecord -------------------------------------
# v0 3.2.
REMOVE_ACCESS_CONTROL_ENTRY = Message("RemoveAccessControlEntryRecord", 19, "0", [
    F("Id", "uuid"),
])

# --- 20 NoOpRecord ---------------------------------------------------------
# v0 3.3 (MV 3.3-IV1): written periodically to advance the high watermark.
NO_OP = Message("NoOpRecord", 20, "0", [])

# --- 21 ZkMigrationStateRecord ---------------------------------------------
# v0 3.4 (MV 3.4-IV0); 3.5 renumbered the states (3.5+: 1 MIGRATION, 2 PRE_MIGRATION; 3.4
# wrote only 0 NONE and 1 PRE_MIGRATION), shown as the number written;
# 4.x no longer writes it but still reads it. (Kafka's file: ZkMigrationRecord.json.)
ZK_MIGRATION_STATE = Message("ZkMigrationStateRecord", 21, "0", [
    F("ZkMigrationState", "int8"),
])

# --- 22 RemoveUserScramCredentialRecord ------------------------------------
# v0 3.5 (MV 3.5-IV2).
REMOVE_USER_SCRAM_CREDENTIAL = Message("RemoveUserScramCredentialRecord", 22, "0", [
    F("Name", "string"),
    F("Mechanism", "int8"),
])

# --- 23 BeginTransactionRecord ---------------------------------------------
# v0 3.6 (MV 3.6-IV1, KIP-868 metadata transactions).
BEGIN_TRANSACTION = Message("BeginTransactionRecord", 23, "0", [
    F("Name", "string", nullable="0+", tag=0, tagged="0+", default=None),
])

# --- 24 EndTransactionRecord -----------------------------------------------
# v0 3.6 (MV 3.6-IV1).
END_TRANSACTION = Message("EndTransactionRecord", 24, "0", [])

# --- 25 AbortTransactionRecord ---------------------------------------------
# v0 3.6 (MV 3.6-IV1).
ABORT_TRANSACTION = Message("AbortTransactionRecord", 25, "0", [
    F("Reason", "string", nullable="0+", tag=0, tagged="0+", default=None),
])

# --- 26 RemoveDelegationTokenRecord ----------------------------------------
# v0 3.6 (MV 3.6-IV2).
REMOVE_DELEGATION_TOKEN = Message("RemoveDelegationTokenRecord", 26, "0", [
    F("TokenId", "string"),
])

# --- 27 RegisterControllerRecord -------------------------------------------
# v0 3.7 (MV 3.7-IV0, KIP-919).
REGISTER_CONTROLLER = Message("RegisterControllerRecord", 27, "0", [
    F("ControllerId", "int32"),
    F("IncarnationId", "uuid"),
    F("ZkMigrationReady", "bool"),
    F("EndPoints", "[]ControllerEndpoint", fields=_ENDPOINT),
    F("Features", "[]ControllerFeature", fields=_FEATURE_RANGE),
])

# --- 28 ClearElrRecord -----------------------------------------------------
# v0 4.0 (MV 4.0-IV1, KIP-966).
CLEAR_ELR = Message("ClearElrRecord", 28, "0", [
    F("TopicName", "string", about="\"\" = all topics"),
])

# --- 29 UnregisterControllerRecord ----------------------------------------
# v0 4.4 (a controller's registration removed). Unreleased trunk once gave 29
# to another record too; 4.4 settled it.
UNREGISTER_CONTROLLER = Message("UnregisterControllerRecord", 29, "0", [
    F("ControllerId", "int32"),
])

# --- 30+: not here (no release defines them) --------------------------------

METADATA: dict[int, Message] = {m.api_key: m for m in (
    REGISTER_BROKER, UNREGISTER_BROKER, TOPIC, PARTITION, CONFIG, PARTITION_CHANGE,
    ACCESS_CONTROL, FENCE_BROKER, UNFENCE_BROKER, REMOVE_TOPIC, DELEGATION_TOKEN,
    USER_SCRAM_CREDENTIAL, FEATURE_LEVEL, CLIENT_QUOTA, PRODUCER_IDS, REMOVE_FEATURE_LEVEL,
    BROKER_REGISTRATION_CHANGE, ACCESS_CONTROL_ENTRY, REMOVE_ACCESS_CONTROL_ENTRY, NO_OP,
    ZK_MIGRATION_STATE, REMOVE_USER_SCRAM_CREDENTIAL, BEGIN_TRANSACTION, END_TRANSACTION,
    ABORT_TRANSACTION, REMOVE_DELEGATION_TOKEN, REGISTER_CONTROLLER, CLEAR_ELR,
    UNREGISTER_CONTROLLER,
)}

# ===========================================================================
# Superseded layouts: same apiKey and version as the current one (section 12)
# ===========================================================================

# --- 10 DelegationTokenRecord, 3.0-3.5 layout (no Requester; never written)
DELEGATION_TOKEN_3_0 = Message("DelegationTokenRecord", 10, "0", [
    F("Owner", "string"),
    F("Renewers", "[]string"),
    F("IssueTimestamp", "int64"),
    F("MaxTimestamp", "int64"),
    F("ExpirationTimestamp", "int64"),
    F("TokenId", "string"),
], layout="3.0-3.5")

# --- 11 UserScramCredentialRecord, 3.0-3.4 layout (nested; never written)
USER_SCRAM_CREDENTIAL_3_0 = Message("UserScramCredentialRecord", 11, "0", [
    F("Name", "string"),
    F("CredentialInfos", "[]CredentialInfo", fields=(
        F("Mechanism", "int8"),
        F("Salt", "bytes"),
        F("SaltedPassword", "bytes"),
        F("Iterations", "int32"),
    )),
], layout="3.0-3.4")

# --- 12 FeatureLevelRecord, 3.0-3.2 layout (min/max range; not written in practice)
FEATURE_LEVEL_3_0 = Message("FeatureLevelRecord", 12, "0", [
    F("Name", "string"),
    F("MinFeatureLevel", "int16"),
    F("MaxFeatureLevel", "int16"),
], layout="3.0-3.2")

SUPERSEDED: dict[int, list[Message]] = {
    10: [DELEGATION_TOKEN_3_0],
    11: [USER_SCRAM_CREDENTIAL_3_0],
    12: [FEATURE_LEVEL_3_0],
}

# ===========================================================================
# Frame version 0: Kafka 2.8 (section 11). Only version 0 exists; most records
# are NOT flexible (int16/int32 lengths, no tagged section).
# ===========================================================================

_NOT_FLEXIBLE = dict(flexible="none", frame=0)

# --- 0 RegisterBrokerRecord (2.8: no Fenced)
REGISTER_BROKER_2_8 = Message("RegisterBrokerRecord", 0, "0", [
    F("BrokerId", "int32"),
    F("IncarnationId", "uuid"),
    F("BrokerEpoch", "int64"),
    F("EndPoints", "[]BrokerEndpoint", fields=_ENDPOINT),
    F("Features", "[]BrokerFeature", fields=_FEATURE_RANGE),
    F("Rack", "string", nullable="0+"),
], **_NOT_FLEXIBLE)

# --- 1 UnregisterBrokerRecord
UNREGISTER_BROKER_2_8 = Message("UnregisterBrokerRecord", 1, "0", [
    F("BrokerId", "int32"),
    F("BrokerEpoch", "int64"),
], **_NOT_FLEXIBLE)

# --- 2 TopicRecord
TOPIC_2_8 = Message("TopicRecord", 2, "0", [
    F("Name", "string"),
    F("TopicId", "uuid"),
], **_NOT_FLEXIBLE)

# --- 3 PartitionRecord (2.8: Removing/Adding nullable, no recovery state)
PARTITION_2_8 = Message("PartitionRecord", 3, "0", [
    F("PartitionId", "int32", default=-1),
    F("TopicId", "uuid"),
    F("Replicas", "[]int32"),
    F("Isr", "[]int32"),
    F("RemovingReplicas", "[]int32", nullable="0+"),
    F("AddingReplicas", "[]int32", nullable="0+"),
    F("Leader", "int32", default=-1),
    F("LeaderEpoch", "int32", default=-1),
    F("PartitionEpoch", "int32", default=-1),
], **_NOT_FLEXIBLE)

# --- 4 ConfigRecord (2.8: Value not nullable)
CONFIG_2_8 = Message("ConfigRecord", 4, "0", [
    F("ResourceType", "int8"),
    F("ResourceName", "string"),
    F("Name", "string"),
    F("Value", "string"),
], **_NOT_FLEXIBLE)

# --- 5 PartitionChangeRecord (2.8: flexible, tags 0-1 only)
PARTITION_CHANGE_2_8 = Message("PartitionChangeRecord", 5, "0", [
    F("PartitionId", "int32", default=-1),
    F("TopicId", "uuid"),
    F("Isr", "[]int32", nullable="0+", tag=0, tagged="0+", default=None),
    F("Leader", "int32", tag=1, tagged="0+", default=-2),
], frame=0)

# --- 6 AccessControlRecord (flexible; never written)
ACCESS_CONTROL_2_8 = Message("AccessControlRecord", 6, "0", list(ACCESS_CONTROL.fields), frame=0,
                             about="never written")

# --- 7 FenceBrokerRecord
FENCE_BROKER_2_8 = Message("FenceBrokerRecord", 7, "0", [
    F("Id", "int32"),
    F("Epoch", "int64"),
], **_NOT_FLEXIBLE)

# --- 8 UnfenceBrokerRecord
UNFENCE_BROKER_2_8 = Message("UnfenceBrokerRecord", 8, "0", [
    F("Id", "int32"),
    F("Epoch", "int64"),
], **_NOT_FLEXIBLE)

# --- 9 RemoveTopicRecord
REMOVE_TOPIC_2_8 = Message("RemoveTopicRecord", 9, "0", [
    F("TopicId", "uuid"),
], **_NOT_FLEXIBLE)

# --- 10 DelegationTokenRecord (never written)
DELEGATION_TOKEN_2_8 = Message("DelegationTokenRecord", 10, "0", list(DELEGATION_TOKEN_3_0.fields),
                               about="never written", **_NOT_FLEXIBLE)

# --- 11 UserScramCredentialRecord (never written)
USER_SCRAM_CREDENTIAL_2_8 = Message("UserScramCredentialRecord", 11, "0",
                                    list(USER_SCRAM_CREDENTIAL_3_0.fields),
                                    about="never written", **_NOT_FLEXIBLE)

# --- 12 FeatureLevelRecord (min/max; no 2.8 path writes it)
FEATURE_LEVEL_2_8 = Message("FeatureLevelRecord", 12, "0", list(FEATURE_LEVEL_3_0.fields),
                            about="never written", **_NOT_FLEXIBLE)

# --- 14 QuotaRecord (renamed ClientQuotaRecord in 3.0)
QUOTA_2_8 = Message("QuotaRecord", 14, "0", list(CLIENT_QUOTA.fields), **_NOT_FLEXIBLE)

METADATA_2_8: dict[int, Message] = {m.api_key: m for m in (
    REGISTER_BROKER_2_8, UNREGISTER_BROKER_2_8, TOPIC_2_8, PARTITION_2_8, CONFIG_2_8,
    PARTITION_CHANGE_2_8, ACCESS_CONTROL_2_8, FENCE_BROKER_2_8, UNFENCE_BROKER_2_8,
    REMOVE_TOPIC_2_8, DELEGATION_TOKEN_2_8, USER_SCRAM_CREDENTIAL_2_8, FEATURE_LEVEL_2_8,
    QUOTA_2_8,
)}

# ===========================================================================
# Control records (section 7): keyed by control type, read at schema version 0,
# flexible from version 0, each (3.0+) beginning with its own Version field.
# ===========================================================================

CONTROL_NAMES: dict[int, str] = {
    0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER",
    4: "SNAPSHOT_FOOTER", 5: "KRAFT_VERSION", 6: "KRAFT_VOTERS",
}

_CONTROL = dict(kind="control")

# --- 2 LeaderChangeMessage -------------------------------------------------
# 2.8 layout has no leading Version (LEADER_CHANGE_2_8 below); Version added
# for 3.0. v1 (3.9, KIP-853) adds Voter.VoterDirectoryId, but every release
# writes and reads version 0, so the directory id is never on disk.
LEADER_CHANGE = Message("LeaderChangeMessage", 2, "0-1", [
    F("Version", "int16", about="written as 0"),
    F("LeaderId", "int32"),
    F("Voters", "[]Voter", fields=(
        F("VoterId", "int32"),
        F("VoterDirectoryId", "uuid", "1+"),
    )),
    F("GrantingVoters", "[]Voter", fields=(
        F("VoterId", "int32"),
        F("VoterDirectoryId", "uuid", "1+"),
    )),
], **_CONTROL)

# --- 2 LeaderChangeMessage, Kafka 2.8 layout (no Version field)
LEADER_CHANGE_2_8 = Message("LeaderChangeMessage", 2, "0", [
    F("LeaderId", "int32"),
    F("Voters", "[]Voter", fields=(F("VoterId", "int32"),)),
    F("GrantingVoters", "[]Voter", fields=(F("VoterId", "int32"),)),
], frame=0, layout="2.8", **_CONTROL)

# --- 3 SnapshotHeaderRecord ------------------------------------------------
# 3.0+: first record of every snapshot and bootstrap.checkpoint.
SNAPSHOT_HEADER = Message("SnapshotHeaderRecord", 3, "0", [
    F("Version", "int16"),
    F("LastContainedLogTimestamp", "int64", about="append time (ms) of the last record in the "
                                                  "snapshot; 0 in bootstrap.checkpoint"),
], **_CONTROL)

# --- 4 SnapshotFooterRecord ------------------------------------------------
# 3.0+: last record of every snapshot and bootstrap.checkpoint.
SNAPSHOT_FOOTER = Message("SnapshotFooterRecord", 4, "0", [
    F("Version", "int16"),
], **_CONTROL)

# --- 5 KRaftVersionRecord --------------------------------------------------
# Type defined in 3.8, written from 3.9 (kraft.version >= 1), mid-log on upgrade from 4.1.
KRAFT_VERSION = Message("KRaftVersionRecord", 5, "0", [
    F("Version", "int16"),
    F("KRaftVersion", "int16", about="kraft.version feature level"),
], **_CONTROL)

# --- 6 VotersRecord --------------------------------------------------------
# Type defined in 3.8, written from 3.9 (KIP-853 dynamic quorums).
VOTERS = Message("VotersRecord", 6, "0", [
    F("Version", "int16"),
    F("Voters", "[]Voter", fields=(
        F("VoterId", "int32"),
        F("VoterDirectoryId", "uuid"),
        F("Endpoints", "[]Endpoint", fields=(
            F("Name", "string", about="listener name"),
            F("Host", "string"),
            F("Port", "uint16"),
        )),
        F("KRaftVersionFeature", "KRaftVersionFeature", fields=(
            F("MinSupportedVersion", "int16"),
            F("MaxSupportedVersion", "int16"),
        )),
    )),
], **_CONTROL)

CONTROL: dict[int, Message] = {m.api_key: m for m in (
    LEADER_CHANGE, SNAPSHOT_HEADER, SNAPSHOT_FOOTER, KRAFT_VERSION, VOTERS,
)}


def lookup(frame: int, api_key: int) -> Message | None:
    """The current layout of metadata record ``api_key`` in frame version
    ``frame`` (0 = Kafka 2.8, 1 = 3.0+), or None when there is none."""
    if frame == 1:
        return METADATA.get(api_key)
    if frame == 0:
        return METADATA_2_8.get(api_key)
    return None
