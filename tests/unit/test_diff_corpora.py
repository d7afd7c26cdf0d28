"""``diff`` on real Kafka log dirs (``../shared/corpora``): a snapshot equals
the log replayed up to its end offset, and between consecutive snapshots
``diff`` lists exactly the entities the records in between changed, checked
against those records; the rewound image equals a second replay at every
offset of every corpus log."""

from __future__ import annotations

import io
from functools import lru_cache
from pathlib import Path

import pytest

from tests.support.paths import CORPORA
from tests.support.corpora import corpus_cases
from metashell.session.baseline import open_baseline
from metashell.errors import MetashellError
from metashell.commands import Context, run_words
from metashell.fs.compare import compare
from metashell.fs.root import build_root
from metashell.fs.walk import walk
from metashell.loader.inputs import plan
from metashell.loader.reader import read_file
from metashell.session.files import open_session

LEFT_OUT = {("local",), ("topicIds",), ("image",), ("metadataQuorum",)}   # /image mirrors the tree


def log_dirs_with_snapshots() -> list[Path]:
    return sorted(d for d in CORPORA.iterdir()
                  if d.is_dir() and list(d.glob("__cluster_metadata-0/*-*.checkpoint")))


LOG_DIRS = corpus_cases(log_dirs_with_snapshots)


def snapshots_and_log(log_dir: Path):
    """The log dir's snapshots (oldest first) and its one segment from offset 0."""
    p = plan(log_dir)
    snaps = sorted(p.snapshot_candidates, key=lambda s: s.end_offset)
    segments = p.all_segments
    if len(segments) != 1 or segments[0].base_offset != 0:
        pytest.skip(f"{log_dir.name}: not one segment from offset 0")
    return snaps, segments[0].path


def run_diff(session, *words) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_words(Context.for_session(session, out=out, err=err),
                       ["diff", *map(str, words)])
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("log_dir", LOG_DIRS, ids=lambda d: d.name)
def test_a_snapshot_equals_the_log_at_its_end_offset(log_dir):
    snaps, log = snapshots_and_log(log_dir)
    assert snaps
    for snap in snaps:
        session = open_session(log, until_offset=snap.end_offset - 1)
        assert session.image.last_offset == snap.end_offset - 1
        assert run_diff(session, "--against", snap.path) == (0, "", ""), snap.path.name
        assert run_diff(session, "--against", snap.path, "--by-id") == (0, "", "")


# --------------------------------------------------------------------------- records in between

@lru_cache(maxsize=2)
def metadata_records(log: Path) -> "tuple[tuple[int, str, dict], ...]":
    """The log's metadata records as (offset, name, fields), decoded once per
    log: the tests below ask for many ranges of the same log."""
    return tuple((rec.offset, rec.name, rec.data) for batch in read_file(log)
                 for rec in batch.records if rec.kind == "metadata" and rec.data is not None)


def entities_touched(log: Path, after: int, upto: int) -> set[tuple]:
    """The tree paths of the entities that the log's records with offsets in
    (``after``, ``upto``] touch, read from the records themselves."""
    names: dict[str, str] = {}
    touched: set[tuple] = set()
    for offset, name, d in metadata_records(log):
        if name == "TopicRecord":
            names[d["topicId"]] = d["name"]
        if after < offset <= upto:
            touched |= _entity_paths(name, d, names)
    return touched


def _entity_paths(name: str, d: dict, topic_names: dict) -> set[tuple]:
    if name in ("RegisterBrokerRecord", "UnregisterBrokerRecord",
                "BrokerRegistrationChangeRecord"):
        return {("brokers", str(d["brokerId"]))}
    if name in ("FenceBrokerRecord", "UnfenceBrokerRecord"):
        return {("brokers", str(d["id"]))}
    if name == "RegisterControllerRecord":
        return {("controllers", str(d["controllerId"]))}
    if name == "TopicRecord":
        return {("topics", d["name"])}
    if name == "RemoveTopicRecord":
        topic = topic_names[d["topicId"]]
        return {("topics", topic), ("configs", "topic", topic)}
    if name in ("PartitionRecord", "PartitionChangeRecord"):
        return {("topics", topic_names[d["topicId"]], str(d["partitionId"]))}
    if name == "ConfigRecord":
        kinds = {2: "topic", 4: "broker", 8: "broker_logger", 16: "client_metrics", 32: "group"}
        return {("configs", kinds[d["resourceType"]], d["resourceName"] or "<default>")}
    if name == "FeatureLevelRecord":
        return {("features", d["name"])}
    if name == "ProducerIdsRecord":
        return {("producerIds",)}
    if name in ("NoOpRecord", "BeginTransactionRecord", "EndTransactionRecord",
                "AbortTransactionRecord", "ZkMigrationStateRecord"):
        return set()
    raise AssertionError(f"no entity for {name} in this test: extend it")


def subtree(root, parts: tuple):
    node = root
    for name in parts:
        node = node.child(name) if node is not None else None
    if node is None:
        return None
    if not node.is_dir:
        return node.value()
    return {path: n.value() for path, n in walk(node, "/") if not n.is_dir}


def assert_lists_what_the_records_changed(old_s, new_s, against: Path, log: Path,
                                          after: int, upto: int) -> int:
    """``diff`` of ``new_s`` against ``against`` (whose image is ``old_s``)
    lists exactly the entities that the log's records in (``after``,
    ``upto``] touched and whose files differ; returns how many."""
    touched = entities_touched(log, after, upto)
    changed = {e for e in touched if subtree(old_s.root, e) != subtree(new_s.root, e)}
    status, out, err = run_diff(new_s, "--against", against)
    assert err == ""
    assert status == (1 if changed else 0)
    listed = [tuple(line.split("  ")[0][2:].strip("/").split("/")) for line in out.splitlines()]

    def related(a, b):
        return a[:len(b)] == b or b[:len(a)] == a
    for parts in listed:   # every line is a change to an entity a record touched
        assert any(related(parts, e) for e in changed), parts
    for e in changed:      # every entity that changed has its line
        assert any(related(parts, e) for parts in listed), e
    return len(changed)


@pytest.mark.parametrize("log_dir", LOG_DIRS, ids=lambda d: d.name)
def test_between_consecutive_snapshots_exactly_what_the_records_changed(log_dir):
    snaps, log = snapshots_and_log(log_dir)
    if len(snaps) < 2:
        pytest.skip(f"{log_dir.name}: one snapshot only")
    for older, newer in zip(snaps, snaps[1:]):
        assert_lists_what_the_records_changed(open_session(older.path), open_session(newer.path),
                                              older.path, log, older.end_offset - 1,
                                              newer.end_offset - 1)


def transactions(log: Path) -> list[tuple[int, int]]:
    spans, begin = [], None
    for batch in read_file(log):
        for rec in batch.records:
            if rec.name == "BeginTransactionRecord":
                begin = rec.offset
            elif rec.name in ("EndTransactionRecord", "AbortTransactionRecord") and begin is not None:
                spans.append((begin, rec.offset))
                begin = None
    return spans


@pytest.mark.parametrize("log_dir", LOG_DIRS, ids=lambda d: d.name)
def test_from_points_of_the_log_to_the_first_snapshot(log_dir):
    """The log replayed up to a point before the first snapshot, against that
    snapshot: the records in between created the cluster, so this is where
    the corpora's topics, partitions, brokers, configs and features change."""
    snaps, log = snapshots_and_log(log_dir)
    first = snaps[0]
    spans = transactions(log)
    points = [p for p in (0, 2, 5, 10, 20, 40, 60, 80, 100, 150, 300, first.end_offset // 2)
              if p < first.end_offset - 1 and not any(b <= p < e for b, e in spans)]
    changed = [assert_lists_what_the_records_changed(
        open_session(first.path), open_session(log, until_offset=p), first.path, log, p,
        first.end_offset - 1) for p in points]
    assert max(changed) > 5


# --------------------------------------------------------------------------- rewinding

def rewind_sources() -> list[Path]:
    logs = sorted(CORPORA.glob("*/*.log")) + sorted(CORPORA.glob("*/__cluster_metadata-0/*.log"))
    return [p for p in logs if p.stat().st_size] + log_dirs_with_snapshots()


SOURCES = corpus_cases(rewind_sources)


def _changes(old_image, new_image):
    return [(c.path, c.op, tuple(c.fields))
            for c in compare(build_root(old_image, show_secrets=True),
                             build_root(new_image, show_secrets=True), skip=LEFT_OUT)]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_rewound_image_equals_a_second_replay(source):
    session = open_session(source)
    first = session.plan.segments[0].base_offset if session.plan.segments else 0
    last = session.image.last_offset
    points = sorted({first, first + 1, first + 5, (first + last) // 3, (first + last) // 2,
                     last - 100, last - 3, last - 1, last}
                    | {s.end_offset - 1 for s in session.plan.snapshot_candidates})
    rewound = 0
    for offset in (p for p in points if first <= p <= last):
        fast, _ = open_baseline(session, open_session, from_offset=offset)
        slow, _ = open_baseline(session, open_session, from_offset=offset, rewinding=False)
        rewound += fast.topics is not slow.topics
        assert _changes(fast, session.image) == _changes(slow, session.image), offset
    assert rewound
    times = sorted({b.header.max_timestamp for path in [*session.plan.files]
                    for b in read_file(path) if not path.name.endswith(".checkpoint")})
    for rewinding in (True, False):   # before the first batch: nothing to compare with
        with pytest.raises(MetashellError, match="--from-time .* is before the oldest point"):
            open_baseline(session, open_session, from_time=times[0] - 1, rewinding=rewinding)
    for time in {*times[::max(1, len(times) // 12)], times[-1]}:
        fast, _ = open_baseline(session, open_session, from_time=time)
        slow, _ = open_baseline(session, open_session, from_time=time, rewinding=False)
        assert _changes(fast, session.image) == _changes(slow, session.image), time
