"""The watch command over a live session fed by a scripted observer."""

from __future__ import annotations

import io
import json
import os
import signal
import threading

from tests.support.commands import FakeSession, make_root
from tests.support.live_session import (CONFIG, ScriptedObserver, committed_event, snapshot_event,
                                       status)
from tests.support.records import broker, change, config, noop, partition, topic, uid
from tests.support.waiting import wait_until

from metashell.commands import COMMANDS, Context, run_line
from metashell.session.live import open_live_session
from metashell.kraft.writer import record

SNAP = [broker(1, fenced=False), broker(2, fenced=False), topic("a", uid(1)),
        partition(uid(1), 0), topic("b", uid(2)), partition(uid(2), 0)]
CHANGES = [[record("FenceBrokerRecord", id=1, epoch=10)],
           [change(uid(2), 0, leader=2)],
           [noop()],
           [record("UnfenceBrokerRecord", id=1, epoch=10)],
           [config(2, "a", "retention.ms", "1000")]]


def live_ctx(steps, output="text", interactive=False, **kw):
    session = open_live_session(CONFIG, observer_factory=ScriptedObserver(steps), **kw)
    ctx = Context.for_session(session, output=output, out=io.StringIO(), err=io.StringIO())
    ctx.interactive = interactive
    return ctx, session


def test_prints_the_changes_under_a_path_in_order():
    # the changes arrive right after catch-up, before watch runs: a one-shot
    # watch still sees them
    ctx, session = live_ctx([snapshot_event(5, SNAP), status("following", 5, 5),
                             committed_event(5, *CHANGES)])
    try:
        assert run_line(ctx, "watch /brokers --count 2") == 0
    finally:
        session.close()
    lines = ctx.out.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("5 2023-11-14T22:13:20.000Z FenceBrokerRecord /brokers/1 ")
    assert lines[1].startswith("8 2023-11-14T22:13:23.000Z UnfenceBrokerRecord /brokers/1 ")


def test_json_one_object_per_line_and_globs():
    ctx, session = live_ctx([snapshot_event(5, SNAP), status("following", 5, 5),
                             committed_event(5, *CHANGES)], output="json")
    try:
        assert run_line(ctx, "watch '/topics/[ab]/*' /configs --count 2") == 0
    finally:
        session.close()
    objects = [json.loads(line) for line in ctx.out.getvalue().splitlines()]
    assert objects == [
        {"offset": 6, "time": "2023-11-14T22:13:21.000Z", "type": "PartitionChangeRecord",
         "path": "/topics/b/0", "summary": "partition 0: leader 2"},
        {"offset": 9, "time": "2023-11-14T22:13:24.000Z", "type": "ConfigRecord",
         "path": "/configs/topic/a", "summary": objects[1]["summary"]}]
    assert "retention.ms" in objects[1]["summary"]


def test_relative_paths_and_entity_files():
    ctx, session = live_ctx([snapshot_event(5, SNAP), status("following", 5, 5),
                             committed_event(5, *CHANGES)])
    ctx.cwd = "/brokers"
    try:
        # a file inside an entity shows that entity's changes
        assert run_line(ctx, "watch 1/registration --count 1") == 0
    finally:
        session.close()
    assert ctx.out.getvalue().split()[2:4] == ["FenceBrokerRecord", "/brokers/1"]


def test_stops_at_until_offset_with_status_0():
    ctx, session = live_ctx([snapshot_event(5, SNAP), status("following", 5, 5),
                             committed_event(5, *CHANGES)], until_offset=6)
    try:
        assert run_line(ctx, "watch") == 0
    finally:
        session.close()
    assert [line.split()[0] for line in ctx.out.getvalue().splitlines()] == ["5", "6"]


def test_interactive_watch_starts_from_now_and_ctrl_c_ends_it():
    gate = threading.Event()
    ctx, session = live_ctx([snapshot_event(5, SNAP), status("following", 5, 5),
                             committed_event(5, CHANGES[0]), gate,
                             committed_event(6, *CHANGES[1:])], interactive=True)
    subscribe, watching = session.subscribe, threading.Event()

    def subscribed(**kw):
        changes = subscribe(**kw)
        watching.set()
        return changes
    session.subscribe = subscribed

    def type_ctrl_c_once_the_changes_show():
        """The later changes come once watch waits; Ctrl-C once three lines
        show (or after a while, so that a watch that shows none still ends)."""
        try:
            watching.wait(30)
            gate.set()
            wait_until(lambda: len(ctx.out.getvalue().splitlines()) >= 3, "three changes shown")
        finally:
            os.kill(os.getpid(), signal.SIGINT)
    typist = threading.Thread(target=type_ctrl_c_once_the_changes_show, daemon=True)
    try:
        typist.start()
        assert run_line(ctx, "watch") == 0          # until Ctrl-C
    finally:
        typist.join(35)
        session.close()
    offsets = [line.split()[0] for line in ctx.out.getvalue().splitlines()]
    assert offsets == ["6", "8", "9"]               # not the change before it started


def test_with_files_it_prints_nothing():
    ctx = Context(root=make_root(), session=FakeSession(), out=io.StringIO(), err=io.StringIO())
    assert run_line(ctx, "watch /brokers --count 3") == 0
    assert ctx.out.getvalue() == ctx.err.getvalue() == ""


def test_usage_and_manual():
    ctx = Context(root=make_root(), session=FakeSession(), out=io.StringIO(), err=io.StringIO())
    assert run_line(ctx, "watch --count 0") == 2
    assert ctx.err.getvalue() == "watch: argument --count: invalid count '0' (a positive integer)\n"
    manual = COMMANDS["watch"].manual()
    assert manual.startswith("watch: Print each committed change under PATH")
    assert "--count N" in manual and "--output json: one object per line" in manual


def test_a_watch_after_another_command_starts_from_when_it_runs():
    gate = threading.Event()
    ctx, session = live_ctx([snapshot_event(5, SNAP), status("following", 5, 5),
                             committed_event(5, *CHANGES), gate,
                             committed_event(10, [record("FenceBrokerRecord", id=2, epoch=10)])])
    release = threading.Timer(0.3, gate.set)
    try:
        assert run_line(ctx, "ls /brokers") == 0          # the backlog ends with it
        release.start()
        assert run_line(ctx, "watch /brokers --count 1") == 0
    finally:
        release.cancel()
        session.close()
    assert ctx.out.getvalue().splitlines()[-1].startswith("10 ")
    assert ctx.out.getvalue().splitlines()[-1].split()[2:4] == ["FenceBrokerRecord", "/brokers/2"]
