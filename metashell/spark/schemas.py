"""The tables of the ``kraft-metadata`` source: their names and columns.

One Spark DDL string per table, the single source of truth: the data
source declares it to Spark and the Arrow batches are built from it
(``partitions``' columns come from the partition model, which makes them
from the catalog's PartitionRecord). Every
table starts with ``cluster`` (the path as found) and ``cluster_id`` (from
``meta.properties``, else null). Times are UTC timestamps; ``*_offset``
columns are log offsets. README "Fleet pipeline on Spark" documents them.
"""

from __future__ import annotations

from ..replay.partition_model import spark_ddl

_KEY = "cluster STRING, cluster_id STRING"
_CHANGE = "last_change_offset BIGINT, last_change_time TIMESTAMP"
_LISTENERS = "ARRAY<STRUCT<name: STRING, host: STRING, port: INT, security_protocol: STRING>>"
_FEATURE_RANGES = "MAP<STRING, STRUCT<min: INT, max: INT>>"

IMAGE_TABLES = {
    "clusters": (
        "kind STRING, node_id INT, snapshot STRING, segments ARRAY<STRING>, "
        "metadata_version INT, metadata_release STRING, last_offset BIGINT, last_time TIMESTAMP, "
        "leader_id INT, leader_epoch INT, brokers INT, fenced_brokers INT, "
        "in_controlled_shutdown INT, controllers INT, topics INT, partitions BIGINT, "
        "under_replicated BIGINT, offline BIGINT, under_min_isr BIGINT, "
        "records_applied BIGINT, records_skipped BIGINT, records_dropped BIGINT, "
        "records_by_type MAP<STRING, BIGINT>, "
        "problems ARRAY<STRUCT<file: STRING, byte: BIGINT, offset: BIGINT, message: STRING, "
        "text: STRING>>, state STRING, notes ARRAY<STRING>"),
    "topics": f"topic STRING, topic_id STRING, partitions INT, {_CHANGE}",
    # a column per PartitionRecord field, made from the catalog (replay/partition_model.py)
    "partitions": f"topic STRING, {spark_ddl()}, {_CHANGE}",
    "brokers": (
        "broker_id INT, epoch BIGINT, incarnation_id STRING, fenced BOOLEAN, "
        f"in_controlled_shutdown BOOLEAN, rack STRING, listeners {_LISTENERS}, "
        f"features {_FEATURE_RANGES}, is_migrating_zk_broker BOOLEAN, log_dirs ARRAY<STRING>, "
        f"registered_at TIMESTAMP, registered_at_offset BIGINT, {_CHANGE}"),
    "controllers": (
        f"controller_id INT, incarnation_id STRING, zk_migration_ready BOOLEAN, "
        f"listeners {_LISTENERS}, features {_FEATURE_RANGES}, {_CHANGE}"),
    "configs": f"resource_type STRING, resource_name STRING, key STRING, value STRING, {_CHANGE}",
    "features": f"feature STRING, level INT, {_CHANGE}",
    "acls": (
        "acl_id STRING, resource_type STRING, resource_name STRING, pattern_type STRING, "
        f"principal STRING, host STRING, operation STRING, permission_type STRING, {_CHANGE}"),
    "client_quotas": f"entity MAP<STRING, STRING>, key STRING, value DOUBLE, {_CHANGE}",
    "scram_users": f"mechanism STRING, user STRING, iterations INT, {_CHANGE}",
    "delegation_tokens": (
        "token_id STRING, owner STRING, requester STRING, renewers ARRAY<STRING>, "
        f"issue_timestamp BIGINT, max_timestamp BIGINT, expiration_timestamp BIGINT, {_CHANGE}"),
    "producer_ids": (
        f"next_producer_id BIGINT, last_broker_id INT, last_broker_epoch BIGINT, {_CHANGE}"),
    "quorum": (
        "leader_id INT, leader_epoch INT, offset BIGINT, time TIMESTAMP, kraft_version INT, "
        "voters ARRAY<STRUCT<voter_id: INT, directory_id: STRING, "
        "endpoints: ARRAY<STRUCT<name: STRING, host: STRING, port: INT>>, "
        f"kraft_version: STRUCT<min: INT, max: INT>>>, {_CHANGE}"),
}

HISTORY_TABLES = {
    "records": (
        "file STRING, offset BIGINT, batch_base_offset BIGINT, batch_position BIGINT, "
        "leader_epoch INT, append_time TIMESTAMP, control BOOLEAN, type STRING, version INT, "
        "topic_id STRING, partition INT, broker_id INT, resource STRING, value STRING"),
    "partition_changes": (
        "file STRING, offset BIGINT, time TIMESTAMP, type STRING, topic STRING, topic_id STRING, "
        "partition INT, leader INT, leader_epoch INT, partition_epoch INT, isr ARRAY<INT>, "
        "replicas ARRAY<INT>"),
}

TABLES = {**IMAGE_TABLES, **HISTORY_TABLES}


def ddl(table: str) -> str:
    """The Spark DDL schema of ``table`` (KeyError for an unknown name)."""
    return f"{_KEY}, {TABLES[table]}"
