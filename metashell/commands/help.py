"""help: list the commands."""

from __future__ import annotations

from metashell import __version__
from metashell.commands.base import FAILED, OK, Command, unknown_command
from metashell.render import json_text


class Help(Command):
    name = "help"
    description = "Display this help message."
    path_args = None
    details = """\
'help COMMAND' is the same as 'man COMMAND'."""

    def __init__(self, commands: dict):
        self.commands = commands   # name -> command: the registry's table, help included

    def add_arguments(self, parser):
        parser.add_argument("command", nargs="?", metavar="COMMAND",
                            help="show this command's manual instead")

    def complete(self, ctx, words):
        if len(words) == 1:
            return [n for n in self.commands if n.startswith(words[0])]
        return []

    def run(self, ctx, args) -> int:
        if args.command is not None:
            command = self.commands.get(args.command)
            if command is None:
                ctx.error(f"help: {unknown_command(args.command, list(self.commands))}")
                return FAILED
            ctx.write(command.manual())
            return OK
        if ctx.json:
            ctx.write(json_text({c.name: c.description for c in self.commands.values()}))
            return OK
        width = max(len(n) for n in self.commands) + 2
        lines = [f"Welcome to the Apache Kafka metadata shell (metashell {__version__}).", "",
                 "Commands:"]
        lines += [f"  {c.name.ljust(width)}{c.description}" for c in self.commands.values()]
        lines += ["",
                  "Paths are absolute or relative to the working directory; . and .. work,",
                  "and each component may be a glob: * ? [abc] {a,b}.",
                  "With -C (a live quorum) the tree follows the quorum between commands;",
                  "/metadataQuorum/live shows the quorum's own view, and watch its changes.",
                  "Type 'man COMMAND' or 'COMMAND -h' for a command's options."]
        ctx.write_lines(lines)
        return OK
