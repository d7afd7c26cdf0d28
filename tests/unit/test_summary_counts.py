"""``summary`` counts a snapshot's runs of PartitionRecords from their bytes
(fast/summary_counts.py, ``ReplayEngine.run_counts``): it must count
exactly what folding every partition counts, on every layout, including the
ones it refuses (which are then folded), and on every corpus input."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.support.partition_layouts import (CASES, CHANGES, DIRS, TS, changed, corpus_inputs, shaped,
                                             snapshot, topic_of)
from tests.support.records import change, config, uid
from metashell.kraft.writer import LogWriter, record
from metashell.queries.summary import summarize
from metashell.session.files import open_session

class Folding:
    """The engine with the byte counting taken away: summary folds every partition."""

    def __init__(self, engine):
        self._engine = engine

    def __getattr__(self, name):
        return getattr(self._engine, name)

    def run_counts(self, topic):
        return None

    def pending_effects(self):
        self._engine.settle()
        return None

    def filed_run_counts(self, topic):
        return [], list(topic.partition_records)


def both(path: Path) -> tuple[dict, dict]:
    """(summary as the shell computes it, summary by folding every partition)."""
    fast = open_session(path).summary()
    s = open_session(path)
    folded = summarize(s.image, Folding(s.engine), s.times)
    return fast, {**folded, "problems": s.problems()}   # the session adds the load's problems


@pytest.mark.parametrize("version", [0, 1, 2])
@pytest.mark.parametrize("case", sorted(CASES))
def test_runs_count_as_folding_does(tmp_path, case, version):
    path = snapshot(tmp_path / "00000000000000001000-0000000003.checkpoint",
                    [topic_of(0, version, CASES[case]), topic_of(1, version, CASES["uniform"])])
    fast, folded = both(path)
    assert fast == folded
    assert fast["partitions"] == len(CASES[case]) + 6
    # which topics were counted from their bytes
    s = open_session(path)
    counted = [s.engine.run_counts(s.image.topic_by_name(f"topic-{t}")) is not None for t in (0, 1)]
    assert counted == [case not in ("mixed layouts", "recovering"), True]


def test_directories_that_do_not_match_the_replicas(tmp_path):
    """Kafka rejects a PartitionRecord with directories for other replicas:
    such a partition does not exist (and is reported)."""
    bad = [shaped(0, p, 1, (1, 2, 3), (1, 2, 3), dirs=DIRS[:2]) for p in range(3)]
    none = [shaped(1, p, 1, (1, 2, 3), (1, 2, 3), dirs=[]) for p in range(3)]
    path = snapshot(tmp_path / "00000000000000001000-0000000003.checkpoint", [bad, none])
    fast, folded = both(path)
    assert fast == folded and fast["partitions"] == 3


def test_a_partition_twice_in_a_run(tmp_path):
    twice = [shaped(0, p % 2, 0, (1, 2), (1,) if p >= 2 else (1, 2)) for p in range(4)]
    path = snapshot(tmp_path / "00000000000000001000-0000000003.checkpoint", [twice])
    fast, folded = both(path)
    assert fast == folded and fast["partitions"] == 2 and fast["underReplicatedPartitions"] == 2


@pytest.mark.parametrize("pids", [(2, 0, 1, 3), (0, 1, 3, 4), (1, 2, 3, 4), (0, 1, 2, 3)])
def test_partitions_in_runs_of_several_layouts_in_any_order(tmp_path, pids):
    """A topic whose partitions alternate layouts (a run each), in order, out
    of order, with a gap or without partition 0: counted as folding counts."""
    parts = [shaped(0, p, 2, (1, 2, 3), (1, 2, 3) if i % 2 else (1, 2)) for i, p in enumerate(pids)]
    path = snapshot(tmp_path / "00000000000000001000-0000000003.checkpoint", [parts])
    fast, folded = both(path)
    assert fast == folded and fast["partitions"] == 4 and fast["underReplicatedPartitions"] == 2
    s = open_session(path)
    counts = s.engine.run_counts(s.image.topic_by_name("topic-0"))
    assert counts is not None and len(counts[0]) == 4 and counts[2] == (sorted(pids) == [0, 1, 2, 3])


def test_min_insync_replicas_of_a_topic_and_the_cluster(tmp_path):
    configs = [config(2, "topic-0", "min.insync.replicas", "3"),
               config(4, "", "min.insync.replicas", "2")]
    topics = [topic_of(t, 2, [((1, 2, 3), (1, 2), {})] * 4) for t in range(2)] + [
        topic_of(2, 2, [((1, 2, 3), (1,), {})] * 4)]
    path = snapshot(tmp_path / "00000000000000001000-0000000003.checkpoint", topics, configs)
    fast, folded = both(path)
    assert fast == folded and fast["underMinIsrPartitions"] == 8


def test_changes_after_the_snapshot_are_folded(tmp_path):
    """A topic changed by the log is no longer counted from its runs."""
    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    snapshot(part / "00000000000000000100-0000000003.checkpoint",
             [topic_of(t, 2, CASES["uniform"]) for t in range(3)])
    w = LogWriter(100, 3, TS)
    w.batch([change(uid(1), 2, version=0, isr=[1], leader=-1)])
    w.write(part / "00000000000000000100.log")
    fast, folded = both(tmp_path)
    assert fast == folded
    assert (fast["underReplicatedPartitions"], fast["offlinePartitions"]) == (1, 1)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(version=st.integers(0, 2),
       log=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 2), CHANGES), min_size=1, max_size=20))
def test_changed_partitions_count_as_folding_does(tmp_path_factory, version, log):
    """Partitions changed by the log after a snapshot (summary reads the
    changes that touch only ISR, leader and the like from their bytes)."""
    fast, folded = both(changed(tmp_path_factory.mktemp("c"), version, log))
    assert fast == folded


def test_a_change_of_isr_and_leader_is_read_from_its_bytes():
    from metashell.kraft.framing import frame
    from metashell.fast.partition_change import change_counts
    from metashell.kraft.writer import encode_records

    def counts(**fields):
        payload, _ = encode_records([record("PartitionChangeRecord", 0, partitionId=1,
                                            topicId=uid(1), **fields)])
        _, _, _, _, _, _, vstart, vlen, _ = frame(payload, 0, len(payload), 0)
        return change_counts(payload, vstart, vstart + vlen, 3, 7)

    assert counts(isr=[1, 2]) == (2, 7)
    assert counts(leader=-1) == (3, -1)
    assert counts(leader=-2, isr=[4]) == (1, 7)
    assert counts(isr=None, leaderRecoveryState=1, removingReplicas=[2]) == (3, 7)
    assert counts(replicas=[1, 2]) is None          # the directories must be checked: folded
    assert counts() == (3, 7)


layouts = st.tuples(st.lists(st.integers(1, 5), min_size=0, max_size=4, unique=True),
                    st.integers(0, 4), st.sampled_from([None, -1, 7]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(version=st.integers(0, 2), parts=st.lists(layouts, min_size=1, max_size=12))
def test_any_layout_counts_as_folding_does(tmp_path_factory, version, parts):
    shapes = [(tuple(replicas), tuple(replicas[:isr]), {} if leader is None else {"leader": leader})
              for replicas, isr, leader in parts]
    if any(not r and not extra for r, _, extra in shapes):   # no replica: no leader either
        shapes = [(r, i, extra if r else {"leader": -1}) for r, i, extra in shapes]
    path = snapshot(tmp_path_factory.mktemp("h") / "00000000000000001000-0000000003.checkpoint",
                    [topic_of(0, version, shapes)])
    fast, folded = both(path)
    assert fast == folded


@pytest.mark.parametrize("path", corpus_inputs(), ids=lambda p: p.name)
def test_every_corpus_input(path):
    fast, folded = both(path)
    assert fast == folded
