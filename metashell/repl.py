"""The interactive shell (prompt-toolkit).

The prompt shows the working directory (``[kafka-metadata-shell /topics]> ``);
Tab completes command names, options and paths (directories end in ``/``);
history is kept across runs in ``platformdirs.user_data_dir("metashell")/history``
(or the file named by ``$METASHELL_HISTORY_FILE``); Ctrl-C cancels the line
(or interrupts a running command), Ctrl-D exits with status 0.

With a live quorum (``-C``) the prompt also says when the image is not
following it (``[kafka-metadata-shell / (quorum lost)]> ``: catching up,
quorum lost, stopped), redrawn every half second while it waits for input.

Every line goes through the same dispatcher as script and one-shot mode
(``metashell.commands.run_line``), so the REPL adds only line editing.
Tests drive it in-process: ``Repl(ctx, input=create_pipe_input(),
output=DummyOutput(), history=InMemoryHistory())``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from typing import Iterable

from prompt_toolkit import PromptSession
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import FileHistory, History, InMemoryHistory

from metashell import __version__
from metashell.commands import Context, complete_line, run_line

PROMPT_NAME = "kafka-metadata-shell"
LIVE_REFRESH = 0.5   # seconds between redraws of a live prompt
HISTORY_ENV = "METASHELL_HISTORY_FILE"


def history_path() -> str:
    """Where the REPL keeps its history: ``$METASHELL_HISTORY_FILE`` if set,
    else ``<user data dir>/metashell/history``."""
    override = os.environ.get(HISTORY_ENV)
    if override:
        return override
    import platformdirs
    return os.path.join(platformdirs.user_data_dir("metashell"), "history")


def open_history(path: "str | None" = None, warn=None) -> History:
    """A FileHistory at ``path`` (default ``history_path()``), its directory
    created; an in-memory history (and a warning) when that is impossible."""
    path = path or history_path()
    try:
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        with open(path, "ab"):
            pass
        return FileHistory(path)
    except OSError as e:
        if warn is not None:
            warn(f"history will not be saved: {path}: {e.strerror or e}")
        return InMemoryHistory()


def _load(history: History) -> None:
    """Load the stored entries now, so ``history`` lists them from the first
    prompt on (prompt-toolkit otherwise loads them in the background)."""
    async def drain():
        async for _ in history.load():
            pass
    asyncio.run(drain())


class ShellCompleter(Completer):
    """Completion of command names, options and paths, fed by the commands
    themselves (``Command.complete``)."""

    def __init__(self, ctx: Context):
        self.ctx = ctx

    def get_completions(self, document: Document,
                        complete_event: CompleteEvent) -> Iterable[Completion]:
        text = document.text_before_cursor
        start, candidates = complete_line(self.ctx, text)
        for candidate in candidates:
            is_dir = candidate.endswith("/")
            display = candidate.rstrip("/").rsplit("/", 1)[-1] + ("/" if is_dir else "")
            yield Completion(candidate if is_dir else candidate + " ",
                             start_position=start - len(text),
                             display=display or candidate)


class Repl:
    """The read-eval-print loop over a command ``Context``."""

    def __init__(self, ctx: Context, *, input=None, output=None,
                 history: "History | None" = None):
        self.ctx = ctx
        self.history = history if history is not None else open_history(warn=ctx.error)
        _load(self.history)
        ctx.history = lambda: list(self.history.get_strings())
        ctx.interactive = True
        self.live_state = getattr(ctx.session, "state", None)   # live sessions only
        self.session = PromptSession(
            input=input, output=output, history=self.history,
            completer=ShellCompleter(ctx), complete_while_typing=False,
            auto_suggest=AutoSuggestFromHistory(), enable_history_search=False,
            refresh_interval=LIVE_REFRESH if self.live_state is not None else 0)

    def message(self):
        state = self.live_state() if self.live_state is not None else None
        if self.ctx.color:
            parts = [("bold", f"[{PROMPT_NAME} "), ("bold ansiblue", self.ctx.cwd)]
            if state:
                parts.append(("bold ansiyellow", f" ({state})"))
            return FormattedText(parts + [("bold", "]> ")])
        return f"[{PROMPT_NAME} {self.ctx.cwd}{f' ({state})' if state else ''}]> "

    def banner(self) -> str:
        source = self.ctx.source or "(nothing loaded)"
        return f"metashell {__version__} \u2014 {source}; type help"

    def width(self) -> int:
        try:
            return self.session.output.get_size().columns
        except Exception:
            return shutil.get_terminal_size().columns

    def run(self) -> int:
        """Run until ``exit`` or Ctrl-D; the status is 0."""
        ctx = self.ctx
        ctx.write(self.banner())
        while not ctx.exit_requested:
            try:
                line = self.session.prompt(self.message)
            except KeyboardInterrupt:       # Ctrl-C: drop the line, new prompt
                continue
            except EOFError:                # Ctrl-D
                break
            ctx.width = self.width()
            try:
                run_line(ctx, line)
            except KeyboardInterrupt:
                ctx.error("interrupted")
            ctx.out.flush()
        return 0
