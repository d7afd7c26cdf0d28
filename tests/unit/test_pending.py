"""A log's partition changes kept unfiled until needed (fast/pending.py):
whatever order topics are looked at in, and wherever a limit falls, the
image, the counts and the problems are those of filing every change as it
is read."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tests.support.paths import CORPORA
from tests.support.corpora import corpus_cases
from metashell.fs.root import build_root
from metashell.kraft.primitives import uuid_to_str
from metashell.loader.reader import read_file
from metashell.kraft.writer import record
from metashell.fast import pending
from metashell.replay.engine import ReplayEngine
from metashell.session.files import open_session
from tests.support.replay import TS0, Log, change, config, leaves, partition, topic, uid

# a topic id whose 16 bytes are text, written into a config value too
ASCII_ID = uuid_to_str(b"QRSTUVWXYZabcdef")


def noop():
    return record("NoOpRecord")


def controller_log(tmp_path: Path, seed: int = 1) -> Path:
    """Topics, then batches of changes only (some naming a partition or a
    topic that does not exist), heartbeats and config batches between them,
    a transaction of changes, a compressed batch of changes, a topic removed
    and made again, a ClearElr, and changes again after each of those."""
    rng = random.Random(seed)
    a, b, c, ghost = uid(1), uid(2), ASCII_ID, uid(9)
    sizes = {a: 4, b: 3, c: 5}
    log = Log()
    for name, tid in (("a", a), ("b", b), ("c", c)):
        log.add(topic(name, tid), *[partition(tid, p, replicas=(1, 2, 3)) for p in range(sizes[tid])])

    def changes(n):
        out = []
        for _ in range(n):
            tid = rng.choice((a, b, c, c))
            pid = rng.randrange(sizes[tid] + 1)          # one past the last: no such partition
            what = rng.randrange(3)
            out.append(change(tid, pid, leader=rng.choice((1, 2, 3))) if what == 0 else
                       change(tid, pid, isr=rng.sample((1, 2, 3), rng.randint(1, 3))) if what == 1
                       else change(tid, pid, leader=-2, isr=[1, 2, 3]))
        return out

    for _ in range(6):
        log.add(*changes(rng.randint(1, 5)))
        log.each(noop(), noop())
    log.add(config(2, "c", "note", "QRSTUVWXYZabcdef"))   # c's raw id, outside any change
    log.add(*changes(3), change(ghost, 0, leader=1))
    log.add(noop())
    log.add(record("BeginTransactionRecord", name="t"), *changes(2))
    log.add(record("EndTransactionRecord"))
    log.add(*changes(4))
    log.w.batch(changes(3), timestamp=TS0 + 500_000, codec=1)   # gzip: not kept unfiled
    log.add(*changes(2))
    log.add(record("RemoveTopicRecord", topicId=b))
    log.add(*changes(3))
    log.add(topic("b", b), partition(b, 0))
    log.add(*changes(4))
    log.add(record("ClearElrRecord", topicName="c"))
    for _ in range(4):
        log.add(*changes(rng.randint(1, 6)))
        log.each(noop())
    return log.write(tmp_path)


def eager(path: Path, **kw) -> ReplayEngine:
    """Every record read as a Record and applied as it comes: nothing pending."""
    eng = ReplayEngine(**kw)
    for batch in read_file(path, lazy=True):
        if not eng.apply_batch(batch):
            break
    eng.finish()
    return eng


def deferred(path: Path, **kw) -> ReplayEngine:
    eng = ReplayEngine(**kw)
    for batch in eng.store.open(path, lazy=True):
        if not eng.apply_batch(batch):
            break
    eng.finish()
    return eng


def shown(eng: ReplayEngine) -> tuple:
    tree = leaves(build_root(eng.image))
    eng.settle()
    return (tree, eng.applied, eng.skipped, eng.aborted, eng.by_type,
            eng.image.last_offset, eng.image.last_time)


def problems(eng: ReplayEngine) -> list[str]:
    return [str(p) for p in eng.problems]


def look_at(eng: ReplayEngine, order) -> None:
    """List the partitions of the topics ``order`` names, one at a time."""
    for tid in order:
        t = eng.image.topics.get(tid)
        if t is not None:
            list(t.partition_records)


def test_changes_are_kept_unfiled_until_needed(tmp_path):
    path = controller_log(tmp_path)
    eng = deferred(path)
    kept = eng._changes.batches
    assert len(kept) == 4                      # the batches after the last ClearElr
    applied = eng.applied
    eng.settle()
    assert eng._changes.batches == []
    assert eng.applied > applied               # counted when filed
    assert eng.by_type["PartitionChangeRecord"] > 0


def test_settled_at_once_is_filing_as_read(tmp_path):
    path = controller_log(tmp_path)
    a, b = deferred(path), eager(path)
    a.settle()
    assert problems(a) == problems(b)          # in log order
    assert any("unable to find partition" in p for p in problems(a))
    assert shown(a) == shown(b)


@pytest.mark.parametrize("seed", range(8))
def test_topics_looked_at_in_any_order(tmp_path, seed):
    path = controller_log(tmp_path, seed)
    b = eager(path)
    a = deferred(path)
    order = [uid(1), uid(2), ASCII_ID, uid(9)]
    random.Random(seed).shuffle(order)
    look_at(a, order[:2])
    assert a._changes.batches                  # only those two searched
    assert shown(a) == shown(b)
    assert sorted(problems(a)) == sorted(problems(b))


def test_the_search_budget_files_everything(tmp_path, monkeypatch):
    monkeypatch.setattr(pending, "SEARCH_BYTES_PER_CHANGE", 0)
    path = controller_log(tmp_path)
    a = deferred(path)
    look_at(a, [uid(1)])
    assert a._changes.batches == []
    assert problems(a) == problems(eager(path))


def test_changes_in_two_segments_are_found_in_both(tmp_path):
    """The pending batches of every segment are searched as one: a topic
    looked at gets its changes from both files, in log order."""
    first = controller_log(tmp_path / "a")
    log = Log(eager(first).image.last_offset + 1)
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
    path = controller_log(tmp_path)
    assert path.read_bytes().count(b"QRSTUVWXYZabcdef") > 10
    a, b = deferred(path), eager(path)
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
    eng = deferred(log.write(tmp_path))
    assert eng._changes.batches == []
    assert eng.by_type["PartitionChangeRecord"] == 1


def test_a_limit_anywhere(tmp_path):
    path = controller_log(tmp_path)
    last = max(r.offset for b in read_file(path) for r in b.records)
    for until in range(last + 1):
        a, b = deferred(path, until_offset=until), eager(path, until_offset=until)
        assert a.reached_limit == b.reached_limit
        assert shown(a) == shown(b), until
        assert sorted(problems(a)) == sorted(problems(b))


def test_the_session_files_them_for_counts_not_for_summary(tmp_path):
    """``summary`` reads what they do from their bytes (tests/unit/test_change_effects.py)."""
    path = controller_log(tmp_path)
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
