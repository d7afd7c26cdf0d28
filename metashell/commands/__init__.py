"""The shell's commands (listed in :mod:`.registry`) and the line dispatcher.

``run_line(ctx, line)`` is what the REPL, script mode and one-shot mode all
call: the line is split like a shell would (``shlex``: quotes and
backslashes), the first word picks the command, the rest are its arguments.
``complete_line(ctx, text)`` is what the REPL's completer calls.
"""

from __future__ import annotations

import shlex
from contextlib import nullcontext

from metashell.commands.base import USAGE, Command
from metashell.commands.context import Context
from metashell.commands.registry import COMMANDS, command_names, unknown_command_message

__all__ = ["COMMANDS", "Command", "Context", "check_words", "command_names", "complete_line",
           "run_line", "run_words", "split_partial", "unknown_command_message"]


def run_words(ctx: Context, words: list[str]) -> int:
    """Run one already split command line; returns its exit status."""
    words = list(words)
    while words and words[-1] == "":
        words.pop()
    if not words:
        return 0
    command = COMMANDS.get(words[0])
    if command is None:
        ctx.error(unknown_command_message(words[0]))
        return USAGE
    # a live session applies what it fetches in the background: a command
    # sees one image, whole batches and transactions (see live_session)
    hold = getattr(ctx.session, "consistent", None) if command.holds_image else None
    try:
        with hold() if hold is not None else nullcontext():
            return command.execute(ctx, words[1:])
    finally:
        ctx.report_new_problems()


def check_words(words: list[str]) -> str | None:
    """The usage error ``run_words`` would report for ``words`` (an unknown
    command, options that do not parse), found without any metadata: a live
    session checks the command before it connects. None when it is fine."""
    words = list(words)
    while words and words[-1] == "":
        words.pop()
    if not words:
        return None
    command = COMMANDS.get(words[0])
    if command is None:
        return unknown_command_message(words[0])
    return command.check(words[1:])


def run_line(ctx: Context, line: str) -> int:
    """Run one command line. Blank lines and ``#`` comments do nothing."""
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return 0
    try:
        words = shlex.split(stripped)
    except ValueError as e:
        ctx.error(f"syntax error: {str(e).lower()}")
        return USAGE
    return run_words(ctx, words)


# ---------------------------------------------------------------------- completion

def split_partial(text: str) -> tuple[list[str], int]:
    """Split a line that is still being typed: ``(words, start)`` where
    ``words`` are unquoted/unescaped as ``shlex`` would (an open quote is
    tolerated) and the last word is the one being typed ("" after a
    space); ``start`` is where that word begins in ``text``."""
    words: list[str] = []
    current: list[str] = []
    in_word = False
    quote = None
    start = len(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == quote:
                quote = None
            elif c == "\\" and quote == '"' and i + 1 < n and text[i + 1] in '"\\':
                i += 1
                current.append(text[i])
            else:
                current.append(c)
        elif c.isspace():
            if in_word:
                words.append("".join(current))
                current = []
                in_word = False
        else:
            if not in_word:
                in_word = True
                start = i
            if c in "'\"":
                quote = c
            elif c == "\\":
                if i + 1 < n:
                    i += 1
                    current.append(text[i])
            else:
                current.append(c)
        i += 1
    if in_word:
        words.append("".join(current))
    else:
        words.append("")
        start = n
    return words, start


def quote_word(word: str) -> str:
    """Backslash-escape what ``shlex`` would otherwise split or unquote."""
    return "".join("\\" + c if c.isspace() or c in "'\"\\" else c for c in word)


def complete_line(ctx: Context, text: str) -> tuple[int, list[str]]:
    """Completions for the word at the end of ``text``:
    ``(start, candidates)``; each candidate replaces ``text[start:]``.
    Directories end in ``/``."""
    words, start = split_partial(text)
    if len(words) == 1:
        candidates = [n for n in command_names() if n.startswith(words[0])]
    else:
        command = COMMANDS.get(words[0])
        if command is None:
            return start, []
        try:
            candidates = command.complete(ctx, words[1:])
        except Exception:  # completion must never break the prompt
            candidates = []
    return start, [quote_word(c) for c in candidates]
