"""Input classification and load plans (kraft-format.md sections 14-16)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.corpora import corpus
from metashell.errors import InputError
from metashell.loader.inputs import (
    LoadPlan, SegmentFile, SnapshotFile, classify, parse_segment_name, parse_snapshot_name, plan,
)
from metashell.loader.properties import parse_properties
from metashell.loader.side_files import read_meta_properties, read_quorum_state



def seg(offset: int) -> str:
    return f"{offset:020d}.log"


def snap(offset: int, epoch: int) -> str:
    return f"{offset:020d}-{epoch:010d}.checkpoint"


QS0 = ('{"clusterId":"","leaderId":1,"leaderEpoch":2,"votedId":-1,"appliedOffset":0,'
       '"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}')
QS1 = '{"leaderId":-1,"leaderEpoch":2,"votedId":1,"votedDirectoryId":"J8aAPcfLQt2bqs1JT_rMgQ","data_version":1}'
META1 = ("#\n#Mon Apr 06 10:27:56 GMT 2026\ncluster.id=MkU3OEVBNTcwNTJENDM2Qk\n"
         "directory.id=J8aAPcfLQt2bqs1JT_rMgQ\nnode.id=3\nversion=1\n")


def make_logdir(root: Path, files: list[str], *, meta: str | None = META1,
                quorum: str | None = QS0, bootstrap: bool = True) -> Path:
    part = root / "__cluster_metadata-0"
    part.mkdir(parents=True)
    for name in files:
        (part / name).write_bytes(b"placeholder")
    if meta is not None:
        (root / "meta.properties").write_text(meta, encoding="latin-1")
    if quorum is not None:
        (part / "quorum-state").write_text(quorum)
    if bootstrap:
        (root / "bootstrap.checkpoint").write_bytes(b"placeholder")
    (part / "leader-epoch-checkpoint").write_text("0\n1\n0 0\n")
    (part / "partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ")
    return root


def names(p: LoadPlan) -> tuple[str | None, list[str]]:
    return (p.snapshot.path.name if p.snapshot else None), [s.path.name for s in p.segments]


# --------------------------------------------------------------------------- names

def test_parse_snapshot_name():
    assert parse_snapshot_name("00000000000000012345-0000000007.checkpoint") == (12345, 7)
    assert parse_snapshot_name(snap(0, 0)) == (0, 0)
    for bad in ["00000000000000012345-0000000007.checkpoint.part",
                "00000000000000012345-0000000007.checkpoint.deleted",
                "0000000000000012345-0000000007.checkpoint",   # 19 digits
                "00000000000000012345-000000007.checkpoint",    # 9 digits
                "00000000000000012345.checkpoint", "bootstrap.checkpoint",
                "00000000000000012345-0000000007.log",
                "٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠-٠٠٠٠٠٠٠٠٠٠.checkpoint"]:  # non-ASCII digits
        assert parse_snapshot_name(bad) is None, bad


def test_parse_segment_name():
    assert parse_segment_name("00000000000000099329.log") == 99329
    assert parse_segment_name(seg(0)) == 0
    for bad in ["99329.log", "00000000000000099329.log.deleted", "00000000000000099329.index",
                "server.log", "000000000000000993290.log"]:
        assert parse_segment_name(bad) is None, bad


# --------------------------------------------------------------------------- classify

def test_classify_files(tmp_path):
    for name, kind in [(seg(5), "segment"), ("anything.bin", "segment"), ("noext", "segment"),
                       (snap(10, 1), "snapshot"), ("weird.checkpoint", "snapshot"),
                       ("bootstrap.checkpoint", "bootstrap")]:
        f = tmp_path / name
        f.write_bytes(b"x")
        assert classify(f) == kind, name
        f.unlink()


def test_classify_directories(tmp_path):
    logdir = make_logdir(tmp_path / "meta", [seg(0)])
    assert classify(logdir) == "logdir"
    assert classify(logdir / "__cluster_metadata-0") == "partition-dir"
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / seg(0)).write_bytes(b"")
    assert classify(loose) == "partition-dir"
    snaps = tmp_path / "snaps"
    snaps.mkdir()
    (snaps / snap(1, 1)).write_bytes(b"")
    assert classify(snaps) == "partition-dir"
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "bootstrap.checkpoint").write_bytes(b"")
    (fresh / "meta.properties").write_text(META1)
    assert classify(fresh) == "logdir"
    empty_part = tmp_path / "x" / "__cluster_metadata-0"
    empty_part.mkdir(parents=True)
    assert classify(empty_part) == "partition-dir"


def test_classify_missing_path(tmp_path):
    with pytest.raises(InputError) as info:
        classify(tmp_path / "nope")
    assert str(info.value) == f"{tmp_path / 'nope'}: no such file or directory"
    link = tmp_path / "dangling"
    link.symlink_to(tmp_path / "gone")
    with pytest.raises(InputError, match="dangling symbolic link"):
        classify(link)


def test_classify_empty_directory(tmp_path):
    with pytest.raises(InputError) as info:
        classify(tmp_path)
    msg = str(info.value)
    assert "no KRaft metadata files" in msg
    assert ("expected a *.log segment, a *.checkpoint snapshot, bootstrap.checkpoint, "
            "or a metadata log directory holding __cluster_metadata-0/") in msg
    assert "\n" not in msg


def test_classify_data_log_dir_and_server_logs(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "meta.properties").write_text(META1)
    (data / "orders-0").mkdir()
    with pytest.raises(InputError, match="not the metadata log directory"):
        classify(data)
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "server.log").write_text("INFO started\n")
    with pytest.raises(InputError, match=r"server\.log is not named like a segment"):
        classify(logs)


@pytest.mark.parametrize("name, what", [
    (f"{0:020d}.index", "offset index"),
    (f"{0:020d}.timeindex", "time index"),
    (f"{7255:020d}.snapshot", "producer-state snapshot"),
    ("quorum-state", "quorum state"),
    ("meta.properties", "identity file"),
    ("leader-epoch-checkpoint", "leader epoch"),
    ("partition.metadata", "topic id"),
])
def test_classify_rejects_non_metadata_files(tmp_path, name, what):
    f = tmp_path / name
    f.write_bytes(b"x")
    with pytest.raises(InputError) as info:
        classify(f)
    msg = str(info.value)
    assert what in msg and "pass" in msg and "\n" not in msg


def test_index_rejection_names_the_segment(tmp_path):
    (tmp_path / seg(42)).write_bytes(b"")
    (tmp_path / f"{42:020d}.index").write_bytes(b"")
    with pytest.raises(InputError, match=f"pass the segment {seg(42)}"):
        classify(tmp_path / f"{42:020d}.index")
    with pytest.raises(InputError, match="metadata snapshots are named <offset>-<epoch>.checkpoint"):
        (tmp_path / f"{42:020d}.snapshot").write_bytes(b"")
        classify(tmp_path / f"{42:020d}.snapshot")


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any file")
def test_classify_unreadable(tmp_path):
    f = tmp_path / seg(0)
    f.write_bytes(b"")
    f.chmod(0)
    d = tmp_path / "locked"
    d.mkdir()
    d.chmod(0)
    try:
        with pytest.raises(InputError, match="permission denied"):
            classify(f)
        with pytest.raises(InputError, match="permission denied"):
            classify(d)
    finally:
        f.chmod(0o644)
        d.chmod(0o755)


def test_classify_unreadable_simulated(tmp_path, monkeypatch):
    # the same paths as above, for runs as root (where chmod 0 does not stop reads)
    import metashell.loader.inputs as inputs

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    f = tmp_path / seg(0)
    f.write_bytes(b"")
    monkeypatch.setattr(inputs, "open", denied, raising=False)
    with pytest.raises(InputError, match="cannot read file: permission denied"):
        classify(f)
    monkeypatch.setattr(inputs.os, "scandir", denied)
    with pytest.raises(InputError, match="cannot read directory: permission denied"):
        classify(tmp_path)


def test_classify_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file or directory"):
        classify(fifo)


# --------------------------------------------------------------------------- single-file plans

def test_plan_single_files(tmp_path):
    s = tmp_path / seg(99329)
    s.write_bytes(b"")
    p = plan(s)
    assert p.kind == "segment" and p.snapshot is None
    assert p.segments == [SegmentFile(s, 99329)]
    assert p.skip_before_offset == 0 and p.files == [s]

    other = tmp_path / "copy-of-segment"
    other.write_bytes(b"")
    assert plan(other).segments == [SegmentFile(other, None)]

    c = tmp_path / snap(14707, 1)
    c.write_bytes(b"")
    p = plan(c)
    assert p.kind == "snapshot" and p.snapshot == SnapshotFile(c, 14707, 1)
    assert p.segments == [] and p.snapshot.last_offset == 14706
    assert p.notes == []
    assert "beyond --until-offset 100" in plan(c, until_offset=100).notes[0]

    b = tmp_path / "bootstrap.checkpoint"
    b.write_bytes(b"")
    p = plan(b)
    assert p.kind == "bootstrap" and p.bootstrap == b
    assert p.snapshot == SnapshotFile(b, 0, 0, bootstrap=True)
    assert p.skip_before_offset == 0


# --------------------------------------------------------------------------- directory plans

def test_plan_newest_snapshot_and_segments(tmp_path):
    d = make_logdir(tmp_path, [seg(0), seg(5000), seg(8000), seg(12000),
                               snap(3000, 1), snap(7255, 2), snap(11000, 3)])
    p = plan(d)
    assert p.kind == "logdir"
    assert names(p) == (snap(11000, 3), [seg(8000), seg(12000)])
    assert p.skip_before_offset == 11000
    assert [c.end_offset for c in p.snapshot_candidates] == [11000, 7255, 3000]
    assert [s.base_offset for s in p.all_segments] == [0, 5000, 8000, 12000]
    assert p.bootstrap == d / "bootstrap.checkpoint"
    assert p.meta_properties["node.id"] == 3
    assert p.quorum_state["currentVoters"] == [{"voterId": 1}, {"voterId": 2}, {"voterId": 3}]
    assert p.notes == []
    assert p.files == [d / "__cluster_metadata-0" / n for n in [snap(11000, 3), seg(8000), seg(12000)]]
    # same plan from the partition directory
    q = plan(d / "__cluster_metadata-0")
    assert q.kind == "partition-dir"
    assert names(q) == names(p) and q.meta_properties == p.meta_properties
    assert q.bootstrap == p.bootstrap


def test_snapshot_end_equal_to_segment_base(tmp_path):
    d = make_logdir(tmp_path, [seg(0), seg(8000), seg(9000), snap(8000, 1)])
    assert names(plan(d)) == (snap(8000, 1), [seg(8000), seg(9000)])
    # the last segment is always kept, even when it starts before the snapshot end
    d2 = make_logdir(tmp_path / "b", [seg(0), seg(100), snap(500, 1)])
    assert names(plan(d2)) == (snap(500, 1), [seg(100)])


def test_until_offset_picks_older_snapshot(tmp_path):
    d = make_logdir(tmp_path, [seg(0), seg(5000), seg(8000),
                               snap(3000, 1), snap(7255, 2), snap(11000, 3)])
    p = plan(d, until_offset=10999)           # 11000 holds offsets <= 10999: usable
    assert names(p)[0] == snap(11000, 3)
    p = plan(d, until_offset=10998)
    assert names(p) == (snap(7255, 2), [seg(5000), seg(8000)])
    assert p.skip_before_offset == 7255
    assert [c.end_offset for c in p.snapshot_candidates] == [7255, 3000]
    assert any("1 newer snapshot(s) not used" in n for n in p.notes)
    p = plan(d, until_offset=6000)
    assert names(p) == (snap(3000, 1), [seg(0), seg(5000)])
    assert any("1 segment(s) starting after it" in n for n in p.notes)
    p = plan(d, until_offset=100)
    assert names(p) == (None, [seg(0)])
    assert p.skip_before_offset == 0 and p.snapshot_candidates == []


def test_with_snapshot_falls_back(tmp_path):
    d = make_logdir(tmp_path, [seg(0), seg(5000), seg(8000), snap(3000, 1), snap(7255, 2),
                               snap(9000, 2) + ".part"])
    p = plan(d)
    older = p.with_snapshot(p.snapshot_candidates[1])
    assert names(older) == (snap(3000, 1), [seg(0), seg(5000), seg(8000)])
    assert older.skip_before_offset == 3000
    assert older.notes == p.notes  # the ignored .part note is kept, nothing duplicated
    whole = p.with_snapshot(None)
    assert names(whole) == (None, [seg(0), seg(5000), seg(8000)])
    assert whole.skip_before_offset == 0
    assert names(p) == (snap(7255, 2), [seg(5000), seg(8000)])  # original untouched
    with pytest.raises(ValueError):
        plan(d / "__cluster_metadata-0" / seg(0)).with_snapshot(None)


def test_ignored_files_get_notes(tmp_path):
    d = make_logdir(tmp_path, [
        seg(0), seg(9000), snap(9000, 1),
        f"{12000:020d}-{2:010d}-8347561234.checkpoint.part",
        snap(5000, 1) + ".deleted",
        seg(4000) + ".deleted", f"{4000:020d}.index.deleted", f"{4000:020d}.timeindex.deleted",
        f"{0:020d}.index", f"{0:020d}.timeindex", f"{9000:020d}.snapshot",
        "notes.checkpoint",
    ])
    p = plan(d)
    assert names(p) == (snap(9000, 1), [seg(9000)])
    joined = "\n".join(p.notes)
    assert "checkpoint.part: a snapshot that was still being written" in joined
    assert f"{snap(5000, 1)}.deleted: a snapshot marked for deletion" in joined
    assert f"{seg(4000)}.deleted: a segment marked for deletion" in joined
    assert "ignored 2 other file(s) marked for deletion" in joined
    assert "notes.checkpoint: not a snapshot name" in joined
    assert all("\n" not in n for n in p.notes)
    assert len(p.notes) == 5


def test_bootstrap_only_logdir(tmp_path):
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "bootstrap.checkpoint").write_bytes(b"")
    (fresh / "meta.properties").write_text(META1)
    p = plan(fresh)
    assert p.kind == "logdir"
    assert p.snapshot == SnapshotFile(fresh / "bootstrap.checkpoint", 0, 0, bootstrap=True)
    assert p.segments == [] and p.skip_before_offset == 0
    assert "never started" in p.notes[0]
    assert p.meta_properties["cluster.id"] == "MkU3OEVBNTcwNTJENDM2Qk"

    empty = make_logdir(tmp_path / "empty", [])
    p = plan(empty)
    assert p.snapshot.bootstrap and p.snapshot.path == empty / "bootstrap.checkpoint"
    assert "is empty" in p.notes[0]
    q = plan(empty / "__cluster_metadata-0")
    assert q.snapshot == p.snapshot


def test_empty_partition_dir_without_bootstrap(tmp_path):
    d = make_logdir(tmp_path, [], bootstrap=False)
    p = plan(d)
    assert p.snapshot is None and p.segments == []
    assert "metadata log is empty" in p.notes[0]


def test_dynamic_quorum_bootstrap_snapshot(tmp_path):
    d = make_logdir(tmp_path, [snap(0, 0), seg(0)])
    p = plan(d)
    assert names(p) == (snap(0, 0), [seg(0)])
    assert p.skip_before_offset == 0 and p.snapshot.end_offset == 0
    assert p.notes == []
    d2 = make_logdir(tmp_path / "b", [snap(0, 0)])
    p = plan(d2)
    assert names(p) == (snap(0, 0), [])
    assert "bootstrap.checkpoint (not loaded)" in p.notes[0]


def test_gap_notes(tmp_path):
    d = make_logdir(tmp_path, [seg(20000), snap(15000, 3)])
    p = plan(d)
    assert names(p) == (snap(15000, 3), [seg(20000)])
    assert "records 15000-19999 are missing" in p.notes[0]
    d2 = make_logdir(tmp_path / "b", [seg(20000), seg(30000)])
    p = plan(d2)
    assert "state from offsets 0-19999 is missing" in p.notes[0]


def test_malformed_side_files_are_notes(tmp_path):
    d = make_logdir(tmp_path, [seg(0)], meta="version=7\n", quorum="{not json")
    p = plan(d)
    assert p.meta_properties is None and p.quorum_state is None
    assert any(n.startswith("ignored meta.properties: unsupported meta.properties version 7")
               for n in p.notes)
    assert any(n.startswith("ignored quorum-state: malformed quorum-state") for n in p.notes)
    d2 = make_logdir(tmp_path / "b", [seg(0)], meta=None, quorum=None)
    p = plan(d2)
    assert p.meta_properties is None and p.quorum_state is None and p.notes == []


def test_segments_sorted_numerically(tmp_path):
    d = make_logdir(tmp_path, [seg(100000), seg(99), seg(0)])
    assert [s.base_offset for s in plan(d).segments] == [0, 99, 100000]


# --------------------------------------------------------------------------- read-only

def _snapshot_tree(root: Path) -> dict:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            st = full.lstat()
            content = full.read_bytes() if full.is_file() else None
            out[str(full.relative_to(root))] = (st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns,
                                                st.st_ctime_ns, content)
        dst = Path(dirpath).stat()
        out[str(Path(dirpath).relative_to(root))] = ("dir", dst.st_mtime_ns, dst.st_ctime_ns)
    return out


def test_planning_leaves_directory_unchanged(tmp_path):
    d = make_logdir(tmp_path / "logdir", [
        seg(0), seg(9000), snap(9000, 1), snap(0, 0),
        f"{12000:020d}-{2:010d}-1.checkpoint.part", seg(4000) + ".deleted", f"{0:020d}.index"])
    (d / ".lock").write_bytes(b"")
    for p in [d, *sorted(d.rglob("*"))]:
        os.utime(p, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    before = _snapshot_tree(tmp_path)
    p = plan(d)
    plan(d, until_offset=5)
    plan(d / "__cluster_metadata-0")
    p.with_snapshot(None)
    read_meta_properties(d / "meta.properties")
    read_quorum_state(d / "__cluster_metadata-0" / "quorum-state")
    for f in sorted(d.rglob("*")):
        try:
            classify(f)
        except InputError:
            pass
    assert _snapshot_tree(tmp_path) == before


def test_planning_leaves_corpus_unchanged():
    root = corpus("kafka-4.2-logdir")
    before = _snapshot_tree(root)
    plan(root)
    plan(root, until_offset=20000)
    plan(root / "__cluster_metadata-0")
    assert _snapshot_tree(root) == before


# --------------------------------------------------------------------------- meta.properties

def test_meta_properties_v1(tmp_path):
    f = tmp_path / "meta.properties"
    f.write_text(META1)
    assert read_meta_properties(f) == {
        "version": 1, "node.id": 3, "cluster.id": "MkU3OEVBNTcwNTJENDM2Qk",
        "directory.id": "J8aAPcfLQt2bqs1JT_rMgQ"}


def test_meta_properties_v0(tmp_path):
    f = tmp_path / "meta.properties"
    f.write_text("#\n#Tue Jan 01 00:00:00 UTC 2019\nbroker.id=7\ncluster.id=abc\n")
    assert read_meta_properties(f) == {"version": 0, "broker.id": 7, "cluster.id": "abc"}
    f.write_text("version=0\nbroker.id=7\n")
    assert read_meta_properties(f) == {"version": 0, "broker.id": 7}


def test_java_properties_syntax():
    text = ("# comment\n! also a comment\n\n   \n"
            "a=1\n"
            "b : 2\n"
            "c 3\n"
            "  d\t=\t4  \n"
            "key\\ with\\ spaces=v\n"
            "e\\=q=x\n"
            "f=multi \\\n    line \\\\\n"
            "g=\\u0041\\t\\n\\x\n"
            "h=\n"
            "i\n"
            "a=override\r\n"
            "j=windows\r"
            "k=last \\")
    assert parse_properties(text) == {
        "a": "override", "b": "2", "c": "3", "d": "4  ", "key with spaces": "v",
        "e=q": "x", "f": "multi line \\", "g": "A\t\nx", "h": "", "i": "", "j": "windows",
        "k": "last "}


def test_meta_properties_latin1_and_unicode_escape(tmp_path):
    f = tmp_path / "meta.properties"
    f.write_bytes(b"version=1\nnode.id=1\ncluster.id=caf\xe9\\u00e9\n")
    assert read_meta_properties(f)["cluster.id"] == "caf\u00e9\u00e9"


@pytest.mark.parametrize("text, message", [
    ("version=1\ncluster.id=x\n", "version 1 requires node.id"),
    ("version=1\nnode.id=1\n", "version 1 requires cluster.id"),
    ("version=2\nnode.id=1\ncluster.id=x\n", "unsupported meta.properties version 2"),
    ("version=one\n", "version 'one' is not a number"),
    ("version=1\nnode.id=abc\ncluster.id=x\n", "node.id 'abc' is not a number"),
    ("version=1\nnode.id=1\ncluster.id=\\u00zz\n", "malformed \\\\uxxxx escape"),
])
def test_meta_properties_malformed(tmp_path, text, message):
    f = tmp_path / "meta.properties"
    f.write_text(text)
    with pytest.raises(InputError, match=message) as info:
        read_meta_properties(f)
    assert str(info.value).startswith(str(f) + ": ") and "\n" not in str(info.value)


def test_meta_properties_missing(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_meta_properties(tmp_path / "meta.properties")


# --------------------------------------------------------------------------- quorum-state

def test_quorum_state_versions(tmp_path):
    f = tmp_path / "quorum-state"
    f.write_text(QS0)
    s = read_quorum_state(f)
    assert s["data_version"] == 0 and s["leaderId"] == 1 and s["leaderEpoch"] == 2
    assert s["currentVoters"] == [{"voterId": 1}, {"voterId": 2}, {"voterId": 3}]
    f.write_text(QS1)
    s = read_quorum_state(f)
    assert s == {"leaderId": -1, "leaderEpoch": 2, "votedId": 1,
                 "votedDirectoryId": "J8aAPcfLQt2bqs1JT_rMgQ", "data_version": 1}


@pytest.mark.parametrize("text, message", [
    ("", "not JSON"),
    ("{", "not JSON"),
    ("[1]", "expected a JSON object"),
    ('{"leaderId":1}', "no data_version"),
    ('{"data_version":2}', "unsupported quorum-state data_version 2"),
    ('{"data_version":"0"}', "data_version '0' is not a number"),
    ('{"data_version":0,"leaderEpoch":"x"}', "leaderEpoch 'x' is not a number"),
    ('{"data_version":0,"currentVoters":[1,2]}', "currentVoters"),
])
def test_quorum_state_malformed(tmp_path, text, message):
    f = tmp_path / "quorum-state"
    f.write_text(text)
    with pytest.raises(InputError, match=message) as info:
        read_quorum_state(f)
    assert "\n" not in str(info.value)


def test_side_files_size_limit(tmp_path):
    f = tmp_path / "quorum-state"
    f.write_bytes(b" " * (2 * 1024 * 1024))
    with pytest.raises(InputError, match="too large"):
        read_quorum_state(f)


# --------------------------------------------------------------------------- real log dirs

def test_corpus_kafka_4_2_logdir():
    root = corpus("kafka-4.2-logdir")
    part = root / "__cluster_metadata-0"
    p = plan(root)
    assert p.kind == "logdir"
    assert names(p) == ("00000000000000046533-0000000004.checkpoint", [seg(0)])
    assert p.skip_before_offset == 46533
    assert [c.end_offset for c in p.snapshot_candidates] == [
        46533, 39383, 32233, 25077, 17908, 10744]
    assert p.bootstrap == root / "bootstrap.checkpoint"
    assert p.meta_properties == {"version": 1, "node.id": 1,
                                 "cluster.id": "5L6g3nShT-eMCtK--X86sw",
                                 "directory.id": "Teb3PFb009qvAZgMDEFH4g"}
    assert p.quorum_state == {"clusterId": "", "leaderId": 1, "leaderEpoch": 4, "votedId": -1,
                              "appliedOffset": 0, "currentVoters": [{"voterId": 1}],
                              "data_version": 0}
    assert p.notes == []
    assert plan(part).snapshot == p.snapshot
    # time travel
    assert names(plan(root, until_offset=46532))[0] == "00000000000000046533-0000000004.checkpoint"
    assert names(plan(root, until_offset=46531))[0] == "00000000000000039383-0000000004.checkpoint"
    assert names(plan(root, until_offset=20000))[0] == "00000000000000017908-0000000004.checkpoint"
    old = plan(root, until_offset=10000)
    assert names(old) == (None, [seg(0)]) and old.skip_before_offset == 0


def test_corpus_kafka_4_1_logdir():
    root = corpus("kafka-4.1-logdir")
    p = plan(root)
    assert names(p) == ("00000000000000007255-0000000001.checkpoint", [seg(0)])
    assert p.snapshot.end_offset == 7255 and p.snapshot.epoch == 1
    assert p.skip_before_offset == 7255
    assert p.meta_properties == {"version": 1, "node.id": 1,
                                 "cluster.id": "DgX2BfMBTIulkccPk9Snqg",
                                 "directory.id": "GEplVcNosIqYR-icC0bLKA"}
    assert p.quorum_state["leaderEpoch"] == 1 and p.quorum_state["leaderId"] == 1
    assert p.quorum_state["currentVoters"] == [{"voterId": 1}]
    assert p.notes == []


def test_corpus_kafka_3_7_logdir():
    root = corpus("kafka-3.7-logdir")
    p = plan(root)
    assert names(p) == (None, [seg(0)])
    assert p.skip_before_offset == 0 and p.snapshot_candidates == []
    assert p.bootstrap == root / "bootstrap.checkpoint"
    assert p.meta_properties["cluster.id"] == "q1w2e3r4t5y6u7i8o9p0"  # not a base64 UUID
    assert p.meta_properties["directory.id"] == "XHhkr4tkSsD900pOQ8pPfg"
    assert p.meta_properties["node.id"] == 1 and p.meta_properties["version"] == 1
    assert p.quorum_state["data_version"] == 0 and p.quorum_state["leaderEpoch"] == 1
    assert p.notes == []


def test_corpus_single_files_and_folders():
    root = corpus("kafka-3.4-snapshot")
    f = root / "00000000000000014707-0000000001.checkpoint"
    assert classify(f) == "snapshot"
    assert plan(f).snapshot == SnapshotFile(f, 14707, 1)
    assert plan(root).snapshot == SnapshotFile(f, 14707, 1)
    b = corpus("kafka-3.3-bootstrap")
    assert classify(b / "bootstrap.checkpoint") == "bootstrap"
    assert plan(b).snapshot.bootstrap
    e = corpus("empty-log")
    assert names(plan(e)) == (None, [seg(0)])
    nz = corpus("kafka-3.7-segment-nonzero-base")
    p = plan(nz)
    assert [s.base_offset for s in p.segments] == [99329]
    assert "state from offsets 0-99328 is missing" in p.notes[0]
    assert plan(nz / seg(99329)).notes == []
    with pytest.raises(InputError, match="quorum state"):
        classify(corpus("kafka-3.7-logdir") / "__cluster_metadata-0" / "quorum-state")
