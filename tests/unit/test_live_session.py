"""The live session over a scripted observer: catch-up, the snapshot swap,
consistency of what a command sees, following, limits, errors, the quorum
view and the changes ``watch`` gets."""

from __future__ import annotations

import threading
import time

import pytest
from tests.support.live_session import (CONFIG, ScriptedObserver, committed_event, snapshot_event,
                                       status)
from tests.support.replay import TS0, Log, cat, leaves, ls, write_snapshot
from tests.support.records import broker, change, noop, partition, topic, uid
from tests.support.waiting import wait_until

from metashell.errors import MetashellError
from metashell.session.live import LiveSession, open_live_session
from metashell.live import LiveError
from metashell.kraft.writer import record
from metashell.session.files import open_session

SNAP = [broker(1, fenced=False), topic("a", uid(1)), partition(uid(1), 0)]


def open_live(steps, describe=None, **kw):
    observer = ScriptedObserver(steps, describe)
    return open_live_session(CONFIG, observer_factory=observer, **kw), observer


def file_leaves(root) -> dict:
    """Every file but /local and the live quorum fields."""
    return {path: value for path, value in leaves(root, [t for t in root.children() if t != "local"]).items()
            if not path.startswith("/metadataQuorum/live/")}


def test_catch_up_gives_the_tree_a_file_load_gives(tmp_path):
    log_batches = [[topic("b", uid(2))], [partition(uid(2), 0), partition(uid(2), 1)],
                   [change(uid(1), 0, leader=2)]]
    session, observer = open_live([
        status("catching-up", 9, 5), snapshot_event(5, SNAP),
        committed_event(5, *log_batches), status("following", 9, 9)])
    try:
        # the same records as files: a snapshot and the segment after it
        write_snapshot(tmp_path, 5, SNAP)
        log = Log(5)
        for b in log_batches:
            log.add(*b)
        log.write(tmp_path)
        expected = open_session(tmp_path)
        live, files = file_leaves(session.root), file_leaves(expected.root)
        # the log names no leader: -C shows the quorum's, a lone file none
        assert (live.pop("/metadataQuorum/leaderId"), live.pop("/metadataQuorum/leaderEpoch")) == (1, 3)
        assert (files.pop("/metadataQuorum/leaderId"), files.pop("/metadataQuorum/leaderEpoch")) == (-1, 1)
        assert live.pop("/metadataQuorum/leader") == {"leaderId": 1, "epoch": 3}
        assert files.pop("/metadataQuorum/leader") == {"leaderId": -1, "epoch": 1}
        assert live == files
        assert "/metadataQuorum/live/highWatermark" in leaves(session.root)
        assert ls(session.root, "/topics") == ["a", "b"]
        assert cat(session.root, "/topics/a/0/data")["leader"] == 2
        assert cat(session.root, "/local/source") == "controllers 1@127.0.0.1:9093"
        assert session.state() is None
    finally:
        session.close()
    assert observer.closed.is_set()


def test_the_image_keeps_following_between_commands():
    gate = threading.Event()
    session, observer = open_live([
        snapshot_event(5, SNAP), status("following", 5, 5), gate,
        committed_event(5, [topic("late", uid(3))]), status("following", 6, 6)])
    try:
        assert ls(session.root, "/topics") == ["a"]
        gate.set()
        observer.done.wait(5)
        assert ls(session.root, "/topics") == ["a", "late"]
        assert session.summary()["quorum"]["highWatermark"] == 6
    finally:
        session.close()


def test_a_new_snapshot_is_swapped_in_whole_while_no_command_runs():
    gate = threading.Event()
    second = [broker(2), topic("x", uid(7))] + [partition(uid(7), p) for p in range(50)]
    session, observer = open_live([
        snapshot_event(5, SNAP), status("following", 5, 5), gate,
        snapshot_event(100, second, epoch=4)])
    try:
        root = session.root
        with session.consistent():            # a command is running
            gate.set()
            # the behaviour: the follower builds the new image meanwhile, and
            # the command's tree stays the one it started on
            time.sleep(0.3)
            assert ls(root, "/topics") == ["a"] and ls(root, "/brokers") == ["1"]
        observer.done.wait(5)
        with session.consistent():
            assert ls(root, "/topics") == ["x"] and ls(root, "/brokers") == ["2"]
            assert len(ls(root, "/topics/x")) == 52            # 50 partitions, id, name
            assert cat(root, "/metadataQuorum/offset") == 99
    finally:
        session.close()


def test_a_transaction_shows_whole_or_not_at_all():
    gates = [threading.Event(), threading.Event()]
    session, observer = open_live([
        snapshot_event(5, SNAP), status("following", 5, 5), gates[0],
        committed_event(5, [record("BeginTransactionRecord", name="t")], [topic("t1", uid(4))]),
        gates[1],
        committed_event(7, [partition(uid(4), 0)], [record("EndTransactionRecord")])])
    try:
        gates[0].set()
        wait_until(lambda: session.engine.image.last_offset == 6, "offset 6 applied")
        assert ls(session.root, "/topics") == ["a"]         # begun, not ended
        gates[1].set()
        observer.done.wait(5)
        assert ls(session.root, "/topics") == ["a", "t1"]
        assert ls(session.root, "/topics/t1") == ["0", "id", "name"]
    finally:
        session.close()


def test_until_offset_stops_following_there():
    session, observer = open_live([
        snapshot_event(5, SNAP),
        committed_event(5, [topic("b", uid(2))], [topic("c", uid(3))], [topic("d", uid(4))]),
        status("following", 8, 8)], until_offset=6)
    assert ls(session.root, "/topics") == ["a", "b", "c"]
    assert session.stopped and session.error is None
    assert session.state() == "stopped at the limit"
    assert observer.closed.is_set()
    session.close()


def test_until_time_stops_following_there():
    # batch n is appended at TS0 + 1000 * n
    session, observer = open_live([
        snapshot_event(5, SNAP),
        committed_event(5, [topic("b", uid(2))], [topic("c", uid(3))], [topic("d", uid(4))]),
        status("following", 8, 8)], until_time=TS0 + 1000)
    assert ls(session.root, "/topics") == ["a", "b", "c"]
    assert session.state() == "stopped at the limit" and observer.closed.is_set()
    session.close()


def test_until_offset_before_the_snapshot_is_an_error():
    with pytest.raises(MetashellError, match=r"--until-offset 2 is before the quorum's snapshot, "
                                             r"which ends at offset 4"):
        open_live([snapshot_event(5, SNAP)], until_offset=2)


def test_an_error_before_catch_up_is_raised_and_the_observer_closed():
    observer = ScriptedObserver([status("connecting", -1, 0),
                                 LiveError("no controller answered within 2 s: 1@127.0.0.1:9093 "
                                           "(connection refused)")])
    with pytest.raises(LiveError, match="1@127.0.0.1:9093"):
        open_live_session(CONFIG, observer_factory=observer)
    assert observer.closed.is_set()


def test_an_unexpected_failure_is_one_line_not_a_partial_image():
    observer = ScriptedObserver([snapshot_event(5, SNAP), ValueError("boom")])
    with pytest.raises(MetashellError, match="^following the quorum stopped: ValueError: boom$"):
        open_live_session(CONFIG, observer_factory=observer)


def test_a_corrupt_batch_after_catch_up_stops_following_with_its_diagnostic():
    gate = threading.Event()
    bad = committed_event(5, [topic("b", uid(2))])
    data = bytearray(bad.data)
    data[-1] ^= 0xFF
    session, observer = open_live([snapshot_event(5, SNAP), status("following", 5, 5), gate,
                                   type(bad)(bytes(data), 5, 5, bad.source)])
    gate.set()
    wait_until(lambda: session.stopped, "the session to stop")
    assert session.state() == "stopped"
    assert "controller 1@127.0.0.1:9093 (byte 0, offset 5)" in str(session.error)
    assert ls(session.root, "/topics") == ["a"]                # the last good image stays
    session.close()


def test_prompt_states():
    gate = threading.Event()
    session, _ = open_live([snapshot_event(5, SNAP), status("following", 5, 5), gate,
                            status("lost", 5, 5, "connection refused")])
    try:
        assert session.state() is None
        gate.set()
        wait_until(lambda: session.state() == "quorum lost", "the quorum lost state")
    finally:
        session.close()
    unstarted = LiveSession(CONFIG, ScriptedObserver([]))
    assert unstarted.state() == "connecting"


def test_quorum_view_from_describe_quorum():
    describe = {
        "leaderId": 1, "leaderEpoch": 3, "highWatermark": 120, "answeredBy": "1@127.0.0.1:9093",
        "voters": [{"replicaId": 1, "replicaDirectoryId": None, "logEndOffset": 125,
                    "lastFetchTimestamp": 1_700_000_000_000, "lastCaughtUpTimestamp": -1},
                   {"replicaId": 2, "replicaDirectoryId": "dir2", "logEndOffset": 100,
                    "lastFetchTimestamp": 1_700_000_001_000,
                    "lastCaughtUpTimestamp": 1_700_000_000_500}],
        "observers": [{"replicaId": 7, "replicaDirectoryId": None, "logEndOffset": -1,
                       "lastFetchTimestamp": -1, "lastCaughtUpTimestamp": -1}],
        "nodes": []}
    session, _ = open_live([snapshot_event(5, SNAP), status("following", 120, 120)], describe)
    try:
        root = session.root
        assert "live" in ls(root, "/metadataQuorum")
        assert cat(root, "/metadataQuorum/live/highWatermark") == 120
        assert cat(root, "/metadataQuorum/live/answeredBy") == "1@127.0.0.1:9093"
        assert cat(root, "/metadataQuorum/live/state") == "following"
        assert cat(root, "/metadataQuorum/live/voters/2") == {
            "directoryId": "dir2", "logEndOffset": 100, "lag": 25,
            "lastFetchTime": "2023-11-14T22:13:21.000Z",
            "lastCaughtUpTime": "2023-11-14T22:13:20.500Z"}
        assert cat(root, "/metadataQuorum/live/voters/1")["lag"] == 0
        assert cat(root, "/metadataQuorum/live/observers") == [
            {"replicaId": 7, "directoryId": None, "logEndOffset": -1, "lag": None,
             "lastFetchTime": None, "lastCaughtUpTime": None}]
        quorum = session.summary()["quorum"]
        assert quorum["state"] == "following" and quorum["highWatermark"] == 120
    finally:
        session.close()


def test_quorum_in_kafka_metadata_quorums_layout():
    """The cluster id, follower lag (the voter with the smallest log end
    offset, first in the quorum's order, against the leader) and listeners
    the answers give, and ``quorum`` printing describe --status and
    --replication as Kafka does (labels to column 24; cells padded to their
    column and each followed by a tab; leader, followers, observers)."""
    import io

    from metashell.commands import Context, run_words
    describe = {
        "clusterId": "MkU3OEVBNTcwNTJENDM2Qg", "leaderId": 2, "leaderEpoch": 3, "highWatermark": 120,
        "answeredBy": "2@127.0.0.1:9093",
        "voters": [{"replicaId": 1, "replicaDirectoryId": None, "logEndOffset": 118,
                    "lastFetchTimestamp": 1_700_000_000_900, "lastCaughtUpTimestamp": 1_700_000_000_400},
                   {"replicaId": 2, "replicaDirectoryId": None, "logEndOffset": 125,
                    "lastFetchTimestamp": 1_700_000_001_000, "lastCaughtUpTimestamp": 1_700_000_001_000},
                   {"replicaId": 3, "replicaDirectoryId": None, "logEndOffset": 118,
                    "lastFetchTimestamp": 1_700_000_000_950, "lastCaughtUpTimestamp": 1_700_000_000_700}],
        "observers": [{"replicaId": 101, "replicaDirectoryId": "4MIo2GCR7GIuMQbyq6cTQQ",
                       "logEndOffset": 125, "lastFetchTimestamp": 1_700_000_000_990,
                       "lastCaughtUpTimestamp": 1_700_000_000_990}],
        "nodes": [{"nodeId": n, "listeners": [{"name": "CONTROLLER", "host": "127.0.0.1", "port": 9092 + n}]}
                  for n in (1, 2, 3)]}
    session, _ = open_live([snapshot_event(5, SNAP), status("following", 120, 120)], describe)
    try:
        assert tuple(cat(session.root, f"/metadataQuorum/live/{name}")
                     for name in ("clusterId", "maxFollowerLag", "maxFollowerLagTimeMs")) == \
            ("MkU3OEVBNTcwNTJENDM2Qg", 7, 600)      # voter 1: first of the two at 118
        out = io.StringIO()
        ctx = Context.for_session(session, out=out, err=io.StringIO())
        assert run_words(ctx, ["quorum"]) == 0
        assert run_words(ctx, ["quorum", "--replication"]) == 0
    finally:
        session.close()
    endpoints = ", ".join(f'{{"id": {n}, "endpoints": ["CONTROLLER://127.0.0.1:{9092 + n}"]}}'
                          for n in (1, 2, 3))
    assert out.getvalue().splitlines() == [
        "ClusterId:              MkU3OEVBNTcwNTJENDM2Qg",
        "LeaderId:               2",
        "LeaderEpoch:            3",
        "HighWatermark:          120",
        "MaxFollowerLag:         7",
        "MaxFollowerLagTimeMs:   600",
        f"CurrentVoters:          [{endpoints}]",
        'CurrentObservers:       [{"id": 101, "directoryId": "4MIo2GCR7GIuMQbyq6cTQQ"}]',
        "NodeId\tDirectoryId           \tLogEndOffset\tLag\tLastFetchTimestamp\tLastCaughtUpTimestamp\tStatus  \t",
        "2     \tAAAAAAAAAAAAAAAAAAAAAA\t125         \t0  \t1700000001000     \t1700000001000        \tLeader  \t",
        "1     \tAAAAAAAAAAAAAAAAAAAAAA\t118         \t7  \t1700000000900     \t1700000000400        \tFollower\t",
        "3     \tAAAAAAAAAAAAAAAAAAAAAA\t118         \t7  \t1700000000950     \t1700000000700        \tFollower\t",
        "101   \t4MIo2GCR7GIuMQbyq6cTQQ\t125         \t0  \t1700000000990     \t1700000000990        \tObserver\t"]


def test_quorum_needs_the_live_view():
    """On files there is no DescribeQuorum answer: one line, status 1."""
    import io
    from pathlib import Path

    from metashell.commands import Context, run_words
    err = io.StringIO()
    example = Path(__file__).resolve().parents[2] / "examples" / "cluster"
    ctx = Context.for_session(open_session(example), out=io.StringIO(), err=err)
    assert run_words(ctx, ["quorum"]) == 1 and err.getvalue().count("\n") == 1
    assert "needs -C" in err.getvalue()


def test_a_failed_describe_quorum_shows_as_an_error_not_a_failure():
    session, _ = open_live([snapshot_event(5, SNAP), status("following", 5, 5)])
    try:
        assert cat(session.root, "/metadataQuorum/live/error") == \
            "127.0.0.1:9093: DescribeQuorum: connection refused"
        # the log names no leader: the one the quorum named shows
        assert cat(session.root, "/metadataQuorum/leaderId") == 1
        assert cat(session.root, "/metadataQuorum/leaderEpoch") == 3
    finally:
        session.close()


def test_subscribers_get_each_change_with_its_path():
    gate = threading.Event()
    session, observer = open_live([
        snapshot_event(5, SNAP), status("following", 5, 5), gate,
        committed_event(5, [record("FenceBrokerRecord", id=1, epoch=10)],
                        [change(uid(1), 0, isr=[1, 2])],
                        [record("RemoveTopicRecord", topicId=uid(1))],
                        [noop()])])
    try:
        changes = session.subscribe()
        gate.set()
        got = [changes.get(timeout=5) for _ in range(3)]
        assert [(c["offset"], c["type"], c["path"]) for c in got] == [
            (5, "FenceBrokerRecord", "/brokers/1"),
            (6, "PartitionChangeRecord", "/topics/a/0"),
            (7, "RemoveTopicRecord", "/topics/a")]
        assert got[1]["summary"] == "partition 0: isr [1,2]"
        assert got[0]["time"].endswith("Z")
        session.close()
        assert changes.get(timeout=5) is None                 # following stopped
    finally:
        session.close()


def test_catching_up_reports_offsets_of_the_high_watermark():
    calls = []
    snap = SNAP + [partition(uid(1), p) for p in range(1, 30000)]   # over 1 MiB
    session, _ = open_live([status("catching-up", 30010, 0), snapshot_event(30000, snap),
                            committed_event(30000, [topic("b", uid(2))]),
                            status("following", 30010, 30010)],
                           progress=lambda done, total: calls.append((done, total)))
    session.close()
    done = [d for d, _ in calls]
    assert done == sorted(done) and 0 < done[1] < 30000      # inside the snapshot
    assert {t for _, t in calls} == {30010} and done[-1] == 30001


def test_the_live_leader_once_the_quorum_is_lost_says_so():
    """The observer's last leader is not the quorum's: once it is lost,
    /metadataQuorum/live/leaderId says there is none, and why."""
    import io

    from metashell.commands import Context, run_words
    gate = threading.Event()
    session, _ = open_live([snapshot_event(5, SNAP), status("following", 5, 5), gate,
                            status("lost", 5, 5, "connection refused")])
    try:
        gate.set()
        wait_until(lambda: session.state() == "quorum lost", "the quorum lost state")
        assert cat(session.root, "/metadataQuorum/live/leaderId") == -1
        out = io.StringIO()
        ctx = Context.for_session(session, out=out, err=io.StringIO())
        assert run_words(ctx, ["cat", "/metadataQuorum/live/leaderId"]) == 0
        assert out.getvalue() == "none (quorum lost)\n"
        assert cat(session.root, "/metadataQuorum/live/state") == "quorum lost"
    finally:
        session.close()
