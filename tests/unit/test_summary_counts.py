"""``summary`` counts a snapshot's runs of PartitionRecords from their bytes
(fast/summary_counts.py, ``ReplayEngine.run_counts``): it must count
exactly what folding every partition counts, on every layout, including the
ones it refuses (which are then folded), and on every corpus input."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.support.paths import CORPORA, EXAMPLE
from tests.support.corpora import corpus_cases
from metashell.kraft.writer import LogWriter, Out, record, snapshot_bytes
from metashell.queries.summary import summarize
from metashell.session.files import open_session

TS = 1_700_000_000_000
DIRS = ["AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAg", "AAAAAAAAAAAAAAAAAAAAAw",
        "AAAAAAAAAAAAAAAAAAAABA"]


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


def tid(n: int) -> str:
    return f"{n:04d}".ljust(21, "P") + "A"


def partition(t: int, p: int, version: int, replicas, isr, leader=None, adding=(), removing=(),
              dirs=None, **extra) -> Out:
    kw = {}
    if version >= 1:
        kw["directories"] = DIRS[:len(replicas)] if dirs is None else dirs
    return record("PartitionRecord", version, partitionId=p, topicId=tid(t), replicas=list(replicas),
                  isr=list(isr), addingReplicas=list(adding), removingReplicas=list(removing),
                  leader=replicas[0] if leader is None else leader, leaderEpoch=p % 5,
                  partitionEpoch=p % 3, **kw, **extra)


def snapshot(path: Path, topics: list[list[Out]], configs=()) -> Path:
    outs = [record("FeatureLevelRecord", name="metadata.version", featureLevel=21), *configs]
    for t, parts in enumerate(topics):
        outs.append(record("TopicRecord", name=f"topic-{t}", topicId=tid(t)))
        outs += parts
    path.write_bytes(snapshot_bytes(outs, epoch=3, timestamp=TS, per_batch=len(outs)))
    return path


def topic_of(t: int, version: int, shapes: list) -> list[Out]:
    return [partition(t, p, version, *shape[:2], **shape[2]) for p, shape in enumerate(shapes)]


# every case: partitions of one topic as (replicas, isr, extra fields)
CASES = {
    "uniform": [((1, 2, 3), (1, 2, 3), {})] * 6,
    "under-replicated": [((1, 2, 3), (1, 2), {})] * 5,
    "offline": [((1, 2, 3), (1, 2, 3), {"leader": -1})] * 2 + [((1, 2, 3), (1, 2, 3), {})] * 3,
    # same size, other layout: isr one shorter, one more adding replica
    "mixed layouts": [((1, 2, 3), (1, 2, 3), {}), ((1, 2, 3), (1, 2), {"adding": (4,)})] * 3,
    "removing": [((1, 2, 3, 4), (1, 2, 3, 4), {"removing": (4,)})] * 4,
    "recovering": [((1, 2, 3), (1,), {"leaderRecoveryState": 1})] * 3,
    "no replicas": [((), (), {"leader": -1})] * 3,
}


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
    bad = [partition(0, p, 1, (1, 2, 3), (1, 2, 3), dirs=DIRS[:2]) for p in range(3)]
    none = [partition(1, p, 1, (1, 2, 3), (1, 2, 3), dirs=[]) for p in range(3)]
    path = snapshot(tmp_path / "00000000000000001000-0000000003.checkpoint", [bad, none])
    fast, folded = both(path)
    assert fast == folded and fast["partitions"] == 3


def test_a_partition_twice_in_a_run(tmp_path):
    twice = [partition(0, p % 2, 0, (1, 2), (1,) if p >= 2 else (1, 2)) for p in range(4)]
    path = snapshot(tmp_path / "00000000000000001000-0000000003.checkpoint", [twice])
    fast, folded = both(path)
    assert fast == folded and fast["partitions"] == 2 and fast["underReplicatedPartitions"] == 2


@pytest.mark.parametrize("pids", [(2, 0, 1, 3), (0, 1, 3, 4), (1, 2, 3, 4), (0, 1, 2, 3)])
def test_partitions_in_runs_of_several_layouts_in_any_order(tmp_path, pids):
    """A topic whose partitions alternate layouts (a run each), in order, out
    of order, with a gap or without partition 0: counted as folding counts."""
    parts = [partition(0, p, 2, (1, 2, 3), (1, 2, 3) if i % 2 else (1, 2)) for i, p in enumerate(pids)]
    path = snapshot(tmp_path / "00000000000000001000-0000000003.checkpoint", [parts])
    fast, folded = both(path)
    assert fast == folded and fast["partitions"] == 4 and fast["underReplicatedPartitions"] == 2
    s = open_session(path)
    counts = s.engine.run_counts(s.image.topic_by_name("topic-0"))
    assert counts is not None and len(counts[0]) == 4 and counts[2] == (sorted(pids) == [0, 1, 2, 3])


def test_min_insync_replicas_of_a_topic_and_the_cluster(tmp_path):
    configs = [record("ConfigRecord", resourceType=2, resourceName="topic-0", name="min.insync.replicas",
                      value="3"),
               record("ConfigRecord", resourceType=4, resourceName="", name="min.insync.replicas",
                      value="2")]
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
    w.batch([record("PartitionChangeRecord", 0, partitionId=2, topicId=tid(1), isr=[1], leader=-1)])
    w.write(part / "00000000000000000100.log")
    fast, folded = both(tmp_path)
    assert fast == folded
    assert (fast["underReplicatedPartitions"], fast["offlinePartitions"]) == (1, 1)


changes = st.fixed_dictionaries({}, optional={
    "isr": st.one_of(st.none(), st.lists(st.integers(1, 4), max_size=4, unique=True)),
    "leader": st.sampled_from([-2, -1, 1, 3]),
    "leaderRecoveryState": st.sampled_from([-1, 0, 1]),
    "removingReplicas": st.lists(st.integers(1, 4), max_size=2, unique=True),
    "addingReplicas": st.lists(st.integers(1, 4), max_size=2, unique=True),
    "replicas": st.lists(st.integers(1, 4), min_size=1, max_size=4, unique=True),
    "directories": st.lists(st.sampled_from(DIRS), max_size=4),
    "eligibleLeaderReplicas": st.lists(st.integers(1, 4), max_size=2, unique=True),
})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(version=st.integers(0, 2),
       log=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 2), changes), min_size=1, max_size=20))
def test_changed_partitions_count_as_folding_does(tmp_path_factory, version, log):
    """Partitions changed by the log after a snapshot (summary reads the
    changes that touch only ISR, leader and the like from their bytes)."""
    fast, folded = both(changed(tmp_path_factory.mktemp("c"), version, log))
    assert fast == folded


def changed(root: Path, version: int, log: list) -> Path:
    """A log dir under ``root``: a snapshot of two uniform topics (PartitionRecord
    ``version``), then one batch per change ``(partition, version, fields)``."""
    part = root / "__cluster_metadata-0"
    part.mkdir()
    snapshot(part / "00000000000000000100-0000000003.checkpoint",
             [topic_of(t, version, CASES["uniform"]) for t in range(2)])
    w = LogWriter(100, 3, TS)
    for p, v, fields in log:
        if v < 1:
            fields.pop("directories", None)
        if v < 2:
            fields.pop("eligibleLeaderReplicas", None)
        w.batch([record("PartitionChangeRecord", v, partitionId=p, topicId=tid(p % 2), **fields)])
    w.write(part / "00000000000000000100.log")
    return root


def test_a_change_of_isr_and_leader_is_read_from_its_bytes():
    from metashell.kraft.framing import frame
    from metashell.fast.partition_change import change_counts
    from metashell.kraft.writer import encode_records

    def counts(**fields):
        payload, _ = encode_records([record("PartitionChangeRecord", 0, partitionId=1,
                                            topicId=tid(1), **fields)])
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


def _corpus_folders_and_snapshots() -> list[Path]:
    out = []
    for folder in sorted(p for p in CORPORA.iterdir() if p.is_dir()):
        out.append(folder)
        out.extend(sorted(folder.rglob("*.checkpoint")))
    return out


def _corpus_inputs() -> list:
    return [EXAMPLE] + corpus_cases(_corpus_folders_and_snapshots)


@pytest.mark.parametrize("path", _corpus_inputs(), ids=lambda p: p.name)
def test_every_corpus_input(path):
    fast, folded = both(path)
    assert fast == folded
