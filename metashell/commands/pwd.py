"""pwd: print the working directory."""

from __future__ import annotations

from metashell.commands.base import OK, Command
from metashell.render import json_text


class Pwd(Command):
    name = "pwd"
    description = "Print the current working directory."
    path_args = None

    def run(self, ctx, args) -> int:
        ctx.write(json_text(ctx.cwd) if ctx.json else ctx.cwd)
        return OK
