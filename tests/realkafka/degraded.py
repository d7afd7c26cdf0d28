"""The workload cluster left degraded, and Kafka's own tools run on it once.

After the workload has settled and its snapshots are written, ``degrade``:

- creates topic ``moving``: partitions 0 and 1 with one replica on broker
  101, partition 2 with one on broker 102;
- stops broker 102 (a controlled shutdown; it stays down): its partitions
  lose it from their ISR (under-replicated; under min ISR where
  min.insync.replicas is 2; leaderless where it was the only replica
  (``moving-2`` at least); in
  the ELR where the release has ELR enabled);
- reassigns ``moving-0`` to [102] (adding 102, removing 101) and
  ``moving-1`` to [101, 102] (adding 102 only): both stay in flight, 102
  being down;

then, once the surviving broker's view has settled, runs each of Kafka's
tools that needs a running cluster once (``kafka-topics --describe`` with
every filter, ``kafka-configs --describe``, ``kafka-metadata-quorum
describe``) and metashell ``-C`` beside the quorum tool, and keeps their
outputs in a ``ToolRun``. The quorum's high watermark is taken before and
after: the tests check that no record but NoOps came between, and compare
metashell on the files at that offset.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass, field

from kafka import TopicPartition
from kafka.admin import NewTopic

from .admin import admin_client, describe_quorum, unfenced_broker_ids
from .cluster import KafkaCluster

MOVING = "moving"
STOPPED_BROKER = 102
SETTLE_TIMEOUT_S = 60.0

# kafka-topics --describe's filters, each run once ("" = no filter)
TOPIC_FILTERS = ("", "--under-replicated-partitions", "--unavailable-partitions",
                 "--under-min-isr-partitions", "--at-min-isr-partitions")


@dataclass
class ToolRun:
    """What Kafka's tools printed on the degraded cluster.

    ``topics`` {filter: stdout}; ``configs`` {"topics" | "brokers" |
    "broker-default": stdout}; ``quorum`` {"status" | "replication": stdout};
    ``live`` metashell ``-C``'s ``/metadataQuorum`` JSON, taken right after
    ``quorum["status"]``; ``hw_before`` / ``hw_after`` the quorum's high
    watermark before the first tool and after the last."""

    topics: "dict[str, str]" = field(default_factory=dict)
    configs: "dict[str, str]" = field(default_factory=dict)
    quorum: "dict[str, str]" = field(default_factory=dict)
    live: dict = field(default_factory=dict)
    hw_before: int = -1
    hw_after: int = -1
    steps: "list[str]" = field(default_factory=list)


def degrade_and_run_tools(cluster: KafkaCluster) -> ToolRun:
    """See the module docstring."""
    run = ToolRun()
    _create_moving_topic(cluster)
    cluster.stop(STOPPED_BROKER)
    run.steps.append(f"broker {STOPPED_BROKER} stopped")
    _reassign_moving(cluster)
    run.steps.append(f"{MOVING}-0 -> [102], {MOVING}-1 -> [101, 102] in flight")
    _wait_settled(cluster)
    run.hw_before = _high_watermark(cluster)
    _run_tools(cluster, run)
    run.hw_after = _high_watermark(cluster)
    return run


def _admin(cluster: KafkaCluster):
    return admin_client(",".join(f"127.0.0.1:{cluster.nodes[b].broker_port}"
                                 for b in cluster.running_broker_ids()))


def _create_moving_topic(cluster: KafkaCluster) -> None:
    admin = _admin(cluster)
    try:
        admin.create_topics([NewTopic(MOVING, replica_assignments={
            0: [101], 1: [101], 2: [STOPPED_BROKER]})])
    finally:
        admin.close()


def _reassign_moving(cluster: KafkaCluster) -> None:
    admin = _admin(cluster)
    try:
        result = admin.alter_partition_reassignments({
            TopicPartition(MOVING, 0): [STOPPED_BROKER],
            TopicPartition(MOVING, 1): [101, STOPPED_BROKER]})
        assert all(e is None for e in result.values()), result
    finally:
        admin.close()


def _partitions_now(admin) -> dict:
    return {(t["name"], p["partition_index"]): (p["leader_id"], sorted(p["replica_nodes"]),
                                                sorted(p["isr_nodes"]))
            for t in admin.describe_topics() for p in t["partitions"]}


def _wait_settled(cluster: KafkaCluster) -> None:
    """Until the stopped broker is fenced (its session expired), no ISR with
    a leader holds it, both reassignments show, and two looks a second apart
    agree."""
    admin = _admin(cluster)
    try:
        deadline, previous = time.monotonic() + SETTLE_TIMEOUT_S, None
        while True:
            now = _partitions_now(admin)
            moving = [now.get((MOVING, p), (None, [], []))[1] for p in (0, 1)]
            shrunk = all(STOPPED_BROKER not in isr for leader, _, isr in now.values() if leader >= 0)
            fenced = STOPPED_BROKER not in unfenced_broker_ids(admin)
            if now == previous and shrunk and fenced and moving == [[101, 102], [101, 102]]:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"Kafka {cluster.version}: the degraded cluster did not settle")
            previous = now
            time.sleep(1.0)
    finally:
        admin.close()


def _high_watermark(cluster: KafkaCluster) -> int:
    admin = _admin(cluster)
    try:
        return describe_quorum(admin)["high_watermark"]
    finally:
        admin.close()


def _run_tools(cluster: KafkaCluster, run: ToolRun) -> None:
    from .workload import cli_class, run_cli

    bootstrap = f"127.0.0.1:{cluster.nodes[101].broker_port}"
    topics = cli_class(cluster, "org.apache.kafka.tools.TopicCommand", "kafka.admin.TopicCommand")
    for flag in TOPIC_FILTERS:
        run.topics[flag] = run_cli(cluster, topics, "--bootstrap-server", bootstrap,
                                   "--describe", *([flag] if flag else []))
    configs = cli_class(cluster, "org.apache.kafka.tools.ConfigCommand", "kafka.admin.ConfigCommand")
    for name, entity in (("topics", ["--entity-type", "topics"]),
                         ("brokers", ["--entity-type", "brokers"]),
                         ("broker-default", ["--entity-type", "brokers", "--entity-default"])):
        run.configs[name] = run_cli(cluster, configs, "--bootstrap-server", bootstrap,
                                    "--describe", *entity)
    quorum = cli_class(cluster, "org.apache.kafka.tools.MetadataQuorumCommand",
                       "kafka.admin.MetadataQuorumCommand")
    run.quorum["status"] = run_cli(cluster, quorum, "--bootstrap-server", bootstrap,
                                   "describe", "--status")
    run.live = _metashell_live(cluster)
    run.quorum["replication"] = run_cli(cluster, quorum, "--bootstrap-server", bootstrap,
                                        "describe", "--replication")


def _metashell_live(cluster: KafkaCluster) -> dict:
    """``-C voters -o json tree /metadataQuorum``, in a process of its own."""
    from .live_support import REPO, metashell_env

    p = subprocess.run([sys.executable, "-m", "metashell.cli", "-C", cluster.controller_quorum,
                        "--timeout", "20", "-o", "json", "tree", "/metadataQuorum"],
                       cwd=REPO, env=metashell_env(), capture_output=True, text=True, timeout=90)
    if p.returncode != 0:
        return {"error": f"exit {p.returncode}: {p.stderr.strip()}"}
    return json.loads(p.stdout)
