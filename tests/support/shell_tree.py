"""Comparing one cluster's rows of the kraft-metadata source with what the
shell itself shows of the same input (``kafka-metadata-shell -s PATH -o json
tree /`` and ``summary``), field by field: the image tables turned back into
the tree's shape (:func:`.spark.as_tree`, independently of how the source
built them) and the clusters row against the summary. The local-path tests
and the store tests (HDFS, S3) check their rows with the same functions."""

from __future__ import annotations

import json

from metashell.render import collapse_repeats
from metashell.timefmt import iso_time
from tests.support.spark import as_tree, from_tree, shell, shell_json

IMAGE = ("topics", "partitions", "brokers", "controllers", "configs", "features", "acls",
         "client_quotas", "scram_users", "delegation_tokens", "producer_ids", "quorum")


def check_against_the_shell(tables: dict, cluster: str, path) -> None:
    """The rows of ``cluster`` in ``tables`` (table -> cluster -> rows, as
    :func:`.spark.by_cluster` groups them) equal the shell's tree and summary
    of the local ``path``. ``cluster`` may be a store URI of a copy of
    ``path``: the clusters row names files by that URI, the shell by ``path``."""
    tree = shell_json(path, "tree", "/")
    for table in IMAGE:
        assert as_tree(table, tables[table].get(cluster, [])) == from_tree(table, tree), table
    (row,) = tables["clusters"][cluster]
    check_clusters_row(_named_locally(row, cluster, str(path)), path, tree)


def _named_locally(value, uri: str, path: str):
    """``value`` with the store URI ``uri`` written as the local ``path``."""
    if isinstance(value, str):
        return value.replace(uri, path)
    if isinstance(value, list):
        return [_named_locally(v, uri, path) for v in value]
    if isinstance(value, dict):
        return {k: _named_locally(v, uri, path) for k, v in value.items()}
    return value


def check_clusters_row(row: dict, path, tree: dict) -> None:
    """The clusters row of ``path`` says what the shell's summary says."""
    status, out, stderr = shell(path, "summary")
    s = json.loads(out)
    local = tree["local"]
    assert row["cluster_id"] == local.get("clusterId")
    assert row["node_id"] == local.get("nodeId")
    assert (row["snapshot"], row["segments"]) == (local["loaded"]["snapshot"],
                                                  local["loaded"]["segments"])
    mv = s["metadataVersion"]
    assert (row["metadata_version"], row["metadata_release"]) == (mv["level"], mv["release"])
    assert row["last_offset"] == (s["lastOffset"] if s["lastOffset"] >= 0 else None)
    assert iso_time(row["last_time"]) == s["lastTime"]
    assert (row["leader_id"], row["leader_epoch"]) == (s["quorum"]["leaderId"],
                                                       s["quorum"]["leaderEpoch"])
    b = s["brokers"]
    assert (row["brokers"], row["fenced_brokers"], row["in_controlled_shutdown"]) == (
        len(b["ids"]), len(b["fenced"]), len(b["inControlledShutdown"]))
    assert (row["controllers"], row["topics"], row["partitions"], row["under_replicated"],
            row["offline"], row["under_min_isr"]) == (
        len(s["controllers"]), s["topics"], s["partitions"], s["underReplicatedPartitions"],
        s["offlinePartitions"], s["underMinIsrPartitions"])
    c = s["records"]
    assert (row["records_applied"], row["records_skipped"], row["records_dropped"],
            row["records_by_type"]) == (c["recordsApplied"], c["recordsSkipped"],
                                        c["recordsDropped"], c["byType"])
    _check_warnings(row, s, stderr)


def _check_warnings(row: dict, summary: dict, stderr: str) -> None:
    """The row's problems are the summary's (notes are not problems), and the
    shell shows the same lines on stderr, with repeats collapsed ("... and N
    more like it"): which of a kind are kept depends on their order, how many
    does not."""
    warnings = [line.split(": warning: ", 1)[1] for line in stderr.splitlines()
                if ": warning: " in line]
    assert [p["text"] for p in row["problems"]] == summary["problems"]
    expected = collapse_repeats(summary["problems"] + row["notes"])
    more = sorted(w for w in warnings if w.startswith("... and "))
    assert more == sorted(line for line in expected if line.startswith("... and "))
    shown = [w for w in warnings if not w.startswith("... and ")]
    assert set(shown) <= set(summary["problems"] + row["notes"])
    assert len(shown) == len(expected) - len(more)
