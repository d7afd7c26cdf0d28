"""metashell against Kafka's own tools, on every release's workload cluster.

The workload cluster of each release (workload.py) is left degraded at the
end (degraded.py: a broker down, so partitions are under-replicated, under
min ISR, leaderless and, on 4.x, in the ELR; two reassignments in flight,
one adding and removing a replica, one adding only; min.insync.replicas
set on topics, on a broker and as the cluster default, and unset again).
Kafka's tools ran there once each; here their outputs are compared with
metashell on a controller's metadata dir at the offset they saw:

- ``kafka-topics --describe``, alone and with each of its four filters,
  against ``partitions --kafka`` with the same filter: the same lines, the
  topic headers' configs as far as the metadata holds them;
- ``kafka-configs --describe`` of topics, brokers and the broker default
  against ``/configs``;
- ``kafka-metadata-quorum describe --status`` and ``--replication`` against
  ``-C``'s ``/metadataQuorum/live``, asked right after.

Kafka lists topics in a hash map's order, metashell by name: topics are
compared as sets of blocks. The README's "Kafka's tools and metashell"
section lists every difference that stays.
"""

from __future__ import annotations

import json
import re

import pytest

from metashell.commands.quorum import replication_lines, status_lines
from metashell.fs.tree import REDACTED

from .degraded import STOPPED_BROKER, TOPIC_FILTERS
from .kafka_tools_text import (KafkaTopics, header_configs, parse_configs, parse_dump,
                               parse_quorum_replication, parse_quorum_status)
from .shell import shell_json, shell_lines, shell_text
from .workload import version_tuple

# kafka-topics --describe's filter -> partitions' state option
STATE_OF_FILTER = {"": None, "--under-replicated-partitions": "--under-replicated",
                   "--unavailable-partitions": "--unavailable",
                   "--under-min-isr-partitions": "--under-min-isr",
                   "--at-min-isr-partitions": "--at-min-isr"}
CONTROLLER = 1


@pytest.fixture(scope="module")
def seen(kafka_run):
    """(the controller's metadata dir, the offset Kafka's tools saw): the
    partitions, configs and fenced brokers there are those where they began
    (a broker's session expiring may fence it once more on the way)."""
    tools = kafka_run.tools
    path = kafka_run.metadata_dirs[CONTROLLER]
    before, after = (_what_tools_read(path, offset) for offset in (tools.hw_before - 1,
                                                                   tools.hw_after - 1))
    assert before == after, (f"the metadata changed while Kafka's tools ran "
                             f"({tools.hw_before}..{tools.hw_after})")
    return path, tools.hw_after - 1


def _what_tools_read(path, offset: int) -> tuple:
    partitions = shell_json(path, "partitions", until_offset=offset, allow_notes=True)
    configs = shell_json(path, "tree", "/configs", until_offset=offset, allow_notes=True)
    brokers = shell_json(path, "tree", "/brokers", until_offset=offset, allow_notes=True)
    return partitions, configs, {b: r.get("isFenced") for b, r in brokers.items()}


def broker_synonym_topic_configs(kafka_run) -> "set[str]":
    """Topic config names whose value Kafka's header took from broker 101's
    own dynamic configs (the broker its client asked): not metashell's to say."""
    from metashell.commands.kafka_topics import TOPIC_SYNONYMS

    own = set(parse_configs(kafka_run.tools.configs["brokers"]).get(("broker", "101"), {}))
    return {topic for topic, synonyms in TOPIC_SYNONYMS.items()
            if any((s[0] if isinstance(s, tuple) else s) in own for s in synonyms)}


@pytest.mark.parametrize("kafka_filter", TOPIC_FILTERS, ids=lambda f: f or "all")
def test_kafka_topics_describe_as_partitions_prints_it(kafka_run, seen, kafka_filter):
    path, offset = seen
    state = STATE_OF_FILTER[kafka_filter]
    ours = shell_text(path, "partitions", "--kafka", *([state] if state else []),
                      until_offset=offset)
    theirs = KafkaTopics.parse(kafka_run.tools.topics[kafka_filter])
    mine = KafkaTopics.parse(ours)
    assert set(mine.lines) == set(theirs.lines), (
        f"Kafka {kafka_run.version} kafka-topics --describe {kafka_filter}:\n"
        f"only Kafka's: {sorted(set(theirs.lines) - set(mine.lines))}\n"
        f"only metashell's: {sorted(set(mine.lines) - set(theirs.lines))}")
    assert len(mine.lines) == len(theirs.lines) and mine.lines, "no partitions or twice one"
    if kafka_filter:
        assert not mine.headers and not theirs.headers
        return
    assert mine.headers.keys() == theirs.headers.keys()
    unsaid = broker_synonym_topic_configs(kafka_run)
    for topic, header in theirs.headers.items():
        expected = {k: v for k, v in header_configs(header).items() if k not in unsaid}
        got = {k: v for k, v in header_configs(mine.headers[topic]).items() if k not in unsaid}
        assert got == expected, f"Kafka {kafka_run.version} topic {topic} Configs"
        without = re.sub(r"\tConfigs: .*", "", header)
        assert re.sub(r"\tConfigs: .*", "", mine.headers[topic]) == without


def test_the_workload_left_every_state_to_compare(kafka_run):
    """The degraded cluster has what the comparisons are about."""
    topics = KafkaTopics.parse(kafka_run.tools.topics[""])
    text = "\n".join(topics.lines)
    assert "Leader: none" in text and "Removing Replicas: 101" in text
    assert any(line.endswith("Adding Replicas: 102\tRemoving Replicas: ")
               or "Adding Replicas: 102\tRemoving Replicas: \t" in line for line in topics.lines)
    assert KafkaTopics.parse(kafka_run.tools.topics["--under-min-isr-partitions"]).lines
    assert KafkaTopics.parse(kafka_run.tools.topics["--at-min-isr-partitions"]).lines
    if kafka_run.with_elr:
        assert f"Elr: {STOPPED_BROKER}" in text


# -- kafka-configs ---------------------------------------------------------------------------

def test_kafka_configs_describe_as_configs_holds_it(kafka_run, seen):
    path, offset = seen
    ours = shell_json(path, "tree", "/configs", until_offset=offset, allow_notes=True)
    theirs = {}
    for text in kafka_run.tools.configs.values():
        theirs.update(parse_configs(text))
    assert ("broker", "<default>") in theirs and ("topic", "orders") in theirs
    for (kind, name), values in theirs.items():
        mine = {k: (None if v == REDACTED else v) for k, v in ours.get(kind, {}).get(name, {}).items()}
        assert mine == values, f"Kafka {kafka_run.version} kafka-configs {kind} {name!r}"
    # every entity metashell holds configs of is one Kafka describes, but the
    # broker that is down: kafka-configs describes the running brokers only
    for kind, entities in ours.items():
        for name, values in entities.items():
            if (kind, name) != ("broker", str(STOPPED_BROKER)):
                assert not values or (kind, name) in theirs, f"{kind} {name} only in metashell's"


# -- kafka-metadata-quorum -------------------------------------------------------------------

def _ms(iso: "str | None") -> int:
    from datetime import datetime
    if iso is None:
        return -1
    return int(round(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000))


def _ids(entries) -> "list[int]":
    return sorted(e["id"] if isinstance(e, dict) else int(e) for e in entries)


def test_kafka_metadata_quorum_describe_status_as_live_quorum_says_it(kafka_run):
    """--status, then ``-C``'s /metadataQuorum a moment later: the same
    cluster, leader, voters (directory ids and endpoints where printed) and
    observers; its high watermark not behind; the follower lag as computed
    from the same fields (their values move between the two looks)."""
    tools = kafka_run.tools
    assert "error" not in tools.live, tools.live.get("error")
    status, live = parse_quorum_status(tools.quorum["status"]), tools.live["live"]
    if live["clusterId"] is not None or version_tuple(kafka_run.version) >= (3, 7):
        assert live["clusterId"] == status["ClusterId"]
    assert (live["leaderId"], live["leaderEpoch"]) == (int(status["LeaderId"]), int(status["LeaderEpoch"]))
    assert int(status["HighWatermark"]) <= live["highWatermark"] <= tools.hw_after
    assert _ids(status["CurrentVoters"]) == sorted(map(int, live["voters"]))
    assert _ids(status["CurrentObservers"]) == sorted(o["replicaId"] for o in live["observers"])
    for voter in (v for v in status["CurrentVoters"] if isinstance(v, dict)):
        assert voter.get("directoryId") == live["voters"][str(voter["id"])]["directoryId"]
        assert voter["endpoints"] == [f"{e['name']}://{e['host']}:{e['port']}"
                                      for e in tools.live["voters"][str(voter["id"])]["endpoints"]]
    for observer in (o for o in status["CurrentObservers"] if isinstance(o, dict)):
        (mine,) = [o for o in live["observers"] if o["replicaId"] == observer["id"]]
        assert observer.get("directoryId") == mine["directoryId"]
    assert int(status["MaxFollowerLag"]) >= 0 and live["maxFollowerLag"] >= 0
    assert int(status["MaxFollowerLagTimeMs"]) >= -1 and live["maxFollowerLagTimeMs"] >= -1
    # quorum prints the same lines: labels, and values that do not move between looks
    # (blank lines aside: 3.3's tool ends its --status with one)
    ours = [line for line in status_lines(live) if line.strip()]
    theirs = [line for line in tools.quorum["status"].splitlines() if line.strip()]
    assert [line.split(":")[0] for line in ours] == [line.split(":")[0] for line in theirs]
    steady = ("LeaderId", "LeaderEpoch") + (("ClusterId",) if live["clusterId"] else ())
    if isinstance(status["CurrentVoters"][0], dict):     # the releases that print voters as JSON
        steady += ("CurrentVoters", "CurrentObservers")
    assert [line for line in ours if line.startswith(steady)] == \
        [line for line in theirs if line.startswith(steady)]


def test_kafka_metadata_quorum_describe_replication_as_live_quorum_says_it(kafka_run):
    """--replication, a moment after ``-C``: the same nodes in the same
    roles; the stopped broker's frozen log end offset and times exactly;
    the others' offsets not behind metashell's."""
    tools = kafka_run.tools
    rows = parse_quorum_replication(tools.quorum["replication"])
    live = tools.live["live"]
    mine = {int(k): dict(v, role="Leader" if int(k) == live["leaderId"] else "Follower")
            for k, v in live["voters"].items()}
    mine.update({o["replicaId"]: dict(o, role="Observer") for o in live["observers"]})
    assert {int(r["NodeId"]): r["Status"] for r in rows} == {n: m["role"] for n, m in mine.items()}
    for row in rows:
        node = mine[int(row["NodeId"])]
        if "DirectoryId" in row:
            assert node["directoryId"] in (row["DirectoryId"], None)
        if int(row["NodeId"]) == STOPPED_BROKER:
            assert (int(row["LogEndOffset"]), int(row["LastFetchTimestamp"]),
                    int(row["LastCaughtUpTimestamp"])) == (
                node["logEndOffset"], _ms(node["lastFetchTime"]), _ms(node["lastCaughtUpTime"]))
        else:
            assert int(row["LogEndOffset"]) >= node["logEndOffset"]
    # quorum --replication prints the same table: the header and the stopped broker's row
    # but its Lag (behind a leader that moves on); Kafka before 3.9 has no DirectoryId column
    ours = replication_lines(live)
    theirs = tools.quorum["replication"].splitlines()
    assert len(ours) == len(theirs)
    if "DirectoryId" in theirs[0]:
        assert ours[0] == theirs[0]

        def stopped_row(lines):
            (row,) = [line.split("\t") for line in lines if line.startswith(f"{STOPPED_BROKER} ")]
            return row[:3] + row[4:]
        assert stopped_row(ours) == stopped_row(theirs)


# -- kafka-dump-log --------------------------------------------------------------------------

# metashell's control record names -> kafka-dump-log's (records printed with their fields)
CONTROL_NAMES = {"LeaderChangeMessage": ("LeaderChange", "LEADER_CHANGE"),
                 "SnapshotHeaderRecord": ("SnapshotHeader", "SNAPSHOT_HEADER"),
                 "SnapshotFooterRecord": ("SnapshotFooter", "SNAPSHOT_FOOTER"),
                 "KRaftVersionRecord": ("KRaftVersion", "KRAFT_VERSION"),
                 "VotersRecord": ("KRaftVoters", "KRAFT_VOTERS")}


def _kafka_type(record: dict) -> "tuple[str, ...]":
    """The names kafka-dump-log may give metashell's record type."""
    if record["control"]:
        return CONTROL_NAMES.get(record["type"], (record["type"],))
    return (re.sub(r"(?<!^)(?=[A-Z])", "_", record["type"]).upper(),)


def test_kafka_dump_log_as_log_prints_it(kafka_run):
    """Every segment and the newest snapshot of a controller, dumped by
    Kafka once: ``log -o json --show-secrets`` of each file has the same
    records, offsets, times, types, versions and fields (Kafka's JSON:
    fields of the record's version, tagged ones only where not at their
    default, bytes in base64)."""
    from .workload import cli_class, run_cli

    files = kafka_run.segments[CONTROLLER] + kafka_run.snapshots[CONTROLLER][-1:]
    tool = cli_class(kafka_run.cluster, "org.apache.kafka.tools.DumpLogSegments",
                     "kafka.tools.DumpLogSegments")
    dumped = parse_dump(run_cli(kafka_run.cluster, tool, "--cluster-metadata-decoder",
                                "--files", ",".join(map(str, files))))
    compared = 0
    for path in files:
        theirs = dumped[path.name]
        ours = [json.loads(line) for line in shell_lines(path, "log", show_secrets=True)]
        assert [r.offset for r in theirs] == [r["offset"] for r in ours], path.name
        for mine, kafka in zip(ours, theirs):
            where = f"Kafka {kafka_run.version} {path.name} offset {kafka.offset}"
            assert kafka.type in _kafka_type(mine), where
            assert _ms(mine["time"]) == kafka.time, where
            if kafka.version is not None:
                assert mine["version"] == kafka.version, where
            if kafka.data is not None:
                assert mine["data"] == kafka.data, where
                compared += 1
    assert compared > 100
