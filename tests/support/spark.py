"""Helpers of the Spark tests: whether Spark can run here, reading a table
into plain Python, and the shell's own answers for the same input (run
in-process through its CLI)."""

from __future__ import annotations

import io
import json
import os
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from metashell.timefmt import iso_time


def spark_unavailable() -> "str | None":
    """Why Spark cannot run here, or None."""
    try:
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as e:
        return f"the spark extra is not installed ({e}); pip install -e '.[spark]'"
    java_home = os.environ.get("JAVA_HOME")
    if shutil.which("java") is None and not (java_home and os.path.exists(
            os.path.join(java_home, "bin", "java"))):
        return "no Java found (PATH or JAVA_HOME); Spark needs Java 17 or 21"
    return None


def require_spark() -> None:
    """Skip (fail under CI) when Spark cannot run here."""
    reason = spark_unavailable()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the Spark tests, but {reason}")
    pytest.skip(reason)



def read_table(spark, table: str, paths, **options) -> list[dict]:
    """Every row of ``table`` as a dict (timestamps as epoch ms, structs and maps as dicts)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import TimestampType

    reader = spark.read.format("kraft-metadata").option("table", table)
    for key, value in options.items():
        reader = reader.option(key, value)
    df = reader.load(paths)
    for field in df.schema.fields:
        if isinstance(field.dataType, TimestampType):
            df = df.withColumn(field.name, F.unix_millis(field.name))
    return [r.asDict(recursive=True) for r in df.collect()]


def shell(path, *words, until_offset=None, show_secrets=False) -> tuple[int, str, str]:
    """``kafka-metadata-shell -s PATH -o json WORDS...``: (status, stdout, stderr)."""
    from metashell.cli import main

    args = ["-s", str(path), "-o", "json"]
    if until_offset is not None:
        args += ["--until-offset", str(until_offset)]
    if show_secrets:
        args.append("--show-secrets")
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(args + list(words), standalone_mode=False)
    return status, out.getvalue(), err.getvalue()


def shell_json(path, *words, **kwargs):
    status, out, err = shell(path, *words, **kwargs)
    assert status == 0, err
    return json.loads(out)


def by_cluster(rows: list[dict]) -> dict:
    out: dict = {}
    for r in rows:
        out.setdefault(r["cluster"], []).append(r)
    return out


# -- rows back to the tree's shape ------------------------------------------------------------

def _listeners(ls):
    return [{"name": e["name"], "host": e["host"], "port": e["port"],
             "securityProtocol": e["security_protocol"]} for e in ls]


def _features(fs):
    return {k: {"min": v["min"], "max": v["max"]} for k, v in fs.items()}


def as_tree(table: str, rows: list[dict]) -> dict:
    t: dict = {}
    for r in rows:
        if table == "topics":
            t[r["topic"]] = {"id": r["topic_id"], "name": r["topic"], "partitions": r["partitions"]}
        elif table == "partitions":
            t.setdefault(r["topic"], {})[str(r["partition"])] = {"data": {
                "partitionId": r["partition"], "topicId": r["topic_id"], "replicas": r["replicas"],
                "isr": r["isr"], "removingReplicas": r["removing_replicas"],
                "addingReplicas": r["adding_replicas"], "leader": r["leader"],
                "leaderRecoveryState": r["leader_recovery_state"],
                "leaderEpoch": r["leader_epoch"], "partitionEpoch": r["partition_epoch"],
                "directories": r["directories"], "eligibleLeaderReplicas": r["elr"],
                "lastKnownElr": r["last_known_elr"]}}
        elif table == "brokers":
            b = {"registration": {
                "brokerId": r["broker_id"], "brokerEpoch": r["epoch"],
                "incarnationId": r["incarnation_id"], "listeners": _listeners(r["listeners"]),
                "features": _features(r["features"]), "rack": r["rack"], "fenced": r["fenced"],
                "inControlledShutdown": r["in_controlled_shutdown"],
                "isMigratingZkBroker": r["is_migrating_zk_broker"], "logDirs": r["log_dirs"]},
                "isFenced": r["fenced"], "inControlledShutdown": r["in_controlled_shutdown"],
                "registeredAt": iso_time(r["registered_at"]),
                "registeredAtOffset": r["registered_at_offset"]}
            t[str(r["broker_id"])] = b
        elif table == "controllers":
            t[str(r["controller_id"])] = {"registration": {
                "controllerId": r["controller_id"], "incarnationId": r["incarnation_id"],
                "zkMigrationReady": r["zk_migration_ready"],
                "listeners": _listeners(r["listeners"]), "features": _features(r["features"])}}
        elif table == "configs":
            t.setdefault(r["resource_type"], {}).setdefault(r["resource_name"], {})[r["key"]] = r["value"]
        elif table == "features":
            t[r["feature"]] = r["level"]
        elif table == "acls":
            t[r["acl_id"]] = {"resourceType": r["resource_type"], "resourceName": r["resource_name"],
                              "patternType": r["pattern_type"], "principal": r["principal"],
                              "host": r["host"], "operation": r["operation"],
                              "permissionType": r["permission_type"]}
        elif table == "client_quotas":
            node = t
            for etype, ename in sorted(r["entity"].items()):
                node = node.setdefault(etype, {}).setdefault("<default>" if ename is None else ename, {})
            node[r["key"]] = r["value"]
        elif table == "scram_users":
            t.setdefault(r["mechanism"], {})[r["user"]] = r["iterations"]
        elif table == "delegation_tokens":
            t[r["token_id"]] = {"owner": r["owner"], "requester": r["requester"],
                                "renewers": r["renewers"], "issueTimestamp": r["issue_timestamp"],
                                "maxTimestamp": r["max_timestamp"],
                                "expirationTimestamp": r["expiration_timestamp"]}
        elif table == "producer_ids":
            t = {"nextProducerId": r["next_producer_id"]}
            if r["last_broker_id"] is not None:
                t.update(lastBrokerId=r["last_broker_id"], lastBrokerEpoch=r["last_broker_epoch"])
        elif table == "quorum":
            voters = {}
            for v in r["voters"]:
                voters[str(v["voter_id"])] = {} if v["endpoints"] is None else {
                    "directoryId": v["directory_id"], "endpoints": v["endpoints"],
                    "kraftVersion": v["kraft_version"]}
            t = {"leaderId": r["leader_id"], "leaderEpoch": r["leader_epoch"], "offset": r["offset"],
                 "time": iso_time(r["time"]), "kraftVersion": r["kraft_version"], "voters": voters}
    return t


def from_tree(table: str, tree: dict) -> dict:
    """The part of the shell's tree a table shows."""
    if table in ("topics", "partitions"):
        out = {}
        for name, node in tree["topics"].items():
            parts = {k: v for k, v in node.items() if k.isdigit()}
            if table == "partitions":
                if parts:
                    out[name] = parts
            else:
                out[name] = {"id": node["id"], "name": node["name"], "partitions": len(parts)}
        return out
    if table == "brokers":   # registeredAtOffset: null where the tree does not show it (yet)
        return {b: {"registeredAtOffset": None, **node} for b, node in tree["brokers"].items()}
    if table == "quorum":   # leader: the old shell's text of leaderId and leaderEpoch
        return {k: v for k, v in tree["metadataQuorum"].items() if k != "leader"}
    if table == "scram_users":
        return {m: {u: v["iterations"] for u, v in users.items()}
                for m, users in tree["scram"].items() if users}
    key = {"client_quotas": "clientQuotas", "delegation_tokens": "delegationTokens",
           "producer_ids": "producerIds", "quorum": "metadataQuorum"}.get(table, table)
    return tree[key]
