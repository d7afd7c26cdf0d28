"""End to end: the real ``bin/kafka-metadata-shell`` on real Kafka files
(shared corpora), in one-shot and script mode and interactively under a
pseudo-terminal (pexpect)."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from tests.support.cli import BIN, env
from tests.support.corpora import needs_corpora
from tests.support.paths import CORPORA, EXAMPLE

LOGDIR = CORPORA / "kafka-3.7-logdir"
SNAPSHOT = CORPORA / "kafka-3.8-three-controllers-snapshot" / \
    "00000000000000007268-0000000001.checkpoint"



def shell(*args, tmp_path, **kwargs):
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("text", True)
    kwargs.setdefault("timeout", 120)
    return subprocess.run([str(BIN), *map(str, args)], env=env(tmp_path), **kwargs)


# ------------------------------------------------------------------ no data needed

def test_launcher_version_help_and_usage_errors(tmp_path):
    from metashell import __version__
    p = shell("--version", tmp_path=tmp_path)
    assert (p.returncode, p.stdout) == (0, f"kafka-metadata-shell (metashell) {__version__}\n")
    p = shell("--help", tmp_path=tmp_path)
    assert p.returncode == 0 and "_KAFKA_METADATA_SHELL_COMPLETE=bash_source" in p.stdout
    p = shell("ls", tmp_path=tmp_path)
    assert p.returncode == 2 and "exactly one source is required" in p.stderr
    p = shell("-C", "1@localhost:9093", "-s", "x", tmp_path=tmp_path)
    assert p.returncode == 2 and "exactly one source is allowed" in p.stderr
    p = shell("man", "find", tmp_path=tmp_path)
    assert p.returncode == 0 and p.stdout.startswith("find: ")


@pytest.mark.parametrize("shell_name,marker", [("bash", "complete -o nosort"),
                                               ("zsh", "#compdef kafka-metadata-shell"),
                                               ("fish", "complete --no-files")])
def test_completion_scripts(tmp_path, shell_name, marker):
    p = subprocess.run([str(BIN)], capture_output=True, text=True, timeout=120,
                       env=env(tmp_path, _KAFKA_METADATA_SHELL_COMPLETE=f"{shell_name}_source"))
    assert p.returncode == 0 and marker in p.stdout


def test_bash_completion_answers(tmp_path):
    p = subprocess.run([str(BIN)], capture_output=True, text=True, timeout=120,
                       env=env(tmp_path, _KAFKA_METADATA_SHELL_COMPLETE="bash_complete",
                               COMP_WORDS="kafka-metadata-shell -s x ch", COMP_CWORD="3"))
    assert p.stdout.split() == ["plain,changes"]


# ------------------------------------------------------------------ real files

def test_load_error_is_one_line(tmp_path):
    p = shell("-s", tmp_path / "nothing-here", "ls", tmp_path=tmp_path)
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.startswith("kafka-metadata-shell: ") and p.stderr.count("\n") == 1
    assert "Traceback" not in p.stderr


@needs_corpora
def test_one_shot_on_a_snapshot(tmp_path):
    p = shell("-s", SNAPSHOT, "ls", "/brokers", tmp_path=tmp_path)
    assert (p.returncode, p.stdout) == (0, "1\n2\n3\n")
    p = shell("-s", SNAPSHOT, "-o", "json", "ls", "/controllers", tmp_path=tmp_path)
    assert json.loads(p.stdout) == ["1", "2", "3"]
    p = shell("-s", SNAPSHOT, "ls", "-l", "/brokers", tmp_path=tmp_path)
    assert p.returncode == 0 and p.stdout.splitlines()[1].startswith("d  ")
    p = shell("-s", SNAPSHOT, "-o", "json", "cat", "/brokers/*/registration", tmp_path=tmp_path)
    assert [json.loads(line)["brokerId"] for line in p.stdout.splitlines()] == [1, 2, 3]
    p = shell("-s", SNAPSHOT, "cat", "/topics", tmp_path=tmp_path)
    assert (p.returncode, p.stderr) == (1, "cat: /topics: is a directory\n")
    p = shell("-s", SNAPSHOT, "-o", "json", "summary", tmp_path=tmp_path)
    assert p.returncode == 0 and isinstance(json.loads(p.stdout), dict)
    p = shell("-s", SNAPSHOT, "-o", "json", "changes", "/brokers/1", tmp_path=tmp_path)
    assert p.returncode == 0 and json.loads(p.stdout)[0]["type"] == "RegisterBrokerRecord"


@needs_corpora
def test_script_mode_on_a_log_dir(tmp_path):
    p = shell("-s", LOGDIR, input="cd /brokers\nls\n# done\nls /nope\n", tmp_path=tmp_path)
    assert (p.returncode, p.stdout) == (1, "1\n")
    assert p.stderr.endswith("ls: /nope: no such file or directory\n")


@needs_corpora
def test_pipe_to_head_is_quiet(tmp_path):
    p = subprocess.run(f"'{BIN}' -s '{SNAPSHOT}' find / | head -2", shell=True,
                       capture_output=True, text=True, timeout=120, env=env(tmp_path))
    assert p.stdout == "/\n/acls\n"
    assert "Traceback" not in p.stderr and "Broken pipe" not in p.stderr


# ------------------------------------------------------------------ interactive (pexpect)

def spawn(tmp_path, *args):
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(str(BIN), ["-s", str(SNAPSHOT), *args], env=env(tmp_path),
                          encoding="utf-8", timeout=30, dimensions=(24, 100), use_poll=True)
    child.expect("; type help")
    return pexpect, child


def prompt(child, cwd="/"):
    child.expect_exact(f"[kafka-metadata-shell {cwd}]>")


def echoed(text):
    """A pattern for TEXT as the terminal shows it: a busy machine may draw a line in
    several writes (what was typed, then what a completion added), each wrapped in the
    REPL's cursor and attribute escapes, so any such escapes may stand between the
    characters."""
    escapes = r"(?:\x1b\[[0-9;?]*[A-Za-z])*"
    return escapes.join(re.escape(c) for c in text)


@needs_corpora
def test_interactive_session(tmp_path):
    pexpect, child = spawn(tmp_path)
    prompt(child)
    child.send("cd /bro\t")                         # completes to /brokers/
    child.expect(echoed("cd /brokers/"))
    child.send("\r")
    prompt(child, "/brokers")
    child.sendline("ls")
    child.expect(r"1\s+2\s+3")                      # columns on a terminal
    prompt(child, "/brokers")
    child.send("ls /nothing-at-all")
    child.sendcontrol("c")                          # cancels the line
    prompt(child, "/brokers")
    child.sendline("pwd")
    child.expect_exact("/brokers\r\n")
    prompt(child, "/brokers")
    child.sendline("cat /nope")
    child.expect_exact("cat: /nope: no such file or directory")
    prompt(child, "/brokers")
    child.sendcontrol("d")                          # exits 0
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    history = (tmp_path / "history").read_text()
    assert "+cd /brokers/" in history and "+pwd" in history
    assert "ls /nothing-at-all" not in history


@needs_corpora
def test_interactive_history_persists_across_runs(tmp_path):
    pexpect, child = spawn(tmp_path)
    prompt(child)
    child.sendline("cd /controllers")
    prompt(child, "/controllers")
    child.sendline("exit")                          # `exit` leaves like Ctrl-D
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    pexpect, child = spawn(tmp_path)
    prompt(child)
    child.send("\x1b[A\x1b[A")                      # up arrow recalls the last run's lines
    child.expect_exact("cd /controllers")
    child.send("\r")
    prompt(child, "/controllers")
    child.sendline("history")
    child.expect_exact("    0  cd /controllers")
    child.expect_exact("    1  exit")
    child.expect_exact("    2  cd /controllers")
    child.expect_exact("    3  history")
    prompt(child, "/controllers")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


needs_example = pytest.mark.skipif(not EXAMPLE.is_dir(), reason=f"{EXAMPLE} is not there")


@needs_example
def test_interactive_on_the_bundled_example(tmp_path):
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(str(BIN), ["-s", str(EXAMPLE)], env=env(tmp_path), encoding="utf-8",
                          timeout=30, dimensions=(24, 100), use_poll=True)
    child.expect_exact("; type help")
    prompt(child)
    child.send("cd /topics/ord\t")
    child.expect(echoed("cd /topics/orders/"))
    child.send("\r")
    prompt(child, "/topics/orders")
    child.sendline("cat name")
    child.expect_exact("orders\r\n")
    prompt(child, "/topics/orders")
    child.sendline("ls -l id")
    child.expect(r"-\s+22\s+\S*\d+  \S*20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z  id")   # \u2264: from the snapshot
    prompt(child, "/topics/orders")
    child.sendline("exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


@needs_example
def test_one_shot_on_the_bundled_example(tmp_path):
    p = shell("-s", EXAMPLE, "-o", "json", "ls", "/topics", tmp_path=tmp_path)
    assert p.returncode == 0 and "orders" in json.loads(p.stdout)
    p = shell("-s", EXAMPLE, "tree", "/topics/orders/0", tmp_path=tmp_path)
    assert p.returncode == 0 and p.stdout.startswith("data:\n  {\n")
