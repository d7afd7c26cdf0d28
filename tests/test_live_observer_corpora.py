"""Every real Kafka log dir of ``../shared/corpora`` served by the fake
quorum: the records the live observer yields rebuild exactly the tree that
loading the directory with ``open_session`` gives (``/local`` and the
quorum view aside). Served by a 3.0 controller (Fetch v12 by topic name,
the whole log from offset 0 as a pre-3.7 leader answers) and a 4.1 one
(the snapshot shortcut first, then the log after it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fake_kraft import FakeQuorum
from fake_kraft_follow import Follow, check_contiguous, image_json, live_config, rebuild
from metashell.errors import MetashellError
from metashell.loader.live import SnapshotEvent
from metashell.session import open_session

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"
DIRS = sorted(p.name for p in CORPORA.iterdir() if p.is_dir()) if CORPORA.is_dir() else []

pytestmark = pytest.mark.skipif(not DIRS, reason=f"the shared Kafka corpora are not here ({CORPORA})")


def file_tree(path: Path) -> str:
    try:
        return image_json(open_session(path).image)
    except MetashellError as e:
        pytest.skip(f"{path.name}: open_session does not load it either ({e})")


@pytest.mark.parametrize("profile", ["3.0", "4.1"])
@pytest.mark.parametrize("name", DIRS)
def test_live_tree_equals_the_file_tree(name, profile):
    path = CORPORA / name
    expected = file_tree(path)
    try:
        q = FakeQuorum.from_logdir(path, voters=3, profile=profile)
    except ValueError as e:
        pytest.skip(f"no controller serves this directory: {e}")
    q.start()
    f = Follow(live_config(q, timeout=20))
    try:
        assert f.wait(lambda f: f.committed_offset == q.log.end_offset and f.following(), 60), \
            (f.error, f.statuses[-1:])
        check_contiguous(f.events)
        snapshots = f.of(SnapshotEvent)
        # a 4.1 leader sends its snapshot first; a 3.0 one only when the log no longer starts at 0
        assert bool(snapshots) == bool(q.log.snapshots and (profile == "4.1" or q.log.start_offset > 0))
        assert image_json(rebuild(f.events).image) == expected
    finally:
        assert f.close() < 3
        q.stop()
    assert not [e for n in q.nodes.values() for e in n.errors]
