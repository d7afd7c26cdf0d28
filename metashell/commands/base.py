"""The command base class, argument parsing and the target helpers every
command shares.

A command is one small class: ``name``, a one-line ``description`` (what
``help`` lists), optional ``details`` (the rest of its ``man`` page), its
arguments (``add_arguments``, argparse), ``run(ctx, args) -> int`` and
``complete(ctx, words) -> list[str]``. ``execute`` parses and runs; argument
errors become one line (``ls: unrecognized arguments: -x``) and status 2,
never ``SystemExit``.
"""

from __future__ import annotations

import argparse
import difflib
from functools import lru_cache
from typing import Iterable

from metashell.errors import MetashellError
from metashell.fs import glob, paths
from metashell.fs.complete import complete_path

# The reasons in error messages: ``<command>: <path>: <reason>``.
NOT_FOUND = "no such file or directory"
IS_A_DIRECTORY = "is a directory"
NOT_A_DIRECTORY = "not a directory"

OK, FAILED, USAGE = 0, 1, 2


class UsageProblem(Exception):
    """A command line that does not fit the command's arguments."""


class HelpRequested(Exception):
    """``<command> -h``: carries the text to print."""


def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.RawDescriptionHelpFormatter(prog, width=80, max_help_position=28)


class ArgumentParser(argparse.ArgumentParser):
    """argparse that raises instead of printing and exiting."""

    def __init__(self, prog: str, epilog: "str | None" = None):
        super().__init__(prog=prog, epilog=epilog, add_help=True, allow_abbrev=False,
                         exit_on_error=False, formatter_class=_formatter)
        self.manual_text = ""

    def error(self, message: str):
        raise UsageProblem(message)

    def exit(self, status: int = 0, message: "str | None" = None):
        raise UsageProblem((message or "").strip() or f"exit status {status}")

    def print_help(self, file=None):
        raise HelpRequested(self.manual_text or self.format_help())

    def print_usage(self, file=None):
        raise HelpRequested(self.format_usage())


#: what the manual of every command that takes paths says about the two trees
TREES = """\
Two trees: the native one (/brokers, /topics/NAME/P/data, /configs/topic/NAME,
/metadataQuorum, ... as in Kafka 2.8-3.4's shell, plus more) and /image, the
tree of Kafka 3.5+'s shell (/image/topics/byName/NAME/P, /image/cluster/brokers/ID,
/image/configs/TOPIC:NAME, ...), whose files print Kafka's own text
(PartitionRegistration(...)); -o json gives the native tree's values there too.
Kafka 2.8-3.4's /client-quotas, /acl/id/ID and /producerIds/nextBlockStartId
(lastBlockBrokerId, lastBlockBrokerEpoch) reach /clientQuotas, /acls/ID and
/producerIds/nextProducerId (...): aliases, which no listing shows."""


class Command:
    """Base of every shell command."""

    name: str = ""
    description: str = ""           # one line
    details: str = ""               # more text for `man` (after the options)
    path_args: "str | None" = "all"  # which words complete as paths: "all", "first", None
    dirs_only: bool = False         # path completion offers directories only
    needs_session: bool = False     # summary/changes: needs more than the tree
    holds_image: bool = True        # a live image is held still while it runs (not watch)

    _parser: "ArgumentParser | None" = None

    def add_arguments(self, parser: ArgumentParser) -> None:
        """Declare the arguments (argparse)."""

    def run(self, ctx, args: argparse.Namespace) -> int:
        raise NotImplementedError

    def problem(self, args: argparse.Namespace) -> str | None:
        """What is wrong with arguments that parsed, seen without any
        metadata (so a live session can refuse them before connecting)."""
        return None

    def check(self, argv: list[str]) -> str | None:
        """The usage error ``execute`` would report for ``argv``, without
        running anything; None when there is none (``-h`` included)."""
        try:
            args = self.parse(argv)
        except UsageProblem as e:
            return f"{self.name}: {e}"
        except HelpRequested:
            return None
        problem = self.problem(args)
        return f"{self.name}: {problem}" if problem is not None else None

    # ------------------------------------------------------------------ parsing

    @property
    def parser(self) -> ArgumentParser:
        if self._parser is None:
            parser = ArgumentParser(self.name, epilog=self.details.strip("\n") or None)
            self.add_arguments(parser)
            self._parser = parser
            parser.manual_text = self.manual()
        return self._parser

    def usage(self) -> str:
        return self.parser.format_usage().strip()

    def manual(self) -> str:
        """``<name>: <description>``, a blank line, then usage, arguments and
        details: what ``man`` and ``<name> -h`` print."""
        body = self.parser.format_help().rstrip("\n")
        if self.path_args is not None:
            body += "\n\n" + TREES
        return f"{self.name}: {self.description}\n\n{body}"

    def option_strings(self) -> list[str]:
        out = []
        for action in self.parser._actions:
            out.extend(action.option_strings)
        return sorted(out)

    def parse(self, argv: list[str]) -> argparse.Namespace:
        try:
            return self.parser.parse_args(argv)
        except argparse.ArgumentError as e:
            raise UsageProblem(str(e)) from None

    def execute(self, ctx, argv: list[str]) -> int:
        """Parse ``argv`` and run; returns the exit status."""
        try:
            args = self.parse(argv)
        except UsageProblem as e:
            ctx.error(f"{self.name}: {e}")
            return USAGE
        except HelpRequested as e:
            ctx.write(str(e).rstrip("\n"))
            return OK
        problem = self.problem(args)
        if problem is not None:
            ctx.error(f"{self.name}: {problem}")
            return USAGE
        if self.needs_session and (ctx.session is None):
            ctx.error(f"{self.name}: not available: no metadata was loaded")
            return FAILED
        try:
            return self.run(ctx, args)
        except MetashellError as e:
            ctx.error(f"{self.name}: {e}")
            return FAILED

    # ------------------------------------------------------------------ completion

    def complete(self, ctx, words: list[str]) -> list[str]:
        """Candidates for the last of ``words`` (the arguments typed after the
        command name; the last one is being typed, maybe empty). A candidate
        is the full replacement of that word; directories end in ``/``."""
        current = words[-1] if words else ""
        if current.startswith("-"):
            return [o for o in self.option_strings() if o.startswith(current)]
        if self.path_args is None:
            return []
        if self.path_args == "first" and positionals(words[:-1]):
            return []
        return path_candidates(ctx, current, dirs_only=self.dirs_only)


def positionals(words: Iterable[str]) -> list[str]:
    """The words that are not options."""
    return [w for w in words if not w.startswith("-")]


def path_candidates(ctx, typed: str, dirs_only: bool = False) -> list[str]:
    return [c.text for c in complete_path(ctx.root, ctx.cwd, typed)
            if c.is_dir or not dirs_only]


# ---------------------------------------------------------------------- targets

def expand(ctx, pattern: str) -> list[glob.Match]:
    """The nodes ``pattern`` names, relative to the working directory."""
    return glob.expand(ctx.root, ctx.cwd, pattern)


@lru_cache(maxsize=256)
def has_glob(pattern: str) -> bool:
    """Whether any component of ``pattern`` is a glob (remembered: asked
    again for each of a glob's matches)."""
    return any(glob.is_glob(c) for c in paths.split(pattern))


def shown(pattern: str, match: glob.Match) -> str:
    """How a match is named in output: the path as typed when it has no glob
    (like ``find`` and ``ls`` in a Unix shell), else its resolved absolute
    path (Kafka prints the glob text itself, which names nothing)."""
    if has_glob(pattern):
        return match.path
    return pattern or "."


def basename(path_text: str) -> str:
    """Last component of a path text (``/`` for the root)."""
    parts = paths.split(path_text)
    return parts[-1] if parts else ("/" if path_text.startswith("/") else path_text)


def unknown_command(name: str, names: list[str]) -> str:
    """``unknown command 'blah' (choose from cat, cd, ...)``, plus a
    did-you-mean for a prefix or a close typo among ``names``."""
    message = f"unknown command '{name}' (choose from {', '.join(names)})"
    guesses = [n for n in names if name and n.startswith(name)]
    if not guesses:
        guesses = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    if guesses:
        message += "; did you mean " + " or ".join(f"'{g}'" for g in guesses) + "?"
    return message
