"""The ``kafka-metadata-shell`` command line (click).

Three modes, one dispatcher (``metashell.commands.run_words``/``run_line``):

* one-shot: ``kafka-metadata-shell -s PATH ls -l /topics``: the words after
  the options are the command, passed through untouched (even ``-l``);
* script: no command and stdin is not a terminal: each line of stdin is a
  command (blank lines and ``#`` comments skipped; ``exit`` stops);
* interactive: no command and stdin is a terminal: the prompt-toolkit REPL.

Exit status: 0 success; 1 a command failed or the input could not be read;
2 usage error; 130 interrupted. A closed stdout (``| head``) ends the run
quietly with status 0. Data goes to stdout, diagnostics, warnings and the
loading progress bar to stderr.

Tests pass their own session factory: ``make_cli(open_session=...)`` or
``main(argv, open_session=..., standalone_mode=False)``; the real one
(``metashell.session.open_session``) is imported only when needed.
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
from metashell.render import parse_time

PROG = "kafka-metadata-shell"
LIVE_NOT_SUPPORTED = f"{PROG}: live controller mode (-C/--controllers) is not supported yet"
PROGRESS_DELAY = 0.5   # seconds of loading before the progress bar appears

HELP = """\
Browse Apache Kafka KRaft metadata (a snapshot, a log segment, a bootstrap
checkpoint or a whole metadata log dir) as a virtual directory tree: in an
interactive shell, one command at a time, or as a script of commands on
stdin.
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
  script (one command per line on stdin; # comments allowed):
    printf 'cd /brokers\\nls -l\\nfind . -name isFenced\\n' | kafka-metadata-shell -s meta

\b
Commands: cat cd changes diff exit find help history ls man pwd summary tree
(run 'kafka-metadata-shell help' or 'kafka-metadata-shell man COMMAND' for details).

\b
Exit status: 0 success, 1 a command failed or the input could not be read,
2 usage error, 130 interrupted.

\b
Shell completion of options and commands:
  bash  (~/.bashrc):   eval "$(_KAFKA_METADATA_SHELL_COMPLETE=bash_source kafka-metadata-shell)"
  zsh   (~/.zshrc):    eval "$(_KAFKA_METADATA_SHELL_COMPLETE=zsh_source kafka-metadata-shell)"
  fish  (config.fish): _KAFKA_METADATA_SHELL_COMPLETE=fish_source kafka-metadata-shell | source
"""


def _default_open_session(path, **kwargs):
    from metashell.session import open_session
    return open_session(path, **kwargs)


#: commands that need no loaded metadata: `kafka-metadata-shell help`, `... man ls`
SOURCELESS = ("help", "man")


class _EmptySession:
    source = ""
    warnings: list = []

    def __init__(self):
        from metashell.fs.node import DictDir
        self.root = DictDir("")


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
    when stderr is a terminal and loading takes more than PROGRESS_DELAY."""

    def __init__(self, stream):
        self.stream = stream
        self.started = time.monotonic()
        self.bar = None
        self.task = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            if time.monotonic() - self.started < PROGRESS_DELAY:
                return
            from rich.console import Console
            from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn,
                                       TimeRemainingColumn)
            self.bar = Progress(TextColumn("loading"), BarColumn(), DownloadColumn(),
                                TimeRemainingColumn(),
                                console=Console(file=self.stream), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("loading", total=total or None)
        self.bar.update(self.task, completed=done, total=total or None)

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


def run(open_session: Callable[..., Any], *, snapshot, until_offset, until_time, output,
        show_secrets, no_color, words, stdin, stdout, stderr) -> int:
    """Load the source and run the mode; returns the exit status."""
    from metashell.commands import Context, run_line, run_words

    progress = _Progress(stderr) if _isatty(stderr) else None
    try:
        session = open_session(snapshot, until_offset=until_offset, until_time=until_time,
                               show_secrets=show_secrets, progress=progress)
    finally:
        if progress is not None:
            progress.close()
    for warning in getattr(session, "warnings", None) or []:
        stderr.write(f"{WARNING_PREFIX}{warning}\n")
    stderr.flush()

    tty_out = _isatty(stdout)
    ctx = Context.for_session(
        session, output=output, out=stdout, err=stderr,
        width=shutil.get_terminal_size().columns if tty_out else None,
        color=tty_out and not no_color and not os.environ.get("NO_COLOR"))

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


def make_cli(open_session: "Callable[..., Any] | None" = None) -> click.Command:
    """The click command. ``open_session`` replaces
    ``metashell.session.open_session`` (tests)."""
    opener = open_session or _default_open_session

    @click.command(
        name=PROG, help=HELP, epilog=EPILOG, options_metavar="[OPTIONS]",
        context_settings={"help_option_names": ["-h", "--help"],
                          "allow_interspersed_args": False,
                          "max_content_width": 100})
    @click.option("-s", "--snapshot", metavar="PATH", type=click.Path(),
                  help="Load a *.checkpoint snapshot, a *.log segment, a bootstrap.checkpoint, "
                       "or a metadata log dir (newest snapshot + the segments after it).")
    @click.option("-C", "--controllers", metavar="LIST",
                  help="Follow a live controller quorum (id@host:port,...). Not supported yet.")
    @click.option("-c", "--config", metavar="FILE",
                  help="Client properties for -C (security.protocol, ssl.*, sasl.*). "
                       "Not supported yet.")
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
    @click.option("--no-color", is_flag=True,
                  help="Plain output (also when NO_COLOR is set or stdout is not a terminal).")
    @click.version_option(__version__, "--version", prog_name=PROG,
                          message="%(prog)s (metashell) %(version)s")
    @click.argument("command", nargs=-1, type=click.UNPROCESSED,
                    metavar="[COMMAND [ARG...]]", shell_complete=_complete_command)
    def cli(snapshot, controllers, config, until_offset, until_time, output, show_secrets,
            no_color, command):
        click_ctx = click.get_current_context()
        if controllers is not None or config is not None:
            click.echo(LIVE_NOT_SUPPORTED, err=True)
            click_ctx.exit(2)
        if not snapshot and command and command[0] in SOURCELESS:
            opener_here = _empty_session
        elif not snapshot:
            raise click.UsageError(
                "exactly one source is required: -s/--snapshot PATH "
                "(a snapshot, a log segment or a metadata log dir)")
        else:
            opener_here = opener
        stdout, stderr = sys.stdout, sys.stderr
        if hasattr(stdout, "reconfigure"):
            try:
                stdout.reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass
        try:
            status = run(opener_here, snapshot=snapshot, until_offset=until_offset,
                         until_time=until_time, output=output, show_secrets=show_secrets,
                         no_color=no_color, words=list(command), stdin=sys.stdin,
                         stdout=stdout, stderr=stderr)
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
         standalone_mode: bool = True) -> int:
    """Entry point. With ``standalone_mode`` (the default) click exits the
    process; without, the exit status is returned (usage errors are printed
    and give 2), which is what tests use."""
    cli = make_cli(open_session)
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
