"""Every real Kafka log dir of ``../shared/corpora`` served by the fake
quorum: the records the live observer yields rebuild exactly the tree that
loading the directory with ``open_session`` gives (``/local`` and the
quorum view aside). Served by a 3.0 controller (Fetch v12 by topic name,
the whole log from offset 0 as a pre-3.7 leader answers) and a 4.1 one
(the snapshot shortcut first, then the log after it)."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from tests.support.fake_kraft import FakeQuorum
from tests.support.fake_kraft_follow import Follow, check_contiguous, image_json, live_config, rebuild
from tests.support.paths import CORPORA
from tests.support.corpora import corpus_cases
from metashell.errors import MetashellError
from metashell.live import SnapshotEvent
from metashell.session.files import open_session

DIRS = corpus_cases(lambda: sorted(p.name for p in CORPORA.iterdir() if p.is_dir()))


def file_tree(path: Path) -> str:
    try:
        return image_json(open_session(path).image)
    except MetashellError as e:
        pytest.skip(f"{path.name}: open_session does not load it either ({e})")


def served(path: Path, **kw) -> FakeQuorum:
    try:
        return FakeQuorum.from_logdir(path, voters=3, **kw)
    except ValueError as e:
        pytest.skip(f"no controller serves this directory: {e}")


@pytest.mark.parametrize("profile", ["3.0", "4.1"])
@pytest.mark.parametrize("name", DIRS)
def test_live_tree_equals_the_file_tree(name, profile):
    path = CORPORA / name
    expected = file_tree(path)
    q = served(path, profile=profile).start()
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


LONG_LOGS = corpus_cases(lambda: [d for d in DIRS if sum(p.stat().st_size for p in (CORPORA / d).rglob("*.log"))
                                  > 100_000])


@pytest.mark.parametrize("name", LONG_LOGS)
def test_failovers_while_catching_up_on_a_real_log(name):
    """A real log read in small Fetch answers while the leader moves three
    times (the old one dropping its connections, the new one not knowing
    the high watermark at first): still exactly the file's tree."""
    path = CORPORA / name
    expected = file_tree(path)
    q = served(path, profile="3.9")
    q.max_fetch_bytes = 32 << 10
    q.start()
    f = Follow(live_config(q, timeout=20))
    rng = random.Random(name)
    try:
        end = q.log.end_offset
        for step in range(1, 4):
            mark = q.log.start_offset + (end - q.log.start_offset) * step // 4
            assert f.wait(lambda f: f.committed_offset >= mark or f.finished, 30), f.statuses[-1:]
            old = q.leader_id
            q.failover(rng.choice([i for i in q.nodes if i != old]), hwm=-1)
            q.nodes[old].drop_connections()
            time.sleep(rng.uniform(0, 0.2))   # the behaviour: the commit comes at a random moment
            q.commit()
        assert f.wait(lambda f: f.committed_offset == q.log.end_offset, 60), (f.error, f.statuses[-1:])
        check_contiguous(f.events)
        assert image_json(rebuild(f.events).image) == expected
    finally:
        assert f.close() < 3
        q.stop()
