"""The -C options of the command line and the live prompt, in-process
(the session opener is replaced; the quorum itself is in test_live_cli_e2e)."""

from __future__ import annotations

import io

import pytest
from click.testing import CliRunner
from prompt_toolkit.formatted_text import to_plain_text
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from tests.support.commands import FakeSession
from tests.support.live_session import ScriptedObserver, snapshot_event, status
from tests.support.records import broker

from metashell import __version__, cli
from metashell.commands import Context
from metashell.session.live import open_live_session
from metashell.live import Controller, LiveError
from metashell.repl import Repl


def invoke(args, opener=None, input=None):
    calls = []

    def open_live(config, **kwargs):
        calls.append((config, kwargs))
        return opener(config, **kwargs) if opener is not None else FakeSession()

    result = CliRunner().invoke(cli.make_cli(open_live=open_live), args, input=input)
    return result, calls


def test_controllers_and_options_make_the_live_config():
    result, calls = invoke(["-C", "1@ctl1:9093,2@[::1]:9094", "--timeout", "2.5",
                            "--cluster-id", "MkU3OEVBNTcwNTJENDM2Qk", "--until-offset", "7", "pwd"])
    assert (result.exit_code, result.stdout) == (0, "/\n")
    config, kwargs = calls[0]
    assert config.controllers == [Controller(1, "ctl1", 9093), Controller(2, "::1", 9094)]
    assert (config.timeout, config.cluster_id) == (2.5, "MkU3OEVBNTcwNTJENDM2Qk")
    assert config.security.protocol == "PLAINTEXT"
    assert kwargs["until_offset"] == 7


def test_bootstrap_controller_alias_and_default_timeout():
    result, calls = invoke(["--bootstrap-controller", "ctl1:9093,ctl2:9093", "pwd"])
    assert result.exit_code == 0
    assert calls[0][0].controllers == [Controller(None, "ctl1", 9093),
                                       Controller(None, "ctl2", 9093)]
    assert calls[0][0].timeout == 30.0


@pytest.mark.parametrize("args,message", [
    (["-C", "ctl1"], "-C: bad controller 'ctl1'"),
    (["-C", "1@ctl1:99999"], "the port must be a number"),
    (["-C", ""], "-C: no controller given"),
    (["-C", "h:1", "--timeout", "0"], "--timeout"),
    (["-C", "h:1", "-s", "dir"], "exactly one source is allowed"),
    (["-c", "client.properties", "ls"], "-c/--config applies to a live quorum only"),
    (["--cluster-id", "x", "-s", "dir", "ls"], "--cluster-id applies to a live quorum only"),
])
def test_usage_errors_exit_2(args, message):
    result, calls = invoke(args + ["pwd"])
    assert result.exit_code == 2 and result.stdout == ""
    assert message in result.stderr
    assert not calls


def test_a_malformed_config_file_names_its_line(tmp_path):
    props = tmp_path / "client.properties"
    props.write_text("security.protocol=SASL_SSL\nsasl.mechanism=GSSAPI\n")
    result, calls = invoke(["-C", "h:1", "-c", str(props), "pwd"])
    assert result.exit_code == 1 and not calls
    assert result.stderr.startswith(f"kafka-metadata-shell: {props}:2: sasl.mechanism: ")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_a_missing_config_file(tmp_path):
    result, _ = invoke(["-C", "h:1", "-c", str(tmp_path / "nope.properties"), "pwd"])
    assert result.exit_code == 1
    assert "nope.properties" in result.stderr and result.stderr.count("\n") == 1


def test_a_live_error_is_one_line_and_exit_1():
    def opener(config, **kwargs):
        raise LiveError("no controller answered within 1 s: 1@h:1 (connection refused)")
    result, _ = invoke(["-C", "1@h:1", "--timeout", "1", "ls"], opener)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == ("kafka-metadata-shell: no controller answered within 1 s: "
                             "1@h:1 (connection refused)\n")


def live_session(steps):
    return open_live_session(cli._live_config("1@127.0.0.1:9093", None, 2, None),
                             observer_factory=ScriptedObserver(steps))


def test_script_mode_runs_each_line_and_closes_the_session():
    session = live_session([snapshot_event(5, [broker(1)]), status("following", 5, 5)])
    result, _ = invoke(["-C", "1@127.0.0.1:9093"], lambda config, **kw: session,
                       input="ls /brokers\ncat /metadataQuorum/live/state\n")
    assert (result.exit_code, result.stdout) == (0, "1\nfollowing\n")
    assert session.observer.closed.is_set()


def test_the_prompt_shows_when_the_image_does_not_follow():
    import threading
    gate = threading.Event()
    session = live_session([snapshot_event(5, [broker(1)]), status("following", 5, 5), gate,
                            status("lost", 5, 5, "connection refused")])
    ctx = Context.for_session(session, out=io.StringIO(), err=io.StringIO())
    try:
        with create_pipe_input() as pipe:
            shell = Repl(ctx, input=pipe, output=DummyOutput(), history=InMemoryHistory())
            assert to_plain_text(shell.message()) == "[kafka-metadata-shell /]> "
            gate.set()
            session.observer.done.wait(5)
            assert to_plain_text(shell.message()) == "[kafka-metadata-shell / (quorum lost)]> "
            ctx.color = True
            assert "(quorum lost)" in to_plain_text(shell.message())
            ctx.color = False
            assert shell.session.refresh_interval == 0.5
            pipe.send_text("ls /brokers\n\x04")
            assert shell.run() == 0
    finally:
        session.close()
    assert ctx.out.getvalue().splitlines() == [
        f"metashell {__version__} \u2014 controllers 1@127.0.0.1:9093; type help", "1"]
