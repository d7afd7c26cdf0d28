"""``partitions`` and ``brokers`` against the image as the tree shows it
(every ``/topics/*/*/data`` and the configs), with the states computed
here from those values, on generated clusters, the bundled example and
the corpora."""

from __future__ import annotations

import json

import pytest
from tests.support.replay import load
from tests.support.records import broker, change, config, partition, topic, uid

from tests.support.paths import CORPORA, EXAMPLE
from tests.support.corpora import corpus_cases
from tests.support.commands import run_command
from metashell.session.files import open_session

STATES = ["offline", "unavailable", "under-replicated", "under-min-isr", "at-min-isr", "unclean",
          "reassigning", "not-preferred-leader"]


def tree_partitions(session) -> list[dict]:
    """Every partition's data as ``cat`` shows it, with its topic's name and
    the min ISR its configs give (topic, else the leader's broker, else the
    cluster default, else 1)."""
    root = session.root
    configs = root.child("configs")

    def config_value(kind, name):
        d = configs.child(kind) if configs is not None else None
        d = d.child(name) if d is not None else None
        leaf = d.child("min.insync.replicas") if d is not None else None
        return int(leaf.value()) if leaf is not None else None

    rows = []
    topics = root.child("topics")
    for name in sorted(topics.children()):
        t = topics.child(name)
        for pid in t.children():
            if pid in ("id", "name"):
                continue
            data = t.child(pid).child("data").value()
            min_isr = config_value("topic", name)
            if min_isr is None:
                min_isr = config_value("broker", str(data["leader"]))
            if min_isr is None:
                min_isr = config_value("broker", "<default>") or 1
            rows.append({"topic": name, **data, "minIsr": min_isr})
    return rows


def live_brokers(session) -> set[int]:
    """The registered brokers the tree shows unfenced."""
    brokers = session.root.child("brokers")
    return {int(b) for b in brokers.children()
            if not brokers.child(b).child("isFenced").value()}


def expected_states(d: dict, live: set[int]) -> set[str]:
    """The states of a partition as Kafka defines them: kafka-topics'
    PartitionDescription filters (3.3-4.4 alike), the controller's offline
    and preferred-leader counts."""
    out = set()
    leaderless = d["leader"] < 0
    if leaderless:
        out.add("offline")
    if leaderless or d["leader"] not in live:
        out.add("unavailable")
    # the replication factor during a reassignment: the replicas less those being added
    if len(d["isr"]) < len(d["replicas"]) - len(d["addingReplicas"]):
        out.add("under-replicated")
    if leaderless or len(d["isr"]) < d["minIsr"]:
        out.add("under-min-isr")
    if len(d["isr"]) == d["minIsr"]:
        out.add("at-min-isr")
    if d["leaderRecoveryState"] == 1:
        out.add("unclean")
    if d["addingReplicas"] or d["removingReplicas"]:
        out.add("reassigning")
    if d["leader"] != (d["replicas"][0] if d["replicas"] else -1):
        out.add("not-preferred-leader")
    return out


def check_against_tree(session) -> None:
    every = tree_partitions(session)
    live = live_brokers(session)
    status, out, _ = run_command(session, "partitions", output="json")
    assert status == 0
    got = json.loads(out)
    assert [(r["topicName"], r["partitionId"]) for r in got] == \
        [(d["topic"], d["partitionId"]) for d in every]
    for mine, d in zip(got, every):
        assert (mine["leader"], mine["replicas"], mine["isr"], mine["minIsr"]) == \
               (d["leader"], d["replicas"], d["isr"], d["minIsr"])
    for state in STATES:
        _, out, _ = run_command(session, "partitions", f"--{state}", output="json")
        assert [(r["topicName"], r["partitionId"]) for r in json.loads(out)] == \
            [(d["topic"], d["partitionId"]) for d in every if state in expected_states(d, live)], \
            state
    _, out, _ = run_command(session, "partitions", "--offline", "--reassigning", output="json")
    assert [(r["topicName"], r["partitionId"]) for r in json.loads(out)] == \
        [(d["topic"], d["partitionId"]) for d in every
         if expected_states(d, live) & {"offline", "reassigning"}]
    _, text, _ = run_command(session, "partitions")
    assert len(text.splitlines()) == len(every)


def test_generated_cluster_in_every_state(tmp_path):
    a, b = uid(1), uid(2)
    s = load(tmp_path,
             [broker(1), broker(2), broker(3)],
             [topic("alpha", a), partition(a, 0), partition(a, 1, isr=[1, 2]),
              partition(a, 2, leader=-1, isr=[]), partition(a, 3, leader=2),
              partition(a, 4, replicas=(1, 2, 3, 4), addingReplicas=[4]),
              partition(a, 5, isr=[3], leader=3, leaderRecoveryState=1)],
             [topic("beta", b), partition(b, 0, replicas=(2, 3)), partition(b, 1, isr=[2])],
             config(2, "alpha", "min.insync.replicas", "2"),
             config(4, "", "min.insync.replicas", "3"),
             config(4, "2", "min.insync.replicas", "1"),
             change(b, 0, isr=[2]))
    check_against_tree(s)
    for state in STATES:   # each state has partitions here: the comparison above is not vacuous
        assert json.loads(run_command(s, "partitions", f"--{state}", output="json")[1]), state
    _, out, _ = run_command(s, "partitions", "--under-min-isr", output="json")
    got = {(r["topicName"], r["partitionId"]): r["minIsr"] for r in json.loads(out)}
    # alpha: its own 2; beta/0 led by 2: broker 2's 1; beta/1 led by 1: the cluster's 3
    assert got == {("alpha", 2): 2, ("alpha", 5): 2, ("beta", 1): 3}


def test_broker_paths_and_text(tmp_path):
    a, b = uid(1), uid(2)
    s = load(tmp_path, [broker(1), broker(2), broker(3)],
             [topic("alpha", a), partition(a, 0), partition(a, 1, leader=-1, isr=[])],
             [topic("beta", b), partition(b, 0, replicas=(2, 3), isr=[3], leader=3)])
    _, out, _ = run_command(s, "partitions", "--broker", "1", output="json")
    assert [(r["topicName"], r["partitionId"]) for r in json.loads(out)] == [("alpha", 0), ("alpha", 1)]
    _, out, _ = run_command(s, "partitions", "/topics/beta", "/topics/alpha/1", output="json")
    assert [(r["topicName"], r["partitionId"]) for r in json.loads(out)] == [("alpha", 1), ("beta", 0)]
    _, out, _ = run_command(s, "partitions", "/topics/b*")
    assert out == "Topic: beta\tPartition: 0\tLeader: 3\tReplicas: 2,3\tIsr: 3\n"
    _, out, _ = run_command(s, "partitions", "--offline")
    assert out == "Topic: alpha\tPartition: 1\tLeader: none\tReplicas: 1,2,3\tIsr: \n"
    status, _, err = run_command(s, "partitions", "/topics/nope")
    assert status == 1 and err == "partitions: /topics/nope: no such file or directory\n"
    status, _, err = run_command(s, "partitions", "/brokers/1")
    assert status == 1 and "not a topic or a partition" in err
    _, out, _ = run_command(s, "partitions", "--under-replicated", "/topics/nope*", output="json")
    assert out == ""   # an error, not an empty answer


def test_brokers_load_against_the_tree(tmp_path):
    a = uid(1)
    s = load(tmp_path, [broker(1), broker(2), broker(3, fenced=True)],
             [topic("alpha", a), partition(a, 0, replicas=(1, 2, 3)),
              partition(a, 1, replicas=(2, 3, 1), leader=1), partition(a, 2, replicas=(3, 1, 2),
                                                                       leader=1),
              partition(a, 3, replicas=(1, 4), leader=-1, isr=[])])
    every = tree_partitions(s)
    _, out, _ = run_command(s, "brokers", output="json")
    got = {r["brokerId"]: r for r in json.loads(out)}
    for b, r in got.items():
        assert r["leaderCount"] == sum(d["leader"] == b for d in every)
        assert r["replicaCount"] == sum(b in d["replicas"] for d in every)
        assert r["preferredLeaderCount"] == sum(d["replicas"][0] == b for d in every)
        assert r["skew"] == r["leaderCount"] - r["preferredLeaderCount"]
    assert got[3]["state"] == "fenced" and got[4]["state"] == "not registered"
    assert got[1]["leaderCount"] == 3 and got[1]["skew"] == 1
    _, text, _ = run_command(s, "brokers")
    assert text.splitlines()[0].split() == ["BROKER", "STATE", "LEADERS", "REPLICAS", "PREFERRED",
                                           "SKEW"]


def test_example_cluster():
    check_against_tree(open_session(EXAMPLE))


def corpus_sources() -> list:
    return corpus_cases(lambda: sorted(p for p in CORPORA.iterdir() if p.is_dir() and p.name != "empty-log"))


@pytest.mark.parametrize("source", corpus_sources(), ids=lambda p: p.name)
def test_corpora(source):
    files = [f for f in source.iterdir() if f.suffix in (".log", ".checkpoint")]
    path = source if not files else files[0]
    check_against_tree(open_session(path))


def test_kafka_layout_of_the_example_cluster():
    """--kafka: kafka-topics --describe's layout, checked against the plain
    lines (the same partitions, in the same order): a header per topic,
    partition lines after a tab, Adding and Removing Replicas (even empty)
    while reassigned, before Elr and LastKnownElr, which every line has at
    metadata.version 3.8+; no headers with a state option."""
    session = open_session(EXAMPLE, until_offset=201)
    _, plain, _ = run_command(session, "partitions")
    _, kafka, _ = run_command(session, "partitions", "--kafka")
    headers = [line for line in kafka.splitlines() if not line.startswith("\t")]
    lines = [line[1:] for line in kafka.splitlines() if line.startswith("\t")]
    assert [h.split("\t")[0] for h in headers] == list(dict.fromkeys(
        line.split("\t")[0] for line in plain.splitlines()))
    for h in headers:
        assert [f.split(": ")[0] for f in h.split("\t")] == [
            "Topic", "TopicId", "PartitionCount", "ReplicationFactor", "Configs"]
    assert len(lines) == len(plain.splitlines())
    for mine, theirs in zip(lines, plain.splitlines()):
        assert mine.split("\tAdding")[0].split("\tElr")[0] == theirs.split("\tElr")[0].split("\tAdding")[0]
        assert "\tElr: " in mine and "\tLastKnownElr: " in mine
        if "Adding Replicas" in theirs or "Removing Replicas" in theirs:
            assert mine.index("\tAdding Replicas: ") < mine.index("\tRemoving Replicas: ") < mine.index("\tElr")
    orders = next(h for h in headers if h.startswith("Topic: orders\t"))
    assert "\tReplicationFactor: 3\t" in orders            # replicas without the one being added
    _, only, _ = run_command(session, "partitions", "--kafka", "--reassigning")
    assert only and all(line.startswith("\tTopic: ") for line in only.splitlines())
    assert "\tRemoving Replicas: " in only
