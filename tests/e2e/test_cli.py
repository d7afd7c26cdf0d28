"""The command line: options, modes, exit codes, streams (CliRunner and
subprocesses of the real entry point with a fake session factory)."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner

from metashell import __version__, cli
from tests.support import commands as support
from tests.support.commands import fake_open_session
from tests.support.paths import REPO

# The real entry point (metashell.cli.main, standalone: it exits the process)
# with the fake session factory passed in as an argument: ``python -m
# tests.support.commands`` run from the checkout's root.
FAKE_MAIN = [sys.executable, "-m", "tests.support.commands"]


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    support.CALLS.clear()
    monkeypatch.delenv("NO_COLOR", raising=False)


def invoke(args, input=None, **kwargs):
    return CliRunner().invoke(cli.make_cli(open_session=fake_open_session), args, input=input,
                              **kwargs)


# ------------------------------------------------------------------ one-shot

def test_one_shot_ls():
    result = invoke(["-s", "snap.checkpoint", "ls", "/brokers"])
    assert (result.exit_code, result.stdout, result.stderr) == (0, "1\n2\n10\n", "")
    assert support.CALLS[0][0] == "snap.checkpoint"


def test_command_arguments_pass_through_untouched():
    result = invoke(["-s", "x", "ls", "-l", "/features"])
    assert result.exit_code == 0
    assert result.stdout.splitlines()[1].startswith("-     1       -  -")
    result = invoke(["-s", "x", "find", "/topics", "-type", "f", "-name", "id"])
    assert result.stdout == "/topics/bar/id\n/topics/foo/id\n"
    result = invoke(["-s", "x", "cat", "/odd/with space"])
    assert result.stdout == "spaced\n"
    result = invoke(["-s", "x", "ls", "--", "-o"])
    assert (result.exit_code, result.stderr) == (1, "ls: -o: no such file or directory\n")
    # an option of the command named like one of ours stays the command's
    result = invoke(["-s", "x", "ls", "--help"])
    assert result.stdout.startswith("ls: List metadata nodes.")


def test_one_shot_exit_codes():
    assert invoke(["-s", "x", "cat", "/topics/nope"]).exit_code == 1
    result = invoke(["-s", "x", "ls", "-x"])
    assert (result.exit_code, result.stderr) == (2, "ls: unrecognized arguments: -x\n")
    result = invoke(["-s", "x", "blah"])
    assert result.exit_code == 2 and result.stderr.startswith("unknown command 'blah'")
    assert invoke(["-s", "x", "pwd"]).stdout == "/\n"


def test_one_shot_every_command_works():
    for words in (["cd", "/topics"], ["exit"], ["help"], ["man", "ls"], ["pwd"], ["summary"],
                  ["changes", "/topics/foo"], ["tree", "/features"], ["history"]):
        result = invoke(["-s", "x", *words])
        assert result.exit_code == 0, (words, result.stderr)
    assert invoke(["-s", "x", "history"]).stdout == "    0  history\n"


def test_output_json():
    result = invoke(["-s", "x", "-o", "json", "ls", "/brokers"])
    assert json.loads(result.stdout) == ["1", "2", "10"]
    result = invoke(["-s", "x", "--output", "json", "cat", "/topics/foo/0/data"])
    assert json.loads(result.stdout)["topicId"] == "fooId"
    assert invoke(["-s", "x", "-o", "yaml", "ls"]).exit_code == 2


def test_options_reach_the_session_factory():
    invoke(["-s", "d", "--until-offset", "42", "--show-secrets", "ls"])
    path, kwargs = support.CALLS[-1]
    assert path == "d"
    assert kwargs["until_offset"] == 42 and kwargs["show_secrets"] is True
    assert kwargs["until_time"] is None
    invoke(["-s", "d", "ls"])
    assert support.CALLS[-1][1]["show_secrets"] is False


@pytest.mark.parametrize("text,ms", [("2024-05-10T20:06:51.486Z", 1715371611486),
                                     ("2024-05-10T22:06:51.486+02:00", 1715371611486),
                                     ("1715371611486", 1715371611486),
                                     ("2024-05-10", 1715299200000)])
def test_until_time_is_converted_to_ms(text, ms):
    result = invoke(["-s", "d", "--until-time", text, "pwd"])
    assert result.exit_code == 0
    assert support.CALLS[-1][1]["until_time"] == ms


@pytest.mark.parametrize("args", [["--until-time", "yesterday"], ["--until-offset", "-1"],
                                  ["--until-offset", "x"], ["--bogus"]])
def test_bad_options_are_usage_errors(args):
    result = invoke(["-s", "d", *args, "ls"])
    assert result.exit_code == 2
    assert "Error:" in result.stderr and result.stdout == ""
    assert not support.CALLS


def test_a_source_is_required():
    result = invoke(["ls"])
    assert result.exit_code == 2
    assert "exactly one source is required: -s/--snapshot PATH" in result.stderr
    assert invoke([]).exit_code == 2


def test_help_and_man_need_no_source():
    result = invoke(["help"])
    assert result.exit_code == 0 and result.stdout.startswith("Welcome")
    assert invoke(["man", "cat"]).stdout.startswith("cat: Show the contents")
    assert not support.CALLS


@pytest.mark.parametrize("args", [["-s", "x", "-C", "h:1", "ls"],
                                  ["-s", "x", "-c", "client.properties", "ls"],
                                  ["-s", "x", "--timeout", "5", "ls"],
                                  ["-s", "x", "--cluster-id", "abc", "ls"]])
def test_one_source_and_live_options_only_with_c(args):
    result = invoke(args)
    assert result.exit_code == 2 and result.stdout == ""
    assert "exactly one source is allowed" in result.stderr or \
        "applies to a live quorum only (-C/--controllers)" in result.stderr
    assert not support.CALLS


def test_load_error():
    result = invoke(["-s", "missing", "ls"])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == "kafka-metadata-shell: missing: no such file or directory\n"


def test_os_error_while_loading():
    def opener(path, **kwargs):
        raise PermissionError(13, "Permission denied", path)
    result = CliRunner().invoke(cli.make_cli(open_session=opener), ["-s", "locked", "ls"])
    assert result.exit_code == 1
    assert result.stderr == "kafka-metadata-shell: locked: Permission denied\n"


def test_warnings_go_to_stderr():
    result = invoke(["-s", "warn", "pwd"])
    assert result.exit_code == 0 and result.stdout == "/\n"
    assert result.stderr == ("kafka-metadata-shell: warning: fake.log (byte 42, offset 7): "
                             "torn batch; batch skipped\n")


def test_interrupt_while_loading_exits_130():
    result = invoke(["-s", "interrupt", "ls"])
    assert result.exit_code == 130
    assert "Traceback" not in result.stderr and "Aborted" not in result.stderr


def test_version():
    result = invoke(["--version"])
    assert (result.exit_code, result.stdout) == (
        0, f"kafka-metadata-shell (metashell) {__version__}\n")


def test_help_shows_every_mode_and_completion():
    result = invoke(["--help"])
    assert result.exit_code == 0
    out = result.stdout
    assert out.startswith("Usage: kafka-metadata-shell [OPTIONS] [COMMAND [ARG...]]")
    for text in ("-s, --snapshot PATH", "-C, --controllers", "-c, --config", "--until-offset N",
                 "--until-time T", "-o, --output", "--show-secrets", "--no-color", "--version",
                 "-h, --help", "interactive shell", "one-shot", "script",
                 "_KAFKA_METADATA_SHELL_COMPLETE=bash_source", "zsh_source", "fish_source"):
        assert text in out, text
    assert invoke(["-h"]).stdout == out


# ------------------------------------------------------------------ script mode

def test_script_mode():
    script = "# a comment\n\ncd /topics\nls\n   \npwd\n"
    result = invoke(["-s", "x"], input=script)
    assert (result.exit_code, result.stdout, result.stderr) == (0, "bar\nfoo\n/topics\n", "")


def test_script_mode_failure_and_exit():
    result = invoke(["-s", "x"], input="ls /nope\npwd\n")
    assert (result.exit_code, result.stdout) == (1, "/\n")
    assert result.stderr == "ls: /nope: no such file or directory\n"
    result = invoke(["-s", "x"], input="pwd\nexit\npwd\n")
    assert (result.exit_code, result.stdout) == (0, "/\n")
    result = invoke(["-s", "x"], input="ls -x\nexit\npwd\n")
    assert result.exit_code == 1
    result = invoke(["-s", "x"], input="")
    assert (result.exit_code, result.stdout) == (0, "")


def test_script_mode_history_and_json():
    result = invoke(["-s", "x", "-o", "json"], input="pwd\n# skipped\nhistory\n")
    assert result.stdout == '"/"\n["pwd","history"]\n'


# ------------------------------------------------------------------ streams and terminals

class _Tty(io.StringIO):
    def isatty(self):
        return True


def run_direct(words, *, stdout=None, stdin=None, no_color=False, output="text", opener=None):
    stdout = stdout if stdout is not None else io.StringIO()
    stderr = io.StringIO()
    status = cli.run(opener or fake_open_session, source="x", until_offset=None,
                     until_time=None, output=output, show_secrets=False, no_color=no_color,
                     words=words, stdin=stdin or io.StringIO(), stdout=stdout, stderr=stderr)
    return status, stdout.getvalue(), stderr.getvalue()


def test_colour_and_columns_only_on_a_terminal(monkeypatch):
    monkeypatch.setattr(cli.shutil, "get_terminal_size", lambda: os.terminal_size((80, 24)))
    status, out, _ = run_direct(["ls", "/topics/foo"])
    assert out == "0\n1\nid\nname\n"
    status, out, _ = run_direct(["ls", "/topics/foo"], stdout=_Tty())
    assert out == "\x1b[1;34m0\x1b[0m  \x1b[1;34m1\x1b[0m  id  name\n"
    status, out, _ = run_direct(["ls", "/topics/foo"], stdout=_Tty(), no_color=True)
    assert out == "0  1  id  name\n"
    monkeypatch.setenv("NO_COLOR", "1")
    status, out, _ = run_direct(["ls", "/topics/foo"], stdout=_Tty())
    assert out == "0  1  id  name\n"


def test_progress_only_on_a_terminal_and_after_a_delay(monkeypatch):
    seen = []

    def opener(path, progress=None, **kwargs):
        seen.append(progress)
        return support.FakeSession()

    run_direct(["pwd"], opener=opener)
    assert seen[-1] is None                      # stderr is not a terminal

    stream = _Tty()
    progress = cli._Progress(stream)
    progress(1, 10)                              # within the delay: nothing shown
    assert progress.bar is None
    monkeypatch.setattr(cli, "PROGRESS_DELAY", 0)
    progress = cli._Progress(stream)
    progress(5, 10)
    assert progress.bar is not None
    progress(10, 10)
    progress.close()
    assert progress.bar is None


def test_main_without_standalone_returns_the_status(capsys):
    assert cli.main(["-s", "x", "pwd"], open_session=fake_open_session,
                    standalone_mode=False) == 0
    assert capsys.readouterr().out == "/\n"
    assert cli.main(["-s", "x", "cat", "/nope"], open_session=fake_open_session,
                    standalone_mode=False) == 1
    assert cli.main(["ls"], open_session=fake_open_session, standalone_mode=False) == 2
    assert "exactly one source" in capsys.readouterr().err
    assert cli.main(["-s", "x", "-C", "h:1"], open_session=fake_open_session,
                    standalone_mode=False) == 2


def test_click_shell_completion_of_commands():
    from click.shell_completion import ShellComplete
    command = cli.make_cli(open_session=fake_open_session)
    completer = ShellComplete(command, {}, "kafka-metadata-shell", "_KAFKA_METADATA_SHELL_COMPLETE")
    names = [c.value for c in completer.get_completions(["-s", "x"], "c")]
    assert names == ["cat", "cd", "changes"]
    assert [c.value for c in completer.get_completions(["-s", "x", "ls"], "")] == []
    options = [c.value for c in completer.get_completions([], "--u")]
    assert options == ["--until-offset", "--until-time"]


# ------------------------------------------------------------------ subprocesses

def fake(*args, **kwargs):
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("text", True)
    kwargs.setdefault("timeout", 60)
    return subprocess.run(FAKE_MAIN + list(args), cwd=REPO, **kwargs)


def test_subprocess_one_shot_and_status():
    p = fake("-s", "x", "ls", "-l", "/topics")
    assert p.returncode == 0 and p.stderr == ""
    assert p.stdout.splitlines()[:2] == ["T  SIZE  OFFSET  LAST CHANGE               NAME",
                                         "d     3      31  2024-05-10T20:06:51.517Z  bar"]
    p = fake("-s", "x", "cat", "/topics")
    assert (p.returncode, p.stdout, p.stderr) == (1, "", "cat: /topics: is a directory\n")
    p = fake("-s", "missing", "ls")
    assert p.returncode == 1 and "Traceback" not in p.stderr


def test_subprocess_script_mode():
    p = fake("-s", "x", input="cd /brokers\nls\nls /nope\n")
    assert (p.returncode, p.stdout) == (1, "1\n2\n10\n")
    assert p.stderr == "ls: /nope: no such file or directory\n"


def test_subprocess_broken_pipe_is_quiet():
    p = subprocess.Popen(FAKE_MAIN + ["-s", "big", "find", "/"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, cwd=REPO)
    assert p.stdout.readline() == b"/\n"
    p.stdout.close()
    assert p.wait(timeout=60) == 0
    assert p.stderr.read() == b""


def test_subprocess_sigint_exits_130_without_traceback():
    p = subprocess.Popen(FAKE_MAIN + ["-s", "x"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, cwd=REPO)
    p.stdin.write("pwd\n")
    p.stdin.flush()
    assert p.stdout.readline() == "/\n"          # loaded and reading commands
    p.send_signal(signal.SIGINT)
    assert p.wait(timeout=60) == 130
    assert "Traceback" not in p.stderr.read()
    p.stdin.close()
    p.stdout.close()
    p.stderr.close()
