"""End to end: the shell with -C against the fake controller quorum
(``fake_kraft``) on loopback: every corpus log dir gives the tree -s gives,
one-shot, script mode following between lines, watch, and nothing
listening."""

from __future__ import annotations

import json
import selectors
import signal
import socket
import subprocess
import time

import pytest
from tests.support.fake_kraft import FakeQuorum
from tests.support.cli import BIN, env, run_cli
from tests.support.corpora import corpus_cases
from tests.support.paths import CORPORA
from tests.support.ports import refusing_ports
from tests.support.replay import flat
from tests.support.records import noop, topic, uid
from tests.support.waiting import wait_until

from metashell.kraft.writer import record

LOG_DIRS = corpus_cases(lambda: sorted(p.name for p in CORPORA.iterdir() if p.is_dir()))
# only a bootstrap.checkpoint: -s loads it as a snapshot (offset -1, epoch 0); a
# controller writes its records as the first batches of the log, as the fake serves them
BOOTSTRAP_ONLY = {"kafka-3.3-bootstrap", "kafka-4.1-bootstrap-scram", "kafka-4.2-bootstrap"}


@pytest.fixture
def quorum():
    with FakeQuorum(3) as q:
        q.append([record("RegisterBrokerRecord", brokerId=1, brokerEpoch=5,
                         incarnationId=uid(99), endPoints=[], fenced=False)], commit=True)
        yield q


@pytest.mark.parametrize("name", LOG_DIRS)
def test_every_corpus_log_dir_gives_the_tree_files_give(name):
    path = CORPORA / name
    try:
        q = FakeQuorum.from_logdir(path)
    except ValueError as e:   # e.g. a later segment alone: no controller serves that
        pytest.skip(f"not a servable log dir: {e}")
    with q:
        status, out, err = run_cli(["-C", q.bootstrap(), "--timeout", "10", "-o", "json",
                                    "tree", "/"])
        assert status == 0, err
        live = flat(json.loads(out))
    status, out, _ = run_cli(["-s", str(path), "-o", "json", "tree", "/"])
    assert status == 0
    files = flat(json.loads(out))
    assert live["/metadataQuorum/live/state"] == "following"
    assert live["/metadataQuorum/live/highWatermark"] == q.hwm
    # where the log names no leader, -s shows the node's quorum-state (or -1 for
    # a lone file) and -C the leader the quorum names
    live_leader, file_leader = live.pop("/metadataQuorum/leaderId"), files.pop("/metadataQuorum/leaderId")
    assert live_leader == (q.leader_id if file_leader == -1 else file_leader) or \
        live_leader == q.leader_id
    # /metadataQuorum/leader repeats leaderId and leaderEpoch, compared here
    ignored = ("/local/", "/metadataQuorum/live/", "/metadataQuorum/leader/")
    if name in BOOTSTRAP_ONLY:
        ignored += ("/metadataQuorum/offset", "/metadataQuorum/time",
                    "/metadataQuorum/leaderEpoch", "/image/provenance/")
    else:
        assert live.pop("/metadataQuorum/leaderEpoch") >= files.pop("/metadataQuorum/leaderEpoch")

    # a broker registered before the snapshot the quorum sent: -s reads its time from
    # the segments before the snapshot, -C never fetched them (issue: null otherwise)
    for key in [k for k in files if k.endswith("/registeredAt")]:
        assert live.pop(key) in (files.pop(key), None), key

    def kept(tree):
        return {k: v for k, v in tree.items() if not k.startswith(ignored)}
    assert kept(live) == kept(files)


def test_one_shot_with_the_launcher(quorum, tmp_path):
    p = subprocess.run([str(BIN), "-C", quorum.bootstrap(with_ids=False), "--timeout", "10",
                        "-o", "json", "summary"], env=env(tmp_path), capture_output=True,
                       text=True, timeout=60)
    assert (p.returncode, p.stderr) == (0, "")
    summary = json.loads(p.stdout)
    assert summary["brokers"]["ids"] == [1]
    assert summary["quorum"]["state"] == "following"
    assert summary["quorum"]["highWatermark"] == quorum.hwm


def _read_line(proc, timeout=20.0) -> str:
    end = time.monotonic() + timeout
    with selectors.DefaultSelector() as waiting:   # any descriptor, even past 1024
        waiting.register(proc.stdout, selectors.EVENT_READ)
        while time.monotonic() < end:
            if waiting.select(0.2):
                return proc.stdout.readline()
    raise AssertionError("no output from the shell")


def test_script_mode_follows_between_lines(quorum, tmp_path):
    proc = subprocess.Popen([str(BIN), "-C", quorum.bootstrap(), "--timeout", "10", "-o", "json"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env(tmp_path), bufsize=1)
    try:
        proc.stdin.write("ls /topics\n")
        proc.stdin.flush()
        assert json.loads(_read_line(proc)) == []
        quorum.append([topic("orders", uid(5))], commit=True)
        def shows_orders():
            proc.stdin.write("ls /topics\n")
            proc.stdin.flush()
            return json.loads(_read_line(proc)) == ["orders"]

        wait_until(shows_orders, "the new topic to show", timeout=20, interval=0.1)
        proc.stdin.close()
        assert proc.wait(20) == 0
    finally:
        proc.kill()


def test_watch_prints_changes_appended_after_catch_up(quorum, tmp_path):
    proc = subprocess.Popen([str(BIN), "-C", quorum.bootstrap(), "--timeout", "10", "-o", "json",
                             "watch", "/topics", "--count", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env(tmp_path))
    try:
        # keep appending until watch has printed two: whatever came before it
        # caught up is part of the image, not a change it prints
        n = 0
        while proc.poll() is None and n < 100:
            quorum.append([noop()], commit=True)          # not a change
            quorum.append([topic(f"t{n}", uid(100 + n))], commit=True)
            n += 1
            time.sleep(0.1)              # the behaviour: changes keep coming while it watches
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert (proc.returncode, err) == (0, "")
    changes = [json.loads(line) for line in out.splitlines()]
    assert len(changes) == 2
    assert [c["type"] for c in changes] == ["TopicRecord", "TopicRecord"]
    first = int(changes[0]["path"].rsplit("t", 1)[1])
    assert [c["path"] for c in changes] == [f"/topics/t{first}", f"/topics/t{first + 1}"]
    assert changes[1]["offset"] == changes[0]["offset"] + 2
    assert set(changes[0]) == {"offset", "time", "type", "path", "summary"}


def test_nothing_listening_exits_1_within_the_timeout_naming_the_addresses(tmp_path):
    with refusing_ports(2) as ports:
        controllers = f"1@127.0.0.1:{ports[0]},2@127.0.0.1:{ports[1]}"
        started = time.monotonic()
        p = subprocess.run([str(BIN), "-C", controllers, "--timeout", "2", "ls"],
                           env=env(tmp_path), capture_output=True, text=True, timeout=30)
        elapsed = time.monotonic() - started
    assert p.returncode == 1 and p.stdout == ""
    assert f"127.0.0.1:{ports[0]}" in p.stderr and f"127.0.0.1:{ports[1]}" in p.stderr
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
    assert elapsed < 2 + 5          # the timeout, plus starting Python



def test_interactive_follows_shows_a_lost_quorum_and_exits_at_once(quorum, tmp_path):
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(str(BIN), ["-C", quorum.bootstrap(), "--timeout", "10"],
                          env=env(tmp_path), encoding="utf-8", timeout=30, dimensions=(24, 120),
                          use_poll=True)   # poll(): any descriptor, even past 1024
    try:
        child.expect_exact("controllers 1@127.0.0.1:")
        child.expect_exact("[kafka-metadata-shell /]>")
        child.sendline("ls /brokers")
        child.expect_exact("1\r\n")
        child.expect_exact("[kafka-metadata-shell /]>")
        for node in quorum.nodes.values():       # the whole quorum goes away
            node.stop()
        child.expect_exact("(quorum lost)]>")       # redrawn while waiting for input
        child.send("ls /top")
        child.expect_exact("ls /top")
        child.sendcontrol("c")                   # cancels the line at once
        child.expect_exact("(quorum lost)]>")
        time.sleep(0.5)                          # a key typed before the new prompt is dropped
        started = time.monotonic()
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
        assert time.monotonic() - started < 5
        child.close()
        assert child.exitstatus == 0
    finally:
        child.terminate(force=True)


def test_ctrl_c_while_catching_up_exits_130_at_once(tmp_path):
    # a controller that accepts and never answers: the shell is, for sure, in
    # the middle of catching up once its connection is accepted (under load
    # the launcher script can take seconds to start Python, and a SIGINT sent
    # to it before then is not what this test is about)
    with socket.create_server(("127.0.0.1", 0)) as silent:
        silent.settimeout(60)
        proc = subprocess.Popen([str(BIN), "-C", f"127.0.0.1:{silent.getsockname()[1]}",
                                 "--timeout", "30", "ls"],
                                env=env(tmp_path), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            connection, _ = silent.accept()
            with connection:
                proc.send_signal(signal.SIGINT)
                started = time.monotonic()
                out, err = proc.communicate(timeout=10)
                assert time.monotonic() - started < 3
        finally:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130 and out == "" and "Traceback" not in err
