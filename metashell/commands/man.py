"""man: show a command's manual."""

from __future__ import annotations

from metashell.commands.base import FAILED, OK, Command


class Man(Command):
    name = "man"
    description = "Show the help text for a specific command."
    path_args = None

    def __init__(self, commands: dict):
        self.commands = commands   # name -> command: the registry's table, man included

    def add_arguments(self, parser):
        parser.add_argument("command", metavar="COMMAND", help="the command to describe")

    def complete(self, ctx, words):
        if len(words) == 1:
            return [n for n in self.commands if n.startswith(words[0])]
        return []

    def run(self, ctx, args) -> int:
        command = self.commands.get(args.command)
        if command is None:
            ctx.error(f"man: unknown command '{args.command}'. "
                      "Type help to get a list of commands.")
            return FAILED
        ctx.write(command.manual())
        return OK
