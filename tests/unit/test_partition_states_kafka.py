"""The partition states are Kafka's: ``partitions`` and ``summary`` agree
with what kafka-topics' filters (TopicCommand's PartitionDescription, the
same from 3.3 to 4.4) and the controller's counts would say of the same
partitions, computed here from each partition's data as the tree shows it,
on snapshots (counted from their runs' bytes), logs (pending changes read
from their bytes), both, the bundled example at every offset, and the
corpora."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from tests.support.corpora import corpus_cases
from tests.support.paths import CORPORA, EXAMPLE
from tests.support.replay import Log, write_snapshot
from tests.support.records import broker, change, config, feature, partition, topic, uid

from metashell.commands import Context, run_words
from metashell.session.files import open_session
SUMMARY_STATES = {"underReplicatedPartitions": "under-replicated", "offlinePartitions": "offline",
                  "underMinIsrPartitions": "under-min-isr"}


def listed(session, *words) -> list[tuple[str, int]]:
    out, err = io.StringIO(), io.StringIO()
    ctx = Context.for_session(session, out=out, err=err, output="json")
    assert run_words(ctx, ["partitions", *words]) == 0, err.getvalue()
    return [(r["topicName"], r["partitionId"]) for r in json.loads(out.getvalue())]


def kafka_counts(session) -> dict:
    """The summary's counts as Kafka defines them, from every partition's
    data and the min ISR ``partitions`` says applies to it."""
    out = io.StringIO()
    ctx = Context.for_session(session, out=out, err=io.StringIO(), output="json")
    run_words(ctx, ["partitions"])
    rows = json.loads(out.getvalue())
    return {
        "underReplicatedPartitions": sum(
            len(r["isr"]) < len(r["replicas"]) - len(r["addingReplicas"]) for r in rows),
        "offlinePartitions": sum(r["leader"] < 0 for r in rows),
        "underMinIsrPartitions": sum(r["leader"] < 0 or len(r["isr"]) < r["minIsr"] for r in rows),
    }


def check_summary(path, **kw) -> dict:
    """``summary`` (on a session of its own, counting from bytes where it
    can) counts what Kafka's definitions and ``partitions`` count."""
    got = open_session(path, **kw).summary()
    s = open_session(path, **kw)
    want = kafka_counts(s)
    assert {k: got[k] for k in SUMMARY_STATES} == want
    for key, state in SUMMARY_STATES.items():
        assert len(listed(s, f"--{state}")) == want[key], state
    return got


def reassigning_cluster(directory: Path, in_snapshot: bool) -> Path:
    """Topic orders: 0 in sync; 1 and 2 moving from 1,2,3 to 2,3,4 (4
    being added, 1 removed), 1 with its old replicas in sync, 2 with one
    of them out; 3 one replica out. In a snapshot, or made by changes in a
    log."""
    t = uid(1)
    moving = dict(replicas=[4, 2, 3, 1], addingReplicas=[4], removingReplicas=[1])
    head = [feature("metadata.version", 21), broker(1), broker(2), broker(3), broker(4),
            topic("orders", t)]
    if in_snapshot:
        write_snapshot(directory, 10, head + [
            partition(t, 0), partition(t, 1, leader=2, isr=[1, 2, 3], **moving),
            partition(t, 2, leader=2, isr=[2, 3], **moving), partition(t, 3, isr=[1, 2])])
        log = Log(10)
    else:
        log = Log()
        log.add(*head)
        log.add(*[partition(t, p) for p in range(4)])
        log.add(change(t, 1, leader=2, **moving), change(t, 2, leader=2, isr=[2, 3], **moving),
                change(t, 3, isr=[1, 2]))
    log.add(broker(5))
    log.write(directory)
    return directory


@pytest.mark.parametrize("in_snapshot", [True, False], ids=["snapshot", "log"])
def test_a_reassignment_in_flight_is_not_under_replicated(tmp_path, in_snapshot):
    """kafka-topics --under-replicated-partitions and the broker's metric
    compare the ISR with the replicas less those being added: 1's new
    replica catching up is no alarm, 2's lost old one is."""
    path = reassigning_cluster(tmp_path, in_snapshot)
    s = open_session(path)
    assert listed(s, "--under-replicated") == [("orders", 2), ("orders", 3)]
    assert listed(s, "--reassigning") == [("orders", 1), ("orders", 2)]
    assert check_summary(path)["underReplicatedPartitions"] == 2


def test_a_reassignment_that_ends_by_its_adding_replicas_alone(tmp_path):
    """A reassignment that only adds replicas ends with a change of the
    adding replicas alone (the replicas stay): the replication factor
    grows from 3 to 4, and a partition with 3 in sync becomes
    under-replicated; counted so from the change's bytes too."""
    t = uid(1)
    write_snapshot(tmp_path, 10, [feature("metadata.version", 21), broker(1), broker(2),
                                  broker(3), broker(4), topic("t", t), partition(t, 0),
                                  *[partition(t, p, replicas=(1, 2, 3, 4), addingReplicas=[4],
                                              isr=[1, 2, 3]) for p in (1, 2)]])
    log = Log(10)
    log.add(change(t, 1, addingReplicas=[]))
    log.write(tmp_path)
    assert listed(open_session(tmp_path), "--under-replicated") == [("t", 1)]
    assert check_summary(tmp_path)["underReplicatedPartitions"] == 1


def leaderless_cluster(directory: Path, where: str) -> Path:
    """Cluster default min ISR 2; topic t: 0 led, in sync; 1 with no
    leader but 1,2 in sync; 2 with no leader and 1 in sync; 3 led with 1
    in sync. ``where`` the partitions lose their leaders: in the snapshot,
    by changes in a log after it (its partitions in runs), or in a log."""
    t = uid(1)
    head = [feature("metadata.version", 21), broker(1), broker(2), broker(3),
            config(4, "", "min.insync.replicas", "2"), topic("t", t)]
    final = [partition(t, 0), partition(t, 1, leader=-1, isr=[1, 2]),
             partition(t, 2, leader=-1, isr=[1]), partition(t, 3, isr=[1])]
    changes = [change(t, 1, leader=-1, isr=[1, 2]), change(t, 2, leader=-1), change(t, 2, isr=[1]),
               change(t, 3, isr=[1])]
    if where == "snapshot":
        write_snapshot(directory, 10, head + final)
        log = Log(10)
    elif where == "changes after a snapshot":
        write_snapshot(directory, 10, head + [partition(t, p) for p in range(4)])
        log = Log(10)
        log.each(*changes)
    else:
        log = Log()
        log.add(*head, *[partition(t, p) for p in range(4)])
        log.each(*changes)
    log.add(broker(4))
    log.write(directory)
    return directory


@pytest.mark.parametrize("where", ["snapshot", "changes after a snapshot", "log"])
def test_a_partition_without_a_leader_is_under_min_isr(tmp_path, where):
    """kafka-topics --under-min-isr-partitions (3.3 to 4.4): no leader, or
    fewer in sync than min.insync.replicas; 1, with no leader but enough
    in sync, is listed (it cannot take a write)."""
    path = leaderless_cluster(tmp_path, where)
    s = open_session(path)
    assert listed(s, "--under-min-isr") == [("t", 1), ("t", 2), ("t", 3)]
    assert listed(s, "--at-min-isr") == [("t", 1)]
    assert listed(s, "--offline") == [("t", 1), ("t", 2)]
    got = check_summary(path)
    assert (got["underMinIsrPartitions"], got["offlinePartitions"]) == (3, 2)


def test_unavailable_is_a_leader_that_is_not_live(tmp_path):
    """kafka-topics --unavailable-partitions: no leader, or one that is not
    a live broker (describeCluster's: registered and not fenced); offline
    (the controller's count) is no leader only."""
    t = uid(1)
    log = Log()
    log.add(broker(1, fenced=False), broker(2, fenced=False), broker(3, fenced=True), topic("t", t))
    log.add(partition(t, 0), partition(t, 1, replicas=(3, 1, 2)), partition(t, 2, leader=-1),
            partition(t, 3, replicas=(5, 1, 2)))
    s = open_session(log.write(tmp_path))
    assert listed(s, "--unavailable") == [("t", 1), ("t", 2), ("t", 3)]
    assert listed(s, "--offline") == [("t", 2)]


def test_a_partition_without_a_leader_has_not_its_preferred_leader(tmp_path):
    """The controller's PreferredReplicaImbalanceCount: the leader is not
    the first replica, -1 where there are none (hasPreferredLeader)."""
    t = uid(1)
    log = Log()
    log.add(broker(1), broker(2), broker(3), topic("t", t))
    log.add(partition(t, 0), partition(t, 1, leader=2), partition(t, 2, leader=-1),
            partition(t, 3, replicas=(), isr=[], leader=-1))
    s = open_session(log.write(tmp_path))
    assert listed(s, "--not-preferred-leader") == [("t", 1), ("t", 2)]


def example_offsets() -> list[int]:
    end = open_session(EXAMPLE).image.last_offset
    return sorted({*range(0, end + 1, 40), 201, end})


def test_the_example_at_every_point():
    """The bundled example's reassignments, fenced and shut-down brokers
    and offline partition, at offsets along its log (201: orders/3 moving
    to broker 4, its ISR its old replicas)."""
    for offset in example_offsets():
        try:
            check_summary(EXAMPLE, until_offset=offset)
        except AssertionError as e:
            raise AssertionError(f"--until-offset {offset}") from e
    s = open_session(EXAMPLE, until_offset=201)
    assert ("orders", 3) in listed(s, "--reassigning")
    assert ("orders", 3) not in listed(s, "--under-replicated")


def corpus_inputs() -> list:
    return corpus_cases(lambda: sorted(p for p in CORPORA.iterdir()
                                       if p.is_dir() and p.name != "empty-log"))


@pytest.mark.parametrize("source", corpus_inputs(), ids=lambda p: p.name)
def test_corpora(source):
    check_summary(source)
