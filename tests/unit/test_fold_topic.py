"""Listing a topic folds its partitions together (``PartitionFolder.fold_topic``:
a run's untouched PartitionRecords decoded in one pass over the run,
``RecordStore.run_data``): it must give exactly what folding each partition
on its own gives, on every layout, after changes, and on every corpus input.
So must its ids alone (``PartitionFolder.existing_partitions``, what ``find``
lists without a walk of nodes per partition)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from metashell.fs import kafka_text
from metashell.fs.walk import walk, walk_names
from metashell.kraft.writer import Out
from metashell.render import json_text, value_text
from metashell.replay.partition_model import data_text, shown
from metashell.session.files import open_session
from tests.support.partition_layouts import (CASES, CHANGES, DIRS, TS, changed, corpus_inputs, shaped,
                                             snapshot, topic_of)

SNAPSHOT = "00000000000000001000-0000000003.checkpoint"


def one_by_one(topic) -> dict:
    states = {pid: topic.partition(pid) for pid in sorted(topic.partition_records)}
    return {pid: s for pid, s in states.items() if s is not None}


def check(path: Path) -> list:
    """Every topic's listing against its partitions folded one by one, in
    two loads (a fold may report a problem once); the states listed."""
    together, alone = open_session(path), open_session(path)
    listed = []
    for tid_ in sorted(together.image.topics):
        # the ids alone (find) first: they report what folding reports, once
        ids = together.image.topics[tid_].partition_ids()
        states = together.image.topics[tid_].partitions()
        assert states == one_by_one(alone.image.topics[tid_]), tid_
        assert list(states) == sorted(states)
        assert ids == list(states), tid_
        for state in states.values():   # cat's and tree's text of each, where it makes it
            text = data_text(state)
            assert text is None or text == value_text(shown(state.to_json()))
        check_texts(together.image.topics[tid_], states)
        listed.append(states)
    assert together.engine.skipped == alone.engine.skipped
    # find's walk of names (topics listed at once) reaches what the node walk does
    assert list(walk_names(together.root, "/")) == [(p, n.is_dir) for p, n in walk(together.root, "/")]
    together.close()   # their files unmapped now, not when a collection finds them
    alone.close()
    return listed


def check_texts(topic, states: dict) -> int:
    """A topic's texts (``partition_texts``: read from its runs' bytes where
    it can) against its states rendered by the general path, at two
    indentations, as compact JSON and as Kafka's shell's text
    (``texts_made_by(kafka_text.RUN_REGISTRATIONS)``); how many were read
    from bytes."""
    from metashell.fs.tree import _data_text

    read = 0
    for nl in ("\n", "\n      ", None):
        texts = topic.partition_texts(nl)
        assert list(texts) == list(states)
        for pid, got in texts.items():
            read += type(got) is str
            if nl is None:
                assert type(got) is not str or got == json_text(states[pid].to_json())
            else:
                assert _data_text(got, nl) == \
                    value_text(shown(states[pid].to_json())).replace("\n", nl)
    for pid, got in topic.texts_made_by(kafka_text.RUN_REGISTRATIONS).items():
        read += type(got) is str
        assert (got if type(got) is str else kafka_text.partition(got)) == \
            kafka_text.partition(states[pid])
    return read


@pytest.mark.parametrize("version", [0, 1, 2])
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_layout_lists_as_folding_does(tmp_path, case, version):
    path = snapshot(tmp_path / SNAPSHOT, [topic_of(0, version, CASES[case]),
                                          topic_of(1, version, CASES["uniform"])])
    listed = check(path)
    assert [len(s) for s in listed] == [len(CASES[case]), 6]
    # the snapshot's last offset (its end, 1000, less one) and time, as its records show
    assert {s.change for states in listed for s in states.values()} == {(999, TS)}


def test_a_run_is_decoded_together(tmp_path):
    path = snapshot(tmp_path / SNAPSHOT, [topic_of(0, 2, CASES["uniform"])])
    s = open_session(path)
    t = s.image.topic_by_name("topic-0")
    t.partition_records   # filed
    (ref, _, shape, pids, _), = t.filed_runs
    got = s.engine.store.run_data(ref, shape, len(pids))
    assert [d["partitionId"] for d, _, _ in got] == list(pids)
    # offsets as written: the header batch's SnapshotHeaderRecord (0), the
    # FeatureLevelRecord (1), the TopicRecord (2), then the partitions
    assert [offset for _, offset, _ in got] == list(range(3, 3 + len(pids)))
    assert s.engine.store.run_data(ref + shape.size, shape, len(pids)) is None   # not a run there


def test_directories_for_other_replicas_and_a_partition_twice(tmp_path):
    bad = [shaped(0, p, 1, (1, 2, 3), (1, 2, 3), dirs=DIRS[:2] if p == 1 else None)
           for p in range(3)]
    twice = [shaped(1, p % 2, 0, (1, 2), (1,) if p >= 2 else (1, 2)) for p in range(4)]
    listed = check(snapshot(tmp_path / SNAPSHOT, [bad, twice]))
    assert [sorted(s) for s in listed] == [[0, 2], [0, 1]]
    assert [s.isr for s in listed[1].values()] == [[1], [1]]   # the later record of each


def test_a_partition_that_does_not_decode(tmp_path):
    """A PartitionRecord whose body runs past its value (framed as its
    neighbours: still in their run) is not listed: Kafka skips it."""
    parts = [shaped(0, p, 2, (1, 2), (1, 2)) for p in range(4)]
    value = bytearray(parts[1].encoded_value())
    at = 3 + 4 + 16          # after frame header, partitionId and topicId: the replicas' count
    assert value[at] == 3
    value[at] = 0x7F         # 126 replicas
    parts[1] = Out(value=bytes(value))
    listed = check(snapshot(tmp_path / SNAPSHOT, [parts]))
    assert sorted(listed[0]) == [0, 2, 3]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(version=st.integers(0, 2),
       log=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 2), CHANGES), max_size=12))
def test_changed_partitions_list_as_folding_does(tmp_path_factory, version, log):
    check(changed(tmp_path_factory.mktemp("c"), version, log))


@pytest.mark.parametrize("path", corpus_inputs(), ids=lambda p: p.name)
def test_every_corpus_input(path):
    check(path)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_a_runs_texts_are_read_from_its_bytes(tmp_path, version):
    """Runs of the simple layouts are shown from their bytes (and agree with
    the general path); a tagged field (a recovery state) sends a run to it,
    and records of alternating layouts are no run."""
    cases = ("uniform", "removing", "no replicas", "mixed layouts", "recovering")
    path = snapshot(tmp_path / SNAPSHOT, [topic_of(t, version, CASES[c]) for t, c in enumerate(cases)])
    s = open_session(path)
    read = {c: check_texts(s.image.topic_by_name(f"topic-{t}"),
                           s.image.topic_by_name(f"topic-{t}").partitions())
            for t, c in enumerate(cases)}
    s.close()
    assert read == {c: 0 if c in ("recovering", "mixed layouts") else 4 * len(CASES[c])
                    for c in cases}
