"""One-line, human descriptions of records, for ``changes`` and diagnostics.

Secrets never appear here: SCRAM records show user, mechanism and
iterations only, and sensitive config values are redacted unless asked.
"""

from __future__ import annotations

import json

from ..kraft import enums
from ..kraft.secrets import REDACTED
from ..kraft.fields import UNKNOWN_TAGS
from ..timefmt import iso_time
from ..replay.partition_model import DESCRIBE_CHANGE, DESCRIBE_RECORD_TAIL


def _list(v) -> str:
    return "[" + ",".join(map(str, v)) + "]"   # map: no generator frame per item (``log``)


def describe(rec, show_secrets: bool = False) -> str:
    d = rec.data
    if d is None:
        return f"undecodable: {rec.error}"
    return describer(rec.name)(d, show_secrets)


def describer(name: str, whole: bool = False):
    """How records named ``name`` are described: ``fn(data, show_secrets)``
    (data decoded, not None), for callers that describe many (``log``).
    A record with no summary of its own shows its fields, cut at 160
    characters unless ``whole`` (``log --full``)."""
    return _DESCRIBERS.get(name, _whole_fields if whole else _fields)


def _fields(d, show_secrets) -> str:
    text = _whole_fields(d, show_secrets)
    return text if len(text) <= 160 else text[:157] + "..."


def _whole_fields(d, _) -> str:
    if not d:
        return "{}"   # a NoOpRecord: a controller writes one every 500 ms
    return json.dumps({k: v for k, v in d.items() if not k.startswith("_")},
                      separators=(",", ":"), default=str)


def _partition(d, _):
    text = (f"partition {d['partitionId']}: replicas {_list(d['replicas'])} isr {_list(d['isr'])} "
            f"leader {d['leader']}{_partition_leader_state(d)} leaderEpoch {d['leaderEpoch']} "
            f"partitionEpoch {d['partitionEpoch']}")
    for key, is_array in DESCRIBE_RECORD_TAIL:   # fields the catalog gained since
        value = d.get(key)
        text += f" {key} {_list(value) if is_array and value is not None else value}"
    unknown = d.get(UNKNOWN_TAGS)
    if unknown:   # a newer Kafka's fields: named by their tags, never dropped silently
        text += f" unknown tags {_list(tag for tag, _ in unknown)}"
    return text


def _partition_change(d, _):
    """The fields a change sets (those not at their "unchanged" value), as
    the partition model lists them (``DESCRIBE_CHANGE``)."""
    parts = []
    for key, unchanged, is_array, names in DESCRIBE_CHANGE:
        value = d.get(key, unchanged)
        if value is unchanged or value == unchanged:
            continue
        if is_array:
            parts.append(f"{key} {_list(value)}")
        elif names is not None:
            parts.append(f"{key} {names.get(value, value)}")
        else:
            parts.append(f"{key} {value}")
    unknown = d.get(UNKNOWN_TAGS)
    if unknown:   # a newer Kafka's fields: named by their tags, never dropped silently
        parts.append(f"unknown tags {_list(tag for tag, _ in unknown)}")
    return f"partition {d['partitionId']}: " + (", ".join(parts) if parts else "epoch bump only")


def _register_broker(d, _):
    eps = ", ".join(f"{e['name']}://{e['host']}:{e['port']}"
                    for e in sorted(d.get("endPoints", []), key=lambda e: e["name"]))
    state = "fenced" if d.get("fenced", True) else "unfenced"
    return f"broker {d['brokerId']} registered, epoch {d['brokerEpoch']}, {state}" + (f", {eps}" if eps else "")


def _brc(d, _):
    parts = []
    f = d.get("fenced", 0)
    if f:
        parts.append("fenced" if f == 1 else "unfenced")
    if d.get("inControlledShutdown", 0):
        parts.append("in controlled shutdown")
    if d.get("logDirs"):
        parts.append(f"logDirs {len(d['logDirs'])}")
    if d.get("cordonedLogDirs") is not None:
        parts.append(f"cordonedLogDirs {len(d['cordonedLogDirs'])}")
    return f"broker {d['brokerId']} epoch {d['brokerEpoch']}: " + (", ".join(parts) or "no change")


def _config(d, show):
    value = d["value"]
    if value is not None and not show and enums.is_sensitive_config(d["name"]):
        value = REDACTED
    name = d["resourceName"] or "<default>"
    return f"{name}: {d['name']} " + ("deleted" if value is None else f"= {value}")


def _feature(d) -> str:
    """``metadata.version = 27 (4.0-IV3)``: the release name beside the level."""
    level = d.get("featureLevel", d.get("maxFeatureLevel"))
    release = enums.METADATA_VERSIONS.get(level) if d["name"] == "metadata.version" else None
    return f"{d['name']} = {level}" + (f" ({release})" if release else "")


def _partition_leader_state(d) -> str:
    state = d.get("leaderRecoveryState", 0)
    return "" if state == 0 else f" {enums.LEADER_RECOVERY_STATES.get(state, state)}"


def _token(d, _) -> str:
    """A delegation token with its times as ISO-8601 (never its HMAC: the
    record does not hold it)."""
    renewers = ",".join(d.get("renewers") or []) or "-"
    return (f"token {d['tokenId']} owner {d['owner']} renewers {renewers} "
            f"issued {iso_time(d['issueTimestamp'])} expires {iso_time(d['expirationTimestamp'])} "
            f"max {iso_time(d['maxTimestamp'])}")


def _scram(d, _):
    mech = enums.name_of(enums.SCRAM_MECHANISMS, d.get("mechanism", 0))
    its = f", {d['iterations']} iterations" if "iterations" in d else ""
    return f"user {d['name']} {mech}{its}"


def _quota(d, _):
    entity = ", ".join(f"{e['entityType']}={e['entityName'] if e['entityName'] is not None else '<default>'}"
                       for e in d["entity"])
    return f"{entity}: {d['key']} " + ("removed" if d["remove"] else f"= {d['value']}")


_DESCRIBERS = {
    "PartitionRecord": _partition,
    "PartitionChangeRecord": _partition_change,
    "RegisterBrokerRecord": _register_broker,
    "BrokerRegistrationChangeRecord": _brc,
    "FenceBrokerRecord": lambda d, _: f"broker {d['id']} epoch {d['epoch']} fenced",
    "UnfenceBrokerRecord": lambda d, _: f"broker {d['id']} epoch {d['epoch']} unfenced",
    "UnregisterBrokerRecord": lambda d, _: f"broker {d['brokerId']} epoch {d['brokerEpoch']} unregistered",
    "UnregisterControllerRecord": lambda d, _: f"controller {d['controllerId']} unregistered",
    "TopicRecord": lambda d, _: f"topic {d['name']} created, id {d['topicId']}",
    "RemoveTopicRecord": lambda d, _: f"topic {d['topicId']} removed",
    "ConfigRecord": _config,
    "ClientQuotaRecord": _quota,
    "QuotaRecord": _quota,
    "UserScramCredentialRecord": _scram,
    "RemoveUserScramCredentialRecord": _scram,
    "FeatureLevelRecord": lambda d, _: _feature(d),
    "DelegationTokenRecord": _token,
    "RemoveDelegationTokenRecord": lambda d, _: f"token {d['tokenId']} removed",
    "ClearElrRecord": lambda d, _: f"ELRs cleared for {d['topicName'] or 'all topics'}",
}
