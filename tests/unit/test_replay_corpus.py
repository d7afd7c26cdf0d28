"""Replay consistency on real Kafka files (``../shared/corpora``, see its README).

* A snapshot is the image at its end offset: for every snapshot of the
  ``kafka-4.2-logdir`` (6 snapshots) and ``kafka-4.1-logdir`` (1) log dirs,
  the tree from the snapshot alone equals the tree from replaying the log
  from offset 0 up to the snapshot's end offset - 1.
* Loading the log dir (newest snapshot + the rest of the log) equals
  replaying the whole log from 0.
* After replaying each file on its own, topics, partitions, brokers and
  metadata.version match the README's per-file table.

Compared: every leaf under the cluster-state directories, as JSON. Left
out: ``registeredAt`` (the append time of the registering record, which a
snapshot cannot know: it shows null from a snapshot), ``/metadataQuorum``
(a snapshot holds no leader; its offset is the snapshot's) and ``/local``.
The files are never copied into the repository; without them these tests
are skipped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.paths import CORPORA
from tests.support.corpora import needs_corpora
from metashell.loader.inputs import parse_snapshot_name
from metashell.loader.reader import read_file
from metashell.replay.engine import ReplayEngine
from metashell.fs.root import build_root
from metashell.session.files import open_session
from tests.support.replay import leaves

README = CORPORA / "README.md"
STATE = ["brokers", "controllers", "topics", "topicIds", "configs", "clientQuotas", "acls",
         "features", "producerIds", "scram", "delegationTokens"]
LOGDIRS = ["kafka-4.2-logdir", "kafka-4.1-logdir"]

pytestmark = needs_corpora


def state(root) -> dict:
    return leaves(root, STATE, exclude=("registeredAt",))


def diff(a: dict, b: dict) -> list:
    return [(k, a.get(k, "<absent>"), b.get(k, "<absent>")) for k in sorted(set(a) | set(b))
            if a.get(k, "<absent>") != b.get(k, "<absent>")]


def snapshots(name: str) -> list[Path]:
    part = CORPORA / name / "__cluster_metadata-0"
    return sorted(part.glob("*.checkpoint")) if part.is_dir() else []


def snapshot_cases():
    for name in LOGDIRS:
        for snap in snapshots(name) or [None]:
            yield pytest.param(name, snap, id=f"{name}/{snap.name if snap else 'none'}")


# =========================================================================== snapshot = log prefix

@pytest.mark.parametrize("name,snap", list(snapshot_cases()))
def test_snapshot_equals_the_log_up_to_its_end(name, snap):
    if snap is None:
        pytest.skip(f"{name} is not in the corpora")
    end, _ = parse_snapshot_name(snap.name)
    segment = snap.parent / "00000000000000000000.log"
    from_snapshot = open_session(snap)
    from_log = open_session(segment, until_offset=end - 1)
    assert from_snapshot.engine.problems == [] and from_log.engine.problems == []
    a, b = state(from_snapshot.root), state(from_log.root)
    assert diff(a, b) == []
    assert any(k.startswith("/topics/") for k in a)     # it did compare something
    # the one leaf left out: a snapshot cannot know when a broker registered
    for bid in from_snapshot.root.child("brokers").children():
        assert from_snapshot.root.child("brokers").child(bid).child("registeredAt").value() is None
        assert from_log.root.child("brokers").child(bid).child("registeredAt").value() is not None


@pytest.mark.parametrize("name", LOGDIRS)
def test_logdir_equals_newest_snapshot_plus_log_equals_whole_log(name):
    if not snapshots(name):
        pytest.skip(f"{name} is not in the corpora")
    part = CORPORA / name / "__cluster_metadata-0"
    segment = part / "00000000000000000000.log"
    newest = snapshots(name)[-1]
    end, epoch = parse_snapshot_name(newest.name)

    # by hand: the newest snapshot, then the log records from its end offset on
    eng = ReplayEngine()
    eng.begin_snapshot(end, None, epoch)
    for batch in read_file(newest, lazy=True):
        eng.apply_batch(batch)
    eng.end_snapshot()
    for batch in read_file(segment, lazy=True):
        eng.apply_batch(batch)
    eng.finish()
    by_hand = state(build_root(eng.image))

    directory = open_session(CORPORA / name)
    assert directory.plan.snapshot.path == newest
    whole_log = open_session(segment)
    assert diff(state(directory.root), by_hand) == []
    assert diff(by_hand, state(whole_log.root)) == []
    assert eng.problems == [] and directory.engine.problems == [] and whole_log.engine.problems == []
    # the directory is as far as the log goes
    assert directory.image.last_offset == whole_log.image.last_offset


# =========================================================================== the README's table

def readme_rows() -> list[dict]:
    """The per-file table of the corpora README: file, mv, topics, partitions, brokers."""
    if not README.is_file():
        return []
    rows = []
    text = README.read_text(encoding="utf-8")
    table = text[text.index("## Per file"):]
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 7 or not cells[0].startswith("`"):
            continue
        file, mv, tp, brokers = cells[0].strip("`"), cells[4], cells[5], cells[6]
        topics, partitions = (int(x) for x in tp.split("/"))
        rows.append({
            "file": file,
            "mv": None if mv == "-" else int(re.match(r"\d+", mv).group()),
            "topics": topics,
            "partitions": partitions,
            "brokers": [] if brokers == "-" else [int(b) for b in brokers.split(",")],
        })
    return rows


# The README counted kafka-trunk-prerelease-2023 only up to offset 23: its records after
# its first PartitionRecord in the unreleased layout were not counted there.
UNTIL = {"kafka-trunk-prerelease-2023/00000000000000000000.log": 23}


@pytest.mark.parametrize("row", readme_rows() or [None], ids=lambda r: r["file"] if r else "none")
def test_readme_table(row):
    if row is None:
        pytest.skip("no README table")
    path = CORPORA / row["file"]
    if not path.is_file():
        pytest.skip(f"{row['file']} is not in the corpora")
    s = open_session(path, until_offset=UNTIL.get(row["file"]))
    root = s.root
    topics = root.child("topics")
    names = topics.children()
    partitions = sum(len([p for p in topics.child(n).children() if p.isdigit()]) for n in names)
    brokers = [int(b) for b in root.child("brokers").children()]
    mv = root.child("features").child("metadata.version")
    assert (len(names), partitions) == (row["topics"], row["partitions"])
    assert brokers == row["brokers"]
    assert (mv.value() if mv is not None else None) == row["mv"]
    assert json.dumps(state(root))   # every value is JSON
