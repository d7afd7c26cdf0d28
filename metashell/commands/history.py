"""history: show the command history."""

from __future__ import annotations

from metashell.commands.base import OK, Command
from metashell.render import json_text


class History(Command):
    name = "history"
    description = "Print command history."
    path_args = None
    details = """\
Prints the last N entries (default: all) as '%5d  %s': the entry's number
(counting from 0, oldest first) and the line. The running 'history' line is
the last entry. In the interactive shell the history is kept across runs
(in the user data directory, or the file named by $METASHELL_HISTORY_FILE);
in a script it holds the lines run so far.

--output json: a JSON array of the lines."""

    def add_arguments(self, parser):
        parser.add_argument("count", nargs="?", type=int, metavar="N",
                            help="how many entries to show (default: all)")

    def run(self, ctx, args) -> int:
        entries = ctx.history_entries()
        start = 0
        if args.count is not None:
            start = max(len(entries) - max(args.count, 0), 0)
        shown = list(enumerate(entries))[start:]
        if ctx.json:
            ctx.write(json_text([line for _, line in shown]))
        else:
            ctx.write_lines(f"{i:5d}  {line}" for i, line in shown)
        return OK
