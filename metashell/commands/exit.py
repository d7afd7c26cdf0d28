"""exit: leave the shell."""

from __future__ import annotations

from metashell.commands.base import OK, Command


class Exit(Command):
    name = "exit"
    description = "Exit the metadata shell."
    path_args = None
    details = """\
In a script (commands on stdin) the remaining lines are not run; the exit
status is still 1 if an earlier command failed. Ctrl-D at the prompt does
the same."""

    def run(self, ctx, args) -> int:
        ctx.exit_requested = True
        return OK
