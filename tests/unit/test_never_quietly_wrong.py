"""Damaged, incomplete and out-of-range inputs are never quietly wrong:
incomplete snapshots (cut at a batch boundary, after the header batch, in
the middle of a batch) fall back in a directory and warn alone; a snapshot
past the end of its log is reported; flipped bytes are problems; a torn
end of the newest segment is only a note; ``--strict`` fails on problems;
``summary`` lists them; time travel before the data is an error and past it
a warning. On generated files and on copies of the corpora."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.paths import EXAMPLE
from tests.support.corpora import corpus
from metashell import cli
from metashell.errors import MetashellError
from metashell.kraft.writer import snapshot_name
from metashell.session.files import open_session
from tests.support.replay import TS0, Log, leaves, write_snapshot
from tests.support.records import broker, change, partition, topic, uid

T1, T2 = uid(1), uid(2)
TOPS = ["brokers", "controllers", "topics", "configs", "features", "producerIds"]


def batch_ends(data: bytes) -> list[int]:
    """Where each batch of a file ends (a snapshot: header, data..., footer)."""
    ends, pos = [], 0
    while pos + 12 <= len(data):
        pos += 12 + struct.unpack_from(">i", data, pos + 8)[0]
        ends.append(pos)
    return ends


def cut(path: Path, how: str) -> None:
    """Cut a snapshot the three ways an unfinished one ends (or, ``flipped``,
    damage a byte of its data batch)."""
    data = path.read_bytes()
    ends = batch_ends(data)
    if how == "flipped":
        flip(path, ends[0] + 70)
        return
    keep = {"boundary": ends[-2], "header": ends[0], "mid-batch": ends[-2] - 7}[how]
    path.write_bytes(data[:keep])


def flip(path: Path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= 0xFF
    path.write_bytes(bytes(data))


def run(*args) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli.make_cli(), list(map(str, args)))
    return result.exit_code, result.stdout, result.stderr


def tree(session) -> dict:
    return leaves(session.root, TOPS)


def generated_dir(tmp_path: Path) -> tuple[Path, Path]:
    """A log from 0 (offsets 0-5) and snapshots ending at 3 and 6."""
    part = tmp_path / "__cluster_metadata-0"
    log = Log()
    log.add(broker(1, fenced=False))                               # 0
    log.add(topic("foo", T1), partition(T1, 0))                    # 1, 2
    log.add(change(T1, 0, leader=2))                               # 3
    log.add(topic("bar", T2))                                      # 4
    log.add(change(T1, 0, leader=3))                               # 5
    seg = log.write(part)
    write_snapshot(part, 3, [broker(1, fenced=False), topic("foo", T1), partition(T1, 0)],
                   timestamp=TS0 + 1000)
    newest = write_snapshot(part, 6, [broker(1, fenced=False), topic("foo", T1),
                                      partition(T1, 0, leader=3, leaderEpoch=2, partitionEpoch=2),
                                      topic("bar", T2)], timestamp=TS0 + 4000)
    return seg, newest


# =========================================================================== 1. incomplete snapshots

@pytest.mark.parametrize("how", ["boundary", "header", "mid-batch"])
def test_a_dir_falls_back_from_an_incomplete_snapshot(tmp_path, how):
    seg, newest = generated_dir(tmp_path)
    whole = tree(open_session(seg))
    cut(newest, how)
    s = open_session(tmp_path)
    assert s.plan.snapshot.end_offset == 3               # the older one, then the log
    assert tree(s) == whole
    [problem] = s.problems()
    assert problem.startswith(f"{newest} (byte ")
    assert "incomplete snapshot: no SnapshotFooterRecord" in problem
    assert f"falling back to {snapshot_name(3, 1)}" in problem
    assert {"boundary": "it ends after 2 batches", "header": "it holds only its header batch",
            "mid-batch": "its last batch is cut"}[how] in problem


def test_without_an_older_snapshot_the_log_is_replayed_from_its_start(tmp_path):
    seg, newest = generated_dir(tmp_path)
    (newest.parent / snapshot_name(3, 1)).unlink()
    cut(newest, "boundary")
    s = open_session(tmp_path)
    assert s.plan.snapshot is None
    assert tree(s) == tree(open_session(seg))
    assert "replaying the log from its start" in s.problems()[0]


@pytest.mark.parametrize("how", ["boundary", "header", "mid-batch"])
def test_an_incomplete_snapshot_alone_loads_what_it_holds_and_warns(tmp_path, how):
    _, newest = generated_dir(tmp_path)
    cut(newest, how)
    s = open_session(newest)
    [problem] = s.problems()
    assert "incomplete snapshot" in problem and problem.endswith("loaded what it holds")
    topics = sorted(s.root.child("topics").children())
    assert topics == ([] if how != "boundary" else ["bar", "foo"])
    status, out, err = run("-s", newest, "-o", "json", "summary")
    assert status == 0 and json.loads(out)["problems"] == [problem]
    assert run("-s", newest, "--strict", "ls", "/")[0] == 1


@pytest.mark.parametrize("how", ["boundary", "header", "mid-batch", "flipped"])
def test_corpus_dir_with_its_newest_snapshot_cut(tmp_path, how):
    source = corpus("kafka-4.2-logdir")
    whole = tree(open_session(source))
    copy = tmp_path / "meta"
    shutil.copytree(source, copy)
    newest = sorted((copy / "__cluster_metadata-0").glob("*.checkpoint"))[-1]
    newest.chmod(0o644)
    cut(newest, how)
    s = open_session(copy)
    assert s.plan.snapshot.path.name == "00000000000000039383-0000000004.checkpoint"
    assert tree(s) == whole
    assert len(s.problems()) == 1 and newest.name in s.problems()[0]
    assert ("CRC" if how == "flipped" else "incomplete snapshot") in s.problems()[0]
    assert run("-s", copy, "ls", "/topics")[:2] == (0, "test-topic\n")
    assert run("-s", copy, "--strict", "ls", "/topics")[:2] == (1, "test-topic\n")


def test_corpus_dir_with_a_torn_newest_segment_is_clean_for_strict(tmp_path):
    source = corpus("kafka-4.2-logdir")
    copy = tmp_path / "meta"
    shutil.copytree(source, copy)
    seg = copy / "__cluster_metadata-0" / "00000000000000000000.log"
    seg.chmod(0o644)
    seg.write_bytes(seg.read_bytes()[:-30])
    status, out, err = run("-s", copy, "--strict", "-o", "json", "summary")
    assert status == 0 and json.loads(out)["problems"] == []
    assert "the last batch is incomplete" in err


def test_a_snapshot_past_the_end_of_the_log_is_reported(tmp_path):
    part = tmp_path / "__cluster_metadata-0"
    log = Log()
    log.add(broker(1, fenced=False))
    log.add(topic("foo", T1))
    log.write(part)                                         # offsets 0-1
    write_snapshot(part, 500, [broker(2, fenced=False)])   # another run of the cluster
    s = open_session(tmp_path)
    [problem] = s.problems()
    assert problem.startswith(f"snapshot {snapshot_name(500, 1)} ends at offset 499, past the end "
                              f"of the log (offset 1, in 00000000000000000000.log)")


def test_a_log_dir_of_a_running_broker_is_not_a_problem(tmp_path):
    """A snapshot whose end is the newest (empty) segment's base offset, as
    Kafka leaves it after a follower fetched a snapshot."""
    part = tmp_path / "__cluster_metadata-0"
    write_snapshot(part, 6, [broker(1, fenced=False)])
    Log(base_offset=6).write(part)
    assert open_session(tmp_path).problems() == []


# =========================================================================== 2, 3. problems and notes

def test_a_torn_end_of_the_newest_segment_is_a_note(tmp_path):
    seg, newest = generated_dir(tmp_path)
    newest.unlink()   # it ends with the batch torn below: not what Kafka leaves
    seg.write_bytes(seg.read_bytes()[:-5])
    s = open_session(tmp_path)
    assert s.problems() == []
    assert any("the last batch is incomplete" in w for w in s.warnings)
    status, _, err = run("-s", tmp_path, "--strict", "ls", "/topics")
    assert status == 0 and "the last batch is incomplete" in err


def test_a_torn_end_of_an_older_segment_is_a_problem(tmp_path):
    part = tmp_path / "__cluster_metadata-0"
    first = Log()
    first.add(broker(1, fenced=False))
    first.add(topic("foo", T1))
    path = first.write(part)
    path.write_bytes(path.read_bytes()[:-5])
    second = Log(base_offset=2)
    second.add(topic("bar", T2))
    second.write(part)
    s = open_session(tmp_path)
    assert len(s.problems()) == 1 and "the last batch is incomplete" in s.problems()[0]


def test_a_flipped_byte_is_a_problem_in_summary_and_for_strict(tmp_path):
    seg, _ = generated_dir(tmp_path)
    ends = batch_ends(seg.read_bytes())
    flip(seg, ends[2] + 70)                     # inside the fourth batch (offset 4, topic bar)
    status, out, err = run("-s", seg, "-o", "json", "summary")
    data = json.loads(out)
    assert status == 0 and data["topics"] == 1
    [problem] = data["problems"]
    assert problem.startswith(f"{seg} (byte {ends[2]}, offset 4): ") and "batch skipped" in problem
    assert problem in err
    status, out, err = run("-s", seg, "--strict", "summary")
    assert status == 1 and "problems:" in out and "--strict" in err.splitlines()[-1]
    assert run("-s", seg, "-o", "json", "summary")[0] == 0


def test_a_clean_load_has_no_problems(tmp_path):
    seg, _ = generated_dir(tmp_path)
    status, out, _ = run("-s", tmp_path, "--strict", "-o", "json", "summary")
    assert status == 0 and json.loads(out)["problems"] == []


def test_corpus_segment_with_a_flipped_byte(tmp_path):
    source = corpus("kafka-3.2-three-brokers") / "00000000000000000000.log"
    copy = tmp_path / source.name
    copy.write_bytes(source.read_bytes())
    flip(copy, batch_ends(copy.read_bytes())[3] + 40)
    status, out, _ = run("-s", copy, "--strict", "-o", "json", "summary")
    assert status == 1 and len(json.loads(out)["problems"]) == 1


# =========================================================================== 4. time travel's range

def test_time_travel_before_the_data_is_an_error(tmp_path):
    seg, _ = generated_dir(tmp_path)
    for source in (seg, tmp_path):
        with pytest.raises(MetashellError, match=r"--until-time 2023-11-14T22:13:19.999Z .* is "
                                                 r"before the oldest point this source can "
                                                 r"rebuild: offset 0 at 2023-11-14T22:13:20.000Z"):
            open_session(source, until_time=TS0 - 1)
    status, out, err = run("-s", tmp_path, "--until-time", TS0 // 1000, "ls")
    assert status == 1 and out == ""
    assert "epoch seconds? --until-time takes milliseconds" in err


def test_time_travel_past_the_data_warns(tmp_path):
    seg, _ = generated_dir(tmp_path)
    status, out, err = run("-s", tmp_path, "--until-offset", 1000, "ls", "/topics")
    assert status == 0 and out.split() == ["bar", "foo"]
    assert ("--until-offset 1000 is past the end of the data: the last record is offset 5 at "
            "2023-11-14T22:13:24.000Z") in err
    assert run("-s", tmp_path, "--until-offset", 1000, "--strict", "ls")[0] == 1
    assert run("-s", tmp_path, "--until-offset", 5, "--strict", "ls")[0] == 0


def test_diff_names_its_own_options(tmp_path):
    generated_dir(tmp_path)
    status, _, err = run("-s", tmp_path, "diff", "--from-offset", 1000)
    assert status == 2 and "diff: --from-offset 1000 is past the end of the data" in err
    status, _, err = run("-s", tmp_path, "--until-offset", 4, "diff", "--from-offset", 1000)
    assert "--from-offset 1000 is past the end" in err and "--until-offset 1000" not in err
    status, _, err = run("-s", tmp_path, "diff", "--from-time", "2020-01-01T00:00:00Z")
    assert status == 2 and "--from-time 2020-01-01T00:00:00.000Z" in err
    assert "before the oldest point" in err


def test_corpus_time_travel_range():
    source = corpus("kafka-4.2-logdir")
    status, _, err = run("-s", source, "--until-time", "2020-01-01", "summary")
    assert status == 1 and "offset 0 at 2026-04-06T10:27:56.945Z" in err
    status, _, err = run("-s", source, "--until-offset", 10 ** 9, "ls")
    assert status == 0 and "the last record is offset 51263" in err


# =========================================================================== 7, 8. cat's paths, strict names

def test_ids_are_plain_decimals(tmp_path):
    seg, _ = generated_dir(tmp_path)
    for path in ("/topics/foo/0/data", "/brokers/1/isFenced"):
        assert run("-s", seg, "cat", path)[0] == 0
    for path in ("/topics/foo/00/data", "/topics/foo/+0/data", "/topics/foo/\uff10/data",
                 "/brokers/01/isFenced", "/brokers/+1/isFenced", "/brokers/\uff11/isFenced",
                 "/brokers/ 1/isFenced"):
        status, out, err = run("-s", seg, "cat", path)
        assert (status, out) == (1, "") and "no such file or directory" in err, path
    assert run("-s", seg, "changes", "/brokers/01")[0] == 1
    assert run("-s", seg, "changes", "/topics/foo/+0")[0] == 1


def test_cd_completes_directories_only(tmp_path):
    from metashell.commands import Context, complete_line
    seg, _ = generated_dir(tmp_path)
    ctx = Context.for_session(open_session(seg))
    assert complete_line(ctx, "cd /brokers/1/")[1] == []
    assert complete_line(ctx, "cd /topics/foo/")[1] == ["/topics/foo/0/"]
    assert complete_line(ctx, "cat /topics/foo/")[1] == ["/topics/foo/0/", "/topics/foo/id",
                                                         "/topics/foo/name"]


def test_cat_of_several_matches_names_each(tmp_path):
    seg, _ = generated_dir(tmp_path)
    status, out, _ = run("-s", seg, "cat", "/topics/*/name")
    assert out == "/topics/bar/name:\nbar\n\n/topics/foo/name:\nfoo\n"
    status, out, _ = run("-s", seg, "-o", "json", "cat", "/topics/*/0/data")
    assert [json.loads(line)["leader"] for line in out.splitlines()] == [3]
    status, out, _ = run("-s", seg, "-o", "json", "cat", "--with-path", "/topics/*/name")
    assert [json.loads(line) for line in out.splitlines()] == [
        {"path": "/topics/bar/name", "value": "bar"}, {"path": "/topics/foo/name", "value": "foo"}]


# =========================================================================== 6. diff on a dir = on its log



@pytest.mark.parametrize("source,offsets", [("kafka-4.2-logdir", (100, 3600, 20000, 47000)),
                                            ("example", (20, 100, 190, 300))])
def test_diff_on_a_dir_equals_diff_on_its_log(source, offsets):
    root = EXAMPLE if source == "example" else corpus(source)
    log = root / "__cluster_metadata-0" / "00000000000000000000.log"
    for offset in offsets:
        on_dir = run("-s", root, "diff", "--from-offset", offset, "/brokers", "/topics")
        on_log = run("-s", log, "diff", "--from-offset", offset, "/brokers", "/topics")
        assert on_dir[:2] == on_log[:2], offset
    assert "registeredAt " in run("-s", root, "diff", "--from-offset", offsets[0], "/brokers")[1]


# =========================================================================== 5. honest history

def test_changes_reads_the_log_before_the_snapshot(tmp_path):
    seg, _ = generated_dir(tmp_path)          # the snapshot ending at 6 holds everything
    s = open_session(tmp_path)
    assert s.plan.segments == [] or s.plan.snapshot.end_offset == 6
    assert s._older is None                   # nothing read before it is asked for
    assert [(c["offset"], c["type"], c["fromSnapshot"]) for c in s.changes("/topics/foo/0")] == [
        (2, "PartitionRecord", False), (3, "PartitionChangeRecord", False),
        (5, "PartitionChangeRecord", False)]
    assert [(c["offset"], c["time"]) for c in s.changes("/topics/bar")] == [
        (4, "2023-11-14T22:13:23.000Z")]
    assert s.changes("/topics/foo/0") == open_session(seg).changes("/topics/foo/0")


def test_where_the_log_does_not_reach_back_the_snapshot_is_marked(tmp_path):
    _, newest = generated_dir(tmp_path)
    status, out, _ = run("-s", newest, "changes", "/topics/bar")
    assert out.rstrip().endswith("topic bar created, id " + T2 + "  [from snapshot]")
    assert out.split()[:2] == ["5", "2023-11-14T22:13:24.000Z"]
    status, out, _ = run("-s", newest, "-o", "json", "changes", "/topics/bar")
    assert [c["fromSnapshot"] for c in json.loads(out)] == [True]
    status, out, _ = run("-s", newest, "-o", "json", "ls", "-l", "/topics")
    assert [e["fromSnapshot"] for e in json.loads(out)] == [True, True]
    status, out, _ = run("-s", newest, "ls", "-l", "/topics")
    assert out.splitlines()[1].split()[2:4] == ["\u22645", "\u22642023-11-14T22:13:24.000Z"]   # under the header


def test_a_log_starting_after_zero_gives_what_it_has_and_marks_the_rest(tmp_path):
    part = tmp_path / "__cluster_metadata-0"
    log = Log(base_offset=3)
    log.add(change(T1, 0, leader=2))                        # 3
    log.add(topic("bar", T2))                               # 4
    log.add(change(T1, 0, leader=3))                        # 5
    log.write(part)
    write_snapshot(part, 6, [broker(1, fenced=False), topic("foo", T1),
                             partition(T1, 0, leader=3, leaderEpoch=2, partitionEpoch=2),
                             topic("bar", T2)], timestamp=TS0 + 4000)
    s = open_session(tmp_path)
    # bar was created inside the log: its record, then the snapshot's (the log is not whole)
    assert [(c["offset"], c["fromSnapshot"]) for c in s.changes("/topics/bar")] == [
        (4, False), (5, True)]
    # foo was created before the log starts: its changes there name a topic the log
    # alone does not know, so only the snapshot's record, marked, is certain
    assert [(c["offset"], c["fromSnapshot"]) for c in s.changes("/topics/foo/0")] == [(5, True)]
    # a topic's history holds its partitions': both the snapshot's, marked
    assert [(c["offset"], c["type"], c["fromSnapshot"]) for c in s.changes("/topics/foo")] == [
        (5, "TopicRecord", True), (5, "PartitionRecord", True)]


def test_a_log_that_starts_at_an_older_snapshot_is_replayed_from_it(tmp_path):
    """Kafka's usual layout: old segments deleted, the log starts where an
    older snapshot ends."""
    part = tmp_path / "__cluster_metadata-0"
    log = Log(base_offset=3)
    log.add(change(T1, 0, leader=2))                        # 3
    log.add(topic("bar", T2))                               # 4
    log.add(change(T1, 0, leader=3))                        # 5
    log.write(part)
    write_snapshot(part, 3, [broker(1, fenced=False), topic("foo", T1), partition(T1, 0)],
                   timestamp=TS0 + 1000)
    write_snapshot(part, 6, [broker(1, fenced=False), topic("foo", T1),
                             partition(T1, 0, leader=3, leaderEpoch=2, partitionEpoch=2),
                             topic("bar", T2)], timestamp=TS0 + 4000)
    s = open_session(tmp_path)
    assert s.plan.snapshot.end_offset == 6
    assert [(c["offset"], c["fromSnapshot"]) for c in s.changes("/topics/foo/0")] == [
        (2, True), (3, False), (5, False)]
    assert [(c["offset"], c["fromSnapshot"]) for c in s.changes("/topics/bar")] == [(4, False)]
    assert [(c["offset"], c["time"], c["fromSnapshot"]) for c in s.changes("/brokers/1")] == [
        (2, "2023-11-14T22:13:21.000Z", True)]


def test_corpus_history_is_the_logs(tmp_path):
    s = open_session(corpus("kafka-4.2-logdir"))
    created, *partitions = s.changes("/topics/test-topic")   # its partitions' records after it
    assert (created["offset"], created["time"], created["type"], created["fromSnapshot"]) == (
        3516, "2026-04-06T11:01:22.847Z", "TopicRecord", False)
    assert partitions and not any(c["fromSnapshot"] for c in partitions)
    assert {c["type"] for c in partitions} <= {"PartitionRecord", "PartitionChangeRecord"}
    assert [c["offset"] for c in s.changes("/brokers/1")][:2] == [11, 12]
    s = open_session(EXAMPLE)
    created = s.changes("/topics/orders")[0]
    assert (created["offset"], created["time"]) == (86, "2026-03-02T08:10:02.118Z")


def test_ls_long_shows_the_logs_last_change_behind_the_snapshot(tmp_path):
    seg, _ = generated_dir(tmp_path)
    paths = ["/topics", "/topics/foo", "/topics/foo/0", "/brokers/1", "/features"]
    status, out, _ = run("-s", tmp_path, "-o", "json", "ls", "-l", *paths)
    listing = json.loads(out)
    on_log = json.loads(run("-s", seg, "-o", "json", "ls", "-l", *paths)[1])
    changes = {p: [(e["name"], e["offset"], e["time"], e["fromSnapshot"]) for e in entries]
               for p, entries in listing.items()}
    assert changes == {p: [(e["name"], e["offset"], e["time"], e["fromSnapshot"]) for e in entries]
                       for p, entries in on_log.items()}
    assert [(e["name"], e["offset"], e["time"], e["fromSnapshot"]) for e in listing["/topics"]] == [
        ("bar", 4, "2023-11-14T22:13:23.000Z", False), ("foo", 1, "2023-11-14T22:13:21.000Z", False)]
    assert [(e["name"], e["offset"]) for e in listing["/topics/foo/0"]] == [("data", 5)]
    status, out, _ = run("-s", tmp_path, "ls", "-l", "/topics")
    assert "\u2264" not in out and out.splitlines()[1].split()[2:4] == ["4", "2023-11-14T22:13:23.000Z"]


def test_ls_long_marks_what_only_an_older_snapshot_holds(tmp_path):
    test_a_log_that_starts_at_an_older_snapshot_is_replayed_from_it(tmp_path)
    status, out, _ = run("-s", tmp_path, "-o", "json", "ls", "-l", "/brokers", "/topics")
    listing = json.loads(out)
    assert [(e["offset"], e["fromSnapshot"]) for e in listing["/brokers"]] == [(2, True)]
    assert [(e["name"], e["offset"], e["fromSnapshot"]) for e in listing["/topics"]] == [
        ("bar", 4, False), ("foo", 2, True)]
