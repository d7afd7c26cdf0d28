"""The REPL in-process: prompt-toolkit driven by a pipe input and a dummy
output (the pgcli/litecli way)."""

from __future__ import annotations

import threading
import time

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import to_plain_text
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from tests.support.commands import make_ctx

from metashell import __version__, repl
from metashell.commands import COMMANDS
from metashell.repl import Repl, ShellCompleter, history_path, open_history

UP = "\x1b[A"
CTRL_C = "\x03"
CTRL_D = "\x04"


@pytest.fixture(autouse=True)
def _history_env(monkeypatch, tmp_path):
    # never touch the real home
    monkeypatch.setenv("METASHELL_HISTORY_FILE", str(tmp_path / "history"))


def run_repl(ctx, text, history=None):
    """Feed ``text`` at once and run until it is used up; (status, out, err)."""
    with create_pipe_input() as pipe:
        pipe.send_text(text)
        shell = Repl(ctx, input=pipe, output=DummyOutput(),
                     history=history if history is not None else InMemoryHistory())
        status = shell.run()
    return status, ctx.out.getvalue(), ctx.err.getvalue()


def run_repl_slowly(ctx, chunks, history=None):
    """Feed ``chunks`` one at a time with pauses, so completion (which runs
    asynchronously after Tab) has happened before the next key arrives."""
    result = []
    with create_pipe_input() as pipe:
        shell = Repl(ctx, input=pipe, output=DummyOutput(),
                     history=history if history is not None else InMemoryHistory())
        thread = threading.Thread(target=lambda: result.append(shell.run()), daemon=True)
        thread.start()
        for chunk in chunks:
            pipe.send_text(chunk)
            time.sleep(0.15)     # the behaviour: keys typed at a person's pace, not all at once
        thread.join(10)
    assert not thread.is_alive(), "the REPL did not stop"
    return result[0], ctx.out.getvalue(), ctx.err.getvalue()


def body(out):
    """Output without the banner line."""
    first, _, rest = out.partition("\n")
    assert first.startswith("metashell ")
    return rest


# ------------------------------------------------------------------ the loop

def test_banner_and_ctrl_d_exits_0():
    ctx = make_ctx()
    status, out, err = run_repl(ctx, CTRL_D)
    assert status == 0 and err == ""
    assert out == f"metashell {__version__} \u2014 fake.checkpoint; type help\n"


def test_cd_ls_pwd_sequence():
    ctx = make_ctx()
    status, out, err = run_repl(ctx, "cd /topics\nls\ncd foo\npwd\nls 0\ncd ..\npwd\n" + CTRL_D)
    assert status == 0 and err == ""
    assert body(out) == "bar  foo\n/topics/foo\ndata\n/topics\n"
    assert ctx.cwd == "/topics"


def test_ls_uses_the_terminal_width():
    ctx = make_ctx()
    _, out, _ = run_repl(ctx, "ls /\n" + CTRL_D)         # DummyOutput is 80 columns wide
    assert body(out) == "brokers  configs  empty  features  local  odd  quota  topics\n"
    assert ctx.width == 80


def test_errors_do_not_stop_the_shell():
    ctx = make_ctx()
    status, out, err = run_repl(ctx, "ls /nope\nblah\nls -x\npwd\n" + CTRL_D)
    assert status == 0
    assert body(out) == "/\n"
    assert err.splitlines()[0] == "ls: /nope: no such file or directory"
    assert err.splitlines()[1].startswith("unknown command 'blah'")
    assert err.splitlines()[2] == "ls: unrecognized arguments: -x"


def test_exit_command_stops():
    ctx = make_ctx()
    status, out, _ = run_repl(ctx, "pwd\nexit\npwd\n")
    assert status == 0 and body(out) == "/\n"


def test_ctrl_c_cancels_the_line():
    ctx = make_ctx()
    status, out, err = run_repl(ctx, "ls /nope" + CTRL_C + "pwd\n" + CTRL_D)
    assert status == 0 and err == ""
    assert body(out) == "/\n"


def test_ctrl_c_interrupts_a_running_command(monkeypatch):
    ctx = make_ctx()

    def interrupted(ctx, args):
        raise KeyboardInterrupt
    monkeypatch.setattr(COMMANDS["find"], "run", interrupted)
    status, out, err = run_repl(ctx, "find /\npwd\n" + CTRL_D)
    assert status == 0
    assert err == "interrupted\n" and body(out) == "/\n"


def test_json_output_in_the_shell():
    ctx = make_ctx(output="json")
    _, out, _ = run_repl(ctx, "ls /brokers\n" + CTRL_D)
    assert body(out) == '["1","2","10"]\n'


# ------------------------------------------------------------------ prompt

def test_prompt_shows_the_working_directory():
    ctx = make_ctx()
    shell = Repl(ctx, input=None, output=DummyOutput(), history=InMemoryHistory())
    assert shell.message() == "[kafka-metadata-shell /]> "
    ctx.cwd = "/topics/foo"
    assert shell.message() == "[kafka-metadata-shell /topics/foo]> "
    ctx.color = True
    assert to_plain_text(shell.message()) == "[kafka-metadata-shell /topics/foo]> "
    assert ("bold ansiblue", "/topics/foo") in list(shell.message())


# ------------------------------------------------------------------ completion

def completions(ctx, text):
    return [(c.text, c.start_position, c.display_text)
            for c in ShellCompleter(ctx).get_completions(Document(text), CompleteEvent())]


def test_completer_commands():
    ctx = make_ctx()
    assert completions(ctx, "ca") == [("cat ", -2, "cat")]
    assert [c[0] for c in completions(ctx, "c")] == ["cat ", "cd ", "changes "]
    assert completions(ctx, "zz") == []


def test_completer_paths_and_options():
    ctx = make_ctx()
    assert completions(ctx, "cd /to") == [("/topics/", -3, "topics/")]
    assert completions(ctx, "cat /topics/foo/n") == [("/topics/foo/name ", -13, "name")]
    assert completions(ctx, "ls --lo") == [("--long ", -4, "--long")]
    ctx.cwd = "/topics"
    assert completions(ctx, "cat f") == [("foo/", -1, "foo/")]
    assert completions(ctx, "cd ..") == [("../", -2, "../")]
    # cursor in the middle: only the text before it counts
    doc = Document("cat /top and more", cursor_position=len("cat /top"))
    assert [c.text for c in ShellCompleter(ctx).get_completions(doc, CompleteEvent())] == [
        "/topics/"]


def test_tab_completes_in_the_running_shell():
    ctx = make_ctx()
    status, out, err = run_repl_slowly(ctx, ["cd /top", "\t", "\n", "pw", "\t", "\n", CTRL_D])
    assert (status, err) == (0, "")
    assert body(out) == "/topics\n"
    assert ctx.cwd == "/topics"


# ------------------------------------------------------------------ history

def test_up_arrow_recalls_history():
    ctx = make_ctx()
    history = InMemoryHistory()
    status, out, _ = run_repl_slowly(ctx, ["cd /brokers\n", "pwd\n", "cd /\n",
                                           UP + UP, "\n",              # pwd
                                           UP + UP + UP + UP, "\n",    # cd /brokers
                                           CTRL_D], history=history)
    assert status == 0
    assert body(out) == "/brokers\n/\n"
    assert ctx.cwd == "/brokers"
    assert list(history.get_strings()) == ["cd /brokers", "pwd", "cd /", "pwd", "cd /brokers"]


def test_history_command_counts_the_running_line():
    ctx = make_ctx()
    _, out, _ = run_repl(ctx, "pwd\nls /empty\nhistory\nhistory 1\n" + CTRL_D)
    assert body(out) == ("/\n"
                         "    0  pwd\n    1  ls /empty\n    2  history\n"
                         "    3  history 1\n")


def test_history_persists_across_runs(tmp_path):
    path = tmp_path / "history"
    ctx = make_ctx()
    run_repl(ctx, "cd /topics\npwd\n" + CTRL_D, history=open_history(str(path)))
    assert "+cd /topics" in path.read_text()

    ctx = make_ctx()                                  # a new shell, same file (via the env)
    shell_history = open_history()
    assert isinstance(shell_history, FileHistory)
    _, out, _ = run_repl_slowly(ctx, ["history\n", UP + UP + UP, "\n", CTRL_D],
                                history=shell_history)
    assert body(out) == ("    0  cd /topics\n    1  pwd\n    2  history\n")
    assert ctx.cwd == "/topics"                      # the last run's `cd /topics`, recalled
    assert path.read_text().count("+cd /topics") == 2


def test_default_history_file_comes_from_the_environment(tmp_path, monkeypatch):
    assert history_path() == str(tmp_path / "history")
    shell = Repl(make_ctx(), input=None, output=DummyOutput())
    assert isinstance(shell.history, FileHistory)
    assert shell.history.filename == str(tmp_path / "history")


def test_history_file_defaults_to_the_user_data_dir(monkeypatch, tmp_path):
    import platformdirs
    monkeypatch.delenv("METASHELL_HISTORY_FILE")
    monkeypatch.setattr(platformdirs, "user_data_dir", lambda app: str(tmp_path / "data" / app))
    assert history_path() == str(tmp_path / "data" / "metashell" / "history")
    history = open_history()
    assert isinstance(history, FileHistory)
    assert (tmp_path / "data" / "metashell" / "history").exists()


def test_unwritable_history_falls_back_to_memory(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    warnings = []
    history = open_history(str(blocker / "history"), warn=warnings.append)
    assert isinstance(history, InMemoryHistory)
    assert warnings and warnings[0].startswith("history will not be saved: ")


def test_module_constants():
    assert repl.HISTORY_ENV == "METASHELL_HISTORY_FILE"
