"""The ``kafka-metadata-shell`` command line (click).

Two sources: ``-s PATH`` (files, ``metashell.session.files``) or ``-C LIST`` (a
live controller quorum, ``metashell.session.live``: the shell catches up
with the quorum's committed log, then runs the mode while the image keeps
following in the background).

Three modes, one dispatcher (``metashell.commands.run_words``/``run_line``):

* one-shot: ``kafka-metadata-shell -s PATH ls -l /topics``: the words after
  the options are the command, passed through untouched (even ``-l``); a
  one-shot ``log`` of files opens them planned, not replayed
  (``metashell.session.planned``);
* script: no command and stdin is not a terminal: each line of stdin is a
  command (blank lines and ``#`` comments skipped; ``exit`` stops);
* interactive: no command and stdin is a terminal: the prompt-toolkit REPL.

Exit status: 0 success; 1 a command failed or the input could not be read;
2 usage error; 130 interrupted. A closed stdout (``| head``) ends the run
quietly with status 0. Data goes to stdout, diagnostics, warnings and the
loading progress bar to stderr.

Tests pass their own session factories: ``make_cli(open_session=...,
open_live=...)`` or ``main(argv, open_session=..., standalone_mode=False)``;
the real ones (``metashell.session.files.open_session``,
``metashell.session.live.open_live_session``) are imported only when needed.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import time
from typing import Any, Callable

import click

from metashell import __version__
from metashell.commands.context import WARNING_PREFIX
from metashell.errors import MetashellError
from metashell.render import collapse_repeats, parse_time

PROG = "kafka-metadata-shell"
DEFAULT_TIMEOUT = 30.0   # seconds -C keeps trying before it gives up
PROGRESS_DELAY = 0.5   # seconds of loading before the progress bar appears

HELP = """\
Browse Apache Kafka KRaft metadata (a snapshot, a log segment, a bootstrap
checkpoint or a whole metadata log dir, or a live controller quorum that it
follows as a Raft observer) as a virtual directory tree: in an interactive
shell, one command at a time, or as a script of commands on stdin.
"""

EPILOG = """\
\b
Examples:
  interactive shell (stdin is a terminal):
    kafka-metadata-shell -s /var/lib/kafka/meta
  one-shot (quote globs so your shell leaves them alone):
    kafka-metadata-shell -s /var/lib/kafka/meta ls -l /topics
    kafka-metadata-shell -s 00000000000000028869-0000000189.checkpoint cat '/brokers/*/registration'
    kafka-metadata-shell -s meta -o json cat '/topics/*/0/data' | jq .leader
    kafka-metadata-shell -s meta --until-time 2024-05-10T20:00:00Z summary
    kafka-metadata-shell -s meta --until-offset 1234 changes /topics/orders/0
    kafka-metadata-shell -s meta diff --from-time 2024-05-10T19:00:00Z /topics
    kafka-metadata-shell -s restored-meta diff --against meta --stat
    kafka-metadata-shell -s /backups/meta --strict -o json summary   # status 1 on any problem
  script (one command per line on stdin; # comments allowed):
    printf 'cd /brokers\\nls -l\\nfind . -name isFenced\\n' | kafka-metadata-shell -s meta
  live quorum (read-only observer; secrets only in the -c file):
    kafka-metadata-shell -C 1@ctl1:9093,2@ctl2:9093,3@ctl3:9093 summary
    kafka-metadata-shell -C ctl1:9093 -c client.properties -o json cat /metadataQuorum/live/voters/1
    kafka-metadata-shell -C ctl1:9093 -o json watch /brokers --count 1

\b
Commands: {commands}
(run 'kafka-metadata-shell help' or 'kafka-metadata-shell man COMMAND' for details).

\b
Exit status: 0 success, 1 a command failed or the input could not be read
(or, with --strict, the load or a command had a problem), 2 usage error,
130 interrupted.

\b
Shell completion of options and commands:
  bash  (~/.bashrc):   eval "$(_KAFKA_METADATA_SHELL_COMPLETE=bash_source kafka-metadata-shell)"
  zsh   (~/.zshrc):    eval "$(_KAFKA_METADATA_SHELL_COMPLETE=zsh_source kafka-metadata-shell)"
  fish  (config.fish): _KAFKA_METADATA_SHELL_COMPLETE=fish_source kafka-metadata-shell | source
"""


def _default_open_session(path, **kwargs):
    from metashell.session.files import open_session
    return open_session(path, **kwargs)


def _default_open_live(config, **kwargs):
    from metashell.session.live import open_live_session
    return open_live_session(config, **kwargs)


#: commands that need no loaded metadata: `kafka-metadata-shell help`, `... man ls`
SOURCELESS = ("help", "man")


class _EmptySession:
    source = ""
    warnings: list = []

    def __init__(self):
        from metashell.fs.node import DictDir
        self.root = DictDir("")


def _default_open_planned(path, **kwargs):
    from metashell.session.planned import open_planned_session
    return open_planned_session(path, **kwargs)


def _empty_session(path, **kwargs):
    return _EmptySession()


def _until_time(ctx, param, value):
    if value is None:
        return None
    try:
        return parse_time(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


def _complete_command(ctx, param, incomplete):
    from click.shell_completion import CompletionItem

    from metashell.commands import COMMANDS
    if ctx.params.get("command"):
        return []
    return [CompletionItem(name, help=c.description)
            for name, c in COMMANDS.items() if name.startswith(incomplete)]


class _Progress:
    """The ``progress`` callback: a rich progress bar on stderr, shown only
    when stderr is a terminal and loading takes more than PROGRESS_DELAY.
    It counts bytes read (files) or, with ``offsets``, log offsets applied of
    the quorum's high watermark (catching up with a live quorum)."""

    def __init__(self, stream, offsets: bool = False):
        self.stream = stream
        self.offsets = offsets
        self.started = time.monotonic()
        self.bar = None
        self.task = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None and not self._start():
            return
        label = "catching up" if self.offsets else "loading"
        self.bar.update(self.task, completed=done, total=total or None, description=label)

    def connecting(self, address: str) -> None:
        """A live session is connecting to ``address`` (no answer yet)."""
        if self.bar is not None or self._start():
            self.bar.update(self.task, description=f"connecting to {address}")

    def _start(self) -> bool:
        """Show the bar once PROGRESS_DELAY has passed; whether it shows."""
        if time.monotonic() - self.started < PROGRESS_DELAY:
            return False
        from rich.console import Console
        from rich.progress import (BarColumn, DownloadColumn, MofNCompleteColumn, Progress,
                                   TextColumn, TimeRemainingColumn)
        count = MofNCompleteColumn() if self.offsets else DownloadColumn()
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), count,
                            TimeRemainingColumn(), console=Console(file=self.stream), transient=True)
        self.bar.start()
        self.task = self.bar.add_task("catching up" if self.offsets else "loading", total=None)
        return True

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _silence_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so the final flush at
    exit does not complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _os_error_text(e: OSError) -> str:
    if e.filename is not None and e.strerror:
        return f"{e.filename}: {e.strerror}"
    return e.strerror or str(e)


def run(open_session: Callable[..., Any], *, source, until_offset, until_time, output,
        show_secrets, no_color, words, stdin, stdout, stderr, live: bool = False,
        strict: bool = False) -> int:
    """Open ``source`` with ``open_session`` (a path, or with ``live`` a
    ``LiveConfig``), run the mode, close the session; returns the exit
    status."""
    progress = _Progress(stderr, offsets=live) if _isatty(stderr) else None
    extra = {}
    if live and words:
        # one-shot: what happens to the quorum after catch-up is said on stderr
        extra["notify"] = lambda text: _note(stderr, text)
    try:
        session = open_session(source, until_offset=until_offset, until_time=until_time,
                               show_secrets=show_secrets, progress=progress, **extra)
    finally:
        if progress is not None:
            progress.close()
    try:
        status = _run_mode(session, output=output, no_color=no_color, words=words,
                           stdin=stdin, stdout=stdout, stderr=stderr, strict=strict)
    finally:
        close = getattr(session, "close", None)
        if close is not None:
            close()
    error = getattr(session, "error", None)   # a live session that stopped following
    if error is not None:
        stderr.write(f"{PROG}: {error}\n")
        status = status or 1
    return status


def _note(stderr, text: str) -> None:
    try:
        stderr.write(f"{PROG}: {text}\n")
        stderr.flush()
    except (OSError, ValueError):
        pass


def _run_mode(session, *, output, no_color, words, stdin, stdout, stderr,
              strict: bool = False) -> int:
    """Print the load's warnings, run the mode; with ``strict``, any problem
    (of the load, found since, or raised by a command) makes the status 1
    once the output is out."""
    from metashell.commands import Context

    for warning in collapse_repeats(getattr(session, "warnings", None) or []):
        stderr.write(f"{WARNING_PREFIX}{warning}\n")
    stderr.flush()

    tty_out = _isatty(stdout)
    ctx = Context.for_session(
        session, output=output, out=stdout, err=stderr,
        width=shutil.get_terminal_size().columns if tty_out else None,
        color=tty_out and not no_color and not os.environ.get("NO_COLOR"))
    status = _dispatch(ctx, words, stdin, stdout)
    if strict and status == 0 and ctx.strict_failure():
        stdout.flush()
        stderr.write(f"{PROG}: --strict: the load or a command had problems (warnings above)\n")
        status = 1
    return status


def _dispatch(ctx, words, stdin, stdout) -> int:
    """One-shot, script or interactive mode: the status of the run."""
    from metashell.commands import run_line, run_words

    if words:                                   # one-shot
        ctx.history = lambda: [shlex.join(words)]
        return run_words(ctx, list(words))

    if not _isatty(stdin):                      # script
        lines: list[str] = []
        ctx.history = lambda: lines
        failed = False
        for line in stdin:
            line = line.rstrip("\r\n")
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            lines.append(stripped)
            if run_line(ctx, line) != 0:
                failed = True
            stdout.flush()          # a reader on a pipe sees each answer as it comes
            if ctx.exit_requested:
                break
        return 1 if failed else 0

    from metashell.repl import Repl             # interactive
    ctx.interactive = True
    return Repl(ctx).run()


def _check_sources(snapshot, controllers, config, timeout, cluster_id, command) -> None:
    """Exactly one of -s and -C (none only for help/man); the live-only
    options only with -C. Raises click.UsageError (status 2)."""
    if snapshot and controllers is not None:
        raise click.UsageError("exactly one source is allowed: -s/--snapshot PATH or "
                               "-C/--controllers LIST, not both")
    if controllers is None:
        for name, value in (("-c/--config", config), ("--timeout", timeout),
                            ("--cluster-id", cluster_id)):
            if value is not None:
                raise click.UsageError(f"{name} applies to a live quorum only (-C/--controllers)")
        if not snapshot and not (command and command[0] in SOURCELESS):
            raise click.UsageError(
                "exactly one source is required: -s/--snapshot PATH "
                "(a snapshot, a log segment or a metadata log dir) or -C/--controllers LIST "
                "(a live controller quorum)")


def _live_config(controllers: str, config, timeout, cluster_id, persistent: bool = True,
                 started: float | None = None):
    """The ``LiveConfig`` of the -C options. A bad controller list is a
    usage error; a bad -c file a MetashellError naming the line.
    ``persistent``: keep following however long the quorum is gone (not
    for a one-shot command, which gives up after the timeout); ``started``:
    when the command started, which the timeout counts from."""
    from metashell.errors import UsageError
    from metashell.live import LiveConfig, SecurityConfig, load_client_config, \
        parse_controllers
    try:
        quorum = parse_controllers(controllers)
    except UsageError as e:
        raise click.UsageError(str(e)) from None
    security = load_client_config(config) if config is not None else SecurityConfig()
    return LiveConfig(quorum, security, timeout=DEFAULT_TIMEOUT if timeout is None else timeout,
                      cluster_id=cluster_id, persistent=persistent, started=started)


def _command_problem(words) -> str | None:
    from metashell.commands import check_words
    return check_words(list(words))


class _ShellCommand(click.Command):
    """The program's click command: its help lists the shell's commands from
    their registry when it is printed (importing them costs every other run
    its time)."""

    def format_epilog(self, ctx, formatter) -> None:
        from metashell.commands import COMMANDS
        saved = self.epilog
        self.epilog = saved.replace("{commands}", " ".join(COMMANDS))
        try:
            super().format_epilog(ctx, formatter)
        finally:
            self.epilog = saved


def make_cli(open_session: "Callable[..., Any] | None" = None,
             open_live: "Callable[..., Any] | None" = None) -> click.Command:
    """The click command. ``open_session`` replaces
    ``metashell.session.files.open_session`` and ``open_live``
    ``metashell.session.live.open_live_session`` (tests)."""
    opener = open_session or _default_open_session
    live_opener = open_live or _default_open_live

    @click.command(
        cls=_ShellCommand, name=PROG, help=HELP, epilog=EPILOG, options_metavar="[OPTIONS]",
        context_settings={"help_option_names": ["-h", "--help"],
                          "allow_interspersed_args": False,
                          "max_content_width": 100})
    @click.option("-s", "--snapshot", metavar="PATH", type=click.Path(),
                  help="Load a *.checkpoint snapshot, a *.log segment, a bootstrap.checkpoint, "
                       "or a metadata log dir (newest snapshot + the segments after it).")
    @click.option("-C", "--controllers", "--bootstrap-controller", "controllers", metavar="LIST",
                  help="Follow a live controller quorum as a read-only observer: "
                       "id@host:port,... (controller.quorum.voters) or host:port,... "
                       "(controller.quorum.bootstrap.servers); IPv6 as [::1]:9093.")
    @click.option("-c", "--config", metavar="FILE", type=click.Path(dir_okay=False),
                  help="Client properties for -C (security.protocol, ssl.*, sasl.*); "
                       "secrets come only from this file.")
    @click.option("--timeout", metavar="SECONDS", type=click.FloatRange(min=0, min_open=True),
                  help=f"With -C: how long to keep trying to reach the quorum before giving "
                       f"up (default {DEFAULT_TIMEOUT:g}).")
    @click.option("--cluster-id", metavar="ID",
                  help="With -C: the expected cluster id (a controller of another cluster "
                       "refuses the fetch).")
    @click.option("--until-offset", metavar="N", type=click.IntRange(min=0),
                  help="Replay only records with offset <= N.")
    @click.option("--until-time", metavar="T", callback=_until_time,
                  help="Replay only batches appended at or before T "
                       "(ISO-8601, e.g. 2024-05-10T20:06:51Z, or epoch ms).")
    @click.option("-o", "--output", type=click.Choice(["text", "json"]), default="text",
                  show_default=True, help="Output format; json is stable, for scripts and jq.")
    @click.option("--show-secrets", is_flag=True,
                  help="Print SCRAM salts/keys, token HMACs and sensitive config values "
                       "instead of [redacted].")
    @click.option("--strict", is_flag=True,
                  help="Exit with status 1 (after the output) if loading or a command had a "
                       "problem: a damaged batch skipped, a record not applied, an incomplete "
                       "or unusable snapshot, a fallback, time travel out of range. A torn last "
                       "batch of the newest segment is not one.")
    @click.option("--no-color", is_flag=True,
                  help="Plain output (also when NO_COLOR is set or stdout is not a terminal).")
    @click.version_option(__version__, "--version", prog_name=PROG,
                          message="%(prog)s (metashell) %(version)s")
    @click.argument("command", nargs=-1, type=click.UNPROCESSED,
                    metavar="[COMMAND [ARG...]]", shell_complete=_complete_command)
    def cli(snapshot, controllers, config, timeout, cluster_id, until_offset, until_time,
            output, show_secrets, strict, no_color, command):
        click_ctx = click.get_current_context()
        started = time.monotonic()
        _check_sources(snapshot, controllers, config, timeout, cluster_id, command)
        live = controllers is not None
        if not snapshot and not live:
            opener_here, source = _empty_session, None
        elif live:
            opener_here, source = live_opener, None
        else:
            opener_here, source = opener, snapshot
            if (command and command[0] == "log" and opener is _default_open_session
                    and until_offset is None and until_time is None and not strict):
                # log prints the files as written: planned, loaded only if asked (--entity)
                opener_here = _default_open_planned
        stdout, stderr = sys.stdout, sys.stderr
        if hasattr(stdout, "reconfigure"):
            try:
                stdout.reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass
        try:
            if live:
                source = _live_config(controllers, config, timeout, cluster_id, not command, started)
                problem = _command_problem(command)
                if problem is not None:     # refused before connecting, as it would be after
                    stderr.write(problem + "\n")
                    click_ctx.exit(2)
            status = run(opener_here, source=source, until_offset=until_offset,
                         until_time=until_time, output=output, show_secrets=show_secrets,
                         no_color=no_color, words=list(command), stdin=sys.stdin,
                         stdout=stdout, stderr=stderr, live=live, strict=strict)
            stdout.flush()
        except KeyboardInterrupt:
            stderr.write("\n")
            status = 130
        except BrokenPipeError:
            _silence_stdout()
            status = 0
        except MetashellError as e:
            stderr.write(f"{PROG}: {e}\n")
            status = 1
        except OSError as e:
            stderr.write(f"{PROG}: {_os_error_text(e)}\n")
            status = 1
        click_ctx.exit(status)

    return cli


def main(argv: "list[str] | None" = None, *, open_session: "Callable[..., Any] | None" = None,
         open_live: "Callable[..., Any] | None" = None, standalone_mode: bool = True) -> int:
    """Entry point. With ``standalone_mode`` (the default) click exits the
    process; without, the exit status is returned (usage errors are printed
    and give 2), which is what tests use."""
    cli = make_cli(open_session, open_live)
    if standalone_mode:
        return cli.main(args=argv, prog_name=PROG, standalone_mode=True)
    try:
        status = cli.main(args=argv, prog_name=PROG, standalone_mode=False)
    except click.ClickException as e:
        e.show()
        return e.exit_code
    except click.exceptions.Abort:
        return 130
    return status if isinstance(status, int) else 0


if __name__ == "__main__":
    main()
