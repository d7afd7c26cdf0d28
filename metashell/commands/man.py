"""man: show a command's manual."""

from __future__ import annotations

from metashell.commands.base import FAILED, OK, Command


class Man(Command):
    name = "man"
    description = "Show the help text for a specific command."
    path_args = None
    details = """\
On a terminal the manual goes through a pager ($PAGER, else less), as
man(1) shows one; elsewhere (a pipe, a file, a script) it is printed."""

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
        text = command.manual()
        if _on_terminal(ctx.out):
            import click   # the pager ($PAGER, else less) as man(1) uses one
            click.echo_via_pager(text + "\n")
        else:
            ctx.write(text)
        return OK


def _on_terminal(out) -> bool:
    """Whether ``out`` is a terminal (a manual then goes through a pager)."""
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False
