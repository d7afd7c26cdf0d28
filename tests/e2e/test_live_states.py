"""Live mode's states and give-ups against the fake quorum (``fake_kraft``):
-C ids that do not match the voters', elections, falling behind, a leader
whose log ends before the image, one-shot commands losing the quorum,
commands checked before connecting, ``--timeout`` kept, protocol
mismatches, and ``diff --from-offset`` under -C."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import threading
import time

import pytest

from tests.support.fake_kraft import FakeQuorum, Listener
from tests.support.fake_kraft_follow import (a_cluster_log, caught_up, live_config, parked_at_the_log_end,
                                             quorums)  # noqa: F401 (fixture)
from tests.support.fake_kraft_security import TlsCertificates
from tests.support.waiting import wait_until
from tests.support.cli import BIN, env, run_cli
from tests.support.records import topic, uid

from metashell import cli
from metashell.fs.node import lookup
from metashell.session.live import open_live_session
from metashell.live import LiveConfig, LiveError, NoticeEvent, parse_controllers
from metashell.live.clientconfig import load_client_config


def swapped(q, ids: dict[int, int]) -> str:
    """``-C`` with node ``n``'s address under id ``ids.get(n, n)``."""
    return ",".join(f"{ids.get(i, i)}@{n.hostport}" for i, n in q.nodes.items())


def fetches(q) -> int:
    return sum(len(n.fetches) for n in q.nodes.values())


def wait_for_a_fetch_at_the_log_end(q, timeout: float = 60) -> None:
    """Until an observer has asked for the records after the log's end (it
    caught up and is long-polling)."""
    wait_until(lambda: parked_at_the_log_end(q), f"a Fetch at the log end ({q.log.end_offset})", timeout)


# ------------------------------------------------------------------ -C ids that disagree

@pytest.mark.parametrize("profile", ["3.7", "4.1"])
def test_ids_in_c_that_are_not_the_voters_ids_are_reported_and_followed_past(quorums, profile):
    # the leader is node 1; -C gives its id to node 2's address and node 2's to node 1's
    q = a_cluster_log(quorums(3, profile=profile)).start()
    f = quorums.follow(LiveConfig(parse_controllers(swapped(q, {1: 2, 2: 1})), timeout=5))
    assert f.wait(caught_up), (f.error, f.statuses[-1:])
    notices = [e.text for e in f.of(NoticeEvent)]
    assert notices, "the disagreement must be said"
    assert all(n.startswith("-C names ") and "do not match the voters' node ids" in n for n in notices)
    assert any(f"1@{q.nodes[2].hostport}" in n or f"2@{q.nodes[1].hostport}" in n for n in notices)
    assert f.statuses[-1].endpoint == q.nodes[1].address
    before = fetches(q)
    time.sleep(1.0)                  # the behaviour: how many requests a second of following makes
    assert fetches(q) - before < 10, "following must be long polls, not a request storm"


def test_a_leader_no_address_in_c_leads_to_is_backed_off_from_not_hammered(quorums):
    # -C names only node 2's address, as node 1 (the leader); no NodeEndpoints (3.7)
    q = a_cluster_log(quorums(3, profile="3.7")).start()
    config = LiveConfig(parse_controllers(f"1@{q.nodes[2].hostport}"), timeout=2)
    f = quorums.follow(config)
    started = time.monotonic()
    assert f.wait(lambda f: f.finished, 10)
    assert time.monotonic() - started < 2.5
    assert isinstance(f.error, LiveError)
    message = str(f.error)
    assert "\n" not in message and "whose address is not known" in message, message
    assert len(q.nodes[2].fetches) < 40, f"{len(q.nodes[2].fetches)} Fetch requests in 2 s"
    (notice,) = [e.text for e in f.of(NoticeEvent)]
    assert notice.startswith(f"-C names 1@{q.nodes[2].hostport} but the controller at "
                             f"{q.nodes[2].hostport} is not node 1")


# ------------------------------------------------------------------ elections and states

def test_an_election_is_shown_as_one_and_leader_id_answers_during_it(quorums):
    q = a_cluster_log(quorums(3)).start()
    session = open_live_session(live_config(q))
    try:
        q.begin_election()
        wait_until(lambda: session.state() == "election", "the session to see the election", 10)
        view = session.quorum_view()
        assert (view["leaderId"], view["leaderEpoch"]) == (-1, 2)
        assert view["state"] == "election"
        assert lookup(session.root, ["metadataQuorum", "live", "leaderId"]).value() == -1
        q.failover(3)
        wait_until(lambda: session.state() is None, "the session to follow the new leader", 10)
        assert session.status.leader_id == 3
    finally:
        session.close()


def test_a_whole_quorum_back_without_a_leader_yet_is_an_election_then_followed(quorums):
    q = a_cluster_log(quorums(3)).start()
    f = quorums.follow(live_config(q))
    assert f.wait(caught_up), f.error
    for node in q.nodes.values():
        node.stop()
    assert f.wait(lambda f: f.statuses[-1].state == "lost", 10), f.statuses[-1:]
    q.forget_leader()
    for node in q.nodes.values():
        node.start()
    assert f.wait(lambda f: f.statuses[-1].state == "election", 10), f.statuses[-2:]
    assert f.statuses[-1].leader_id == -1
    q.failover(2)
    q.append([topic("after", uid(400))], commit=True)
    assert f.wait(lambda f: f.committed_offset == q.log.end_offset, 10), f.statuses[-2:]
    assert f.statuses[-1].state == "following" and f.statuses[-1].leader_id == 2


def test_catching_up_again_when_the_image_falls_behind(quorums):
    q = a_cluster_log(quorums(1)).start()
    f = quorums.follow(live_config(q))
    assert f.wait(caught_up), f.error
    q.max_fetch_bytes = 300          # answers hold one batch: the observer falls behind
    for n in range(20):
        q.append([topic(f"late{n}", uid(200 + n))])
    q.commit()
    assert f.wait(lambda f: f.committed_offset == q.log.end_offset, 15), f.statuses[-1:]
    states = [s.state for s in f.statuses]
    first = states.index("following")
    assert "catching-up" in states[first:], states
    assert states[-1] == "following"


def test_a_leader_whose_log_ends_before_the_image_is_reported(quorums):
    q = a_cluster_log(quorums(3), topics=5).start()
    f = quorums.follow(live_config(q))
    assert f.wait(caught_up), f.error
    held = f.committed_offset
    # the quorum restored from an older copy: its log ends 3 batches earlier, new epoch
    with q.cond:
        q.log.truncate(q.log.bases[-3])
        q.hwm = q.committed = q.log.end_offset
        q.epoch += 1
        q.leader_id = 2
        q.cond.notify_all()
    assert f.wait(lambda f: f.finished, 10)
    message = str(f.error)
    assert isinstance(f.error, LiveError) and "\n" not in message
    assert "the leader's log is behind this image" in message and f"before offset {held}" in message
    assert f.committed_offset == held      # nothing was taken back


# ------------------------------------------------------------------ one-shot commands

def test_one_shot_watch_that_loses_the_quorum_says_so_and_gives_up_in_time(tmp_path):
    with FakeQuorum(3) as q:
        a_cluster_log(q)
        proc = subprocess.Popen([str(BIN), "-C", q.bootstrap(), "--timeout", "2", "watch"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env(tmp_path))
        try:
            wait_for_a_fetch_at_the_log_end(q)      # caught up, watching
            time.sleep(0.2)                         # the behaviour: it keeps watching meanwhile
            assert proc.poll() is None
            for node in q.nodes.values():
                node.stop()
            stopped = time.monotonic()
            out, err = proc.communicate(timeout=20)
            elapsed = time.monotonic() - stopped
        finally:
            proc.kill()
    lines = err.splitlines()
    assert proc.returncode == 1 and out == "", err
    assert lines[0].startswith("kafka-metadata-shell: quorum lost (") and "giving up after 2 s" in lines[0], lines
    assert lines[-1].startswith("kafka-metadata-shell: lost the quorum: no controller answered a "
                                "Fetch again within 2 s (tried "), lines
    assert "Traceback" not in err
    # the timeout counts from the last answer (a long poll); 3 s for the exit on a loaded machine
    assert elapsed < 2 + 0.5 + 3, elapsed


def test_one_shot_commands_and_options_are_checked_before_connecting():
    with socket.socket() as s:       # nothing will ever answer here
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        for words, message in [(["bogus"], "unknown command 'bogus'"),
                               (["ls", "--bogus"], "ls: unrecognized arguments: --bogus"),
                               (["watch", "--count", "0"], "watch: argument --count: invalid count"),
                               (["diff", "--from-offset", "-1"], "diff: --from-offset: must be 0 or more")]:
            started = time.monotonic()
            status, out, err = run_cli(["-C", f"127.0.0.1:{port}", "--timeout", "20", *words])
            assert time.monotonic() - started < 1, words
            assert (status, out) == (2, "") and err.startswith(message), (words, err)


# (in-process: the timeout counts from the command's start, after Python has started)

def test_the_timeout_is_kept_against_a_listener_that_never_answers():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()                          # accepts (the kernel does), never answers
        started = time.monotonic()
        status, out, err = run_cli(["-C", f"127.0.0.1:{s.getsockname()[1]}", "--timeout", "1.5", "ls"])
        elapsed = time.monotonic() - started
    assert status == 1 and "timed out" in err and err.count("\n") == 1, err
    assert 1.5 <= elapsed < 1.5 + 0.5, elapsed


def test_the_timeout_is_kept_during_an_endless_election():
    with FakeQuorum(3) as q:
        q.begin_election()
        started = time.monotonic()
        status, out, err = run_cli(["-C", q.bootstrap(), "--timeout", "1.5", "ls"])
        elapsed = time.monotonic() - started
    assert status == 1 and "election of epoch 2 in progress" in err, err
    assert 1.5 <= elapsed < 1.5 + 0.5, elapsed


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_connecting_is_shown_with_the_address(monkeypatch):
    monkeypatch.setattr(cli, "PROGRESS_DELAY", 0)
    stream = Terminal()
    progress = cli._Progress(stream, offsets=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        with pytest.raises(LiveError):
            open_live_session(LiveConfig(parse_controllers(f"7@127.0.0.1:{port}"), timeout=0.5),
                              progress=progress)
    progress.close()
    assert f"connecting to 7@127.0.0.1:{port}" in stream.getvalue()


# ------------------------------------------------------------------ protocol mismatches

def _security(tmp_path, **props):
    path = tmp_path / "client.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return load_client_config(str(path))


def test_a_tls_client_against_a_plaintext_listener_says_protocol_mismatch(quorums, tmp_path):
    certs = TlsCertificates(str(tmp_path / "certs"))
    q = a_cluster_log(quorums(2)).start()
    security = _security(tmp_path, **{"security.protocol": "SSL", "ssl.truststore.type": "PEM",
                                      "ssl.truststore.location": certs.ca_pem})
    f = quorums.follow(live_config(q, timeout=20, security=security))
    started = time.monotonic()
    assert f.wait(lambda f: f.finished, 10)
    assert time.monotonic() - started < 3
    assert isinstance(f.error, LiveError) and "protocol mismatch?" in str(f.error), f.error
    assert "PLAINTEXT" in str(f.error)


def test_a_plaintext_client_against_a_tls_listener_says_protocol_mismatch(quorums, tmp_path):
    certs = TlsCertificates(str(tmp_path / "certs"))
    q = a_cluster_log(quorums(2, listener=Listener("SSL", tls=certs.server_context()))).start()
    f = quorums.follow(live_config(q, timeout=20))
    started = time.monotonic()
    assert f.wait(lambda f: f.finished, 10)
    assert time.monotonic() - started < 3
    assert isinstance(f.error, LiveError) and "protocol mismatch?" in str(f.error), f.error
    assert "SSL" in str(f.error)


# ------------------------------------------------------------------ diff under -C

def test_diff_from_offset_and_time_under_c_follow_the_quorum_again():
    with FakeQuorum(3) as q:
        a_cluster_log(q, topics=1)
        before = q.log.end_offset - 1
        time.sleep(0.05)                  # the clock moves on: --from-time falls between two appends
        cut = int(time.time() * 1000)
        time.sleep(0.05)
        q.append([topic("orders", uid(50))], commit=True)
        for option, value in (("--from-offset", before), ("--from-time", cut)):
            status, out, err = run_cli(["-C", q.bootstrap(), "--timeout", "5", "-o", "json",
                                        "diff", option, str(value), "/topics"])
            assert status == 1, err                   # 1: the images differ
            changes = [json.loads(line) for line in out.splitlines()]
            assert [(c["op"], c["path"]) for c in changes] == [("add", "/topics/orders")], (option, out)
        status, out, err = run_cli(["-C", q.bootstrap(), "--timeout", "5", "diff", "--from-offset",
                                    str(q.log.end_offset - 1), "/topics"])
        assert (status, out) == (0, ""), err


def test_diff_from_an_offset_before_the_quorums_snapshot_names_from_offset(quorums):
    from tests.support.fake_kraft import noop_records
    from metashell.kraft.writer import snapshot_bytes
    q = quorums(3, profile="4.1")
    q.append(noop_records(10), commit=True)
    q.truncate_to_snapshot(snapshot_bytes(noop_records(3), epoch=1), 10)
    q.append([topic("after", uid(60))], commit=True)
    q.start()
    status, out, err = run_cli(["-C", q.bootstrap(), "--timeout", "5", "diff", "--from-offset", "4"])
    assert status == 2 and out == "", err
    assert "--from-offset 4 is before the quorum's snapshot, which ends at offset 9" in err
    assert "--until-offset" not in err


def test_no_thread_left_behind():
    # the sessions opened for diff are closed with their observers
    assert not [t for t in threading.enumerate() if t.name == "metashell-follower" and t.is_alive()]


# ------------------------------------------------------------------ commit latency before Fetch v18

@pytest.mark.parametrize("profile", ["3.7", "4.1"])
def test_records_committed_after_they_were_fetched_show_within_a_fraction_of_the_long_poll(
        quorums, profile):
    # before v18 a leader does not answer a parked Fetch when only the HWM moves
    q = a_cluster_log(quorums(1, profile=profile)).start()
    f = quorums.follow(live_config(q))
    assert f.wait(caught_up), f.error
    delays = []
    for n in range(5):
        # the behaviour: records appended into a parked Fetch, committed a
        # moment later, show within a fraction of the long poll
        time.sleep(0.2)
        last = q.append([topic(f"slow{n}", uid(300 + n))])[1]     # fetched, not committed yet
        time.sleep(0.1)
        committed_at = time.monotonic()
        q.commit()
        assert f.wait(lambda f: f.committed_offset > last, 5)
        delays.append(time.monotonic() - committed_at)
    assert max(delays) < 0.25, delays          # not the 500 ms long poll
    fetches = sum(len(n.fetches) for n in q.nodes.values())
    assert fetches < 100, fetches
