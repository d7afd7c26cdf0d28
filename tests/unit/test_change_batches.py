"""Batches of partition changes checked in one match and read when needed
(fast/change_batches.py): a batch is left unread only when reading it
record by record would have made nothing but deferred changes, and read
later it gives exactly those; the engine's image, counts and problems are
those of reading every record as it comes."""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metashell.fast.change_batches import ChangeBatch, ChangeShapes
from metashell.loader.reader import FileReader
from metashell.kraft.records import RESOLVED
from metashell.fast.store import RecordStore
from metashell.kraft.writer import Out, build_batch, encode_records, write_file
from tests.support.controller_logs import random_changes_log
from tests.support.deferred_reads import compare_file
from tests.support.replay import TS0, Log, engine_over, problems, shown
from tests.support.records import change, noop, partition, topic, uid

A, B = uid(1), uid(2)


def kinds(path: Path) -> list[str]:
    """What a deferred read hands over per batch: "unread" (a ChangeBatch) or "read"."""
    return ["unread" if type(b.records) is ChangeBatch else "read"
            for b in RecordStore().open(path, skip_damage=True)]


def topics_and_changes(tmp_path: Path, batches: list[list[Out]]) -> Path:
    log = Log()
    log.add(topic("a", A), *[partition(A, p) for p in range(4)])
    log.add(topic("b", B), *[partition(B, p) for p in range(3)])
    for outs in batches:
        log.add(*outs)
    return log.write(tmp_path)


def test_changes_of_shapes_seen_before_are_left_unread(tmp_path):
    shrink = [change(A, p, isr=[1, 2]) for p in range(4)]
    path = topics_and_changes(tmp_path, [shrink, shrink[:2], shrink[1:], [change(B, 0, leader=3)],
                                         shrink[:1] + [change(B, 1, leader=2)]])
    # learned from the first batch of changes; a new shape (a leader move) is read
    # and learned, then both are known
    assert kinds(path) == ["read", "read", "read", "unread", "unread", "read", "unread"]
    assert compare_file(path) == 7 + 4 + 2 + 3 + 1 + 2
    a, b = engine_over(path, deferred=True), engine_over(path)
    assert (shown(a), problems(a)) == (shown(b), problems(b)) and not problems(b)


def test_a_random_changes_log(tmp_path):
    path = random_changes_log(tmp_path)
    assert "unread" in kinds(path)
    compare_file(path)


def test_past_the_patterns_compiled_per_count_one_of_any_count(tmp_path, monkeypatch):
    """A pattern per record count, up to a bound; past it, one pattern and a
    second pass that counts: the same batches left unread."""
    path = random_changes_log(tmp_path)
    per_count = kinds(path)
    monkeypatch.setattr("metashell.fast.change_batches.MAX_COMPILED", 1)
    assert kinds(path) == per_count
    compare_file(path)
    monkeypatch.setattr("metashell.fast.change_batches.SEEN_BEFORE_COMPILED", 1)
    monkeypatch.setattr("metashell.fast.change_batches.MAX_COMPILED", 256)
    assert kinds(path) == per_count


def test_a_batch_declaring_another_count_is_read_and_reported(tmp_path):
    """Records of learned shapes, but one more (or fewer) declared: damage, as
    the per-record path says."""
    shrink = [change(A, p, isr=[1, 2]) for p in range(3)]
    log = Log()
    log.add(*shrink)
    payload, n = encode_records(shrink)
    path = tmp_path / "00000000000000000000.log"
    good = log.w.getvalue()
    for count in (n + 1, n - 1):
        write_file(path, good + build_batch(3, payload, count, base_timestamp=TS0))
        plain = FileReader(path, skip_damage=True)
        list(plain)
        store = RecordStore().open(path, skip_damage=True)
        assert [type(b.records) for b in store] == [list]
        assert [str(p) for p in store.summary.problems] == [str(p) for p in plain.summary.problems]
        assert "records the batch declares" in str(plain.summary.problems[0]) or \
            "runs past the end" in str(plain.summary.problems[0])


def test_only_changes_framed_as_learned_are_left_unread(tmp_path):
    shrink = [change(A, p, isr=[1, 2]) for p in range(3)]
    keyed = Out(spec=shrink[0].spec, version=shrink[0].version, data=shrink[0].data, key=b"k")
    headed = Out(spec=shrink[0].spec, version=shrink[0].version, data=shrink[0].data,
                 headers=(("h", b"v"),))
    path = topics_and_changes(tmp_path, [shrink, shrink + [keyed], [headed] + shrink,
                                         shrink + [topic("c", uid(3))], shrink])
    assert kinds(path) == ["read", "read", "read", "read", "read", "read", "unread"]
    compare_file(path)
    gz = Log()
    gz.add(*shrink)
    gz.w.batch(shrink, codec=1)
    assert kinds(gz.write(tmp_path / "gz")) == ["read", "read"]   # compressed: read as it comes


def test_shapes_are_bounded():
    shapes = ChangeShapes()
    for isr in range(100):
        payload, _ = encode_records([change(A, 0, isr=list(range(isr)))])
        shapes.learn(payload, 0, payload.index(b"\x01\x05"), len(payload), RESOLVED.get((1, 5, 0))[1])
    assert len(shapes.keys) == 64


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), until=st.one_of(st.none(), st.integers(0, 200)))
def test_any_log_of_changes_replays_as_read_record_by_record(tmp_path, seed, until):
    rng = random.Random(seed)

    def one():
        tid = rng.choice((A, B, uid(9)))                  # uid(9): no such topic
        pid = rng.randrange(5)                            # some past the last partition
        what = rng.randrange(6)
        rec = (change(tid, pid, leader=rng.choice((1, 2, 3))) if what == 0 else
               change(tid, pid, isr=rng.sample((1, 2, 3), rng.randint(1, 3))) if what == 1 else
               change(tid, pid, version=0, leader=-1) if what == 2 else
               change(tid, pid, leader=-2, isr=[1, 2, 3]))
        if what == 4:
            return Out(spec=rec.spec, version=rec.version, data=rec.data, key=b"k")
        if what == 5 and rng.random() < 0.3:
            return noop()
        return rec

    batches = [[one() for _ in range(rng.randint(1, 12))] for _ in range(rng.randint(1, 30))]
    path = topics_and_changes(tmp_path, batches)
    compare_file(path)
    kw = {} if until is None else {"until_offset": until}
    a, b = engine_over(path, deferred=True, **kw), engine_over(path, **kw)
    c = engine_over(path, deferred=True, **kw)
    # the tree first: a topic looked at files its changes, whose problems are
    # reported then; settled at once, they are reported in log order
    assert shown(a) == shown(b) and sorted(problems(a)) == sorted(problems(b))
    c.settle()
    assert problems(c) == problems(b)


def test_where_the_ids_lie_by_record_length():
    """``ids_at``: per record length, where a learned shape's ids lie; None
    when two learned shapes of one length put them apart (the reader then
    reads the framing)."""
    def learned(*outs):
        shapes = ChangeShapes()
        for out in outs:
            payload, _ = encode_records([out])
            vstart = payload.index(b"\x01\x05")
            shapes.learn(payload, 0, vstart, len(payload), RESOLVED.get((1, 5, 0))[1])
            at = shapes.ids_at[len(payload)]
            assert at is None or at == vstart + 3
        return shapes, [len(encode_records([out])[0]) for out in outs]

    plain = change(A, 0, isr=[1, 2])
    later = Out(spec=plain.spec, version=plain.version, data=plain.data, timestamp_delta=2**20)
    recovered = change(A, 0, isr=[1, 2], leaderRecoveryState=1)
    shapes, (n_plain, n_later, n_recovered) = learned(plain, later, recovered)
    assert n_later == n_recovered != n_plain            # 3 bytes more framing, or 3 more of value
    assert shapes.ids_at[n_plain] is not None
    assert shapes.ids_at[n_later] is None
    assert len(shapes._alternatives) == 3
