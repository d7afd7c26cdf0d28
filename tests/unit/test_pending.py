"""A log's partition changes kept unfiled until needed (fast/pending.py):
whatever order topics are looked at in, and wherever a limit falls, the
image, the counts and the problems are those of filing every change as it
is read."""

from __future__ import annotations

import json
import random

import pytest

from tests.support.paths import CORPORA
from tests.support.corpora import corpus_cases
from metashell.loader.reader import read_file
from metashell.fast import pending
from metashell.replay.engine import ReplayEngine
from metashell.session.files import open_session
from tests.support.controller_logs import ASCII_ID, random_changes_log
from tests.support.replay import TS0, Log, engine_over, leaves, problems, shown
from tests.support.records import change, noop, partition, topic, uid



def look_at(eng: ReplayEngine, order) -> None:
    """List the partitions of the topics ``order`` names, one at a time."""
    for tid in order:
        t = eng.image.topics.get(tid)
        if t is not None:
            list(t.partition_records)


def test_changes_are_kept_unfiled_until_needed(tmp_path):
    path = random_changes_log(tmp_path)
    eng = engine_over(path, deferred=True)
    kept = eng._changes.batches
    assert len(kept) == 4                      # the batches after the last ClearElr
    applied = eng.applied
    eng.settle()
    assert eng._changes.batches == []
    assert eng.applied > applied               # counted when filed
    assert eng.by_type["PartitionChangeRecord"] > 0


def test_settled_at_once_is_filing_as_read(tmp_path):
    path = random_changes_log(tmp_path)
    a, b = engine_over(path, deferred=True), engine_over(path)
    a.settle()
    assert problems(a) == problems(b)          # in log order
    assert any("unable to find partition" in p for p in problems(a))
    assert shown(a) == shown(b)


@pytest.mark.parametrize("seed", range(8))
def test_topics_looked_at_in_any_order(tmp_path, seed):
    path = random_changes_log(tmp_path, seed)
    b = engine_over(path)
    a = engine_over(path, deferred=True)
    order = [uid(1), uid(2), ASCII_ID, uid(9)]
    random.Random(seed).shuffle(order)
    look_at(a, order[:2])
    assert a._changes.batches                  # only those two searched
    assert shown(a) == shown(b)
    assert sorted(problems(a)) == sorted(problems(b))


def test_the_search_budget_files_everything(tmp_path, monkeypatch):
    monkeypatch.setattr(pending, "SEARCH_BYTES_PER_CHANGE", 0)
    path = random_changes_log(tmp_path)
    a = engine_over(path, deferred=True)
    look_at(a, [uid(1)])
    assert a._changes.batches == []
    assert problems(a) == problems(engine_over(path))


def test_changes_in_two_segments_are_found_in_both(tmp_path):
    """The pending batches of every segment are searched as one: a topic
    looked at gets its changes from both files, in log order."""
    first = random_changes_log(tmp_path / "a")
    log = Log(engine_over(first).image.last_offset + 1)
    log.add(change(uid(1), 0, isr=[1]), change(ASCII_ID, 1, leader=2))
    log.each(noop())
    log.add(change(ASCII_ID, 1, isr=[3, 1]), change(uid(1), 0, leader=-1))
    second = log.write(tmp_path / "b")
    engines = []
    for lazy in (True, False):
        eng = ReplayEngine()
        for path in (first, second):
            for batch in eng.store.open(path, lazy=True) if lazy else read_file(path, lazy=True):
                eng.apply_batch(batch)
        eng.finish()
        engines.append(eng)
    a, b = engines
    look_at(a, [uid(1), ASCII_ID])
    assert a._changes.batches                  # a and c filed, b left pending
    part = a.fold_partition(a.image.topics[uid(1)].partition_records[0])
    assert list(part.isr) == [1] and part.leader == -1   # the second file's changes, last
    assert shown(a) == shown(b)


def test_a_topic_id_outside_the_changes_is_not_taken_for_one(tmp_path):
    path = random_changes_log(tmp_path)
    assert path.read_bytes().count(b"QRSTUVWXYZabcdef") > 10
    a, b = engine_over(path, deferred=True), engine_over(path)
    look_at(a, [ASCII_ID])
    t = a.image.topics[ASCII_ID]
    fold = {pid: a.fold_partition(r).to_json() for pid, r in t.partition_records.items()}
    want = {pid: b.fold_partition(r).to_json()
            for pid, r in b.image.topics[ASCII_ID].partition_records.items()}
    assert fold == want


def test_a_compressed_batch_is_filed_as_read(tmp_path):
    log = Log()
    a = uid(1)
    log.add(topic("a", a), partition(a, 0))
    log.w.batch([change(a, 0, leader=2)], timestamp=TS0 + 5, codec=1)
    eng = engine_over(log.write(tmp_path), deferred=True)
    assert eng._changes.batches == []
    assert eng.by_type["PartitionChangeRecord"] == 1


def test_a_limit_anywhere(tmp_path):
    path = random_changes_log(tmp_path)
    last = max(r.offset for b in read_file(path) for r in b.records)
    for until in range(last + 1):
        a = engine_over(path, until_offset=until, deferred=True)
        b = engine_over(path, until_offset=until)
        assert a.reached_limit == b.reached_limit
        assert shown(a) == shown(b), until
        assert sorted(problems(a)) == sorted(problems(b))


def test_the_session_files_them_for_counts_not_for_summary(tmp_path):
    """``summary`` reads what they do from their bytes (tests/unit/test_change_effects.py)."""
    path = random_changes_log(tmp_path)
    s = open_session(path)
    assert s.engine._changes.batches
    first = s.summary()
    again = open_session(path)
    again.engine.settle()
    assert json.dumps(first, default=str) == json.dumps(again.summary(), default=str)
    assert s.counts() == again.counts()


@pytest.mark.parametrize("name", corpus_cases(lambda: sorted(p.name for p in CORPORA.glob("*logdir*"))))
def test_corpus_log_dirs(name):
    """Each of Kafka's log dirs: its topics looked at last to first, then
    everything, the same as filing every change as it is read."""
    path = CORPORA / name
    lazy, settled = open_session(path), open_session(path)
    settled.engine.settle()
    look_at(lazy.engine, reversed(list(lazy.image.topics)))
    assert leaves(lazy.root) == leaves(settled.root)
    assert lazy.counts() == settled.counts()
    assert sorted(map(str, lazy.engine.problems)) == sorted(map(str, settled.engine.problems))
