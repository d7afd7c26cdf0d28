"""``log`` on a live quorum (``-C``): the batches fetched so far in log
order, the snapshot the leader sent with ``--snapshots``, the same filters
as on files; over a scripted observer, and end to end against the fake
controller quorum."""

from __future__ import annotations

import contextlib
import io
import json
import threading

from tests.support.fake_kraft import FakeQuorum
from tests.support.live_session import CONFIG, ScriptedObserver, committed_event, snapshot_event, status
from tests.support.records import broker, change, partition, topic, uid
from tests.support.waiting import wait_until

from metashell import cli
from metashell.session import live as live_session
from metashell.commands import Context, run_words
from metashell.kraft.writer import record
from metashell.session.live import open_live_session

SNAP = [broker(1, fenced=False), topic("a", uid(1)), partition(uid(1), 0)]
LOG = [[topic("b", uid(2))], [partition(uid(2), 0), partition(uid(2), 1)],
       [change(uid(1), 0, leader=2)]]


def run(session, *words, output="json") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    ctx = Context.for_session(session, out=out, err=err, output=output)
    return run_words(ctx, ["log", *words]), out.getvalue(), err.getvalue()


def lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def live(steps):
    return open_live_session(CONFIG, observer_factory=ScriptedObserver(steps))


def test_the_log_fetched_so_far_in_log_order():
    gate = threading.Event()
    session = live([status("catching-up", 9, 5), snapshot_event(5, SNAP), committed_event(5, *LOG),
                    status("following", 9, 9), gate,
                    committed_event(9, [topic("late", uid(3))]), status("following", 10, 10)])
    try:
        status_, out, err = run(session)
        assert (status_, err) == (0, "")
        got = lines(out)
        assert [(r["offset"], r["type"]) for r in got] == [
            (5, "TopicRecord"), (6, "PartitionRecord"), (7, "PartitionRecord"),
            (8, "PartitionChangeRecord")]
        assert got[0]["data"] == {"name": "b", "topicId": uid(2)}
        assert got[3]["data"]["leader"] == 2 and got[3]["epoch"] == 1
        # what comes after is in the next run's answer
        gate.set()
        wait_until(lambda: session.image.last_offset >= 9, "the session to apply offset 9")
        got = lines(run(session)[1])
        assert [(r["offset"], r["data"].get("name")) for r in got][-1] == (9, "late")
    finally:
        session.close()


def test_snapshots_come_first_and_the_filters_apply():
    session = live([snapshot_event(5, SNAP), committed_event(5, *LOG), status("following", 9, 9)])
    try:
        _, out, _ = run(session, "--snapshots", output="text")
        heads = [line for line in out.splitlines() if line.startswith("# ")]
        assert heads == ["# snapshot 00000000000000000005-0000000001 from controller 1@127.0.0.1:9093",
                         "# log fetched from controllers 1@127.0.0.1:9093"]
        body = [line.split(" ")[2] for line in out.splitlines() if not line.startswith("# ")]
        assert body == ["SnapshotHeaderRecord", "RegisterBrokerRecord", "TopicRecord",
                        "PartitionRecord", "SnapshotFooterRecord", "TopicRecord",
                        "PartitionRecord", "PartitionRecord", "PartitionChangeRecord"]
        _, out, _ = run(session, "--type", "PartitionChange")
        assert [r["offset"] for r in lines(out)] == [8]
        _, out, _ = run(session, "--from-offset", "6", "--to-offset", "7")
        assert [r["offset"] for r in lines(out)] == [6, 7]
        # a topic of the snapshot, known by name from the image
        _, out, _ = run(session, "--entity", "/topics/a")
        assert [(r["offset"], r["type"]) for r in lines(out)] == [(8, "PartitionChangeRecord")]
        _, out, _ = run(session, "--batches")
        batches = lines(out)
        assert [(b["baseOffset"], b["lastOffset"], b["count"], b["crcValid"]) for b in batches] == [
            (5, 5, 1, True), (6, 7, 2, True), (8, 8, 1, True)]
        assert batches[0]["position"] == 0 and batches[1]["position"] == batches[0]["size"]
    finally:
        session.close()


def test_the_oldest_batches_go_past_the_limit_and_log_says_so(monkeypatch):
    monkeypatch.setattr(live_session, "LOG_KEPT", 1)
    session = live([committed_event(0, *LOG[:1]), committed_event(1, *LOG[1:]),
                    status("following", 4, 4)])
    try:
        status_, out, err = run(session)
        assert status_ == 0
        assert [r["offset"] for r in lines(out)] == [1, 2, 3]     # the last event's batches
        assert "the first" in err and "no longer kept" in err
    finally:
        session.close()


def test_end_to_end_against_the_fake_quorum():
    with FakeQuorum(3) as q:
        q.append([record("RegisterBrokerRecord", brokerId=1, brokerEpoch=5, incarnationId=uid(99),
                         endPoints=[], fenced=False)], commit=True)
        q.append([topic("orders", uid(1)), partition(uid(1), 0)], commit=True)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(["-C", q.bootstrap(), "--timeout", "10", "-o", "json", "log"],
                            standalone_mode=False)
        assert (code, err.getvalue()) == (0, "")
        got = lines(out.getvalue())
        assert [(r["offset"], r["type"]) for r in got] == [
            (0, "RegisterBrokerRecord"), (1, "TopicRecord"), (2, "PartitionRecord")]
        assert got[2]["data"]["topicId"] == uid(1)
