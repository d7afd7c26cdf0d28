"""A closed session lets go of its files at once: their maps are unmapped
and their descriptors closed by reference counting, without the cyclic
collector. Loading pauses the collector and moves what it made to the oldest
generation (``metashell.gcpause``), so anything of a session caught in a
reference cycle (a reader and its fast-path shortcuts, a tree and the session
that holds it) would keep its maps open until a full collection: programs
that open many sources in one process (a Spark worker, the test suite, a
REPL re-opening files) would pile up descriptors.

Each test runs with the cyclic collector disabled and opens, uses and closes
sessions many times over the example cluster and over the bench's shapes
(generated small: snapshots of runs and kept records, a log dir, a
controller's log of heartbeats and change batches), with the fast path on
and off: the process's descriptors, those onto the inputs and the live
``mmap.mmap`` objects must not grow.
"""

from __future__ import annotations

import gc
import mmap
import os
from pathlib import Path

import pytest

from bench import shapes   # the bench's generators
from metashell.fast.store import RecordStore
from metashell.session.files import open_session
from metashell.session.live import open_live_session
from tests.support.cli import run_cli
from tests.support.commands import run_command
from tests.support.fast_path import fast_path
from tests.support.live_session import CONFIG, ScriptedObserver, committed_event, snapshot_event, status
from tests.support.paths import REPO
from tests.support.records import broker, change, partition, topic, uid

EXAMPLE = REPO / "examples" / "cluster"
ROUNDS = 4
#: the bench's shapes each reader shortcut takes: a snapshot's topic runs, its
#: kept runs (configs), a log dir (snapshot and segment), a controller's log
#: (heartbeat runs, runs of small batches, batches of changes left unread)
SHAPES = ("snap-8mib-v2", "snap-configs", "logdir", "ctrl-log")


@pytest.fixture
def no_cyclic_gc():
    """The cyclic collector off for the test (what was made before is
    collected first), as it was after."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> list[Path]:
    """The example cluster, and each of :data:`SHAPES` generated small."""
    out = [EXAMPLE]
    for shape in SHAPES:
        where = tmp_path_factory.mktemp(shape)
        suffix = shapes.shape_suffix(shape)
        path = where / ("00000000000000002000-0000000007.checkpoint" if suffix == ".checkpoint"
                        else f"00000000000000000000{suffix}")
        shapes.generate(shape, path, 400)
        out.append(path)
    return out


def descriptors() -> list[str]:
    """Where each of the process's open descriptors points."""
    fd_dir = "/proc/self/fd"
    targets = []
    for name in os.listdir(fd_dir):
        try:
            targets.append(os.readlink(os.path.join(fd_dir, name)))
        except OSError:   # the listing's own, closed by now
            pass
    return targets


def live_maps() -> int:
    return sum(1 for o in gc.get_objects() if isinstance(o, mmap.mmap))


def onto(paths: list[Path], targets: list[str]) -> list[str]:
    """The descriptors of ``targets`` that point at or under one of ``paths``."""
    roots = [str(p.resolve()) for p in paths]
    return [t for t in targets if any(t == r or t.startswith(r + os.sep) for r in roots)]


def use(session, source: Path) -> None:
    """What a user does with a session: the tree, lazy reads long after the
    load (``cat`` folds partitions), ``summary``, ``changes``, ``diff``
    (which loads the source again, or rewinds this replay; 1: they differ),
    ``log``."""
    image = session.image   # a point between the snapshot, if any, and the end
    middle = str((max(image.snapshot_offset, 0) + max(image.last_offset, 0)) // 2)
    for words in (["ls", "/topics"], ["cat", "/topics/*/0/data"], ["summary"],
                  ["changes", "/topics/*"], ["tree", "/brokers"],
                  ["diff", "--stat", "--from-offset", middle],
                  ["diff", "--stat", "--against", str(source)], ["log", "--snapshots"]):
        status, _, err = run_command(session, *words, output="json")
        assert status == 0 or words[0] == "diff" and status == 1 and not err, (words, err)


def assert_nothing_kept(paths: list[Path], before: list[str], maps_before: int) -> None:
    after = descriptors()
    assert onto(paths, after) == [], "descriptors left open onto the inputs"
    assert len(after) <= len(before), f"{len(after) - len(before)} more descriptors open"
    assert live_maps() <= maps_before, "maps left alive"


@pytest.mark.parametrize("fast", [True, False], ids=["fast-path", "general-path"])
def test_closed_sessions_leave_no_file_open(no_cyclic_gc, inputs, fast):
    with fast_path(fast):
        before, maps_before = descriptors(), live_maps()
        for _ in range(ROUNDS):
            for path in inputs:
                session = open_session(path)
                use(session, path)
                session.close()
                del session
                assert_nothing_kept(inputs, before, maps_before)


@pytest.mark.parametrize("fast", [True, False], ids=["fast-path", "general-path"])
def test_close_lets_go_even_of_a_session_still_named(no_cyclic_gc, inputs, fast):
    """``close`` itself drops what holds the files: a closed session that is
    still referenced (a REPL's variable, a caller's frame) keeps none open."""
    with fast_path(fast):
        before, maps_before = descriptors(), live_maps()
        kept = []
        for path in inputs:
            session = open_session(path)
            use(session, path)
            session.close()
            kept.append(session)
        assert_nothing_kept(inputs, before, maps_before)


@pytest.mark.parametrize("fast", [True, False], ids=["fast-path", "general-path"])
def test_one_shot_runs_in_process_leave_no_file_open(no_cyclic_gc, inputs, fast):
    """The command line run in-process (``cli.main``): a one-shot ``log``
    (a planned session, loaded for ``--entity``) and the other commands."""
    with fast_path(fast):
        before, maps_before = descriptors(), live_maps()
        for _ in range(ROUNDS):
            for path in inputs:
                for words in (["log"], ["log", "--entity", "/brokers"], ["summary"],
                              ["diff", "--stat", "--against", str(path)]):
                    status, _, err = run_cli(["-s", str(path), *words])
                    assert status == 0 or words[0] == "diff" and status == 1, (path, words, err)
                assert_nothing_kept(inputs, before, maps_before)


def live_stores() -> int:
    return sum(1 for o in gc.get_objects() if isinstance(o, RecordStore))


@pytest.mark.parametrize("fast", [True, False], ids=["fast-path", "general-path"])
def test_closed_live_sessions_let_go_of_their_image(no_cyclic_gc, fast):
    """A live session maps no file, but its tree and its engine's hook hold
    it: once closed, its store (the snapshot fetched, deferred) goes."""
    snap = [broker(1, fenced=False), topic("a", uid(1)), partition(uid(1), 0)]
    with fast_path(fast):
        stores_before = live_stores()
        for _ in range(ROUNDS):
            observer = ScriptedObserver([
                status("catching-up", 9, 5), snapshot_event(5, snap),
                committed_event(5, [topic("b", uid(2))], [partition(uid(2), 0)],
                                [change(uid(1), 0, leader=2)]),
                status("following", 9, 9)])
            session = open_live_session(CONFIG, observer_factory=observer)
            for words in (["ls", "/topics"], ["cat", "/topics/a/0/data"], ["summary"],
                          ["cat", "/local/counts"]):
                assert run_command(session, *words, output="json")[0] == 0, words
            session.close()
            del session, observer
            assert live_stores() <= stores_before
