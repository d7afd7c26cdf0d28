"""What a command runs against: the tree, the working directory, the output
format and where output goes.

One ``Context`` lives as long as a shell (REPL, script or one-shot run).
Commands read from it and write through ``write`` (data, stdout) and
``error`` (diagnostics, stderr); ``cd`` changes ``cwd``, ``exit`` sets
``exit_requested``.
"""

from __future__ import annotations

import sys
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Callable, TextIO

from metashell.fs.node import Node
from metashell.render import collapse_repeats

#: how warnings are prefixed on stderr (loading, and problems found later)
WARNING_PREFIX = "kafka-metadata-shell: warning: "


@dataclass
class Context:
    root: Node
    session: Any = None                    # a metashell.session.files.Session (summary/changes)
    cwd: str = "/"
    output: str = "text"                   # "text" or "json"
    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    width: "int | None" = None             # terminal width for ls columns; None: one per line
    color: bool = False                    # ANSI colours in output (terminals only)
    interactive: bool = False
    history: "Callable[[], list[str]] | None" = None   # entries, oldest first
    previous_cwd: "str | None" = None      # for `cd -`
    exit_requested: bool = False
    source: str = ""                       # what was loaded (for the banner and help)
    problems_seen: int = 0                 # session problems already reported
    problems_raised: int = 0               # problems commands warned about (--strict)


    @classmethod
    def for_session(cls, session, **kwargs) -> "Context":
        kwargs.setdefault("source", getattr(session, "source", ""))
        ctx = cls(root=session.root, session=session, **kwargs)
        fetch = getattr(session, "new_problems", None)
        if fetch is not None:
            ctx.problems_seen = len(fetch(0))   # those were reported with the load warnings
        return ctx

    def report_new_problems(self) -> None:
        """Warn about problems the session found since the last call (data
        decoded lazily, on first look, can turn out to be damaged)."""
        fetch = getattr(self.session, "new_problems", None)
        if fetch is None:
            return
        problems = fetch(self.problems_seen)
        self.problems_seen += len(problems)
        for line in collapse_repeats([str(p) for p in problems]):
            self.error(WARNING_PREFIX + line)

    def warn(self, text: str, problem: bool = True) -> None:
        """A warning line on stderr; a ``problem`` (the answer may be
        incomplete or not what was asked) is counted for ``--strict``."""
        self.error(WARNING_PREFIX + text)
        if problem:
            self.problems_raised += 1

    def strict_failure(self) -> bool:
        """Whether ``--strict`` fails the run: any problem of the load, found
        since, or raised by a command (see ``metashell.session.findings``). What no
        command looked at is looked at first: a record read lazily (a
        partition change still pending, a partition never listed) that
        cannot be applied is as much a problem as one read at load."""
        self._look_at_everything()
        problems = getattr(self.session, "problems", None)
        found = problems() if callable(problems) else getattr(self.session, "warnings", [])
        return bool(found) or self.problems_raised > 0

    def _look_at_everything(self) -> None:
        """``summary`` of the session (it files every pending partition
        change and folds every partition), its findings warned about as a
        command's are."""
        summary = getattr(self.session, "summary", None)
        if summary is None:
            return
        hold = getattr(self.session, "consistent", None)
        with hold() if hold is not None else nullcontext():
            summary()
        self.report_new_problems()

    @property
    def json(self) -> bool:
        return self.output == "json"

    def write(self, text: str = "") -> None:
        """One line (or several joined by newlines) of data on stdout."""
        self.out.write(text + "\n")

    def write_lines(self, lines) -> None:
        """Each of ``lines`` on stdout, a thousand at a time (what was made
        is written also when making the next fails)."""
        out, chunk = self.out, []
        try:
            for line in lines:
                chunk.append(line)
                if len(chunk) >= 1000:
                    out.write("\n".join(chunk) + "\n")
                    chunk.clear()
        finally:
            if chunk:
                out.write("\n".join(chunk) + "\n")

    def error(self, message: str) -> None:
        """One line of diagnostics on stderr (stdout is flushed first so the
        two stay in order when they go to the same place)."""
        try:
            self.out.flush()
        except ValueError:
            pass
        self.err.write(message + "\n")

    def history_entries(self) -> list[str]:
        return list(self.history()) if self.history is not None else []
