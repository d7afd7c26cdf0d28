"""One plain shape for a cluster's metadata, built two ways: from what Kafka's
admin API reports (``admin_view``) and from metashell's ``tree /`` JSON
(``tree_view``), so a fidelity test compares two dicts.

The shape::

    topics    {name: {"id": str, "partitions": {pid: {"leader", "replicas", "isr"[, "elr", "lastKnownElr"]}}}}
    configs   {(resource type, name): {key: value}}   ("broker", "") = cluster default;
              a sensitive value is REDACTED (the admin API never returns it)
    quotas    {((entity type, name or None), ...): {key: float}}
    acls      {(resource type, name, pattern, principal, host, operation, permission)}
    scram     {user: {mechanism: iterations}}
    features  {name: finalized level}                 (metadata features: kraft.version is
              the Raft layer's, compared under quorum)
    brokers   {id: {"rack", "fenced", "endpoint"}}    endpoint = the PLAINTEXT listener host:port
    quorum    {"leader", "epoch", "voters", "kraftVersion"}
"""

from __future__ import annotations

import base64
import uuid

from kafka.admin import ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType
from kafka.admin import ResourcePatternFilter, ResourceType
from kafka.protocol.admin.client_quotas import DescribeClientQuotasRequest
from kafka.protocol.admin.configs import DescribeConfigsRequest

from .admin import describe_cluster, describe_quorum

REDACTED = "[redacted]"
TOPIC, BROKER = 2, 4
DYNAMIC_SOURCES = {1, 2, 3}   # DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG
INTERNAL_TOPICS = {"__consumer_offsets", "__transaction_state"}


def kafka_uuid_text(value) -> str:
    """A topic id as Kafka prints it (URL-safe base64 of the 16 bytes)."""
    if isinstance(value, str):
        value = uuid.UUID(value)
    raw = value.bytes if isinstance(value, uuid.UUID) else bytes(value)
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


# -- from the admin API -----------------------------------------------------------------------

def admin_view(admin, broker_ids: "list[int]", with_elr: bool) -> dict:
    """Everything the fidelity tests compare, as the admin API reports it now."""
    topics = _admin_topics(admin, with_elr)
    features = _admin_features(admin)
    quorum = dict(_admin_quorum(admin), kraftVersion=features.pop("kraft.version", 0))
    return {
        "topics": topics,
        "configs": _admin_configs(admin, sorted(topics), broker_ids),
        "quotas": _admin_quotas(admin),
        "acls": _admin_acls(admin),
        "scram": _admin_scram(admin),
        "features": features,
        "brokers": _admin_brokers(admin),
        "quorum": quorum,
    }


def _admin_topics(admin, with_elr: bool) -> dict:
    out = {}
    for t in admin.describe_topics():
        if t["name"] in INTERNAL_TOPICS:
            continue
        partitions = {p["partition_index"]: {"leader": p["leader_id"], "replicas": p["replica_nodes"],
                                             "isr": sorted(p["isr_nodes"])}
                      for p in t["partitions"]}
        out[t["name"]] = {"id": kafka_uuid_text(t["topic_id"]), "partitions": partitions}
    if with_elr and out:
        _add_elr(admin, out)
    return out


def _add_elr(admin, topics: dict) -> None:
    """ELR and last known ELR (KIP-966) from DescribeTopicPartitions (4.0+)."""
    answer = admin.describe_topic_partitions(sorted(topics))
    assert answer.get("next_cursor") is None, "more partitions than one DescribeTopicPartitions page"
    for t in answer["topics"]:
        for p in t["partitions"]:
            part = topics[t["name"]]["partitions"][p["partition_index"]]
            part["elr"] = sorted(p.get("eligible_leader_replicas") or [])
            part["lastKnownElr"] = sorted(p.get("last_known_elr") or [])


async def _describe_configs(admin, resources, node_id):
    request = DescribeConfigsRequest(
        resources=[DescribeConfigsRequest.DescribeConfigsResource(
            resource_type=rtype, resource_name=name, configuration_keys=None)
            for rtype, name in resources],
        include_synonyms=False, include_documentation=False)
    return await admin._manager.send(request, node_id=node_id)


def _admin_configs(admin, topic_names, broker_ids) -> dict:
    out = {}
    asks = [([(TOPIC, name) for name in topic_names] + [(BROKER, "")], None)]
    asks += [([(BROKER, str(b))], b) for b in broker_ids]
    for resources, node_id in asks:
        response = admin._manager.run(_describe_configs, admin, resources, node_id)
        for result in response.results:
            assert result.error_code == 0, f"DescribeConfigs {result.resource_name}: {result.error_message}"
            kind = "topic" if result.resource_type == TOPIC else "broker"
            wanted = _dynamic_source(result.resource_type, result.resource_name)
            values = {c.name: (REDACTED if c.is_sensitive else c.value)
                      for c in result.configs if c.config_source == wanted}
            if values:
                out[(kind, result.resource_name)] = values
    return out


def _dynamic_source(resource_type: int, name: str) -> int:
    if resource_type == TOPIC:
        return 1
    return 3 if name == "" else 2


async def _describe_quotas(admin):
    request = DescribeClientQuotasRequest(components=[], strict=False)
    return await admin._manager.send(request)


def _admin_quotas(admin) -> dict:
    response = admin._manager.run(_describe_quotas, admin)
    assert response.error_code == 0, response.error_message
    out = {}
    for entry in response.entries:
        entity = tuple(sorted((e.entity_type, e.entity_name) for e in entry.entity))
        out[entity] = {v.key: float(v.value) for v in entry.values}
    return out


def _admin_acls(admin) -> set:
    everything = ACLFilter(principal=None, host=None, operation=ACLOperation.ANY,
                           permission_type=ACLPermissionType.ANY,
                           resource_pattern=ResourcePatternFilter(ResourceType.ANY, None,
                                                                  ACLResourcePatternType.ANY))
    acls, error = admin.describe_acls(everything)
    assert error is None or getattr(error, "errno", 0) == 0, error
    return {(a.resource_pattern.resource_type.name, a.resource_pattern.resource_name,
             a.resource_pattern.pattern_type.name, a.principal, a.host, a.operation.name,
             a.permission_type.name) for a in acls}


def _admin_scram(admin) -> dict:
    try:
        users = admin.describe_user_scram_credentials()
    except Exception as e:  # noqa: BLE001 - releases without KRaft SCRAM (before 3.5)
        if "does not support" in str(e):
            return {}
        raise
    return {user: {c["mechanism"].name.replace("_", "-"): c["iterations"]
                   for c in info["credential_infos"]}
            for user, info in users.items() if info["credential_infos"]}


def _admin_features(admin) -> dict:
    return {name: f["finalized"][1] for name, f in admin.describe_features().items()
            if "finalized" in f and f["finalized"][1] > 0}


def _admin_brokers(admin) -> dict:
    return {b["broker_id"]: {"rack": b["rack"], "fenced": bool(b.get("is_fenced", False)),
                             "endpoint": f"{b['host']}:{b['port']}"}
            for b in describe_cluster(admin)["brokers"]}


def _admin_quorum(admin) -> dict:
    partition = describe_quorum(admin)
    return {"leader": partition["leader_id"], "epoch": partition["leader_epoch"],
            "voters": sorted(v["replica_id"] for v in partition["current_voters"]),
            "highWatermark": partition["high_watermark"]}


# -- from metashell's tree ------------------------------------------------------------------

def tree_view(tree: dict, with_elr: bool) -> dict:
    """The same shape from ``kafka-metadata-shell -o json tree /``."""
    return {
        "topics": _tree_topics(tree["topics"], with_elr),
        "configs": {(kind, "" if name == "<default>" else name): dict(values)
                    for kind, names in tree.get("configs", {}).items()
                    for name, values in names.items() if values},
        "quotas": dict(_tree_quotas(tree.get("clientQuotas", {}), ())),
        "acls": {(a["resourceType"], a["resourceName"], a["patternType"], a["principal"],
                  a["host"], a["operation"], a["permissionType"])
                 for a in tree.get("acls", {}).values()},
        "scram": _tree_scram(tree.get("scram", {})),
        "features": {k: v for k, v in tree.get("features", {}).items() if v > 0},
        "brokers": {int(i): _tree_broker(b) for i, b in tree.get("brokers", {}).items()},
        "quorum": _tree_quorum(tree.get("metadataQuorum", {})),
    }


def _tree_topics(topics: dict, with_elr: bool) -> dict:
    out = {}
    for name, t in topics.items():
        if name in INTERNAL_TOPICS:
            continue
        parts = {}
        for pid, p in t.items():
            if not pid.isdigit():
                continue
            d = p["data"]
            parts[int(pid)] = {"leader": d["leader"], "replicas": d["replicas"], "isr": sorted(d["isr"])}
            if with_elr:
                parts[int(pid)]["elr"] = sorted(d.get("eligibleLeaderReplicas") or [])
                parts[int(pid)]["lastKnownElr"] = sorted(d.get("lastKnownElr") or [])
        out[name] = {"id": t["id"], "partitions": parts}
    return out


def _tree_quotas(node: dict, entity: tuple):
    """Walk metashell's nested quota tree: type -> name -> {key: value, type: ...}."""
    for etype, names in node.items():
        for name, body in names.items():
            key = entity + ((etype, None if name == "<default>" else name),)
            values = {k: float(v) for k, v in body.items() if not isinstance(v, dict)}
            if values:
                yield tuple(sorted(key)), values
            yield from _tree_quotas({k: v for k, v in body.items() if isinstance(v, dict)}, key)


def _tree_scram(scram: dict) -> dict:
    out: dict = {}
    for mechanism, users in scram.items():
        for user, cred in users.items():
            out.setdefault(user, {})[mechanism] = cred["iterations"]
    return out


def _tree_broker(b: dict) -> dict:
    reg = b["registration"]
    plain = [f"{l['host']}:{l['port']}" for l in reg["listeners"] if l["name"] == "PLAINTEXT"]
    return {"rack": reg["rack"], "fenced": b["isFenced"], "endpoint": plain[0] if plain else None}


def _tree_quorum(q: dict) -> dict:
    return {"leader": q.get("leaderId"), "epoch": q.get("leaderEpoch"),
            "voters": sorted(int(v) for v in q.get("voters", {})),
            "kraftVersion": q.get("kraftVersion", 0)}
