"""End to end: a partition under the same names and values in ``cat -o
json`` and ``partitions -o json``, a broker's id under the same name in
``brokers`` and the tree (the real ``bin/kafka-metadata-shell`` on the
example cluster, mid-reassignment at offset 201)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BIN = REPO / "bin" / "kafka-metadata-shell"
EXAMPLE = REPO / "examples" / "cluster"


def shell_json(*args):
    p = subprocess.run([str(BIN), "-s", str(EXAMPLE), "--until-offset", "201", "-o", "json",
                        *args], env=dict(os.environ, NO_COLOR="1"), capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_a_partition_has_the_same_fields_in_cat_and_partitions():
    data = shell_json("cat", "/topics/orders/3/data")
    [row] = shell_json("partitions", "/topics/orders/3")
    shared = set(data) & set(row)
    assert {"partitionId", "eligibleLeaderReplicas", "leaderRecoveryState", "addingReplicas",
            "removingReplicas", "lastKnownElr", "isr", "replicas", "leader"} <= shared
    assert {k: row[k] for k in shared} == {k: data[k] for k in shared}
    assert row["topicName"] == "orders" and set(row) - set(data) == {"topicName", "minIsr", "minIsrSource"}


def test_brokers_name_a_broker_as_the_tree_does():
    rows = shell_json("brokers")
    registrations = shell_json("tree", "/brokers")
    assert [r["brokerId"] for r in rows] == [registrations[b]["registration"]["brokerId"]
                                             for b in sorted(registrations, key=int)]
