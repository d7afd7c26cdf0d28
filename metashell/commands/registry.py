"""The shell's commands, listed here one by one: ``help``, ``man``, the
dispatcher and the completer read :data:`COMMANDS`. A new command is a
module of this package with a :class:`~.base.Command` subclass, added to
the list below."""

from __future__ import annotations

from metashell.commands.base import unknown_command
from metashell.commands.brokers import Brokers
from metashell.commands.cat import Cat
from metashell.commands.cd import Cd
from metashell.commands.changes import Changes
from metashell.commands.diff import Diff
from metashell.commands.exit import Exit
from metashell.commands.find import Find
from metashell.commands.help import Help
from metashell.commands.history import History
from metashell.commands.log import Log
from metashell.commands.ls import Ls
from metashell.commands.man import Man
from metashell.commands.partitions import Partitions
from metashell.commands.pwd import Pwd
from metashell.commands.quorum import Quorum
from metashell.commands.summary import Summary
from metashell.commands.tree import Tree
from metashell.commands.watch import Watch

#: name -> command, alphabetical (the order of help and of error messages)
COMMANDS: dict = {}


def _register(*commands) -> None:
    for command in commands:
        if command.name in COMMANDS:
            raise ValueError(f"two commands named {command.name!r}")
        COMMANDS[command.name] = command
    ordered = sorted(COMMANDS.items())
    COMMANDS.clear()
    COMMANDS.update(ordered)


_register(Brokers(), Cat(), Cd(), Changes(), Diff(), Exit(), Find(), History(), Log(), Ls(), Partitions(), Pwd(), Quorum(), Summary(), Tree(), Watch(),
          Help(COMMANDS), Man(COMMANDS))


def command_names() -> list[str]:
    return list(COMMANDS)


def unknown_command_message(name: str) -> str:
    """What an unknown command ``name`` gets: see :func:`.base.unknown_command`."""
    return unknown_command(name, command_names())
