"""Brokers' start times from every source (queries/registration.py, the tree,
``ls -l``, ``summary``).

* Real Kafka log dirs (``../shared/corpora``): loading the directory from
  each of its snapshots (snapshot + segments) gives every broker the same
  ``registeredAt`` and ``registeredAtOffset`` as replaying the whole log from
  offset 0, and for every RegisterBrokerRecord of every real segment the
  batch-header lookup at its epoch gives the record's own time (among them
  epochs one below the record's offset, in a control batch or the same batch).
* A generated log dir whose early segments were deleted: the offset is
  shown, the time is null and ``ls -l``, ``summary`` say why; a broker
  registered in a segment still there gets its time from the batch headers;
  a migrated ZooKeeper broker and an epoch beyond the log have no offset.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from tests.support.replay import TS0, Log, cat, engine_over, node, write_snapshot
from tests.support.records import broker

from tests.support.paths import CORPORA
from tests.support.corpora import corpus_cases, needs_corpora
from metashell import cli
from metashell.fs.root import build_root
from metashell.loader.append_times import NO_LOG, SegmentAppendTimes
from metashell.loader.inputs import parse_snapshot_name, plan
from metashell.loader.reader import read_file
from metashell.queries.registration import NO_TIMES
from metashell.session.files import open_session
from metashell.timefmt import duration

LOGDIRS = sorted(d.name for d in CORPORA.glob("*") if (d / "__cluster_metadata-0").is_dir())


def starts(root) -> dict:
    """broker id -> (registeredAt, registeredAtOffset)."""
    brokers = root.child("brokers")
    return {b: (cat(root, f"/brokers/{b}/registeredAt"), cat(root, f"/brokers/{b}/registeredAtOffset"))
            for b in brokers.children()}


# =========================================================================== real Kafka log dirs

def logdir_cases():
    for name in LOGDIRS:
        part = CORPORA / name / "__cluster_metadata-0"
        ends = [parse_snapshot_name(p.name)[0] for p in sorted(part.glob("*.checkpoint"))]
        for end in ends + [None]:
            yield pytest.param(name, end, id=f"{name}@{end if end is not None else 'newest'}")


@pytest.mark.parametrize("name,end", corpus_cases(lambda: list(logdir_cases()), width=2))
def test_logdir_start_times_equal_the_whole_log_replayed(name, end):
    until = None if end is None else end - 1
    directory = open_session(CORPORA / name, until_offset=until)
    segments = [s.path for s in plan(CORPORA / name).all_segments]
    whole = engine_over(*segments, until_offset=until)
    assert whole.problems == [] and directory.engine.problems == []
    expected = starts(build_root(whole.image))
    assert expected and all(t is not None for t, _ in expected.values())
    assert starts(directory.root) == expected
    if directory.plan.snapshot is not None:
        # the registrations came from the snapshot: the segments' headers gave the times
        assert all(b.registered_at is None for b in directory.image.brokers.values())


@needs_corpora
def test_the_lookup_at_each_real_epoch_gives_the_record_time():
    segments = sorted(CORPORA.glob("*/*.log")) + sorted(CORPORA.glob("*/__cluster_metadata-0/*.log"))
    assert segments
    checked = off_by_one = 0
    for path in segments:
        base = int(path.stem)
        times = SegmentAppendTimes(plan(path).all_segments)
        for batch in read_file(path):
            for rec in batch.records:
                if rec.name != "RegisterBrokerRecord" or rec.data["brokerEpoch"] < base:
                    continue
                epoch = rec.data["brokerEpoch"]
                assert times.write_time(epoch) == (rec.timestamp, None), (path, rec.offset)
                checked += 1
                off_by_one += epoch != rec.offset
    assert checked >= 20 and off_by_one >= 4


# =========================================================================== a generated log dir

T1 = "AAAAAAAAAAAAAAAAAAAAAQ"


@pytest.fixture
def retained(tmp_path):
    """A log dir: segment 0 (brokers 1 and 2 register) was deleted after the
    snapshot at 30 covered it; segment 10 (broker 3 registers, with an
    ``.index``) is still there; after the snapshot broker 1 re-registers.
    The snapshot also holds a migrated ZooKeeper broker and one whose epoch
    is beyond the log."""
    part = tmp_path / "__cluster_metadata-0"
    first = Log(0)
    first.leader(1)
    first.add(broker(1, epoch=1))
    first.add(broker(2, epoch=2))
    first.w.records([broker(9, epoch=3)] * 7)            # offsets 3-9 (broker 9's last epoch: 9)
    second = Log(10)
    for _ in range(10):
        second.add(broker(9, epoch=second.next_offset), ts=TS0 + 100_000 + second.next_offset)
    b3 = second.add(broker(3, epoch=second.next_offset), ts=TS0 + 777_000)
    for _ in range(30 - second.next_offset):
        second.add(broker(9, epoch=second.next_offset), ts=TS0 + 100_000 + second.next_offset)
    seg = second.write(part)
    # an index entry for offset 15 (one record a batch), then pre-allocated zeros
    at15 = sum(len(p) for p in second.w.parts[:5])
    seg.with_suffix(".index").write_bytes((5).to_bytes(4, "big") + at15.to_bytes(4, "big")
                                          + bytes(64))
    write_snapshot(part, 30, [broker(1, epoch=1), broker(2, epoch=2), broker(3, epoch=b3),
                              broker(7, epoch=5000), broker(8, epoch=77, isMigratingZkBroker=True),
                              broker(9, epoch=29)],
                   timestamp=TS0 + 900_000)
    third = Log(30)
    again = third.add(broker(1, epoch=third.next_offset), ts=TS0 + 1_000_000)
    third.write(part)
    return tmp_path, b3, again


def sh(path, *words) -> tuple[int, str]:
    result = CliRunner().invoke(cli.make_cli(), ["-s", str(path), *words])
    return result.exit_code, result.stdout


def test_deleted_segments_offset_shown_time_null_reason_given(retained):
    path, b3, again = retained
    s = open_session(path)
    root = s.root
    assert starts(root) == {
        "1": ("2023-11-14T22:30:00.000Z", again),            # replayed after the snapshot
        "2": (None, 2),                                      # its segment was deleted
        "3": ("2023-11-14T22:26:17.000Z", b3),               # from the segment's batch headers
        "7": (None, None),                                   # epoch beyond the log
        "8": (None, None),                                   # migrated ZooKeeper broker
        "9": ("2023-11-14T22:15:00.029Z", 29),
    }
    why = node(root, "/brokers/2/registeredAt").note()
    assert why.startswith("offset 2 is before the first segment, 00000000000000000010.log, which "
                          "starts at 10;")
    assert node(root, "/brokers/2/registeredAtOffset").note() is None
    assert "ZooKeeper" in node(root, "/brokers/8/registeredAtOffset").note()
    assert "broker epoch 5000 is not an offset of this log" in node(root, "/brokers/7/registeredAt").note()
    assert node(root, "/brokers/3/registeredAt").note() is None


def test_ls_l_shows_starts_and_reasons(retained):
    path, b3, again = retained
    status, out = sh(path, "ls", "-l", "/brokers")
    assert status == 0
    lines = out.splitlines()[1:]   # under the header
    assert lines[0].endswith(f"1  (registered 2023-11-14T22:30:00.000Z at offset {again})")
    assert lines[1].endswith("2  (registered at offset 2, time unknown [1])")
    assert lines[2].endswith(f"3  (registered 2023-11-14T22:26:17.000Z at offset {b3})")
    # each reason said once, under the table, by its number
    assert ("[1] time unknown: before the first segment, 00000000000000000010.log, which "
            "starts at 10; the segments holding it were deleted once a snapshot covered them"
            in lines)
    assert out.count("deleted once a snapshot covered them") == 1
    status, out = sh(path, "ls", "-l", "/brokers/2")
    assert "registeredAt  (offset 2 is before the first segment" in out
    status, out = sh(path, "-o", "json", "ls", "-l", "/brokers/8")
    entries = {e["name"]: e for e in json.loads(out)}
    assert "ZooKeeper" in entries["registeredAtOffset"]["why"]
    assert "note" not in entries["registeredAtOffset"]
    assert "why" not in entries["isFenced"] and "note" not in entries["isFenced"]
    status, out = sh(path, "-o", "json", "ls", "-l", "/brokers")
    entries = {e["name"]: e for e in json.loads(out)}
    assert entries["1"]["registeredAt"] == "2023-11-14T22:30:00.000Z"
    assert entries["1"]["registeredAtOffset"] == again and entries["1"]["why"] is None
    assert entries["2"]["registeredAt"] is None and "before the first segment" in entries["2"]["why"]


def test_summary_lists_starts_newest_first_with_age(retained):
    path, b3, again = retained
    status, out = sh(path, "-o", "json", "summary")
    assert status == 0
    data = json.loads(out)
    rows = data["brokers"]["started"]
    assert [r["brokerId"] for r in rows] == [1, 9, 3, 2, 7, 8]
    assert rows[0] == {"brokerId": 1, "registeredAt": "2023-11-14T22:30:00.000Z",
                       "registeredAtOffset": again, "ageMs": 0, "note": None}
    assert rows[2]["ageMs"] == 1_000_000 - 777_000
    assert rows[3]["registeredAt"] is None and rows[3]["ageMs"] is None
    assert "before the first segment" in rows[3]["note"]
    status, out = sh(path, "summary")
    started = out[out.index("  started:"):].splitlines()[1:7]
    fenced = set(data["brokers"]["fenced"])
    assert started[0].split() == ["1:", "2023-11-14T22:30:00.000Z", "offset", str(again),
                                  "registered", "0s", "before", "lastTime"] + ["fenced"] * (1 in fenced)
    assert started[2].split() == ["3:", "2023-11-14T22:26:17.000Z", "offset", str(b3),
                                  "registered", "3m", "43s", "before", "lastTime"] + ["fenced"] * (3 in fenced)
    # why a time is unknown: a short mark per row, each reason once below the rows
    assert started[3].split()[:4] == ["2:", "time", "unknown", "[1]"]
    assert started[3].split()[4:6] == ["offset", "2"]
    assert started[5].split()[:4] == ["8:", "time", "unknown", "[3]"]
    assert len({len(line.split("offset")[0]) for line in started if "offset" in line}) == 1
    notes = dict(line.strip().split(": ", 1) for line in
                 out[out.index("  timeUnknown:"):].splitlines()[1:4])
    assert notes["[1]"].startswith("before the first segment")
    assert notes["[3]"].startswith("a ZooKeeper broker being migrated")
    assert out.count("before the first segment") == 1


def test_a_snapshot_alone_says_to_load_the_directory(retained):
    path, _, _ = retained
    snap = next((path / "__cluster_metadata-0").glob("*.checkpoint"))
    root = open_session(snap).root
    assert cat(root, "/brokers/3/registeredAtOffset") == 20
    assert cat(root, "/brokers/3/registeredAt") is None
    assert node(root, "/brokers/3/registeredAt").note() == NO_LOG


def test_load_reads_no_segment_before_the_snapshot_until_asked(retained, monkeypatch):
    path, _, _ = retained
    calls = []
    real = SegmentAppendTimes.write_time
    monkeypatch.setattr(SegmentAppendTimes, "write_time",
                        lambda self, offset: calls.append(offset) or real(self, offset))
    s = open_session(path)
    cat(s.root, "/brokers/3/isFenced")
    assert calls == []
    cat(s.root, "/brokers/3/registeredAt")
    assert calls == [20]


@pytest.mark.parametrize("ms,text", [
    (None, None), (0, "0s"), (999, "0s"), (61_000, "1m 1s"), (3_600_000, "1h 0m"),
    (5 * 3_600_000 + 120_005, "5h 2m"), (3 * 86_400_000 + 4 * 3_600_000 + 59_000, "3d 4h"),
    (3 * 86_400_000 + 61_000, "3d 0h"), (86_400_000, "1d 0h"), (60_000, "1m 0s"),
    (-61_000, "-1m 1s"), (-86_400_000, "-1d 0h"),
])
def test_ages_print_as_their_two_largest_units(ms, text):
    assert duration(ms) == text


def test_a_tree_without_a_source_of_times_says_so(retained):
    # as a live session that started from a snapshot builds it: no append times given
    path, _, _ = retained
    snap = next((path / "__cluster_metadata-0").glob("*.checkpoint"))
    root = build_root(open_session(snap).image)
    assert cat(root, "/brokers/3/registeredAt") is None
    assert node(root, "/brokers/3/registeredAt").note() == NO_TIMES
    assert node(root, "/brokers").child("3").note() == f"registered at offset 20, time unknown: {NO_TIMES}"
